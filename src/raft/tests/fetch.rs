//! Fetch and replication: leader decisions, long polling, follower appends and truncation,
//! DescribeQuorum, FetchSnapshot serving.

use bytes::Bytes;
use kafka_protocol::messages::{
    describe_quorum_request, fetch_snapshot_request, ApiKey, BrokerId, DescribeQuorumRequest,
    FetchSnapshotRequest,
};
use kafka_protocol::protocol::StrBytes;

use super::context::*;
use crate::codec::{RequestBody, ResponseBody};
use crate::raft::errors;
use crate::raft::types::OffsetAndEpoch;
use crate::raft::LogReader;
use crate::records::batch::build_data_batch;

/// A leader of epoch 5 whose log has epochs 1:[0,3) 3:[3,6) 5:[6,9) plus its LeaderChange.
fn leader_with_history(rpc: Rpc) -> Context {
    let mut ctx = Builder::new(1, &[1, 2, 3])
        .with_unknown_leader(4)
        .append_to_log(1, 3)
        .append_to_log(3, 3)
        .append_to_log(4, 3)
        .with_rpc(rpc)
        .build();
    ctx.become_leader();
    ctx
}

#[test]
fn test_leader_immediately_sends_diverging_epoch() {
    for rpc in Rpc::ALL {
        let mut ctx = leader_with_history(rpc);
        let epoch = ctx.epoch();
        let id = ctx.deliver(fetch_request_body(epoch, 2, 6, 2, 500));
        let p = fetch_partition(ctx.response(id));
        assert_eq!(p.error_code, errors::NONE);
        assert_eq!(
            (p.diverging_epoch.epoch, p.diverging_epoch.end_offset),
            (1, 3)
        );
        assert!(p.records.as_ref().is_none_or(|r| r.is_empty()));
    }
}

#[test]
fn test_invalid_fetch_request() {
    for rpc in Rpc::ALL {
        let mut ctx = leader_with_history(rpc);
        let epoch = ctx.epoch();
        for (offset, last_epoch, wait) in [(-1, 0, 0), (0, -1, 0), (0, epoch + 1, 0), (0, 0, -1)] {
            let id = ctx.deliver(fetch_request_body(epoch, 2, offset, last_epoch, wait));
            assert_eq!(
                fetch_partition(ctx.response(id)).error_code,
                errors::INVALID_REQUEST,
                "{offset} {last_epoch} {wait}"
            );
        }
    }
}

#[test]
fn test_fetch_request_cluster_id_validation() {
    for rpc in Rpc::ALL {
        let mut ctx = leader_with_history(rpc);
        let RequestBody::Fetch(mut f) = fetch_request_body(ctx.epoch(), 2, 0, 0, 0) else {
            unreachable!()
        };
        f.cluster_id = Some(StrBytes::from_static_str("nope"));
        let id = ctx.deliver(RequestBody::Fetch(f));
        let ResponseBody::Fetch(r) = ctx.response(id) else {
            unreachable!()
        };
        assert_eq!(r.error_code, errors::INCONSISTENT_CLUSTER_ID);
    }
}

#[test]
fn test_fetch_to_non_leader_gives_leader_hint() {
    let mut ctx = Builder::new(1, &[1, 2, 3])
        .with_elected_leader(4, 2)
        .build();
    let id = ctx.deliver_request(fetch_request_body(4, 3, 0, 0, 0), 17);
    let p = fetch_partition(ctx.response(id));
    assert_eq!(p.error_code, errors::NOT_LEADER_OR_FOLLOWER);
    assert_eq!(
        (p.current_leader.leader_id.0, p.current_leader.leader_epoch),
        (2, 4)
    );
    let id = ctx.deliver_request(fetch_request_body(3, 3, 0, 0, 0), 17);
    assert_eq!(
        fetch_partition(ctx.response(id)).error_code,
        errors::FENCED_LEADER_EPOCH
    );
    let id = ctx.deliver_request(fetch_request_body(5, 3, 0, 0, 0), 17);
    assert_eq!(
        fetch_partition(ctx.response(id)).error_code,
        errors::UNKNOWN_LEADER_EPOCH
    );
}

