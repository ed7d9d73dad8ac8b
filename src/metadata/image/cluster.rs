//! Features, brokers and controllers (Kafka's `FeaturesDelta`, `ClusterDelta`).

use uuid::Uuid;

use super::{MetadataImage, ReplayError};
use crate::common::java::TimelineTable;
use crate::common::release::METADATA_VERSION_FEATURE;
use crate::metadata::records::{
    BrokerRegistrationChangeRecord, FeatureLevelRecord, RegisterBrokerRecord,
    RegisterControllerRecord, UnregisterBrokerRecord, UnregisterControllerRecord,
};

/// kraft.version is a Raft control record, never a finalized feature of the image: Kafka skips
/// a FeatureLevelRecord for it (KAFKA-18979), which older releases wrote by mistake.
use crate::common::release::KRAFT_VERSION_FEATURE;

/// Kafka's order of directory ids (`Uuid.compareTo`: both halves as signed longs), in which a
/// broker registration keeps its log directories.
pub(super) fn sort_directories(dirs: &mut [Uuid]) {
    dirs.sort_by_key(|d| {
        let (hi, lo) = d.as_u64_pair();
        (hi as i64, lo as i64)
    });
}

/// Replay history of Kafka's `ClusterControlManager.brokerRegistrations`, a
/// `TimelineHashMap<Integer, BrokerRegistration>` whose iteration order (which broker a
/// feature refusal names, in which order a new active controller starts the brokers'
/// sessions) depends on its puts and removes, not only on the ids it holds. Not part of the
/// image's value: it compares equal to any other (a snapshot-loaded Kafka builds its table
/// afresh; [`MetadataImage::brokers_in_kafka_order`] falls back to that when the history does
/// not cover the brokers).
#[derive(Debug, Clone, Default)]
pub struct BrokerTableHistory(TimelineTable);

impl PartialEq for BrokerTableHistory {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl MetadataImage {
    /// The registered brokers in the order Kafka's `brokerRegistrations` iterates them: its
    /// replayed puts and removes (a registration; a fencing, unfencing, controlled-shutdown or
    /// directory change that changed the registration), or, when the image was not replayed
    /// from the start (a snapshot), the order of a table filled with the ids ascending.
    pub fn brokers_in_kafka_order(&self) -> Vec<i32> {
        let replayed = self.broker_table.0.keys();
        let mut sorted = replayed.clone();
        sorted.sort_unstable();
        if sorted.iter().eq(self.brokers.keys()) {
            return replayed;
        }
        let mut ids: Vec<i32> = self.brokers.keys().copied().collect();
        crate::common::java::timeline_hash_order(&mut ids, |id| *id);
        ids
    }

    pub(super) fn replay_feature_level(
        &mut self,
        r: FeatureLevelRecord,
    ) -> Result<(), ReplayError> {
        if r.name == KRAFT_VERSION_FEATURE {
            return Ok(());
        }
        if r.name == METADATA_VERSION_FEATURE {
            // metadata.version is never removed; level 0 (or below) is no release's level.
            if r.feature_level < 1 {
                return Err(ReplayError::BadValue {
                    record: "FeatureLevelRecord",
                    field: "feature_level",
                    value: i64::from(r.feature_level),
                });
            }
            self.features.insert(r.name, r.feature_level);
        } else if r.feature_level == 0 {
            self.features.remove(&r.name);
        } else {
            self.features.insert(r.name, r.feature_level);
        }
        Ok(())
    }

    pub(super) fn replay_register_broker(
        &mut self,
        mut r: RegisterBrokerRecord,
    ) -> Result<(), ReplayError> {
        // A new registration replaces the old one whole, whatever its epoch. Kafka keeps
        // listeners and features as maps by name, so the order a record lists them in (the
        // request's, or a snapshot's hash order) means nothing: keep them sorted by name.
        sort_directories(&mut r.log_dirs);
        r.end_points.sort_by(|a, b| a.name.cmp(&b.name));
        r.features.sort_by(|a, b| a.name.cmp(&b.name));
        self.broker_table.0.put(r.broker_id);
        self.brokers.insert(r.broker_id, r);
        Ok(())
    }

