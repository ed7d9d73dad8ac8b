//! The request each generated step becomes on one side: broker epochs are that side's own
//! answers, topic ids its own ids of the topic names, and partition epochs (the same on both
//! sides while they agree) are read from ferrokraft's committed image.

use std::collections::BTreeMap;

use bytes::BytesMut;
use ferrokraft::codec::RequestBody;
use ferrokraft::metadata::image::MetadataImage;
use kafka_protocol::messages::alter_configs_request::{
    AlterConfigsResource as LegacyResource, AlterableConfig as LegacyConfig,
};
use kafka_protocol::messages::alter_partition_request::{BrokerState, PartitionData, TopicData};
use kafka_protocol::messages::broker_registration_request::{Feature, Listener};
use kafka_protocol::messages::create_partitions_request::{
    CreatePartitionsAssignment, CreatePartitionsTopic,
};
use kafka_protocol::messages::create_topics_request::{
    CreatableReplicaAssignment, CreatableTopic, CreatableTopicConfig,
};
use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
use kafka_protocol::messages::elect_leaders_request::TopicPartitions;
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::{
    AllocateProducerIdsRequest, AlterConfigsRequest, AlterPartitionRequest, BrokerHeartbeatRequest,
    BrokerId, BrokerRegistrationRequest, CreatePartitionsRequest, CreateTopicsRequest,
    DeleteTopicsRequest, ElectLeadersRequest, IncrementalAlterConfigsRequest, TopicName,
    UnregisterBrokerRequest,
};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use crate::compare::Ids;
use crate::gen::{EpochRef, IsrChange, Sender, Step, TopicRef};

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

/// The id a DeleteTopics step uses for a topic that this side never created (the same on
/// both sides).
pub const UNKNOWN_TOPIC_ID: Uuid = Uuid::from_u128(0xdead_beef_0000_4000_8000_0000_0000_0001);

/// An AlterPartition's new ISR as its version carries it: from v3 each member with this
/// side's broker epoch, before that the ids alone.
pub fn with_new_isr(
    data: &mut PartitionData,
    isr: &[i32],
    version: i16,
    epochs: &BTreeMap<i32, i64>,
) {
    if version >= 3 {
        data.new_isr_with_epochs = isr
            .iter()
            .map(|b| {
                BrokerState::default()
                    .with_broker_id(BrokerId(*b))
                    .with_broker_epoch(epochs.get(b).copied().unwrap_or(-1))
            })
            .collect();
    } else {
        data.new_isr = isr.iter().map(|b| BrokerId(*b)).collect();
    }
}

/// The broker epoch `r` stands for on a side that gave the brokers `epochs`.
pub fn broker_epoch(epochs: &BTreeMap<i32, i64>, broker: i32, r: EpochRef) -> i64 {
    let current = epochs.get(&broker).copied().unwrap_or(-1);
    match r {
        EpochRef::Current => current,
        EpochRef::Stale => current - 1,
        EpochRef::Unknown => -1,
    }
}

