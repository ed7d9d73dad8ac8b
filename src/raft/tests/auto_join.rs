//! Auto-join (`controller.quorum.auto.join.enable`), checked against Kafka 4.2.2's
//! `KafkaRaftClient` bytecode (the fetched source predates auto-join, so Kafka's own tests
//! could not be read; the test names are ours): an observer of a kraft.version 1 quorum asks the leader to
//! add it every update-voter period (the fetch timeout), first removing a voter that holds its
//! id under another directory id; answers that mean "done or not now" wait a period, others
//! the retry backoff. Also the follower's Fetch/FetchSnapshot MaxBytes (KIP-1219).

use kafka_protocol::messages::{AddRaftVoterResponse, ApiKey, RemoveRaftVoterResponse};

use super::context::*;
use super::reconfig_ctx::*;
use crate::codec::{RequestBody, ResponseBody};
use crate::raft::{errors, ResponseResult};

const EPOCH: i32 = 4;
const LEADER: i32 = 2;
const OBSERVER: i32 = 4;

/// Node `local` following `LEADER` in a kraft.version 1 quorum of 1, 2, 3, with auto-join
/// `on` or off.
fn observer_of(builder: Builder, on: bool) -> Context {
    let ctx = builder
        .with_elected_leader(EPOCH, LEADER)
        .with_config(move |c| c.auto_join = on)
        .build();
    ctx.assert_follower(EPOCH, LEADER);
    ctx
}

fn new_observer(on: bool) -> Context {
    observer_of(kraft1(OBSERVER, &[1, 2, 3], &[1, 2, 3]), on)
}

/// Node 1 restarted on a new directory: the voter set still names 1 with its old directory.
fn reformatted_voter() -> Context {
    let builder = kraft1(1, &[1, 2, 3], &[1, 2, 3])
        .with_config(|c| c.directory_id = other_key(1).directory_id);
    observer_of(builder, true)
}

/// Runs the observer for `ms`, answering every Fetch at once and advancing 1 s at a time;
/// returns the voter-change requests it sent, with the time each was seen.
fn run_for(ctx: &mut Context, ms: u64) -> Vec<(u64, Sent)> {
    let until = ctx.now_ms + ms;
    let mut changes = Vec::new();
    while ctx.now_ms < until {
        for api in [ApiKey::AddRaftVoter, ApiKey::RemoveRaftVoter] {
            for sent in ctx.take_sent(api) {
                changes.push((ctx.now_ms, sent));
            }
        }
        if !changes.is_empty() {
            return changes;
        }
        for f in ctx.take_sent(ApiKey::Fetch) {
            ctx.deliver_response(f.correlation_id, empty_fetch_response(EPOCH, LEADER, 0));
        }
        ctx.advance(1_000);
    }
    changes
}

/// The one voter-change request sent within one period (plus slack for the Fetch in flight).
fn one_change(ctx: &mut Context) -> Sent {
    let mut changes = run_for(ctx, FETCH_TIMEOUT_MS + 5_000);
    assert_eq!(changes.len(), 1, "one voter change: {changes:?}");
    changes.remove(0).1
}

fn add_answer(error: i16) -> ResponseBody {
    ResponseBody::AddRaftVoter(AddRaftVoterResponse::default().with_error_code(error))
}

fn remove_answer(error: i16) -> ResponseBody {
    ResponseBody::RemoveRaftVoter(RemoveRaftVoterResponse::default().with_error_code(error))
}

