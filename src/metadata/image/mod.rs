//! The metadata image: what the committed metadata records say, replayed in offset order with
//! Kafka 4.1's replay rules (`org.apache.kafka.image.*Delta`, `MetadataBatchLoader`): features,
//! brokers and controllers, topics and partitions, configs, client quotas, producer ids, ACLs,
//! SCRAM credentials and delegation tokens — everything a snapshot holds.
//!
//! ```text
//!   snapshot (data batches) ─┐
//!   committed log batches ───┴─▶ replay(record) ─┬─▶ open transaction? buffer it (Begin … End)
//!                                                └─▶ cluster.rs topics.rs configs.rs security.rs
//! ```
//!
//! Kafka applies records to a delta and publishes the delta at batch (or transaction) ends; we
//! apply each record at once, which gives the same image at every point Kafka publishes one,
//! except where a Kafka delta's own bookkeeping differs (see docs/metadata-image.md).
//! A record Kafka would refuse (a change to an unknown partition, a stale broker epoch, …) is
//! a [`ReplayError`]: the record is left out, as Kafka's loader does after reporting the fault.

mod brokers;
mod cluster;
pub use cluster::BrokerTableHistory;
mod configs;
mod directory_ids;
mod json;
mod partition;
mod security;
pub use security::scram_mechanism_name;
mod topics;
mod write;

#[cfg(test)]
mod tests;
#[cfg(test)]
pub(crate) mod write_tests;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use uuid::Uuid;

use super::controller::ControllerRegistration;
use super::record::MetadataRecord;
use super::records::{
    AccessControlEntryRecord, DelegationTokenRecord, RegisterBrokerRecord,
    UserScramCredentialRecord,
};
use crate::common::release::METADATA_VERSION_FEATURE;
use crate::records::control::ControlRecord;
use crate::records::framer::BatchFramer;
use crate::records::view::BatchView;

pub use configs::{config_resource_type_name, resource, ClientQuotaEntity, ConfigResource};
pub use topics::{
    IsrMembers, PartitionParts, PartitionRegistration, PartitionStats, ReplayHistory, TopicImage,
    NO_LEADER_CHANGE,
};
pub use write::{
    mv, partition_version, register_broker_version, transactions_supported, ImageWriteError,
    ELR_FEATURE,
};

/// Why a record was left out of the image: Kafka's replay refuses it too.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// A partition or topic change names a topic id the image does not hold.
    #[error("no topic with id {0}")]
    UnknownTopic(Uuid),
    /// ClearElrRecord names a topic the image does not hold.
    #[error("no topic named {0:?}")]
    UnknownTopicName(String),
    /// A PartitionChangeRecord for a partition the topic does not have.
    #[error("no partition {topic_id}:{partition_id}")]
    UnknownPartition {
        /// Topic id.
        topic_id: Uuid,
        /// Partition index.
        partition_id: i32,
    },
    /// Directories given for a different number of replicas.
    #[error(
        "partition {topic_id}:{partition_id}: {directories} directories for {replicas} replicas"
    )]
    ReplicaDirectories {
        /// Topic id.
        topic_id: Uuid,
        /// Partition index.
        partition_id: i32,
        /// Replica count.
        replicas: usize,
        /// Directory count.
        directories: usize,
    },
    /// A broker change for a broker that is not registered.
    #[error("cannot {action} broker {broker_id}: not registered")]
    UnknownBroker {
        /// What the record does.
        action: &'static str,
        /// Broker id.
        broker_id: i32,
    },
    /// A broker change for another registration of the broker.
    #[error("cannot {action} broker {broker_id}: epoch {given}, registered with {current}")]
    BrokerEpoch {
        /// What the record does.
        action: &'static str,
        /// Broker id.
        broker_id: i32,
        /// Epoch in the record.
        given: i64,
        /// Epoch of the registration.
        current: i64,
    },
    /// A field holds a value outside its enumeration.
    #[error("{record}: {field} = {value} is not a known value")]
    BadValue {
        /// Record type.
        record: &'static str,
        /// Field.
        field: &'static str,
        /// The value.
        value: i64,
    },
    /// RemoveAccessControlEntryRecord for an ACL that is not there.
    #[error("no ACL with id {0}")]
    UnknownAcl(Uuid),
    /// Begin inside a transaction, or End/Abort outside one.
    #[error("{0}")]
    Transaction(&'static str),
    /// A record type this build does not know; Kafka's replay fails on it too.
    #[error("unknown metadata record type {0}")]
    UnknownType(u16),
}

