//! UpdateRaftVoter (KIP-853), mirroring `KafkaRaftClientReconfigTest`'s testUpdateVoter*,
//! testLeaderUpdatesVoter and testFollowerSendsUpdateVoter* cases.

use kafka_protocol::messages::update_raft_voter_response::CurrentLeader;
use kafka_protocol::messages::{ApiKey, BrokerId, UpdateRaftVoterResponse};
use kafka_protocol::protocol::StrBytes;

use super::context::*;
use super::reconfig_ctx::*;
use crate::codec::{RequestBody, ResponseBody};
use crate::raft::errors;
use crate::raft::types::ReplicaKey;
use crate::raft::{LogReader, ResponseResult};

const LOCAL: i32 = 1;
const FOLLOWER: i32 = 2;

fn leader_address() -> String {
    format!("127.0.0.1:{}", port_of(LOCAL))
}

fn update(ctx: &mut Context, voter: ReplicaKey, epoch: i32, names: &[&str]) -> u64 {
    ctx.deliver_request(
        update_voter_request(
            Some(CLUSTER_ID),
            voter,
            epoch,
            (0, 1),
            &listeners(voter.id, names),
        ),
        0,
    )
}

fn both_listeners() -> [&'static str; 2] {
    [LISTENER, ANOTHER_LISTENER]
}

#[test]
fn test_update_voter() {
    let mut ctx = kraft1_leader(&[LOCAL, FOLLOWER]);
    let epoch = ctx.epoch();
    establish_high_watermark(&mut ctx, key(FOLLOWER));
    let end_before = ctx.log.end_offset().offset;
    let id = update(&mut ctx, key(FOLLOWER), epoch, &both_listeners());
    // Answered right after the append, before any commit (KAFKA-16534).
    assert_eq!(
        update_voter_answer(&ctx, id),
        (errors::NONE, LOCAL, epoch, leader_address())
    );
    assert_eq!(
        ctx.log.end_offset().offset,
        end_before + 1,
        "one VotersRecord"
    );
    assert!(ctx.core.voters().is_voter(&key(FOLLOWER)));
    let node = ctx.core.voters().get(FOLLOWER).unwrap();
    assert!(node.endpoints.contains_key(ANOTHER_LISTENER));
}

#[test]
fn test_leader_updates_voter() {
    let mut ctx = with_another_listener(kraft1(LOCAL, &[1, 2], &[1, 2]), LOCAL)
        .with_unknown_leader(3)
        .build();
    ctx.become_leader();
    establish_high_watermark(&mut ctx, key(FOLLOWER));
    // The epoch start batch carried our new listener; it is committed now.
    let me = ctx.core.voters().get(LOCAL).unwrap();
    assert!(me.endpoints.contains_key(ANOTHER_LISTENER));
    assert_eq!((me.kraft_version_min, me.kraft_version_max), (0, 1));
    assert_eq!(ctx.core.high_watermark(), Some(ctx.log.end_offset().offset));
}

#[test]
fn test_update_voter_invalid_cluster_id() {
    let mut ctx = kraft1_leader(&[LOCAL, FOLLOWER]);
    let epoch = ctx.epoch();
    for cluster in ["", "invalid-uuid"] {
        let id = ctx.deliver_request(
            update_voter_request(Some(cluster), key(FOLLOWER), epoch, (0, 1), &[]),
            0,
        );
        assert_eq!(
            update_voter_answer(&ctx, id),
            (
                errors::INCONSISTENT_CLUSTER_ID,
                LOCAL,
                epoch,
                leader_address()
            )
        );
    }
}

