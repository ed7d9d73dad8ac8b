//! Features on the controller (Kafka's `FeatureControlManager`): the read side (what a
//! metadata.version implies for record versions and partition changes, whether ELR is on)
//! and UpdateFeatures (Kafka 4.1's `QuorumController.updateFeatures`, `FeatureControlManager`
//! and the ELR safety records of `ConfigurationControlManager.updateFeatures`).
//!
//! ```text
//!   updates (last of a name wins) ─▶ in Java HashMap order, stop at the first refusal:
//!     upgrade type ─▶ level ≥ 0 ─▶ this controller, every broker, every controller supports it
//!     ─▶ direction (upgrade / downgrade) ─▶ metadata.version: no downgrade across a level that
//!     changed metadata │ kraft.version: the Raft layer's │ others: their dependencies
//!   ─▶ [ELR safety ConfigRecords] + FeatureLevelRecords, one batch; validate_only writes none
//! ```
//!
//! kraft.version is the Raft layer's, reached through the [`KRaftVersionAccessor`]: its level
//! is read from there, and an UPGRADE is handed to it in the loop above (as Kafka's
//! `upgradeKRaftVersion`), which appends the KRaftVersionRecord (+ VotersRecord) control batch
//! at once; the controller then writes a NoOpRecord after it, so the answer, released when the
//! NoOpRecord commits, follows the upgrade's commit. The Raft layer's refusals answer with their
//! own code and message; the ones Kafka does not expect (not the leader, a voter without a
//! directory id) leave the request as NOT_CONTROLLER or UNKNOWN_SERVER_ERROR and the controller
//! fails over.

use std::collections::BTreeMap;

use kafka_protocol::messages::update_features_response::UpdatableFeatureResult;
use kafka_protocol::messages::{UpdateFeaturesRequest, UpdateFeaturesResponse};
use kafka_protocol::protocol::StrBytes;

use super::answers::not_controller;
use super::config::ControllerConfig;
use super::configs::resource;
use super::errors::{self, ApiError};
use super::io::KRaftVersionAccessor;
use super::result::{ControllerResult, RecordOut};
use crate::common::java::{java_hash_map_order, Built};
use crate::common::release::{KRAFT_VERSION_FEATURE, METADATA_VERSION_FEATURE};
use crate::metadata::image::{ConfigResource, MetadataImage, ELR_FEATURE};
use crate::metadata::record::MetadataRecord;
use crate::metadata::records::{ConfigRecord, FeatureLevelRecord, NoOpRecord};
use crate::raft::UpgradeKRaftVersionError;

/// The metadata.version levels whose metadata a lower level cannot hold
/// (`MetadataVersion.didMetadataChange`): a downgrade across one is refused. 30 (cordoned log
/// directories), 32 (CIDR ACL hosts) and 33 (controller unregistration) are Kafka 4.4.0's.
const METADATA_CHANGED_AT: &[i16] = &[7, 8, 11, 13, 14, 15, 17, 23, 30, 32, 33];
/// Features and the metadata.version level each level needs (Kafka's `Feature` dependencies;
/// in 4.1 only eligible.leader.replicas.version 1 needs metadata.version 23).
const DEPENDENCIES: &[(&str, i16, i16)] = &[(ELR_FEATURE, 1, 23)];

/// `FeatureUpdate.UpgradeType` codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UpgradeType {
    Upgrade,
    SafeDowngrade,
    UnsafeDowngrade,
    Unknown,
}

impl UpgradeType {
    fn from_code(code: i8) -> Self {
        match code {
            1 => Self::Upgrade,
            2 => Self::SafeDowngrade,
            3 => Self::UnsafeDowngrade,
            _ => Self::Unknown,
        }
    }
}

/// Kafka's `VersionRange.toString`.
fn range_text(min: i16, max: i16) -> String {
    if max == i16::MAX {
        format!("{min}+")
    } else if min == max {
        min.to_string()
    } else {
        format!("{min}-{max}")
    }
}

/// Kafka's `QuorumFeatures.reasonNotSupported`.
fn not_supported(level: i16, what: &str, range: Option<(i16, i16)>) -> Option<String> {
    let (min, max) = range.unwrap_or((0, 0));
    if (min..=max).contains(&level) {
        return None;
    }
    Some(if max == 0 {
        format!("{what} does not support this feature.")
    } else {
        format!("{what} only supports versions {}", range_text(min, max))
    })
}

