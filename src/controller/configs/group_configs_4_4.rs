//! Kafka 4.4's `GroupConfig.validate` as its controller runs it on a GROUP resource's whole
//! config after a change: unknown names, duplicate rack-aware tags, each value's ConfigDef
//! check in definition order, then the values set against the controller's broker-level
//! group bounds (Kafka's defaults; a controller's own `group.*` settings are not read).
//!
//! ```text
//!   all ─▶ names known? ─▶ tags unique? ─▶ parse each set key (type, ConfigDef bound)
//!       ─▶ broker bounds of each set key ─▶ assignor name ─▶ session > heartbeat ─▶ DLQ name
//! ```
//!
//! Unlike 4.1's check (`validate::group`), only the keys set are bounded: an unset key is not
//! checked against the bounds with its default. Every refusal is INVALID_CONFIG.

use std::collections::BTreeMap;

use crate::controller::errors::{self, ApiError};

/// How Kafka 4.4's GroupConfig ConfigDef parses and checks a key.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// INT, at least the bound.
    Int(i64),
    /// LONG, at least the bound.
    Long(i64),
    Boolean,
    /// Free STRING (trimmed).
    Str,
    /// STRING, one of the values.
    OneOf(&'static [&'static str]),
    /// `share.auto.offset.reset`'s own validator.
    AutoOffsetReset,
    /// LIST whose items must not be empty.
    NonEmptyItems,
}

/// Kafka 4.4.0's GroupConfig keys in definition order (the order its ConfigDef parses them),
/// with their types and lower bounds (`GroupConfig.CONFIG_DEF` read with a program run against
/// the 4.4.0 jar). 17 of them are new since 4.1.2.
const KEYS: &[(&str, Kind)] = &[
    ("consumer.session.timeout.ms", Kind::Int(1)),
    ("consumer.heartbeat.interval.ms", Kind::Int(1)),
    ("consumer.assignment.interval.ms", Kind::Int(0)),
    ("consumer.assignor.offload.enable", Kind::Boolean),
    ("share.session.timeout.ms", Kind::Int(1)),
    ("share.heartbeat.interval.ms", Kind::Int(1)),
    ("share.record.lock.duration.ms", Kind::Int(1_000)),
    ("share.delivery.count.limit", Kind::Int(2)),
    ("share.partition.max.record.locks", Kind::Int(100)),
    ("share.auto.offset.reset", Kind::AutoOffsetReset),
    (
        "share.isolation.level",
        Kind::OneOf(&["read_committed", "read_uncommitted"]),
    ),
    ("share.renew.acknowledge.enable", Kind::Boolean),
    ("share.assignment.interval.ms", Kind::Int(0)),
    ("share.assignor.offload.enable", Kind::Boolean),
    ("streams.session.timeout.ms", Kind::Int(1)),
    ("streams.heartbeat.interval.ms", Kind::Int(1)),
    ("streams.num.standby.replicas", Kind::Int(0)),
    ("streams.initial.rebalance.delay.ms", Kind::Int(0)),
    ("streams.assignment.interval.ms", Kind::Int(0)),
    ("streams.assignor.offload.enable", Kind::Boolean),
    ("streams.task.offset.interval.ms", Kind::Int(1)),
    ("streams.num.warmup.replicas", Kind::Int(0)),
    (RACK_AWARE_TAGS, Kind::NonEmptyItems),
    ("streams.acceptable.recovery.lag", Kind::Long(0)),
    (ASSIGNOR_NAME, Kind::Str),
    (DLQ_TOPIC_NAME, Kind::Str),
    ("errors.deadletterqueue.copy.record.enable", Kind::Boolean),
];

const RACK_AWARE_TAGS: &str = "streams.rack.aware.assignment.tags";
const ASSIGNOR_NAME: &str = "streams.assignor.name";
const DLQ_TOPIC_NAME: &str = "errors.deadletterqueue.topic.name";

