//! DescribeConfigs on the controller listener (Kafka 4.1's `ControllerApis` →
//! `ConfigHelper.describeConfigs`): answered by any controller from its committed image, in
//! request order, without de-duplication.
//!
//! ```text
//!   resources ─▶ an unknown type fails the whole request ─▶ per resource:
//!     TOPIC          every topic config: the topic's value (source 1), else the broker
//!                    synonym's dynamic value (2 this node, 3 cluster default), else the default
//!     BROKER ""      the cluster-default dynamic configs Kafka keeps (source 3)
//!     BROKER <self>  every broker key and every key given: dynamic (2, 3), static (4) or
//!                    default (5), with synonyms (broker_static.rs)
//!     CLIENT_METRICS / GROUP  every key: stored (7 / 8) or the default (5)
//!     BROKER_LOGGER <self>    every logger and its effective level (6; broker_logger.rs)
//! ```
//!
//! A BROKER resource is answered as Kafka's controller answers it from its `KafkaConfig`
//! (`broker_static`): this node's whole configuration, or the cluster defaults. Difference
//! from Kafka: a TOPIC's broker synonyms are matched by their first name
//! (`log.retention.ms`, not `log.retention.hours`).

use crate::codec::error_response::describe_configs_error;
use std::collections::BTreeMap;

use kafka_protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsResult, DescribeConfigsSynonym,
};
use kafka_protocol::messages::{DescribeConfigsRequest, DescribeConfigsResponse};
use kafka_protocol::protocol::StrBytes;

use super::broker_static::NodeConfigs;
use super::resource;
use crate::common::release::Release;
use crate::controller::authorization::ResourceAccess;
use crate::controller::configs::topic_configs::{topic_configs, ConfigType};
use crate::controller::errors::{self, ApiError};
use crate::logging::LogLevels;
use crate::metadata::acl::AclOperation;
use crate::metadata::image::{ConfigResource, MetadataImage};
use crate::metadata::topic_name::validate_topic_name;

/// ConfigSource ids.
mod source {
    pub const TOPIC_CONFIG: i8 = 1;
    pub const DYNAMIC_BROKER_CONFIG: i8 = 2;
    pub const DYNAMIC_DEFAULT_BROKER_CONFIG: i8 = 3;
    pub const STATIC_BROKER_CONFIG: i8 = 4;
    pub const DEFAULT_CONFIG: i8 = 5;
    pub const CLIENT_METRICS_CONFIG: i8 = 7;
    pub const GROUP_CONFIG: i8 = 8;
}

/// ConfigType ids of the response.
fn type_id(kind: ConfigType) -> i8 {
    match kind {
        ConfigType::Boolean => 1,
        ConfigType::String => 2,
        ConfigType::Int => 3,
        ConfigType::Long => 5,
        ConfigType::Double => 6,
        ConfigType::List => 7,
    }
}

/// Each topic config's broker synonym (Kafka's `ServerTopicConfigSynonyms`, first name), and
/// whether Kafka shows it with its default (it does when that name has a default).
const BROKER_SYNONYMS: &[(&str, &str, bool)] = &[
    ("cleanup.policy", "log.cleanup.policy", true),
    ("compression.gzip.level", "compression.gzip.level", true),
    ("compression.lz4.level", "compression.lz4.level", true),
    ("compression.type", "compression.type", true),
    ("compression.zstd.level", "compression.zstd.level", true),
    (
        "delete.retention.ms",
        "log.cleaner.delete.retention.ms",
        true,
    ),
    ("file.delete.delay.ms", "log.segment.delete.delay.ms", true),
    ("flush.messages", "log.flush.interval.messages", true),
    ("flush.ms", "log.flush.interval.ms", false),
    ("index.interval.bytes", "log.index.interval.bytes", true),
    ("local.retention.bytes", "log.local.retention.bytes", true),
    ("local.retention.ms", "log.local.retention.ms", true),
    (
        "max.compaction.lag.ms",
        "log.cleaner.max.compaction.lag.ms",
        true,
    ),
    (
        "max.decompressed.message.bytes",
        "max.decompressed.message.bytes",
        true,
    ),
    ("max.message.bytes", "message.max.bytes", true),
    (
        "message.timestamp.after.max.ms",
        "log.message.timestamp.after.max.ms",
        true,
    ),
    (
        "message.timestamp.before.max.ms",
        "log.message.timestamp.before.max.ms",
        true,
    ),
    ("message.timestamp.type", "log.message.timestamp.type", true),
    (
        "min.cleanable.dirty.ratio",
        "log.cleaner.min.cleanable.ratio",
        true,
    ),
    (
        "min.compaction.lag.ms",
        "log.cleaner.min.compaction.lag.ms",
        true,
    ),
    ("min.insync.replicas", "min.insync.replicas", true),
    ("preallocate", "log.preallocate", true),
    ("remote.copy.lag.bytes", "log.remote.copy.lag.bytes", true),
    ("remote.copy.lag.ms", "log.remote.copy.lag.ms", true),
    ("retention.bytes", "log.retention.bytes", true),
    ("retention.ms", "log.retention.ms", false),
    ("segment.bytes", "log.segment.bytes", true),
    ("segment.index.bytes", "log.index.size.max.bytes", true),
    ("segment.jitter.ms", "log.roll.jitter.ms", false),
    ("segment.ms", "log.roll.ms", false),
    (
        "unclean.leader.election.enable",
        "unclean.leader.election.enable",
        true,
    ),
];

