//! The image as snapshot records, in the order and at the versions Kafka 4.x's image writer
//! uses (`MetadataImage.write` with `ImageWriterOptions` from the image's metadata.version).
//!
//! ```text
//!   features (metadata.version first, v0) ─ brokers ─ controllers ─ topics (TopicRecord, then
//!   its PartitionRecords by partition id) ─ configs ─ client quotas ─ producer ids ─ ACLs ─
//!   SCRAM credentials ─ delegation tokens  ──▶  record values (frame + body) for a snapshot
//! ```
//!
//! Within a section Kafka iterates hash maps keyed by ids; we iterate the image's sorted maps,
//! so only the order of records inside a section can differ. Inside a registration record the
//! listeners and features come in Java `HashMap<String, _>` order, as Kafka lists them. Data a metadata.version cannot
//! carry (SCRAM below 3.5-IV2, tokens below 3.6-IV2, …) is a [`ImageWriteError::Loss`], as
//! Kafka's default loss handler throws: no snapshot is written then.

use super::MetadataImage;
use crate::common::java::{java_hash_map_order, Built};
pub use crate::common::release::{
    mv, transactions_supported, ELR_FEATURE, METADATA_VERSION_FEATURE,
};
use crate::metadata::record::{ApiMessageAndVersion, MetadataRecord};
use crate::metadata::records::{
    ClientQuotaEntity as QuotaEntityData, ClientQuotaRecord, ConfigRecord, FeatureLevelRecord,
    PartitionRecord, ProducerIdsRecord, TopicRecord,
};
use crate::metadata::MetadataError;

/// Why the image could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ImageWriteError {
    /// No FeatureLevelRecord set metadata.version yet (Kafka: `metadataVersionOrThrow`).
    #[error("the image has no metadata.version")]
    NoMetadataVersion,
    /// The image holds data its metadata.version cannot express.
    #[error("metadata.version {level} cannot hold {what}")]
    Loss {
        /// The metadata.version level.
        level: i16,
        /// What would be lost.
        what: String,
    },
    /// A record could not be encoded at the version chosen.
    #[error(transparent)]
    Encode(#[from] MetadataError),
    /// Whoever takes the records could not (the snapshot file's I/O, say).
    #[error("{0}")]
    Output(String),
}

impl ImageWriteError {
    /// Kafka's message for a snapshot that could not be generated from the image
    /// (`SnapshotGenerator`'s "KRaft snapshot file generation error"), `snapshot` being the
    /// file's stem.
    pub fn generation_message(&self, snapshot: &str) -> String {
        format!("KRaft snapshot file generation error for {snapshot}: {self}")
    }
}

/// RegisterBrokerRecord version at metadata.version `level` (`registerBrokerRecordVersion`).
pub fn register_broker_version(level: i16) -> u16 {
    if level >= mv::CORDONED_LOG_DIRS {
        4
    } else if level >= mv::DIRECTORY_ASSIGNMENT {
        3
    } else if level >= mv::MIGRATION {
        2
    } else {
        1
    }
}

/// PartitionRecord and PartitionChangeRecord version at `level` (`partitionRecordVersion`).
pub fn partition_version(level: i16) -> u16 {
    if level >= mv::ELR {
        2
    } else if level >= mv::DIRECTORY_ASSIGNMENT {
        1
    } else {
        0
    }
}

/// Where the records go, one at a time, as they are encoded.
type Emit<'a> = &'a mut dyn FnMut(Vec<u8>) -> Result<(), ImageWriteError>;

struct Out<'a> {
    level: i16,
    emit: Emit<'a>,
}

impl Out<'_> {
    fn write(&mut self, record: MetadataRecord, version: u16) -> Result<(), ImageWriteError> {
        (self.emit)(ApiMessageAndVersion::new(record, version).encode()?)
    }

    fn loss(&self, what: impl Into<String>) -> ImageWriteError {
        ImageWriteError::Loss {
            level: self.level,
            what: what.into(),
        }
    }
}

