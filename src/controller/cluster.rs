//! Brokers and controllers joining and leaving (Kafka's `ClusterControlManager`): broker
//! registration, the broker-epoch check, controller registration (KIP-919), unregistration.
//!
//! ```text
//!   BrokerRegistration ─▶ checks (cluster id, live duplicate, ZK, log dirs, features)
//!     ─▶ [new incarnation: unclean-shutdown PartitionChangeRecords] RegisterBrokerRecord
//!        (epoch = offset of the batch's first record; same incarnation: epoch, fencing kept)
//!   ControllerRegistration ─▶ RegisterControllerRecord
//!   UnregisterBroker ─▶ PartitionChangeRecords (leaves every ISR) + UnregisterBrokerRecord
//!   UnregisterController (Kafka 4.4, metadata.version 4.4-IV2) ─▶ UnregisterControllerRecord
//! ```

use kafka_protocol::messages::{
    BrokerRegistrationRequest, BrokerRegistrationResponse, ControllerRegistrationRequest,
    ControllerRegistrationResponse, UnregisterBrokerResponse, UnregisterControllerResponse,
};
use kafka_protocol::protocol::StrBytes;

use super::config::ControllerConfig;
use super::errors::{self, ApiError};
use super::heartbeats::BrokerHeartbeatManager;
use super::replication;
use super::result::{ControllerResult, RecordOut};
use crate::common::java::{java_hash_map_order, Built};
use crate::common::release::{KRAFT_VERSION_FEATURE, METADATA_VERSION_FEATURE};
use crate::common::uuid::is_reserved_directory_id;
use crate::metadata::controller::{ControllerEndpoint, ControllerFeature, ControllerRegistration};
use crate::metadata::image::{mv, register_broker_version, MetadataImage};
use crate::metadata::record::MetadataRecord;
use crate::metadata::records::{
    BrokerEndpoint, BrokerFeature, RegisterBrokerRecord, UnregisterBrokerRecord,
    UnregisterControllerRecord,
};
use crate::metadata::wire::TaggedFields;

/// A broker registration's outcome: the result, and (broker id, new incarnation) when a
/// record is written.
#[derive(Debug)]
pub struct Registration {
    /// Records and reply.
    pub result: ControllerResult<BrokerRegistrationResponse>,
    /// The registered broker and whether its record leaves it fenced.
    pub registered: Option<(i32, bool)>,
}

/// Listeners as Kafka keys them, by name: a later one of the same name replaces the earlier
/// in place (brokers and controllers alike).
fn endpoints_by_name<'a>(
    listeners: impl Iterator<Item = (&'a str, &'a str, u16, i16)>,
) -> Vec<BrokerEndpoint> {
    let mut end_points: Vec<BrokerEndpoint> = Vec::new();
    for (name, host, port, security_protocol) in listeners {
        let endpoint = BrokerEndpoint {
            name: name.to_string(),
            host: host.to_string(),
            port,
            security_protocol,
            unknown_tagged: TaggedFields::default(),
        };
        match end_points.iter_mut().find(|e| e.name == endpoint.name) {
            Some(e) => *e = endpoint,
            None => end_points.push(endpoint),
        }
    }
    end_points
}

/// The finalized level Kafka checks a broker's range against (`versionOrDefault`):
/// metadata.version defaults to 1, every other feature to 0; kraft.version is the Raft
/// layer's.
fn finalized_level(image: &MetadataImage, kraft_version: i16, name: &str) -> i16 {
    if name == KRAFT_VERSION_FEATURE {
        return kraft_version;
    }
    let default = if name == METADATA_VERSION_FEATURE {
        1
    } else {
        0
    };
    image.features.get(name).copied().unwrap_or(default)
}

fn check_feature(
    image: &MetadataImage,
    kraft_version: i16,
    name: &str,
    min: i16,
    max: i16,
) -> Result<(), ApiError> {
    let finalized = finalized_level(image, kraft_version, name);
    if !(min..=max).contains(&finalized) {
        return Err(ApiError::new(
            errors::UNSUPPORTED_VERSION,
            format!(
                "Unable to register because the broker does not support finalized version \
                 {finalized} of {name}. The broker wants a version between {min} and {max}, \
                 inclusive."
            ),
        ));
    }
    Ok(())
}

