//! The config keys Kafka 4.4.0 adds since 4.1.2, per release presented: the 17 GROUP keys
//! (share-group dead-letter queue, KIP-1191; streams-group and assignor settings) and the four
//! TOPIC keys, accepted and checked as 4.4's `GroupConfig.validate` / `LogConfig.validate`
//! check them, unknown to 4.1. Every expected message was printed by those methods of the
//! 4.4.0 jars (a default controller `KafkaConfig` for the broker-level bounds).
#![allow(clippy::unwrap_used)]

use bytes::Bytes;
use kafka_protocol::messages::IncrementalAlterConfigsResponse;

use super::configuration::{alter, res, s, SET};
use super::context::{topic, topic_config, Ctx, CLUSTER_ID};
use crate::codec::versions::Release;
use crate::codec::{RequestBody, ResponseBody};
use crate::controller::configs::resource::{GROUP, TOPIC};
use crate::controller::{errors, ControllerConfig};
use crate::records::feature_level::feature_level_record;

/// An active controller presenting `release` with broker 0 and topic `t`, at
/// metadata.version 4.1-IV1 for both (the keys follow the release, not the level).
pub(super) fn ctx(release: Release) -> Ctx {
    let mut cfg = ControllerConfig::new(1, CLUSTER_ID);
    cfg.rng_seed = 42;
    cfg.release = release;
    let mv = crate::common::release::mv::V4_1_IV1;
    let mut ctx = Ctx::with_bootstrap(
        cfg,
        vec![Bytes::from(feature_level_record("metadata.version", mv))],
    );
    ctx.register_unfenced(0, None);
    assert_eq!(ctx.create_topic("t", 1, 1).topics[0].error_code, 0);
    ctx
}

/// (code, message) of altering one resource with `pairs`.
pub(super) fn alter_one(
    ctx: &mut Ctx,
    kind: i8,
    name: &str,
    pairs: &[(&str, &str)],
) -> (i16, String) {
    let ops: Vec<(&str, i8, Option<&str>)> =
        pairs.iter().map(|(k, v)| (*k, SET, Some(*v))).collect();
    let r: IncrementalAlterConfigsResponse = alter(ctx, vec![res(kind, name, &ops)], true);
    let a = &r.responses[0];
    (
        a.error_code,
        a.error_message
            .as_ref()
            .map(|m| m.to_string())
            .unwrap_or_default(),
    )
}

/// The 17 GROUP keys new in 4.4 and a value 4.4 accepts for each.
const NEW_GROUP_KEYS: &[(&str, &str)] = &[
    ("consumer.assignment.interval.ms", "1000"),
    ("consumer.assignor.offload.enable", "false"),
    ("errors.deadletterqueue.copy.record.enable", "true"),
    ("errors.deadletterqueue.topic.name", "dlq"),
    ("share.assignment.interval.ms", "15000"),
    ("share.assignor.offload.enable", "TRUE"),
    ("share.delivery.count.limit", "10"),
    ("share.partition.max.record.locks", "4000"),
    ("share.renew.acknowledge.enable", "false"),
    ("streams.acceptable.recovery.lag", "99999999999"),
    ("streams.assignment.interval.ms", "0"),
    ("streams.assignor.name", " sticky "),
    ("streams.assignor.offload.enable", "true"),
    ("streams.initial.rebalance.delay.ms", "999999"),
    ("streams.num.warmup.replicas", "20"),
    ("streams.rack.aware.assignment.tags", "zone, rack"),
    ("streams.task.offset.interval.ms", "15000"),
];

#[test]
fn new_group_keys_are_accepted_by_4_4_and_unknown_to_4_1() {
    assert_eq!(NEW_GROUP_KEYS.len(), 17);
    let mut c44 = ctx(Release::Kafka4_4);
    let mut c41 = ctx(Release::Kafka4_1);
    for (k, v) in NEW_GROUP_KEYS {
        assert_eq!(
            alter_one(&mut c44, GROUP, "g", &[(k, v)]),
            (0, String::new()),
            "{k}"
        );
        assert_eq!(
            alter_one(&mut c41, GROUP, "g", &[(k, v)]),
            (
                errors::INVALID_CONFIG,
                format!("Unknown group config name: {k}")
            ),
            "{k}"
        );
    }
    // All at once, written.
    let ops: Vec<(&str, i8, Option<&str>)> = NEW_GROUP_KEYS
        .iter()
        .map(|(k, v)| (*k, SET, Some(*v)))
        .collect();
    let r = alter(&mut c44, vec![res(GROUP, "g", &ops)], false);
    assert_eq!(r.responses[0].error_code, 0);
    let stored = c44
        .image()
        .configs
        .get(&crate::metadata::image::ConfigResource {
            resource_type: GROUP,
            resource_name: "g".into(),
        })
        .unwrap();
    assert_eq!(stored.len(), 17);
}