#[test]
fn test_purgatory_fetch_timeout() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(1)
            .with_rpc(rpc)
            .build();
        ctx.become_leader();
        let epoch = ctx.epoch();
        let end = ctx.log.end_offset().offset;
        let id = ctx.deliver(fetch_request_body(epoch, 2, end, epoch, 500));
        assert!(!ctx.has_response(id), "parked");
        ctx.advance(499);
        assert!(!ctx.has_response(id));
        ctx.advance(1);
        let p = fetch_partition(ctx.response(id));
        assert_eq!(p.error_code, errors::NONE);
        assert!(p.records.as_ref().is_some_and(|r| r.is_empty()));
    }
}

#[test]
fn test_purgatory_fetch_satisfied_by_write() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(1)
            .with_rpc(rpc)
            .build();
        ctx.become_leader();
        let epoch = ctx.epoch();
        let end = ctx.log.end_offset().offset;
        let id = ctx.deliver(fetch_request_body(epoch, 2, end, epoch, 500));
        assert!(!ctx.has_response(id));
        assert_eq!(ctx.propose(&["x", "y"]), Some(end + 1));
        ctx.poll();
        let p = fetch_partition(ctx.response(id));
        assert!(
            p.records.as_ref().is_some_and(|r| !r.is_empty()),
            "answered with the new batch"
        );
    }
}

#[test]
fn test_purgatory_fetch_completed_by_follower_transition() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(1)
            .with_rpc(rpc)
            .build();
        ctx.become_leader();
        let epoch = ctx.epoch();
        let end = ctx.log.end_offset().offset;
        let id = ctx.deliver(fetch_request_body(epoch, 2, end, epoch, 500));
        ctx.deliver(begin_epoch_request_body(epoch + 1, 3));
        ctx.assert_follower(epoch + 1, 3);
        assert_eq!(
            fetch_partition(ctx.response(id)).error_code,
            errors::NOT_LEADER_OR_FOLLOWER
        );
    }
}

#[test]
fn test_high_watermark_needs_majority_past_epoch_start() {
    let mut ctx = Builder::new(1, &[1, 2, 3]).with_unknown_leader(1).build();
    ctx.become_leader();
    let epoch = ctx.epoch();
    let start = 0;
    // Voter 2 fetching at the epoch start offset does not commit the LeaderChange yet.
    ctx.deliver_request(fetch_request_body(epoch, 2, start, 0, 0), 17);
    assert_eq!(ctx.core.high_watermark(), None);
    ctx.deliver_request(fetch_request_body(epoch, 2, start + 1, epoch, 0), 17);
    assert_eq!(ctx.core.high_watermark(), Some(1));
    // An observer's fetch never moves the high watermark.
    ctx.propose(&["a"]);
    ctx.deliver_request(fetch_request_body(epoch, 7, 2, epoch, 0), 17);
    assert_eq!(ctx.core.high_watermark(), Some(1));
    ctx.deliver_request(fetch_request_body(epoch, 3, 2, epoch, 0), 17);
    assert_eq!(ctx.core.high_watermark(), Some(2));
}

#[test]
fn test_fetch_should_be_treated_as_leader_acknowledgement() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(1)
            .with_rpc(rpc)
            .build();
        ctx.become_leader();
        let epoch = ctx.epoch();
        ctx.deliver(fetch_request_body(epoch, 2, 0, 0, 0));
        let crate::raft::Role::Leader(l) = ctx.role() else {
            panic!()
        };
        assert!(l.acknowledged.contains(&2));
    }
}

#[test]
fn test_describe_quorum_non_leader() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_elected_leader(2, 2)
            .with_rpc(rpc)
            .build();
        let req = DescribeQuorumRequest::default().with_topics(vec![
            describe_quorum_request::TopicData::default()
                .with_topic_name(topic_name())
                .with_partitions(vec![describe_quorum_request::PartitionData::default()]),
        ]);
        let id = ctx.deliver(RequestBody::DescribeQuorum(req));
        let ResponseBody::DescribeQuorum(r) = ctx.response(id) else {
            unreachable!()
        };
        assert_eq!(r.error_code, errors::NONE);
        assert_eq!(
            r.topics[0].partitions[0].error_code,
            errors::NOT_LEADER_OR_FOLLOWER
        );
    }
}