/// The first broker synonym of a topic config (`BROKER_SYNONYMS`), if it has one.
pub(crate) fn primary_broker_synonym(topic_key: &str) -> Option<&'static str> {
    BROKER_SYNONYMS
        .iter()
        .find(|(t, _, _)| *t == topic_key)
        .map(|(_, b, _)| *b)
}

/// CLIENT_METRICS keys: (name, default, type id).
const CLIENT_METRICS_KEYS: &[(&str, &str, i8)] = &[
    ("interval.ms", "300000", 3),
    ("match", "", 7),
    ("metrics", "", 7),
];

/// What DescribeConfigs is answered with besides the image.
#[derive(Debug, Clone, Copy)]
pub struct DescribeContext<'a> {
    /// This node's id (the BROKER and BROKER_LOGGER resource it describes).
    pub node_id: i32,
    /// Its static `min.insync.replicas` (Kafka reports a non-default one as source 4).
    pub static_min_insync_replicas: i32,
    /// Its log levels (the BROKER_LOGGER resource).
    pub log_levels: &'a LogLevels,
    /// Its configuration as given (its BROKER resource; `broker_static`).
    pub static_properties: &'a BTreeMap<String, String>,
    /// The release presented: which configs a TOPIC, a GROUP and a BROKER list.
    pub release: Release,
}

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

fn entry(
    name: &str,
    value: &str,
    config_source: i8,
    config_type: i8,
    synonyms: Vec<DescribeConfigsSynonym>,
) -> DescribeConfigsResourceResult {
    DescribeConfigsResourceResult::default()
        .with_name(s(name))
        .with_value(Some(s(value)))
        .with_read_only(false)
        .with_config_source(config_source)
        .with_is_sensitive(false)
        .with_synonyms(synonyms)
        .with_config_type(config_type)
}

fn synonym(name: &str, value: &str, source: i8) -> DescribeConfigsSynonym {
    DescribeConfigsSynonym::default()
        .with_name(s(name))
        .with_value(Some(s(value)))
        .with_source(source)
}

fn stored<'a>(
    image: &'a MetadataImage,
    resource_type: i8,
    name: &str,
) -> Option<&'a BTreeMap<String, String>> {
    image.configs.get(&ConfigResource {
        resource_type,
        resource_name: name.to_string(),
    })
}

