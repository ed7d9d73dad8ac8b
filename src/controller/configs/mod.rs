//! Dynamic configs (Kafka 4.1's `ControllerApis` config handlers and
//! `ConfigurationControlManager`): IncrementalAlterConfigs and the legacy AlterConfigs for
//! TOPIC, BROKER, CLIENT_METRICS and GROUP resources.
//!
//! ```text
//!   resources ─▶ unknown type / duplicates answered ─▶ per resource: new values from the ops
//!             ─▶ ELR and size rules ─▶ the type's validator ─▶ existence ─▶ ConfigRecords
//!   all resources' records + a ClearElrRecord per min.insync.replicas record ─▶ one batch
//! ```
//!
//! One error per resource; a resource that fails writes nothing, the others still do.
//! BROKER_LOGGER resources (this node's log levels, [`broker_logger`]) are not written:
//! IncrementalAlterConfigs applies them on the node that got the request and appends their
//! answers after the others'; the legacy AlterConfigs refuses them with INVALID_REQUEST, as
//! Kafka's `authorizeAlterResource` does. A request left with nothing to write (only
//! BROKER_LOGGER, unknown or duplicate resources) is answered at once on any controller, as
//! Kafka's `QuorumController` completes an empty change map.

use super::authorization::ResourceAccess;
use crate::codec::error_response::resource_result;
use crate::codec::error_response::{incremental_alter_configs_error, legacy_alter_configs_error};
use crate::common::errors::BROKER_ID_NOT_REGISTERED;
use crate::metadata::acl::AclOperation;
use std::collections::BTreeMap;

use kafka_protocol::messages::alter_configs_response::AlterConfigsResourceResponse as LegacyResult;
use kafka_protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::{
    AlterConfigsRequest, AlterConfigsResponse, IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
};
use kafka_protocol::protocol::StrBytes;

use super::configs::topic_configs::{is_list_topic_config, topic_config, validate_topic_configs};
use super::errors::{self, ApiError};
use super::features::elr_enabled;
use super::result::{ControllerResult, RecordOut};
use crate::codec::versions::Release;
use crate::common::java::{java_hash_map_order, Built};
use crate::metadata::image::{ConfigResource, MetadataImage};
use crate::metadata::record::MetadataRecord;
use crate::metadata::records::{ClearElrRecord, ConfigRecord};
use crate::metadata::topic_name::validate_topic_name;

pub mod broker_logger;
mod broker_static;
mod broker_static_table;
pub mod describe;
mod group_configs;
mod group_configs_java_order;
pub mod topic_configs;
mod validate;

pub use crate::metadata::image::resource;

/// `AlterConfigOp.OpType` ids.
mod op {
    pub const SET: i8 = 0;
    pub const DELETE: i8 = 1;
    pub const APPEND: i8 = 2;
    pub const SUBTRACT: i8 = 3;
}

/// The longest value Kafka 4.1 stores (it counts UTF-16 units).
const MAX_VALUE_LENGTH: usize = 32_767;
/// Kafka 4.4's broker config of cordoned log directories (KIP-1066).
const CORDONED_LOG_DIRS: &str = "cordoned.log.dirs";
const MIN_INSYNC_REPLICAS: &str = "min.insync.replicas";

/// One resource's requested change, keyed by config name (the last op of a name wins).
enum Change {
    /// IncrementalAlterConfigs: (op, value) per key, in the iteration order of the
    /// `HashMap` Kafka's ControllerApis puts them in (`new HashMap<>()`, one `put` per
    /// config in request order), which is the order of its records and of its checks.
    Incremental(Vec<(String, (i8, Option<String>))>),
    /// AlterConfigs: the whole new set (keys left out are deleted), in the iteration order
    /// of Kafka's `HashMap` of it, as for `Incremental`.
    Legacy(Vec<(String, Option<String>)>),
}

/// The answer to one resource.
struct Outcome {
    resource_type: i8,
    resource_name: String,
    error: ApiError,
}

/// The resources of a request, screened as `ControllerApis` does.
struct Screened {
    /// Answered already (unknown type, duplicate, then the legacy API's BROKER_LOGGER), in
    /// the order met.
    early: Vec<Outcome>,
    /// To compute, in request order.
    changes: Vec<(ConfigResource, Change)>,
}

