//! Topic config definitions (the `LogConfig` topic keys of Kafka 4.1 and 4.4): names, types,
//! defaults and the release that added each, for the checks CreateTopics and AlterConfigs make,
//! the effective configs CreateTopics answers with and DescribeConfigs of a topic. Every
//! lookup names the release presented: a key newer than it is unknown, as on that release.

use std::collections::BTreeMap;

use crate::common::release::Release;
use crate::metadata::image::{ConfigResource, MetadataImage};

/// A config's type (Kafka's `ConfigDef.Type`), as far as validation needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigType {
    /// 32-bit integer.
    Int,
    /// 64-bit integer.
    Long,
    /// Floating point.
    Double,
    /// `true` / `false`.
    Boolean,
    /// Free text, or one of a set.
    String,
    /// Comma-separated list.
    List,
}

impl ConfigType {
    fn name(self) -> &'static str {
        match self {
            Self::Int => "INT",
            Self::Long => "LONG",
            Self::Double => "DOUBLE",
            Self::Boolean => "BOOLEAN",
            Self::String => "STRING",
            Self::List => "LIST",
        }
    }
}

/// One topic config key.
#[derive(Debug, Clone, Copy)]
pub struct TopicConfigDef {
    /// Key.
    pub name: &'static str,
    /// Type.
    pub kind: ConfigType,
    /// Kafka 4.1's default, as `ConfigDef.convertToString` shows it.
    pub default: &'static str,
    /// Lowest value (numbers), Kafka's `atLeast`.
    pub at_least: Option<i64>,
    /// Highest value (numbers), Kafka's `between`.
    pub at_most: Option<i64>,
    /// Allowed values (strings and lists), Kafka's `in`/`ValidList`.
    pub one_of: &'static [&'static str],
    /// The first release whose `LogConfig` has the key (with this definition).
    pub since: Release,
    /// The last release whose `LogConfig` defines the key this way.
    pub until: Release,
}

impl TopicConfigDef {
    /// The same key, added by `release` (`LogConfig` of 4.0.2 … 4.4.0 diffed).
    const fn since(self, release: Release) -> Self {
        TopicConfigDef {
            since: release,
            ..self
        }
    }
    /// The same key, defined this way up to `release` only.
    const fn until(self, release: Release) -> Self {
        TopicConfigDef {
            until: release,
            ..self
        }
    }
}

const fn def(
    name: &'static str,
    kind: ConfigType,
    default: &'static str,
    at_least: Option<i64>,
) -> TopicConfigDef {
    TopicConfigDef {
        name,
        kind,
        default,
        at_least,
        at_most: None,
        one_of: &[],
        since: Release::Kafka4_0,
        until: Release::NEWEST,
    }
}

const fn between(
    name: &'static str,
    kind: ConfigType,
    default: &'static str,
    min: i64,
    max: i64,
) -> TopicConfigDef {
    TopicConfigDef {
        name,
        kind,
        default,
        at_least: Some(min),
        at_most: Some(max),
        one_of: &[],
        since: Release::Kafka4_0,
        until: Release::NEWEST,
    }
}

const fn one_of(
    name: &'static str,
    kind: ConfigType,
    default: &'static str,
    values: &'static [&'static str],
) -> TopicConfigDef {
    TopicConfigDef {
        name,
        kind,
        default,
        at_least: None,
        at_most: None,
        one_of: values,
        since: Release::Kafka4_0,
        until: Release::NEWEST,
    }
}

const MAX_LONG: &str = "9223372036854775807";