/// The replayed state.
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataImage {
    /// Finalized features by name (metadata.version included, kraft.version never).
    pub features: BTreeMap<String, i16>,
    /// Registered controllers by node id.
    pub controllers: BTreeMap<i32, ControllerRegistration>,
    /// Registered brokers by id, as a snapshot would write them: the registration with its
    /// current fenced, controlled-shutdown and log-directory state.
    pub brokers: BTreeMap<i32, RegisterBrokerRecord>,
    /// The order Kafka's `brokerRegistrations` table iterates the brokers in (replay history,
    /// compares equal to any other): [`MetadataImage::brokers_in_kafka_order`].
    pub broker_table: BrokerTableHistory,
    /// Topics by id. Shared between images until one changes it: the active controller's
    /// speculative image starts as a copy of the committed one, and copying it costs the
    /// topics, not their partitions.
    pub topics: BTreeMap<Uuid, Arc<TopicImage>>,
    /// Topic ids by name.
    pub topic_ids: BTreeMap<String, Uuid>,
    /// Names holding '.' or '_' by their collision form (Kafka's `topicsWithCollisionChars`):
    /// a new name is checked against these, not against every topic.
    pub topics_by_collision_form: BTreeMap<String, BTreeSet<String>>,
    /// Counts over every partition, kept by replay.
    pub partition_stats: PartitionStats,
    /// Dynamic configs by resource; a resource without keys is not kept.
    pub configs: BTreeMap<ConfigResource, BTreeMap<String, String>>,
    /// Client quotas by entity; an entity without quotas is not kept.
    pub client_quotas: BTreeMap<ClientQuotaEntity, BTreeMap<String, f64>>,
    /// The next producer id to hand out, -1 before any ProducerIdsRecord.
    pub next_producer_id: i64,
    /// ACLs by id.
    pub acls: BTreeMap<Uuid, AccessControlEntryRecord>,
    /// SCRAM credentials by (mechanism, user).
    pub scram: BTreeMap<(i8, String), UserScramCredentialRecord>,
    /// Delegation tokens by token id.
    pub delegation_tokens: BTreeMap<String, DelegationTokenRecord>,
    /// Records of an open metadata transaction (KIP-868), in order: Kafka's loader publishes
    /// them together at the EndTransactionRecord and drops them at an AbortTransactionRecord.
    pub open_transaction: Option<Vec<MetadataRecord>>,
    /// Offset after the last record replayed (the next one to read).
    pub next_offset: i64,
    /// Epoch of the last batch replayed (or of the snapshot loaded): with `next_offset`, the
    /// id a snapshot of this image gets (Kafka's `MetadataProvenance`).
    pub last_epoch: i32,
    /// Max timestamp of the last batch replayed (the snapshot header's
    /// LastContainedLogTimestamp).
    pub last_contained_log_time_ms: i64,
    /// Records that could not be decoded (logged; replay goes on).
    pub undecodable_records: u64,
    /// Records replay refused ([`ReplayError`], logged; replay goes on).
    pub refused_records: u64,
}

impl Default for MetadataImage {
    fn default() -> Self {
        Self {
            features: BTreeMap::new(),
            controllers: BTreeMap::new(),
            brokers: BTreeMap::new(),
            broker_table: BrokerTableHistory::default(),
            topics: BTreeMap::new(),
            topic_ids: BTreeMap::new(),
            topics_by_collision_form: BTreeMap::new(),
            partition_stats: PartitionStats::default(),
            configs: BTreeMap::new(),
            client_quotas: BTreeMap::new(),
            // Kafka's empty ProducerIdsImage: no block handed out yet.
            next_producer_id: -1,
            acls: BTreeMap::new(),
            scram: BTreeMap::new(),
            delegation_tokens: BTreeMap::new(),
            open_transaction: None,
            next_offset: 0,
            last_epoch: 0,
            last_contained_log_time_ms: 0,
            undecodable_records: 0,
            refused_records: 0,
        }
    }
}

impl MetadataImage {
    /// An empty image (no producer id handed out yet).
    pub fn new() -> Self {
        Self::default()
    }

    /// The finalized metadata.version level, once a FeatureLevelRecord set it.
    pub fn metadata_version(&self) -> Option<i16> {
        self.features.get(METADATA_VERSION_FEATURE).copied()
    }