#[test]
fn test_describe_quorum_with_followers() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(1)
            .with_rpc(rpc)
            .build();
        ctx.become_leader();
        let epoch = ctx.epoch();
        ctx.advance(10);
        ctx.deliver(fetch_request_body(epoch, 2, 1, epoch, 0));
        ctx.deliver(fetch_request_body(epoch, 5, 1, epoch, 0));
        let req = DescribeQuorumRequest::default().with_topics(vec![
            describe_quorum_request::TopicData::default()
                .with_topic_name(topic_name())
                .with_partitions(vec![describe_quorum_request::PartitionData::default()]),
        ]);
        let id = ctx.deliver(RequestBody::DescribeQuorum(req));
        let ResponseBody::DescribeQuorum(r) = ctx.response(id) else {
            unreachable!()
        };
        let p = &r.topics[0].partitions[0];
        assert_eq!(
            (p.leader_id.0, p.leader_epoch, p.high_watermark),
            (1, epoch, 1)
        );
        assert_eq!(p.current_voters.len(), 3);
        let v2 = p
            .current_voters
            .iter()
            .find(|v| v.replica_id.0 == 2)
            .unwrap();
        assert_eq!(v2.log_end_offset, 1);
        assert_eq!(v2.last_caught_up_timestamp, ctx.now_ms as i64);
        let v3 = p
            .current_voters
            .iter()
            .find(|v| v.replica_id.0 == 3)
            .unwrap();
        assert_eq!((v3.log_end_offset, v3.last_fetch_timestamp), (-1, -1));
        let leader = p
            .current_voters
            .iter()
            .find(|v| v.replica_id.0 == 1)
            .unwrap();
        assert_eq!(leader.last_fetch_timestamp, ctx.now_ms as i64);
        assert_eq!(p.observers.len(), 1);
        let expected = if rpc.version(ApiKey::DescribeQuorum) >= 2 {
            3
        } else {
            0
        };
        assert_eq!(
            r.nodes.len(),
            expected,
            "{rpc:?}: v2 lists every voter's listeners, v1 has no such field"
        );
    }
}

#[test]
fn test_follower_replication() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_elected_leader(5, 2)
            .with_rpc(rpc)
            .build();
        ctx.poll();
        let fetches = ctx.take_sent(ApiKey::Fetch);
        assert_eq!(fetches.len(), 1, "one Fetch in flight to the leader");
        assert_eq!(fetches[0].destination, 2);
        let batch =
            Bytes::from(build_data_batch(0, 5, START_MS as i64, &[b"a", b"b", b"c"]).unwrap());
        ctx.events.clear();
        ctx.deliver_response(
            fetches[0].correlation_id,
            follower_fetch_response(2, 5, 2, batch),
        );
        assert_eq!(ctx.log.end_offset(), OffsetAndEpoch::new(3, 5));
        assert_eq!(
            ctx.core.high_watermark(),
            Some(2),
            "HW = min(leader HW, LEO)"
        );
        // Flushed before the next Fetch goes out.
        let flush = ctx.events.iter().position(|e| e == "flush").unwrap();
        let next = ctx
            .events
            .iter()
            .position(|e| e.starts_with("send Fetch"))
            .unwrap();
        assert!(flush < next, "{:?}", ctx.events);
        let again = ctx.take_sent(ApiKey::Fetch);
        let RequestBody::Fetch(f) = &again[0].request else {
            unreachable!()
        };
        assert_eq!(f.topics[0].partitions[0].fetch_offset, 3);
        assert_eq!(f.topics[0].partitions[0].last_fetched_epoch, 5);
    }
}

#[test]
fn test_empty_record_set_in_fetch_response() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_elected_leader(5, 2)
            .with_rpc(rpc)
            .build();
        ctx.poll();
        let f = ctx.take_sent(ApiKey::Fetch);
        ctx.deliver_response(
            f[0].correlation_id,
            follower_fetch_response(2, 5, -1, Bytes::new()),
        );
        ctx.assert_follower(5, 2);
        assert_eq!(ctx.core.high_watermark(), None);
        assert_eq!(ctx.take_sent(ApiKey::Fetch).len(), 1);
    }
}