/// Kafka's DescribeConfigs on a controller.
pub fn describe_configs(
    image: &MetadataImage,
    ctx: DescribeContext<'_>,
    req: &DescribeConfigsRequest,
    access: ResourceAccess<'_>,
) -> DescribeConfigsResponse {
    let known = |t: i8| {
        matches!(
            t,
            resource::TOPIC
                | resource::BROKER
                | resource::BROKER_LOGGER
                | resource::CLIENT_METRICS
                | resource::GROUP
        )
    };
    if let Some(bad) = req.resources.iter().find(|r| !known(r.resource_type)) {
        tracing::info!(
            "DescribeConfigs refused: unexpected resource type {} for resource {}",
            bad.resource_type,
            bad.resource_name
        );
        return describe_configs_error(
            req,
            &ApiError::new(
                errors::INVALID_REQUEST,
                "This most likely occurs because of a request being malformed by the client \
                 library or the message was sent to an incompatible broker. See the broker logs \
                 for more details.",
            ),
        );
    }
    // Kafka's ConfigHelper: the resources the sender may not DESCRIBE_CONFIGS are answered
    // after the others, with their kind's authorization error and no configs.
    let mut refused = Vec::new();
    let mut allowed = Vec::new();
    for r in &req.resources {
        match access.config_resource(
            AclOperation::DescribeConfigs,
            r.resource_type,
            r.resource_name.as_str(),
        ) {
            None => allowed.push(r),
            Some(e) => refused.push(
                DescribeConfigsResult::default()
                    .with_resource_type(r.resource_type)
                    .with_resource_name(r.resource_name.clone())
                    .with_error_code(e.code)
                    .with_error_message(e.message.map(StrBytes::from_string))
                    .with_configs(Vec::new()),
            ),
        }
    }
    let results = allowed
        .into_iter()
        .map(|r| {
            let name = r.resource_name.as_str();
            let described = match r.resource_type {
                resource::TOPIC => topic(image, ctx, name, req.include_synonyms),
                resource::BROKER => broker(image, ctx, name, req.include_synonyms),
                resource::BROKER_LOGGER => {
                    super::broker_logger::describe(ctx.log_levels, ctx.node_id, name)
                }
                resource::CLIENT_METRICS => keyed(
                    image,
                    resource::CLIENT_METRICS,
                    name,
                    "Client metrics subscription name must not be empty",
                    CLIENT_METRICS_KEYS,
                    source::CLIENT_METRICS_CONFIG,
                    false,
                ),
                _ => group(image, ctx.release, name, req.include_synonyms),
            };
            let base = DescribeConfigsResult::default()
                .with_resource_type(r.resource_type)
                .with_resource_name(r.resource_name.clone());
            match described {
                Ok(mut configs) => {
                    if let Some(keys) = &r.configuration_keys {
                        if !keys.is_empty() {
                            configs.retain(|c| keys.iter().any(|k| k.as_str() == c.name.as_str()));
                        }
                    }
                    base.with_error_message(Some(s(""))).with_configs(configs)
                }
                Err(e) => base
                    .with_error_code(e.code)
                    .with_error_message(e.message.map(StrBytes::from_string)),
            }
        })
        .chain(refused)
        .collect();
    DescribeConfigsResponse::default().with_results(results)
}

fn topic(
    image: &MetadataImage,
    ctx: DescribeContext<'_>,
    name: &str,
    include_synonyms: bool,
) -> Result<Vec<DescribeConfigsResourceResult>, ApiError> {
    validate_topic_name(name).map_err(|reason| {
        ApiError::new(
            errors::INVALID_TOPIC_EXCEPTION,
            format!("Topic name is invalid: {reason}"),
        )
    })?;
    if !image.topic_ids.contains_key(name) {
        return Err(ApiError::new(errors::UNKNOWN_TOPIC_OR_PARTITION, ""));
    }
    let own = stored(image, resource::TOPIC, name);
    let node = stored(image, resource::BROKER, &ctx.node_id.to_string());
    let cluster = stored(image, resource::BROKER, "");
    let mut out = Vec::new();
    for d in topic_configs(ctx.release) {
        let overridden = own.and_then(|c| c.get(d.name));
        if d.name == "internal.segment.bytes" && overridden.is_none() {
            continue;
        }
        let broker_name = BROKER_SYNONYMS
            .iter()
            .find(|(t, _, _)| *t == d.name)
            .map(|(_, b, shown)| (*b, *shown));
        let mut synonyms = Vec::new();
        if let Some(v) = overridden {
            synonyms.push(synonym(d.name, v, source::TOPIC_CONFIG));
        }
        let mut broker_value = None;
        if let Some((b, shown)) = broker_name {
            if let Some(v) = node.and_then(|c| c.get(b)) {
                synonyms.push(synonym(b, v, source::DYNAMIC_BROKER_CONFIG));
                broker_value.get_or_insert((v.clone(), source::DYNAMIC_BROKER_CONFIG));
            }
            if let Some(v) = cluster.and_then(|c| c.get(b)) {
                synonyms.push(synonym(b, v, source::DYNAMIC_DEFAULT_BROKER_CONFIG));
                broker_value.get_or_insert((v.clone(), source::DYNAMIC_DEFAULT_BROKER_CONFIG));
            }
            if b == "min.insync.replicas" && ctx.static_min_insync_replicas != 1 {
                let v = ctx.static_min_insync_replicas.to_string();
                synonyms.push(synonym(b, &v, source::STATIC_BROKER_CONFIG));
                broker_value.get_or_insert((v, source::STATIC_BROKER_CONFIG));
            }
            if shown {
                synonyms.push(synonym(b, d.default, source::DEFAULT_CONFIG));
            }
        }
        let (value, src) = match (overridden, broker_value) {
            (Some(v), _) => (v.clone(), source::TOPIC_CONFIG),
            (None, Some((v, src))) => (v, src),
            (None, None) => (d.default.to_string(), source::DEFAULT_CONFIG),
        };
        let kind = type_id(d.kind);
        out.push(entry(
            d.name,
            &value,
            src,
            kind,
            if include_synonyms {
                synonyms
            } else {
                Vec::new()
            },
        ));
    }
    Ok(out)
}