#[test]
fn test_invalid_update_voter() {
    let mut ctx = kraft1_leader(&[LOCAL, FOLLOWER]);
    let epoch = ctx.epoch();
    // Missing directory id.
    let id = update(
        &mut ctx,
        ReplicaKey::of_id(FOLLOWER),
        epoch,
        &both_listeners(),
    );
    assert_eq!(update_voter_answer(&ctx, id).0, errors::INVALID_REQUEST);
    // Missing endpoints.
    let id = update(&mut ctx, key(FOLLOWER), epoch, &[]);
    assert_eq!(
        update_voter_answer(&ctx, id),
        (errors::INVALID_REQUEST, LOCAL, epoch, leader_address())
    );
    // A kraft.version range that is no range.
    for range in [(1, 0), (-1, 1)] {
        let id = ctx.deliver_request(
            update_voter_request(
                Some(CLUSTER_ID),
                key(FOLLOWER),
                epoch,
                range,
                &listeners(FOLLOWER, &both_listeners()),
            ),
            0,
        );
        assert_eq!(update_voter_answer(&ctx, id).0, errors::INVALID_REQUEST);
    }
}

#[test]
fn test_update_voter_old_epoch() {
    let mut ctx = kraft1_leader(&[LOCAL, FOLLOWER]);
    let epoch = ctx.epoch();
    let id = update(&mut ctx, key(FOLLOWER), epoch - 1, &[]);
    assert_eq!(
        update_voter_answer(&ctx, id),
        (errors::FENCED_LEADER_EPOCH, LOCAL, epoch, leader_address())
    );
}

#[test]
fn test_update_voter_new_epoch() {
    let mut ctx = kraft1_leader(&[LOCAL, FOLLOWER]);
    let epoch = ctx.epoch();
    let id = update(&mut ctx, key(FOLLOWER), epoch + 1, &[]);
    assert_eq!(
        update_voter_answer(&ctx, id),
        (errors::UNKNOWN_LEADER_EPOCH, LOCAL, epoch, leader_address())
    );
}

#[test]
fn test_update_voter_to_not_leader() {
    let mut ctx = kraft1(LOCAL, &[1, 2], &[1, 2])
        .with_unknown_leader(3)
        .build();
    let id = update(&mut ctx, key(FOLLOWER), 3, &[]);
    assert_eq!(
        update_voter_answer(&ctx, id),
        (errors::NOT_LEADER_OR_FOLLOWER, -1, 3, ":0".to_string())
    );
}

#[test]
fn test_update_voter_without_fenced_previous_leaders() {
    let mut ctx = kraft1_leader(&[LOCAL, FOLLOWER]);
    let epoch = ctx.epoch();
    let id = update(&mut ctx, key(FOLLOWER), epoch, &both_listeners());
    assert_eq!(
        update_voter_answer(&ctx, id),
        (errors::REQUEST_TIMED_OUT, LOCAL, epoch, leader_address())
    );
}

#[test]
fn test_update_voter_with_kraft_version0() {
    let mut ctx = kraft0(LOCAL, &[LOCAL, FOLLOWER])
        .with_unknown_leader(3)
        .build();
    ctx.become_leader();
    let epoch = ctx.epoch();
    establish_high_watermark(&mut ctx, key(FOLLOWER));
    let end_before = ctx.log.end_offset().offset;
    let id = update(&mut ctx, key(FOLLOWER), epoch, &both_listeners());
    assert_eq!(
        update_voter_answer(&ctx, id),
        (errors::NONE, LOCAL, epoch, leader_address())
    );
    // Kept in memory: kraft.version 0 has no VotersRecord.
    assert_eq!(ctx.log.end_offset().offset, end_before);
    assert_eq!(ctx.core.kraft_version(), 0);
}

#[test]
fn test_update_voter_with_none_voter() {
    let mut ctx = kraft1_leader(&[LOCAL, FOLLOWER]);
    let epoch = ctx.epoch();
    establish_high_watermark(&mut ctx, key(FOLLOWER));
    let id = update(&mut ctx, other_key(FOLLOWER), epoch, &both_listeners());
    assert_eq!(update_voter_answer(&ctx, id).0, errors::VOTER_NOT_FOUND);
}

#[test]
fn test_update_voter_with_none_voter_id() {
    let mut ctx = kraft1_leader(&[LOCAL, FOLLOWER]);
    let epoch = ctx.epoch();
    establish_high_watermark(&mut ctx, key(FOLLOWER));
    let id = update(
        &mut ctx,
        ReplicaKey::new(FOLLOWER + 1, dir(FOLLOWER)),
        epoch,
        &both_listeners(),
    );
    assert_eq!(update_voter_answer(&ctx, id).0, errors::VOTER_NOT_FOUND);
}

