//! Observer (and follower) retry and leader rediscovery: Kafka's `KafkaRaftClientTest`
//! scenarios around `controller.quorum.bootstrap.servers`, each run at every RPC version set
//! (Kafka runs them `withKip853Rpc` true and false). The observer is node 4; the voters are 5
//! (the leader once discovered) and 6; the bootstrap servers are their addresses, ids -2 and -3.

use bytes::Bytes;
use kafka_protocol::messages::ApiKey;

use super::context::*;
use crate::codec::{RequestBody, ResponseBody};
use crate::raft::errors;
use crate::raft::LogReader;
use crate::records::batch::build_data_batch;

const OBSERVER: i32 = 4;
const LEADER: i32 = 5;
const OTHER: i32 = 6;
const EPOCH: i32 = 5;
const BOOTSTRAP_IDS: [i32; 2] = [-2, -3];

fn observer(rpc: Rpc, voters: &[i32]) -> Context {
    Builder::new(OBSERVER, voters)
        .with_bootstrap_servers(voters)
        .with_rpc(rpc)
        .build()
}

/// A Fetch answer carrying a partition error and the responder's view of the leader.
fn fetch_error(epoch: i32, leader: i32, error: i16) -> ResponseBody {
    let mut resp = follower_fetch_response(leader, epoch, -1, Bytes::new());
    if let ResponseBody::Fetch(f) = &mut resp {
        f.responses[0].partitions[0].error_code = error;
    }
    resp
}

/// The one Fetch sent since the last look, checked as Kafka's `assertFetchRequestData`.
fn sent_fetch(ctx: &mut Context, epoch: i32, fetch_offset: i64, last_fetched_epoch: i32) -> Sent {
    let mut fetches = ctx.take_sent(ApiKey::Fetch);
    assert_eq!(fetches.len(), 1, "one Fetch: {fetches:?}");
    let sent = fetches.remove(0);
    let RequestBody::Fetch(f) = &sent.request else {
        unreachable!()
    };
    let p = &f.topics[0].partitions[0];
    assert_eq!(
        (p.current_leader_epoch, p.fetch_offset, p.last_fetched_epoch),
        (epoch, fetch_offset, last_fetched_epoch),
        "Fetch to {}",
        sent.destination
    );
    sent
}

fn assert_to_bootstrap_server(sent: &Sent) {
    assert!(
        BOOTSTRAP_IDS.contains(&sent.destination),
        "a bootstrap server, not a voter id: {}",
        sent.destination
    );
}

/// Kafka's `RaftClientTestContext.discoverLeaderAsObserver`: the first Fetch goes to a
/// bootstrap server, whose FENCED_LEADER_EPOCH answer names the leader.
fn discover_leader_as_observer(ctx: &mut Context, leader: i32, epoch: i32) {
    ctx.poll();
    let discovery = sent_fetch(ctx, 0, 0, 0);
    assert_to_bootstrap_server(&discovery);
    ctx.deliver_response(
        discovery.correlation_id,
        fetch_error(epoch, leader, errors::FENCED_LEADER_EPOCH),
    );
    ctx.assert_follower(epoch, leader);
}

/// Mirrors `testObserverQuorumDiscoveryFailure`.
#[test]
fn test_observer_quorum_discovery_failure() {
    for rpc in Rpc::ALL {
        let mut ctx = observer(rpc, &[LEADER]);
        ctx.poll();
        let first = sent_fetch(&mut ctx, 0, 0, 0);
        assert_eq!(first.destination, -2);
        ctx.deliver_response(
            first.correlation_id,
            fetch_error(-1, -1, errors::UNKNOWN_SERVER_ERROR),
        );
        ctx.advance(RETRY_BACKOFF_MS);
        let retry = sent_fetch(&mut ctx, 0, 0, 0);
        assert_eq!(
            retry.destination, -2,
            "{rpc:?}: retried at the bootstrap server"
        );
        ctx.deliver_response(
            retry.correlation_id,
            fetch_error(EPOCH, LEADER, errors::FENCED_LEADER_EPOCH),
        );
        ctx.assert_follower(EPOCH, LEADER);
    }
}

/// Mirrors `testObserverSendDiscoveryFetchAfterFetchTimeout`.
#[test]
fn test_observer_send_discovery_fetch_after_fetch_timeout() {
    for rpc in Rpc::ALL {
        let mut ctx = observer(rpc, &[LEADER, OTHER]);
        discover_leader_as_observer(&mut ctx, LEADER, EPOCH);
        ctx.poll();
        let to_leader = sent_fetch(&mut ctx, EPOCH, 0, 0);
        assert_eq!(to_leader.destination, LEADER, "{rpc:?}");
        // The leader never answers; once the fetch timeout has passed the observer looks for
        // the leader through the bootstrap servers.
        ctx.advance(FETCH_TIMEOUT_MS);
        let discovery = sent_fetch(&mut ctx, EPOCH, 0, 0);
        assert_ne!(discovery.destination, LEADER, "{rpc:?}");
        assert_to_bootstrap_server(&discovery);
    }
}