#[test]
fn test_follower_log_reconciliation() {
    for rpc in Rpc::ALL {
        // Our log: epoch 1 [0,3), epoch 3 [3,6); the leader says epoch 1 ends at 3.
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_elected_leader(5, 2)
            .append_to_log(1, 3)
            .append_to_log(3, 3)
            .with_rpc(rpc)
            .build();
        ctx.poll();
        let f = ctx.take_sent(ApiKey::Fetch);
        let mut resp = follower_fetch_response(2, 5, -1, Bytes::new());
        if let ResponseBody::Fetch(r) = &mut resp {
            r.responses[0].partitions[0].diverging_epoch.epoch = 1;
            r.responses[0].partitions[0].diverging_epoch.end_offset = 3;
        }
        ctx.deliver_response(f[0].correlation_id, resp);
        assert_eq!(ctx.log.end_offset(), OffsetAndEpoch::new(3, 1));
        ctx.poll();
        let f = ctx.take_sent(ApiKey::Fetch);
        let RequestBody::Fetch(req) = &f[0].request else {
            unreachable!()
        };
        assert_eq!(
            (
                req.topics[0].partitions[0].fetch_offset,
                req.topics[0].partitions[0].last_fetched_epoch
            ),
            (3, 1)
        );
    }
}

#[test]
fn test_refuses_to_truncate_below_high_watermark() {
    let mut ctx = Builder::new(1, &[1, 2, 3])
        .with_elected_leader(5, 2)
        .build();
    ctx.poll();
    let f = ctx.take_sent(ApiKey::Fetch);
    let batch = Bytes::from(build_data_batch(0, 5, START_MS as i64, &[b"a", b"b", b"c"]).unwrap());
    ctx.deliver_response(f[0].correlation_id, follower_fetch_response(2, 5, 3, batch));
    let f = ctx.take_sent(ApiKey::Fetch);
    let mut resp = follower_fetch_response(2, 5, -1, Bytes::new());
    if let ResponseBody::Fetch(r) = &mut resp {
        r.responses[0].partitions[0].diverging_epoch.epoch = 4;
        r.responses[0].partitions[0].diverging_epoch.end_offset = 1;
    }
    ctx.deliver_response(f[0].correlation_id, resp);
    assert!(matches!(
        ctx.core.fatal_error(),
        Some(crate::raft::RaftError::TruncateBelowHighWatermark { .. })
    ));
    assert_eq!(ctx.log.end_offset().offset, 3, "committed data kept");
}

#[test]
fn test_fetch_response_ignored_after_becoming_candidate() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_elected_leader(5, 2)
            .with_rpc(rpc)
            .build();
        ctx.poll();
        let f = ctx.take_sent(ApiKey::Fetch);
        ctx.advance(FETCH_TIMEOUT_MS);
        ctx.assert_prospective(5);
        let batch = Bytes::from(build_data_batch(0, 5, START_MS as i64, &[b"a"]).unwrap());
        ctx.deliver_response(f[0].correlation_id, follower_fetch_response(2, 5, 1, batch));
        assert_eq!(ctx.log.end_offset().offset, 0);
    }
}

#[test]
fn test_observer_quorum_discovery_via_fenced_leader_epoch() {
    let mut ctx = Builder::new(4, &[1, 2, 3]).build();
    ctx.poll();
    let f = ctx.take_sent(ApiKey::Fetch);
    assert_eq!(
        f.len(),
        1,
        "an observer fetches a voter to discover the leader"
    );
    let mut resp = follower_fetch_response(2, 7, -1, Bytes::new());
    if let ResponseBody::Fetch(r) = &mut resp {
        r.responses[0].partitions[0].error_code = errors::FENCED_LEADER_EPOCH;
    }
    ctx.deliver_response(f[0].correlation_id, resp);
    ctx.assert_follower(7, 2);
}

#[test]
fn test_fetch_request_offset_at_zero() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(1)
            .with_snapshot(OffsetAndEpoch::new(3, 1))
            .with_rpc(rpc)
            .build();
        ctx.become_leader();
        let id = ctx.deliver(fetch_request_body(ctx.epoch(), 2, 0, 0, 500));
        let p = fetch_partition(ctx.response(id));
        assert_eq!((p.snapshot_id.end_offset, p.snapshot_id.epoch), (3, 1));
    }
}

