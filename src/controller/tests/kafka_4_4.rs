//! What a Kafka 4.4.0 controller does that a 4.1.2 one does not, and the log-directory reports
//! of heartbeats: ReplicationControlManagerTest's `testHandleDirectoriesOffline` and the
//! cordoned-directory cases of 4.4 (KIP-1066), ConfigurationControlManager's
//! `cordoned.log.dirs` rules, `unregisterController` (KIP-1312) and the feature ranges of each
//! release. The messages are 4.4.0's (read from its classes).
#![allow(clippy::unwrap_used)]

use bytes::Bytes;
use kafka_protocol::messages::controller_registration_request::Listener;
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::{
    BrokerHeartbeatRequest, BrokerId, BrokerRegistrationRequest, ControllerRegistrationRequest,
    IncrementalAlterConfigsRequest, UnregisterControllerRequest, UnregisterControllerResponse,
};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::context::{registration, Ctx, CLUSTER_ID};
use super::features::{invalid, refused, update, SAFE, UPGRADE};
use crate::codec::versions::Release;
use crate::codec::{RequestBody, ResponseBody};
use crate::controller::{errors, ControllerConfig};
use crate::records::feature_level::feature_level_record;

/// Node 1 presenting `release`, active at metadata.version `mv`.
fn ctx(release: Release, mv: i16) -> Ctx {
    let mut cfg = ControllerConfig::new(1, CLUSTER_ID);
    cfg.rng_seed = 42;
    cfg.release = release;
    Ctx::with_bootstrap(
        cfg,
        vec![Bytes::from(feature_level_record("metadata.version", mv))],
    )
}

/// A Kafka 4.4 broker's registration: metadata.version 7-33, one log directory.
fn registration_4_4(id: i32) -> BrokerRegistrationRequest {
    let mut r = registration(id, None);
    r.features[0].max_supported_version = 33;
    r
}

fn dir_of(id: i32) -> Uuid {
    registration(id, None).log_dirs[0]
}

/// Registers broker `id` at 4.4 and heartbeats it unfenced; its epoch.
fn register_4_4(ctx: &mut Ctx, id: i32) -> i64 {
    let r = ctx.register(registration_4_4(id));
    assert_eq!(r.error_code, 0, "broker {id} registered");
    let offset = ctx.log.end();
    let hb = heartbeat(ctx, id, r.broker_epoch, offset, &[], None);
    assert!(!hb.is_fenced);
    r.broker_epoch
}

fn heartbeat(
    ctx: &mut Ctx,
    id: i32,
    epoch: i64,
    offset: i64,
    offline: &[Uuid],
    cordoned: Option<&[Uuid]>,
) -> kafka_protocol::messages::BrokerHeartbeatResponse {
    let mut req = BrokerHeartbeatRequest::default()
        .with_broker_id(BrokerId(id))
        .with_broker_epoch(epoch)
        .with_current_metadata_offset(offset)
        .with_offline_log_dirs(offline.to_vec());
    req.cordoned_log_dirs = cordoned.map(<[Uuid]>::to_vec);
    match ctx.call(RequestBody::BrokerHeartbeat(req), 2) {
        ResponseBody::BrokerHeartbeat(r) => r,
        other => panic!("{other:?}"),
    }
}

/// ReplicationControlManagerTest.testHandleDirectoriesOffline: the partitions on the offline
/// directory lose the broker from their ISR and leadership; the registration keeps the other
/// directories (here none remain, and an empty list leaves the registration as it was).
#[test]
fn test_handle_directories_offline() {
    let mut ctx = ctx(Release::Kafka4_1, 27);
    let epochs: Vec<i64> = (0..3).map(|id| ctx.register_unfenced(id, None)).collect();
    assert_eq!(ctx.create_topic("foo", 3, 3).topics[0].error_code, 0);
    let led_by_0: Vec<i32> = (0..3)
        .filter(|p| ctx.partition("foo", *p).leader == 0)
        .collect();
    assert!(!led_by_0.is_empty());
    let end = ctx.log.end();
    heartbeat(&mut ctx, 0, epochs[0], end, &[dir_of(0)], None);
    for p in 0..3 {
        let part = ctx.partition("foo", p);
        assert!(!part.isr().contains(&0), "partition {p}: {part:?}");
        assert_ne!(part.leader, 0);
    }
    assert_eq!(ctx.image().brokers[&0].log_dirs, vec![dir_of(0)]);
    // A directory the broker never registered changes nothing.
    let end = ctx.log.end();
    heartbeat(&mut ctx, 1, epochs[1], end, &[Uuid::from_u128(99)], None);
    assert_eq!(ctx.log.end(), end, "no record for an unknown directory");
    assert!(ctx.partition("foo", 0).isr().contains(&1));
}

