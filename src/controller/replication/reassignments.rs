//! Partition reassignments (Kafka 4.1's `ReplicationControlManager.alterPartitionReassignments`,
//! `PartitionReassignmentReplicas` and `PartitionReassignmentRevert`).
//!
//! ```text
//!   target replicas ─▶ checked ─▶ replicas = target + removing, adding/removing set
//!                   ─▶ PartitionChangeBuilder (completes at once when the ISR already holds
//!                      the target) ─▶ PartitionChangeRecord
//!   later changes of the partition (AlterPartition's ISR expansion above all) complete it
//!   in the builder: replicas = target, ISR without the removed, lists cleared
//!   null target (cancel) ─▶ revert to the original replicas (unclean if no original is in sync)
//! ```

use crate::codec::error_response::alter_partition_reassignments_error;
use crate::common::errors::NO_REASSIGNMENT_IN_PROGRESS;
use std::collections::BTreeSet;

use kafka_protocol::messages::alter_partition_reassignments_request::ReassignablePartition;
use kafka_protocol::messages::alter_partition_reassignments_response::{
    ReassignablePartitionResponse, ReassignableTopicResponse,
};
use kafka_protocol::messages::list_partition_reassignments_response::{
    OngoingPartitionReassignment, OngoingTopicReassignment,
};
use kafka_protocol::messages::{
    AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse, BrokerId,
    ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse,
};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::create_topics::validate_manual_assignment;
use super::partition_change::{Election, PartitionChangeBuilder};
use super::{effective_min_isr, unclean_election_enabled};
use crate::controller::config::ControllerConfig;
use crate::controller::errors::{self, ApiError};
use crate::controller::features::elr_enabled;
use crate::controller::features::{leader_epoch_bump_on_isr_shrink, partition_record_version};
use crate::controller::result::{ControllerResult, RecordOut};
use crate::metadata::image::{mv, MetadataImage, PartitionRegistration};
use crate::metadata::record::MetadataRecord;

/// Whether `p` is being reassigned.
pub fn is_reassigning(p: &PartitionRegistration) -> bool {
    p.is_reassigning()
}

/// Kafka's `PartitionReassignmentReplicas(current, target)`: (replicas, removing, adding).
fn reassignment_replicas(current: &[i32], target: &[i32]) -> (Vec<i32>, Vec<i32>, Vec<i32>) {
    let removing: Vec<i32> = current
        .iter()
        .copied()
        .filter(|r| !target.contains(r))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let adding: Vec<i32> = target
        .iter()
        .copied()
        .filter(|r| !current.contains(r))
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut replicas = target.to_vec();
    replicas.extend(&removing);
    (replicas, removing, adding)
}

/// The replication factor a reassignment keeps: the current one, or the one an ongoing
/// reassignment is heading to.
fn current_replication_factor(p: &PartitionRegistration) -> usize {
    if !is_reassigning(p) {
        return p.replicas().len();
    }
    let mut set: BTreeSet<i32> = p.replicas().iter().copied().collect();
    set.extend(p.adding_replicas());
    for r in p.removing_replicas() {
        set.remove(r);
    }
    set.len()
}

fn builder_for<'a>(
    image: &'a MetadataImage,
    cfg: &ControllerConfig,
    topic: &str,
    topic_id: Uuid,
    partition_id: i32,
    part: &'a PartitionRegistration,
    acceptable: &'a dyn Fn(i32) -> bool,
) -> PartitionChangeBuilder<'a> {
    PartitionChangeBuilder::new(part, topic_id, partition_id, acceptable)
        .eligible_leader_replicas(elr_enabled(image), effective_min_isr(image, cfg, topic))
        .guard_last_known_leader(cfg.release.guards_last_known_leader())
        .bump_leader_epoch_on_isr_shrink(leader_epoch_bump_on_isr_shrink(image))
        .directories_of_new_replicas(directory_provider(image))
}

/// Where a replica new to a partition goes: its broker's only directory, when the
/// metadata.version records directories.
fn directory_provider(image: &MetadataImage) -> Option<Box<dyn Fn(i32) -> Uuid + '_>> {
    (image.metadata_version().unwrap_or(1) >= mv::DIRECTORY_ASSIGNMENT)
        .then(|| Box::new(move |r| image.default_dir(r)) as Box<dyn Fn(i32) -> Uuid>)
}

