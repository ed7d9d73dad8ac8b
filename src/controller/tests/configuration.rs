//! ConfigurationControlManagerTest's and ControllerApisTest's config cases, on an active
//! controller over an in-memory log. Kafka's tests use a made-up schema; these use the real
//! topic keys (`cleanup.policy` and the throttled-replica lists are Kafka's topic LIST keys).
#![allow(clippy::unwrap_used)]

use kafka_protocol::messages::alter_configs_request::{
    AlterConfigsResource as LegacyResource, AlterableConfig as LegacyConfig,
};
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::{
    AlterConfigsRequest, AlterConfigsResponse, IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
};
use kafka_protocol::protocol::StrBytes;

use super::context::{topic, topic_config, Ctx};
use crate::codec::{RequestBody, ResponseBody};
use crate::controller::configs::resource::{BROKER, CLIENT_METRICS, GROUP, TOPIC};
use crate::controller::errors;
use crate::metadata::image::ConfigResource;

pub(super) const SET: i8 = 0;
const DELETE: i8 = 1;
const APPEND: i8 = 2;
const SUBTRACT: i8 = 3;

pub(super) fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

pub(super) fn res(
    resource_type: i8,
    name: &str,
    ops: &[(&str, i8, Option<&str>)],
) -> AlterConfigsResource {
    AlterConfigsResource::default()
        .with_resource_type(resource_type)
        .with_resource_name(s(name))
        .with_configs(
            ops.iter()
                .map(|(k, op, v)| {
                    AlterableConfig::default()
                        .with_name(s(k))
                        .with_config_operation(*op)
                        .with_value(v.map(s))
                })
                .collect(),
        )
}

pub(super) fn alter(
    ctx: &mut Ctx,
    resources: Vec<AlterConfigsResource>,
    validate_only: bool,
) -> IncrementalAlterConfigsResponse {
    let req = IncrementalAlterConfigsRequest::default()
        .with_resources(resources)
        .with_validate_only(validate_only);
    match ctx.call(RequestBody::IncrementalAlterConfigs(req), 1) {
        ResponseBody::IncrementalAlterConfigs(r) => r,
        other => panic!("{other:?}"),
    }
}

/// (type, name, code, message) per answer, in the answer's order.
pub(super) fn answers(
    r: &IncrementalAlterConfigsResponse,
) -> Vec<(i8, String, i16, Option<String>)> {
    r.responses
        .iter()
        .map(|x| {
            (
                x.resource_type,
                x.resource_name.to_string(),
                x.error_code,
                x.error_message.as_ref().map(|m| m.to_string()),
            )
        })
        .collect()
}

/// (type, name, code, message) per result, sorted (Kafka's order is a HashMap's).
fn results(r: &IncrementalAlterConfigsResponse) -> Vec<(i8, String, i16, Option<String>)> {
    let mut v = answers(r);
    v.sort();
    v
}

fn ok(resource_type: i8, name: &str) -> (i8, String, i16, Option<String>) {
    (resource_type, name.to_string(), 0, None)
}

fn err(resource_type: i8, name: &str, code: i16, m: &str) -> (i8, String, i16, Option<String>) {
    (resource_type, name.to_string(), code, Some(m.to_string()))
}

fn stored(ctx: &Ctx, resource_type: i8, name: &str, key: &str) -> Option<String> {
    ctx.image()
        .configs
        .get(&ConfigResource {
            resource_type,
            resource_name: name.to_string(),
        })
        .and_then(|c| c.get(key))
        .cloned()
}

/// A controller with one broker (0) and topic `mytopic`, ELR off (metadata.version only).
pub(super) fn ctx_with_topic() -> Ctx {
    let mut ctx = Ctx::active(27);
    ctx.register_unfenced(0, None);
    assert_eq!(ctx.create_topic("mytopic", 1, 1).topics[0].error_code, 0);
    ctx
}

