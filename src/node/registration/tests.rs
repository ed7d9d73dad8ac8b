#![allow(clippy::unwrap_used)]

use kafka_protocol::messages::controller_registration_request::{Feature, Listener};
use kafka_protocol::messages::ControllerRegistrationRequest;
use uuid::Uuid;

use super::*;
use crate::raft::types::Endpoint;

fn registrations(mv: Option<i16>) -> Registrations {
    let mut r = Registrations::new(
        1,
        Uuid::from_u128(7),
        vec![("CONTROLLER".into(), "localhost".into(), 9093)],
        &[("metadata.version", 7, 27), ("kraft.version", 0, 1)],
    );
    if let Some(mv) = mv {
        r.image.features.insert("metadata.version".into(), mv);
    }
    r
}

fn listener(name: &str, port: u16, protocol: i16) -> Listener {
    Listener::default()
        .with_name(name.to_string().into())
        .with_host("127.0.0.1".to_string().into())
        .with_port(port)
        .with_security_protocol(protocol)
}

fn request(listeners: Vec<Listener>) -> ControllerRegistrationRequest {
    ControllerRegistrationRequest::default()
        .with_controller_id(2)
        .with_incarnation_id(Uuid::from_u128(42))
        .with_zk_migration_ready(true)
        .with_listeners(listeners)
        .with_features(vec![Feature::default()
            .with_name("metadata.version".to_string().into())
            .with_min_supported_version(7)
            .with_max_supported_version(27)])
}

fn leader_destination() -> Destination {
    Destination {
        node_id: 3,
        endpoint: Endpoint {
            host: "localhost".into(),
            port: 9095,
        },
    }
}

#[test]
fn a_non_leader_answers_not_controller_naming_the_leader() {
    let r = registrations(Some(27));
    let req = request(vec![listener("CONTROLLER", 9094, 0)]);
    assert_eq!(
        r.record_for_request(false, Some(3), &req),
        Err((
            errors::NOT_CONTROLLER,
            "The active controller appears to be node 3.".into()
        ))
    );
    assert_eq!(
        r.record_for_request(false, None, &req).unwrap_err().0,
        errors::NOT_CONTROLLER
    );
}

#[test]
fn registration_needs_metadata_version_3_7_iv0() {
    let req = request(vec![listener("CONTROLLER", 9094, 0)]);
    for mv in [None, Some(14)] {
        assert_eq!(
            registrations(mv)
                .record_for_request(true, Some(1), &req)
                .unwrap_err()
                .0,
            errors::UNSUPPORTED_VERSION,
            "metadata.version {mv:?}"
        );
    }
    assert!(registrations(Some(15))
        .record_for_request(true, Some(1), &req)
        .is_ok());
}

#[test]
fn an_unknown_security_protocol_is_refused() {
    let req = request(vec![listener("CONTROLLER", 9094, 9)]);
    let (code, message) = registrations(Some(27))
        .record_for_request(true, Some(1), &req)
        .unwrap_err();
    assert_eq!(code, errors::UNKNOWN_SERVER_ERROR);
    assert_eq!(
        message,
        "Unknown security protocol 9 in listener CONTROLLER"
    );
}

#[test]
fn the_record_carries_the_request_as_kafka_writes_it() {
    // A repeated listener name replaces the earlier one in place (Kafka keys them by name);
    // ZkMigrationReady is always written false.
    let req = request(vec![
        listener("CONTROLLER", 9094, 0),
        listener("OTHER", 9096, 1),
        listener("CONTROLLER", 9097, 0),
    ]);
    let value = registrations(Some(27))
        .record_for_request(true, Some(1), &req)
        .unwrap();
    let MetadataRecord::RegisterController(reg) = MetadataRecord::decode(&value).unwrap() else {
        panic!("not a RegisterControllerRecord");
    };
    assert_eq!(reg.controller_id, 2);
    assert_eq!(reg.incarnation_id, Uuid::from_u128(42));
    assert!(!reg.zk_migration_ready);
    let endpoints: Vec<(&str, u16, i16)> = reg
        .end_points
        .iter()
        .map(|e| (e.name.as_str(), e.port, e.security_protocol))
        .collect();
    assert_eq!(endpoints, [("CONTROLLER", 9097, 0), ("OTHER", 9096, 1)]);
    assert_eq!(reg.features.len(), 1);
}

