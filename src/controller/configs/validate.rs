//! The per-type checks of Kafka 4.1's `ControllerConfigurationValidator` for BROKER,
//! CLIENT_METRICS and GROUP resources (TOPIC's are `topic_configs`; GROUP's of Kafka 4.4 are
//! `group_configs_4_4`). The checked set is the resource's whole config after the change.

use std::collections::BTreeMap;

use crate::common::release::Release;
use crate::controller::errors::{self, ApiError};

/// The BROKER LIST configs of Kafka 4.1's `KafkaConfig` and their defaults (APPEND's base).
const BROKER_LIST_CONFIGS: &[(&str, &str)] = &[
    ("controller.quorum.bootstrap.servers", ""),
    ("controller.quorum.voters", ""),
    ("group.consumer.assignors", "uniform,range"),
    (
        "group.coordinator.rebalance.protocols",
        "classic,consumer,streams",
    ),
    ("group.share.assignors", "simple"),
    ("kafka.metrics.reporters", ""),
    ("log.cleanup.policy", "delete"),
    (
        "metric.reporters",
        "org.apache.kafka.common.metrics.JmxReporter",
    ),
    ("process.roles", ""),
    ("sasl.enabled.mechanisms", "GSSAPI"),
    ("sasl.kerberos.principal.to.local.rules", "DEFAULT"),
    ("sasl.oauthbearer.expected.audience", ""),
    ("ssl.cipher.suites", ""),
    ("ssl.enabled.protocols", "TLSv1.2,TLSv1.3"),
];

/// The default of `key` if it is a BROKER LIST config.
pub(super) fn broker_list_default(key: &str) -> Option<&'static str> {
    BROKER_LIST_CONFIGS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, d)| *d)
}

/// `validateBrokerName`: a non-negative base-10 int (Java's `Integer.valueOf`, so `+1` and
/// `01` pass). The controller checks no BROKER key or value: the forwarding broker does.
pub(super) fn broker_name(name: &str) -> Result<i32, ApiError> {
    // Rust's parse takes a sign as Java's does.
    let Ok(id) = name.parse::<i32>() else {
        return Err(ApiError::new(
            errors::INVALID_REQUEST,
            "Unable to parse broker name as a base 10 number.",
        ));
    };
    if id < 0 {
        return Err(ApiError::new(
            errors::INVALID_REQUEST,
            "Invalid negative broker ID.",
        ));
    }
    Ok(id)
}

/// Java's `Integer.parseInt` of a trimmed ConfigDef INT.
fn int(key: &str, value: &str) -> Result<i64, ApiError> {
    value.trim().parse::<i32>().map(i64::from).map_err(|_| {
        ApiError::new(
            errors::INVALID_CONFIG,
            format!("Invalid value {value} for configuration {key}: Not a number of type INT"),
        )
    })
}

/// ConfigDef's LIST parse: comma-separated, trimmed, empty for a blank value.
fn list(value: &str) -> Vec<&str> {
    let t = value.trim();
    if t.is_empty() {
        Vec::new()
    } else {
        t.split(',').map(str::trim).collect()
    }
}

const MATCH_PARAMS: &[&str] = &[
    "client_instance_id",
    "client_id",
    "client_software_name",
    "client_software_version",
    "client_source_address",
    "client_source_port",
];

/// `ClientMetricsConfigs.validate`. The match patterns' regular expressions are not
/// compiled (ferrokraft has no Java regex engine); their shape is checked.
pub(super) fn client_metrics(name: &str, all: &BTreeMap<String, String>) -> Result<(), ApiError> {
    if name.is_empty() {
        return Err(ApiError::new(
            errors::INVALID_REQUEST,
            "Subscription name can't be empty",
        ));
    }
    if let Some(k) = all
        .keys()
        .find(|k| !matches!(k.as_str(), "metrics" | "interval.ms" | "match"))
    {
        return Err(ApiError::new(
            errors::INVALID_REQUEST,
            format!("Unknown client metrics configuration: {k}"),
        ));
    }
    if let Some(v) = all.get("interval.ms") {
        let n = int("interval.ms", v)?;
        if !(100..=3_600_000).contains(&n) {
            return Err(ApiError::new(
                errors::INVALID_REQUEST,
                format!(
                    "Invalid value {n} for interval.ms, interval must be between 100 and 3600000 \
                     (1 hour)"
                ),
            ));
        }
    }
    if let Some(v) = all.get("match") {
        for entry in list(v) {
            let ok = match entry.split('=').collect::<Vec<_>>().as_slice() {
                [param, pattern] => MATCH_PARAMS.contains(&param.trim()) && !pattern.is_empty(),
                _ => false,
            };
            if !ok {
                return Err(ApiError::new(
                    errors::INVALID_CONFIG,
                    format!("Illegal client matching pattern: {entry}"),
                ));
            }
        }
    }
    Ok(())
}