/// A bound the broker-level group config puts on a key that is set.
#[derive(Debug, Clone, Copy)]
enum Bound {
    /// `validateIntRange`: min and max inclusive.
    Range(i64, i64),
    /// `validateIntMax`.
    Max(i64),
    /// `validateIntMin`.
    Min(i64),
}

/// `GroupConfig.validateValues`' bounds in its order, with the defaults of Kafka 4.4.0's
/// `GroupCoordinatorConfig` and `ShareGroupConfig` (read from a default `KafkaConfig`).
const BOUNDS: &[(&str, Bound)] = &[
    (
        "consumer.heartbeat.interval.ms",
        Bound::Range(5_000, 15_000),
    ),
    ("consumer.session.timeout.ms", Bound::Range(45_000, 60_000)),
    ("consumer.assignment.interval.ms", Bound::Range(0, 15_000)),
    ("share.heartbeat.interval.ms", Bound::Range(5_000, 15_000)),
    ("share.session.timeout.ms", Bound::Range(45_000, 60_000)),
    (
        "share.record.lock.duration.ms",
        Bound::Range(15_000, 60_000),
    ),
    ("share.delivery.count.limit", Bound::Range(2, 10)),
    ("share.partition.max.record.locks", Bound::Range(100, 4_000)),
    ("share.assignment.interval.ms", Bound::Range(0, 15_000)),
    ("streams.heartbeat.interval.ms", Bound::Range(5_000, 15_000)),
    ("streams.session.timeout.ms", Bound::Range(45_000, 60_000)),
    ("streams.num.standby.replicas", Bound::Max(2)),
    ("streams.assignment.interval.ms", Bound::Range(0, 15_000)),
    ("streams.task.offset.interval.ms", Bound::Min(15_000)),
    ("streams.num.warmup.replicas", Bound::Max(20)),
];

/// `group.streams.assignors`' default: the task assignors a streams group may name.
const STREAMS_ASSIGNORS: &[&str] = &["sticky"];

/// The broker-level session timeout and heartbeat interval of each group type (Kafka's
/// defaults), used for the one of the pair a group leaves unset.
const SESSION_HEARTBEAT: &[(&str, i64, i64)] = &[
    ("consumer", 45_000, 5_000),
    ("share", 45_000, 5_000),
    ("streams", 45_000, 5_000),
];

fn invalid(message: String) -> ApiError {
    ApiError::new(errors::INVALID_CONFIG, message)
}

/// Java's `trim().split("\\s*,\\s*", -1)`, empty for a blank value.
fn split_list(value: &str) -> Vec<&str> {
    let t = value.trim();
    if t.is_empty() {
        Vec::new()
    } else {
        t.split(',').map(str::trim).collect()
    }
}

/// A parsed value: the integers the bounds need, nothing for the other types. As in Kafka, a
/// value that does not parse is quoted as given, one a validator refuses as parsed.
fn parse(key: &str, kind: Kind, value: &str) -> Result<Option<i64>, ApiError> {
    let refuse_as = |shown: &str, reason: &str| {
        invalid(format!(
            "Invalid value {shown} for configuration {key}: {reason}"
        ))
    };
    let refuse = |reason: &str| refuse_as(value, reason);
    let t = value.trim();
    let number = |n: Option<i64>, type_name: &str, min: i64| match n {
        None => Err(refuse(&format!("Not a number of type {type_name}"))),
        Some(n) if n < min => Err(refuse_as(
            &n.to_string(),
            &format!("Value must be at least {min}"),
        )),
        Some(n) => Ok(Some(n)),
    };
    match kind {
        Kind::Int(min) => number(t.parse::<i32>().ok().map(i64::from), "INT", min),
        Kind::Long(min) => number(t.parse::<i64>().ok(), "LONG", min),
        Kind::Boolean => {
            if t.eq_ignore_ascii_case("true") || t.eq_ignore_ascii_case("false") {
                Ok(None)
            } else {
                Err(refuse("Expected value to be either true or false"))
            }
        }
        Kind::Str => Ok(None),
        Kind::OneOf(values) => {
            if values.contains(&t) {
                Ok(None)
            } else {
                Err(refuse_as(
                    t,
                    &format!("String must be one of: {}", values.join(", ")),
                ))
            }
        }
        Kind::AutoOffsetReset => {
            let lower = t.to_ascii_lowercase();
            let by_duration = lower
                .strip_prefix("by_duration:")
                .is_some_and(|d| d.starts_with('p') && d.len() > 1);
            if lower == "latest" || lower == "earliest" || by_duration {
                Ok(None)
            } else {
                Err(refuse_as(
                    t,
                    &format!(
                        "Invalid value `{t}` for configuration {key}. The value must be either \
                         'earliest', 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'."
                    ),
                ))
            }
        }
        Kind::NonEmptyItems => {
            if split_list(value).iter().any(|item| item.is_empty()) {
                Err(invalid(format!(
                    "Configuration '{key}' values must not be empty."
                )))
            } else {
                Ok(None)
            }
        }
    }
}

