//! AddRaftVoter (KIP-853), mirroring `KafkaRaftClientReconfigTest`'s testAddVoter* cases:
//! leader 1 with follower 2 (bootstrap snapshot voters {1, 2}), adding replica 3.

use super::context::*;
use super::reconfig_ctx::*;
use crate::codec::{RequestBody, ResponseBody};
use crate::raft::errors;
use crate::raft::types::Endpoint;

const LOCAL: i32 = 1;
const FOLLOWER: i32 = 2;
const NEW_VOTER: i32 = 3;

fn leader() -> Context {
    kraft1_leader(&[LOCAL, FOLLOWER])
}

fn new_listeners() -> Vec<(String, Endpoint)> {
    listeners(NEW_VOTER, &[LISTENER])
}

/// HW established by the follower, and the new voter caught up as an observer.
fn leader_with_caught_up_new_voter() -> Context {
    let mut ctx = leader();
    establish_high_watermark(&mut ctx, key(FOLLOWER));
    assert_eq!(fetch_at_log_end(&mut ctx, key(NEW_VOTER)), errors::NONE);
    ctx
}

fn add_new_voter(ctx: &mut Context) -> u64 {
    ctx.deliver_request(
        add_voter_request(Some(CLUSTER_ID), key(NEW_VOTER), &new_listeners()),
        0,
    )
}

#[test]
fn test_add_voter() {
    let mut ctx = leader_with_caught_up_new_voter();
    assert!(!ctx.core.voters().is_voter(&key(NEW_VOTER)));
    let add = add_new_voter(&mut ctx);
    assert!(!ctx.has_response(add), "answered only once committed");
    // ApiVersions goes to the new voter's controller listener.
    let api = take_api_versions(&mut ctx);
    assert_eq!(api.destination, NEW_VOTER);
    assert_eq!(api.endpoint.port, port_of(NEW_VOTER));
    ctx.deliver_response(api.correlation_id, api_versions_response(0, Some((0, 1))));
    // The VotersRecord counts as soon as it is appended.
    assert!(ctx.core.voters().is_voter(&key(NEW_VOTER)));
    assert_eq!(
        ctx.core
            .voters()
            .get(NEW_VOTER)
            .map(|n| (n.kraft_version_min, n.kraft_version_max)),
        Some((0, 1)),
        "the range comes from ApiVersions"
    );
    assert!(!ctx.has_response(add));
    // The follower's fetch commits it: {1, 2, 3} needs two, the leader and the follower.
    assert_eq!(fetch_at_log_end(&mut ctx, key(FOLLOWER)), errors::NONE);
    assert_eq!(add_voter_error(&ctx, add), errors::NONE);
    // RaftUtil.addVoterResponse: no message of its own is the error's, "NONE" for NONE.
    assert_eq!(voter_change_message(&ctx, add).as_deref(), Some("NONE"));
    let progress = ctx.core.voter_progress().unwrap();
    assert_eq!(progress.len(), 3, "the leader tracks the new voter");
}

/// Kafka 4.4's AddRaftVoter v1 with AckWhenCommitted false: answered NONE once the
/// VotersRecord is appended, before it commits, and only once; another change still waits for
/// the commit.
#[test]
fn test_add_voter_without_ack_when_committed() {
    let mut ctx = leader_with_caught_up_new_voter();
    let RequestBody::AddRaftVoter(mut req) =
        add_voter_request(Some(CLUSTER_ID), key(NEW_VOTER), &new_listeners())
    else {
        unreachable!()
    };
    req.ack_when_committed = false;
    let add = ctx.deliver_request(RequestBody::AddRaftVoter(req), 1);
    assert!(!ctx.has_response(add), "not before the ApiVersions answer");
    let api = take_api_versions(&mut ctx);
    ctx.deliver_response(api.correlation_id, api_versions_response(0, Some((0, 1))));
    assert!(ctx.core.voters().is_voter(&key(NEW_VOTER)));
    assert_eq!(
        add_voter_error(&ctx, add),
        errors::NONE,
        "answered when appended"
    );
    let again = ctx.deliver_request(
        add_voter_request(Some(CLUSTER_ID), key(4), &listeners(4, &[LISTENER])),
        1,
    );
    assert_eq!(
        add_voter_error(&ctx, again),
        errors::REQUEST_TIMED_OUT,
        "the uncommitted change still blocks the next"
    );
    assert_eq!(fetch_at_log_end(&mut ctx, key(FOLLOWER)), errors::NONE);
    assert_eq!(
        ctx.responses.iter().filter(|(id, _)| *id == add).count(),
        1,
        "the commit sends nothing more"
    );
}