/// Every topic config key of Kafka 4.0 to 4.4 (each release's `LogConfig` read from its
/// jar), sorted by name; a key whose definition changed has one row per definition.
const TOPIC_CONFIGS: &[TopicConfigDef] = &[
    one_of(
        "cleanup.policy",
        ConfigType::List,
        "delete",
        &["compact", "delete"],
    ),
    // Checked by GZIP_LEVEL_MESSAGE's rule, not a range.
    def("compression.gzip.level", ConfigType::Int, "-1", None),
    between("compression.lz4.level", ConfigType::Int, "9", 1, 17),
    one_of(
        "compression.type",
        ConfigType::String,
        "producer",
        &["uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"],
    ),
    between("compression.zstd.level", ConfigType::Int, "3", -131_072, 22),
    def("delete.retention.ms", ConfigType::Long, "86400000", Some(0)),
    // KIP-1191: whether a share group may write this topic's records to its dead-letter queue.
    def(
        "errors.deadletterqueue.group.enable",
        ConfigType::Boolean,
        "false",
        None,
    )
    .since(Release::Kafka4_4),
    def("file.delete.delay.ms", ConfigType::Long, "60000", Some(0)),
    def("flush.messages", ConfigType::Long, MAX_LONG, Some(1)),
    def("flush.ms", ConfigType::Long, MAX_LONG, Some(0)),
    def(
        "follower.replication.throttled.replicas",
        ConfigType::List,
        "",
        None,
    ),
    def("index.interval.bytes", ConfigType::Int, "4096", Some(0)),
    // Kafka 4.1's internal override of segment.bytes' lower bound (tests use it).
    def("internal.segment.bytes", ConfigType::Int, "", None).since(Release::Kafka4_1),
    def(
        "leader.replication.throttled.replicas",
        ConfigType::List,
        "",
        None,
    ),
    def("local.retention.bytes", ConfigType::Long, "-2", Some(-2)),
    def("local.retention.ms", ConfigType::Long, "-2", Some(-2)),
    def("max.compaction.lag.ms", ConfigType::Long, MAX_LONG, Some(1)),
    between(
        "max.decompressed.message.bytes",
        ConfigType::Int,
        "2147483639",
        1,
        2_147_483_639,
    )
    .since(Release::Kafka4_2),
    def("max.message.bytes", ConfigType::Int, "1048588", Some(0)),
    def(
        "message.timestamp.after.max.ms",
        ConfigType::Long,
        "3600000",
        Some(0),
    ),
    def(
        "message.timestamp.before.max.ms",
        ConfigType::Long,
        MAX_LONG,
        Some(0),
    ),
    one_of(
        "message.timestamp.type",
        ConfigType::String,
        "CreateTime",
        &["CreateTime", "LogAppendTime"],
    ),
    between("min.cleanable.dirty.ratio", ConfigType::Double, "0.5", 0, 1),
    def("min.compaction.lag.ms", ConfigType::Long, "0", Some(0)),
    def("min.insync.replicas", ConfigType::Int, "1", Some(1)),
    def("preallocate", ConfigType::Boolean, "false", None),
    def("remote.copy.lag.bytes", ConfigType::Long, "-1", Some(-1)).since(Release::Kafka4_4),
    def("remote.copy.lag.ms", ConfigType::Long, "0", Some(-1)).since(Release::Kafka4_4),
    def(
        "remote.log.copy.disable",
        ConfigType::Boolean,
        "false",
        None,
    ),
    def(
        "remote.log.delete.on.disable",
        ConfigType::Boolean,
        "false",
        None,
    ),
    def("remote.storage.enable", ConfigType::Boolean, "false", None),
    def("retention.bytes", ConfigType::Long, "-1", None),
    def("retention.ms", ConfigType::Long, "604800000", Some(-1)),
    // Kafka 4.0 bounds it at 14 bytes; 4.1 raised the bound to 1 MiB (and added
    // internal.segment.bytes for tests that need smaller segments).
    def("segment.bytes", ConfigType::Int, "1073741824", Some(14)).until(Release::Kafka4_0),
    def(
        "segment.bytes",
        ConfigType::Int,
        "1073741824",
        Some(1_048_576),
    )
    .since(Release::Kafka4_1),
    def("segment.index.bytes", ConfigType::Int, "10485760", Some(4)),
    def("segment.jitter.ms", ConfigType::Long, "0", Some(0)),
    def("segment.ms", ConfigType::Long, "604800000", Some(1)),
    def(
        "unclean.leader.election.enable",
        ConfigType::Boolean,
        "false",
        None,
    ),
];

/// The keys in `LogConfig`'s definition order (4.4's; 4.1's lacks its new keys), the order
/// Kafka parses (and so refuses) them.
const DEFINITION_ORDER: &[&str] = &[
    "segment.bytes",
    "segment.ms",
    "segment.jitter.ms",
    "segment.index.bytes",
    "flush.messages",
    "flush.ms",
    "retention.bytes",
    "retention.ms",
    "max.message.bytes",
    "max.decompressed.message.bytes",
    "index.interval.bytes",
    "delete.retention.ms",
    "min.compaction.lag.ms",
    "max.compaction.lag.ms",
    "file.delete.delay.ms",
    "min.cleanable.dirty.ratio",
    "cleanup.policy",
    "unclean.leader.election.enable",
    "min.insync.replicas",
    "compression.type",
    "compression.gzip.level",
    "compression.lz4.level",
    "compression.zstd.level",
    "preallocate",
    "message.timestamp.type",
    "message.timestamp.before.max.ms",
    "message.timestamp.after.max.ms",
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
    "remote.storage.enable",
    "local.retention.ms",
    "local.retention.bytes",
    "remote.log.copy.disable",
    "remote.copy.lag.ms",
    "remote.copy.lag.bytes",
    "remote.log.delete.on.disable",
    "errors.deadletterqueue.group.enable",
    "internal.segment.bytes",
];

