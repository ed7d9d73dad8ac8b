//! More of Kafka's `KafkaRaftClientTest` / `KafkaRaftClientSnapshotTest` scenarios, several
//! run over the old and new RPC versions as Kafka's `withKip853Rpc` does.

use bytes::Bytes;
use kafka_protocol::messages::{fetch_snapshot_request, ApiKey, BrokerId, FetchSnapshotRequest};

use super::context::*;
use crate::codec::{RequestBody, ResponseBody};
use crate::raft::errors;
use crate::raft::types::OffsetAndEpoch;
use crate::raft::Role;

#[test]
fn test_leader_state_update_with_different_fetch_request_versions() {
    for version in [13i16, 14, 15, 16, 17, 18] {
        let mut ctx = Builder::new(1, &[1, 2, 3]).with_unknown_leader(1).build();
        ctx.become_leader();
        let epoch = ctx.epoch();
        // Before v15 the replica id travels at the top level: the sender moves it there (as
        // Kafka's FetchRequest.SimpleBuilder does) and the core must read it from there.
        ctx.deliver_request(fetch_request_body(epoch, 2, 1, epoch, 0), version);
        assert_eq!(
            ctx.core.high_watermark(),
            Some(1),
            "v{version}: the fetch counted for voter 2"
        );
    }
}

#[test]
fn test_observer_fetch_with_no_local_id() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(1)
            .with_rpc(rpc)
            .build();
        ctx.become_leader();
        let epoch = ctx.epoch();
        let id = ctx.deliver(fetch_request_body(epoch, -1, 0, 0, 0));
        assert_eq!(fetch_partition(ctx.response(id)).error_code, errors::NONE);
        let Role::Leader(l) = ctx.role() else {
            panic!()
        };
        assert!(l.observers.is_empty(), "a replica id of -1 is not tracked");
    }
}

#[test]
fn test_describe_quorum_non_monotonic_follower_fetch() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(1)
            .with_rpc(rpc)
            .build();
        ctx.become_leader();
        let epoch = ctx.epoch();
        ctx.propose(&["a", "b"]);
        ctx.deliver(fetch_request_body(epoch, 2, 3, epoch, 0));
        assert_eq!(ctx.core.high_watermark(), Some(3));
        // The follower lost data and fetches from an older offset: its state follows, the HW not.
        ctx.deliver(fetch_request_body(epoch, 2, 1, epoch, 0));
        assert_eq!(ctx.core.high_watermark(), Some(3));
        let Role::Leader(l) = ctx.role() else {
            panic!()
        };
        assert_eq!(l.voters[&2].end_offset, Some(1));
    }
}

#[test]
fn test_append_failed_with_not_leader_exception() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_elected_leader(2, 2)
            .with_rpc(rpc)
            .build();
        assert_eq!(ctx.propose(&["x"]), None);
        assert!(ctx.log.batches().is_empty());
    }
}

#[test]
fn test_handle_begin_quorum_request_more_endpoints() {
    for version in [0i16, 1] {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_elected_leader(3, 2)
            .build();
        ctx.assert_follower(3, 2);
        let id = ctx.deliver_request(begin_epoch_request_body(3, 2), version);
        let ResponseBody::BeginQuorumEpoch(r) = ctx.response(id) else {
            unreachable!()
        };
        assert_eq!(
            r.topics[0].partitions[0].error_code,
            errors::NONE,
            "v{version}"
        );
        assert_eq!(
            r.node_endpoints.is_empty(),
            version == 0,
            "endpoints only from v1"
        );
        ctx.assert_follower(3, 2);
    }
}

#[test]
fn test_end_quorum_starts_new_election_immediately_if_follower_unattached() {
    for rpc in Rpc::ALL {
        // Unattached with the leader known by id only: EndQuorumEpoch from that leader makes us its
        // follower (with endpoints from the voter set), then the backoff for position 0 is zero.
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(2)
            .with_rpc(rpc)
            .build();
        ctx.deliver(end_epoch_request_body(2, 3, &[1]));
        // Position 0: no backoff, so the election starts in the same poll.
        ctx.assert_prospective(2);
        let crate::raft::Role::Prospective(p) = ctx.role() else {
            unreachable!()
        };
        assert_eq!(
            p.leader.as_ref().map(|l| l.0),
            Some(3),
            "it followed leader 3 first"
        );
    }
}