/// One partition's change, or its error.
fn alter_partition_reassignment(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    topic: &str,
    target: &ReassignablePartition,
    allow_replication_factor_change: bool,
) -> Result<Option<RecordOut>, ApiError> {
    let unknown = |m: String| ApiError::new(errors::UNKNOWN_TOPIC_OR_PARTITION, m);
    let topic_id = *image
        .topic_ids
        .get(topic)
        .ok_or_else(|| unknown(format!("Unable to find a topic named {topic}.")))?;
    let info = image
        .topics
        .get(&topic_id)
        .ok_or_else(|| unknown(format!("Unable to find a topic with ID {topic_id}.")))?;
    let partition_id = target.partition_index;
    let part = info
        .partitions
        .get(&partition_id)
        .ok_or_else(|| unknown(format!("Unable to find partition {topic}:{partition_id}.")))?;
    // The leader may move to any active replica whose directory is online.
    let acceptable = super::leader_acceptor(image, part, |r| image.is_active_broker(r));
    let record = match &target.replicas {
        None => {
            if !is_reassigning(part) {
                return Err(ApiError::code(NO_REASSIGNMENT_IN_PROGRESS));
            }
            // Kafka's PartitionReassignmentRevert: the original replicas, the ISR without
            // the replicas being added (their first if none is left: an unclean election).
            let original: Vec<i32> = part
                .replicas()
                .iter()
                .copied()
                .filter(|r| !part.adding_replicas().contains(r))
                .collect();
            let mut isr: Vec<i32> = part
                .isr()
                .iter()
                .copied()
                .filter(|r| !part.adding_replicas().contains(r))
                .collect();
            let unclean_allowed = unclean_election_enabled(image, cfg, topic);
            if isr.is_empty() {
                let Some(first) = original.first() else {
                    return Err(ApiError::new(
                        errors::INVALID_REPLICA_ASSIGNMENT,
                        "Invalid replica assignment: addingReplicas contains all replicas.",
                    ));
                };
                if !unclean_allowed {
                    return Err(ApiError::new(
                        errors::INVALID_REPLICA_ASSIGNMENT,
                        format!(
                            "Unable to revert partition assignment for {topic}:{partition_id} \
                             because it would require an unclean leader election."
                        ),
                    ));
                }
                isr.push(*first);
            }
            let mut b = builder_for(image, cfg, topic, topic_id, partition_id, part, &acceptable)
                .target_isr(isr)
                .target_replicas(original)
                .target_removing(Vec::new())
                .target_adding(Vec::new());
            if unclean_allowed {
                b = b.election(Election::Unclean);
            }
            b.build()
        }
        Some(replicas) => {
            let target: Vec<i32> = replicas.iter().map(|b| b.0).collect();
            validate_manual_assignment(image, &target, None)?;
            if !allow_replication_factor_change {
                let rf = current_replication_factor(part);
                if rf != target.len() {
                    return Err(ApiError::new(
                        errors::INVALID_REPLICATION_FACTOR,
                        format!(
                            "The replication factor is changed from {rf} to {}",
                            target.len()
                        ),
                    ));
                }
            }
            let (new_replicas, removing, adding) = reassignment_replicas(part.replicas(), &target);
            let mut b = builder_for(image, cfg, topic, topic_id, partition_id, part, &acceptable);
            if new_replicas != part.replicas() {
                b = b.target_replicas(new_replicas);
            }
            if !removing.is_empty() {
                b = b.target_removing(removing);
            }
            if !adding.is_empty() {
                b = b.target_adding(adding);
            }
            b.build()
        }
    };
    Ok(record.map(|r| {
        RecordOut::new(
            MetadataRecord::PartitionChange(r),
            partition_record_version(image),
        )
    }))
}