#[test]
fn test_auto_add_new_voter() {
    let mut ctx = new_observer(true);
    assert_eq!(ctx.core.state_name(), "observer");
    let start = ctx.now_ms;
    let add = one_change(&mut ctx);
    assert!(
        ctx.now_ms >= start + FETCH_TIMEOUT_MS,
        "not before one update-voter period"
    );
    assert_eq!(add.destination, LEADER);
    let RequestBody::AddRaftVoter(r) = &add.request else {
        panic!("not an AddRaftVoter: {add:?}")
    };
    assert_eq!(r.cluster_id.as_deref(), Some(CLUSTER_ID));
    assert_eq!(
        (r.voter_id, r.voter_directory_id),
        (OBSERVER, dir(OBSERVER))
    );
    assert_eq!(r.timeout_ms, REQUEST_TIMEOUT_MS as i32);
    assert!(
        !r.ack_when_committed,
        "Kafka's auto-join does not wait for the commit"
    );
    let names: Vec<String> = r.listeners.iter().map(|l| l.name.to_string()).collect();
    assert_eq!(names, vec![LISTENER.to_string()]);
    assert_eq!(r.listeners[0].port, port_of(OBSERVER));
    assert!(
        ctx.take_sent(ApiKey::Fetch).is_empty(),
        "one request in flight to the leader"
    );
    ctx.deliver_response(add.correlation_id, add_answer(errors::NONE));
    assert_eq!(ctx.take_sent(ApiKey::Fetch).len(), 1, "then Fetch again");
    // Still an observer until the VotersRecord arrives: the next try is a period later.
    let answered = ctx.now_ms;
    let again = run_for(&mut ctx, FETCH_TIMEOUT_MS + 5_000);
    assert_eq!(again.len(), 1);
    assert!(again[0].0 >= answered + FETCH_TIMEOUT_MS);
}

#[test]
fn test_auto_remove_old_voter() {
    let mut ctx = reformatted_voter();
    assert_eq!(ctx.core.state_name(), "observer");
    let remove = one_change(&mut ctx);
    let RequestBody::RemoveRaftVoter(r) = &remove.request else {
        panic!("not a RemoveRaftVoter: {remove:?}")
    };
    assert_eq!(remove.destination, LEADER);
    assert_eq!((r.voter_id, r.voter_directory_id), (1, dir(1)));
    assert_eq!(r.cluster_id.as_deref(), Some(CLUSTER_ID));
    ctx.deliver_response(
        remove.correlation_id,
        remove_answer(errors::VOTER_NOT_FOUND),
    );
    assert_eq!(ctx.take_sent(ApiKey::Fetch).len(), 1);
}

/// Answers the voter change `answer_after_ms` after it was sent; returns when it was sent, when
/// answered, and when the next voter change went out.
fn next_try_after(remove: bool, answer: ResponseBody, answer_after_ms: u64) -> (u64, u64, u64) {
    let mut ctx = if remove {
        reformatted_voter()
    } else {
        new_observer(true)
    };
    let sent_at = ctx.now_ms;
    let first = one_change(&mut ctx);
    let sent_at = sent_at.max(ctx.now_ms);
    ctx.advance(answer_after_ms);
    let answered = ctx.now_ms;
    ctx.deliver_response(first.correlation_id, answer);
    let next = run_for(&mut ctx, FETCH_TIMEOUT_MS + 5_000);
    assert_eq!(next.len(), 1, "one more try within a period");
    assert_eq!(next[0].1.request.api_key(), first.request.api_key());
    (sent_at, answered, next[0].0)
}

#[test]
fn test_done_or_not_now_answers_restart_the_period() {
    for (error, remove) in [
        (errors::NONE, false),
        (errors::REQUEST_TIMED_OUT, false),
        (errors::DUPLICATE_VOTER, false),
        (errors::NONE, true),
        (errors::REQUEST_TIMED_OUT, true),
        (errors::VOTER_NOT_FOUND, true),
    ] {
        let answer = if remove {
            remove_answer(error)
        } else {
            add_answer(error)
        };
        let (_, answered, next) = next_try_after(remove, answer, 3_000);
        assert!(next >= answered + FETCH_TIMEOUT_MS, "error {error}");
    }
}

#[test]
fn test_unexpected_errors_keep_the_period_from_the_send() {
    // handleUnexpectedError: the leader backs off, the period (restarted at the send) stands.
    for (error, remove) in [
        (errors::NOT_LEADER_OR_FOLLOWER, false),
        (errors::INVALID_REQUEST, false),
        (errors::DUPLICATE_VOTER, true),
    ] {
        let answer = if remove {
            remove_answer(error)
        } else {
            add_answer(error)
        };
        let (sent, answered, next) = next_try_after(remove, answer, 3_000);
        assert!(next >= sent + FETCH_TIMEOUT_MS, "error {error}");
        assert!(next < answered + FETCH_TIMEOUT_MS, "error {error}");
    }
}