/// What Kafka's gzip level validator says.
const GZIP_LEVEL_MESSAGE: &str = "Value must be between 1 and 9 or equal to -1";

/// Kafka's `LogConfig.validate` for a topic's whole config set after a change (`all`, the
/// stored values with the change applied; `old`, the stored values): unknown names first,
/// then each value in definition order, then the rules between values. Remote storage is off
/// on a ferrokraft-served cluster's brokers by default, as in Kafka
/// (`remote.log.storage.system.enable=false`), so 4.4's remote copy lag rules, which apply
/// to topics with remote storage only, are never reached. INVALID_CONFIG's message when
/// refused.
pub fn validate_topic_configs(
    release: Release,
    all: &std::collections::BTreeMap<String, String>,
    old: Option<&std::collections::BTreeMap<String, String>>,
) -> Result<(), String> {
    if let Some(unknown) = all.keys().find(|k| topic_config(release, k).is_none()) {
        return Err(format!("Unknown topic config name: {unknown}"));
    }
    for name in DEFINITION_ORDER {
        if let Some(v) = all.get(*name) {
            validate_topic_config(release, name, v)?;
        }
    }
    let long = |k: &str| -> Option<i64> { all.get(k).and_then(|v| v.trim().parse().ok()) };
    let min_lag = long("min.compaction.lag.ms").unwrap_or(0);
    let max_lag = long("max.compaction.lag.ms").unwrap_or(i64::MAX);
    if min_lag > max_lag {
        return Err(format!(
            "conflict topic config setting min.compaction.lag.ms ({min_lag}) > \
             max.compaction.lag.ms ({max_lag})"
        ));
    }
    let is_true = |m: Option<&std::collections::BTreeMap<String, String>>, k: &str| {
        m.and_then(|m| m.get(k))
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    };
    if is_true(Some(all), "remote.storage.enable") {
        return Err(
            "Tiered Storage functionality is disabled in the broker. Topic cannot be \
                    configured with remote log storage."
                .into(),
        );
    }
    if is_true(old, "remote.storage.enable") && !is_true(Some(all), "remote.log.delete.on.disable")
    {
        return Err(
            "It is invalid to disable remote storage without deleting remote data. If \
                    you want to keep the remote data and turn to read only, please set \
                    `remote.storage.enable=true,remote.log.copy.disable=true`. If you want to \
                    disable remote storage and delete all remote data, please set \
                    `remote.storage.enable=false,remote.log.delete.on.disable=true`."
                .into(),
        );
    }
    Ok(())
}

/// Whether `name` is a topic config of type LIST (APPEND and SUBTRACT work on it).
pub fn is_list_topic_config(release: Release, name: &str) -> bool {
    topic_config(release, name).is_some_and(|d| d.kind == ConfigType::List)
}

/// The topic configs of `release`, sorted by name.
pub fn topic_configs(release: Release) -> impl Iterator<Item = &'static TopicConfigDef> {
    TOPIC_CONFIGS
        .iter()
        .filter(move |d| d.since <= release && release <= d.until)
}

/// The definition of `name`, if it is a topic config of `release`.
pub fn topic_config(release: Release, name: &str) -> Option<&'static TopicConfigDef> {
    topic_configs(release).find(|d| d.name == name)
}

