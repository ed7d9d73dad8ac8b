//! CreatePartitions (Kafka 4.1's `ControllerApis.createPartitions` and
//! `ReplicationControlManager.createPartitions`): a topic grows to `count` partitions, placed
//! like a new topic's with the topic's replication factor, or as assigned.
//!
//! ```text
//!   topics ─▶ duplicates refused ─▶ per topic (Java HashSet order): count, assignments,
//!          ─▶ placement ─▶ PartitionRecord per new partition ─▶ one batch for the request
//! ```

use crate::codec::error_response::{create_partitions_error, create_partitions_topic_result};
use crate::codec::versions::Release;
use crate::controller::authorization::Allowance;
use crate::controller::mutation_quotas::PartitionChangeQuota;
use crate::metadata::acl::{AclOperation, ResourceType};
use std::collections::BTreeSet;

use kafka_protocol::messages::create_partitions_request::CreatePartitionsTopic;
use kafka_protocol::messages::create_partitions_response::CreatePartitionsTopicResult;
use kafka_protocol::messages::{CreatePartitionsRequest, CreatePartitionsResponse};

use super::create_topics::{active_replicas, new_partition_record, validate_manual_assignment};
use super::placement::{place, UsableBroker};
use crate::common::java::{java_hash_map_order, Built};
use crate::controller::errors::{self, ApiError};
use crate::controller::result::{ControllerResult, RecordOut};
use crate::metadata::image::MetadataImage;
use crate::raft::Rng;

/// Kafka's CreatePartitions.
pub fn create_partitions(
    image: &MetadataImage,
    release: Release,
    brokers: &[UsableBroker],
    rng: &mut Rng,
    req: &CreatePartitionsRequest,
    allowance: Allowance<'_>,
) -> ControllerResult<CreatePartitionsResponse> {
    let Allowance { quota, access } = allowance;
    // ControllerApis: a name given twice is refused whole. The rest go on in the order of
    // the Java HashSet that collected them.
    let mut seen = BTreeSet::new();
    let mut duplicates = Vec::new();
    let mut unique: Vec<&str> = Vec::new();
    for t in &req.topics {
        let name = t.name.0.as_str();
        if seen.insert(name) {
            unique.push(name);
        } else if !duplicates.contains(&name) {
            duplicates.push(name);
        }
    }
    unique.retain(|n| !duplicates.contains(n));
    java_hash_map_order(&mut duplicates, Built::Default, |s| s);
    java_hash_map_order(&mut unique, Built::Default, |s| s);
    let mut results: Vec<CreatePartitionsTopicResult> = duplicates
        .iter()
        .map(|n| {
            create_partitions_topic_result(
                n,
                &ApiError::new(errors::INVALID_REQUEST, "Duplicate topic name."),
            )
        })
        .collect();
    // ControllerApis: ALTER on each topic (no cluster-wide shortcut); the refused ones are
    // answered before the controller's results, with the code alone.
    let (unique, refused): (Vec<&str>, Vec<&str>) = unique
        .into_iter()
        .partition(|n| access.allowed(AclOperation::Alter, ResourceType::Topic, n, true));
    results.extend(refused.iter().map(|n| {
        create_partitions_topic_result(
            n,
            &ApiError::code(crate::controller::authorization::TOPIC_AUTHORIZATION_FAILED),
        )
    }));
    // Kafka 4.4 refuses the whole request, before any topic, when the topics it goes on with
    // would add too many partitions in all (unknown topics and decreases count for nothing);
    // the event fails, and ControllerApis answers every topic asked for with the error.
    if let Some(max) = release.max_added_partitions_per_request() {
        let added = unique.iter().fold(0u64, |n, name| {
            let requested = req.topics.iter().find(|t| t.name.0.as_str() == *name);
            let existing = image.topic_by_name(name).map(|t| t.partitions.len() as i64);
            match (requested, existing) {
                (Some(t), Some(existing)) if t.count >= 0 => {
                    n.saturating_add(u64::try_from(i64::from(t.count) - existing).unwrap_or(0))
                }
                _ => n,
            }
        });
        if added > max {
            let e = ApiError::new(
                errors::POLICY_VIOLATION,
                "Excessively large number of additional partitions per request.",
            );
            return ControllerResult::response_only(create_partitions_error(req, &e));
        }
    }
    let mut records = Vec::new();
    for name in unique {
        // The first entry of a name: duplicates never get here.
        let Some(topic) = req.topics.iter().find(|t| t.name.0.as_str() == name) else {
            continue;
        };
        let error =
            match create_partitions_of(image, release, brokers, rng, topic, quota, &mut records) {
                Ok(()) => ApiError::code(errors::NONE),
                Err(e) => {
                    tracing::info!(
                        "CreatePartitions refused {name}: error {} ({:?})",
                        e.code,
                        e.message
                    );
                    e
                }
            };
        results.push(create_partitions_topic_result(name, &error));
    }
    if records.len() > crate::controller::result::MAX_RECORDS_PER_USER_OP {
        // Kafka's bounded record list overflows: the whole request fails.
        let e = ApiError::new(
            errors::POLICY_VIOLATION,
            "Unable to perform excessively large batch operation.",
        );
        return ControllerResult::response_only(create_partitions_error(req, &e));
    }
    let response = CreatePartitionsResponse::default().with_results(results);
    if req.validate_only {
        return ControllerResult::response_only(response);
    }
    ControllerResult::of(records, response)
}