fn screen(
    resources: Vec<(i8, String, Change)>,
    legacy: bool,
    access: ResourceAccess<'_>,
) -> Screened {
    let mut early = Vec::new();
    let mut changes: Vec<(ConfigResource, Change)> = Vec::new();
    let mut duplicates: Vec<ConfigResource> = Vec::new();
    for (resource_type, resource_name, change) in resources {
        let known = matches!(
            resource_type,
            resource::TOPIC
                | resource::BROKER
                | resource::BROKER_LOGGER
                | resource::CLIENT_METRICS
                | resource::GROUP
        );
        if !known {
            early.push(Outcome {
                resource_type,
                resource_name,
                error: ApiError::new(
                    errors::UNSUPPORTED_VERSION,
                    format!("Unknown resource type {resource_type}."),
                ),
            });
            continue;
        }
        if resource_type == resource::BROKER_LOGGER && !legacy {
            // Applied on this node, answered after the rest (broker_logger).
            continue;
        }
        let key = ConfigResource {
            resource_type,
            resource_name,
        };
        if duplicates.contains(&key) {
            continue;
        }
        if let Some(i) = changes.iter().position(|(k, _)| *k == key) {
            changes.remove(i);
            early.push(Outcome {
                resource_type: key.resource_type,
                resource_name: key.resource_name.clone(),
                error: ApiError::new(errors::INVALID_REQUEST, "Duplicate resource."),
            });
            duplicates.push(key);
            continue;
        }
        changes.push((key, change));
    }
    // Kafka's authorization step (`authorizeAlterResource`) comes after the duplicates and
    // before the controller's answers: a refused resource is answered with its error (the
    // legacy API's BROKER_LOGGER resources fail it as an unexpected type).
    let mut allowed = Vec::with_capacity(changes.len());
    for (key, change) in changes {
        match access.config_resource(
            AclOperation::AlterConfigs,
            key.resource_type,
            &key.resource_name,
        ) {
            None => allowed.push((key, change)),
            Some(error) => early.push(Outcome {
                resource_type: key.resource_type,
                resource_name: key.resource_name,
                error,
            }),
        }
    }
    Screened {
        early,
        changes: allowed,
    }
}

/// Who asks, for the rules that depend on it.
#[derive(Debug, Clone, Copy)]
pub struct AlterContext {
    /// This controller's id (a BROKER resource may name it).
    pub node_id: i32,
    /// Whether a broker forwarded the request (Kafka 4.4 checks `cordoned.log.dirs` only on
    /// requests sent to a controller directly).
    pub forwarded: bool,
    /// The release whose rules apply (`cordoned.log.dirs` exists from Kafka 4.4).
    pub release: Release,
}

fn incremental_resources(req: &IncrementalAlterConfigsRequest) -> Vec<(i8, String, Change)> {
    req.resources
        .iter()
        .map(|r| {
            // A name met again keeps its place in the map and takes the later op.
            let mut ops: Vec<(String, (i8, Option<String>))> = Vec::new();
            for c in &r.configs {
                let op = (c.config_operation, c.value.as_ref().map(|v| v.to_string()));
                match ops.iter_mut().find(|(k, _)| k.as_str() == c.name.as_str()) {
                    Some(entry) => entry.1 = op,
                    None => ops.push((c.name.to_string(), op)),
                }
            }
            java_hash_map_order(&mut ops, Built::Default, |(k, _)| k.as_str());
            (
                r.resource_type,
                r.resource_name.to_string(),
                Change::Incremental(ops),
            )
        })
        .collect()
}

fn legacy_resources(req: &AlterConfigsRequest) -> Vec<(i8, String, Change)> {
    req.resources
        .iter()
        .map(|r| {
            let mut set: Vec<(String, Option<String>)> = Vec::new();
            for c in &r.configs {
                let value = c.value.as_ref().map(|v| v.to_string());
                match set.iter_mut().find(|(k, _)| k.as_str() == c.name.as_str()) {
                    Some(entry) => entry.1 = value,
                    None => set.push((c.name.to_string(), value)),
                }
            }
            java_hash_map_order(&mut set, Built::Default, |(k, _)| k.as_str());
            (
                r.resource_type,
                r.resource_name.to_string(),
                Change::Legacy(set),
            )
        })
        .collect()
}

/// Whether the IncrementalAlterConfigs request has a resource for the active controller
/// (else Kafka answers it at once, on any controller).
pub fn incremental_needs_controller(
    req: &IncrementalAlterConfigsRequest,
    access: ResourceAccess<'_>,
) -> bool {
    !screen(incremental_resources(req), false, access)
        .changes
        .is_empty()
}

