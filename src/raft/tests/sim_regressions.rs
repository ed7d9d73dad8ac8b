//! Regression tests for bugs the cluster simulation (`sim/`) found, one per bug, named after it.

use kafka_protocol::messages::ApiKey;

use super::context::*;
use crate::raft::ResponseResult;

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