/// Kafka 4.4's handleDirectoriesCordoned: the first non-null list is written (the registration
/// starts with none), an equal set is not, a change is; a null list never is.
#[test]
fn test_handle_directories_cordoned() {
    let mut ctx = ctx(Release::Kafka4_4, 33);
    let epoch = register_4_4(&mut ctx, 0);
    assert_eq!(ctx.image().brokers[&0].cordoned_log_dirs, None);
    let end = ctx.log.end();
    heartbeat(&mut ctx, 0, epoch, end, &[], Some(&[]));
    assert_eq!(ctx.log.end(), end + 1, "the first list is written");
    assert_eq!(ctx.image().brokers[&0].cordoned_log_dirs, Some(vec![]));
    let end = ctx.log.end();
    heartbeat(&mut ctx, 0, epoch, end, &[], Some(&[]));
    heartbeat(&mut ctx, 0, epoch, end, &[], None);
    assert_eq!(
        ctx.log.end(),
        end,
        "unchanged cordoned directories write nothing"
    );
    heartbeat(&mut ctx, 0, epoch, end, &[], Some(&[dir_of(0)]));
    assert_eq!(ctx.log.end(), end + 1);
    assert_eq!(
        ctx.image().brokers[&0].cordoned_log_dirs,
        Some(vec![dir_of(0)])
    );
}

/// Below 4.3-IV0 the heartbeat's cordoned directories are ignored.
#[test]
fn cordoned_directories_need_metadata_version_4_3() {
    let mut ctx = ctx(Release::Kafka4_4, 29);
    let epoch = register_4_4(&mut ctx, 0);
    let end = ctx.log.end();
    heartbeat(&mut ctx, 0, epoch, end, &[], Some(&[dir_of(0)]));
    assert_eq!(ctx.log.end(), end);
    assert_eq!(ctx.image().brokers[&0].cordoned_log_dirs, None);
}

/// The placer skips a broker whose every directory is cordoned (`hasUncordonedDirs`).
#[test]
fn placement_skips_brokers_with_every_directory_cordoned() {
    let mut ctx = ctx(Release::Kafka4_4, 33);
    let epoch = register_4_4(&mut ctx, 0);
    register_4_4(&mut ctx, 1);
    let end = ctx.log.end();
    heartbeat(&mut ctx, 0, epoch, end, &[], Some(&[dir_of(0)]));
    assert_eq!(ctx.create_topic("bar", 6, 1).topics[0].error_code, 0);
    for p in 0..6 {
        assert_eq!(ctx.partition("bar", p).replicas(), vec![1], "partition {p}");
    }
    // Kafka 4.4's placer names cordoned directories in its refusal.
    let r = ctx.create_topic("baz", 1, 3);
    assert_eq!(r.topics[0].error_code, errors::INVALID_REPLICATION_FACTOR);
    assert_eq!(
        r.topics[0].error_message.as_deref(),
        Some(
            "Unable to replicate the partition 3 time(s): The target replication factor of 3 \
             cannot be reached because only 1 broker(s) are registered or some brokers have all \
             their log directories cordoned."
        )
    );
}

fn alter_cordoned(ctx: &mut Ctx, broker: &str, value: &str) -> (i16, Option<String>) {
    let req = IncrementalAlterConfigsRequest::default().with_resources(vec![
        AlterConfigsResource::default()
            .with_resource_type(4)
            .with_resource_name(StrBytes::from_string(broker.to_string()))
            .with_configs(vec![AlterableConfig::default()
                .with_name(StrBytes::from_static_str("cordoned.log.dirs"))
                .with_config_operation(0)
                .with_value(Some(StrBytes::from_string(value.to_string())))]),
    ]);
    match ctx.call(RequestBody::IncrementalAlterConfigs(req), 1) {
        ResponseBody::IncrementalAlterConfigs(r) => (
            r.responses[0].error_code,
            r.responses[0].error_message.as_deref().map(String::from),
        ),
        other => panic!("{other:?}"),
    }
}