#[test]
fn test_unexpected_error_backs_off_the_leader() {
    let mut ctx = new_observer(true);
    let first = one_change(&mut ctx);
    ctx.take_sent(ApiKey::Fetch);
    ctx.deliver_response(
        first.correlation_id,
        add_answer(errors::NOT_LEADER_OR_FOLLOWER),
    );
    assert!(
        ctx.take_sent(ApiKey::Fetch)
            .iter()
            .all(|f| f.destination != LEADER),
        "no Fetch to the leader during the backoff"
    );
    ctx.advance(RETRY_BACKOFF_MS);
    assert!(
        ctx.take_sent(ApiKey::AddRaftVoter).is_empty(),
        "not retried at once"
    );

    // No answer at all (connection failed), or a leader that only takes AddRaftVoter v0
    // (Kafka 4.1: AckWhenCommitted false cannot be carried): the same, every period.
    for result in [ResponseResult::Failed, ResponseResult::UnsupportedVersion] {
        let mut ctx = new_observer(true);
        let first = one_change(&mut ctx);
        let sent_at = ctx.now_ms;
        ctx.deliver_result(first.correlation_id, result.clone());
        ctx.advance(RETRY_BACKOFF_MS);
        assert!(
            ctx.take_sent(ApiKey::AddRaftVoter).is_empty(),
            "{result:?}: waits for the next period"
        );
        let next = run_for(&mut ctx, FETCH_TIMEOUT_MS + 5_000);
        assert_eq!(next.len(), 1, "{result:?}: tried again");
        assert!(
            next[0].0 >= sent_at + FETCH_TIMEOUT_MS - 1_000,
            "{result:?}"
        );
        assert!(ctx.core.fatal_error().is_none(), "{result:?}");
    }
}

#[test]
fn test_observer_does_not_auto_join_when_disabled() {
    let mut ctx = new_observer(false);
    assert!(run_for(&mut ctx, 3 * FETCH_TIMEOUT_MS).is_empty());
    let mut ctx = observer_of(
        kraft1(1, &[1, 2, 3], &[1, 2, 3])
            .with_config(|c| c.directory_id = other_key(1).directory_id),
        false,
    );
    assert!(run_for(&mut ctx, 3 * FETCH_TIMEOUT_MS).is_empty());
}

#[test]
fn test_observer_does_not_auto_join_with_kraft_version0() {
    let mut ctx = observer_of(kraft0(OBSERVER, &[1, 2, 3]), true);
    assert_eq!(ctx.core.state_name(), "observer");
    assert!(run_for(&mut ctx, 3 * FETCH_TIMEOUT_MS).is_empty());
}

#[test]
fn test_voters_do_not_auto_join() {
    let mut ctx = observer_of(kraft1(1, &[1, 2, 3], &[1, 2, 3]), true);
    assert_eq!(ctx.core.state_name(), "follower");
    let mut sent = Vec::new();
    let until = ctx.now_ms + 3 * FETCH_TIMEOUT_MS;
    while ctx.now_ms < until {
        sent.extend(ctx.take_sent(ApiKey::AddRaftVoter));
        sent.extend(ctx.take_sent(ApiKey::RemoveRaftVoter));
        sent.extend(ctx.take_sent(ApiKey::UpdateRaftVoter));
        for f in ctx.take_sent(ApiKey::Fetch) {
            ctx.deliver_response(f.correlation_id, empty_fetch_response(EPOCH, LEADER, 0));
        }
        ctx.advance(1_000);
    }
    assert!(
        sent.iter()
            .all(|s| s.request.api_key() == ApiKey::UpdateRaftVoter),
        "{sent:?}"
    );
}

// ---- KIP-1219 ---------------------------------------------------------------------------

#[test]
fn fetch_carries_the_configured_max_bytes() {
    let ctx = Builder::new(OBSERVER, &[1, 2, 3])
        .with_elected_leader(EPOCH, LEADER)
        .with_config(|c| c.fetch_max_bytes = 12_345)
        .build();
    let mut ctx = ctx;
    let fetches = ctx.take_sent(ApiKey::Fetch);
    assert_eq!(fetches.len(), 1);
    let RequestBody::Fetch(f) = &fetches[0].request else {
        panic!("not a Fetch")
    };
    assert_eq!(f.max_bytes, 12_345);
}