/// The result of one feature's update.
enum Update {
    /// Records to write.
    Records(Vec<RecordOut>),
    /// An error Kafka's event does not catch (not an `ApiException`): the whole request is
    /// answered with it and the controller fails over.
    FailOver(ApiError),
}

struct Checker<'a> {
    image: &'a MetadataImage,
    cfg: &'a ControllerConfig,
    kraft_version: i16,
}

impl Checker<'_> {
    fn current(&self, name: &str) -> i16 {
        match name {
            METADATA_VERSION_FEATURE => self.image.metadata_version().unwrap_or(0),
            KRAFT_VERSION_FEATURE => self.kraft_version,
            _ => self.image.features.get(name).copied().unwrap_or(0),
        }
    }

    /// Kafka's `reasonNotSupported`: this node, every broker (fenced too), and from
    /// metadata.version 3.7-IV0 every registered controller and every voter.
    fn reason_not_supported(&self, name: &str, level: i16) -> Option<String> {
        let local = self
            .cfg
            .release
            .supported_feature(name)
            .map(|f| (f.min_version, f.max_version));
        if let Some(r) = not_supported(
            level,
            &format!("Local controller {}", self.cfg.node_id),
            local,
        ) {
            return Some(r);
        }
        for id in self.image.brokers_in_kafka_order() {
            let range = self.image.brokers[&id]
                .features
                .iter()
                .find(|f| f.name == name)
                .map(|f| (f.min_supported_version, f.max_supported_version));
            if let Some(r) = not_supported(level, &format!("Broker {id}"), range) {
                return Some(r);
            }
        }
        if self.image.metadata_version().unwrap_or(0)
            >= crate::common::release::mv::CONTROLLER_REGISTRATION
        {
            let mut controller_ids: Vec<i32> = self.image.controllers.keys().copied().collect();
            crate::common::java::timeline_hash_order(&mut controller_ids, |id| *id);
            for id in &controller_ids {
                if *id == self.cfg.node_id {
                    continue;
                }
                let range = self.image.controllers[id]
                    .features
                    .iter()
                    .find(|f| f.name == name)
                    .map(|f| (f.min_supported_version, f.max_supported_version));
                if let Some(r) = not_supported(level, &format!("Controller {id}"), range) {
                    return Some(r);
                }
            }
            for id in &self.cfg.quorum_node_ids {
                if *id != self.cfg.node_id && !controller_ids.contains(id) {
                    return Some(format!(
                        "controller {id} has not registered, and may not support this feature"
                    ));
                }
            }
        }
        None
    }

    /// Kafka's `updateFeature`: the records of one update, or its refusal. A kraft.version
    /// upgrade is handed to `raft` as the leader of `epoch`.
    #[allow(clippy::too_many_arguments)]
    fn update(
        &self,
        raft: &mut dyn KRaftVersionAccessor,
        epoch: i32,
        name: &str,
        level: i16,
        upgrade: UpgradeType,
        proposed: &BTreeMap<String, i16>,
        validate_only: bool,
    ) -> Result<Update, ApiError> {
        let invalid = |reason: &str| {
            ApiError::new(
                errors::INVALID_UPDATE_VERSION,
                format!("Invalid update version {level} for feature {name}. {reason}"),
            )
        };
        if upgrade == UpgradeType::Unknown {
            return Err(invalid(
                "The controller does not support the given upgrade type.",
            ));
        }
        let current = self.current(name);
        if level < 0 {
            return Err(invalid("A feature version cannot be less than 0."));
        }
        if let Some(reason) = self.reason_not_supported(name, level) {
            return Err(invalid(&reason));
        }
        if level < current && upgrade == UpgradeType::Upgrade {
            return Err(invalid(
                "Can't downgrade the version of this feature without setting the upgrade type \
                 to either safe or unsafe downgrade.",
            ));
        }
        if level > current && upgrade != UpgradeType::Upgrade {
            return Err(invalid("Can't downgrade to a newer version."));
        }
        let record = |level: i16| {
            RecordOut::new(
                MetadataRecord::FeatureLevel(FeatureLevelRecord {
                    name: name.to_string(),
                    feature_level: level,
                    ..Default::default()
                }),
                0,
            )
        };
        match name {
            METADATA_VERSION_FEATURE => {
                if level < current
                    && METADATA_CHANGED_AT
                        .iter()
                        .any(|l| *l > level && *l <= current)
                {
                    let reason = if upgrade == UpgradeType::UnsafeDowngrade {
                        "Unsafe metadata downgrade is not supported in this version."
                    } else {
                        "Refusing to perform the requested downgrade because it might delete \
                         metadata information."
                    };
                    // Kafka 4.2 words it `unsupportedMetadataDowngrade`.
                    let message = if self.cfg.release.names_both_levels_in_downgrade_refusal() {
                        format!(
                            "Unsupported metadata.version downgrade from {current} to {level}. \
                             {reason}"
                        )
                    } else {
                        format!("Invalid metadata.version {level}. {reason}")
                    };
                    return Err(ApiError::new(errors::INVALID_UPDATE_VERSION, message));
                }
                Ok(Update::Records(vec![record(level)]))
            }
            KRAFT_VERSION_FEATURE => {
                if upgrade != UpgradeType::Upgrade {
                    if level != current {
                        return Err(invalid("Can't downgrade the version of this feature."));
                    }
                    return Ok(Update::Records(Vec::new()));
                }
                match raft.upgrade_kraft_version(epoch, level, validate_only) {
                    // Kafka's controller writes a NoOpRecord after the Raft layer's batch,
                    // also when that had nothing to do (the same level).
                    Ok(()) => Ok(Update::Records(vec![RecordOut::new(
                        MetadataRecord::NoOp(NoOpRecord::default()),
                        0,
                    )])),
                    Err(UpgradeKRaftVersionError::InvalidUpdateVersion(message)) => {
                        Err(ApiError::new(errors::INVALID_UPDATE_VERSION, message))
                    }
                    Err(UpgradeKRaftVersionError::IllegalArgument(reason)) => Err(invalid(&reason)),
                    Err(UpgradeKRaftVersionError::NotLeader(message)) => {
                        tracing::info!(
                            "kraft.version upgrade refused by the Raft layer: {message}"
                        );
                        Ok(Update::FailOver(not_controller(None)))
                    }
                    Err(UpgradeKRaftVersionError::IllegalState(message)) => {
                        tracing::error!(
                            "kraft.version upgrade failed in the Raft layer: {message}; failing over"
                        );
                        Ok(Update::FailOver(ApiError::code(
                            errors::UNKNOWN_SERVER_ERROR,
                        )))
                    }
                }
            }
            _ => {
                if !self.cfg.release.knows_feature(name) {
                    return Err(invalid(&format!("Feature {name} not found.")));
                }
                // Kafka's `Feature.validateVersion`: any level above 0 needs the proposed
                // metadata.version at its minimum (3.3-IV3) first, then the dependencies.
                let mv = proposed.get(METADATA_VERSION_FEATURE).copied().unwrap_or(0);
                if level >= 1 && mv < crate::common::release::mv::V3_3_IV3 {
                    return Err(invalid(&format!(
                        "{name} could not be set to {level} because it depends on \
                         {METADATA_VERSION_FEATURE}=7 (3.3-IV3)"
                    )));
                }
                for (feature, at, min_mv) in DEPENDENCIES {
                    if *feature == name && level >= *at && mv < *min_mv {
                        return Err(invalid(&format!(
                            "{name} could not be set to {level} because it depends on \
                             {METADATA_VERSION_FEATURE} level {min_mv}"
                        )));
                    }
                }
                Ok(Update::Records(vec![record(level)]))
            }
        }
    }
}