#[test]
fn test_begin_and_end_quorum_epoch_request_cluster_id_validation() {
    let mut ctx = Builder::new(1, &[1, 2, 3]).with_unknown_leader(1).build();
    let RequestBody::BeginQuorumEpoch(mut b) = begin_epoch_request_body(2, 2) else {
        unreachable!()
    };
    b.cluster_id = Some("wrong".into());
    let id = ctx.deliver_request(RequestBody::BeginQuorumEpoch(b), 1);
    let ResponseBody::BeginQuorumEpoch(r) = ctx.response(id) else {
        unreachable!()
    };
    assert_eq!(r.error_code, errors::INCONSISTENT_CLUSTER_ID);
    let RequestBody::EndQuorumEpoch(mut e) = end_epoch_request_body(2, 2, &[1]) else {
        unreachable!()
    };
    e.cluster_id = Some("wrong".into());
    let id = ctx.deliver_request(RequestBody::EndQuorumEpoch(e), 1);
    let ResponseBody::EndQuorumEpoch(r) = ctx.response(id) else {
        unreachable!()
    };
    assert_eq!(r.error_code, errors::INCONSISTENT_CLUSTER_ID);
    ctx.assert_unattached(1);
}

#[test]
fn test_cluster_authorization_failed_in_begin_quorum_epoch_and_end_quorum_epoch() {
    let mut ctx = Builder::new(1, &[1, 2, 3]).with_unknown_leader(1).build();
    ctx.become_leader();
    let sent = ctx.take_sent(ApiKey::BeginQuorumEpoch);
    let resp = kafka_protocol::messages::BeginQuorumEpochResponse::default()
        .with_error_code(errors::CLUSTER_AUTHORIZATION_FAILED);
    ctx.deliver_response(sent[0].correlation_id, ResponseBody::BeginQuorumEpoch(resp));
    assert!(ctx.core.fatal_error().is_some());

    let mut ctx = Builder::new(1, &[1, 2, 3])
        .with_elected_leader(2, 1)
        .build();
    let sent = ctx.take_sent(ApiKey::EndQuorumEpoch);
    let resp = kafka_protocol::messages::EndQuorumEpochResponse::default()
        .with_error_code(errors::CLUSTER_AUTHORIZATION_FAILED);
    ctx.deliver_response(sent[0].correlation_id, ResponseBody::EndQuorumEpoch(resp));
    assert!(ctx.core.fatal_error().is_some());
}

#[test]
fn test_leader_graceful_shutdown_and_follower_graceful_shutdown() {
    let mut ctx = Builder::new(1, &[1, 2, 3]).with_unknown_leader(1).build();
    ctx.become_leader();
    let epoch = ctx.epoch();
    ctx.core.begin_shutdown(ctx.now_ms, &ctx.log, 5000);
    ctx.drain();
    ctx.assert_resigned(epoch);
    assert_eq!(ctx.take_sent(ApiKey::EndQuorumEpoch).len(), 2);
    // Follower: completes at once (a leader other than itself is known).
    let mut f = Builder::new(1, &[1, 2, 3])
        .with_elected_leader(4, 2)
        .build();
    f.core.begin_shutdown(f.now_ms, &f.log, 5000);
    let mut done = false;
    while let Some(o) = f.core.poll_output() {
        done |= matches!(o, crate::raft::Output::ShutdownComplete);
    }
    assert!(done, "follower shutdown completes immediately");
}

#[test]
fn test_leader_graceful_shutdown_timeout() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(1)
            .with_rpc(rpc)
            .build();
        ctx.become_leader();
        ctx.core.begin_shutdown(ctx.now_ms, &ctx.log, 5000);
        ctx.drain();
        // Nobody acknowledges the EndQuorumEpoch: the shutdown still completes at its deadline.
        ctx.now_ms += 5000;
        ctx.core.handle_timeout(ctx.now_ms, &ctx.log);
        let mut done = false;
        while let Some(o) = ctx.core.poll_output() {
            done |= matches!(o, crate::raft::Output::ShutdownComplete);
        }
        assert!(done);
    }
}

