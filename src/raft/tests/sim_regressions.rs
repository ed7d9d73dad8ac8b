//! Regression tests for bugs the cluster simulation (`sim/`) found, one per bug, named after it.

use bytes::Bytes;
use kafka_protocol::messages::ApiKey;

use super::context::*;
use crate::codec::{RequestBody, ResponseBody};
use crate::raft::types::OffsetAndEpoch;
use crate::raft::{LogReader, ResponseResult};

/// Found by `can_elect_new_leader_after_old_leader_failure` seed 0: a leader whose
/// BeginQuorumEpoch to a dead voter failed kept the ended backoff as its next deadline, so
/// `poll_timeout` stayed in the past and the driver spun.
#[test]
fn test_leader_poll_timeout_is_in_the_future_after_a_backoff_ends() {
    let mut ctx = Builder::new(1, &[1, 2, 3]).build();
    ctx.become_leader();
    let begins = ctx.take_sent(ApiKey::BeginQuorumEpoch);
    assert!(!begins.is_empty());
    ctx.deliver_result(begins[0].correlation_id, ResponseResult::Failed);
    ctx.advance(RETRY_BACKOFF_MS);
    let next = ctx.core.poll_timeout().unwrap();
    assert!(
        next > ctx.now_ms,
        "poll_timeout {next} is not after now {}",
        ctx.now_ms
    );
}

/// Found by `can_elect_new_leader_after_old_leader_failure` seed 2: an observer whose fetch
/// timer expired reported that expired deadline from `poll_timeout` forever (Kafka's
/// `pollFollowerAsObserver` then only waits for its discovery fetches).
#[test]
fn test_observer_poll_timeout_is_in_the_future_after_its_fetch_timeout() {
    let mut ctx = Builder::new(4, &[1, 2, 3])
        .with_elected_leader(5, 1)
        .build();
    ctx.assert_follower(5, 1);
    ctx.advance(FETCH_TIMEOUT_MS);
    ctx.poll();
    let next = ctx.core.poll_timeout().unwrap();
    assert!(
        next > ctx.now_ms,
        "poll_timeout {next} is not after now {}",
        ctx.now_ms
    );
}

/// Found by the node simulation (`node::tests::sim`, seed 33583515750794, issue #36): a
/// follower that truncated on a diverging epoch waits for the driver to carry out the
/// truncation (its next call) before fetching again; when that next call was a stale answer
/// (a Fetch sent before a transition reset its slot), the answer was dropped before the role
/// was polled, and the follower fetched nothing until its fetch timeout (50 s in the node
/// simulation). Kafka polls the role on every pass of `KafkaRaftClient.poll`, stale answers or
/// not.
#[test]
fn test_follower_fetches_after_a_truncation_even_when_the_next_answer_is_stale() {
    let mut ctx = Builder::new(1, &[1, 2, 3])
        .with_elected_leader(5, 2)
        .append_to_log(1, 3)
        .append_to_log(3, 3)
        .build();
    ctx.poll();
    let stale = ctx.take_sent(ApiKey::Fetch);
    assert_eq!(stale.len(), 1);
    // A new epoch of the same leader: the outstanding Fetch's slot is reset.
    ctx.deliver(begin_epoch_request_body(6, 2));
    ctx.assert_follower(6, 2);
    ctx.poll();
    let current = ctx.take_sent(ApiKey::Fetch);
    assert_eq!(current.len(), 1);
    let mut diverging = follower_fetch_response(2, 6, -1, Bytes::new());
    if let ResponseBody::Fetch(r) = &mut diverging {
        r.responses[0].partitions[0].diverging_epoch.epoch = 1;
        r.responses[0].partitions[0].diverging_epoch.end_offset = 3;
    }
    ctx.deliver_response(current[0].correlation_id, diverging);
    assert_eq!(ctx.log.end_offset(), OffsetAndEpoch::new(3, 1));
    // The first call after the truncation is the stale answer.
    ctx.deliver_response(
        stale[0].correlation_id,
        follower_fetch_response(2, 5, -1, Bytes::new()),
    );
    // A driver calls again when poll_timeout says so.
    if ctx.core.poll_timeout().is_some_and(|t| t <= ctx.now_ms) {
        ctx.poll();
    }
    let next = ctx.take_sent(ApiKey::Fetch);
    assert_eq!(next.len(), 1, "the follower fetches again at once");
    let RequestBody::Fetch(req) = &next[0].request else {
        unreachable!()
    };
    let p = &req.topics[0].partitions[0];
    assert_eq!((p.fetch_offset, p.last_fetched_epoch), (3, 1));
}