/// Kafka's `maybeGenerateElrSafetyRecords`: turning ELR on needs a cluster-level
/// min.insync.replicas and no broker-level one.
fn elr_safety_records(image: &MetadataImage, cfg: &ControllerConfig) -> Vec<RecordOut> {
    let key = "min.insync.replicas";
    let config = |resource_name: String, value: Option<String>| {
        RecordOut::new(
            MetadataRecord::Config(ConfigRecord {
                resource_type: resource::BROKER,
                resource_name,
                name: key.to_string(),
                value,
                ..Default::default()
            }),
            0,
        )
    };
    let mut out = Vec::new();
    let cluster = ConfigResource {
        resource_type: resource::BROKER,
        resource_name: String::new(),
    };
    if !image
        .configs
        .get(&cluster)
        .is_some_and(|c| c.contains_key(key))
    {
        out.push(config(
            String::new(),
            Some(cfg.min_insync_replicas.to_string()),
        ));
    }
    let mut brokers: Vec<i32> = image
        .configs
        .iter()
        .filter(|(r, c)| {
            r.resource_type == resource::BROKER
                && !r.resource_name.is_empty()
                && c.contains_key(key)
        })
        .filter_map(|(r, _)| r.resource_name.parse().ok())
        .collect();
    crate::common::java::timeline_hash_order(&mut brokers, |id| *id);
    for id in brokers {
        out.push(config(id.to_string(), None));
    }
    out
}