    /// Whether controllers register (KIP-919) at the current metadata.version.
    pub fn controller_registration_supported(&self) -> bool {
        self.metadata_version()
            .is_some_and(|mv| mv >= crate::common::release::mv::CONTROLLER_REGISTRATION)
    }

    /// The topic named `name`.
    pub fn topic_by_name(&self, name: &str) -> Option<&TopicImage> {
        self.topic_ids
            .get(name)
            .and_then(|id| self.topics.get(id))
            .map(|t| &**t)
    }

    /// Applies one record. Inside a metadata transaction the record waits for the
    /// transaction's end (`MetadataBatchLoader`: Begin opens, End publishes, Abort drops).
    pub fn replay(&mut self, record: MetadataRecord) -> Result<(), ReplayError> {
        match record {
            MetadataRecord::BeginTransaction(_) => {
                if self.open_transaction.is_some() {
                    return Err(ReplayError::Transaction(
                        "BeginTransactionRecord inside an open transaction",
                    ));
                }
                self.open_transaction = Some(Vec::new());
                Ok(())
            }
            MetadataRecord::EndTransaction(_) => {
                let records = self
                    .open_transaction
                    .take()
                    .ok_or(ReplayError::Transaction(
                        "EndTransactionRecord without a BeginTransactionRecord",
                    ))?;
                // Each record of the transaction is judged on its own, as Kafka's delta
                // replays them one by one; a refused one is counted and the rest apply.
                for r in records {
                    if let Err(e) = self.apply(r) {
                        self.refused_records += 1;
                        tracing::warn!("metadata transaction: record left out of the image: {e}");
                    }
                }
                Ok(())
            }
            MetadataRecord::AbortTransaction(_) => {
                self.open_transaction
                    .take()
                    .map(drop)
                    .ok_or(ReplayError::Transaction(
                        "AbortTransactionRecord without a BeginTransactionRecord",
                    ))
            }
            other => match &mut self.open_transaction {
                Some(pending) => {
                    pending.push(other);
                    Ok(())
                }
                None => self.apply(other),
            },
        }
    }

    /// Applies one record outside any transaction bookkeeping.
    fn apply(&mut self, record: MetadataRecord) -> Result<(), ReplayError> {
        use MetadataRecord as R;
        match record {
            R::FeatureLevel(r) => self.replay_feature_level(r),
            R::RegisterBroker(r) => self.replay_register_broker(r),
            R::UnregisterBroker(r) => self.replay_unregister_broker(&r),
            R::FenceBroker(r) => self.replay_fence(r.id, r.epoch, true),
            R::UnfenceBroker(r) => self.replay_fence(r.id, r.epoch, false),
            R::BrokerRegistrationChange(r) => self.replay_broker_change(r),
            R::RegisterController(r) => self.replay_register_controller(r),
            R::UnregisterController(r) => self.replay_unregister_controller(&r),
            R::Topic(r) => self.replay_topic(r),
            R::Partition(r) => self.replay_partition(r),
            R::PartitionChange(r) => self.replay_partition_change(r),
            R::RemoveTopic(r) => self.replay_remove_topic(&r),
            R::ClearElr(r) => self.replay_clear_elr(&r),
            R::Config(r) => self.replay_config(r),
            R::ClientQuota(r) => self.replay_client_quota(r),
            R::ProducerIds(r) => {
                // The image keeps the last value; the controller checks it only grows.
                self.next_producer_id = r.next_producer_id;
                Ok(())
            }
            R::AccessControlEntry(r) => self.replay_acl(r),
            R::RemoveAccessControlEntry(r) => self.replay_remove_acl(&r),
            R::UserScramCredential(r) => self.replay_scram(r),
            R::RemoveUserScramCredential(r) => self.replay_remove_scram(&r),
            R::DelegationToken(r) => self.replay_token(r),
            R::RemoveDelegationToken(r) => self.replay_remove_token(&r),
            // NoOp only moves the offset; ZK migration state is history Kafka 4.x ignores.
            R::NoOp(_) | R::ZkMigrationState(_) => Ok(()),
            // Reaches here only when a transaction's buffer held one, which `replay` prevents.
            R::BeginTransaction(_) | R::EndTransaction(_) | R::AbortTransaction(_) => Ok(()),
            R::Other { api_key, .. } => Err(ReplayError::UnknownType(api_key)),
        }
    }