/// Kafka's AlterPartitionReassignments: one result per partition asked, one batch for all.
pub fn alter_partition_reassignments(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    req: &AlterPartitionReassignmentsRequest,
    version: i16,
) -> ControllerResult<AlterPartitionReassignmentsResponse> {
    // v0 cannot say no: the replication factor may change.
    let allow_rf_change = version < 1 || req.allow_replication_factor_change;
    let mut records = Vec::new();
    let mut responses = Vec::new();
    let (mut ok, mut total) = (0, 0);
    for topic in &req.topics {
        let name = topic.name.0.as_str();
        let mut partitions = Vec::new();
        for p in &topic.partitions {
            total += 1;
            let error = match alter_partition_reassignment(image, cfg, name, p, allow_rf_change) {
                Ok(record) => {
                    records.extend(record);
                    ok += 1;
                    ApiError::code(errors::NONE)
                }
                Err(e) => {
                    tracing::info!(
                        "Unable to alter partition reassignment for {name}:{}: error {} ({:?})",
                        p.partition_index,
                        e.code,
                        e.message
                    );
                    e
                }
            };
            partitions.push(
                ReassignablePartitionResponse::default()
                    .with_partition_index(p.partition_index)
                    .with_error_code(error.code)
                    .with_error_message(error.message.map(StrBytes::from_string)),
            );
        }
        responses.push(
            ReassignableTopicResponse::default()
                .with_name(topic.name.clone())
                .with_partitions(partitions),
        );
    }
    if records.len() > crate::controller::result::MAX_RECORDS_PER_USER_OP {
        // Kafka's bounded record list overflows: the whole request fails.
        return ControllerResult::response_only(alter_partition_reassignments_error(
            req,
            &ApiError::new(
                errors::POLICY_VIOLATION,
                "Unable to perform excessively large batch operation.",
            ),
        ));
    }
    tracing::info!("Successfully altered {ok} out of {total} partition reassignment(s).");
    ControllerResult::of(
        records,
        AlterPartitionReassignmentsResponse::default()
            .with_error_message(None)
            .with_allow_replication_factor_change(allow_rf_change)
            .with_responses(responses),
    )
}

/// Kafka's ListPartitionReassignments over `image`: every reassigning partition (topics in
/// id order, each topic's in the order their reassignments started), or those of the topics
/// and partitions named.
pub fn list_partition_reassignments(
    image: &MetadataImage,
    req: &ListPartitionReassignmentsRequest,
) -> ListPartitionReassignmentsResponse {
    let ids = |v: &[i32]| v.iter().copied().map(BrokerId).collect::<Vec<_>>();
    let ongoing = |p_id: i32, p: &PartitionRegistration| {
        OngoingPartitionReassignment::default()
            .with_partition_index(p_id)
            .with_replicas(ids(p.replicas()))
            .with_adding_replicas(ids(p.adding_replicas()))
            .with_removing_replicas(ids(p.removing_replicas()))
    };
    let mut topics = Vec::new();
    let mut add = |name: &str, partitions: Vec<OngoingPartitionReassignment>| {
        if !partitions.is_empty() {
            topics.push(
                OngoingTopicReassignment::default()
                    .with_name(StrBytes::from_string(name.to_string()).into())
                    .with_partitions(partitions),
            );
        }
    };
    match &req.topics {
        None => {
            // Each topic's partitions in the order their reassignments started (Kafka's
            // `reassigningTopics` entry); the topics in id order (Kafka's: the hash order of
            // its random ids).
            for t in image.topics.values() {
                let parts = t
                    .reassigning_in_kafka_order()
                    .into_iter()
                    .filter_map(|id| t.partitions.get(&id).map(|p| ongoing(id, p)))
                    .collect();
                add(&t.name, parts);
            }
        }
        Some(asked) => {
            for a in asked {
                let Some(t) = image.topic_by_name(a.name.0.as_str()) else {
                    continue;
                };
                let parts = a
                    .partition_indexes
                    .iter()
                    .filter_map(|i| t.partitions.get(i).map(|p| (*i, p)))
                    .filter(|(_, p)| is_reassigning(p))
                    .map(|(i, p)| ongoing(i, p))
                    .collect();
                add(&t.name, parts);
            }
        }
    }
    ListPartitionReassignmentsResponse::default()
        .with_error_message(None)
        .with_topics(topics)
}