/// Kafka's UpdateFeatures on the active controller of `epoch`; kraft.version is `raft`'s.
/// `Err` is an error that leaves Kafka's event: the whole request is answered with it
/// ([`update_features_error`]) and the controller fails over.
pub fn update_features(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    raft: &mut dyn KRaftVersionAccessor,
    epoch: i32,
    req: &UpdateFeaturesRequest,
    version: i16,
) -> Result<ControllerResult<UpdateFeaturesResponse>, ApiError> {
    let mut updates: Vec<(String, i16, UpgradeType)> = Vec::new();
    for u in &req.feature_updates {
        // v0 has no upgrade type: Kafka's controller reads the default (upgrade) whatever
        // AllowDowngrade says.
        let upgrade = if version == 0 {
            UpgradeType::Upgrade
        } else {
            UpgradeType::from_code(u.upgrade_type)
        };
        let name = u.feature.to_string();
        match updates.iter_mut().find(|(n, _, _)| *n == name) {
            Some(entry) => {
                entry.1 = u.max_version_level;
                entry.2 = upgrade;
            }
            None => updates.push((name, u.max_version_level, upgrade)),
        }
    }
    java_hash_map_order(&mut updates, Built::Default, |(n, _, _)| n.as_str());
    let checker = Checker {
        image,
        cfg,
        kraft_version: raft.kraft_version(),
    };
    let mut proposed: BTreeMap<String, i16> = image.features.clone();
    proposed.insert(
        METADATA_VERSION_FEATURE.to_string(),
        checker.current(METADATA_VERSION_FEATURE),
    );
    for (n, l, _) in &updates {
        proposed.insert(n.clone(), *l);
    }
    let mut records = Vec::new();
    for (name, level, upgrade) in &updates {
        match checker.update(
            raft,
            epoch,
            name,
            *level,
            *upgrade,
            &proposed,
            req.validate_only,
        ) {
            Ok(Update::Records(r)) => records.extend(r),
            Ok(Update::FailOver(e)) => return Err(e),
            Err(e) => {
                tracing::info!("UpdateFeatures refused: error {} ({:?})", e.code, e.message);
                let message = format!(
                    "The update failed for all features since the following feature had an \
                     error: {}",
                    e.message.unwrap_or_default()
                );
                return Ok(ControllerResult::response_only(
                    UpdateFeaturesResponse::default()
                        .with_error_code(e.code)
                        .with_error_message(Some(StrBytes::from_string(message))),
                ));
            }
        }
    }
    // ApiError.NONE's message is null.
    let mut response = UpdateFeaturesResponse::default().with_error_message(None);
    if version <= 1 {
        // Kafka sets each result's message to `Errors.NONE.message()`, which is "NONE".
        response = response.with_results(
            req.feature_updates
                .iter()
                .map(|u| {
                    UpdatableFeatureResult::default()
                        .with_feature(u.feature.clone())
                        .with_error_code(errors::NONE)
                        .with_error_message(Some(StrBytes::from_static_str("NONE")))
                })
                .collect(),
        );
    }
    if req.validate_only {
        return Ok(ControllerResult::response_only(response));
    }
    let elr_on = updates.iter().any(|(n, l, _)| n == ELR_FEATURE && *l > 0);
    if elr_on {
        let mut safety = elr_safety_records(image, cfg);
        safety.append(&mut records);
        records = safety;
    }
    tracing::info!("UpdateFeatures: writing {} record(s)", records.len());
    Ok(ControllerResult::of(records, response))
}

/// Whether an ISR shrink bumps the leader epoch at `image`'s metadata.version.
pub fn leader_epoch_bump_on_isr_shrink(image: &MetadataImage) -> bool {
    image
        .metadata_version()
        .is_some_and(|l| l < crate::common::release::mv::NO_LEADER_EPOCH_BUMP_ON_ISR_SHRINK)
}

/// The PartitionRecord / PartitionChangeRecord version at `image`'s metadata.version.
pub fn partition_record_version(image: &MetadataImage) -> u16 {
    crate::metadata::image::partition_version(image.metadata_version().unwrap_or(1))
}

/// Whether eligible leader replicas (KIP-966) are on: eligible.leader.replicas.version ≥ 1.
pub fn elr_enabled(image: &MetadataImage) -> bool {
    image
        .features
        .get(crate::metadata::image::ELR_FEATURE)
        .is_some_and(|l| *l >= 1)
}