/// Kafka's `ConfigDef` check of one value: INVALID_CONFIG's message when it is refused.
pub fn validate_topic_config(release: Release, name: &str, value: &str) -> Result<(), String> {
    let Some(d) = topic_config(release, name) else {
        return Err(format!("Unknown topic config name: {name}"));
    };
    let invalid =
        |reason: String| format!("Invalid value {value} for configuration {name}: {reason}");
    let trimmed = value.trim();
    let number = match d.kind {
        ConfigType::Int => Some(
            trimmed
                .parse::<i32>()
                .map(i64::from)
                .map_err(|_| invalid(format!("Not a number of type {}", d.kind.name())))?,
        ),
        ConfigType::Long => Some(
            trimmed
                .parse::<i64>()
                .map_err(|_| invalid(format!("Not a number of type {}", d.kind.name())))?,
        ),
        ConfigType::Double => {
            let v: f64 = trimmed
                .parse()
                .map_err(|_| invalid(format!("Not a number of type {}", d.kind.name())))?;
            if let Some(min) = d.at_least.filter(|m| v < *m as f64) {
                return Err(invalid(format!("Value must be at least {min}")));
            }
            if let Some(max) = d.at_most.filter(|m| v > *m as f64) {
                return Err(invalid(format!("Value must be no more than {max}")));
            }
            None
        }
        ConfigType::Boolean => {
            if !trimmed.eq_ignore_ascii_case("true") && !trimmed.eq_ignore_ascii_case("false") {
                return Err(invalid("Expected value to be either true or false".into()));
            }
            None
        }
        ConfigType::String => {
            if !d.one_of.is_empty() && !d.one_of.contains(&trimmed) {
                return Err(invalid(format!(
                    "String must be one of: {}",
                    d.one_of.join(", ")
                )));
            }
            None
        }
        ConfigType::List => {
            if !d.one_of.is_empty() {
                for item in trimmed.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    if !d.one_of.contains(&item) {
                        return Err(invalid(format!(
                            "String must be one of: {}",
                            d.one_of.join(", ")
                        )));
                    }
                }
            }
            None
        }
    };
    // A bound refuses the parsed value, which Kafka quotes as parsed (` 0 ` as `0`).
    let out_of_bounds =
        |n: i64, reason: String| format!("Invalid value {n} for configuration {name}: {reason}");
    if let (Some(n), Some(min)) = (number, d.at_least) {
        if n < min {
            return Err(out_of_bounds(n, format!("Value must be at least {min}")));
        }
    }
    if let (Some(n), Some(max)) = (number, d.at_most) {
        if n > max {
            return Err(out_of_bounds(
                n,
                format!("Value must be no more than {max}"),
            ));
        }
    }
    if name == "compression.gzip.level" && number.is_some_and(|n| n != -1 && !(1..=9).contains(&n))
    {
        return Err(invalid(GZIP_LEVEL_MESSAGE.into()));
    }
    if name.ends_with(".replication.throttled.replicas") {
        let items: Vec<&str> = if trimmed.is_empty() {
            Vec::new()
        } else {
            trimmed.split(',').map(str::trim).collect()
        };
        let replica = |s: &str| {
            s.split_once(':').is_some_and(|(p, b)| {
                !p.is_empty()
                    && !b.is_empty()
                    && p.chars().all(|c| c.is_ascii_digit())
                    && b.chars().all(|c| c.is_ascii_digit())
            })
        };
        if !(items == ["*"] || items.iter().all(|s| replica(s))) {
            return Err(format!(
                "Invalid value [{}] for configuration {name}: {name} must be the literal '*' or \
                 a list of replicas in the following format: \
                 [partitionId]:[brokerId],[partitionId]:[brokerId],...",
                items.join(", ")
            ));
        }
    }
    Ok(())
}

/// ConfigSource ids (`DescribeConfigsResponse.ConfigSource`).
pub mod source {
    /// Set on the topic.
    pub const TOPIC_CONFIG: i8 = 1;
    /// Set dynamically for this node.
    pub const DYNAMIC_BROKER_CONFIG: i8 = 2;
    /// Set dynamically as the cluster default.
    pub const DYNAMIC_DEFAULT_BROKER_CONFIG: i8 = 3;
    /// Set in this node's static configuration.
    pub const STATIC_BROKER_CONFIG: i8 = 4;
    /// Kafka's default.
    pub const DEFAULT_CONFIG: i8 = 5;
}

/// The broker configs a topic config falls back to, in Kafka's order
/// (`ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS`), each with the factor its value is
/// converted by (`ConfigSynonym.HOURS_TO_MILLISECONDS` / `MINUTES_TO_MILLISECONDS`; 1 keeps
/// the value as it is).
fn broker_synonyms(topic_key: &str) -> Vec<(&'static str, i64)> {
    const HOUR: i64 = 3_600_000;
    match topic_key {
        "retention.ms" => vec![
            ("log.retention.ms", 1),
            ("log.retention.minutes", 60_000),
            ("log.retention.hours", HOUR),
        ],
        "segment.ms" => vec![("log.roll.ms", 1), ("log.roll.hours", HOUR)],
        "segment.jitter.ms" => vec![("log.roll.jitter.ms", 1), ("log.roll.jitter.hours", HOUR)],
        "flush.ms" => vec![
            ("log.flush.interval.ms", 1),
            ("log.flush.scheduler.interval.ms", 1),
        ],
        _ => super::describe::primary_broker_synonym(topic_key)
            .map(|b| vec![(b, 1)])
            .unwrap_or_default(),
    }
}