#[test]
fn test_fetch_request_offset_less_than_log_start() {
    for rpc in Rpc::ALL {
        let mut builder = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(2)
            .append_to_log(1, 6)
            .with_snapshot(OffsetAndEpoch::new(4, 1));
        builder = builder.with_config(|_| {});
        let mut ctx = builder.with_rpc(rpc).build();
        ctx.log.set_start_offset(4);
        ctx.become_leader();
        let id = ctx.deliver(fetch_request_body(ctx.epoch(), 2, 2, 1, 500));
        let p = fetch_partition(ctx.response(id));
        assert_eq!((p.snapshot_id.end_offset, p.snapshot_id.epoch), (4, 1));
    }
}

fn fetch_snapshot(
    ctx: &mut Context,
    epoch: i32,
    id: OffsetAndEpoch,
    position: i64,
    max_bytes: i32,
) -> kafka_protocol::messages::fetch_snapshot_response::PartitionSnapshot {
    let req = FetchSnapshotRequest::default()
        .with_max_bytes(max_bytes)
        .with_replica_id(BrokerId(2))
        .with_topics(vec![fetch_snapshot_request::TopicSnapshot::default()
            .with_name(topic_name())
            .with_partitions(vec![
                fetch_snapshot_request::PartitionSnapshot::default()
                    .with_current_leader_epoch(epoch)
                    .with_snapshot_id(
                        fetch_snapshot_request::SnapshotId::default()
                            .with_end_offset(id.offset)
                            .with_epoch(id.epoch),
                    )
                    .with_position(position),
            ])]);
    let rid = ctx.deliver_request(RequestBody::FetchSnapshot(req), 1);
    let ResponseBody::FetchSnapshot(r) = ctx.response(rid) else {
        unreachable!()
    };
    r.topics[0].partitions[0].clone()
}

#[test]
fn test_partial_fetch_snapshot_request_as_leader() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(1)
            .with_snapshot(OffsetAndEpoch::new(3, 1))
            .with_rpc(rpc)
            .build();
        ctx.become_leader();
        let epoch = ctx.epoch();
        let p = fetch_snapshot(&mut ctx, epoch, OffsetAndEpoch::new(3, 1), 0, 60);
        assert_eq!(
            (p.error_code, p.size, p.position, p.unaligned_records.len()),
            (errors::NONE, 100, 0, 60)
        );
        let p = fetch_snapshot(&mut ctx, epoch, OffsetAndEpoch::new(3, 1), 60, 60);
        assert_eq!(p.unaligned_records.len(), 40);
        let p = fetch_snapshot(&mut ctx, epoch, OffsetAndEpoch::new(3, 1), 100, 60);
        assert_eq!(p.error_code, errors::POSITION_OUT_OF_RANGE);
        let p = fetch_snapshot(&mut ctx, epoch, OffsetAndEpoch::new(9, 1), 0, 60);
        assert_eq!(p.error_code, errors::SNAPSHOT_NOT_FOUND);
        let p = fetch_snapshot(&mut ctx, epoch, OffsetAndEpoch::new(0, 0), 0, 60);
        assert_eq!(
            p.error_code,
            errors::SNAPSHOT_NOT_FOUND,
            "the bootstrap snapshot is never served"
        );
        let p = fetch_snapshot(&mut ctx, epoch - 1, OffsetAndEpoch::new(3, 1), 0, 60);
        assert_eq!(p.error_code, errors::FENCED_LEADER_EPOCH);
    }
}

fn snapshot_id_fetch_response(leader: i32, epoch: i32, id: OffsetAndEpoch) -> ResponseBody {
    let mut resp = follower_fetch_response(leader, epoch, -1, Bytes::new());
    if let ResponseBody::Fetch(r) = &mut resp {
        r.responses[0].partitions[0].snapshot_id.end_offset = id.offset;
        r.responses[0].partitions[0].snapshot_id.epoch = id.epoch;
    }
    resp
}