#[test]
fn test_add_voter_invalid_cluster_id() {
    let mut ctx = leader();
    for cluster in ["", "invalid-uuid"] {
        let id = ctx.deliver_request(
            add_voter_request(Some(cluster), key(NEW_VOTER), &new_listeners()),
            0,
        );
        assert_eq!(add_voter_error(&ctx, id), errors::INCONSISTENT_CLUSTER_ID);
    }
    assert!(!ctx.core.voters().is_voter(&key(NEW_VOTER)));
}

#[test]
fn test_add_voter_to_not_leader() {
    let mut ctx = kraft1(LOCAL, &[LOCAL, FOLLOWER], &[LOCAL, FOLLOWER])
        .with_unknown_leader(3)
        .build();
    let id = add_new_voter(&mut ctx);
    assert_eq!(add_voter_error(&ctx, id), errors::NOT_LEADER_OR_FOLLOWER);
    // KafkaRaftClient answers this refusal itself, with the schema's default message "".
    assert_eq!(voter_change_message(&ctx, id).as_deref(), Some(""));
}

#[test]
fn test_add_voter_with_missing_default_listener() {
    let mut ctx = leader();
    let id = ctx.deliver_request(
        add_voter_request(
            Some(CLUSTER_ID),
            key(NEW_VOTER),
            &listeners(NEW_VOTER, &["NOT_THE_DEFAULT_LISTENER"]),
        ),
        0,
    );
    assert_eq!(add_voter_error(&ctx, id), errors::INVALID_REQUEST);
    let port = 8990 + NEW_VOTER as u16;
    assert_eq!(
        voter_change_message(&ctx, id),
        Some(format!(
            "Add voter request didn't include the endpoint (Endpoints(endpoints=\
             {{ListenerName(NOT_THE_DEFAULT_LISTENER)=127.0.0.1/<unresolved>:{port}}})) for the \
             default listener ListenerName({LISTENER})"
        ))
    );
}

/// Not a Kafka test: several listeners print in the order of Kafka's HashMap (checked with
/// jshell: `new HashMap<>(3)` filled ZULU, ALPHA, CONTROLLER2 prints ALPHA, ZULU,
/// CONTROLLER2), whatever order the request lists them in.
#[test]
fn test_add_voter_missing_default_listener_lists_endpoints_in_java_order() {
    let mut ctx = leader();
    let id = ctx.deliver_request(
        add_voter_request(
            Some(CLUSTER_ID),
            key(NEW_VOTER),
            &listeners(NEW_VOTER, &["zulu", "ALPHA", "CONTROLLER2"]),
        ),
        0,
    );
    assert_eq!(add_voter_error(&ctx, id), errors::INVALID_REQUEST);
    let message = voter_change_message(&ctx, id).unwrap_or_default();
    let port = 8990 + NEW_VOTER as u16;
    let shown = ["ALPHA", "ZULU", "CONTROLLER2"]
        .map(|n| format!("ListenerName({n})=127.0.0.1/<unresolved>:{port}"))
        .join(", ");
    assert!(
        message.contains(&format!("(Endpoints(endpoints={{{shown}}}))")),
        "{message}"
    );
}

