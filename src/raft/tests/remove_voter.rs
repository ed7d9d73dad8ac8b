//! RemoveRaftVoter (KIP-853), mirroring `KafkaRaftClientReconfigTest`'s testRemoveVoter*
//! cases: leader 1 with followers 2 and 3 (bootstrap snapshot voters {1, 2, 3}).

use kafka_protocol::messages::ApiKey;

use super::context::*;
use super::reconfig_ctx::*;
use crate::raft::errors;
use crate::raft::types::ReplicaKey;
use crate::raft::{LogReader, Role};

const LOCAL: i32 = 1;
const FOLLOWER1: i32 = 2;
const FOLLOWER2: i32 = 3;

fn leader() -> Context {
    kraft1_leader(&[LOCAL, FOLLOWER1, FOLLOWER2])
}

fn remove(ctx: &mut Context, voter: ReplicaKey) -> u64 {
    ctx.deliver_request(remove_voter_request(Some(CLUSTER_ID), voter), 0)
}

#[test]
fn test_remove_voter() {
    let mut ctx = leader();
    assert!(ctx.core.voters().is_voter(&key(FOLLOWER2)));
    establish_high_watermark(&mut ctx, key(FOLLOWER1));
    let id = remove(&mut ctx, key(FOLLOWER2));
    // Effective on append, answered on commit.
    assert!(!ctx.core.voters().contains_id(FOLLOWER2));
    assert!(!ctx.has_response(id));
    // {1, 2} needs both: follower 1's fetch commits it.
    assert_eq!(fetch_at_log_end(&mut ctx, key(FOLLOWER1)), errors::NONE);
    assert_eq!(remove_voter_error(&ctx, id), errors::NONE);
    assert_eq!(voter_change_message(&ctx, id).as_deref(), Some("NONE"));
    ctx.assert_leader(ctx.epoch());
}

#[test]
fn test_remove_voter_is_leader() {
    let mut ctx = leader();
    let epoch = ctx.epoch();
    establish_high_watermark(&mut ctx, key(FOLLOWER1));
    let id = remove(&mut ctx, key(LOCAL));
    assert!(!ctx.core.voters().contains_id(LOCAL));
    // Until it resigns the leader tracks itself as an observer (DescribeQuorum shows it so).
    let Role::Leader(l) = ctx.role() else {
        panic!("still leader until the removal commits")
    };
    assert!(!l.voters.contains_key(&LOCAL));
    assert_eq!(
        l.observers.get(&key(LOCAL)).and_then(|r| r.end_offset),
        Some(ctx.log.end_offset().offset)
    );
    // The new voters {2, 3} must both have the record; the leader no longer counts.
    assert_eq!(fetch_at_log_end(&mut ctx, key(FOLLOWER1)), errors::NONE);
    assert!(
        !ctx.has_response(id),
        "one of two new voters is not a majority"
    );
    ctx.take_sent(ApiKey::EndQuorumEpoch);
    assert_eq!(fetch_at_log_end(&mut ctx, key(FOLLOWER2)), errors::NONE);
    assert_eq!(remove_voter_error(&ctx, id), errors::NONE);
    // Committed: the leader resigns and tells the remaining voters.
    ctx.assert_resigned(epoch);
    let mut ends: Vec<i32> = ctx
        .take_sent(ApiKey::EndQuorumEpoch)
        .iter()
        .map(|s| s.destination)
        .collect();
    ends.sort_unstable();
    assert_eq!(ends, vec![FOLLOWER1, FOLLOWER2]);
    // After the election timeout it is an unattached observer, never a candidate.
    ctx.advance(2 * ELECTION_TIMEOUT_MS);
    assert!(
        matches!(ctx.role(), Role::Unattached(_)),
        "{:?}",
        ctx.role()
    );
    assert_eq!(ctx.core.state_name(), "unattached");
    ctx.advance(4 * ELECTION_TIMEOUT_MS);
    assert!(
        matches!(ctx.role(), Role::Unattached(_)),
        "observers never elect"
    );
}

#[test]
fn test_remove_voter_invalid_cluster_id() {
    let mut ctx = leader();
    for cluster in ["", "invalid-uuid"] {
        let id = ctx.deliver_request(remove_voter_request(Some(cluster), key(FOLLOWER1)), 0);
        assert_eq!(
            remove_voter_error(&ctx, id),
            errors::INCONSISTENT_CLUSTER_ID
        );
    }
    assert!(ctx.core.voters().is_voter(&key(FOLLOWER1)));
}

#[test]
fn test_remove_voter_to_not_leader() {
    let mut ctx = kraft1(LOCAL, &[1, 2, 3], &[1, 2, 3])
        .with_unknown_leader(3)
        .build();
    let id = remove(&mut ctx, key(FOLLOWER1));
    assert_eq!(remove_voter_error(&ctx, id), errors::NOT_LEADER_OR_FOLLOWER);
    assert_eq!(voter_change_message(&ctx, id).as_deref(), Some(""));
}

#[test]
fn test_remove_voter_with_pending_remove_voter() {
    let mut ctx = leader();
    establish_high_watermark(&mut ctx, key(FOLLOWER1));
    let first = remove(&mut ctx, key(FOLLOWER2));
    let second = remove(&mut ctx, key(FOLLOWER1));
    assert_eq!(remove_voter_error(&ctx, second), errors::REQUEST_TIMED_OUT);
    assert!(!ctx.has_response(first));
}

#[test]
fn test_remove_voter_without_fenced_previous_leaders() {
    let mut ctx = leader();
    let id = remove(&mut ctx, key(FOLLOWER2));
    assert_eq!(remove_voter_error(&ctx, id), errors::REQUEST_TIMED_OUT);
    assert!(ctx.core.voters().contains_id(FOLLOWER2));
}