fn fetch_snapshot_response_body(
    leader: i32,
    epoch: i32,
    id: OffsetAndEpoch,
    size: i64,
    position: i64,
    bytes: &[u8],
) -> ResponseBody {
    use kafka_protocol::messages::fetch_snapshot_response::{self as fsr};
    ResponseBody::FetchSnapshot(
        kafka_protocol::messages::FetchSnapshotResponse::default().with_topics(vec![
            fsr::TopicSnapshot::default()
                .with_name(topic_name())
                .with_partitions(vec![fsr::PartitionSnapshot::default()
                    .with_snapshot_id(
                        fsr::SnapshotId::default()
                            .with_end_offset(id.offset)
                            .with_epoch(id.epoch),
                    )
                    .with_current_leader(
                        fsr::LeaderIdAndEpoch::default()
                            .with_leader_id(BrokerId(leader))
                            .with_leader_epoch(epoch),
                    )
                    .with_size(size)
                    .with_position(position)
                    .with_unaligned_records(Bytes::copy_from_slice(bytes))]),
        ]),
    )
}

#[test]
fn test_fetch_snapshot_response_partial_data() {
    for rpc in Rpc::ALL {
        // Mirrors testFetchResponseWithSnapshotId + testFetchSnapshotResponsePartialData.
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_elected_leader(5, 2)
            .with_rpc(rpc)
            .build();
        ctx.poll();
        let f = ctx.take_sent(ApiKey::Fetch);
        let id = OffsetAndEpoch::new(10, 4);
        ctx.deliver_response(f[0].correlation_id, snapshot_id_fetch_response(2, 5, id));
        let s = ctx.take_sent(ApiKey::FetchSnapshot);
        assert_eq!(s.len(), 1, "switches to FetchSnapshot");
        let RequestBody::FetchSnapshot(req) = &s[0].request else {
            unreachable!()
        };
        let p = &req.topics[0].partitions[0];
        assert_eq!(
            (
                p.snapshot_id.end_offset,
                p.snapshot_id.epoch,
                p.position,
                p.current_leader_epoch
            ),
            (10, 4, 0, 5)
        );
        let data = [9u8; 150];
        ctx.deliver_response(
            s[0].correlation_id,
            fetch_snapshot_response_body(2, 5, id, 150, 0, &data[..100]),
        );
        let s = ctx.take_sent(ApiKey::FetchSnapshot);
        let RequestBody::FetchSnapshot(req) = &s[0].request else {
            unreachable!()
        };
        assert_eq!(
            req.topics[0].partitions[0].position, 100,
            "continues where it stopped"
        );
        ctx.deliver_response(
            s[0].correlation_id,
            fetch_snapshot_response_body(2, 5, id, 150, 100, &data[100..]),
        );
        assert_eq!(ctx.log.latest_snapshot_id(), Some(id));
        assert_eq!(
            ctx.log.end_offset().offset,
            10,
            "the log restarts at the snapshot"
        );
        assert_eq!(ctx.core.high_watermark(), Some(10));
        assert_eq!(ctx.log.read_snapshot(id, 0, 1000).unwrap().bytes.len(), 150);
        ctx.poll();
        let f = ctx.take_sent(ApiKey::Fetch);
        let RequestBody::Fetch(req) = &f[0].request else {
            unreachable!()
        };
        assert_eq!(
            (
                req.topics[0].partitions[0].fetch_offset,
                req.topics[0].partitions[0].last_fetched_epoch
            ),
            (10, 4)
        );
    }
}

#[test]
fn test_fetch_snapshot_response_missing_snapshot() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_elected_leader(5, 2)
            .with_rpc(rpc)
            .build();
        ctx.poll();
        let f = ctx.take_sent(ApiKey::Fetch);
        let id = OffsetAndEpoch::new(10, 4);
        ctx.deliver_response(f[0].correlation_id, snapshot_id_fetch_response(2, 5, id));
        let s = ctx.take_sent(ApiKey::FetchSnapshot);
        let mut missing = fetch_snapshot_response_body(2, 5, id, 0, 0, &[]);
        if let ResponseBody::FetchSnapshot(r) = &mut missing {
            r.topics[0].partitions[0].error_code = errors::SNAPSHOT_NOT_FOUND;
        }
        ctx.deliver_response(s[0].correlation_id, missing);
        ctx.poll();
        assert_eq!(ctx.take_sent(ApiKey::Fetch).len(), 1, "back to Fetch");
        assert!(ctx.take_sent(ApiKey::FetchSnapshot).is_empty());
    }
}

