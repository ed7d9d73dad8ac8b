//! ClusterControlManagerTest.
#![allow(clippy::unwrap_used)]

use kafka_protocol::messages::broker_registration_request::Feature;
use kafka_protocol::messages::controller_registration_request::Listener;
use kafka_protocol::messages::{BrokerId, ControllerRegistrationRequest, UnregisterBrokerRequest};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::context::{registration, Ctx};
use crate::codec::{RequestBody, ResponseBody};
use crate::controller::errors;

#[test]
fn test_registration_with_incorrect_cluster_id() {
    let mut ctx = Ctx::active(27);
    let req = registration(1, None).with_cluster_id(StrBytes::from_static_str("other"));
    let resp = ctx.register(req);
    assert_eq!(resp.error_code, errors::INCONSISTENT_CLUSTER_ID);
    assert_eq!(resp.broker_epoch, -1);
    assert!(ctx.image().brokers.is_empty(), "nothing written");
}

#[test]
fn test_register_broker_record_version_and_epoch_is_the_record_offset() {
    let mut ctx = Ctx::active(27);
    let offset = ctx.log.end();
    let resp = ctx.register(registration(1, Some("r1")));
    assert_eq!(resp.error_code, 0);
    assert_eq!(
        resp.broker_epoch, offset,
        "broker epoch = offset of the record"
    );
    let b = &ctx.image().brokers[&1];
    assert!(b.fenced, "a new registration is fenced");
    assert_eq!(b.rack.as_deref(), Some("r1"));
    assert_eq!(b.log_dirs.len(), 1, "v3 carries the log dirs at 3.7-IV2+");
    assert_eq!(ctx.c.committed_image().brokers[&1].broker_epoch, offset);
}

#[test]
fn test_re_registration_and_broker_epoch() {
    let mut ctx = Ctx::active(27);
    let epoch = ctx.register_unfenced(1, None);
    // The same incarnation keeps its epoch and its unfenced state (Kafka: "Amending").
    let again = ctx.register(registration(1, None));
    assert_eq!(again.error_code, 0);
    assert_eq!(again.broker_epoch, epoch);
    assert!(!ctx.image().brokers[&1].fenced);
    // A new incarnation while the old one's session lives: refused.
    let other = registration(1, None).with_incarnation_id(Uuid::from_u128(99));
    assert_eq!(
        ctx.register(other.clone()).error_code,
        errors::DUPLICATE_BROKER_REGISTRATION
    );
    // Once the session expires (and the broker is fenced), the new incarnation gets a new
    // epoch and starts fenced.
    ctx.advance(9_001);
    assert!(ctx.image().brokers[&1].fenced, "fenced on session timeout");
    let resp = ctx.register(other);
    assert_eq!(resp.error_code, 0);
    assert!(resp.broker_epoch > epoch);
    assert!(ctx.image().brokers[&1].fenced);
}

#[test]
fn test_registration_with_unsupported_metadata_version() {
    let mut ctx = Ctx::active(27);
    let low = registration(1, None).with_features(vec![Feature::default()
        .with_name(StrBytes::from_static_str("metadata.version"))
        .with_min_supported_version(7)
        .with_max_supported_version(26)]);
    let resp = ctx.register(low);
    assert_eq!(resp.error_code, errors::UNSUPPORTED_VERSION);
    // Kafka 4.1: a request without a metadata.version range is an invalid registration.
    let none = registration(1, None).with_features(vec![]);
    assert_eq!(ctx.register(none).error_code, errors::INVALID_REGISTRATION);
}

#[test]
fn test_register_with_reserved_duplicate_and_taken_directory_ids() {
    let mut ctx = Ctx::active(27);
    let reserved = registration(1, None).with_log_dirs(vec![Uuid::from_u64_pair(0, 1)]);
    assert_eq!(
        ctx.register(reserved).error_code,
        errors::INVALID_REGISTRATION
    );
    let none = registration(1, None).with_log_dirs(vec![]);
    assert_eq!(ctx.register(none).error_code, errors::INVALID_REGISTRATION);
    let d = Uuid::from_u128(5 << 64);
    let dup = registration(1, None).with_log_dirs(vec![d, d]);
    assert_eq!(ctx.register(dup).error_code, errors::INVALID_REGISTRATION);
    ctx.register(registration(1, None).with_log_dirs(vec![d]));
    let taken = registration(2, None).with_log_dirs(vec![d]);
    assert_eq!(ctx.register(taken).error_code, errors::INVALID_REGISTRATION);
}

#[test]
fn test_unregister() {
    let mut ctx = Ctx::active(27);
    ctx.register_unfenced(1, None);
    ctx.register_unfenced(2, None);
    ctx.create_topic("t", 2, 2);
    let unregister = |id| {
        RequestBody::UnregisterBroker(
            UnregisterBrokerRequest::default().with_broker_id(BrokerId(id)),
        )
    };
    let ResponseBody::UnregisterBroker(r) = ctx.call(unregister(1), 0) else {
        panic!()
    };
    assert_eq!(r.error_code, 0);
    assert!(!ctx.image().brokers.contains_key(&1));
    for p in 0..2 {
        assert!(!ctx.partition("t", p).isr().contains(&1), "left every ISR");
        assert_ne!(ctx.partition("t", p).leader, 1);
    }
    let ResponseBody::UnregisterBroker(r) = ctx.call(unregister(1), 0) else {
        panic!()
    };
    assert_eq!(r.error_code, errors::BROKER_ID_NOT_REGISTERED);
}