fn broker(
    image: &MetadataImage,
    ctx: DescribeContext<'_>,
    name: &str,
    include_synonyms: bool,
) -> Result<Vec<DescribeConfigsResourceResult>, ApiError> {
    let cluster = stored(image, resource::BROKER, "");
    if name.is_empty() {
        let configs = NodeConfigs::new(ctx.release, ctx.static_properties, None, cluster);
        return Ok(configs.describe_cluster_default(include_synonyms));
    }
    let Ok(id) = name.parse::<i32>() else {
        return Err(ApiError::new(
            errors::INVALID_REQUEST,
            format!("Broker id must be an integer, but it is: {name}"),
        ));
    };
    if id != ctx.node_id {
        return Err(ApiError::new(
            errors::INVALID_REQUEST,
            format!(
                "Unexpected broker id, expected {} or empty string, but received {name}",
                ctx.node_id
            ),
        ));
    }
    let node = stored(image, resource::BROKER, name);
    let configs = NodeConfigs::new(ctx.release, ctx.static_properties, node, cluster);
    Ok(configs.describe_node(include_synonyms))
}

/// GROUP: every key of the release, stored or its default; from 4.3 a key's broker config is
/// its last synonym (with the broker's value, a default: the controller's own `group.*`
/// settings are not read).
fn group(
    image: &MetadataImage,
    release: Release,
    name: &str,
    include_synonyms: bool,
) -> Result<Vec<DescribeConfigsResourceResult>, ApiError> {
    if name.is_empty() {
        return Err(ApiError::new(
            errors::INVALID_REQUEST,
            "Group name must not be empty",
        ));
    }
    let own = stored(image, resource::GROUP, name);
    Ok(super::group_configs::described(release)
        .into_iter()
        .map(|k| {
            let set = own.and_then(|c| c.get(k.name));
            let (v, src) = match set {
                Some(v) => (v.as_str(), source::GROUP_CONFIG),
                None => (k.default, source::DEFAULT_CONFIG),
            };
            let mut synonyms = Vec::new();
            if include_synonyms {
                if set.is_some() || k.broker_synonym.is_none() {
                    synonyms.push(synonym(k.name, v, src));
                }
                if let Some(b) = &k.broker_synonym {
                    synonyms.push(synonym(b, k.default, source::DEFAULT_CONFIG));
                }
            }
            entry(k.name, v, src, k.type_id, synonyms)
        })
        .collect())
}

/// CLIENT_METRICS: every key, stored (`stored_source`) or its default.
fn keyed(
    image: &MetadataImage,
    resource_type: i8,
    name: &str,
    empty_message: &str,
    keys: &[(&str, &str, i8)],
    stored_source: i8,
    include_synonyms: bool,
) -> Result<Vec<DescribeConfigsResourceResult>, ApiError> {
    if name.is_empty() {
        return Err(ApiError::new(errors::INVALID_REQUEST, empty_message));
    }
    let own = stored(image, resource_type, name);
    Ok(keys
        .iter()
        .map(|(k, default, kind)| {
            let (v, src) = match own.and_then(|c| c.get(*k)) {
                Some(v) => (v.as_str(), stored_source),
                None => (*default, source::DEFAULT_CONFIG),
            };
            let synonyms = if include_synonyms {
                vec![synonym(k, v, src)]
            } else {
                Vec::new()
            };
            entry(k, v, src, *kind, synonyms)
        })
        .collect())
}
