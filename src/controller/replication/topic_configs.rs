//! Topic config definitions (Kafka 4.1's `LogConfig` topic keys): names, types and defaults,
//! for the checks CreateTopics makes and the effective configs it answers with.

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
    /// Allowed values (strings and lists), Kafka's `in`/`ValidList`.
    pub one_of: &'static [&'static str],
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
        one_of: &[],
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
        one_of: values,
    }
}

const MAX_LONG: &str = "9223372036854775807";

/// Every topic config key of Kafka 4.1, sorted by name.
pub const TOPIC_CONFIGS: &[TopicConfigDef] = &[
    one_of(
        "cleanup.policy",
        ConfigType::List,
        "delete",
        &["compact", "delete"],
    ),
    def("compression.gzip.level", ConfigType::Int, "-1", None),
    def("compression.lz4.level", ConfigType::Int, "9", None),
    one_of(
        "compression.type",
        ConfigType::String,
        "producer",
        &["uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"],
    ),
    def("compression.zstd.level", ConfigType::Int, "3", None),
    def("delete.retention.ms", ConfigType::Long, "86400000", Some(0)),
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
    def(
        "leader.replication.throttled.replicas",
        ConfigType::List,
        "",
        None,
    ),
    def("local.retention.bytes", ConfigType::Long, "-2", Some(-2)),
    def("local.retention.ms", ConfigType::Long, "-2", Some(-2)),
    def("max.compaction.lag.ms", ConfigType::Long, MAX_LONG, Some(1)),
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
    def(
        "min.cleanable.dirty.ratio",
        ConfigType::Double,
        "0.5",
        Some(0),
    ),
    def("min.compaction.lag.ms", ConfigType::Long, "0", Some(0)),
    def("min.insync.replicas", ConfigType::Int, "1", Some(1)),
    def("preallocate", ConfigType::Boolean, "false", None),
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
    def("segment.bytes", ConfigType::Int, "1073741824", Some(14)),
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

/// The definition of `name`, if it is a topic config.
pub fn topic_config(name: &str) -> Option<&'static TopicConfigDef> {
    TOPIC_CONFIGS.iter().find(|d| d.name == name)
}

/// Kafka's `ConfigDef` check of one value: INVALID_CONFIG's message when it is refused.
pub fn validate_topic_config(name: &str, value: &str) -> Result<(), String> {
    let Some(d) = topic_config(name) else {
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
            if name == "min.cleanable.dirty.ratio" && !(0.0..=1.0).contains(&v) {
                return Err(invalid("Value must be no more than 1".into()));
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
    if let (Some(n), Some(min)) = (number, d.at_least) {
        if n < min {
            return Err(invalid(format!("Value must be at least {min}")));
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
    /// Kafka's default.
    pub const DEFAULT_CONFIG: i8 = 5;
}

/// `BROKER` resource type id.
const BROKER_RESOURCE: i8 = 4;

/// The effective value and source of every topic config for a topic created with `set`
/// (Kafka's `computeEffectiveTopicConfigs`): the topic's own value, else this node's or the
/// cluster's dynamic value of the same key, else the default; sorted by name.
pub fn effective_topic_configs(
    image: &MetadataImage,
    node_id: i32,
    set: &[(String, String)],
) -> Vec<(&'static str, String, i8)> {
    let dynamic = |name: &str| {
        image.configs.get(&ConfigResource {
            resource_type: BROKER_RESOURCE,
            resource_name: name.to_string(),
        })
    };
    let node = dynamic(&node_id.to_string());
    let cluster = dynamic("");
    TOPIC_CONFIGS
        .iter()
        .map(|d| {
            if let Some((_, v)) = set.iter().rev().find(|(k, _)| k == d.name) {
                (d.name, v.clone(), source::TOPIC_CONFIG)
            } else if let Some(v) = node.and_then(|c| c.get(d.name)) {
                (d.name, v.clone(), source::DYNAMIC_BROKER_CONFIG)
            } else if let Some(v) = cluster.and_then(|c| c.get(d.name)) {
                (d.name, v.clone(), source::DYNAMIC_DEFAULT_BROKER_CONFIG)
            } else {
                (d.name, d.default.to_string(), source::DEFAULT_CONFIG)
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_configs_are_sorted_and_unique() {
        let names: Vec<&str> = TOPIC_CONFIGS.iter().map(|d| d.name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(names, sorted);
    }

    #[test]
    fn values_are_checked_as_kafka_types_them() {
        assert_eq!(
            validate_topic_config("no.such", "1"),
            Err("Unknown topic config name: no.such".into())
        );
        assert!(validate_topic_config("retention.ms", "-1").is_ok());
        assert_eq!(
            validate_topic_config("retention.ms", "x"),
            Err("Invalid value x for configuration retention.ms: Not a number of type LONG".into())
        );
        assert_eq!(
            validate_topic_config("min.insync.replicas", "0"),
            Err(
                "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"
                    .into()
            )
        );
        assert!(validate_topic_config("cleanup.policy", "compact,delete").is_ok());
        assert!(validate_topic_config("cleanup.policy", "forever").is_err());
        assert!(validate_topic_config("preallocate", "yes").is_err());
    }
}