/// Whether the legacy AlterConfigs request has a resource for the active controller.
pub fn legacy_needs_controller(req: &AlterConfigsRequest, access: ResourceAccess<'_>) -> bool {
    !screen(legacy_resources(req), true, access)
        .changes
        .is_empty()
}

/// Kafka's IncrementalAlterConfigs on the active controller; `broker_loggers` (the answers
/// to the BROKER_LOGGER resources, already applied) come last.
pub fn incremental_alter_configs(
    image: &MetadataImage,
    ctx: AlterContext,
    req: &IncrementalAlterConfigsRequest,
    broker_loggers: &[AlterConfigsResourceResponse],
    access: ResourceAccess<'_>,
) -> ControllerResult<IncrementalAlterConfigsResponse> {
    let screened = screen(incremental_resources(req), false, access);
    let (outcomes, records) = alter(image, ctx, screened, req.validate_only);
    let result = |o: Outcome| {
        resource_result!(
            AlterConfigsResourceResponse,
            o.resource_type,
            StrBytes::from_string(o.resource_name),
            o.error
        )
    };
    let response = match outcomes {
        Ok(outcomes) => IncrementalAlterConfigsResponse::default().with_responses(
            outcomes
                .into_iter()
                .map(result)
                .chain(broker_loggers.iter().cloned())
                .collect(),
        ),
        Err(e) => incremental_alter_configs_error(req, &e),
    };
    ControllerResult::of(records, response)
}

/// Kafka's legacy AlterConfigs on the active controller: each resource's set replaces its
/// stored one.
pub fn legacy_alter_configs(
    image: &MetadataImage,
    ctx: AlterContext,
    req: &AlterConfigsRequest,
    access: ResourceAccess<'_>,
) -> ControllerResult<AlterConfigsResponse> {
    let screened = screen(legacy_resources(req), true, access);
    let (outcomes, records) = alter(image, ctx, screened, req.validate_only);
    let result = |o: Outcome| {
        resource_result!(
            LegacyResult,
            o.resource_type,
            StrBytes::from_string(o.resource_name),
            o.error
        )
    };
    let response = match outcomes {
        Ok(outcomes) => AlterConfigsResponse::default()
            .with_responses(outcomes.into_iter().map(result).collect()),
        Err(e) => legacy_alter_configs_error(req, &e),
    };
    ControllerResult::of(records, response)
}

/// The outcome of every resource (early ones first) and the records to write; `Err` when the
/// whole request fails.
fn alter(
    image: &MetadataImage,
    ctx: AlterContext,
    screened: Screened,
    validate_only: bool,
) -> (Result<Vec<Outcome>, ApiError>, Vec<RecordOut>) {
    let mut outcomes = screened.early;
    let mut records = Vec::new();
    for (key, change) in screened.changes {
        let error = match alter_resource(image, ctx, &key, &change) {
            Ok(mut written) => {
                records.append(&mut written);
                ApiError::code(errors::NONE)
            }
            Err(e) => {
                tracing::info!(
                    "config change of resource {}:{:?} refused: error {} ({:?})",
                    key.resource_type,
                    key.resource_name,
                    e.code,
                    e.message
                );
                e
            }
        };
        outcomes.push(Outcome {
            resource_type: key.resource_type,
            resource_name: key.resource_name,
            error,
        });
    }
    // Kafka 4.1 clears the ELRs chosen under an old min.insync.replicas.
    if elr_enabled(image) {
        let clears: Vec<RecordOut> = records
            .iter()
            .filter_map(|r| match &r.record {
                MetadataRecord::Config(c) if c.name == MIN_INSYNC_REPLICAS => {
                    let topic_name = if c.resource_type == resource::TOPIC {
                        c.resource_name.clone()
                    } else {
                        String::new()
                    };
                    Some(RecordOut::new(
                        MetadataRecord::ClearElr(ClearElrRecord {
                            topic_name,
                            ..Default::default()
                        }),
                        0,
                    ))
                }
                _ => None,
            })
            .collect();
        records.extend(clears);
    }
    if records.len() > super::result::MAX_RECORDS_PER_USER_OP {
        return (
            Err(ApiError::new(
                errors::POLICY_VIOLATION,
                "Unable to perform excessively large batch operation.",
            )),
            Vec::new(),
        );
    }
    if validate_only {
        records.clear();
    }
    (Ok(outcomes), records)
}