/// Kafka's `registerBroker`, with `next_offset` the offset the batch's first record gets.
pub fn register_broker(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    heartbeats: &BrokerHeartbeatManager,
    now_ms: u64,
    req: &BrokerRegistrationRequest,
    version: i16,
    next_offset: i64,
) -> Registration {
    match register_broker_checked(image, cfg, heartbeats, now_ms, req, version, next_offset) {
        Ok(r) => r,
        Err(e) => {
            tracing::info!(
                "Refused the registration of broker {}: error {} ({})",
                req.broker_id.0,
                e.code,
                e.message.as_deref().unwrap_or("")
            );
            Registration {
                result: ControllerResult::response_only(
                    BrokerRegistrationResponse::default()
                        .with_error_code(e.code)
                        .with_broker_epoch(-1),
                ),
                registered: None,
            }
        }
    }
}

/// Kafka's `ClusterControlManager.registerBroker` checks in its order. Long on purpose: the
/// checks run in one sequence whose order is the protocol (each refusal is the first that
/// applies), and later ones use what earlier ones looked up.
fn register_broker_checked(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    heartbeats: &BrokerHeartbeatManager,
    now_ms: u64,
    req: &BrokerRegistrationRequest,
    version: i16,
    next_offset: i64,
) -> Result<Registration, ApiError> {
    if req.cluster_id.as_str() != cfg.cluster_id {
        return Err(ApiError::new(
            errors::INCONSISTENT_CLUSTER_ID,
            format!(
                "Expected cluster ID {}, but got cluster ID {}",
                cfg.cluster_id, req.cluster_id
            ),
        ));
    }
    let broker_id = req.broker_id.0;
    let existing = image.brokers.get(&broker_id);
    if let Some(existing) = existing {
        if heartbeats.has_valid_session(
            broker_id,
            existing.broker_epoch,
            now_ms,
            cfg.broker_session_timeout_ms,
        ) && req.incarnation_id != existing.incarnation_id
        {
            return Err(ApiError::new(
                errors::DUPLICATE_BROKER_REGISTRATION,
                "Another broker is registered with that broker id. If the broker was recently \
                 restarted this should self-resolve once the heartbeat manager expires the \
                 broker's session.",
            ));
        }
    }
    if req.is_migrating_zk_broker {
        return Err(ApiError::new(
            errors::BROKER_ID_NOT_REGISTERED,
            "Controller does not support registering ZK brokers.",
        ));
    }
    let level = image
        .metadata_version()
        .unwrap_or(crate::common::release::mv::MINIMUM_KRAFT);
    let directories = level >= mv::DIRECTORY_ASSIGNMENT;
    if directories {
        if req.log_dirs.is_empty() {
            return Err(ApiError::new(
                errors::INVALID_REGISTRATION,
                "No directories specified in request",
            ));
        }
        if req.log_dirs.iter().any(is_reserved_directory_id) {
            return Err(ApiError::new(
                errors::INVALID_REGISTRATION,
                "Reserved directory ID in request",
            ));
        }
        let mut unique = req.log_dirs.clone();
        unique.sort_unstable();
        unique.dedup();
        if unique.len() != req.log_dirs.len() {
            return Err(ApiError::new(
                errors::INVALID_REGISTRATION,
                "Duplicate directory ID in request",
            ));
        }
        for dir in &req.log_dirs {
            if let Some(owner) = image
                .brokers
                .values()
                .find(|b| b.broker_id != broker_id && b.log_dirs.contains(dir))
            {
                return Err(ApiError::new(
                    errors::INVALID_REGISTRATION,
                    format!(
                        "Broker {} is already registered with directory {}",
                        owner.broker_id,
                        crate::common::uuid::uuid_to_kafka_string(dir)
                    ),
                ));
            }
        }
    }
    // Every feature range the broker sends must hold the finalized level; a finalized feature
    // it does not mention must be 0 to it; no metadata.version range means only level 1.
    let mut features = Vec::new();
    for f in &req.features {
        check_feature(
            image,
            cfg.kraft_version,
            &f.name,
            f.min_supported_version,
            f.max_supported_version,
        )?;
        features.push(BrokerFeature {
            name: f.name.to_string(),
            min_supported_version: f.min_supported_version,
            max_supported_version: f.max_supported_version,
            unknown_tagged: TaggedFields::default(),
        });
    }
    let sent = |name: &str| req.features.iter().any(|f| f.name.as_str() == name);
    // Kafka 4.1 refuses a broker that sends no metadata.version range.
    if !sent(METADATA_VERSION_FEATURE) {
        return Err(ApiError::new(
            errors::INVALID_REGISTRATION,
            "Request features do not contain 'metadata.version'",
        ));
    }
    // Kafka's `unverifiedFeatures`: a copy of the finalized features (a HashMap filled from
    // `finalizedVersions`, then copied with the Raft layer's kraft.version put in, then
    // copied again), walked in that map's order, so kraft.version counts too.
    let mut finalized: Vec<(&str, i16)> = image
        .features
        .iter()
        .map(|(name, level)| (name.as_str(), *level))
        .collect();
    java_hash_map_order(&mut finalized, Built::Default, |(name, _)| name);
    finalized.push((KRAFT_VERSION_FEATURE, cfg.kraft_version));
    java_hash_map_order(&mut finalized, Built::Copy, |(name, _)| name);
    for (name, level) in finalized {
        if name != METADATA_VERSION_FEATURE && level != 0 && !sent(name) {
            check_feature(image, cfg.kraft_version, name, 0, 0)?;
        }
    }
    let end_points = endpoints_by_name(req.listeners.iter().map(|l| {
        (
            l.name.as_str(),
            l.host.as_str(),
            l.port,
            l.security_protocol,
        )
    }));
    let new_incarnation = existing.is_none_or(|e| e.incarnation_id != req.incarnation_id);
    let mut records = Vec::new();
    let mut record = RegisterBrokerRecord {
        broker_id,
        is_migrating_zk_broker: false,
        incarnation_id: req.incarnation_id,
        broker_epoch: next_offset,
        end_points,
        features,
        rack: req.rack.as_ref().map(|r| r.to_string()),
        fenced: true,
        in_controlled_shutdown: false,
        log_dirs: if directories {
            req.log_dirs.clone()
        } else {
            Vec::new()
        },
        cordoned_log_dirs: None,
        unknown_tagged: TaggedFields::default(),
    };
    match existing {
        Some(e) if !new_incarnation => {
            tracing::info!(
                "Amending registration of broker {broker_id}, incarnation ID {}. Broker epoch \
                 remains {}.",
                req.incarnation_id,
                e.broker_epoch
            );
            record.fenced = e.fenced;
            record.in_controlled_shutdown = e.in_controlled_shutdown;
            record.broker_epoch = e.broker_epoch;
        }
        _ => {
            // A broker that registers again with its previous epoch (v3+) shut down cleanly;
            // either way it leaves every ISR it is still in. With ELR on, an unclean one (it
            // may have lost data) also leaves every ELR (Kafka 4.1's handleBrokerShutdown).
            let previous = existing.map_or(-2, |e| e.broker_epoch);
            let clean = version >= 3 && previous == req.previous_broker_epoch;
            if super::features::elr_enabled(image) && !clean {
                records.extend(replication::broker_shut_down_uncleanly(
                    image, cfg, broker_id,
                ));
            } else {
                records.extend(replication::broker_removed_from_isrs(image, cfg, broker_id));
            }
            record.broker_epoch = next_offset;
            match existing {
                None => tracing::info!(
                    "No previous registration found for broker {broker_id}. New incarnation ID \
                     is {}. Generated {} record(s) to clean up previous incarnations. New broker \
                     epoch is {next_offset}.",
                    req.incarnation_id,
                    records.len()
                ),
                Some(e) => tracing::info!(
                    "Registering a new incarnation of broker {broker_id}. Previous incarnation \
                     ID was {}; new incarnation ID is {}. Generated {} record(s) to clean up \
                     previous incarnations. Broker epoch will become {next_offset}.",
                    e.incarnation_id,
                    req.incarnation_id,
                    records.len()
                ),
            }
        }
    }
    let epoch = record.broker_epoch;
    let fenced = record.fenced;
    records.push(RecordOut::new(
        MetadataRecord::RegisterBroker(record),
        register_broker_version(level),
    ));
    Ok(Registration {
        result: ControllerResult::of(
            records,
            BrokerRegistrationResponse::default()
                .with_error_code(errors::NONE)
                .with_broker_epoch(epoch),
        ),
        registered: Some((broker_id, fenced)),
    })
}

