//! Regression scenarios for KRaft bugs Kafka fixed, each named after its ticket, so the same
//! mistake cannot come back here.

use bytes::Bytes;
use kafka_protocol::messages::ApiKey;

use super::context::*;
use crate::codec::{RequestBody, ResponseBody};
use crate::raft::errors;
use crate::raft::types::OffsetAndEpoch;
use crate::raft::{LogReader, RaftError};
use crate::records::batch::build_data_batch;

/// KAFKA-10527: a voter restarting with quorum-state naming itself leader must not resume as
/// leader of that epoch (it may have lost its unflushed LeaderChange); it resigns instead.
#[test]
fn kafka_10527_voter_does_not_reinitialize_as_leader_in_same_epoch() {
    let mut ctx = Builder::new(1, &[1, 2, 3])
        .with_elected_leader(4, 1)
        .build();
    ctx.assert_resigned(4);
    assert!(
        ctx.log.batches().is_empty(),
        "no LeaderChange written for the old epoch"
    );
    ctx.advance(3 * ELECTION_TIMEOUT_MS);
    assert!(ctx.epoch() > 4, "moves on to a new epoch");
}

/// KAFKA-12619: a new leader's high watermark stays unknown until its LeaderChange batch is
/// on a majority, so it never exposes a high watermark from an older epoch.
#[test]
fn kafka_12619_leader_change_committed_before_high_watermark_is_initialized() {
    let mut ctx = Builder::new(1, &[1, 2, 3])
        .with_unknown_leader(1)
        .append_to_log(1, 5)
        .build();
    ctx.become_leader();
    let epoch = ctx.epoch();
    // Voter 2 has all the old records but not the LeaderChange at offset 5.
    ctx.deliver_request(fetch_request_body(epoch, 2, 5, 1, 0), 17);
    assert_eq!(
        ctx.core.high_watermark(),
        None,
        "offset 5 is not past the epoch start"
    );
    ctx.deliver_request(fetch_request_body(epoch, 2, 6, epoch, 0), 17);
    assert_eq!(ctx.core.high_watermark(), Some(6));
}

/// KAFKA-12460: a follower never truncates below its high watermark, whatever the leader says.
#[test]
fn kafka_12460_no_truncation_below_high_watermark() {
    let mut ctx = Builder::new(1, &[1, 2, 3])
        .with_elected_leader(5, 2)
        .build();
    ctx.poll();
    let f = ctx.take_sent(ApiKey::Fetch);
    let batch = Bytes::from(build_data_batch(0, 5, START_MS as i64, &[b"a", b"b"]).unwrap());
    let mut resp = kafka_protocol::messages::FetchResponse::default();
    resp.responses.push(
        kafka_protocol::messages::fetch_response::FetchableTopicResponse::default()
            .with_topic_id(crate::raft::types::METADATA_TOPIC_ID)
            .with_partitions(vec![
                kafka_protocol::messages::fetch_response::PartitionData::default()
                    .with_high_watermark(2)
                    .with_current_leader(
                        kafka_protocol::messages::fetch_response::LeaderIdAndEpoch::default()
                            .with_leader_id(kafka_protocol::messages::BrokerId(2))
                            .with_leader_epoch(5),
                    )
                    .with_records(Some(batch)),
            ]),
    );
    ctx.deliver_response(f[0].correlation_id, ResponseBody::Fetch(resp.clone()));
    assert_eq!(ctx.core.high_watermark(), Some(2));
    let f = ctx.take_sent(ApiKey::Fetch);
    let p = &mut resp.responses[0].partitions[0];
    p.records = Some(Bytes::new());
    p.diverging_epoch.epoch = 3;
    p.diverging_epoch.end_offset = 0;
    ctx.deliver_response(f[0].correlation_id, ResponseBody::Fetch(resp));
    assert!(matches!(
        ctx.core.fatal_error(),
        Some(RaftError::TruncateBelowHighWatermark { .. })
    ));
    assert_eq!(
        ctx.log.end_offset(),
        OffsetAndEpoch::new(2, 5),
        "committed records kept"
    );
}