/// ConfigurationControlManagerTest.testIncrementalAlterConfigs: SUBTRACT on a non-list key
/// fails its resource; the other resource still writes; DELETE then removes the key.
#[test]
fn test_incremental_alter_configs() {
    let mut ctx = ctx_with_topic();
    let before = ctx.log.end();
    let r = alter(
        &mut ctx,
        vec![
            res(
                BROKER,
                "0",
                &[("baz", SUBTRACT, Some("abc")), ("quux", SET, Some("abc"))],
            ),
            res(
                TOPIC,
                "mytopic",
                &[("cleanup.policy", APPEND, Some("compact"))],
            ),
        ],
        false,
    );
    assert_eq!(
        results(&r),
        [
            ok(TOPIC, "mytopic"),
            err(
                BROKER,
                "0",
                errors::INVALID_CONFIG,
                "Can't SUBTRACT to key baz because its type is not LIST."
            ),
        ]
    );
    assert_eq!(ctx.log.end(), before + 1, "one ConfigRecord");
    // APPEND starts from the default (`delete`).
    assert_eq!(
        stored(&ctx, TOPIC, "mytopic", "cleanup.policy").as_deref(),
        Some("delete,compact")
    );
    assert_eq!(stored(&ctx, BROKER, "0", "quux"), None);
    let r = alter(
        &mut ctx,
        vec![res(
            TOPIC,
            "mytopic",
            &[("cleanup.policy", DELETE, Some("xyz"))],
        )],
        false,
    );
    assert_eq!(results(&r), [ok(TOPIC, "mytopic")]);
    assert_eq!(stored(&ctx, TOPIC, "mytopic", "cleanup.policy"), None);
}

/// ConfigurationControlManagerTest.testIncrementalAlterMultipleConfigValues: values already
/// there are not appended twice, absent ones not subtracted; no change writes nothing.
#[test]
fn test_incremental_alter_multiple_config_values() {
    let mut ctx = ctx_with_topic();
    let key = "leader.replication.throttled.replicas";
    let set = |ctx: &mut Ctx, op: i8, v: &str| {
        let before = ctx.log.end();
        let r = alter(
            ctx,
            vec![res(TOPIC, "mytopic", &[(key, op, Some(v))])],
            false,
        );
        assert_eq!(results(&r), [ok(TOPIC, "mytopic")]);
        ctx.log.end() - before
    };
    assert_eq!(set(&mut ctx, APPEND, "0:1,1:2,2:3"), 1);
    assert_eq!(
        stored(&ctx, TOPIC, "mytopic", key).as_deref(),
        Some("0:1,1:2,2:3")
    );
    assert_eq!(
        set(&mut ctx, APPEND, "0:1,1:2"),
        0,
        "already present: no record"
    );
    assert_eq!(set(&mut ctx, SUBTRACT, "0:1,1:2"), 1);
    assert_eq!(stored(&ctx, TOPIC, "mytopic", key).as_deref(), Some("2:3"));
    assert_eq!(set(&mut ctx, SUBTRACT, "9:9"), 0, "absent: no record");
    assert_eq!(stored(&ctx, TOPIC, "mytopic", key).as_deref(), Some("2:3"));
}

/// ConfigurationControlManagerTest.testIncrementalAlterConfigsWithoutExistence: a topic that
/// does not exist and a broker that is not registered are refused after validation.
#[test]
fn test_incremental_alter_configs_without_existence() {
    let mut ctx = ctx_with_topic();
    let r = alter(
        &mut ctx,
        vec![
            res(BROKER, "7", &[("quux", SET, Some("1"))]),
            res(TOPIC, "nope", &[("retention.ms", SET, Some("1000"))]),
            res(TOPIC, "mytopic", &[("retention.ms", SET, Some("1000"))]),
            // Validation comes before existence.
            res(TOPIC, "ghost", &[("retention.ms", SET, Some("x"))]),
        ],
        false,
    );
    assert_eq!(
        results(&r),
        [
            err(
                TOPIC,
                "ghost",
                errors::INVALID_CONFIG,
                "Invalid value x for configuration retention.ms: Not a number of type LONG"
            ),
            ok(TOPIC, "mytopic"),
            err(
                TOPIC,
                "nope",
                errors::UNKNOWN_TOPIC_OR_PARTITION,
                "The topic 'nope' does not exist."
            ),
            err(BROKER, "7", 102, "No node with id 7 found."),
        ]
    );
    assert_eq!(
        stored(&ctx, TOPIC, "mytopic", "retention.ms").as_deref(),
        Some("1000")
    );
}

