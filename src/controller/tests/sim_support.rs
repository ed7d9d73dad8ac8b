//! What both controller simulations share: simulated brokers that send random controller
//! requests the way real ones would (register, heartbeat, create topics, allocate producer
//! ids, shrink or expand an ISR), the promises their success replies make, and the
//! invariants every committed image must keep. `sim.rs` runs them against controllers on one
//! shared log; `machine/tests/sim.rs` against whole node state machines over a network.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};

use kafka_protocol::messages::alter_partition_request::{BrokerState, PartitionData, TopicData};
use kafka_protocol::messages::{
    AllocateProducerIdsRequest, AlterPartitionRequest, BrokerHeartbeatRequest, BrokerId,
    CreateTopicsRequest,
};
use uuid::Uuid;

use super::context::{registration, topic};
use crate::codec::{RequestBody, ResponseBody};
use crate::metadata::image::MetadataImage;
use crate::metadata::record::MetadataRecord;
use crate::raft::Rng;
use crate::records::framer::BatchFramer;

/// Brokers in a simulation.
pub const BROKERS: i32 = 5;

/// What a success reply promised, checked against the committed log.
#[derive(Debug, Clone)]
pub enum Promise {
    Registered { broker: i32, epoch: i64 },
    Topic(Uuid),
    ProducerIds { next: i64 },
}

/// The simulated brokers: what each learnt of its epoch and incarnation.
#[derive(Debug, Default)]
pub struct Brokers {
    pub epochs: BTreeMap<i32, i64>,
    incarnations: BTreeMap<i32, u128>,
    topics: u32,
}

impl Brokers {
    /// A random request from a random broker, given the committed image it knows and the
    /// metadata offset it has caught up to; `None` when that broker has nothing to send.
    pub fn random_request(
        &mut self,
        rng: &mut Rng,
        image: &MetadataImage,
        metadata_offset: i64,
    ) -> Option<(RequestBody, i16)> {
        let broker = rng.below(BROKERS as u64) as i32;
        match rng.below(10) {
            0 => {
                // A (possibly new) incarnation registers.
                if rng.below(4) == 0 || !self.incarnations.contains_key(&broker) {
                    let inc = rng.next_u64() as u128;
                    self.incarnations.insert(broker, inc);
                }
                let req = registration(broker, Some(["a", "b"][broker as usize % 2]))
                    .with_incarnation_id(Uuid::from_u128(self.incarnations[&broker] | 1 << 100));
                Some((RequestBody::BrokerRegistration(req), 4))
            }
            1..=5 => {
                let epoch = *self.epochs.get(&broker)?;
                let req = BrokerHeartbeatRequest::default()
                    .with_broker_id(BrokerId(broker))
                    .with_broker_epoch(epoch)
                    .with_current_metadata_offset(metadata_offset)
                    .with_want_fence(rng.below(30) == 0)
                    .with_want_shut_down(rng.below(40) == 0);
                Some((RequestBody::BrokerHeartbeat(req), 1))
            }
            6 => {
                self.topics += 1;
                let name = format!("t{}", self.topics);
                let req = CreateTopicsRequest::default().with_topics(vec![topic(
                    &name,
                    1 + rng.below(3) as i32,
                    1 + rng.below(3) as i16,
                )]);
                Some((RequestBody::CreateTopics(req), 7))
            }
            7 => {
                let epoch = *self.epochs.get(&broker)?;
                let req = AllocateProducerIdsRequest::default()
                    .with_broker_id(BrokerId(broker))
                    .with_broker_epoch(epoch);
                Some((RequestBody::AllocateProducerIds(req), 0))
            }
            _ => self.random_alter_partition(rng, image),
        }
    }

    /// A partition leader asks to shrink or expand its ISR, from the committed image (as a
    /// broker would know it).
    fn random_alter_partition(
        &self,
        rng: &mut Rng,
        image: &MetadataImage,
    ) -> Option<(RequestBody, i16)> {
        let parts: Vec<(Uuid, i32, crate::metadata::image::PartitionRegistration)> = image
            .topics
            .values()
            .flat_map(|t| t.partitions.iter().map(move |(i, p)| (t.id, *i, p.clone())))
            .filter(|(_, _, p)| p.leader >= 0)
            .collect();
        if parts.is_empty() {
            return None;
        }
        let (topic_id, index, p) = parts[rng.below(parts.len() as u64) as usize].clone();
        let leader_epoch = *self.epochs.get(&p.leader)?;
        let mut isr = vec![p.leader];
        for r in &p.replicas {
            if *r != p.leader && rng.below(2) == 0 {
                isr.push(*r);
            }
        }
        let states = isr
            .iter()
            .map(|b| {
                BrokerState::default()
                    .with_broker_id(BrokerId(*b))
                    .with_broker_epoch(self.epochs.get(b).copied().unwrap_or(-1))
            })
            .collect();
        let req = AlterPartitionRequest::default()
            .with_broker_id(BrokerId(p.leader))
            .with_broker_epoch(leader_epoch)
            .with_topics(vec![TopicData::default()
                .with_topic_id(topic_id)
                .with_partitions(vec![PartitionData::default()
                    .with_partition_index(index)
                    .with_leader_epoch(p.leader_epoch)
                    .with_partition_epoch(p.partition_epoch)
                    .with_new_isr_with_epochs(states)])]);
        Some((RequestBody::AlterPartition(req), 3))
    }