/// The observer has discovered the leader, fetched from it, and that Fetch timed out: the
/// retry goes to a bootstrap server. Returns (the timed-out Fetch, the retry).
fn leader_fetch_times_out(ctx: &mut Context) -> (Sent, Sent) {
    discover_leader_as_observer(ctx, LEADER, EPOCH);
    ctx.poll();
    let to_leader = sent_fetch(ctx, EPOCH, 0, 0);
    assert_eq!(to_leader.destination, LEADER);
    ctx.advance(REQUEST_TIMEOUT_MS);
    let retry = sent_fetch(ctx, EPOCH, 0, 0);
    assert_to_bootstrap_server(&retry);
    (to_leader, retry)
}

/// Mirrors `testObserverHandleRetryFetchtToBootstrapServer` (sic): the leader's late answer
/// to the timed-out Fetch and the bootstrap server's answer to the retry carry the same
/// records; they are appended once and nothing fails.
#[test]
fn test_observer_handle_retry_fetch_to_bootstrap_server() {
    for rpc in Rpc::ALL {
        let mut ctx = observer(rpc, &[LEADER, OTHER]);
        let (to_leader, retry) = leader_fetch_times_out(&mut ctx);
        let records = Bytes::from(build_data_batch(0, 3, START_MS as i64, &[b"a", b"b"]).unwrap());
        ctx.deliver_response(
            to_leader.correlation_id,
            follower_fetch_response(LEADER, EPOCH, 0, records.clone()),
        );
        ctx.deliver_response(
            retry.correlation_id,
            follower_fetch_response(LEADER, EPOCH, 0, records),
        );
        assert!(ctx.core.fatal_error().is_none(), "{rpc:?}");
        ctx.assert_follower(EPOCH, LEADER);
        assert_eq!(ctx.log.end_offset().offset, 2, "{rpc:?}: appended once");
        assert_eq!(ctx.log.batches().len(), 1, "{rpc:?}");
    }
}

/// Mirrors `testObserverHandleRetryFetchToLeader`: while the retry to a bootstrap server is
/// out, no Fetch goes to the leader, not even once the leader's backoff has passed.
#[test]
fn test_observer_handle_retry_fetch_to_leader() {
    for rpc in Rpc::ALL {
        let mut ctx = observer(rpc, &[LEADER, OTHER]);
        leader_fetch_times_out(&mut ctx);
        ctx.poll();
        assert!(ctx.take_sent(ApiKey::Fetch).is_empty(), "{rpc:?}");
        ctx.advance(RETRY_BACKOFF_MS);
        assert!(
            ctx.take_sent(ApiKey::Fetch).is_empty(),
            "{rpc:?}: one Fetch in flight at a time"
        );
    }
}

/// Mirrors `testObserverLeaderRediscoveryAfterBrokerNotAvailableError`.
#[test]
fn test_observer_leader_rediscovery_after_broker_not_available_error() {
    for rpc in Rpc::ALL {
        let mut ctx = observer(rpc, &[LEADER, OTHER]);
        discover_leader_as_observer(&mut ctx, LEADER, EPOCH);
        ctx.poll();
        let to_leader = sent_fetch(&mut ctx, EPOCH, 0, 0);
        assert_eq!(to_leader.destination, LEADER);
        ctx.deliver_response(
            to_leader.correlation_id,
            fetch_error(EPOCH, -1, errors::BROKER_NOT_AVAILABLE),
        );
        ctx.poll();
        // The leader's connection backs off, so the Fetch goes through a bootstrap server.
        let retry = sent_fetch(&mut ctx, EPOCH, 0, 0);
        assert_to_bootstrap_server(&retry);
        ctx.deliver_response(
            retry.correlation_id,
            fetch_error(EPOCH, LEADER, errors::NOT_LEADER_OR_FOLLOWER),
        );
        ctx.assert_follower(EPOCH, LEADER);
    }
}

/// Mirrors `testObserverLeaderRediscoveryAfterRequestTimeout`.
#[test]
fn test_observer_leader_rediscovery_after_request_timeout() {
    for rpc in Rpc::ALL {
        let mut ctx = observer(rpc, &[LEADER, OTHER]);
        let (_, retry) = leader_fetch_times_out(&mut ctx);
        ctx.deliver_response(
            retry.correlation_id,
            fetch_error(EPOCH, LEADER, errors::FENCED_LEADER_EPOCH),
        );
        ctx.assert_follower(EPOCH, LEADER);
    }
}