#[test]
fn test_fetch_snapshot_response_from_newer_epoch_leader() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_elected_leader(5, 2)
            .with_rpc(rpc)
            .build();
        ctx.poll();
        let f = ctx.take_sent(ApiKey::Fetch);
        let id = OffsetAndEpoch::new(10, 4);
        ctx.deliver_response(f[0].correlation_id, snapshot_id_fetch_response(2, 5, id));
        let s = ctx.take_sent(ApiKey::FetchSnapshot);
        let mut newer = fetch_snapshot_response_body(3, 6, id, 0, 0, &[]);
        if let ResponseBody::FetchSnapshot(r) = &mut newer {
            r.topics[0].partitions[0].error_code = errors::FENCED_LEADER_EPOCH;
        }
        ctx.deliver_response(s[0].correlation_id, newer);
        ctx.assert_follower(6, 3);
    }
}

/// ferrokraft's own rule (Kafka always asks for 500 ms): a follower's MaxWaitMs is at most
/// half its fetch timeout, so an idle leader's long poll cannot outlast the follower's fetch
/// timeout and start elections against a healthy leader at short timers.
#[test]
fn follower_fetch_max_wait_is_kafkas_500_ms_or_half_the_fetch_timeout() {
    for (fetch_timeout_ms, expected) in [(2000u64, 500i32), (200, 100)] {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_elected_leader(5, 2)
            .with_config(move |c| c.fetch_timeout_ms = fetch_timeout_ms)
            .build();
        ctx.poll();
        let sent = ctx.take_sent(ApiKey::Fetch);
        let RequestBody::Fetch(f) = &sent[0].request else {
            unreachable!()
        };
        assert_eq!(
            f.max_wait_ms, expected,
            "fetch timeout {fetch_timeout_ms} ms"
        );
    }
}

/// Not a Kafka test: FetchSnapshot asks for `controller.quorum.fetch.snapshot.max.bytes`
/// (KIP-1219).
#[test]
fn fetch_snapshot_carries_the_configured_max_bytes() {
    let mut ctx = Builder::new(1, &[1, 2, 3])
        .with_elected_leader(5, 2)
        .with_config(|c| c.fetch_snapshot_max_bytes = 54_321)
        .build();
    ctx.poll();
    let f = ctx.take_sent(ApiKey::Fetch);
    let id = OffsetAndEpoch::new(10, 4);
    ctx.deliver_response(f[0].correlation_id, snapshot_id_fetch_response(2, 5, id));
    let s = ctx.take_sent(ApiKey::FetchSnapshot);
    let RequestBody::FetchSnapshot(req) = &s[0].request else {
        panic!("not a FetchSnapshot: {s:?}")
    };
    assert_eq!(req.max_bytes, 54_321);
}

/// Not a Kafka test: a leader presenting Kafka 4.3+ answers at most the Fetch's MaxBytes,
/// still at least one batch (KIP-1219's `tryCompleteFetchRequest`); presenting 4.1 it answers
/// up to 8 MiB whatever was asked.
#[test]
fn leader_reads_at_most_the_fetch_max_bytes_from_kafka_4_3() {
    for honour in [true, false] {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(4)
            .append_to_log(1, 3)
            .append_to_log(3, 3)
            .with_config(move |c| c.leader_reads_fetch_max_bytes = honour)
            .build();
        ctx.become_leader();
        let epoch = ctx.epoch();
        let mut body = fetch_request_body(epoch, 2, 0, 0, 0);
        if let RequestBody::Fetch(f) = &mut body {
            f.max_bytes = 1;
        }
        let id = ctx.deliver(body);
        let p = fetch_partition(ctx.response(id));
        let got = p.records.clone().unwrap_or_default();
        let one_batch = ctx.log.read(0, 1).unwrap();
        let everything = ctx
            .log
            .read(0, crate::raft::types::MAX_BATCH_SIZE_BYTES)
            .unwrap();
        assert!(one_batch.len() < everything.len());
        let expected = if honour { one_batch } else { everything };
        assert_eq!(got, expected, "honour MaxBytes: {honour}");
    }
}