/// Whether `key` of a resource of `resource_type` is a LIST config (APPEND/SUBTRACT work).
fn splittable(release: Release, resource_type: i8, key: &str) -> Option<&'static str> {
    match resource_type {
        resource::TOPIC if is_list_topic_config(release, key) => {
            topic_config(release, key).map(|d| d.default)
        }
        resource::BROKER if key == CORDONED_LOG_DIRS && release.has_cordoned_log_dirs() => Some(""),
        resource::BROKER => validate::broker_list_default(key),
        _ => None,
    }
}

/// Kafka's `ConfigurationControlManager.incrementalAlterConfigResource` /
/// `legacyAlterConfigResource`: the records of one resource, or its error. Long on purpose:
/// Kafka's checks for the resource types in its order (each refusal the first that applies).
fn alter_resource(
    image: &MetadataImage,
    ctx: AlterContext,
    key: &ConfigResource,
    change: &Change,
) -> Result<Vec<RecordOut>, ApiError> {
    let stored = image.configs.get(key);
    let current = |k: &str| stored.and_then(|m| m.get(k)).cloned();
    let always = key.resource_type == resource::BROKER;
    // (key, new value or None to delete), explicit changes first.
    let mut explicit: Vec<(String, Option<String>)> = Vec::new();
    let mut implicit: Vec<(String, Option<String>)> = Vec::new();
    match change {
        Change::Incremental(ops) => {
            for (k, (operation, value)) in ops {
                let new = match *operation {
                    op::SET => value.clone(),
                    op::DELETE => None,
                    op::APPEND | op::SUBTRACT => {
                        let verb = if *operation == op::APPEND {
                            "APPEND"
                        } else {
                            "SUBTRACT"
                        };
                        let Some(default) = splittable(ctx.release, key.resource_type, k) else {
                            return Err(ApiError::new(
                                errors::INVALID_CONFIG,
                                format!("Can't {verb} to key {k} because its type is not LIST."),
                            ));
                        };
                        let Some(value) = value else {
                            // Kafka's controller fails the whole request here (a null
                            // pointer); one resource's error is the safe answer.
                            return Err(ApiError::code(errors::UNKNOWN_SERVER_ERROR));
                        };
                        let base = current(k).unwrap_or_else(|| default.to_string());
                        let mut parts: Vec<String> = base
                            .split(',')
                            .filter(|p| !p.is_empty())
                            .map(String::from)
                            .collect();
                        for item in java_split(value) {
                            if *operation == op::APPEND {
                                if !parts.iter().any(|p| p == item) {
                                    parts.push(item.to_string());
                                }
                            } else if let Some(i) = parts.iter().position(|p| p == item) {
                                parts.remove(i);
                            }
                        }
                        Some(parts.join(","))
                    }
                    other => {
                        return Err(ApiError::new(
                            errors::INVALID_REQUEST,
                            format!("Unknown operations type {other}"),
                        ))
                    }
                };
                if always || current(k) != new {
                    explicit.push((k.clone(), new));
                }
            }
        }
        Change::Legacy(set) => {
            for (k, v) in set {
                if always || current(k) != *v {
                    explicit.push((k.clone(), v.clone()));
                }
            }
            if let Some(stored) = stored {
                // Kafka walks the resource's stored TimelineHashMap, whose order depends on
                // the keys' insertion and removal history, which the image does not keep: name
                // order (the differential fuzz compares these deletions as a set).
                for k in stored.keys().filter(|k| !set.iter().any(|(n, _)| n == *k)) {
                    implicit.push((k.clone(), None));
                }
            }
        }
    }
    // ELR and size rules, per record.
    let elr = elr_enabled(image);
    for (i, (k, v)) in explicit.iter().chain(implicit.iter()).enumerate() {
        let is_explicit = i < explicit.len();
        if elr && k == MIN_INSYNC_REPLICAS && key.resource_type == resource::BROKER {
            if !key.resource_name.is_empty() {
                return Err(ApiError::new(
                    errors::INVALID_CONFIG,
                    "Broker-level min.insync.replicas cannot be altered while ELR is enabled.",
                ));
            }
            if v.is_none() {
                return Err(ApiError::new(
                    errors::INVALID_CONFIG,
                    "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.",
                ));
            }
        }
        if ctx.release.has_cordoned_log_dirs()
            && key.resource_type == resource::BROKER
            && k == CORDONED_LOG_DIRS
        {
            cordoned_log_dirs_rules(image, ctx, v.as_deref(), current(k).as_deref())?;
        }
        if is_explicit
            && v.as_ref()
                .is_some_and(|v| v.encode_utf16().count() > MAX_VALUE_LENGTH)
        {
            return Err(ApiError::new(
                errors::INVALID_CONFIG,
                "The configuration value cannot be added because it exceeds the maximum value \
                 size of 32767 bytes.",
            ));
        }
    }
    let mut all: BTreeMap<String, String> = stored.cloned().unwrap_or_default();
    for (k, v) in explicit.iter().chain(implicit.iter()) {
        match v {
            Some(v) => {
                all.insert(k.clone(), v.clone());
            }
            None => {
                all.remove(k);
            }
        }
    }
    match key.resource_type {
        resource::TOPIC => {
            if key.resource_name.is_empty() {
                return Err(ApiError::new(
                    errors::INVALID_REQUEST,
                    "Default topic resources are not allowed.",
                ));
            }
            validate_topic_name(&key.resource_name).map_err(|reason| {
                ApiError::new(
                    errors::INVALID_TOPIC_EXCEPTION,
                    format!("Topic name is invalid: {reason}"),
                )
            })?;
            validate_topic_configs(ctx.release, &all, stored)
                .map_err(|m| ApiError::new(errors::INVALID_CONFIG, m))?;
            if !image.topic_ids.contains_key(&key.resource_name) {
                return Err(ApiError::new(
                    errors::UNKNOWN_TOPIC_OR_PARTITION,
                    format!("The topic '{}' does not exist.", key.resource_name),
                ));
            }
        }
        resource::BROKER => {
            if !key.resource_name.is_empty() {
                let id = validate::broker_name(&key.resource_name)?;
                // Kafka: a registered broker or a controller of the quorum (this one, or any
                // that registered).
                let known = image.brokers.contains_key(&id)
                    || image.controllers.contains_key(&id)
                    || id == ctx.node_id;
                if !known {
                    return Err(ApiError::new(
                        BROKER_ID_NOT_REGISTERED,
                        format!("No node with id {id} found."),
                    ));
                }
            }
        }
        resource::CLIENT_METRICS => validate::client_metrics(&key.resource_name, &all)?,
        resource::GROUP => validate::group(ctx.release, &key.resource_name, &all)?,
        other => {
            return Err(ApiError::new(
                errors::INVALID_REQUEST,
                format!("Unknown resource type {other}"),
            ))
        }
    }
    Ok(explicit
        .into_iter()
        .chain(implicit)
        .map(|(name, value)| {
            RecordOut::new(
                MetadataRecord::Config(ConfigRecord {
                    resource_type: key.resource_type,
                    resource_name: key.resource_name.clone(),
                    name,
                    value,
                    ..Default::default()
                }),
                0,
            )
        })
        .collect())
}