/// One topic's new partitions, appended to `records` (as Kafka, a partition refused after
/// others were placed leaves those in the list).
fn create_partitions_of(
    image: &MetadataImage,
    release: Release,
    brokers: &[UsableBroker],
    rng: &mut Rng,
    topic: &CreatePartitionsTopic,
    quota: &mut dyn PartitionChangeQuota,
    records: &mut Vec<RecordOut>,
) -> Result<(), ApiError> {
    let name = topic.name.0.as_str();
    let unknown = || ApiError::code(errors::UNKNOWN_TOPIC_OR_PARTITION);
    let topic_id = *image.topic_ids.get(name).ok_or_else(unknown)?;
    let current = image.topics.get(&topic_id).ok_or_else(unknown)?;
    let existing = current.partitions.len() as i32;
    let invalid = |m: String| ApiError::new(errors::INVALID_PARTITIONS, m);
    if topic.count == existing {
        return Err(invalid(format!(
            "Topic already has {existing} partition(s)."
        )));
    }
    if topic.count < existing {
        return Err(invalid(format!(
            "The topic {name} currently has {existing} partition(s); {} would not be an \
             increase.",
            topic.count
        )));
    }
    let additional = topic.count - existing;
    if let Some(assignments) = &topic.assignments {
        if assignments.len() as i64 != i64::from(additional) {
            return Err(ApiError::new(
                errors::INVALID_REPLICA_ASSIGNMENT,
                format!(
                    "Attempted to add {additional} additional partition(s), but only {} \
                     assignment(s) were specified.",
                    assignments.len()
                ),
            ));
        }
    }
    // The controller mutation quota, after the request's own checks (Kafka's order).
    quota.apply(u32::try_from(additional).unwrap_or(u32::MAX))?;
    // Kafka takes the replication factor of the first partition its `parts` table iterates
    // (`topicInfo.parts.values().iterator().next()`), not of partition 0: they differ when a
    // reassignment changed the replication factor of some partitions.
    let first = super::elect_leaders::partitions_in_kafka_order(current)
        .first()
        .and_then(|id| current.partitions.get(id));
    let Some(first) = first else {
        return Err(ApiError::new(
            errors::UNKNOWN_SERVER_ERROR,
            format!("Invalid state: topic {name} appears to have no partitions."),
        ));
    };
    let replication_factor = first.replicas().len();
    let rf = i16::try_from(replication_factor).map_err(|_| {
        ApiError::new(
            errors::UNKNOWN_SERVER_ERROR,
            format!(
                "Invalid replication factor {replication_factor}: expected a number equal to \
                 less than {}",
                i16::MAX
            ),
        )
    })?;
    let placed: Vec<(Vec<i32>, Vec<i32>)> = match &topic.assignments {
        Some(assignments) => {
            let mut placed = Vec::with_capacity(assignments.len());
            for (i, a) in assignments.iter().enumerate() {
                let replicas: Vec<i32> = a.broker_ids.iter().map(|b| b.0).collect();
                validate_manual_assignment(image, &replicas, Some(replication_factor))?;
                let isr = active_replicas(image, &replicas);
                if isr.is_empty() {
                    return Err(ApiError::new(
                        errors::INVALID_REPLICA_ASSIGNMENT,
                        format!(
                            "All brokers specified in the manual partition assignment for \
                             partition {} are fenced or in controlled shutdown.",
                            existing + i as i32
                        ),
                    ));
                }
                placed.push((replicas, isr));
            }
            placed
        }
        None => place(brokers, additional, rf, rng, release)
            // Unlike CreateTopics, Kafka passes the placer's message on as it is.
            .map_err(|m| ApiError::new(errors::INVALID_REPLICATION_FACTOR, m))?
            .into_iter()
            .map(|replicas| {
                let isr = replicas.clone();
                (replicas, isr)
            })
            .collect(),
    };
    for (i, (replicas, isr)) in placed.iter().enumerate() {
        let isr: Vec<i32> = active_replicas(image, isr);
        if isr.is_empty() {
            return Err(ApiError::new(
                errors::INVALID_REPLICATION_FACTOR,
                format!(
                    "Unable to replicate the partition {rf} time(s): All brokers are currently \
                     fenced or in controlled shutdown."
                ),
            ));
        }
        records.push(new_partition_record(
            image,
            topic_id,
            existing + i as i32,
            replicas.clone(),
            isr,
        ));
    }
    Ok(())
}
