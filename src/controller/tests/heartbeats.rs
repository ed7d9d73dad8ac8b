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

#[test]
fn expiry_follows_the_latest_contact_of_each_broker() {
    use crate::controller::BrokerHeartbeatManager;
    let timeout = 9_000;
    let mut m = BrokerHeartbeatManager::default();
    m.track_contact(1, 10, 100);
    m.track_contact(2, 20, 200);
    m.track_contact(3, 30, 150);
    assert_eq!(m.next_expiry_ms(timeout), Some(100 + timeout + 1));
    // Broker 1 heartbeats again: broker 3 is now the longest silent. An older time changes
    // nothing (Kafka keeps the latest).
    m.track_contact(1, 10, 5_000);
    m.track_contact(1, 10, 4_000);
    assert_eq!(m.next_expiry_ms(timeout), Some(150 + timeout + 1));
    // At 9,201 ms brokers 3 and 2 expired (longest silent first); 1 has not.
    assert_eq!(
        m.remove_expired(200 + timeout + 1, timeout),
        vec![(3, 30), (2, 20)]
    );
    assert_eq!(m.next_expiry_ms(timeout), Some(5_000 + timeout + 1));
    assert!(m.remove_expired(5_000 + timeout, timeout).is_empty());
    assert_eq!(
        m.remove_expired(5_000 + timeout + 1, timeout),
        vec![(1, 10)]
    );
    assert_eq!(m.next_expiry_ms(timeout), None);
}