/// Kafka 4.4's `isCordonedLogDirsDisabled` / `isCordonedLogDirsInvalid` (KIP-1066): the key
/// needs metadata.version 4.3-IV0, and a controller asked directly may only shrink the list
/// (a broker forwards what its operator set, checked against its own log directories).
fn cordoned_log_dirs_rules(
    image: &MetadataImage,
    ctx: AlterContext,
    new: Option<&str>,
    current: Option<&str>,
) -> Result<(), ApiError> {
    if image.metadata_version().unwrap_or(0) < crate::metadata::image::mv::CORDONED_LOG_DIRS {
        return Err(ApiError::new(
            errors::INVALID_CONFIG,
            "The cordoned.log.dirs configuration value cannot be set because it requires \
             metadata.version >= 4.3-IV0",
        ));
    }
    let Some(new) = new.filter(|v| !ctx.forwarded && !v.trim().is_empty()) else {
        return Ok(());
    };
    // Java's `Pattern.compile("\\s*,\\s*").split(value.trim(), -1)`.
    let split =
        |v: &str| -> Vec<String> { v.trim().split(',').map(|p| p.trim().to_string()).collect() };
    let allowed = current.map(split).unwrap_or_default();
    if split(new).iter().all(|d| allowed.contains(d)) {
        Ok(())
    } else {
        Err(ApiError::new(
            errors::INVALID_CONFIG,
            "When updating cordoned.log.dirs via controllers,  the new value must be a subset \
             of the current configuration value.",
        ))
    }
}

/// Java's `String.split(",")`: trailing empty parts dropped, `""` gives `[""]`.
fn java_split(s: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = s.split(',').collect();
    while parts.len() > 1 && parts.last() == Some(&"") {
        parts.pop();
    }
    if parts.len() == 1 && parts[0].is_empty() && !s.is_empty() {
        // "," alone: every part empty, all dropped.
        return Vec::new();
    }
    parts
}