/// ConfigurationControlManagerTest.testLegacyAlterConfigs: the given set replaces the stored
/// one; keys left out are deleted.
#[test]
fn test_legacy_alter_configs() {
    let mut ctx = ctx_with_topic();
    let legacy = |ctx: &mut Ctx, configs: &[(&str, &str)]| -> AlterConfigsResponse {
        let req = AlterConfigsRequest::default().with_resources(vec![LegacyResource::default()
            .with_resource_type(TOPIC)
            .with_resource_name(s("mytopic"))
            .with_configs(
                configs
                    .iter()
                    .map(|(k, v)| {
                        LegacyConfig::default()
                            .with_name(s(k))
                            .with_value(Some(s(v)))
                    })
                    .collect(),
            )]);
        match ctx.call(RequestBody::AlterConfigs(req), 2) {
            ResponseBody::AlterConfigs(r) => r,
            other => panic!("{other:?}"),
        }
    };
    let r = legacy(&mut ctx, &[("retention.ms", "456"), ("segment.ms", "901")]);
    assert_eq!(r.responses[0].error_code, 0);
    assert_eq!(
        stored(&ctx, TOPIC, "mytopic", "retention.ms").as_deref(),
        Some("456")
    );
    let before = ctx.log.end();
    let r = legacy(&mut ctx, &[("segment.ms", "901")]);
    assert_eq!(r.responses[0].error_code, 0);
    assert_eq!(ctx.log.end(), before + 1, "only the implicit delete");
    assert_eq!(stored(&ctx, TOPIC, "mytopic", "retention.ms"), None);
    assert_eq!(
        stored(&ctx, TOPIC, "mytopic", "segment.ms").as_deref(),
        Some("901")
    );
}

/// ControllerApisTest.testInvalidIncrementalAlterConfigsResources: an unknown resource type
/// and a duplicate resource are answered before anything is computed.
#[test]
fn test_invalid_incremental_alter_configs_resources() {
    let mut ctx = ctx_with_topic();
    let r = alter(
        &mut ctx,
        vec![
            res(3, "foo", &[("a", SET, Some("1"))]),
            res(TOPIC, "mytopic", &[("retention.ms", SET, Some("1"))]),
            res(TOPIC, "mytopic", &[("retention.ms", SET, Some("2"))]),
            res(TOPIC, "mytopic", &[("retention.ms", SET, Some("3"))]),
        ],
        false,
    );
    assert_eq!(
        results(&r),
        [
            err(
                TOPIC,
                "mytopic",
                errors::INVALID_REQUEST,
                "Duplicate resource."
            ),
            err(
                3,
                "foo",
                errors::UNSUPPORTED_VERSION,
                "Unknown resource type 3."
            ),
        ]
    );
    assert_eq!(stored(&ctx, TOPIC, "mytopic", "retention.ms"), None);
}