impl MetadataImage {
    /// The snapshot records of this image (record values, frame included), in Kafka's order.
    pub fn snapshot_records(&self) -> Result<Vec<Vec<u8>>, ImageWriteError> {
        let mut values = Vec::new();
        self.write_snapshot_records(&mut |value| {
            values.push(value);
            Ok(())
        })?;
        Ok(values)
    }

    /// Hands each snapshot record of this image to `emit` as it is encoded, in Kafka's order:
    /// a snapshot writer streams them to its file and never holds them all (at 10M
    /// partitions they would be 11M allocations and about 1.3 GiB). Stops at the first
    /// error, `emit`'s included.
    pub fn write_snapshot_records(&self, emit: Emit<'_>) -> Result<(), ImageWriteError> {
        let level = self
            .metadata_version()
            .ok_or(ImageWriteError::NoMetadataVersion)?;
        let mut out = Out { level, emit };
        self.write_features(&mut out)?;
        self.write_cluster(&mut out)?;
        self.write_topics(&mut out)?;
        self.write_configs_and_quotas(&mut out)?;
        if self.next_producer_id >= 0 {
            out.write(
                MetadataRecord::ProducerIds(ProducerIdsRecord {
                    broker_id: -1,
                    broker_epoch: -1,
                    next_producer_id: self.next_producer_id,
                    ..Default::default()
                }),
                0,
            )?;
        }
        self.write_security(&mut out)?;
        Ok(())
    }

    fn write_features(&self, out: &mut Out) -> Result<(), ImageWriteError> {
        // metadata.version first, at v0, so any reader can decode what follows.
        let feature = |name: &str, level: i16| {
            MetadataRecord::FeatureLevel(FeatureLevelRecord {
                name: name.to_string(),
                feature_level: level,
                ..Default::default()
            })
        };
        out.write(feature(METADATA_VERSION_FEATURE, out.level), 0)?;
        for (name, level) in &self.features {
            if name != METADATA_VERSION_FEATURE {
                out.write(feature(name, *level), 0)?;
            }
        }
        Ok(())
    }

    fn write_cluster(&self, out: &mut Out) -> Result<(), ImageWriteError> {
        let broker_version = register_broker_version(out.level);
        for broker in self.brokers.values() {
            if broker.is_migrating_zk_broker && out.level < mv::MIGRATION {
                return Err(out.loss("the isMigratingZkBroker state of one or more brokers"));
            }
            if !broker.log_dirs.is_empty() && out.level < mv::DIRECTORY_ASSIGNMENT {
                return Err(out.loss("the online log directories of one or more brokers"));
            }
            let mut record = broker.clone();
            // BrokerRegistration keeps listeners in `new HashMap<>(n)` and features in a
            // copied HashMap; toRecord lists them in those maps' order.
            java_hash_map_order(&mut record.end_points, Built::WithCapacity, |e| &e.name);
            java_hash_map_order(&mut record.features, Built::Copy, |f| &f.name);
            if out.level < mv::CORDONED_LOG_DIRS {
                // Kafka sets the field only where the version has it.
                record.cordoned_log_dirs = None;
            }
            out.write(MetadataRecord::RegisterBroker(record), broker_version)?;
        }
        if !self.controllers.is_empty() {
            if out.level < mv::CONTROLLER_REGISTRATION {
                return Err(out.loss("controller registration data"));
            }
            for controller in self.controllers.values() {
                // ControllerRegistration.Builder fills two `new HashMap<>()`s.
                let mut record = controller.clone();
                java_hash_map_order(&mut record.end_points, Built::Default, |e| &e.name);
                java_hash_map_order(&mut record.features, Built::Default, |f| &f.name);
                out.write(MetadataRecord::RegisterController(record), 0)?;
            }
        }
        Ok(())
    }