    /// [`Self::replay`], counting and logging a refused record instead of returning it.
    pub fn replay_logged(&mut self, record: MetadataRecord, source: &str) {
        let name = record.name();
        if let Err(e) = self.replay(record) {
            self.refused_records += 1;
            tracing::warn!("{source}: {name} left out of the metadata image: {e}");
        }
    }

    /// Replays the data batches of `bytes` (whole v2 batches, as a log read or a snapshot
    /// file holds them) whose last offset is below `below_offset`; control batches only move
    /// the position. Returns the number of batches replayed and their size in bytes. The
    /// bytes come from this node's log, whose CRCs were checked when they were appended or
    /// recovered, so they are not computed again here (a follower replays every fetch).
    pub fn replay_batches(
        &mut self,
        bytes: &[u8],
        below_offset: i64,
        source: &str,
    ) -> (usize, u64) {
        self.replay_batches_observed(bytes, below_offset, source, &mut |_, _, _| {})
    }

    /// [`Self::replay_batches`], showing `observe` the image and each record with its offset
    /// before the record is replayed (the controller keeps the offset of every broker's
    /// registration record, and logs each change as Kafka does).
    pub fn replay_batches_observed(
        &mut self,
        bytes: &[u8],
        below_offset: i64,
        source: &str,
        observe: &mut dyn FnMut(&MetadataImage, i64, &MetadataRecord),
    ) -> (usize, u64) {
        let mut replayed = 0;
        let mut replayed_bytes = 0;
        for (_, batch) in BatchFramer::trusted(bytes) {
            if batch.last_offset() >= below_offset {
                break;
            }
            if batch.next_offset() <= self.next_offset {
                continue;
            }
            self.replay_batch(&batch, source, observe);
            self.next_offset = batch.next_offset();
            self.last_epoch = batch.partition_leader_epoch();
            self.last_contained_log_time_ms = batch.max_timestamp();
            replayed += 1;
            replayed_bytes += batch.size_bytes() as u64;
        }
        (replayed, replayed_bytes)
    }

    /// Starts over from a snapshot file's bytes: its data batches (whose offsets are the
    /// snapshot's own, not the log's) hold the whole image as of `end_offset`; its batches
    /// carry the snapshot's epoch.
    pub fn load_snapshot(&mut self, bytes: &[u8], end_offset: i64, source: &str) {
        *self = MetadataImage::new();
        self.load_snapshot_part(bytes, source);
        self.next_offset = end_offset;
    }

    /// Replays the whole batches at the start of `bytes`, a part of a snapshot file read in
    /// order into an image that started empty, and returns the bytes they take: a batch cut
    /// at the end of `bytes` is left for the next part. The loader sets `next_offset` to the
    /// snapshot's end offset once every part is in.
    pub fn load_snapshot_part(&mut self, bytes: &[u8], source: &str) -> usize {
        let mut framer = BatchFramer::new(bytes, 0, usize::MAX);
        for (_, batch) in framer.by_ref() {
            if batch.is_control() {
                for record in batch.records().flatten() {
                    if let Ok(ControlRecord::SnapshotHeader(h)) = record.control_record() {
                        self.last_contained_log_time_ms = h.last_contained_log_timestamp;
                    }
                }
            }
            self.last_epoch = batch.partition_leader_epoch();
            self.replay_batch(&batch, source, &mut |_, _, _| {});
        }
        framer.valid_bytes()
    }

    fn replay_batch(
        &mut self,
        batch: &BatchView<'_>,
        source: &str,
        observe: &mut dyn FnMut(&MetadataImage, i64, &MetadataRecord),
    ) {
        if batch.is_control() {
            return;
        }
        for (i, record) in batch.records().enumerate() {
            let decoded = record
                .map_err(|e| e.to_string())
                .and_then(|r| MetadataRecord::decode(r.value).map_err(|e| e.to_string()));
            match decoded {
                Ok(r) => {
                    observe(self, batch.base_offset() + i as i64, &r);
                    self.replay_logged(r, source)
                }
                Err(e) => {
                    self.undecodable_records += 1;
                    tracing::warn!(
                        "{source}: metadata record {i} of the batch at offset {} cannot be \
                         decoded, left out of the image: {e}",
                        batch.base_offset()
                    );
                }
            }
        }
    }
}