/// Kafka 4.1's topic config checks through IncrementalAlterConfigs: unknown key, types,
/// bounds, list members, conflicts; validate_only answers the same and writes nothing.
#[test]
fn topic_configs_are_checked_as_kafka_checks_them() {
    let mut ctx = ctx_with_topic();
    let cases: &[(&str, &str, &str)] = &[
        ("no.such", "1", "Unknown topic config name: no.such"),
        (
            "segment.bytes",
            "1000",
            "Invalid value 1000 for configuration segment.bytes: Value must be at least 1048576",
        ),
        (
            "compression.gzip.level",
            "10",
            "Invalid value 10 for configuration compression.gzip.level: Value must be between 1 \
             and 9 or equal to -1",
        ),
        (
            "compression.zstd.level",
            "23",
            "Invalid value 23 for configuration compression.zstd.level: Value must be no more \
             than 22",
        ),
        (
            "min.cleanable.dirty.ratio",
            "1.5",
            "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no \
             more than 1",
        ),
        (
            "cleanup.policy",
            "forever",
            "Invalid value forever for configuration cleanup.policy: String must be one of: \
             compact, delete",
        ),
        (
            "leader.replication.throttled.replicas",
            "abc",
            "Invalid value [abc] for configuration leader.replication.throttled.replicas: \
             leader.replication.throttled.replicas must be the literal '*' or a list of replicas \
             in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...",
        ),
        (
            "remote.storage.enable",
            "true",
            "Tiered Storage functionality is disabled in the broker. Topic cannot be configured \
             with remote log storage.",
        ),
    ];
    for (k, v, message) in cases {
        for validate_only in [true, false] {
            let r = alter(
                &mut ctx,
                vec![res(TOPIC, "mytopic", &[(k, SET, Some(v))])],
                validate_only,
            );
            assert_eq!(
                results(&r),
                [err(TOPIC, "mytopic", errors::INVALID_CONFIG, message)],
                "{k}={v}"
            );
        }
    }
    let r = alter(
        &mut ctx,
        vec![res(
            TOPIC,
            "mytopic",
            &[
                ("min.compaction.lag.ms", SET, Some("10")),
                ("max.compaction.lag.ms", SET, Some("5")),
            ],
        )],
        false,
    );
    assert_eq!(
        results(&r),
        [err(
            TOPIC,
            "mytopic",
            errors::INVALID_CONFIG,
            "conflict topic config setting min.compaction.lag.ms (10) > max.compaction.lag.ms (5)"
        )]
    );
    let before = ctx.log.end();
    let r = alter(
        &mut ctx,
        vec![res(
            TOPIC,
            "mytopic",
            &[("retention.ms", SET, Some("1000"))],
        )],
        true,
    );
    assert_eq!(results(&r), [ok(TOPIC, "mytopic")]);
    assert_eq!(ctx.log.end(), before, "validate_only writes nothing");
    let long = "x".repeat(32_768);
    let r = alter(
        &mut ctx,
        vec![res(TOPIC, "mytopic", &[("retention.ms", SET, Some(&long))])],
        false,
    );
    assert_eq!(
        results(&r),
        [err(
            TOPIC,
            "mytopic",
            errors::INVALID_CONFIG,
            "The configuration value cannot be added because it exceeds the maximum value size \
             of 32767 bytes."
        )]
    );
}

/// KAFKA-14136: a BROKER resource always writes its records, even without a change; the
/// controller checks only the broker's name.
#[test]
fn broker_configs_always_write_and_check_only_the_name() {
    let mut ctx = ctx_with_topic();
    let set = vec![res(
        BROKER,
        "",
        &[("log.cleaner.backoff.ms", SET, Some("20000"))],
    )];
    for _ in 0..2 {
        let before = ctx.log.end();
        let r = alter(&mut ctx, set.clone(), false);
        assert_eq!(results(&r), [ok(BROKER, "")]);
        assert_eq!(ctx.log.end(), before + 1, "written again, unchanged");
    }
    let r = alter(
        &mut ctx,
        vec![
            res(BROKER, "abc", &[("x", SET, Some("1"))]),
            res(BROKER, "-1", &[("x", SET, Some("1"))]),
            res(BROKER, "0", &[("log.retention.ms", SET, Some("abc"))]),
            // The active controller's own id is a node too; 9 is nothing.
            res(BROKER, "1", &[("x", SET, Some("1"))]),
            res(BROKER, "9", &[("x", SET, Some("1"))]),
        ],
        false,
    );
    let mut expected = vec![
        err(
            BROKER,
            "abc",
            errors::INVALID_REQUEST,
            "Unable to parse broker name as a base 10 number.",
        ),
        err(
            BROKER,
            "-1",
            errors::INVALID_REQUEST,
            "Invalid negative broker ID.",
        ),
        ok(BROKER, "0"),
    ];
    expected.push(ok(BROKER, "1"));
    expected.push(err(BROKER, "9", 102, "No node with id 9 found."));
    expected.sort();
    assert_eq!(results(&r), expected);
    assert_eq!(
        stored(&ctx, BROKER, "0", "log.retention.ms").as_deref(),
        Some("abc")
    );
}