/// A GROUP config: (key, default, lowest value the ConfigDef allows).
const GROUP_INT_CONFIGS: &[(&str, i64, i64)] = &[
    ("consumer.session.timeout.ms", 45_000, 1),
    ("consumer.heartbeat.interval.ms", 5_000, 1),
    ("share.session.timeout.ms", 45_000, 1),
    ("share.heartbeat.interval.ms", 5_000, 1),
    ("share.record.lock.duration.ms", 30_000, 1_000),
    ("streams.session.timeout.ms", 45_000, 1),
    ("streams.heartbeat.interval.ms", 5_000, 1),
    ("streams.num.standby.replicas", 0, 0),
];

/// The broker's bounds on group configs (Kafka's defaults): (key, min, max, bound name).
const GROUP_BOUNDS: &[(&str, i64, i64, &str)] = &[
    (
        "consumer.heartbeat.interval.ms",
        5_000,
        15_000,
        "group.consumer.%.heartbeat.interval.ms",
    ),
    (
        "consumer.session.timeout.ms",
        45_000,
        60_000,
        "group.consumer.%.session.timeout.ms",
    ),
    (
        "share.heartbeat.interval.ms",
        5_000,
        15_000,
        "group.share.%.heartbeat.interval.ms",
    ),
    (
        "share.session.timeout.ms",
        45_000,
        60_000,
        "group.share.%.session.timeout.ms",
    ),
    (
        "share.record.lock.duration.ms",
        15_000,
        60_000,
        "group.share.%.record.lock.duration.ms",
    ),
    (
        "streams.heartbeat.interval.ms",
        5_000,
        15_000,
        "group.streams.%.heartbeat.interval.ms",
    ),
    (
        "streams.session.timeout.ms",
        45_000,
        60_000,
        "group.streams.%.session.timeout.ms",
    ),
];

/// The GROUP check of `release`'s controller: the name, then its `GroupConfig.validate`.
pub(super) fn group(
    release: Release,
    name: &str,
    all: &BTreeMap<String, String>,
) -> Result<(), ApiError> {
    if name.is_empty() {
        return Err(ApiError::new(
            errors::INVALID_REQUEST,
            "Default group resources are not allowed.",
        ));
    }
    match release {
        Release::Kafka4_0 | Release::Kafka4_1 | Release::Kafka4_2 => group_4_1(all),
        Release::Kafka4_3 | Release::Kafka4_4 => super::group_configs_4_4::validate(all),
    }
}

/// Kafka 4.1's `GroupConfigManager.validate` against Kafka's default broker bounds: every
/// key, set or not, is bounded.
fn group_4_1(all: &BTreeMap<String, String>) -> Result<(), ApiError> {
    let invalid = |m: String| ApiError::new(errors::INVALID_CONFIG, m);
    let known = |k: &str| {
        GROUP_INT_CONFIGS.iter().any(|(n, _, _)| *n == k)
            || k == "share.auto.offset.reset"
            || k == "share.isolation.level"
    };
    if let Some(k) = all.keys().find(|k| !known(k)) {
        return Err(invalid(format!("Unknown group config name: {k}")));
    }
    let mut values: BTreeMap<&str, i64> = BTreeMap::new();
    for (key, default, min) in GROUP_INT_CONFIGS {
        let n = match all.get(*key) {
            Some(v) => int(key, v)?,
            None => *default,
        };
        if n < *min {
            return Err(invalid(format!(
                "Invalid value {} for configuration {key}: Value must be at least {min}",
                all.get(*key).map_or("", String::as_str)
            )));
        }
        values.insert(key, n);
    }
    if let Some(v) = all.get("share.isolation.level") {
        if !matches!(v.trim(), "read_committed" | "read_uncommitted") {
            return Err(invalid(format!(
                "Invalid value {v} for configuration share.isolation.level: String must be one \
                 of: read_committed, read_uncommitted"
            )));
        }
    }
    if let Some(v) = all.get("share.auto.offset.reset") {
        let t = v.trim().to_ascii_lowercase();
        let by_duration = t
            .strip_prefix("by_duration:")
            .is_some_and(|d| d.starts_with('p') && d.len() > 1);
        if !(t == "latest" || t == "earliest" || by_duration) {
            return Err(invalid(format!(
                "Invalid value {v} for configuration share.auto.offset.reset: Invalid value `{v}` \
                 for configuration share.auto.offset.reset. The value must be either 'earliest', \
                 'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'."
            )));
        }
    }
    for (key, min, max, bound) in GROUP_BOUNDS {
        let n = values[key];
        if n < *min {
            return Err(invalid(format!(
                "{key} must be greater than or equal to {}",
                bound.replace('%', "min")
            )));
        }
        if n > *max {
            return Err(invalid(format!(
                "{key} must be less than or equal to {}",
                bound.replace('%', "max")
            )));
        }
    }
    if values["streams.num.standby.replicas"] > 2 {
        return Err(invalid(
            "streams.num.standby.replicas must be less than or equal to \
             group.streams.max.standby.replicas"
                .into(),
        ));
    }
    for kind in ["consumer", "share", "streams"] {
        let session = values[format!("{kind}.session.timeout.ms").as_str()];
        let heartbeat = values[format!("{kind}.heartbeat.interval.ms").as_str()];
        if session <= heartbeat {
            return Err(invalid(format!(
                "{kind}.session.timeout.ms must be greater than {kind}.heartbeat.interval.ms"
            )));
        }
    }
    Ok(())
}
