//! The request each step of gen_partitions.rs becomes on one side (as requests.rs does for
//! gen.rs's): broker epochs are that side's own answers; partitions, replicas, ISRs, epochs
//! and log directories are read from ferrokraft's committed image (the same on both sides
//! while they agree).

use std::collections::BTreeMap;

use ferrokraft::codec::RequestBody;
use ferrokraft::metadata::image::{MetadataImage, PartitionRegistration};
use kafka_protocol::messages::alter_partition_reassignments_request::{
    ReassignablePartition, ReassignableTopic,
};
use kafka_protocol::messages::alter_partition_request::{PartitionData, TopicData};
use kafka_protocol::messages::broker_registration_request::{Feature, Listener};
use kafka_protocol::messages::list_partition_reassignments_request::ListPartitionReassignmentsTopics;
use kafka_protocol::messages::update_features_request::FeatureUpdateKey;
use kafka_protocol::messages::{
    AlterPartitionReassignmentsRequest, AlterPartitionRequest, BrokerHeartbeatRequest, BrokerId,
    BrokerRegistrationRequest, ListPartitionReassignmentsRequest, TopicName, UpdateFeaturesRequest,
};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use crate::compare::Ids;
use crate::gen::EpochRef;
use crate::gen_partitions::{Completion, PartStep, PartitionRef, Target};

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

/// A log directory no broker registers.
const UNKNOWN_DIR: Uuid = Uuid::from_u128(0xbad0_d1e5_0000_4000_8000_0000_0000_0009);

/// The partitions being reassigned, in (topic name, partition) order.
fn reassigning(image: &MetadataImage) -> Vec<(String, i32)> {
    let mut out = Vec::new();
    for (name, id) in &image.topic_ids {
        if let Some(t) = image.topics.get(id) {
            for (p, part) in &t.partitions {
                if !part.adding_replicas().is_empty() || !part.removing_replicas().is_empty() {
                    out.push((name.clone(), *p));
                }
            }
        }
    }
    out
}

/// The k-th existing topic's name (modulo), or "nosuch".
fn kth_topic(image: &MetadataImage, k: usize) -> String {
    let n = image.topic_ids.len();
    if n == 0 {
        return "nosuch".to_string();
    }
    image
        .topic_ids
        .keys()
        .nth(k % n)
        .cloned()
        .unwrap_or_default()
}

/// The topic and partition a reference names now.
fn resolve(image: &MetadataImage, r: &PartitionRef) -> (String, i32) {
    match r {
        PartitionRef::UnknownTopic => ("nosuch".to_string(), 0),
        PartitionRef::Named(name, p) => (name.to_string(), *p),
        PartitionRef::Existing { topic, partition } => (kth_topic(image, *topic), *partition),
        PartitionRef::Reassigning(k) => {
            let all = reassigning(image);
            if all.is_empty() {
                (kth_topic(image, *k), 0)
            } else {
                all[k % all.len()].clone()
            }
        }
    }
}

fn partition<'a>(
    image: &'a MetadataImage,
    topic: &str,
    p: i32,
) -> Option<&'a PartitionRegistration> {
    image
        .topic_by_name(topic)
        .and_then(|t| t.partitions.get(&p))
        .map(|p| p.as_ref())
}

/// Where a reassignment is heading: the replicas without those being removed.
fn target_of(p: &PartitionRegistration) -> Vec<i32> {
    p.replicas()
        .iter()
        .copied()
        .filter(|r| !p.removing_replicas().contains(r))
        .collect()
}

/// The replicas a target asks for (None: cancel).
fn target_replicas(
    image: &MetadataImage,
    current: Option<&PartitionRegistration>,
    t: &Target,
) -> Option<Vec<i32>> {
    let base = current.map_or_else(|| vec![1], target_of);
    let spare: Vec<i32> = image
        .brokers
        .keys()
        .copied()
        .filter(|b| !base.contains(b))
        .collect();
    Some(match t {
        Target::Cancel => return None,
        Target::Explicit(v) => v.clone(),
        Target::Move(n) => {
            let mut v = base.clone();
            let len = v.len();
            for (i, b) in spare.iter().take(*n.min(&len)).enumerate() {
                v[len - 1 - i] = *b;
            }
            v
        }
        Target::Grow => {
            let mut v = base.clone();
            v.extend(spare.first());
            v
        }
        Target::Shrink => {
            let mut v = base.clone();
            if v.len() > 1 {
                v.pop();
            }
            v
        }
        Target::Reverse => base.iter().rev().copied().collect(),
    })
}