/// With ELR on (Kafka 4.1's default): broker-level min.insync.replicas is refused, the
/// cluster-level one cannot be removed, and a change clears the ELRs (ClearElrRecord).
#[test]
fn min_insync_replicas_rules_with_elr() {
    let mut ctx = Ctx::with_bootstrap(
        crate::controller::ControllerConfig::new(1, super::context::CLUSTER_ID),
        vec![
            bytes::Bytes::from(crate::records::feature_level::feature_level_record(
                "metadata.version",
                27,
            )),
            bytes::Bytes::from(crate::records::feature_level::feature_level_record(
                "eligible.leader.replicas.version",
                1,
            )),
        ],
    );
    ctx.register_unfenced(0, None);
    let t = topic("t", 1, 1).with_configs(vec![topic_config("min.insync.replicas", Some("1"))]);
    assert_eq!(ctx.create_topics(vec![t], false).topics[0].error_code, 0);
    let r = alter(
        &mut ctx,
        vec![
            res(BROKER, "0", &[("min.insync.replicas", DELETE, None)]),
            res(BROKER, "", &[("min.insync.replicas", DELETE, None)]),
        ],
        false,
    );
    assert_eq!(
        results(&r),
        [
            err(
                BROKER,
                "",
                errors::INVALID_CONFIG,
                "Cluster-level min.insync.replicas cannot be removed while ELR is enabled."
            ),
            err(
                BROKER,
                "0",
                errors::INVALID_CONFIG,
                "Broker-level min.insync.replicas cannot be altered while ELR is enabled."
            ),
        ]
    );
    let before = ctx.log.end();
    let r = alter(
        &mut ctx,
        vec![res(TOPIC, "t", &[("min.insync.replicas", SET, Some("2"))])],
        false,
    );
    assert_eq!(results(&r), [ok(TOPIC, "t")]);
    assert_eq!(
        ctx.log.end(),
        before + 2,
        "ConfigRecord then ClearElrRecord"
    );
}

/// CLIENT_METRICS and GROUP resources: Kafka's keys and bounds.
#[test]
fn client_metrics_and_group_configs() {
    let mut ctx = ctx_with_topic();
    let r = alter(
        &mut ctx,
        vec![
            res(CLIENT_METRICS, "sub", &[("interval.ms", SET, Some("50"))]),
            res(CLIENT_METRICS, "sub2", &[("nope", SET, Some("1"))]),
            res(
                CLIENT_METRICS,
                "sub3",
                &[
                    ("match", SET, Some("client_id=app.*")),
                    ("interval.ms", SET, Some("1000")),
                ],
            ),
            res(CLIENT_METRICS, "sub4", &[("metrics", APPEND, Some("a"))]),
            res(
                GROUP,
                "g",
                &[("consumer.session.timeout.ms", SET, Some("30000"))],
            ),
            res(
                GROUP,
                "g2",
                &[("consumer.heartbeat.interval.ms", SET, Some("6000"))],
            ),
            res(GROUP, "g3", &[("nope", SET, Some("1"))]),
        ],
        false,
    );
    let mut expected =
        vec![
        err(
            CLIENT_METRICS,
            "sub",
            errors::INVALID_REQUEST,
            "Invalid value 50 for interval.ms, interval must be between 100 and 3600000 (1 hour)",
        ),
        err(
            CLIENT_METRICS,
            "sub2",
            errors::INVALID_REQUEST,
            "Unknown client metrics configuration: nope",
        ),
        ok(CLIENT_METRICS, "sub3"),
        err(
            CLIENT_METRICS,
            "sub4",
            errors::INVALID_CONFIG,
            "Can't APPEND to key metrics because its type is not LIST.",
        ),
        err(
            GROUP,
            "g",
            errors::INVALID_CONFIG,
            "consumer.session.timeout.ms must be greater than or equal to \
             group.consumer.min.session.timeout.ms",
        ),
        ok(GROUP, "g2"),
        err(GROUP, "g3", errors::INVALID_CONFIG, "Unknown group config name: nope"),
    ];
    expected.sort();
    assert_eq!(results(&r), expected);
    assert_eq!(
        stored(&ctx, CLIENT_METRICS, "sub3", "interval.ms").as_deref(),
        Some("1000")
    );
    assert_eq!(
        stored(&ctx, GROUP, "g2", "consumer.heartbeat.interval.ms").as_deref(),
        Some("6000")
    );
}