/// ConfigurationControlManager (4.4): `cordoned.log.dirs` needs 4.3-IV0; sent to a controller
/// directly it may only shrink; forwarded by a broker it is taken as is.
#[test]
fn cordoned_log_dirs_config_rules() {
    let subset = "When updating cordoned.log.dirs via controllers,  the new value must be a \
                  subset of the current configuration value.";
    let mut old = ctx(Release::Kafka4_4, 29);
    register_4_4(&mut old, 0);
    assert_eq!(
        alter_cordoned(&mut old, "0", "/a"),
        (
            errors::INVALID_CONFIG,
            Some(
                "The cordoned.log.dirs configuration value cannot be set because it requires \
                 metadata.version >= 4.3-IV0"
                    .into()
            )
        )
    );
    // Kafka 4.1 has no such key: the value is stored as any other broker config.
    let mut v41 = ctx(Release::Kafka4_1, 27);
    v41.register_unfenced(0, None);
    assert_eq!(alter_cordoned(&mut v41, "0", "/a").0, 0);

    let mut ctx = ctx(Release::Kafka4_4, 33);
    register_4_4(&mut ctx, 0);
    assert_eq!(
        alter_cordoned(&mut ctx, "0", "/a,/b"),
        (errors::INVALID_CONFIG, Some(subset.into()))
    );
    ctx.forwarded = true;
    assert_eq!(alter_cordoned(&mut ctx, "0", "/a , /b").0, 0);
    ctx.forwarded = false;
    assert_eq!(alter_cordoned(&mut ctx, "0", "/b").0, 0);
    assert_eq!(
        alter_cordoned(&mut ctx, "0", "/b,/c"),
        (errors::INVALID_CONFIG, Some(subset.into()))
    );
    assert_eq!(
        alter_cordoned(&mut ctx, "0", "  ").0,
        0,
        "a blank value is allowed"
    );
}

fn unregister_controller(ctx: &mut Ctx, id: i32) -> UnregisterControllerResponse {
    let req = UnregisterControllerRequest::default().with_controller_id(id);
    match ctx.call(RequestBody::UnregisterController(req), 0) {
        ResponseBody::UnregisterController(r) => r,
        other => panic!("{other:?}"),
    }
}

fn register_controller(ctx: &mut Ctx, id: i32) {
    let req = ControllerRegistrationRequest::default()
        .with_controller_id(id)
        .with_incarnation_id(Uuid::from_u128(77))
        .with_listeners(vec![Listener::default()
            .with_name(StrBytes::from_static_str("CONTROLLER"))
            .with_host(StrBytes::from_static_str("127.0.0.1"))
            .with_port(9095)
            .with_security_protocol(0)]);
    let ResponseBody::ControllerRegistration(r) =
        ctx.call(RequestBody::ControllerRegistration(req), 0)
    else {
        panic!()
    };
    assert_eq!(r.error_code, 0);
}

/// Kafka 4.4's unregisterController, in its check order.
#[test]
fn test_unregister_controller() {
    let mut old = ctx(Release::Kafka4_4, 32);
    register_controller(&mut old, 2);
    let r = unregister_controller(&mut old, 1);
    assert_eq!(
        (r.error_code, r.error_message.as_deref()),
        (
            errors::INVALID_REQUEST,
            Some("Controller cannot unregister itself while it is active.")
        )
    );
    let r = unregister_controller(&mut old, 2);
    assert_eq!(
        (r.error_code, r.error_message.as_deref()),
        (
            errors::UNSUPPORTED_VERSION,
            Some("The current MetadataVersion is too old to support controller unregistration.")
        )
    );
    let mut ctx = ctx(Release::Kafka4_4, 33);
    let r = unregister_controller(&mut ctx, 2);
    assert_eq!(
        (r.error_code, r.error_message.as_deref()),
        (
            errors::CONTROLLER_ID_NOT_REGISTERED,
            Some("Controller ID 2 is not currently registered.")
        )
    );
    register_controller(&mut ctx, 2);
    assert!(ctx.image().controllers.contains_key(&2));
    let r = unregister_controller(&mut ctx, 2);
    // Kafka answers a success with the data's defaults (an empty message, not null).
    assert_eq!((r.error_code, r.error_message.as_deref()), (0, Some("")));
    assert!(!ctx.image().controllers.contains_key(&2));
}