/// Kafka's `unregisterBroker`: the broker leaves every ISR, then its registration goes.
pub fn unregister_broker(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    broker_id: i32,
) -> ControllerResult<UnregisterBrokerResponse> {
    let Some(registration) = image.brokers.get(&broker_id) else {
        return ControllerResult::response_only(
            UnregisterBrokerResponse::default()
                .with_error_code(errors::BROKER_ID_NOT_REGISTERED)
                .with_error_message(Some(StrBytes::from_string(format!(
                    "Broker ID {broker_id} is not currently registered"
                )))),
        );
    };
    let mut records = replication::broker_removed_from_isrs(image, cfg, broker_id);
    records.push(RecordOut::new(
        MetadataRecord::UnregisterBroker(UnregisterBrokerRecord {
            broker_id,
            broker_epoch: registration.broker_epoch,
            unknown_tagged: TaggedFields::default(),
        }),
        0,
    ));
    ControllerResult::of(records, UnregisterBrokerResponse::default())
}

/// Kafka 4.4's `unregisterController` (QuorumController, then ClusterControlManager): the
/// active controller may not remove itself, the metadata.version must be 4.4-IV2, and the
/// controller must be registered; then one UnregisterControllerRecord, atomically.
pub fn unregister_controller(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    controller_id: i32,
) -> ControllerResult<UnregisterControllerResponse> {
    let refused = |code: i16, message: String| {
        ControllerResult::response_only(
            UnregisterControllerResponse::default()
                .with_error_code(code)
                .with_error_message(Some(StrBytes::from_string(message))),
        )
    };
    if controller_id == cfg.node_id {
        return refused(
            errors::INVALID_REQUEST,
            "Controller cannot unregister itself while it is active.".into(),
        );
    }
    if image.metadata_version().unwrap_or(0) < mv::CONTROLLER_UNREGISTRATION {
        return refused(
            errors::UNSUPPORTED_VERSION,
            "The current MetadataVersion is too old to support controller unregistration.".into(),
        );
    }
    if !image.controllers.contains_key(&controller_id) {
        return refused(
            errors::CONTROLLER_ID_NOT_REGISTERED,
            format!("Controller ID {controller_id} is not currently registered."),
        );
    }
    // One record: atomic as Kafka's `atomicOf` asks, since every result is one batch.
    ControllerResult::of(
        vec![RecordOut::new(
            MetadataRecord::UnregisterController(UnregisterControllerRecord {
                controller_id,
                ..Default::default()
            }),
            0,
        )],
        UnregisterControllerResponse::default(),
    )
}

