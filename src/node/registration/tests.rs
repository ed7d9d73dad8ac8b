#![allow(clippy::unwrap_used)]

use uuid::Uuid;

use super::*;
use crate::metadata::record::MetadataRecord;
use crate::raft::errors;
use crate::raft::types::Endpoint;

fn registrations() -> Registrations {
    Registrations::new(
        1,
        Uuid::from_u128(7),
        vec![("CONTROLLER".into(), "localhost".into(), 9093, 0)],
        &[("metadata.version", 7, 27), ("kraft.version", 0, 1)],
    )
}

fn image(mv: Option<i16>) -> MetadataImage {
    let mut image = MetadataImage::new();
    if let Some(mv) = mv {
        image.features.insert("metadata.version".into(), mv);
    }
    image
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
fn a_leader_registers_itself_through_its_own_controller_once() {
    let mut r = registrations();
    assert!(
        matches!(r.own_action(0, &image(None), true, None), OwnAction::None),
        "no metadata.version yet"
    );
    let mut img = image(Some(27));
    let OwnAction::Local {
        correlation_id,
        request,
    } = r.own_action(0, &img, true, None)
    else {
        panic!("the leader hands its registration to its own controller");
    };
    assert!(r.is_own_correlation(correlation_id));
    assert_eq!(request.incarnation_id, r.incarnation_id());
    assert!(
        matches!(r.own_action(1, &img, true, None), OwnAction::None),
        "one at a time"
    );
    r.own_response(1, correlation_id, None);
    // Committed and replayed: registered with our incarnation, nothing more to do.
    let reg = crate::metadata::controller::ControllerRegistration {
        controller_id: 1,
        incarnation_id: r.incarnation_id(),
        ..Default::default()
    };
    img.replay(MetadataRecord::RegisterController(reg.clone()))
        .unwrap();
    assert!(r.registered(&img));
    assert!(matches!(
        r.own_action(ACKNOWLEDGED_RECHECK_MS + 1, &img, true, None),
        OwnAction::None
    ));
    // Another incarnation of node 1 in the log (an older process): register again.
    let mut old = reg;
    old.incarnation_id = Uuid::from_u128(8);
    img.replay(MetadataRecord::RegisterController(old)).unwrap();
    assert!(matches!(
        r.own_action(ACKNOWLEDGED_RECHECK_MS + 1, &img, true, None),
        OwnAction::Local { .. }
    ));
}

#[test]
fn a_follower_sends_to_its_leader_and_backs_off_as_kafka() {
    let mut r = registrations();
    let img = image(Some(27));
    assert!(
        matches!(r.own_action(0, &img, false, None), OwnAction::None),
        "no known leader"
    );
    let OwnAction::Send {
        correlation_id,
        destination,
        request,
    } = r.own_action(0, &img, false, Some(leader_destination()))
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
                &img,
                false,
                Some(leader_destination())
            ),
            OwnAction::None
        ));
        now += expected_backoff;
        let OwnAction::Send { correlation_id, .. } =
            r.own_action(now, &img, false, Some(leader_destination()))
        else {
            panic!("retried after {expected_backoff} ms");
        };
        id = correlation_id;
    }
    // A stale answer is ignored; the current one acknowledges.
    r.own_response(now, id - 1, None);
    assert!(matches!(
        r.own_action(now, &img, false, Some(leader_destination())),
        OwnAction::None
    ));
    r.own_response(now, id, None);
    assert!(matches!(
        r.own_action(
            now + ACKNOWLEDGED_RECHECK_MS - 1,
            &img,
            false,
            Some(leader_destination())
        ),
        OwnAction::None
    ));
}

/// Kafka's ControllerRegistrationManager writes each advertised controller listener with its
/// security protocol (SSL is 1).
#[test]
fn an_ssl_listener_registers_as_ssl() {
    let mut r = Registrations::new(
        1,
        Uuid::from_u128(7),
        vec![
            ("CONTROLLER".into(), "localhost".into(), 9093, 1),
            ("PLAIN".into(), "localhost".into(), 9094, 0),
        ],
        &[("metadata.version", 7, 27)],
    );
    let OwnAction::Local { request, .. } = r.own_action(0, &image(Some(27)), true, None) else {
        panic!("a leader registers through its own controller");
    };
    let protocols: Vec<(String, i16)> = request
        .listeners
        .iter()
        .map(|l| (l.name.to_string(), l.security_protocol))
        .collect();
    assert_eq!(
        protocols,
        [("CONTROLLER".to_string(), 1), ("PLAIN".to_string(), 0)]
    );
}