#[test]
fn test_update_voter_with_pending_add_voter() {
    let mut ctx = kraft1_leader(&[LOCAL, FOLLOWER]);
    let epoch = ctx.epoch();
    establish_high_watermark(&mut ctx, key(FOLLOWER));
    assert_eq!(fetch_at_log_end(&mut ctx, key(3)), errors::NONE);
    let _add = ctx.deliver_request(
        add_voter_request(Some(CLUSTER_ID), key(3), &listeners(3, &[LISTENER])),
        0,
    );
    let id = update(&mut ctx, key(FOLLOWER), epoch, &both_listeners());
    assert_eq!(update_voter_answer(&ctx, id).0, errors::REQUEST_TIMED_OUT);
}

/// Not a Kafka test: a range without the finalized kraft.version is INVALID_REQUEST.
#[test]
fn test_update_voter_with_range_excluding_finalized_version() {
    let mut ctx = kraft1_leader(&[LOCAL, FOLLOWER]);
    let epoch = ctx.epoch();
    establish_high_watermark(&mut ctx, key(FOLLOWER));
    let id = ctx.deliver_request(
        update_voter_request(
            Some(CLUSTER_ID),
            key(FOLLOWER),
            epoch,
            (0, 0),
            &listeners(FOLLOWER, &both_listeners()),
        ),
        0,
    );
    assert_eq!(update_voter_answer(&ctx, id).0, errors::INVALID_REQUEST);
}

// ---- follower side --------------------------------------------------------------------

const EPOCH: i32 = 4;
const LEADER: i32 = 2;

fn follower(builder: Builder, another_listener: bool) -> Context {
    let builder = builder.with_elected_leader(EPOCH, LEADER);
    let builder = if another_listener {
        with_another_listener(builder, LOCAL)
    } else {
        builder
    };
    let ctx = builder.build();
    ctx.assert_follower(EPOCH, LEADER);
    ctx
}

/// Answers every Fetch to the leader of `epoch` until `until_ms`, advancing 1 s at a time.
/// Panics if anything but Fetch is sent.
fn keep_fetching_until(ctx: &mut Context, epoch: i32, until_ms: u64) {
    while ctx.now_ms < until_ms {
        let fetches = ctx.take_sent(ApiKey::Fetch);
        assert!(ctx.sent.is_empty(), "only Fetch expected: {:?}", ctx.sent);
        // (After an error answer the leader backs off and a Fetch may go to another voter
        // to rediscover the leader, as Kafka's `maybeSendFetchToBestNode` does.)
        for f in fetches {
            ctx.deliver_response(f.correlation_id, empty_fetch_response(epoch, LEADER, 0));
        }
        ctx.advance(1_000);
    }
}

fn update_voter_answer_body(error: i16, leader: i32, epoch: i32) -> ResponseBody {
    ResponseBody::UpdateRaftVoter(
        UpdateRaftVoterResponse::default()
            .with_error_code(error)
            .with_current_leader(
                CurrentLeader::default()
                    .with_leader_id(BrokerId(leader))
                    .with_leader_epoch(epoch)
                    .with_host(StrBytes::from_static_str("127.0.0.1"))
                    .with_port(i32::from(port_of(leader))),
            ),
    )
}

/// Runs the follower past one update-voter period; returns the UpdateRaftVoter sent, if any.
fn run_one_period(ctx: &mut Context) -> Option<Sent> {
    run_one_period_in(ctx, EPOCH)
}

fn run_one_period_in(ctx: &mut Context, epoch: i32) -> Option<Sent> {
    let start = ctx.now_ms;
    keep_fetching_until(ctx, epoch, start + FETCH_TIMEOUT_MS - 1_000);
    // One more round: the period ends while a Fetch is in flight.
    for _ in 0..3 {
        let mut updates = ctx.take_sent(ApiKey::UpdateRaftVoter);
        if let Some(update) = updates.pop() {
            return Some(update);
        }
        for f in ctx.take_sent(ApiKey::Fetch) {
            ctx.deliver_response(f.correlation_id, empty_fetch_response(epoch, LEADER, 0));
        }
        ctx.advance(1_000);
    }
    None
}