#[test]
fn test_add_voter_with_pending_add_voter() {
    let mut ctx = leader_with_caught_up_new_voter();
    let first = add_new_voter(&mut ctx);
    let another = ctx.deliver_request(
        add_voter_request(Some(CLUSTER_ID), key(4), &listeners(4, &[LISTENER])),
        0,
    );
    assert_eq!(add_voter_error(&ctx, another), errors::REQUEST_TIMED_OUT);
    assert!(!ctx.has_response(first), "the first is still in progress");
}

#[test]
fn test_add_voter_without_fenced_previous_leaders() {
    let mut ctx = leader();
    // The new voter catches up, but no voter has fetched: no high watermark yet.
    assert_eq!(fetch_at_log_end(&mut ctx, key(NEW_VOTER)), errors::NONE);
    assert_eq!(ctx.core.high_watermark(), None);
    let id = add_new_voter(&mut ctx);
    assert_eq!(add_voter_error(&ctx, id), errors::REQUEST_TIMED_OUT);
}

#[test]
fn test_add_voter_with_kraft_version0() {
    let mut ctx = kraft0(LOCAL, &[LOCAL, FOLLOWER])
        .with_unknown_leader(3)
        .build();
    ctx.become_leader();
    establish_high_watermark(&mut ctx, key(FOLLOWER));
    assert_eq!(fetch_at_log_end(&mut ctx, key(NEW_VOTER)), errors::NONE);
    let id = add_new_voter(&mut ctx);
    assert_eq!(add_voter_error(&ctx, id), errors::UNSUPPORTED_VERSION);
}

#[test]
fn test_add_voter_with_existing_voter() {
    let mut ctx = leader();
    establish_high_watermark(&mut ctx, key(FOLLOWER));
    // Same id as the follower, another directory: still a duplicate id.
    assert_eq!(
        fetch_at_log_end(&mut ctx, other_key(FOLLOWER)),
        errors::NONE
    );
    let id = ctx.deliver_request(
        add_voter_request(
            Some(CLUSTER_ID),
            other_key(FOLLOWER),
            &listeners(FOLLOWER, &[LISTENER]),
        ),
        0,
    );
    assert_eq!(add_voter_error(&ctx, id), errors::DUPLICATE_VOTER);
    assert!(ctx
        .take_sent(kafka_protocol::messages::ApiKey::ApiVersions)
        .is_empty());
}

#[test]
fn test_add_voter_timeout() {
    let mut ctx = leader_with_caught_up_new_voter();
    let add = add_new_voter(&mut ctx);
    let api = take_api_versions(&mut ctx);
    ctx.deliver_response(api.correlation_id, api_versions_response(0, Some((0, 1))));
    // No fetch commits the record within the request timeout.
    ctx.advance(REQUEST_TIMEOUT_MS - 1);
    assert!(!ctx.has_response(add));
    ctx.advance(1);
    assert_eq!(add_voter_error(&ctx, add), errors::REQUEST_TIMED_OUT);
    assert_eq!(
        voter_change_message(&ctx, add).as_deref(),
        Some("The request timed out.")
    );
    // The uncommitted record still counts.
    assert!(ctx.core.voters().is_voter(&key(NEW_VOTER)));
}

#[test]
fn test_add_voter_with_api_versions_from_incorrect_node() {
    let mut ctx = leader_with_caught_up_new_voter();
    let add = add_new_voter(&mut ctx);
    let api = take_api_versions(&mut ctx);
    ctx.deliver_response(
        api.correlation_id,
        api_versions_response(errors::INVALID_REQUEST, Some((0, 1))),
    );
    assert_eq!(add_voter_error(&ctx, add), errors::REQUEST_TIMED_OUT);
    assert_eq!(
        voter_change_message(&ctx, add).as_deref(),
        Some(
            "Aborted add voter operation for since API_VERSIONS returned an error INVALID_REQUEST"
        )
    );
    assert!(!ctx.core.voters().is_voter(&key(NEW_VOTER)));
}

