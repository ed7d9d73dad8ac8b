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
    assert_eq!(
        m.remove_first_expired(10_000, 9_000),
        None,
        "exactly at the timeout: alive"
    );
    assert_eq!(m.remove_first_expired(10_001, 9_000), Some((1, 10)));
    assert!(!m.has_valid_session(1, 10, 10_001, 9_000));
    assert_eq!(m.remove_first_expired(10_001, 9_000), None);
    assert_eq!(m.remove_first_expired(11_001, 9_000), Some((2, 20)));
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
    // At 9,201 ms brokers 3 and 2 expired, taken one at a time in the order of Kafka's map
    // (hash bins 3 and 12 of 16); 1 has not.
    let at = 200 + timeout + 1;
    assert_eq!(m.remove_first_expired(at, timeout), Some((2, 20)));
    assert_eq!(m.remove_first_expired(at, timeout), Some((3, 30)));
    assert_eq!(m.remove_first_expired(at, timeout), None);
    assert_eq!(m.next_expiry_ms(timeout), Some(5_000 + timeout + 1));
    assert_eq!(m.remove_first_expired(5_000 + timeout, timeout), None);
    assert_eq!(
        m.remove_first_expired(5_000 + timeout + 1, timeout),
        Some((1, 10))
    );
    assert_eq!(m.next_expiry_ms(timeout), None);
}

/// Drains every entry expired at `at_ms`, in the order `remove_first_expired` gives them.
fn drain_expired(m: &mut crate::controller::BrokerHeartbeatManager, at_ms: u64) -> Vec<(i32, i64)> {
    std::iter::from_fn(|| m.remove_first_expired(at_ms, 9_000)).collect()
}

/// Kafka's tracker is a `ConcurrentHashMap<BrokerIdAndEpoch, Long>` and its fencing task
/// takes the first expired entry in that map's iteration order. The expected orders were
/// printed by Java 17's own ConcurrentHashMap for the same keys (`Objects.hash(id, epoch)`),
/// inserted and removed in the same order: the table doubles at the twelfth entry, and the
/// second case has one bin of six split at that resize (its leading entries come reversed).
#[test]
fn expired_entries_come_in_the_order_of_kafkas_tracker_map() {
    use crate::controller::BrokerHeartbeatManager;
    let mut m = BrokerHeartbeatManager::default();
    let keys = [
        (1, -1),
        (2, 4),
        (1, 4),
        (3, 4),
        (1, 20),
        (2, 36),
        (0, 0),
        (5, 7),
        (4, -1),
        (2, 5),
        (7, 100),
        (1, 3),
        (6, 6),
        (3, -2),
    ];
    for (id, epoch) in keys {
        // The two removed first heartbeated earlier, so they expire alone.
        let at = if matches!((id, epoch), (2, 36) | (0, 0)) {
            0
        } else {
            1_000
        };
        m.track_contact(id, epoch, at);
    }
    assert_eq!(drain_expired(&mut m, 9_001), vec![(0, 0), (2, 36)]);
    assert_eq!(
        drain_expired(&mut m, 10_001),
        vec![
            (1, -1),
            (6, 6),
            (3, 4),
            (2, 4),
            (5, 7),
            (1, 3),
            (1, 4),
            (2, 5),
            (1, 20),
            (4, -1),
            (7, 100),
            (3, -2),
        ]
    );

    let mut m = BrokerHeartbeatManager::default();
    let keys = [
        (1, 0),
        (1, 16),
        (1, 32),
        (1, 48),
        (1, 64),
        (2, 1),
        (2, 2),
        (2, 3),
        (2, 4),
        (2, 5),
        (2, 6),
        (2, 7),
        (3, 3),
    ];
    for (id, epoch) in keys {
        m.track_contact(id, epoch, 0);
    }
    assert_eq!(
        drain_expired(&mut m, 9_001),
        vec![
            (1, 32),
            (1, 0),
            (1, 64),
            (2, 1),
            (2, 2),
            (3, 3),
            (2, 3),
            (2, 4),
            (2, 5),
            (2, 6),
            (2, 7),
            (1, 48),
            (1, 16),
        ]
    );
}