#[test]
fn test_fetch_request_at_log_start_offset_with_valid_and_invalid_epoch() {
    let mut ctx = Builder::new(1, &[1, 2, 3])
        .with_unknown_leader(2)
        .append_to_log(1, 6)
        .append_to_log(2, 2)
        .with_snapshot(OffsetAndEpoch::new(4, 1))
        .build();
    ctx.log.set_start_offset(4);
    ctx.become_leader();
    let epoch = ctx.epoch();
    // At the log start with the snapshot's epoch: valid.
    let id = ctx.deliver_request(fetch_request_body(epoch, 2, 4, 1, 0), 17);
    let p = fetch_partition(ctx.response(id));
    assert_eq!((p.snapshot_id.epoch, p.diverging_epoch.epoch), (-1, -1));
    // At the log start with another epoch: load the snapshot.
    let id = ctx.deliver_request(fetch_request_body(epoch, 2, 4, 2, 0), 17);
    let p = fetch_partition(ctx.response(id));
    assert_eq!((p.snapshot_id.end_offset, p.snapshot_id.epoch), (4, 1));
}

#[test]
fn test_fetch_request_with_last_fetched_epoch_less_than_oldest_snapshot() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(3)
            .append_to_log(2, 6)
            .append_to_log(3, 2)
            .with_snapshot(OffsetAndEpoch::new(4, 2))
            .with_rpc(rpc)
            .build();
        ctx.log.set_start_offset(4);
        ctx.become_leader();
        let id = ctx.deliver(fetch_request_body(ctx.epoch(), 2, 6, 1, 0));
        let p = fetch_partition(ctx.response(id));
        assert_eq!((p.snapshot_id.end_offset, p.snapshot_id.epoch), (4, 2));
    }
}

#[test]
fn test_fetch_snapshot_request_unknown_partition() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(1)
            .with_snapshot(OffsetAndEpoch::new(3, 1))
            .with_rpc(rpc)
            .build();
        ctx.become_leader();
        let req = FetchSnapshotRequest::default()
            .with_max_bytes(100)
            .with_replica_id(BrokerId(2))
            .with_topics(vec![fetch_snapshot_request::TopicSnapshot::default()
                .with_name(topic_name())
                .with_partitions(vec![
                    fetch_snapshot_request::PartitionSnapshot::default()
                        .with_partition(7)
                        .with_current_leader_epoch(ctx.epoch())
                        .with_snapshot_id(
                            fetch_snapshot_request::SnapshotId::default()
                                .with_end_offset(3)
                                .with_epoch(1),
                        ),
                ])]);
        let id = ctx.deliver(RequestBody::FetchSnapshot(req));
        let ResponseBody::FetchSnapshot(r) = ctx.response(id) else {
            unreachable!()
        };
        assert_eq!(
            r.topics[0].partitions[0].error_code,
            errors::UNKNOWN_TOPIC_OR_PARTITION
        );
        assert_eq!(
            r.topics[0].partitions[0].index, 7,
            "echoes the requested partition"
        );
    }
}

#[test]
fn test_leader_should_resign_leadership_if_not_get_fetch_snapshot_request_from_majority_voters() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(1)
            .with_snapshot(OffsetAndEpoch::new(3, 1))
            .with_rpc(rpc)
            .build();
        ctx.become_leader();
        let epoch = ctx.epoch();
        // FetchSnapshot from voter 2 counts for check-quorum.
        for _ in 0..3 {
            let req = FetchSnapshotRequest::default()
                .with_max_bytes(10)
                .with_replica_id(BrokerId(2))
                .with_topics(vec![fetch_snapshot_request::TopicSnapshot::default()
                    .with_name(topic_name())
                    .with_partitions(vec![
                        fetch_snapshot_request::PartitionSnapshot::default()
                            .with_current_leader_epoch(epoch)
                            .with_snapshot_id(
                                fetch_snapshot_request::SnapshotId::default()
                                    .with_end_offset(3)
                                    .with_epoch(1),
                            ),
                    ])]);
            ctx.deliver(RequestBody::FetchSnapshot(req));
            ctx.advance(FETCH_TIMEOUT_MS);
        }
        ctx.assert_leader(epoch);
        ctx.advance(FETCH_TIMEOUT_MS * 3 / 2);
        ctx.advance(FETCH_TIMEOUT_MS * 3 / 2);
        ctx.assert_resigned(epoch);
    }
}