    fn write_topics(&self, out: &mut Out) -> Result<(), ImageWriteError> {
        let version = partition_version(out.level);
        let elr_enabled = self.features.get(ELR_FEATURE).is_some_and(|l| *l >= 1);
        for topic in self.topics.values() {
            out.write(
                MetadataRecord::Topic(TopicRecord {
                    name: topic.name.clone(),
                    topic_id: topic.id,
                    ..Default::default()
                }),
                0,
            )?;
            for (&partition_id, p) in &topic.partitions {
                let directories = if out.level >= mv::DIRECTORY_ASSIGNMENT {
                    p.directories()
                } else if p.directories().iter().any(|d| !d.is_nil()) {
                    return Err(out.loss("the directory assignment state of one or more replicas"));
                } else {
                    Vec::new()
                };
                // ELR lists are tagged: set only when the feature is on and they hold ids.
                let elr = |ids: &[i32]| (elr_enabled && !ids.is_empty()).then(|| ids.to_vec());
                let record = PartitionRecord {
                    partition_id,
                    topic_id: topic.id,
                    replicas: p.replicas().to_vec(),
                    isr: p.isr().to_vec(),
                    removing_replicas: p.removing_replicas().to_vec(),
                    adding_replicas: p.adding_replicas().to_vec(),
                    leader: p.leader,
                    leader_recovery_state: p.leader_recovery_state,
                    leader_epoch: p.leader_epoch,
                    partition_epoch: p.partition_epoch,
                    directories,
                    eligible_leader_replicas: elr(p.elr()),
                    last_known_elr: elr(p.last_known_elr()),
                    ..Default::default()
                };
                out.write(MetadataRecord::Partition(record), version)?;
            }
        }
        Ok(())
    }

    fn write_configs_and_quotas(&self, out: &mut Out) -> Result<(), ImageWriteError> {
        for (resource, keys) in &self.configs {
            for (name, value) in keys {
                out.write(
                    MetadataRecord::Config(ConfigRecord {
                        resource_type: resource.resource_type,
                        resource_name: resource.resource_name.clone(),
                        name: name.clone(),
                        value: Some(value.clone()),
                        ..Default::default()
                    }),
                    0,
                )?;
            }
        }
        for (entity, quotas) in &self.client_quotas {
            let mut entity: Vec<QuotaEntityData> = entity
                .iter()
                .map(|(entity_type, entity_name)| QuotaEntityData {
                    entity_type: entity_type.clone(),
                    entity_name: entity_name.clone(),
                    ..Default::default()
                })
                .collect();
            // ClientQuotaEntity holds its parts in a `new HashMap<>()` (dataToEntity).
            java_hash_map_order(&mut entity, Built::Default, |e| &e.entity_type);
            for (key, value) in quotas {
                out.write(
                    MetadataRecord::ClientQuota(ClientQuotaRecord {
                        entity: entity.clone(),
                        key: key.clone(),
                        value: *value,
                        remove: false,
                        ..Default::default()
                    }),
                    0,
                )?;
            }
        }
        Ok(())
    }

    fn write_security(&self, out: &mut Out) -> Result<(), ImageWriteError> {
        for acl in self.acls.values() {
            out.write(MetadataRecord::AccessControlEntry(acl.clone()), 0)?;
        }
        if !self.scram.is_empty() && out.level < mv::SCRAM {
            let users: Vec<&str> = self.scram.keys().map(|(_, u)| u.as_str()).collect();
            return Err(out.loss(format!("SCRAM credentials of {}", users.join(", "))));
        }
        for credential in self.scram.values() {
            out.write(MetadataRecord::UserScramCredential(credential.clone()), 0)?;
        }
        if !self.delegation_tokens.is_empty() && out.level < mv::DELEGATION_TOKENS {
            let ids: Vec<&str> = self.delegation_tokens.keys().map(String::as_str).collect();
            return Err(out.loss(format!("delegation tokens {}", ids.join(", "))));
        }
        for token in self.delegation_tokens.values() {
            out.write(MetadataRecord::DelegationToken(token.clone()), 0)?;
        }
        Ok(())
    }
}