    pub(super) fn replay_unregister_broker(
        &mut self,
        r: &UnregisterBrokerRecord,
    ) -> Result<(), ReplayError> {
        // Kafka's image drops the broker without comparing epochs (the controller checked).
        if self.brokers.remove(&r.broker_id).is_some() {
            self.broker_table.0.remove(r.broker_id);
        }
        Ok(())
    }

    fn broker_at_epoch(
        &mut self,
        action: &'static str,
        broker_id: i32,
        epoch: i64,
    ) -> Result<&mut RegisterBrokerRecord, ReplayError> {
        let broker = self
            .brokers
            .get_mut(&broker_id)
            .ok_or(ReplayError::UnknownBroker { action, broker_id })?;
        if broker.broker_epoch != epoch {
            return Err(ReplayError::BrokerEpoch {
                action,
                broker_id,
                given: epoch,
                current: broker.broker_epoch,
            });
        }
        Ok(broker)
    }

    /// Fence/UnfenceBrokerRecord (written before metadata.version 3.3-IV2).
    pub(super) fn replay_fence(
        &mut self,
        broker_id: i32,
        epoch: i64,
        fenced: bool,
    ) -> Result<(), ReplayError> {
        let action = if fenced { "fence" } else { "unfence" };
        let broker = self.broker_at_epoch(action, broker_id, epoch)?;
        let changed = broker.fenced != fenced;
        broker.fenced = fenced;
        if changed {
            // Kafka's replayRegistrationChange puts only a registration that changed.
            self.broker_table.0.put(broker_id);
        }
        Ok(())
    }

    pub(super) fn replay_broker_change(
        &mut self,
        r: BrokerRegistrationChangeRecord,
    ) -> Result<(), ReplayError> {
        // Both fields are tri-states whose 0 means "unchanged"; anything else Kafka does not
        // know is refused before the registration changes.
        let fenced = match r.fenced {
            -1 => Some(false),
            0 => None,
            1 => Some(true),
            v => {
                return Err(ReplayError::BadValue {
                    record: "BrokerRegistrationChangeRecord",
                    field: "fenced",
                    value: i64::from(v),
                })
            }
        };
        let in_controlled_shutdown = match r.in_controlled_shutdown {
            0 => None,
            1 => Some(true),
            v => {
                return Err(ReplayError::BadValue {
                    record: "BrokerRegistrationChangeRecord",
                    field: "in_controlled_shutdown",
                    value: i64::from(v),
                })
            }
        };
        let broker = self.broker_at_epoch("change", r.broker_id, r.broker_epoch)?;
        let before = (
            broker.fenced,
            broker.in_controlled_shutdown,
            broker.log_dirs.clone(),
            broker.cordoned_log_dirs.clone(),
        );
        if let Some(f) = fenced {
            broker.fenced = f;
        }
        if let Some(s) = in_controlled_shutdown {
            broker.in_controlled_shutdown = s;
        }
        // An empty list means "unchanged", not "no directories".
        if !r.log_dirs.is_empty() {
            let mut dirs = r.log_dirs;
            sort_directories(&mut dirs);
            broker.log_dirs = dirs;
        }
        // Kafka 4.4 (v3): null leaves the cordoned directories as they are.
        if r.cordoned_log_dirs.is_some() {
            broker.cordoned_log_dirs = r.cordoned_log_dirs;
        }
        let after = (
            broker.fenced,
            broker.in_controlled_shutdown,
            broker.log_dirs.clone(),
            broker.cordoned_log_dirs.clone(),
        );
        if before != after {
            // Kafka's replayRegistrationChange puts only a registration that changed.
            self.broker_table.0.put(r.broker_id);
        }
        Ok(())
    }

    pub(super) fn replay_register_controller(
        &mut self,
        mut r: RegisterControllerRecord,
    ) -> Result<(), ReplayError> {
        // Listeners and features are maps by name to Kafka, as for brokers.
        r.end_points.sort_by(|a, b| a.name.cmp(&b.name));
        r.features.sort_by(|a, b| a.name.cmp(&b.name));
        self.controllers.insert(r.controller_id, r);
        Ok(())
    }

    /// Kafka 4.4 (KIP-1312): the registration goes.
    pub(super) fn replay_unregister_controller(
        &mut self,
        r: &UnregisterControllerRecord,
    ) -> Result<(), ReplayError> {
        self.controllers.remove(&r.controller_id);
        Ok(())
    }
}
