//! What both controller simulations share: simulated brokers that send random controller
//! requests the way real ones would (register, heartbeat, create topics, allocate producer
//! ids, shrink or expand an ISR) and the admin requests an operator's tools forward (delete a
//! topic, add partitions, reassign or cancel, elect preferred leaders, alter a config) and the promises their success replies make (checked by the
//! invariants in `invariants/`). `sim.rs` runs them against controllers on one shared log;
//! `machine/tests/sim.rs` against whole node state machines over a network.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use kafka_protocol::messages::alter_partition_request::{BrokerState, PartitionData, TopicData};
use kafka_protocol::messages::{
    AllocateProducerIdsRequest, AlterPartitionRequest, BrokerHeartbeatRequest, BrokerId,
    CreateTopicsRequest,
};
use uuid::Uuid;

use super::context::{registration, topic};
pub use super::invariants::acked_writes_committed::Promise;
use crate::codec::{RequestBody, ResponseBody};
use crate::metadata::image::MetadataImage;
use crate::raft::Rng;

/// An admin request on a random topic of the committed image, as a broker forwards it.
fn random_admin_request(rng: &mut Rng, image: &MetadataImage) -> Option<(RequestBody, i16)> {
    use kafka_protocol::messages::alter_partition_reassignments_request::{
        ReassignablePartition, ReassignableTopic,
    };
    use kafka_protocol::messages::create_partitions_request::CreatePartitionsTopic;
    use kafka_protocol::messages::incremental_alter_configs_request::{
        AlterConfigsResource, AlterableConfig,
    };
    use kafka_protocol::messages::{
        AlterPartitionReassignmentsRequest, CreatePartitionsRequest, DeleteTopicsRequest,
        ElectLeadersRequest, IncrementalAlterConfigsRequest, TopicName,
    };
    use kafka_protocol::protocol::StrBytes;
    let topics: Vec<_> = image.topics.values().collect();
    if topics.is_empty() {
        return None;
    }
    let t = topics[rng.below(topics.len() as u64) as usize];
    let name = TopicName(StrBytes::from_string(t.name.clone()));
    match rng.below(6) {
        0 => Some((
            RequestBody::DeleteTopics(DeleteTopicsRequest::default().with_topic_names(vec![name])),
            5,
        )),
        1 => Some((
            RequestBody::CreatePartitions(CreatePartitionsRequest::default().with_topics(vec![
                CreatePartitionsTopic::default()
                    .with_name(name)
                    .with_count(t.partitions.len() as i32 + 1),
            ])),
            3,
        )),
        2 | 3 => {
            let (&index, p) = t.partitions.iter().next()?;
            // A new target of the same size, or a cancel.
            let target = (rng.below(3) != 0).then(|| {
                let mut ids: Vec<i32> = (0..BROKERS).collect();
                for i in (1..ids.len()).rev() {
                    ids.swap(i, rng.below(i as u64 + 1) as usize);
                }
                ids.truncate(p.replicas().len());
                ids.into_iter().map(BrokerId).collect()
            });
            let req = AlterPartitionReassignmentsRequest::default().with_topics(vec![
                ReassignableTopic::default()
                    .with_name(name)
                    .with_partitions(vec![ReassignablePartition::default()
                        .with_partition_index(index)
                        .with_replicas(target)]),
            ]);
            Some((RequestBody::AlterPartitionReassignments(req), 1))
        }
        4 => Some((
            RequestBody::ElectLeaders(ElectLeadersRequest::default().with_topic_partitions(None)),
            2,
        )),
        _ => {
            let value = ["1", "2"][rng.below(2) as usize];
            let req = IncrementalAlterConfigsRequest::default().with_resources(vec![
                AlterConfigsResource::default()
                    .with_resource_type(2)
                    .with_resource_name(StrBytes::from_string(t.name.clone()))
                    .with_configs(vec![AlterableConfig::default()
                        .with_name(StrBytes::from_static_str("min.insync.replicas"))
                        .with_value(Some(StrBytes::from_static_str(value)))]),
            ]);
            Some((RequestBody::IncrementalAlterConfigs(req), 1))
        }
    }
}

/// Brokers in a simulation.
pub const BROKERS: i32 = 5;

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
        match rng.below(14) {
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
            8 | 9 => self.random_alter_partition(rng, image),
            _ => random_admin_request(rng, image),
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
            .flat_map(|t| {
                t.partitions
                    .iter()
                    .map(move |(i, p)| (t.id, *i, (**p).clone()))
            })
            .filter(|(_, _, p)| p.leader >= 0)
            .collect();
        if parts.is_empty() {
            return None;
        }
        let (topic_id, index, p) = parts[rng.below(parts.len() as u64) as usize].clone();
        let leader_epoch = *self.epochs.get(&p.leader)?;
        let mut isr = vec![p.leader];
        for r in p.replicas() {
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
            ResponseBody::DeleteTopics(r) => r
                .responses
                .iter()
                .filter(|t| t.error_code == 0)
                .map(|t| Promise::TopicRemoved(t.topic_id))
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