/// Each refusal of 4.4's GroupConfig.validate: ConfigDef types and bounds first (in
/// definition order), then the broker-level bounds of the keys set, the assignor, the DLQ
/// topic's name.
#[test]
fn group_config_validate_of_4_4() {
    let mut c = ctx(Release::Kafka4_4);
    let cases: &[(&[(&str, &str)], &str)] = &[
        (
            &[("share.delivery.count.limit", "1")],
            "Invalid value 1 for configuration share.delivery.count.limit: Value must be at least 2",
        ),
        (
            &[("share.delivery.count.limit", "+1")],
            "Invalid value 1 for configuration share.delivery.count.limit: Value must be at least 2",
        ),
        (
            &[("share.delivery.count.limit", "11")],
            "share.delivery.count.limit must be in the range 2 to 10 inclusive.",
        ),
        (
            &[("share.delivery.count.limit", "3000000000")],
            "Invalid value 3000000000 for configuration share.delivery.count.limit: Not a number \
             of type INT",
        ),
        (
            &[("share.partition.max.record.locks", "4001")],
            "share.partition.max.record.locks must be in the range 100 to 4000 inclusive.",
        ),
        (
            &[("share.renew.acknowledge.enable", " x ")],
            "Invalid value  x  for configuration share.renew.acknowledge.enable: Expected value \
             to be either true or false",
        ),
        (
            &[("consumer.assignment.interval.ms", "16000")],
            "consumer.assignment.interval.ms must be in the range 0 to 15000 inclusive.",
        ),
        (
            &[("streams.initial.rebalance.delay.ms", "-5")],
            "Invalid value -5 for configuration streams.initial.rebalance.delay.ms: Value must \
             be at least 0",
        ),
        (
            &[("streams.rack.aware.assignment.tags", "a , a")],
            "streams.rack.aware.assignment.tags must not contain duplicate tag keys.",
        ),
        (
            &[("streams.rack.aware.assignment.tags", ",")],
            "streams.rack.aware.assignment.tags must not contain duplicate tag keys.",
        ),
        (
            &[("streams.rack.aware.assignment.tags", "a,b,")],
            "Configuration 'streams.rack.aware.assignment.tags' values must not be empty.",
        ),
        (
            &[("streams.task.offset.interval.ms", "14999")],
            "streams.task.offset.interval.ms must be greater than or equal to 15000",
        ),
        (
            &[("streams.num.warmup.replicas", "21")],
            "streams.num.warmup.replicas must be less than or equal to 20",
        ),
        (
            &[("streams.acceptable.recovery.lag", "x")],
            "Invalid value x for configuration streams.acceptable.recovery.lag: Not a number of \
             type LONG",
        ),
        (
            &[("streams.assignor.name", "greedy")],
            "streams.assignor.name 'greedy' is not a registered task assignor. Registered \
             assignors are: [sticky].",
        ),
        (
            &[("errors.deadletterqueue.topic.name", " __x")],
            "errors.deadletterqueue.topic.name: DLQ topic name must not start with '__'",
        ),
        (
            &[("errors.deadletterqueue.copy.record.enable", "1")],
            "Invalid value 1 for configuration errors.deadletterqueue.copy.record.enable: \
             Expected value to be either true or false",
        ),
        // Keys of 4.1 get 4.4's bound messages.
        (
            &[("consumer.heartbeat.interval.ms", "4000")],
            "consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.",
        ),
        (
            &[("streams.num.standby.replicas", "3")],
            "streams.num.standby.replicas must be less than or equal to 2",
        ),
        (
            &[("share.isolation.level", " foo ")],
            "Invalid value foo for configuration share.isolation.level: String must be one of: \
             read_committed, read_uncommitted",
        ),
        // Duplicate tags are found before any value is parsed.
        (
            &[
                ("share.delivery.count.limit", "1"),
                ("streams.rack.aware.assignment.tags", "a,a"),
            ],
            "streams.rack.aware.assignment.tags must not contain duplicate tag keys.",
        ),
        // Parsing comes before the bounds, in definition order.
        (
            &[
                ("share.delivery.count.limit", "11"),
                ("consumer.heartbeat.interval.ms", "x"),
            ],
            "Invalid value x for configuration consumer.heartbeat.interval.ms: Not a number of \
             type INT",
        ),
        (
            &[
                ("share.delivery.count.limit", "11"),
                ("consumer.heartbeat.interval.ms", "1"),
            ],
            "consumer.heartbeat.interval.ms must be in the range 5000 to 15000 inclusive.",
        ),
        (
            &[("foo.bar", "1")],
            "Unknown group config name: foo.bar",
        ),
    ];
    for (pairs, message) in cases {
        assert_eq!(
            alter_one(&mut c, GROUP, "g", pairs),
            (errors::INVALID_CONFIG, message.to_string()),
            "{pairs:?}"
        );
    }
    for ok in [
        &[("streams.rack.aware.assignment.tags", "  ")][..],
        &[("errors.deadletterqueue.topic.name", "")],
        &[
            ("consumer.session.timeout.ms", "45000"),
            ("consumer.heartbeat.interval.ms", "15000"),
        ],
    ] {
        assert_eq!(
            alter_one(&mut c, GROUP, "g", ok),
            (0, String::new()),
            "{ok:?}"
        );
    }
}