/// KAFKA-13884 / KAFKA-17332: a replica's appended records are flushed before its next Fetch
/// (the leader counts the fetch offset as durable); controllers flush even as observers.
#[test]
fn kafka_17332_appends_are_flushed_before_the_next_fetch_also_for_observers() {
    for local in [1, 4] {
        let mut ctx = Builder::new(local, &[1, 2, 3])
            .with_elected_leader(5, 2)
            .build();
        ctx.poll();
        let f = ctx.take_sent(ApiKey::Fetch);
        let batch = Bytes::from(build_data_batch(0, 5, START_MS as i64, &[b"x"]).unwrap());
        let resp = kafka_protocol::messages::FetchResponse::default().with_responses(vec![
            kafka_protocol::messages::fetch_response::FetchableTopicResponse::default()
                .with_topic_id(crate::raft::types::METADATA_TOPIC_ID)
                .with_partitions(vec![
                    kafka_protocol::messages::fetch_response::PartitionData::default()
                        .with_high_watermark(0)
                        .with_current_leader(
                            kafka_protocol::messages::fetch_response::LeaderIdAndEpoch::default()
                                .with_leader_id(kafka_protocol::messages::BrokerId(2))
                                .with_leader_epoch(5),
                        )
                        .with_records(Some(batch)),
                ]),
        ]);
        ctx.events.clear();
        ctx.deliver_response(f[0].correlation_id, ResponseBody::Fetch(resp));
        let flush = ctx.events.iter().position(|e| e == "flush");
        let fetch = ctx.events.iter().position(|e| e.starts_with("send Fetch"));
        assert!(
            flush.is_some() && flush < fetch,
            "node {local}: {:?}",
            ctx.events
        );
        assert!(ctx.log.is_flushed());
    }
}

/// KAFKA-15489: a leader cut off from a majority resigns (check-quorum) instead of staying
/// leader next to a newly elected one.
#[test]
fn kafka_15489_partitioned_leader_resigns() {
    let mut ctx = Builder::new(1, &[1, 2, 3]).with_unknown_leader(1).build();
    ctx.become_leader();
    let epoch = ctx.epoch();
    // Only voter 2 keeps fetching: still a majority with us, no resignation.
    for _ in 0..4 {
        ctx.deliver_request(fetch_request_body(epoch, 2, 1, epoch, 0), 17);
        ctx.advance(FETCH_TIMEOUT_MS / 2);
    }
    ctx.assert_leader(epoch);
    // Nobody fetches any more: the current check-quorum window still holds voter 2's last
    // fetch, the next one is empty.
    ctx.advance(FETCH_TIMEOUT_MS * 3 / 2);
    ctx.advance(FETCH_TIMEOUT_MS * 3 / 2);
    ctx.assert_resigned(epoch);
}

/// KAFKA-17030: an unattached voter that knows no leader fetches from the other voters to
/// discover one, instead of only waiting for its election timeout.
#[test]
fn kafka_17030_unattached_voter_discovers_the_leader_by_fetching() {
    let mut ctx = Builder::new(1, &[1, 2, 3]).with_unknown_leader(3).build();
    ctx.poll();
    let f = ctx.take_sent(ApiKey::Fetch);
    assert_eq!(f.len(), 1, "a discovery Fetch to another voter");
    let mut resp = kafka_protocol::messages::FetchResponse::default().with_responses(vec![
        kafka_protocol::messages::fetch_response::FetchableTopicResponse::default()
            .with_topic_id(crate::raft::types::METADATA_TOPIC_ID)
            .with_partitions(vec![
                kafka_protocol::messages::fetch_response::PartitionData::default()
                    .with_error_code(errors::NOT_LEADER_OR_FOLLOWER)
                    .with_current_leader(
                        kafka_protocol::messages::fetch_response::LeaderIdAndEpoch::default()
                            .with_leader_id(kafka_protocol::messages::BrokerId(2))
                            .with_leader_epoch(3),
                    ),
            ]),
    ]);
    resp.responses[0].partitions[0].records = None;
    ctx.deliver_response(f[0].correlation_id, ResponseBody::Fetch(resp));
    ctx.assert_follower(3, 2);
}

/// KAFKA-17641 / KAFKA-17642 (KIP-996): a node that was cut off and comes back pre-votes first,
/// and a healthy quorum's followers reject it, so the epoch does not move.
#[test]
fn kafka_17642_rejoining_node_does_not_disrupt_the_quorum() {
    let mut ctx = Builder::new(1, &[1, 2, 3])
        .with_elected_leader(5, 2)
        .build();
    ctx.advance(FETCH_TIMEOUT_MS);
    ctx.assert_prospective(5);
    let votes = ctx.take_sent(ApiKey::Vote);
    for v in &votes {
        let RequestBody::Vote(r) = &v.request else {
            unreachable!()
        };
        assert!(r.topics[0].partitions[0].pre_vote);
        ctx.deliver_response(
            v.correlation_id,
            ResponseBody::Vote(vote_response_body(0, 2, 5, false)),
        );
    }
    assert_eq!(ctx.epoch(), 5, "no epoch bump");
    ctx.assert_follower(5, 2);
}