#[test]
fn a_leader_registers_itself_once_and_waits_for_the_commit() {
    let mut r = registrations(None);
    assert!(
        matches!(r.own_action(0, true, None), OwnAction::None),
        "no metadata.version yet"
    );
    r.image.features.insert("metadata.version".into(), 27);
    let OwnAction::Append(value) = r.own_action(0, true, None) else {
        panic!("the leader appends its own registration");
    };
    assert!(
        matches!(r.own_action(1, true, None), OwnAction::None),
        "one at a time"
    );
    r.own_appended(1, Some(10));
    assert!(r.committed(10).is_empty(), "offset 10 is not below HW 10");
    assert_eq!(r.committed(11), [Waiter::Own]);
    // Committed and replayed: registered with our incarnation, nothing more to do.
    let MetadataRecord::RegisterController(reg) = MetadataRecord::decode(&value).unwrap() else {
        panic!("not a RegisterControllerRecord");
    };
    assert_eq!(reg.incarnation_id, r.incarnation_id());
    r.image
        .replay(MetadataRecord::RegisterController(reg.clone()))
        .unwrap();
    assert!(r.registered());
    assert!(matches!(r.own_action(2, true, None), OwnAction::None));
    // Another incarnation of node 1 in the log (an older process): register again.
    let mut old = reg;
    old.incarnation_id = Uuid::from_u128(8);
    r.image
        .replay(MetadataRecord::RegisterController(old))
        .unwrap();
    assert!(matches!(r.own_action(3, true, None), OwnAction::Append(_)));
}

#[test]
fn a_follower_sends_to_its_leader_and_backs_off_as_kafka() {
    let mut r = registrations(Some(27));
    assert!(
        matches!(r.own_action(0, false, None), OwnAction::None),
        "no known leader"
    );
    let OwnAction::Send {
        correlation_id,
        destination,
        request,
    } = r.own_action(0, false, Some(leader_destination()))
    else {
        panic!("a follower sends ControllerRegistration");
    };
    assert!(r.is_own_correlation(correlation_id));
    assert_eq!(destination.node_id, 3);
    assert_eq!(request.controller_id, 1);
    assert_eq!(request.listeners[0].port, 9093);
    // Kafka's ExponentialBackoff(100 ms, ×2, 120 s): 100, 200, 400, …
    let mut now = 0;
    let mut id = correlation_id;
    for expected_backoff in [100, 200, 400, 800] {
        r.own_response(now, id, Some((errors::NOT_CONTROLLER, "no".into())));
        assert!(matches!(
            r.own_action(
                now + expected_backoff - 1,
                false,
                Some(leader_destination())
            ),
            OwnAction::None
        ));
        now += expected_backoff;
        let OwnAction::Send { correlation_id, .. } =
            r.own_action(now, false, Some(leader_destination()))
        else {
            panic!("retried after {expected_backoff} ms");
        };
        id = correlation_id;
    }
    // A stale answer is ignored; the current one acknowledges.
    r.own_response(now, id - 1, None);
    assert!(matches!(
        r.own_action(now, false, Some(leader_destination())),
        OwnAction::None
    ));
    r.own_response(now, id, None);
    assert!(matches!(
        r.own_action(
            now + ACKNOWLEDGED_RECHECK_MS - 1,
            false,
            Some(leader_destination())
        ),
        OwnAction::None
    ));
}

#[test]
fn losing_leadership_fails_every_waiter() {
    let mut r = registrations(Some(27));
    r.await_commit(5, Waiter::Request(77));
    let OwnAction::Append(_) = r.own_action(0, true, None) else {
        panic!("own registration");
    };
    r.own_appended(0, Some(6));
    assert_eq!(r.leadership_lost(0), [Waiter::Request(77), Waiter::Own]);
    assert!(r.committed(100).is_empty());
    // Our own registration is tried again after the backoff.
    assert!(matches!(r.own_action(99, true, None), OwnAction::None));
    assert!(matches!(
        r.own_action(100, true, None),
        OwnAction::Append(_)
    ));
}