fn assert_update_voter_request(sent: &Sent, epoch: i32) {
    let RequestBody::UpdateRaftVoter(r) = &sent.request else {
        panic!("not an UpdateRaftVoter: {sent:?}")
    };
    assert_eq!(sent.destination, LEADER);
    assert_eq!(r.current_leader_epoch, epoch);
    assert_eq!((r.voter_id, r.voter_directory_id), (LOCAL, dir(LOCAL)));
    assert_eq!(r.cluster_id.as_deref(), Some(CLUSTER_ID));
    let mut names: Vec<String> = r.listeners.iter().map(|l| l.name.to_string()).collect();
    names.sort();
    assert_eq!(
        names,
        vec![ANOTHER_LISTENER.to_string(), LISTENER.to_string()]
    );
    assert_eq!(
        (
            r.k_raft_version_feature.min_supported_version,
            r.k_raft_version_feature.max_supported_version
        ),
        (0, 1)
    );
}

#[test]
fn test_follower_sends_update_voter() {
    let mut ctx = follower(kraft1(LOCAL, &[1, 2, 3], &[1, 2, 3]), true);
    let update = run_one_period(&mut ctx).expect("UpdateRaftVoter within one period");
    assert_update_voter_request(&update, EPOCH);
    assert!(
        ctx.take_sent(ApiKey::Fetch).is_empty(),
        "one request in flight"
    );
    ctx.deliver_response(
        update.correlation_id,
        update_voter_answer_body(0, LEADER, EPOCH),
    );
    let fetches = ctx.take_sent(ApiKey::Fetch);
    assert_eq!(fetches.len(), 1, "the next request is a Fetch");
    assert_eq!(fetches[0].destination, LEADER);
}

#[test]
fn test_follower_sends_update_voter_with_kraft_version0() {
    for answer in [errors::NONE, errors::UNSUPPORTED_VERSION] {
        let mut ctx = follower(kraft0(LOCAL, &[1, 2, 3]), true);
        let update = run_one_period(&mut ctx).expect("UpdateRaftVoter within one period");
        assert_update_voter_request(&update, EPOCH);
        ctx.deliver_response(
            update.correlation_id,
            update_voter_answer_body(answer, LEADER, EPOCH),
        );
        // Once per leader: then only Fetch.
        for _ in 0..3 {
            assert!(run_one_period(&mut ctx).is_none(), "answer {answer}");
        }
        ctx.assert_follower(EPOCH, LEADER);
    }
}

#[test]
fn test_follower_sends_update_voter_after_election_with_kraft_version0() {
    for answer in [errors::NONE, errors::UNSUPPORTED_VERSION] {
        let mut ctx = follower(kraft0(LOCAL, &[1, 2, 3]), true);
        let update = run_one_period(&mut ctx).expect("UpdateRaftVoter to the first leader");
        ctx.deliver_response(
            update.correlation_id,
            update_voter_answer_body(answer, LEADER, EPOCH),
        );
        assert_eq!(ctx.take_sent(ApiKey::Fetch).len(), 1);
        // A new epoch (same leader): the new leader state has no in-memory endpoints of ours.
        let id = ctx.deliver_request(begin_epoch_request_body(EPOCH + 1, LEADER), 1);
        assert!(ctx.has_response(id));
        ctx.assert_follower(EPOCH + 1, LEADER);
        let update = run_one_period_in(&mut ctx, EPOCH + 1).expect("sent again");
        assert_update_voter_request(&update, EPOCH + 1);
        ctx.deliver_response(
            update.correlation_id,
            update_voter_answer_body(errors::NONE, LEADER, EPOCH + 1),
        );
        let fetches = ctx.take_sent(ApiKey::Fetch);
        assert_eq!(fetches.len(), 1, "answer {answer}");
        assert!(run_one_period_in(&mut ctx, EPOCH + 1).is_none());
    }
}