/// The request a step of gen_partitions.rs becomes on a side that gave the brokers
/// `epochs`; `image` is ferrokraft's committed one. None for a failover (no request).
pub fn request(
    step: &PartStep,
    cluster_id: &str,
    epochs: &BTreeMap<i32, i64>,
    ids: &Ids,
    image: &MetadataImage,
) -> Option<(RequestBody, i16)> {
    let resolve_epoch = |broker: i32, r: EpochRef| crate::requests::broker_epoch(epochs, broker, r);
    Some(match step {
        PartStep::Reassign {
            partitions,
            allow_rf_change,
            version,
        } => {
            // Topics in first-named order, each with its partitions in request order (a
            // topic named twice is sent twice, as a client may).
            let mut topics: Vec<ReassignableTopic> = Vec::new();
            for (r, t) in partitions {
                let (name, p) = resolve(image, r);
                let replicas = target_replicas(image, partition(image, &name, p), t)
                    .map(|v| v.into_iter().map(BrokerId).collect());
                let rp = ReassignablePartition::default()
                    .with_partition_index(p)
                    .with_replicas(replicas);
                match topics.last_mut() {
                    Some(last) if last.name.0.as_str() == name => last.partitions.push(rp),
                    _ => topics.push(
                        ReassignableTopic::default()
                            .with_name(TopicName(s(&name)))
                            .with_partitions(vec![rp]),
                    ),
                }
            }
            let req = AlterPartitionReassignmentsRequest::default()
                .with_timeout_ms(30_000)
                .with_allow_replication_factor_change(*allow_rf_change || *version == 0)
                .with_topics(topics);
            (RequestBody::AlterPartitionReassignments(req), *version)
        }
        PartStep::ListReassignments { topics } => {
            let req = ListPartitionReassignmentsRequest::default()
                .with_timeout_ms(30_000)
                .with_topics(topics.as_ref().map(|ts| {
                    ts.iter()
                        .map(|(r, ps)| {
                            let (name, p) = resolve(image, r);
                            let mut indexes = vec![p];
                            indexes.extend(ps);
                            ListPartitionReassignmentsTopics::default()
                                .with_name(TopicName(s(&name)))
                                .with_partition_indexes(indexes)
                        })
                        .collect()
                }));
            (RequestBody::ListPartitionReassignments(req), 0)
        }
        PartStep::Complete {
            at,
            change,
            version,
        } => {
            let (topic, p) = resolve(image, at);
            let current = partition(image, &topic, p);
            let (leader, leader_epoch, partition_epoch, mut isr) =
                current.map_or((1, 0, 0, vec![1]), |c| {
                    (
                        c.leader,
                        c.leader_epoch,
                        c.partition_epoch,
                        c.isr().to_vec(),
                    )
                });
            if let Some(c) = current {
                match change {
                    Completion::AddOne => {
                        let next = c
                            .adding_replicas()
                            .iter()
                            .chain(c.replicas())
                            .find(|r| !isr.contains(r));
                        isr.extend(next);
                    }
                    Completion::AddAll => {
                        for r in c.replicas() {
                            if !isr.contains(r) {
                                isr.push(*r);
                            }
                        }
                    }
                    Completion::TargetOnly => isr = target_of(c),
                    Completion::ShrinkOne => {
                        if let Some(i) = isr.iter().rposition(|r| *r != c.leader) {
                            isr.remove(i);
                        }
                    }
                }
            }
            let mut data = PartitionData::default()
                .with_partition_index(p)
                .with_leader_epoch(leader_epoch)
                .with_leader_recovery_state(0)
                .with_partition_epoch(partition_epoch);
            crate::requests::with_new_isr(&mut data, &isr, *version, epochs);
            // This side's own id of the topic.
            let topic_id = ids
                .latest
                .get(&topic)
                .copied()
                .unwrap_or(crate::requests::UNKNOWN_TOPIC_ID);
            let req = AlterPartitionRequest::default()
                .with_broker_id(BrokerId(leader))
                .with_broker_epoch(resolve_epoch(leader, EpochRef::Current))
                .with_topics(vec![TopicData::default()
                    .with_topic_id(topic_id)
                    .with_partitions(vec![data])]);
            (RequestBody::AlterPartition(req), *version)
        }
        PartStep::UpdateFeatures {
            updates,
            validate_only,
            version,
        } => {
            let req = UpdateFeaturesRequest::default()
                .with_timeout_ms(30_000)
                .with_validate_only(*validate_only && *version >= 1)
                .with_feature_updates(
                    updates
                        .iter()
                        .map(|(name, level, upgrade, allow_downgrade)| {
                            let mut u = FeatureUpdateKey::default()
                                .with_feature(s(name))
                                .with_max_version_level(*level);
                            if *version == 0 {
                                u = u.with_allow_downgrade(*allow_downgrade);
                            } else {
                                u = u.with_upgrade_type(*upgrade);
                            }
                            u
                        })
                        .collect(),
                );
            (RequestBody::UpdateFeatures(req), *version)
        }
        PartStep::Register {
            broker,
            incarnation,
            dirs,
            elr,
            previous,
            version,
        } => {
            // The incarnation and first directory as requests.rs gives a plain registration.
            let tag = (u128::from(*broker as u32) << 8) | u128::from(*incarnation);
            let mut features = vec![Feature::default()
                .with_name(s("metadata.version"))
                .with_min_supported_version(7)
                .with_max_supported_version(27)];
            if *elr {
                features.push(
                    Feature::default()
                        .with_name(s("eligible.leader.replicas.version"))
                        .with_min_supported_version(0)
                        .with_max_supported_version(1),
                );
            }
            let req = BrokerRegistrationRequest::default()
                .with_broker_id(BrokerId(*broker))
                .with_cluster_id(s(cluster_id))
                .with_incarnation_id(Uuid::from_u128(0x1000_0000 | tag))
                .with_listeners(vec![Listener::default()
                    .with_name(s("PLAINTEXT"))
                    .with_host(s("localhost"))
                    .with_port(9000 + *broker as u16)
                    .with_security_protocol(0)])
                .with_features(features)
                .with_rack(None)
                .with_log_dirs(
                    (0..u128::from(*dirs))
                        .map(|i| Uuid::from_u128((tag << 64) | (7 + i)))
                        .collect(),
                )
                .with_previous_broker_epoch(resolve_epoch(*broker, *previous));
            (RequestBody::BrokerRegistration(req), *version)
        }
        PartStep::Heartbeat {
            broker,
            epoch,
            offline,
            caught_up,
            want_shut_down,
        } => {
            let dirs = image
                .brokers
                .get(broker)
                .map(|b| b.log_dirs.clone())
                .unwrap_or_default();
            let mut offline_dirs: Vec<Uuid> = Vec::new();
            for i in offline {
                let d = if *i == 9 {
                    Some(UNKNOWN_DIR)
                } else {
                    dirs.get(*i as usize).copied()
                };
                if let Some(d) = d {
                    if !offline_dirs.contains(&d) {
                        offline_dirs.push(d);
                    }
                }
            }
            let req = BrokerHeartbeatRequest::default()
                .with_broker_id(BrokerId(*broker))
                .with_broker_epoch(resolve_epoch(*broker, *epoch))
                .with_current_metadata_offset(if *caught_up { 1 << 40 } else { 0 })
                .with_want_fence(false)
                .with_want_shut_down(*want_shut_down)
                .with_offline_log_dirs(offline_dirs);
            (RequestBody::BrokerHeartbeat(req), 1)
        }
        PartStep::Failover { .. } => return None,
    })
}