/// The request a step becomes on a side that gave the brokers `epochs` and the topics `ids`;
/// `image` (ferrokraft's committed one) gives partitions' epochs, leaders and replicas.
pub fn request(
    step: &Step,
    cluster_id: &str,
    epochs: &BTreeMap<i32, i64>,
    ids: &Ids,
    image: &MetadataImage,
) -> Option<(RequestBody, i16)> {
    let id_of = |name: &str| ids.latest.get(name).copied().unwrap_or(UNKNOWN_TOPIC_ID);
    let resolve = |broker: i32, r: EpochRef| broker_epoch(epochs, broker, r);
    Some(match step {
        Step::Register {
            broker,
            incarnation,
            rack,
            supports_mv,
            previous,
            version,
        } => {
            let tag = (u128::from(*broker as u32) << 8) | u128::from(*incarnation);
            let req = BrokerRegistrationRequest::default()
                .with_broker_id(BrokerId(*broker))
                .with_cluster_id(s(cluster_id))
                .with_incarnation_id(Uuid::from_u128(0x1000_0000 | tag))
                .with_listeners(vec![Listener::default()
                    .with_name(s("PLAINTEXT"))
                    .with_host(s("localhost"))
                    .with_port(9000 + *broker as u16)
                    .with_security_protocol(0)])
                .with_features(vec![Feature::default()
                    .with_name(s("metadata.version"))
                    .with_min_supported_version(7)
                    .with_max_supported_version(if *supports_mv { 27 } else { 21 })])
                .with_rack(rack.map(|r| s(&format!("rack{r}"))))
                .with_log_dirs(vec![Uuid::from_u128((tag << 64) | 7)])
                .with_previous_broker_epoch(resolve(*broker, *previous));
            (RequestBody::BrokerRegistration(req), *version)
        }
        Step::Heartbeat {
            broker,
            epoch,
            caught_up,
            want_fence,
            want_shut_down,
            version,
        } => {
            let req = BrokerHeartbeatRequest::default()
                .with_broker_id(BrokerId(*broker))
                .with_broker_epoch(resolve(*broker, *epoch))
                // Offsets differ in meaning between the two logs; "caught up" is past any
                // registration on either, "behind" before any.
                .with_current_metadata_offset(if *caught_up { 1 << 40 } else { 0 })
                .with_want_fence(*want_fence)
                .with_want_shut_down(*want_shut_down);
            (RequestBody::BrokerHeartbeat(req), *version)
        }
        Step::CreateTopics {
            topics,
            validate_only,
            version,
        } => {
            let topics = topics
                .iter()
                .map(|t| {
                    CreatableTopic::default()
                        .with_name(TopicName(s(&t.name)))
                        .with_num_partitions(t.partitions)
                        .with_replication_factor(t.rf)
                        .with_assignments(
                            t.assignments
                                .iter()
                                .flatten()
                                .enumerate()
                                .map(|(i, rs)| {
                                    CreatableReplicaAssignment::default()
                                        .with_partition_index(i as i32)
                                        .with_broker_ids(rs.iter().map(|b| BrokerId(*b)).collect())
                                })
                                .collect(),
                        )
                        .with_configs(
                            t.configs
                                .iter()
                                .map(|(k, v)| {
                                    CreatableTopicConfig::default()
                                        .with_name(s(k))
                                        .with_value(v.as_deref().map(s))
                                })
                                .collect(),
                        )
                })
                .collect();
            let req = CreateTopicsRequest::default()
                .with_topics(topics)
                .with_timeout_ms(30_000)
                .with_validate_only(*validate_only && *version >= 1);
            (RequestBody::CreateTopics(req), *version)
        }
        Step::DeleteTopics { topics, version } => {
            let mut req = DeleteTopicsRequest::default().with_timeout_ms(30_000);
            if *version >= 6 {
                req.topics = topics
                    .iter()
                    .map(|t| {
                        let (name, id) = match t {
                            TopicRef::Name(n) => (Some(n.as_str()), Uuid::nil()),
                            TopicRef::IdOf(n) => (None, id_of(n)),
                            TopicRef::Both(n) => (Some(n.as_str()), id_of(n)),
                            TopicRef::Neither => (None, Uuid::nil()),
                        };
                        DeleteTopicState::default()
                            .with_name(name.map(|n| TopicName(s(n))))
                            .with_topic_id(id)
                    })
                    .collect();
            } else {
                req.topic_names = topics
                    .iter()
                    .filter_map(|t| match t {
                        TopicRef::Name(n) => Some(TopicName(s(n))),
                        _ => None,
                    })
                    .collect();
            }
            (RequestBody::DeleteTopics(req), *version)
        }
        Step::CreatePartitions {
            topics,
            validate_only,
            version,
        } => {
            let req = CreatePartitionsRequest::default()
                .with_topics(
                    topics
                        .iter()
                        .map(|t| {
                            CreatePartitionsTopic::default()
                                .with_name(TopicName(s(&t.name)))
                                .with_count(t.count)
                                .with_assignments(t.assignments.as_ref().map(|a| {
                                    a.iter()
                                        .map(|rs| {
                                            CreatePartitionsAssignment::default().with_broker_ids(
                                                rs.iter().map(|b| BrokerId(*b)).collect(),
                                            )
                                        })
                                        .collect()
                                }))
                        })
                        .collect(),
                )
                .with_timeout_ms(30_000)
                .with_validate_only(*validate_only);
            (RequestBody::CreatePartitions(req), *version)
        }
        Step::IncrementalAlterConfigs {
            resources,
            validate_only,
            version,
        } => {
            let req = IncrementalAlterConfigsRequest::default()
                .with_resources(
                    resources
                        .iter()
                        .map(|r| {
                            AlterConfigsResource::default()
                                .with_resource_type(r.resource_type)
                                .with_resource_name(s(&r.name))
                                .with_configs(
                                    r.configs
                                        .iter()
                                        .map(|(k, op, v)| {
                                            AlterableConfig::default()
                                                .with_name(s(k))
                                                .with_config_operation(*op)
                                                .with_value(v.as_deref().map(s))
                                        })
                                        .collect(),
                                )
                        })
                        .collect(),
                )
                .with_validate_only(*validate_only);
            (RequestBody::IncrementalAlterConfigs(req), *version)
        }
        Step::AllocateProducerIds { broker, epoch } => {
            let req = AllocateProducerIdsRequest::default()
                .with_broker_id(BrokerId(*broker))
                .with_broker_epoch(resolve(*broker, *epoch));
            (RequestBody::AllocateProducerIds(req), 0)
        }
        Step::UnregisterBroker { broker } => (
            RequestBody::UnregisterBroker(
                UnregisterBrokerRequest::default().with_broker_id(BrokerId(*broker)),
            ),
            0,
        ),
        Step::ElectLeaders {
            election_type,
            partitions,
            version,
        } => {
            let req = ElectLeadersRequest::default()
                .with_election_type(*election_type)
                .with_topic_partitions(partitions.as_ref().map(|ps| {
                    ps.iter()
                        .map(|(t, p)| {
                            TopicPartitions::default()
                                .with_topic(TopicName(s(t)))
                                .with_partitions(p.clone())
                        })
                        .collect()
                }))
                .with_timeout_ms(30_000);
            (RequestBody::ElectLeaders(req), *version)
        }
        Step::AlterPartition {
            topic,
            partition,
            sender,
            broker_epoch,
            leader_epoch_delta,
            partition_epoch_delta,
            isr,
            leader_recovery_state,
            version,
        } => {
            let topic = topic
                .and_then(|k| {
                    let n = image.topic_ids.len();
                    (n > 0).then(|| image.topic_ids.keys().nth(k % n)).flatten()
                })
                .cloned()
                .unwrap_or_else(|| "nosuch".to_string());
            let count = image
                .topic_by_name(&topic)
                .map_or(1, |t| t.partitions.len().max(1));
            let partition = partition.map_or(count, |k| k % count) as i32;
            let current = image
                .topic_by_name(&topic)
                .and_then(|t| t.partitions.get(&partition));
            let (leader, replicas, mut new_isr, leader_epoch, partition_epoch) = match current {
                Some(p) => (
                    p.leader,
                    p.replicas().to_vec(),
                    p.isr().to_vec(),
                    p.leader_epoch,
                    p.partition_epoch,
                ),
                None => (1, vec![1], vec![1], 0, 0),
            };
            let from = match sender {
                Sender::Leader => leader,
                Sender::Follower => replicas
                    .iter()
                    .copied()
                    .find(|r| *r != leader)
                    .unwrap_or(leader),
                Sender::Broker(b) => *b,
            };
            match isr {
                IsrChange::Same => {}
                IsrChange::Shrink => {
                    if let Some(i) = new_isr.iter().rposition(|r| *r != leader) {
                        new_isr.remove(i);
                    }
                }
                IsrChange::Expand => {
                    if let Some(r) = replicas.iter().find(|r| !new_isr.contains(r)) {
                        new_isr.push(*r);
                    }
                }
                IsrChange::AddBroker(b) => {
                    if !new_isr.contains(b) {
                        new_isr.push(*b);
                    }
                }
                IsrChange::LeaderOnly => new_isr = vec![leader],
                IsrChange::Empty => new_isr.clear(),
            }
            let mut data = PartitionData::default()
                .with_partition_index(partition)
                .with_leader_epoch(leader_epoch + leader_epoch_delta)
                .with_leader_recovery_state(*leader_recovery_state)
                .with_partition_epoch(partition_epoch + partition_epoch_delta);
            with_new_isr(&mut data, &new_isr, *version, epochs);
            let req = AlterPartitionRequest::default()
                .with_broker_id(BrokerId(from))
                .with_broker_epoch(resolve(from, *broker_epoch))
                .with_topics(vec![TopicData::default()
                    .with_topic_id(id_of(&topic))
                    .with_partitions(vec![data])]);
            (RequestBody::AlterPartition(req), *version)
        }
        Step::AlterConfigs {
            resources,
            validate_only,
            version,
        } => {
            let req = AlterConfigsRequest::default()
                .with_resources(
                    resources
                        .iter()
                        .map(|r| {
                            LegacyResource::default()
                                .with_resource_type(r.resource_type)
                                .with_resource_name(s(&r.name))
                                .with_configs(
                                    r.configs
                                        .iter()
                                        .map(|(k, _, v)| {
                                            LegacyConfig::default()
                                                .with_name(s(k))
                                                .with_value(v.as_deref().map(s))
                                        })
                                        .collect(),
                                )
                        })
                        .collect(),
                )
                .with_validate_only(*validate_only);
            (RequestBody::AlterConfigs(req), *version)
        }
        Step::Time(_) => return None,
        Step::Part(p) => {
            return crate::requests_partitions::request(p, cluster_id, epochs, ids, image)
        }
        Step::Sec(x) => crate::requests_security::request(x, &ids.token_hmacs()),
    })
}

/// The API key and the request's body bytes at `version`.
pub fn encode(body: &RequestBody, version: i16) -> (i16, Vec<u8>) {
    let mut buf = BytesMut::new();
    body.encode(version, &mut buf).expect("encode");
    (body.api_key() as i16, buf.to_vec())
}