/// Kafka's `registerController`: checks a ControllerRegistration and builds its record.
pub fn register_controller(
    image: &MetadataImage,
    req: &ControllerRegistrationRequest,
) -> ControllerResult<ControllerRegistrationResponse> {
    let refuse = |code: i16, message: String| {
        tracing::info!(
            "Refused the registration of controller {}: error {code} ({message})",
            req.controller_id
        );
        ControllerResult::response_only(
            ControllerRegistrationResponse::default()
                .with_error_code(code)
                .with_error_message(Some(StrBytes::from_string(message))),
        )
    };
    if !image.controller_registration_supported() {
        return refuse(
            errors::UNSUPPORTED_VERSION,
            "The current MetadataVersion is too old to support controller registrations.".into(),
        );
    }
    if let Some(l) = req.listeners.iter().find(|l| {
        crate::common::security_protocol::SecurityProtocol::from_id(l.security_protocol).is_none()
    }) {
        return refuse(
            errors::UNKNOWN_SERVER_ERROR,
            format!(
                "Unknown security protocol {} in listener {}",
                l.security_protocol, l.name
            ),
        );
    }
    let end_points: Vec<ControllerEndpoint> = endpoints_by_name(req.listeners.iter().map(|l| {
        (
            l.name.as_str(),
            l.host.as_str(),
            l.port,
            l.security_protocol,
        )
    }));
    let registration = ControllerRegistration {
        controller_id: req.controller_id,
        incarnation_id: req.incarnation_id,
        zk_migration_ready: false,
        end_points,
        features: req
            .features
            .iter()
            .map(|f| ControllerFeature {
                name: f.name.to_string(),
                min_supported_version: f.min_supported_version,
                max_supported_version: f.max_supported_version,
                unknown_tagged: TaggedFields::default(),
            })
            .collect(),
        unknown_tagged: TaggedFields::default(),
    };
    tracing::info!(
        "Registering controller {} (incarnation {})",
        req.controller_id,
        req.incarnation_id
    );
    ControllerResult::of(
        vec![RecordOut::new(
            MetadataRecord::RegisterController(registration),
            0,
        )],
        ControllerRegistrationResponse::default(),
    )
}
