//! AlterPartition (Kafka 4.1's `ReplicationControlManager.alterPartition`): a partition
//! leader's ISR change, checked against the leader and partition epochs and the eligibility
//! of every new ISR member, then built as a partition change.

use kafka_protocol::messages::alter_partition_request::PartitionData as RequestPartition;
use kafka_protocol::messages::alter_partition_response::{PartitionData, TopicData};
use kafka_protocol::messages::{AlterPartitionRequest, AlterPartitionResponse, BrokerId};

use super::partition_change::{Election, PartitionChangeBuilder, RECOVERED, RECOVERING};
use super::unclean_election_enabled;
use crate::controller::config::ControllerConfig;
use crate::controller::errors;
use crate::controller::features::{leader_epoch_bump_on_isr_shrink, partition_record_version};
use crate::controller::result::{ControllerResult, RecordOut};
use crate::metadata::image::{MetadataImage, PartitionRegistration, NO_LEADER_CHANGE};
use crate::metadata::record::MetadataRecord;

fn error_partition(index: i32, code: i16) -> PartitionData {
    PartitionData::default()
        .with_partition_index(index)
        .with_error_code(code)
}

fn state_partition(index: i32, p: &PartitionRegistration) -> PartitionData {
    PartitionData::default()
        .with_partition_index(index)
        .with_error_code(errors::NONE)
        .with_leader_id(BrokerId(p.leader))
        .with_leader_epoch(p.leader_epoch)
        .with_isr(p.isr().iter().map(|r| BrokerId(*r)).collect())
        .with_leader_recovery_state(p.leader_recovery_state)
        .with_partition_epoch(p.partition_epoch)
}

/// The new ISR with each member's broker epoch (-1 when the request carries none, v2).
fn new_isr(req: &RequestPartition, version: i16) -> Vec<(i32, i64)> {
    if version >= 3 {
        req.new_isr_with_epochs
            .iter()
            .map(|b| (b.broker_id.0, b.broker_epoch))
            .collect()
    } else {
        req.new_isr.iter().map(|b| (b.0, -1)).collect()
    }
}

/// Kafka's `validateAlterPartitionData`: the error code, or none when the change may go on.
fn validate(
    image: &MetadataImage,
    broker_id: i32,
    current: &PartitionRegistration,
    req: &RequestPartition,
    isr: &[(i32, i64)],
) -> Option<i16> {
    if req.leader_epoch > current.leader_epoch || req.partition_epoch > current.partition_epoch {
        // The leader knows of a change this controller has not seen: it is not the
        // controller the leader should talk to.
        return Some(errors::NOT_CONTROLLER);
    }
    if req.leader_epoch < current.leader_epoch {
        return Some(errors::FENCED_LEADER_EPOCH);
    }
    if broker_id != current.leader {
        return Some(errors::INVALID_REQUEST);
    }
    if req.partition_epoch < current.partition_epoch {
        return Some(errors::INVALID_UPDATE_VERSION);
    }
    let ids: Vec<i32> = isr.iter().map(|(id, _)| *id).collect();
    let mut unique = ids.clone();
    unique.sort_unstable();
    unique.dedup();
    if ids
        .iter()
        .any(|r| *r < 0 || !current.replicas().contains(r))
        || unique.len() != ids.len()
    {
        return Some(errors::INVALID_REQUEST);
    }
    if !ids.contains(&current.leader) {
        return Some(errors::INVALID_REQUEST);
    }
    match req.leader_recovery_state {
        RECOVERED => {}
        RECOVERING if ids.len() > 1 => return Some(errors::INVALID_REQUEST),
        RECOVERING if current.leader_recovery_state == RECOVERED => {
            return Some(errors::INVALID_REQUEST)
        }
        RECOVERING => {}
        // Kafka fails the whole request here (IllegalArgumentException); a bad value is the
        // sender's error, so it is refused as one.
        _ => return Some(errors::INVALID_REQUEST),
    }
    for (id, epoch) in isr {
        let eligible = image.brokers.get(id).is_some_and(|b| {
            !b.in_controlled_shutdown && !b.fenced && (*epoch == -1 || b.broker_epoch == *epoch)
        });
        if !eligible {
            tracing::info!(
                "Rejecting AlterPartition from broker {broker_id}: replica {id} is not eligible \
                 for the ISR"
            );
            return Some(errors::INELIGIBLE_REPLICA);
        }
    }
    None
}

/// Kafka's `alterPartition`; `version` is the request's (2 or 3).
pub fn alter_partition(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    req: &AlterPartitionRequest,
    version: i16,
) -> ControllerResult<AlterPartitionResponse> {
    let broker_id = req.broker_id.0;
    if let Err(e) = image.check_broker_epoch(broker_id, req.broker_epoch) {
        return ControllerResult::response_only(
            AlterPartitionResponse::default().with_error_code(e.code),
        );
    }
    let record_version = partition_record_version(image);
    let bump = leader_epoch_bump_on_isr_shrink(image);
    let mut records = Vec::new();
    let mut topics = Vec::new();
    for t in &req.topics {
        let mut partitions = Vec::new();
        let topic = image.topics.get(&t.topic_id);
        for p in &t.partitions {
            let Some(topic) = topic else {
                partitions.push(error_partition(p.partition_index, errors::UNKNOWN_TOPIC_ID));
                continue;
            };
            let Some(current) = topic.partitions.get(&p.partition_index) else {
                partitions.push(error_partition(
                    p.partition_index,
                    errors::UNKNOWN_TOPIC_OR_PARTITION,
                ));
                continue;
            };
            let isr = new_isr(p, version);
            if let Some(code) = validate(image, broker_id, current, p, &isr) {
                partitions.push(error_partition(p.partition_index, code));
                continue;
            }
            let acceptable = super::leader_acceptor(image, current, |r| image.is_active_broker(r));
            let election = if unclean_election_enabled(image, cfg, &topic.name) {
                Election::Unclean
            } else {
                Election::Online
            };
            let record =
                PartitionChangeBuilder::new(current, t.topic_id, p.partition_index, &acceptable)
                    .election(election)
                    .eligible_leader_replicas(
                        crate::controller::features::elr_enabled(image),
                        super::effective_min_isr(image, cfg, &topic.name),
                    )
                    .guard_last_known_leader(cfg.release.guards_last_known_leader())
                    .bump_leader_epoch_on_isr_shrink(bump)
                    .target_isr(isr.iter().map(|(id, _)| *id).collect())
                    .target_recovery_state(p.leader_recovery_state)
                    .build();
            match record {
                None => partitions.push(state_partition(p.partition_index, current)),
                Some(record) => {
                    let leader = record.leader;
                    let merged = current.merge(record.clone());
                    records.push(RecordOut::new(
                        MetadataRecord::PartitionChange(record),
                        record_version,
                    ));
                    match merged {
                        Ok(m) if leader == NO_LEADER_CHANGE || leader == broker_id => {
                            partitions.push(state_partition(p.partition_index, &m));
                        }
                        Ok(_) => partitions.push(error_partition(
                            p.partition_index,
                            errors::NEW_LEADER_ELECTED,
                        )),
                        Err(e) => {
                            tracing::error!("AlterPartition built a change it cannot apply: {e}");
                            records.pop();
                            partitions.push(error_partition(
                                p.partition_index,
                                errors::UNKNOWN_SERVER_ERROR,
                            ));
                        }
                    }
                }
            }
        }
        topics.push(
            TopicData::default()
                .with_topic_id(t.topic_id)
                .with_partitions(partitions),
        );
    }
    ControllerResult::of(
        records,
        AlterPartitionResponse::default().with_topics(topics),
    )
}