#[test]
fn test_observer_discovers_leader_with_unknown_voters() {
    // kraft.version 1 and no voters known: discovery goes to the bootstrap servers.
    let mut ctx = Builder::new(LOCAL, &[])
        .with_config(|c| {
            c.directory_id = dir(LOCAL);
            c.snapshot_voters = Some((None, 1));
            c.bootstrap_servers = vec![crate::raft::types::Endpoint {
                host: "localhost".into(),
                port: 1234,
            }];
        })
        .with_unknown_leader(3)
        .build();
    ctx.poll();
    let fetches = ctx.take_sent(ApiKey::Fetch);
    assert_eq!(fetches.len(), 1, "{:?}", ctx.events);
    assert_eq!(fetches[0].destination, -2);
    let RequestBody::Fetch(f) = &fetches[0].request else {
        unreachable!()
    };
    assert_eq!(f.topics[0].partitions[0].current_leader_epoch, 3);
    assert_eq!(f.topics[0].partitions[0].fetch_offset, 0);
}

#[test]
fn test_follower_sends_update_voter_when_different() {
    // Our listeners match the voter set: nothing to send.
    let mut ctx = follower(kraft1(LOCAL, &[1, 2, 3], &[1, 2, 3]), false);
    for _ in 0..3 {
        assert!(run_one_period(&mut ctx).is_none());
    }
    // And the expired period does not make the core spin.
    assert!(ctx.core.poll_timeout().is_some_and(|t| t > ctx.now_ms));
}

#[test]
fn test_follower_sends_update_voter_if_pending_fetch_during_timeout() {
    let mut ctx = follower(kraft1(LOCAL, &[1, 2, 3], &[1, 2, 3]), true);
    let start = ctx.now_ms;
    keep_fetching_until(&mut ctx, EPOCH, start + FETCH_TIMEOUT_MS);
    // The period is over while a Fetch is in flight: nothing else goes out...
    let fetch = ctx.take_sent(ApiKey::Fetch);
    assert_eq!(fetch.len(), 1);
    ctx.advance(REQUEST_TIMEOUT_MS / 2);
    assert!(ctx.sent.is_empty(), "{:?}", ctx.sent);
    // ...until it is answered.
    ctx.deliver_response(
        fetch[0].correlation_id,
        empty_fetch_response(EPOCH, LEADER, 0),
    );
    let updates = ctx.take_sent(ApiKey::UpdateRaftVoter);
    assert_eq!(updates.len(), 1);
    assert_update_voter_request(&updates[0], EPOCH);
}

#[test]
fn test_update_voter_response_causes_epoch_change() {
    let mut ctx = follower(kraft1(LOCAL, &[1, 2, 3], &[1, 2, 3]), true);
    let update = run_one_period(&mut ctx).expect("UpdateRaftVoter within one period");
    ctx.deliver_response(
        update.correlation_id,
        update_voter_answer_body(0, 3, EPOCH + 1),
    );
    ctx.assert_follower(EPOCH + 1, 3);
    let fetches = ctx.take_sent(ApiKey::Fetch);
    assert_eq!(fetches.len(), 1);
    assert_eq!(fetches[0].destination, 3);
    let RequestBody::Fetch(f) = &fetches[0].request else {
        unreachable!()
    };
    assert_eq!(f.topics[0].partitions[0].current_leader_epoch, EPOCH + 1);
}

/// Not a Kafka test: an error answer is retried one period later.
#[test]
fn test_follower_retries_update_voter_after_error() {
    let mut ctx = follower(kraft1(LOCAL, &[1, 2, 3], &[1, 2, 3]), true);
    let update = run_one_period(&mut ctx).expect("first UpdateRaftVoter");
    ctx.deliver_response(
        update.correlation_id,
        update_voter_answer_body(errors::REQUEST_TIMED_OUT, LEADER, EPOCH),
    );
    let again = run_one_period(&mut ctx).expect("retried a period later");
    assert_update_voter_request(&again, EPOCH);
    // A leader that cannot take the API at all: also retried, the follower stays put.
    ctx.deliver_result(again.correlation_id, ResponseResult::UnsupportedVersion);
    ctx.assert_follower(EPOCH, LEADER);
    assert!(run_one_period(&mut ctx).is_some());
    assert_eq!(ctx.log.end_offset().offset, 0);
}
