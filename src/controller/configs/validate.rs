//! The per-type checks of Kafka 4.1's `ControllerConfigurationValidator` for BROKER,
//! CLIENT_METRICS and GROUP resources (TOPIC's are `topic_configs`; a GROUP's values are
//! checked by `group_configs`, per release). The checked set is the resource's whole config
//! after the change.

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
    super::group_configs::validate(release, all)
}