fn controller_registration(id: i32, protocol: i16) -> ControllerRegistrationRequest {
    ControllerRegistrationRequest::default()
        .with_controller_id(id)
        .with_incarnation_id(Uuid::from_u128(42))
        .with_zk_migration_ready(true)
        .with_listeners(vec![
            Listener::default()
                .with_name(StrBytes::from_static_str("CONTROLLER"))
                .with_host(StrBytes::from_static_str("127.0.0.1"))
                .with_port(9094)
                .with_security_protocol(protocol),
            Listener::default()
                .with_name(StrBytes::from_static_str("CONTROLLER"))
                .with_host(StrBytes::from_static_str("127.0.0.1"))
                .with_port(9097)
                .with_security_protocol(protocol),
        ])
}

#[test]
fn test_register_controller() {
    let mut ctx = Ctx::active(27);
    let ResponseBody::ControllerRegistration(r) = ctx.call(
        RequestBody::ControllerRegistration(controller_registration(2, 0)),
        0,
    ) else {
        panic!()
    };
    assert_eq!(r.error_code, 0);
    let reg = &ctx.image().controllers[&2];
    assert!(!reg.zk_migration_ready, "always written false");
    assert_eq!(
        reg.end_points.len(),
        1,
        "a repeated listener replaces the earlier"
    );
    assert_eq!(reg.end_points[0].port, 9097);
    let ResponseBody::ControllerRegistration(r) = ctx.call(
        RequestBody::ControllerRegistration(controller_registration(3, 9)),
        0,
    ) else {
        panic!()
    };
    assert_eq!(
        r.error_code,
        errors::UNKNOWN_SERVER_ERROR,
        "unknown security protocol"
    );
    // Below metadata.version 3.7-IV0 controllers do not register.
    let mut old = Ctx::active(14);
    let ResponseBody::ControllerRegistration(r) = old.call(
        RequestBody::ControllerRegistration(controller_registration(2, 0)),
        0,
    ) else {
        panic!()
    };
    assert_eq!(r.error_code, errors::UNSUPPORTED_VERSION);
}

/// Differential fuzz (issue #36): after a failover, two brokers whose fresh sessions expire
/// together are fenced in the order of Kafka's tracker map, whose entries
/// `ClusterControlManager.activate` inserts walking `brokerRegistrations` (a TimelineHashMap:
/// broker 2 before broker 1), not by broker id. Here (1, e1) and (2, e2) share a bin of the
/// tracker's ConcurrentHashMap, so the insertion order decides.
#[test]
fn a_new_active_controller_starts_sessions_in_kafkas_broker_table_order() {
    let mut ctx = Ctx::active(27);
    let e1 = ctx.register(registration(1, None)).broker_epoch;
    let e2 = ctx.register(registration(2, None)).broker_epoch;
    for (id, e) in [(1, e1), (2, e2)] {
        let offset = ctx.log.end();
        assert!(!ctx.heartbeat(id, e, offset, false, false).is_fenced);
    }
    let bin = |id: i64, e: i64| (31 * (31 + id) + e) & 15;
    assert_eq!(bin(1, e1), bin(2, e2), "the tracker entries share a bin");
    assert_eq!(ctx.image().brokers_in_kafka_order(), vec![2, 1]);
    ctx.lose_leadership(2);
    ctx.become_leader(3);
    let from = ctx.log.end();
    ctx.advance(9_001);
    let fenced: Vec<i32> = ctx
        .log
        .records_from(from)
        .into_iter()
        .filter_map(|r| match r {
            crate::metadata::record::MetadataRecord::BrokerRegistrationChange(c)
                if c.fenced == 1 =>
            {
                Some(c.broker_id)
            }
            _ => None,
        })
        .collect();
    assert_eq!(fenced, vec![2], "broker 2 first; broker 1 10 ms later");
    ctx.advance(10);
    assert!(ctx.image().brokers[&1].fenced);
}

/// Differential fuzz (issue #36): Kafka's `registerBroker` checks the Raft layer's
/// kraft.version with the finalized features (`QuorumController.registerBroker` puts it into
/// the map `ClusterControlManager` verifies), so at kraft.version 1 a broker that does not
/// list kraft.version is refused as one that supports only level 0 of it.
#[test]
fn a_broker_not_listing_kraft_version_is_refused_once_it_is_finalized() {
    let mut ctx = Ctx::active(27);
    ctx.c.set_kraft_version(1);
    let resp = ctx.register(registration(1, None));
    assert_eq!(resp.error_code, errors::UNSUPPORTED_VERSION);
    assert!(ctx.image().brokers.is_empty(), "nothing written");
    // Listing it with a range that holds 1 registers.
    let mut req = registration(1, None);
    req.features.push(
        Feature::default()
            .with_name(StrBytes::from_static_str("kraft.version"))
            .with_min_supported_version(0)
            .with_max_supported_version(1),
    );
    assert_eq!(ctx.register(req).error_code, 0);
}