/// A topic's configs take effect: min.insync.replicas set dynamically is what elections and
/// ELR tracking read, and deleting a topic drops them.
#[test]
fn dynamic_topic_configs_are_in_the_image_until_the_topic_goes() {
    let mut ctx = ctx_with_topic();
    alter(
        &mut ctx,
        vec![res(
            TOPIC,
            "mytopic",
            &[("unclean.leader.election.enable", SET, Some("true"))],
        )],
        false,
    );
    assert_eq!(
        stored(&ctx, TOPIC, "mytopic", "unclean.leader.election.enable").as_deref(),
        Some("true")
    );
    let req = kafka_protocol::messages::DeleteTopicsRequest::default()
        .with_topic_names(vec![kafka_protocol::messages::TopicName(s("mytopic"))]);
    ctx.call(RequestBody::DeleteTopics(req), 5);
    assert_eq!(
        stored(&ctx, TOPIC, "mytopic", "unclean.leader.election.enable"),
        None
    );
}

/// The legacy AlterConfigs puts a resource's set in a `new HashMap<>()` too: its records come
/// in that map's order (differential fuzz against 4.1.2).
#[test]
fn legacy_config_records_come_in_kafkas_hash_map_order() {
    let mut ctx = ctx_with_topic();
    let end = ctx.log.end();
    let configs = [
        "log.cleaner.threads",
        "num.io.threads",
        "no.such.broker.config",
    ];
    let req = AlterConfigsRequest::default().with_resources(vec![LegacyResource::default()
        .with_resource_type(BROKER)
        .with_resource_name(s(""))
        .with_configs(
            configs
                .iter()
                .map(|k| {
                    LegacyConfig::default()
                        .with_name(s(k))
                        .with_value(Some(s("2")))
                })
                .collect(),
        )]);
    match ctx.call(RequestBody::AlterConfigs(req), 2) {
        ResponseBody::AlterConfigs(r) => assert_eq!(r.responses[0].error_code, 0),
        other => panic!("{other:?}"),
    }
    let names: Vec<String> = ctx
        .log
        .records_from(end)
        .into_iter()
        .filter_map(|r| match r {
            crate::metadata::record::MetadataRecord::Config(c) => Some(c.name),
            _ => None,
        })
        .collect();
    assert_eq!(
        names,
        [
            "num.io.threads",
            "no.such.broker.config",
            "log.cleaner.threads"
        ]
    );
}

/// Kafka's ControllerApis puts a resource's alterations in a `new HashMap<>()`, and
/// ConfigurationControlManager writes (and checks) them in that map's order: by String hash
/// bucket, not by name or request order (differential fuzz against 4.1.2).
#[test]
fn config_records_of_one_resource_come_in_kafkas_hash_map_order() {
    let mut ctx = ctx_with_topic();
    let end = ctx.log.end();
    let r = alter(
        &mut ctx,
        vec![res(
            BROKER,
            "",
            &[
                ("log.cleaner.threads", SET, Some("2")),
                ("num.io.threads", SET, Some("4")),
                ("no.such.broker.config", SET, Some("1")),
                ("log.cleaner.threads", SET, Some("3")),
            ],
        )],
        false,
    );
    assert_eq!(results(&r), vec![ok(BROKER, "")]);
    let names: Vec<(String, Option<String>)> = ctx
        .log
        .records_from(end)
        .into_iter()
        .filter_map(|r| match r {
            crate::metadata::record::MetadataRecord::Config(c) => Some((c.name, c.value)),
            _ => None,
        })
        .collect();
    let expected = [
        ("num.io.threads", "4"),
        ("no.such.broker.config", "1"),
        ("log.cleaner.threads", "3"),
    ];
    assert_eq!(
        names,
        expected
            .iter()
            .map(|(k, v)| (k.to_string(), Some(v.to_string())))
            .collect::<Vec<_>>()
    );
}

