//! A node catching up a long log replays it over several rounds (`REPLAY_BYTES_PER_CALL`):
//! between rounds it asks to be polled at once, and it activates only once the image holds
//! the whole log, in a later round than the one that started the catch-up (so its brokers'
//! sessions start at the time of activation, not at the time the catch-up began).

use super::sim::{settings, SimStore};
use crate::controller::tests::context::{bootstrap, CLUSTER_ID};
use crate::controller::{ControllerConfig, QuorumController};
use crate::node::registration::{registered_features, Registrations};
use crate::node::NodeMachine;
use crate::raft::tests::context::{config, LISTENER};
use crate::raft::{LogReader, RaftCore};

fn lone_voter(store: &SimStore, now_ms: u64, budget: Option<u64>) -> NodeMachine {
    let cfg = config(1, &[1]);
    let core = RaftCore::new(cfg, None, &store.log, now_ms);
    let mut controller = QuorumController::new(ControllerConfig::new(1, CLUSTER_ID), bootstrap(27));
    if let Some(b) = budget {
        controller.set_replay_budget_bytes(b);
    }
    let registrations = Registrations::new(
        1,
        uuid::Uuid::from_u128(7),
        vec![(LISTENER.to_string(), "127.0.0.1".to_string(), 9001, 0)],
        &registered_features(Default::default()),
    );
    NodeMachine::new(core, controller, registrations, &settings(), now_ms)
}

#[test]
fn a_long_catch_up_takes_several_rounds_and_activates_after_it() {
    let mut store = SimStore::default();
    let mut now_ms = 1_000;
    let mut first = lone_voter(&store, now_ms, None);
    first.start(now_ms, &mut store).unwrap();
    // Rounds until active, then more until the idle no-ops have written several batches.
    for _ in 0..400 {
        now_ms += 50;
        first.poll(now_ms, &mut store).unwrap();
        while first.poll_output().is_some() {}
    }
    assert!(first.is_active_controller());
    let end = store.log.end_offset().offset;
    let bytes = store.log.read(0, usize::MAX).unwrap();
    let (mut batches, mut at) = (0, 0);
    // Each batch: base offset (8 bytes), length (4), then `length` bytes.
    while let Some(len) = bytes.get(at + 8..at + 12) {
        batches += 1;
        at += 12 + i32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
    }
    assert!(
        batches >= 4,
        "{batches} batches: too few to catch up in rounds"
    );

    // Restarted with a budget of one batch a call.
    let mut node = lone_voter(&store, now_ms, Some(1));
    node.start(now_ms, &mut store).unwrap();
    let mut rounds_catching_up = 0;
    let mut asked_at_once = 0;
    for _ in 0..2_000 {
        now_ms += 10;
        node.poll(now_ms, &mut store).unwrap();
        while node.poll_output().is_some() {}
        let behind = node.committed_image().next_offset < end;
        if behind {
            rounds_catching_up += 1;
            assert!(
                !node.is_active_controller(),
                "active at {} of {end}",
                node.committed_image().next_offset
            );
            if node.poll_timeout().is_some_and(|t| t <= now_ms) {
                asked_at_once += 1;
            }
        }
        if node.is_active_controller() {
            break;
        }
    }
    assert!(node.is_active_controller(), "the restarted voter activates");
    assert!(
        rounds_catching_up >= 2,
        "the log took {rounds_catching_up} rounds"
    );
    assert!(
        asked_at_once >= 1,
        "a round left behind asks to be polled at once"
    );
    assert_eq!(
        node.committed_image().brokers,
        first.committed_image().brokers
    );
    assert_eq!(
        node.committed_image().features,
        first.committed_image().features
    );
}