/// KAFKA-20895 (open in Kafka 4.1.2; the fix proposed in apache/kafka PR #23168): after a
/// graceful resignation a follower that had fetched from the leader rejected the first
/// preferred successor's pre-vote, so in a quorum of five or more (the successor needs more
/// than its own and the resigned leader's vote) it could not win and a later one won after
/// its backoff. Once our leader has sent EndQuorumEpoch we grant pre-votes for the rest of the
/// epoch, and a Fetch answer that was already in flight changes neither that nor our
/// election backoff.
#[test]
fn kafka_20895_follower_grants_pre_vote_after_leader_resigned_in_five_voter_quorum() {
    for rpc in Rpc::ALL.into_iter().filter(|r| r.has_pre_vote()) {
        let mut ctx = Builder::new(1, &[1, 2, 3, 4, 5])
            .with_elected_leader(5, 2)
            .with_rpc(rpc)
            .build();
        ctx.poll();
        let first = ctx.take_sent(ApiKey::Fetch);
        ctx.deliver_response(
            first[0].correlation_id,
            follower_fetch_response(2, 5, 0, Bytes::new()),
        );
        ctx.poll();
        let in_flight = ctx.take_sent(ApiKey::Fetch);
        assert_eq!(in_flight.len(), 1, "the next Fetch is out");
        let id = ctx.deliver(vote_request_body(5, 3, 0, 0, true));
        assert!(
            !vote_partition(ctx.response(id)).vote_granted,
            "{rpc:?}: the leader is alive and fetched from: pre-vote rejected"
        );
        // Leader 2 resigns; 3 is its first preferred successor, we are second of four.
        ctx.deliver(end_epoch_request_body(5, 2, &[3, 1, 4, 5]));
        // The Fetch the leader answered before it resigned arrives afterwards.
        ctx.deliver_response(
            in_flight[0].correlation_id,
            follower_fetch_response(2, 5, 0, Bytes::new()),
        );
        ctx.assert_follower(5, 2);
        let id = ctx.deliver(vote_request_body(5, 3, 0, 0, true));
        assert!(
            vote_partition(ctx.response(id)).vote_granted,
            "{rpc:?}: the leader resigned: the successor's pre-vote is granted"
        );
        assert_eq!(ctx.epoch(), 5, "a pre-vote changes nothing");
        // Our own backoff as second of four successors: (100 >> 3) << 0 = 12 ms, not a fetch
        // timeout pushed out by the late answer.
        ctx.advance(12);
        ctx.assert_prospective(5);
    }
}

/// A log that holds data but cannot be read (an I/O error, corruption).
struct UnreadableLog(super::mem_log::MemLog);

impl crate::raft::LogReader for UnreadableLog {
    fn log_start_offset(&self) -> i64 {
        self.0.log_start_offset()
    }
    fn end_offset(&self) -> OffsetAndEpoch {
        self.0.end_offset()
    }
    fn end_offset_for_epoch(&self, epoch: i32) -> OffsetAndEpoch {
        self.0.end_offset_for_epoch(epoch)
    }
    fn read(&self, offset: i64, _: usize) -> Result<bytes::Bytes, crate::raft::LogReadError> {
        Err(crate::raft::LogReadError {
            offset,
            reason: "injected I/O error".into(),
        })
    }
    fn latest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
        self.0.latest_snapshot_id()
    }
    fn earliest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
        self.0.earliest_snapshot_id()
    }
    fn read_snapshot(
        &self,
        id: OffsetAndEpoch,
        position: i64,
        max_bytes: usize,
    ) -> Option<crate::raft::SnapshotChunk> {
        self.0.read_snapshot(id, position, max_bytes)
    }
}

/// An unreadable committed range stops the core at start-up: the voter history read from the
/// log would otherwise be silently cut (it used to come back as an empty read).
#[test]
fn an_unreadable_log_is_fatal_at_start_not_an_empty_read() {
    let mut log = super::mem_log::MemLog::default();
    let batch = crate::records::batch::build_data_batch(0, 1, 0, &[b"x".as_slice()]).unwrap();
    log.append(&bytes::Bytes::from(batch));
    let core = crate::raft::RaftCore::new(
        super::context::config(1, &[1, 2, 3]),
        None,
        &UnreadableLog(log),
        0,
    );
    assert!(
        matches!(core.fatal_error(), Some(crate::raft::RaftError::LogRead(e)) if e.offset == 0),
        "{:?}",
        core.fatal_error()
    );
}