/// Kafka 4.4's `GroupConfig.validate(all, groupCoordinatorConfig, shareGroupConfig)`.
pub(super) fn validate(all: &BTreeMap<String, String>) -> Result<(), ApiError> {
    if let Some(k) = all.keys().find(|k| !KEYS.iter().any(|(n, _)| n == k)) {
        return Err(invalid(format!("Unknown group config name: {k}")));
    }
    // Before the values are parsed, on the raw text (so `a,,a` is a duplicate, not an empty
    // item).
    if let Some(tags) = all.get(RACK_AWARE_TAGS) {
        let items = split_list(tags);
        let mut unique = items.clone();
        unique.sort_unstable();
        unique.dedup();
        if unique.len() != items.len() {
            return Err(invalid(format!(
                "{RACK_AWARE_TAGS} must not contain duplicate tag keys."
            )));
        }
    }
    let mut ints: BTreeMap<&str, i64> = BTreeMap::new();
    for (key, kind) in KEYS {
        if let Some(v) = all.get(*key) {
            if let Some(n) = parse(key, *kind, v)? {
                ints.insert(key, n);
            }
        }
    }
    for (key, bound) in BOUNDS {
        let Some(&n) = ints.get(key) else {
            continue;
        };
        let refused = match *bound {
            Bound::Range(min, max) if n < min || n > max => Some(format!(
                "{key} must be in the range {min} to {max} inclusive."
            )),
            Bound::Max(max) if n > max => {
                Some(format!("{key} must be less than or equal to {max}"))
            }
            Bound::Min(min) if n < min => {
                Some(format!("{key} must be greater than or equal to {min}"))
            }
            _ => None,
        };
        if let Some(message) = refused {
            return Err(invalid(message));
        }
    }
    if let Some(name) = all.get(ASSIGNOR_NAME) {
        let name = name.trim();
        if !STREAMS_ASSIGNORS.contains(&name) {
            return Err(invalid(format!(
                "{ASSIGNOR_NAME} '{name}' is not a registered task assignor. Registered \
                 assignors are: [{}].",
                STREAMS_ASSIGNORS.join(", ")
            )));
        }
    }
    for (kind, session_default, heartbeat_default) in SESSION_HEARTBEAT {
        let session_key = format!("{kind}.session.timeout.ms");
        let heartbeat_key = format!("{kind}.heartbeat.interval.ms");
        let session = ints.get(session_key.as_str()).copied();
        let heartbeat = ints.get(heartbeat_key.as_str()).copied();
        if session.is_none() && heartbeat.is_none() {
            continue;
        }
        // With the default bounds a pair inside them always passes; a controller with wider
        // bounds would reach this.
        if session.unwrap_or(*session_default) <= heartbeat.unwrap_or(*heartbeat_default) {
            return Err(invalid(format!(
                "{session_key} must be greater than {heartbeat_key}"
            )));
        }
    }
    if let Some(name) = all.get(DLQ_TOPIC_NAME) {
        let name = name.trim();
        if name.starts_with("__") {
            return Err(invalid(format!(
                "{DLQ_TOPIC_NAME}: DLQ topic name must not start with '__'"
            )));
        }
    }
    Ok(())
}
