//! BrokerHeartbeatManagerTest.

use crate::controller::heartbeats::{
    next_broker_state, BrokerControlState as S, BrokerHeartbeatManager, HeartbeatAsk,
};

fn ask(want_fence: bool, want_shut_down: bool, caught_up: bool) -> HeartbeatAsk {
    HeartbeatAsk {
        want_fence,
        want_shut_down,
        caught_up,
    }
}

#[test]
fn test_calculate_next_broker_state() {
    let t = || true;
    let f = || false;
    // Fenced: shut down at once, or unfence once caught up and not asking to stay fenced.
    assert_eq!(
        next_broker_state(S::Fenced, ask(false, true, false), t, t),
        S::ShutdownNow
    );
    assert_eq!(
        next_broker_state(S::Fenced, ask(false, false, true), t, t),
        S::Unfenced
    );
    assert_eq!(
        next_broker_state(S::Fenced, ask(false, false, false), t, t),
        S::Fenced
    );
    assert_eq!(
        next_broker_state(S::Fenced, ask(true, false, true), t, t),
        S::Fenced
    );
    // Unfenced.
    assert_eq!(
        next_broker_state(S::Unfenced, ask(true, true, true), t, t),
        S::ShutdownNow
    );
    assert_eq!(
        next_broker_state(S::Unfenced, ask(true, false, true), t, t),
        S::Fenced
    );
    assert_eq!(
        next_broker_state(S::Unfenced, ask(false, true, true), t, t),
        S::ControlledShutdown,
        "leads partitions: controlled shutdown first"
    );
    assert_eq!(
        next_broker_state(S::Unfenced, ask(false, true, true), f, t),
        S::ShutdownNow
    );
    assert_eq!(
        next_broker_state(S::Unfenced, ask(false, false, true), t, t),
        S::Unfenced
    );
    // Controlled shutdown: the request's flags do not matter.
    assert_eq!(
        next_broker_state(S::ControlledShutdown, ask(true, true, true), t, t),
        S::ControlledShutdown,
        "still leads partitions"
    );
    assert_eq!(
        next_broker_state(S::ControlledShutdown, ask(false, true, true), f, f),
        S::ControlledShutdown,
        "active brokers have not caught up with the shutdown offset"
    );
    assert_eq!(
        next_broker_state(S::ControlledShutdown, ask(false, true, true), f, t),
        S::ShutdownNow
    );
}

#[test]
fn test_has_valid_session_and_expiry() {
    // Kafka 4.1's tracker: sessions by (id, epoch), fenced brokers' heartbeats count too.
    let mut m = BrokerHeartbeatManager::activate([(1, 10, false), (2, 20, true)], 1_000);
    assert!(m.has_valid_session(1, 10, 9_000, 9_000));
    assert!(
        !m.has_valid_session(2, 20, 1_000, 9_000),
        "a fenced broker has no session at activation"
    );
    m.track_contact(2, 20, 2_000);
    assert!(m.has_valid_session(2, 20, 2_000, 9_000));
    assert!(!m.has_valid_session(1, 11, 2_000, 9_000), "another epoch");
    assert_eq!(m.next_expiry_ms(9_000), Some(10_001));
    assert!(
        m.remove_expired(10_000, 9_000).is_empty(),
        "exactly at the timeout: alive"
    );
    assert_eq!(m.remove_expired(10_001, 9_000), vec![(1, 10)]);
    assert!(!m.has_valid_session(1, 10, 10_001, 9_000));
    assert_eq!(m.remove_expired(11_001, 9_000), vec![(2, 20)]);
}

#[test]
fn test_lowest_active_offset_and_controlled_shutdown() {
    let mut m = BrokerHeartbeatManager::activate([(1, 10, false), (2, 20, false)], 0);
    m.touch(1, false, 50);
    m.touch(2, false, 40);
    assert_eq!(m.lowest_active_offset(), 40);
    m.enter_controlled_shutdown(2, 45);
    assert_eq!(
        m.lowest_active_offset(),
        50,
        "a shutting-down broker is not active"
    );
    let (current, next) = m.next_state(2, ask(false, true, true), || false);
    assert_eq!((current, next), (S::ControlledShutdown, S::ShutdownNow));
    m.touch(2, true, 40);
    assert_eq!(
        m.session(2).map(|s| s.state()),
        Some(S::Fenced),
        "fencing ends the shutdown"
    );
}