#[test]
fn test_add_voter_invalid_feature_version() {
    for range in [Some((0, 0)), None] {
        let mut ctx = leader_with_caught_up_new_voter();
        let add = add_new_voter(&mut ctx);
        let api = take_api_versions(&mut ctx);
        ctx.deliver_response(api.correlation_id, api_versions_response(0, range));
        assert_eq!(
            add_voter_error(&ctx, add),
            errors::INVALID_REQUEST,
            "{range:?}"
        );
        assert!(!ctx.core.voters().is_voter(&key(NEW_VOTER)));
    }
}

#[test]
fn test_add_voter_with_lagging_new_voter() {
    let mut ctx = leader();
    establish_high_watermark(&mut ctx, key(FOLLOWER));
    // The new voter never fetched.
    let add = add_new_voter(&mut ctx);
    let api = take_api_versions(&mut ctx);
    ctx.deliver_response(api.correlation_id, api_versions_response(0, Some((0, 1))));
    assert_eq!(add_voter_error(&ctx, add), errors::REQUEST_TIMED_OUT);
    assert!(!ctx.core.voters().is_voter(&key(NEW_VOTER)));
}

#[test]
fn test_add_voter_fails_when_losing_leadership() {
    let mut ctx = leader();
    establish_high_watermark(&mut ctx, key(FOLLOWER));
    let add = add_new_voter(&mut ctx);
    let _api = take_api_versions(&mut ctx);
    // Kafka's `resign(epoch)`: the leader steps down.
    ctx.core.begin_shutdown(ctx.now_ms, &ctx.log, 60_000);
    ctx.drain();
    assert_eq!(add_voter_error(&ctx, add), errors::NOT_LEADER_OR_FOLLOWER);
}

#[test]
fn test_add_voter_with_missing_directory_id() {
    let mut ctx = leader();
    establish_high_watermark(&mut ctx, key(FOLLOWER));
    let id = ctx.deliver_request(
        add_voter_request(
            Some(CLUSTER_ID),
            crate::raft::types::ReplicaKey::of_id(NEW_VOTER),
            &new_listeners(),
        ),
        0,
    );
    assert_eq!(add_voter_error(&ctx, id), errors::INVALID_REQUEST);
}

/// Not a Kafka test: the ApiVersions request itself timing out fails the operation.
#[test]
fn test_add_voter_api_versions_unanswered() {
    let mut ctx = leader_with_caught_up_new_voter();
    let add = add_new_voter(&mut ctx);
    let api = take_api_versions(&mut ctx);
    ctx.deliver_result(api.correlation_id, crate::raft::ResponseResult::Failed);
    assert_eq!(add_voter_error(&ctx, add), errors::REQUEST_TIMED_OUT);
    // A lost connection: Kafka's network channel answers BROKER_NOT_AVAILABLE.
    assert_eq!(
        voter_change_message(&ctx, add).as_deref(),
        Some("Aborted add voter operation for since API_VERSIONS returned an error BROKER_NOT_AVAILABLE")
    );
    // A late success answer for a finished operation changes nothing.
    ctx.deliver_response(api.correlation_id, api_versions_response(0, Some((0, 1))));
    assert!(!ctx.core.voters().is_voter(&key(NEW_VOTER)));
    assert!(matches!(ctx.response(add), ResponseBody::AddRaftVoter(_)));
}

/// Not a Kafka test: a new voter whose TLS handshake fails (its certificate refused, or
/// ours) fails the operation as Kafka's network channel words an AuthenticationException.
#[test]
fn test_add_voter_api_versions_tls_handshake_failed() {
    let mut ctx = leader_with_caught_up_new_voter();
    let add = add_new_voter(&mut ctx);
    let api = take_api_versions(&mut ctx);
    ctx.deliver_result(
        api.correlation_id,
        crate::raft::ResponseResult::AuthenticationFailed,
    );
    assert_eq!(add_voter_error(&ctx, add), errors::REQUEST_TIMED_OUT);
    assert_eq!(
        voter_change_message(&ctx, add).as_deref(),
        Some("Aborted add voter operation for since API_VERSIONS returned an error NETWORK_EXCEPTION")
    );
    assert!(!ctx.core.voters().is_voter(&key(NEW_VOTER)));
}