    /// The answer to `request` arrived: what its success promises (and the broker learns).
    pub fn answered(&mut self, request: &RequestBody, body: &ResponseBody) -> Vec<Promise> {
        match body {
            ResponseBody::BrokerRegistration(r) if r.error_code == 0 => {
                let RequestBody::BrokerRegistration(req) = request else {
                    return Vec::new();
                };
                self.epochs.insert(req.broker_id.0, r.broker_epoch);
                vec![Promise::Registered {
                    broker: req.broker_id.0,
                    epoch: r.broker_epoch,
                }]
            }
            ResponseBody::CreateTopics(r) => r
                .topics
                .iter()
                .filter(|t| t.error_code == 0)
                .map(|t| Promise::Topic(t.topic_id))
                .collect(),
            ResponseBody::AllocateProducerIds(r) if r.error_code == 0 => {
                vec![Promise::ProducerIds {
                    next: r.producer_id_start.0 + i64::from(r.producer_id_len),
                }]
            }
            _ => Vec::new(),
        }
    }
}

/// What a committed log holds, as far as promises go.
#[derive(Debug, Default)]
pub struct CommittedIndex {
    registrations: BTreeSet<(i32, i64)>,
    topics: BTreeSet<Uuid>,
    producer_ids: BTreeSet<i64>,
}

impl CommittedIndex {
    /// Adds the metadata records of `batches` (whole batches back to back).
    pub fn add_batches(&mut self, batches: &[u8]) {
        for (_, batch) in BatchFramer::trusted(batches) {
            if batch.is_control() {
                continue;
            }
            for r in batch.records().flatten() {
                match MetadataRecord::decode(r.value) {
                    Ok(MetadataRecord::RegisterBroker(b)) => {
                        self.registrations.insert((b.broker_id, b.broker_epoch));
                    }
                    Ok(MetadataRecord::Topic(t)) => {
                        self.topics.insert(t.topic_id);
                    }
                    Ok(MetadataRecord::ProducerIds(p)) => {
                        self.producer_ids.insert(p.next_producer_id);
                    }
                    _ => {}
                }
            }
        }
    }

    /// acked_writes_committed: the promise's records are in this committed log.
    pub fn holds(&self, promise: &Promise) -> bool {
        match promise {
            Promise::Registered { broker, epoch } => {
                self.registrations.contains(&(*broker, *epoch))
            }
            Promise::Topic(id) => self.topics.contains(id),
            Promise::ProducerIds { next } => self.producer_ids.contains(next),
        }
    }
}

/// The invariants of one node's successive committed images.
#[derive(Debug, Default)]
pub struct ImageChecks {
    /// The last committed image seen (for the monotonic checks); `None` after a restart.
    pub seen: Option<MetadataImage>,
    /// Broker fencings seen.
    pub fencings: usize,
}

impl ImageChecks {
    /// broker_epochs_unique_and_increasing, no_leader_fenced and
    /// monotonic_partition_and_leader_epochs on node `n`'s committed `image`.
    pub fn check(&mut self, n: usize, image: &MetadataImage) -> Result<(), String> {
        let mut epochs: Vec<i64> = image.brokers.values().map(|b| b.broker_epoch).collect();
        epochs.sort_unstable();
        let before = epochs.len();
        epochs.dedup();
        if epochs.len() != before {
            return Err(format!(
                "broker_epochs_unique: node {n}: {:?}",
                image.brokers
            ));
        }
        for t in image.topics.values() {
            for (i, p) in &t.partitions {
                if p.leader >= 0 && image.brokers.get(&p.leader).is_none_or(|b| b.fenced) {
                    return Err(format!("no_leader_fenced: node {n}: {}-{i} {p:?}", t.name));
                }
            }
        }
        if self
            .seen
            .as_ref()
            .is_some_and(|prev| prev.next_offset == image.next_offset)
        {
            return Ok(());
        }
        if let Some(prev) = &self.seen {
            for (id, b) in &image.brokers {
                if let Some(old) = prev.brokers.get(id) {
                    if b.fenced && !old.fenced {
                        self.fencings += 1;
                    }
                    if b.broker_epoch < old.broker_epoch {
                        return Err(format!("broker_epochs_increasing: node {n}: broker {id}"));
                    }
                }
            }
            for (tid, t) in &image.topics {
                let Some(old_t) = prev.topics.get(tid) else {
                    continue;
                };
                for (i, p) in &t.partitions {
                    if let Some(old) = old_t.partitions.get(i) {
                        if p.partition_epoch < old.partition_epoch
                            || p.leader_epoch < old.leader_epoch
                        {
                            return Err(format!(
                                "monotonic_partition_and_leader_epochs: node {n}: {}-{i} {old:?} → {p:?}",
                                t.name
                            ));
                        }
                    }
                }
            }
        }
        self.seen = Some(image.clone());
        Ok(())
    }
}

/// restart_replays_the_same_image, and the final agreement of every node: the parts of two
/// images that replay must make equal.
pub fn same_image(a: &MetadataImage, b: &MetadataImage) -> bool {
    a.brokers == b.brokers
        && a.topics == b.topics
        && a.features == b.features
        && a.next_producer_id == b.next_producer_id
}