/// Mirrors `testFollowerLeaderRediscoveryAfterBrokerNotAvailableError` (Kafka 4.0+,
/// KAFKA-17030): a voter following a leader it cannot reach fetches a bootstrap server.
#[test]
fn test_follower_leader_rediscovery_after_broker_not_available_error() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_elected_leader(EPOCH, 2)
            .with_bootstrap_servers(&[2, 3])
            .with_rpc(rpc)
            .build();
        ctx.poll();
        let to_leader = sent_fetch(&mut ctx, EPOCH, 0, 0);
        assert_eq!(to_leader.destination, 2);
        ctx.deliver_response(
            to_leader.correlation_id,
            fetch_error(EPOCH, -1, errors::BROKER_NOT_AVAILABLE),
        );
        ctx.poll();
        let retry = sent_fetch(&mut ctx, EPOCH, 0, 0);
        assert!(BOOTSTRAP_IDS.contains(&retry.destination), "{rpc:?}");
        ctx.deliver_response(
            retry.correlation_id,
            fetch_error(EPOCH, 2, errors::NOT_LEADER_OR_FOLLOWER),
        );
        ctx.assert_follower(EPOCH, 2);
    }
}

/// Mirrors `testFollowerLeaderRediscoveryAfterRequestTimeout` (Kafka 4.0+, KAFKA-17030).
/// Not in Kafka: without bootstrap servers the retry goes to another voter, never back to the
/// leader whose connection is backing off.
#[test]
fn test_follower_leader_rediscovery_after_request_timeout() {
    for (rpc, bootstrap) in Rpc::ALL.into_iter().flat_map(|r| [(r, true), (r, false)]) {
        let mut builder = Builder::new(1, &[1, 2, 3])
            .with_elected_leader(EPOCH, 2)
            .with_rpc(rpc);
        if bootstrap {
            builder = builder.with_bootstrap_servers(&[2, 3]);
        }
        let mut ctx = builder.build();
        ctx.poll();
        let to_leader = sent_fetch(&mut ctx, EPOCH, 0, 0);
        assert_eq!(to_leader.destination, 2);
        ctx.advance(REQUEST_TIMEOUT_MS);
        let retry = sent_fetch(&mut ctx, EPOCH, 0, 0);
        if bootstrap {
            assert!(BOOTSTRAP_IDS.contains(&retry.destination), "{rpc:?}");
        } else {
            assert_eq!(retry.destination, 3, "{rpc:?}: the other voter");
        }
        ctx.deliver_response(
            retry.correlation_id,
            fetch_error(EPOCH, 2, errors::FENCED_LEADER_EPOCH),
        );
        ctx.assert_follower(EPOCH, 2);
        assert!(ctx.core.fatal_error().is_none());
    }
}

/// Mirrors `testObserverGracefulShutdown`: an observer that knows no leader shuts down at
/// once.
#[test]
fn test_observer_graceful_shutdown() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(OBSERVER, &[LEADER, OTHER])
            .with_unknown_leader(EPOCH)
            .with_rpc(rpc)
            .build();
        ctx.poll();
        ctx.assert_unattached(EPOCH);
        ctx.core.begin_shutdown(ctx.now_ms, &ctx.log, 5000);
        ctx.drain();
        ctx.poll();
        assert!(ctx.shutdown_complete, "{rpc:?}");
    }
}

/// Mirrors `testObserverReplication` (Kafka runs it with and without `alwaysFlush`; a
/// ferrokraft controller always flushes, as Kafka's controllers do since KAFKA-17332).
#[test]
fn test_observer_replication() {
    for rpc in Rpc::ALL {
        let mut ctx = observer(rpc, &[LEADER, OTHER]);
        discover_leader_as_observer(&mut ctx, LEADER, EPOCH);
        ctx.poll();
        let to_leader = sent_fetch(&mut ctx, EPOCH, 0, 0);
        assert_eq!(to_leader.destination, LEADER);
        let records = Bytes::from(build_data_batch(0, 3, START_MS as i64, &[b"a", b"b"]).unwrap());
        ctx.deliver_response(
            to_leader.correlation_id,
            follower_fetch_response(LEADER, EPOCH, 0, records),
        );
        ctx.poll();
        assert_eq!(ctx.log.end_offset().offset, 2, "{rpc:?}");
        assert!(ctx.log.is_flushed(), "{rpc:?}: flushed");
        assert_eq!(ctx.core.high_watermark(), Some(0));
        let next = sent_fetch(&mut ctx, EPOCH, 2, 3);
        assert_eq!(next.destination, LEADER);
    }
}