/// The configs a CreateTopics answer lists fall back, as Kafka's
/// `KafkaConfigSchema.resolveEffectiveTopicConfig` does, to the topic config's broker
/// synonyms (`log.retention.ms`, then `log.retention.minutes` and `log.retention.hours` in
/// milliseconds, ...) set for this node, then for the cluster, then in the static
/// configuration (differential fuzz against 4.1.2: a cluster `log.retention.ms` showed as the
/// default `retention.ms`).
#[test]
fn created_topic_configs_come_from_broker_synonyms() {
    let mut cfg = crate::controller::ControllerConfig::new(1, super::context::CLUSTER_ID);
    cfg.rng_seed = 42;
    cfg.static_properties = crate::common::static_properties::StaticProperties::new(
        [("log.roll.hours".to_string(), " 2 ".to_string())].into(),
    );
    let mut ctx = Ctx::with_config(cfg, 27);
    ctx.register_unfenced(1, None);
    let r = alter(
        &mut ctx,
        vec![res(
            BROKER,
            "",
            &[
                ("log.retention.hours", SET, Some("3")),
                ("log.cleanup.policy", SET, Some("compact")),
            ],
        )],
        false,
    );
    assert_eq!(results(&r), vec![ok(BROKER, "")]);
    let r = alter(
        &mut ctx,
        vec![res(
            BROKER,
            "1",
            &[("log.retention.minutes", SET, Some("x"))],
        )],
        false,
    );
    assert_eq!(results(&r), vec![ok(BROKER, "1")]);
    let created = ctx.create_topic("t", 1, 1);
    let configs = created.topics[0].configs.clone().unwrap_or_default();
    let of = |name: &str| {
        configs.iter().find(|c| c.name.as_str() == name).map(|c| {
            (
                c.value.as_deref().unwrap_or("").to_string(),
                c.config_source,
            )
        })
    };
    // This node's unparsable minutes (0) come before the cluster's hours.
    assert_eq!(of("retention.ms"), Some(("0".to_string(), 2)));
    assert_eq!(of("cleanup.policy"), Some(("compact".to_string(), 3)));
    assert_eq!(of("segment.ms"), Some(("7200000".to_string(), 4)));
    assert_eq!(of("segment.bytes"), Some(("1073741824".to_string(), 5)));
}

/// The broker-level values are worked out once a request and each topic's own values laid
/// over them (#41): a topic's value is its own, and never reaches the next topic's answer.
#[test]
fn each_created_topic_answers_its_own_configs() {
    let mut ctx = Ctx::active(27);
    ctx.register_unfenced(0, None);
    let own = topic("own", 1, 1).with_configs(vec![topic_config("retention.ms", Some("5"))]);
    let plain = topic("plain", 1, 1);
    let r = ctx.create_topics(vec![own, plain], false);
    let retention = |i: usize| {
        let configs = r.topics[i].configs.clone().unwrap_or_default();
        configs
            .iter()
            .find(|c| c.name.as_str() == "retention.ms")
            .map(|c| {
                (
                    c.value.as_deref().unwrap_or("").to_string(),
                    c.config_source,
                )
            })
    };
    assert_eq!(
        (r.topics[0].error_code, r.topics[1].error_code),
        (0, 0),
        "{r:?}"
    );
    assert_eq!(r.topics[0].name.0.as_str(), "own");
    assert_eq!(retention(0), Some(("5".to_string(), 1)));
    assert_eq!(r.topics[1].name.0.as_str(), "plain");
    assert_eq!(retention(1), Some(("604800000".to_string(), 5)));
    assert_eq!(
        r.topics[0].configs.as_ref().map(Vec::len),
        r.topics[1].configs.as_ref().map(Vec::len)
    );
}