/// 4.1 bounds every key with its default whether set or not and names the broker bound;
/// 4.4 bounds the keys set and gives the range.
#[test]
fn group_bound_messages_per_release() {
    let pairs = &[("consumer.session.timeout.ms", "30000")];
    assert_eq!(
        alter_one(&mut ctx(Release::Kafka4_1), GROUP, "g", pairs),
        (
            errors::INVALID_CONFIG,
            "consumer.session.timeout.ms must be greater than or equal to \
             group.consumer.min.session.timeout.ms"
                .to_string()
        )
    );
    assert_eq!(
        alter_one(&mut ctx(Release::Kafka4_4), GROUP, "g", pairs),
        (
            errors::INVALID_CONFIG,
            "consumer.session.timeout.ms must be in the range 45000 to 60000 inclusive."
                .to_string()
        )
    );
}

/// The four TOPIC keys new in 4.4 and a value it accepts for each.
const NEW_TOPIC_KEYS: &[(&str, &str)] = &[
    ("errors.deadletterqueue.group.enable", "true"),
    ("max.decompressed.message.bytes", "1048576"),
    ("remote.copy.lag.bytes", "1000"),
    ("remote.copy.lag.ms", "-1"),
];

#[test]
fn new_topic_keys_per_release() {
    let mut c44 = ctx(Release::Kafka4_4);
    let mut c41 = ctx(Release::Kafka4_1);
    for (k, v) in NEW_TOPIC_KEYS {
        assert_eq!(
            alter_one(&mut c44, TOPIC, "t", &[(k, v)]),
            (0, String::new()),
            "{k}"
        );
        let unknown = (
            errors::INVALID_CONFIG,
            format!("Unknown topic config name: {k}"),
        );
        assert_eq!(alter_one(&mut c41, TOPIC, "t", &[(k, v)]), unknown, "{k}");
        // CreateTopics: accepted and reported as the topic's by 4.4, refused by 4.1.
        let t = topic(&format!("new-{k}"), 1, 1).with_configs(vec![topic_config(k, Some(v))]);
        let r = c44.create_topics(vec![t.clone()], false);
        assert_eq!(r.topics[0].error_code, 0, "{k}");
        let configs = r.topics[0].configs.as_ref().unwrap();
        let c = configs.iter().find(|c| c.name.as_str() == *k).unwrap();
        assert_eq!((c.value.as_deref(), c.config_source), (Some(*v), 1));
        let r = c41.create_topics(vec![t], false);
        assert_eq!(
            (r.topics[0].error_code, r.topics[0].error_message.as_deref()),
            (unknown.0, Some(unknown.1.as_str()))
        );
    }
    // 4.1's effective configs do not list them; 4.4's list them with their defaults.
    let r = c41.create_topics(vec![topic("plain", 1, 1)], false);
    let names: Vec<&str> = r.topics[0]
        .configs
        .as_ref()
        .unwrap()
        .iter()
        .map(|c| c.name.as_str())
        .collect();
    assert!(NEW_TOPIC_KEYS.iter().all(|(k, _)| !names.contains(k)));
    let r = c44.create_topics(vec![topic("plain", 1, 1)], false);
    let defaults: Vec<(String, String)> = r.topics[0]
        .configs
        .as_ref()
        .unwrap()
        .iter()
        .filter(|c| NEW_TOPIC_KEYS.iter().any(|(k, _)| *k == c.name.as_str()))
        .map(|c| {
            (
                c.name.to_string(),
                c.value.as_deref().unwrap_or("").to_string(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = [
        ("errors.deadletterqueue.group.enable", "false"),
        ("max.decompressed.message.bytes", "2147483639"),
        ("remote.copy.lag.bytes", "-1"),
        ("remote.copy.lag.ms", "0"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(defaults, want);
}

/// LogConfig's ConfigDef checks of the new keys (4.4.0's messages).
#[test]
fn new_topic_key_values_are_checked_as_4_4_checks_them() {
    let mut c = ctx(Release::Kafka4_4);
    let cases = [
        (
            "max.decompressed.message.bytes",
            "0",
            "Invalid value 0 for configuration max.decompressed.message.bytes: Value must be at \
             least 1",
        ),
        (
            "max.decompressed.message.bytes",
            " 0 ",
            "Invalid value 0 for configuration max.decompressed.message.bytes: Value must be at \
             least 1",
        ),
        (
            "max.decompressed.message.bytes",
            "2147483640",
            "Invalid value 2147483640 for configuration max.decompressed.message.bytes: Value \
             must be no more than 2147483639",
        ),
        (
            "remote.copy.lag.ms",
            "-2",
            "Invalid value -2 for configuration remote.copy.lag.ms: Value must be at least -1",
        ),
        (
            "remote.copy.lag.ms",
            "x",
            "Invalid value x for configuration remote.copy.lag.ms: Not a number of type LONG",
        ),
        (
            "remote.copy.lag.bytes",
            "-2",
            "Invalid value -2 for configuration remote.copy.lag.bytes: Value must be at least -1",
        ),
        (
            "errors.deadletterqueue.group.enable",
            "maybe",
            "Invalid value maybe for configuration errors.deadletterqueue.group.enable: \
             Expected value to be either true or false",
        ),
    ];
    for (k, v, message) in cases {
        assert_eq!(
            alter_one(&mut c, TOPIC, "t", &[(k, v)]),
            (errors::INVALID_CONFIG, message.to_string()),
            "{k}={v}"
        );
        let t = topic("x", 1, 1).with_configs(vec![topic_config(k, Some(v))]);
        let r = c.create_topics(vec![t], false);
        assert_eq!(
            r.topics[0].error_message.as_deref(),
            Some(message),
            "{k}={v}"
        );
    }
}

/// A 4.4 controller's topic describe lists the new keys, with their broker synonyms
/// (`ServerTopicConfigSynonyms` of 4.4.0) and defaults; 4.1's does not.
#[test]
fn topic_describe_lists_the_new_keys_when_presenting_4_4() {
    use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
    let describe = |c: &mut Ctx| {
        let req = kafka_protocol::messages::DescribeConfigsRequest::default()
            .with_include_synonyms(true)
            .with_resources(vec![DescribeConfigsResource::default()
                .with_resource_type(TOPIC)
                .with_resource_name(s("t"))
                .with_configuration_keys(None)]);
        match c.call(RequestBody::DescribeConfigs(req), 4) {
            ResponseBody::DescribeConfigs(r) => r.results[0].configs.clone(),
            other => panic!("{other:?}"),
        }
    };
    let c41 = describe(&mut ctx(Release::Kafka4_1));
    assert!(c41
        .iter()
        .all(|e| NEW_TOPIC_KEYS.iter().all(|(k, _)| *k != e.name.as_str())));
    let mut c = ctx(Release::Kafka4_4);
    assert_eq!(
        alter_one(&mut c, TOPIC, "t", &[("remote.copy.lag.ms", "5")]).0,
        0
    );
    alter(
        &mut c,
        vec![res(TOPIC, "t", &[("remote.copy.lag.ms", SET, Some("5"))])],
        false,
    );
    let c44 = describe(&mut c);
    assert_eq!(c44.len(), c41.len() + 4);
    let shown = |name: &str| {
        let e = c44.iter().find(|e| e.name.as_str() == name).unwrap();
        let synonyms: Vec<(String, String, i8)> = e
            .synonyms
            .iter()
            .map(|y| {
                (
                    y.name.to_string(),
                    y.value.as_deref().unwrap_or("").to_string(),
                    y.source,
                )
            })
            .collect();
        (
            e.value.as_deref().unwrap_or("").to_string(),
            e.config_source,
            e.config_type,
            synonyms,
        )
    };
    let syn = |n: &str, v: &str, src: i8| (n.to_string(), v.to_string(), src);
    assert_eq!(
        shown("remote.copy.lag.ms"),
        (
            "5".to_string(),
            1,
            5,
            vec![
                syn("remote.copy.lag.ms", "5", 1),
                syn("log.remote.copy.lag.ms", "0", 5)
            ]
        )
    );
    assert_eq!(
        shown("max.decompressed.message.bytes"),
        (
            "2147483639".to_string(),
            5,
            3,
            vec![syn("max.decompressed.message.bytes", "2147483639", 5)]
        )
    );
    assert_eq!(
        shown("remote.copy.lag.bytes"),
        (
            "-1".to_string(),
            5,
            5,
            vec![syn("log.remote.copy.lag.bytes", "-1", 5)]
        )
    );
    assert_eq!(
        shown("errors.deadletterqueue.group.enable"),
        ("false".to_string(), 5, 1, Vec::new())
    );
}