#[test]
fn test_remove_voter_with_kraft_version0() {
    let mut ctx = kraft0(LOCAL, &[1, 2, 3]).with_unknown_leader(3).build();
    ctx.become_leader();
    establish_high_watermark(&mut ctx, key(FOLLOWER1));
    let id = remove(&mut ctx, key(FOLLOWER2));
    assert_eq!(remove_voter_error(&ctx, id), errors::UNSUPPORTED_VERSION);
}

#[test]
fn test_remove_voter_with_none_voter() {
    let mut ctx = leader();
    establish_high_watermark(&mut ctx, key(FOLLOWER1));
    // Follower 2's id with another directory id.
    let id = remove(&mut ctx, other_key(FOLLOWER2));
    assert_eq!(remove_voter_error(&ctx, id), errors::VOTER_NOT_FOUND);
}

#[test]
fn test_remove_voter_with_none_voter_id() {
    let mut ctx = leader();
    establish_high_watermark(&mut ctx, key(FOLLOWER1));
    let id = remove(&mut ctx, ReplicaKey::new(FOLLOWER2 + 1, dir(FOLLOWER2)));
    assert_eq!(remove_voter_error(&ctx, id), errors::VOTER_NOT_FOUND);
}

#[test]
fn test_remove_voter_to_empty_voter_set() {
    // A lone voter leads at once and its epoch start commits at once.
    let mut ctx = kraft1(LOCAL, &[LOCAL], &[LOCAL]).build();
    ctx.assert_leader(ctx.epoch());
    let id = remove(&mut ctx, key(LOCAL));
    assert_eq!(remove_voter_error(&ctx, id), errors::VOTER_NOT_FOUND);
}

#[test]
fn test_remove_voter_timed_out() {
    let mut ctx = leader();
    establish_high_watermark(&mut ctx, key(FOLLOWER1));
    let id = remove(&mut ctx, key(FOLLOWER2));
    ctx.advance(REQUEST_TIMEOUT_MS - 1);
    assert!(!ctx.has_response(id));
    ctx.advance(1);
    assert_eq!(remove_voter_error(&ctx, id), errors::REQUEST_TIMED_OUT);
    assert!(!ctx.core.voters().contains_id(FOLLOWER2), "still in effect");
}

#[test]
fn test_remove_voter_fails_when_losing_leadership() {
    let mut ctx = leader();
    establish_high_watermark(&mut ctx, key(FOLLOWER1));
    let id = remove(&mut ctx, key(FOLLOWER2));
    ctx.core.begin_shutdown(ctx.now_ms, &ctx.log, 60_000);
    ctx.drain();
    assert_eq!(remove_voter_error(&ctx, id), errors::NOT_LEADER_OR_FOLLOWER);
    assert!(!ctx.core.voters().contains_id(FOLLOWER2));
}

#[test]
fn test_add_voter_with_pending_remove_voter() {
    let mut ctx = leader();
    establish_high_watermark(&mut ctx, key(FOLLOWER1));
    let _remove = remove(&mut ctx, key(FOLLOWER2));
    let add = ctx.deliver_request(
        add_voter_request(Some(CLUSTER_ID), key(4), &listeners(4, &[LISTENER])),
        0,
    );
    assert_eq!(add_voter_error(&ctx, add), errors::REQUEST_TIMED_OUT);
}

#[test]
fn test_remove_voter_with_pending_add_voter() {
    let mut ctx = kraft1_leader(&[LOCAL, FOLLOWER1]);
    establish_high_watermark(&mut ctx, key(FOLLOWER1));
    assert_eq!(fetch_at_log_end(&mut ctx, key(FOLLOWER2)), errors::NONE);
    let _add = ctx.deliver_request(
        add_voter_request(
            Some(CLUSTER_ID),
            key(FOLLOWER2),
            &listeners(FOLLOWER2, &[LISTENER]),
        ),
        0,
    );
    let id = remove(&mut ctx, key(FOLLOWER1));
    assert_eq!(remove_voter_error(&ctx, id), errors::REQUEST_TIMED_OUT);
}

/// Not a Kafka test: the next change is refused until the previous record commits, even
/// after the previous request timed out.
#[test]
fn test_remove_voter_waits_for_the_previous_change_to_commit() {
    let mut ctx = leader();
    establish_high_watermark(&mut ctx, key(FOLLOWER1));
    let first = remove(&mut ctx, key(FOLLOWER2));
    ctx.advance(REQUEST_TIMEOUT_MS);
    assert_eq!(remove_voter_error(&ctx, first), errors::REQUEST_TIMED_OUT);
    let second = remove(&mut ctx, key(FOLLOWER1));
    assert_eq!(remove_voter_error(&ctx, second), errors::REQUEST_TIMED_OUT);
    // Kafka prints the offset as a java.util.Optional.
    let message = voter_change_message(&ctx, second).unwrap_or_default();
    assert!(
        message.starts_with(
            "Request timed out waiting for voters to commit the latest voter change at Optional["
        ),
        "{message}"
    );
    // Once committed, the next change goes through.
    assert_eq!(fetch_at_log_end(&mut ctx, key(FOLLOWER1)), errors::NONE);
    let third = remove(&mut ctx, key(FOLLOWER1));
    // Left alone, the leader commits the record as it appends it.
    assert_eq!(remove_voter_error(&ctx, third), errors::NONE);
    assert_eq!(ctx.core.voters().ids().collect::<Vec<_>>(), vec![LOCAL]);
}