#[test]
fn test_prospective_receives_begin_quorum_request() {
    let mut ctx = Builder::new(1, &[1, 2, 3]).with_unknown_leader(2).build();
    ctx.advance(2 * ELECTION_TIMEOUT_MS);
    ctx.assert_prospective(2);
    ctx.deliver_request(begin_epoch_request_body(2, 3), 1);
    ctx.assert_follower(2, 3);
}

#[test]
fn test_pre_vote_request_timeout() {
    let mut ctx = Builder::new(1, &[1, 2, 3]).with_unknown_leader(2).build();
    ctx.advance(2 * ELECTION_TIMEOUT_MS);
    ctx.assert_prospective(2);
    assert_eq!(ctx.take_sent(ApiKey::Vote).len(), 2);
    ctx.advance(REQUEST_TIMEOUT_MS);
    ctx.advance(RETRY_BACKOFF_MS);
    if matches!(ctx.role(), Role::Prospective(_)) {
        assert_eq!(
            ctx.take_sent(ApiKey::Vote).len(),
            2,
            "unanswered pre-votes are resent"
        );
    }
}

#[test]
fn test_vote_request_versions_carry_endpoints_from_v1() {
    for version in [0i16, 1, 2] {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_elected_leader(4, 2)
            .build();
        let id = ctx.deliver_request(vote_request_body(4, 3, 0, 0, false), version);
        let ResponseBody::Vote(r) = ctx.response(id) else {
            unreachable!()
        };
        assert_eq!(r.node_endpoints.is_empty(), version == 0, "v{version}");
        assert_eq!(r.topics[0].partitions[0].leader_id.0, 2);
    }
}

/// Mirrors `KafkaRaftClientPreVoteTest.testHandlePreVoteRequestAsResigned`: a resigned leader
/// grants an up-to-date pre-vote in its epoch (Kafka 4.1.2's `ResignedState.canGrantVote`;
/// the reference's §3.4 table says "reject"), rejects one from a replica behind it, and stays
/// resigned either way; a real vote in its epoch it never grants.
#[test]
fn test_handle_pre_vote_request_as_resigned() {
    let mut ctx = Builder::new(1, &[1, 2, 3])
        .append_to_log(1, 2)
        .with_elected_leader(2, 1)
        .build();
    ctx.assert_resigned(2);
    let stored = ctx.stored.clone();
    let id = ctx.deliver(vote_request_body(2, 2, 1, 2, true));
    assert!(vote_partition(ctx.response(id)).vote_granted, "up to date");
    let id = ctx.deliver(vote_request_body(2, 3, 0, 0, true));
    assert!(!vote_partition(ctx.response(id)).vote_granted, "behind us");
    let id = ctx.deliver(vote_request_body(2, 2, 1, 2, false));
    assert!(
        !vote_partition(ctx.response(id)).vote_granted,
        "a real vote"
    );
    ctx.assert_resigned(2);
    assert_eq!(ctx.stored, stored, "pre-votes persist nothing");
}

/// Kafka's prepareAppend refuses records that cannot fit one batch; proposals that fit are
/// batched, and every batch stays within the 8 MiB limit the log enforces (found by the quorum
/// benchmark: a 16 MB batch once reached the log).
#[test]
fn test_append_failed_with_record_batch_too_large_exception() {
    let mut ctx = Builder::new(1, &[1, 2, 3])
        .with_unknown_leader(1)
        .with_config(|c| c.append_linger_ms = 25)
        .build();
    ctx.become_leader();
    let value = Bytes::from(vec![7u8; 256]);
    let fits = crate::raft::max_records_per_proposal(value.len());
    let too_many = vec![value.clone(); fits + 1];
    assert_eq!(ctx.core.propose(ctx.now_ms, &ctx.log, too_many), None);
    ctx.drain();
    let before = ctx.log.batches().len();
    for _ in 0..3 {
        let proposal = vec![value.clone(); fits];
        assert!(ctx.core.propose(ctx.now_ms, &ctx.log, proposal).is_some());
        ctx.drain();
    }
    ctx.advance(25);
    ctx.poll();
    let batches = ctx.log.batches();
    assert_eq!(batches.len(), before + 3, "one batch per full proposal");
    for (offset, _, bytes) in &batches[before..] {
        assert!(
            bytes.len() <= crate::raft::types::MAX_BATCH_SIZE_BYTES,
            "batch at {offset}: {} bytes",
            bytes.len()
        );
    }
}