/// Each release refuses what its controller does not support: 4.1 stops at 4.1-IV1, 4.4 goes
/// to 4.4-IV2 and takes share.version 2 and streams.version 1; a downgrade across 4.4-IV2's
/// metadata change is refused as unsafe.
#[test]
fn feature_ranges_follow_the_release() {
    let mut v41 = ctx(Release::Kafka4_1, 27);
    v41.register(registration_4_4(0));
    let r = update(&mut v41, &[("metadata.version", 33, UPGRADE)], false, 2);
    assert_eq!(
        refused(&r),
        invalid(
            "Invalid update version 33 for feature metadata.version. Local controller 1 only \
             supports versions 7-27"
        )
    );
    let mut v44 = ctx(Release::Kafka4_4, 27);
    let mut reg = registration_4_4(0);
    reg.features.push(
        kafka_protocol::messages::broker_registration_request::Feature::default()
            .with_name(StrBytes::from_static_str("streams.version"))
            .with_min_supported_version(0)
            .with_max_supported_version(1),
    );
    assert_eq!(v44.register(reg).error_code, 0);
    let r = update(
        &mut v44,
        &[
            ("metadata.version", 33, UPGRADE),
            ("streams.version", 1, UPGRADE),
        ],
        false,
        2,
    );
    assert_eq!(r.error_code, 0, "{:?}", r.error_message);
    assert_eq!(v44.image().metadata_version(), Some(33));
    assert_eq!(v44.image().features.get("streams.version"), Some(&1));
    let r = update(&mut v44, &[("metadata.version", 32, SAFE)], false, 2);
    assert_eq!(
        refused(&r),
        invalid(
            "Unsupported metadata.version downgrade from 33 to 32. Refusing to perform the \
             requested downgrade because it might delete metadata information."
        )
    );
}

/// Kafka 4.4's `validateTotalNumberOfPartitions`: a CreatePartitions request whose topics
/// would add more than 10,000 partitions in all fails whole, every topic answered
/// POLICY_VIOLATION "Excessively large number of additional partitions per request.", before
/// any topic is looked at; exactly 10,000 is allowed. Kafka 4.1 has no such check (the same
/// request runs into the bound on records per operation instead).
#[test]
fn create_partitions_refuses_more_than_10000_added_partitions_in_4_4() {
    use super::topic_admin::{create_partitions, grow, partition_results};
    let grow = |ctx: &mut Ctx, adds: &[(&str, i32)]| {
        let topics = adds
            .iter()
            .map(|(n, count)| grow(n, *count, None))
            .collect();
        partition_results(&create_partitions(ctx, topics, true))
    };
    let too_many = [("foo", 6_001), ("bar", 4_002), ("unknown", 50)];
    let cap = Some("Excessively large number of additional partitions per request.".to_string());
    let mut v44 = ctx(Release::Kafka4_4, 33);
    register_4_4(&mut v44, 0);
    for t in ["foo", "bar"] {
        assert_eq!(v44.create_topic(t, 1, 1).topics[0].error_code, 0);
    }
    let answers = grow(&mut v44, &too_many);
    assert_eq!(answers.len(), 3);
    for (name, code, message) in &answers {
        assert_eq!((*code, message), (errors::POLICY_VIOLATION, &cap), "{name}");
    }
    // 10,000 exactly (the unknown topic adds nothing): not refused by the cap.
    let answers = grow(&mut v44, &[("foo", 6_001), ("bar", 4_001), ("unknown", 50)]);
    assert!(answers.iter().all(|(_, _, m)| m != &cap), "{answers:?}");

    let mut v41 = ctx(Release::Kafka4_1, 27);
    v41.register(registration(0, None));
    let epoch = v41.image().brokers.get(&0).map(|b| b.broker_epoch).unwrap();
    let offset = v41.log.end();
    v41.heartbeat(0, epoch, offset, false, false);
    for t in ["foo", "bar"] {
        assert_eq!(v41.create_topic(t, 1, 1).topics[0].error_code, 0);
    }
    let answers = grow(&mut v41, &too_many);
    assert!(answers.iter().all(|(_, _, m)| m != &cap), "{answers:?}");
}