/// A synonym's value converted to the topic config's unit: Kafka's `valueToInt` reads a
/// trimmed int (blank or unparsable: 0) before it multiplies.
fn converted(value: &str, factor: i64) -> String {
    if factor == 1 {
        return value.to_string();
    }
    let n: i64 = value.trim().parse::<i32>().map_or(0, i64::from);
    (n * factor).to_string()
}

/// `BROKER` resource type id.
const BROKER_RESOURCE: i8 = 4;

/// The value `set` gives config `name` (the last one, as a map built from it keeps).
pub fn topic_value<'a>(set: &'a [(String, String)], name: &str) -> Option<&'a str> {
    set.iter()
        .rev()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// The effective value and source of every topic config (Kafka's
/// `KafkaConfigSchema.resolveEffectiveTopicConfig`) below the topic's own value, which comes
/// first ([`topic_value`], laid over these by CreateTopics): the first of its broker synonyms
/// ([`broker_synonyms`]) set dynamically for this node, else for the cluster, else in this
/// node's static configuration (converted to the topic's unit), else the default; sorted by
/// name. The same for every topic of a request, so CreateTopics works it out once a request,
/// not once a topic (#41).
pub fn broker_effective_topic_configs(
    image: &MetadataImage,
    release: Release,
    node_id: i32,
    static_config: &BTreeMap<String, String>,
) -> Vec<(&'static str, String, i8)> {
    let dynamic = |name: &str| {
        image.configs.get(&ConfigResource {
            resource_type: BROKER_RESOURCE,
            resource_name: name.to_string(),
        })
    };
    let node = dynamic(&node_id.to_string());
    let cluster = dynamic("");
    topic_configs(release)
        .filter(|d| d.name != "internal.segment.bytes")
        .map(|d| {
            let synonyms = broker_synonyms(d.name);
            let levels = [
                (node, source::DYNAMIC_BROKER_CONFIG),
                (cluster, source::DYNAMIC_DEFAULT_BROKER_CONFIG),
                (Some(static_config), source::STATIC_BROKER_CONFIG),
            ];
            for (configs, src) in levels {
                for (name, factor) in &synonyms {
                    if let Some(v) = configs.and_then(|c| c.get(*name)) {
                        return (d.name, converted(v, *factor), src);
                    }
                }
            }
            (d.name, d.default.to_string(), source::DEFAULT_CONFIG)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_configs_are_sorted_and_unique_in_each_release() {
        for release in Release::ALL {
            let names: Vec<&str> = topic_configs(release).map(|d| d.name).collect();
            let mut sorted = names.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(names, sorted, "{release:?}");
        }
    }

    /// The number of keys in each release's `LogConfig` (4.0.2: 33 … 4.4.0: 38) and the
    /// bound that changed.
    #[test]
    fn each_release_has_its_own_keys() {
        let counts: Vec<usize> = Release::ALL
            .iter()
            .map(|&r| topic_configs(r).count())
            .collect();
        assert_eq!(counts, [33, 34, 35, 35, 38]);
        assert!(validate_topic_config(Release::Kafka4_0, "segment.bytes", "1024").is_ok());
        assert!(validate_topic_config(Release::Kafka4_1, "segment.bytes", "1024").is_err());
        assert!(topic_config(Release::Kafka4_0, "internal.segment.bytes").is_none());
        assert!(topic_config(Release::Kafka4_2, "max.decompressed.message.bytes").is_some());
        assert!(topic_config(Release::Kafka4_3, "remote.copy.lag.ms").is_none());
    }

    #[test]
    fn values_are_checked_as_kafka_types_them() {
        assert_eq!(
            validate_topic_config(Release::Kafka4_1, "no.such", "1"),
            Err("Unknown topic config name: no.such".into())
        );
        assert!(validate_topic_config(Release::Kafka4_1, "retention.ms", "-1").is_ok());
        assert_eq!(
            validate_topic_config(Release::Kafka4_1, "retention.ms", "x"),
            Err("Invalid value x for configuration retention.ms: Not a number of type LONG".into())
        );
        assert_eq!(
            validate_topic_config(Release::Kafka4_1, "min.insync.replicas", "0"),
            Err(
                "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"
                    .into()
            )
        );
        assert!(
            validate_topic_config(Release::Kafka4_1, "cleanup.policy", "compact,delete").is_ok()
        );
        assert!(validate_topic_config(Release::Kafka4_1, "cleanup.policy", "forever").is_err());
        assert!(validate_topic_config(Release::Kafka4_1, "preallocate", "yes").is_err());
    }
}
