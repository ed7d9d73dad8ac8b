//! Leader elections asked for by an admin (ElectLeaders, API 43) and the preferred-leader
//! balancing the active controller runs on its own (Kafka 4.1's
//! `ReplicationControlManager.electLeaders`, `electLeader` and
//! `maybeBalancePartitionLeaders`).
//!
//! ```text
//!   ElectLeaders ─▶ election type (0 PREFERRED, 1 UNCLEAN, else INVALID_REQUEST for all)
//!     ─▶ each named partition (or every partition when the list is null)
//!        ─▶ unknown: UNKNOWN_TOPIC_OR_PARTITION
//!        ─▶ preferred leader leads (PREFERRED) / some leader leads (UNCLEAN): ELECTION_NOT_NEEDED
//!        ─▶ PartitionChangeBuilder with the PREFERRED or UNCLEAN election
//!           ─▶ no change: PREFERRED_LEADER_NOT_AVAILABLE / ELIGIBLE_LEADERS_NOT_AVAILABLE
//!           ─▶ a PartitionChangeRecord, and NONE once it commits
//!   balancing timer ─▶ the partitions not led by their first replica ─▶ PREFERRED election
//!     each, at most 1,000 records per run (more left: run again soon)
//!   unclean timer ─▶ the leaderless partitions whose topic allows it ─▶ UNCLEAN election
//!     each, at most 1,000 records per run (more left: run again soon)
//! ```

pub use crate::common::errors::{
    ELECTION_NOT_NEEDED, ELIGIBLE_LEADERS_NOT_AVAILABLE, PREFERRED_LEADER_NOT_AVAILABLE,
};
use kafka_protocol::messages::elect_leaders_response::{PartitionResult, ReplicaElectionResult};
use kafka_protocol::messages::{ElectLeadersRequest, ElectLeadersResponse, TopicName};
use kafka_protocol::protocol::StrBytes;

use super::partition_change::{Election, PartitionChangeBuilder, NO_LEADER};
use super::{effective_min_isr, partition_change};
use crate::common::java::{java_string_hash, timeline_hash_order, timeline_hash_order_put_after};
use crate::controller::config::ControllerConfig;
use crate::controller::errors::{self, ApiError};
use crate::controller::features::elr_enabled;
use crate::controller::features::{leader_epoch_bump_on_isr_shrink, partition_record_version};
use crate::controller::result::{ControllerResult, RecordOut};
use crate::metadata::image::{MetadataImage, PartitionRegistration, TopicImage};

use crate::controller::result::MAX_RECORDS_PER_USER_OP;

/// Kafka's `MAX_ELECTIONS_PER_IMBALANCE`: the most records one balancing run writes.
pub const MAX_ELECTIONS_PER_IMBALANCE: usize = 1_000;

/// ElectionType 0 (Kafka's `ElectionType.PREFERRED`).
pub const PREFERRED: i8 = 0;
/// ElectionType 1 (Kafka's `ElectionType.UNCLEAN`).
pub const UNCLEAN: i8 = 1;

/// Kafka's `PartitionRegistration.hasPreferredLeader`: led by its first replica (a partition
/// without replicas "prefers" no leader).
pub fn has_preferred_leader(p: &PartitionRegistration) -> bool {
    p.has_preferred_leader()
}

/// Kafka's `arePartitionLeadersImbalanced`: some partition is not led by its preferred
/// replica (leaderless ones included).
pub fn are_partition_leaders_imbalanced(image: &MetadataImage) -> bool {
    image.partition_stats.imbalanced > 0
}

/// Kafka's ElectLeaders: the records and the answer, or the error every requested partition
/// (and the top level, v1+) gets: INVALID_REQUEST for an unknown election type,
/// POLICY_VIOLATION for more than [`MAX_RECORDS_PER_USER_OP`] records. An empty (not null)
/// topic list is answered before it gets here (Kafka answers it without an event).
pub fn elect_leaders(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    req: &ElectLeadersRequest,
) -> Result<ControllerResult<ElectLeadersResponse>, ApiError> {
    // v0 has no election type: the field decodes as 0, PREFERRED.
    let election_type = req.election_type;
    if election_type != PREFERRED && election_type != UNCLEAN {
        return Err(ApiError::new(
            errors::INVALID_REQUEST,
            format!("Unknown election type {election_type}"),
        ));
    }
    let mut records = Vec::new();
    let mut results = Vec::new();
    match &req.topic_partitions {
        None => {
            // Every partition of every topic, in the iteration order of Kafka's
            // `topicsByName` and `parts` tables; the partitions that already have the wanted
            // leader are left out, their topic is not.
            for topic in topics_in_kafka_order(image) {
                let mut partition_result = Vec::new();
                for id in partitions_in_kafka_order(topic) {
                    let error = elect_leader(image, cfg, &topic.name, id, election_type)
                        .map(|r| records.push(r));
                    if let Err(e) = &error {
                        if e.code == ELECTION_NOT_NEEDED {
                            continue;
                        }
                    }
                    partition_result.push(partition_outcome(id, error));
                }
                results.push(
                    ReplicaElectionResult::default()
                        .with_topic(TopicName(StrBytes::from_string(topic.name.clone())))
                        .with_partition_result(partition_result),
                );
            }
        }
        Some(topics) => {
            // As asked, duplicates included.
            for t in topics {
                let partition_result = t
                    .partitions
                    .iter()
                    .map(|&id| {
                        let error = elect_leader(image, cfg, t.topic.0.as_str(), id, election_type)
                            .map(|r| records.push(r));
                        partition_outcome(id, error)
                    })
                    .collect();
                results.push(
                    ReplicaElectionResult::default()
                        .with_topic(t.topic.clone())
                        .with_partition_result(partition_result),
                );
            }
        }
    }
    if records.len() > MAX_RECORDS_PER_USER_OP {
        return Err(ApiError::new(
            errors::POLICY_VIOLATION,
            "Unable to perform excessively large batch operation.",
        ));
    }
    Ok(ControllerResult::of(
        records,
        ElectLeadersResponse::default().with_replica_election_results(results),
    ))
}

fn partition_outcome(id: i32, outcome: Result<(), ApiError>) -> PartitionResult {
    let error = outcome.err().unwrap_or(ApiError {
        code: errors::NONE,
        message: None,
    });
    PartitionResult::default()
        .with_partition_id(id)
        .with_error_code(error.code)
        .with_error_message(error.message.map(StrBytes::from_string))
}

/// Kafka's `electLeader`: the record electing a leader of `topic`-`partition_id`, or why
/// there is none. Errors without a message of their own carry Kafka's default message for
/// the code, as Kafka's `new ApiError(Errors)` does.
pub fn elect_leader(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    topic: &str,
    partition_id: i32,
    election_type: i8,
) -> Result<RecordOut, ApiError> {
    let Some(t) = image.topic_by_name(topic) else {
        return Err(ApiError::new(
            errors::UNKNOWN_TOPIC_OR_PARTITION,
            format!("No such topic as {topic}"),
        ));
    };
    let Some(p) = t.partitions.get(&partition_id) else {
        return Err(ApiError::new(
            errors::UNKNOWN_TOPIC_OR_PARTITION,
            format!("No such partition as {topic}-{partition_id}"),
        ));
    };
    let unclean = election_type == UNCLEAN;
    if (!unclean && has_preferred_leader(p)) || (unclean && p.leader != NO_LEADER) {
        return Err(ApiError::new(
            ELECTION_NOT_NEEDED,
            "Leader election not needed for topic partition.",
        ));
    }
    let election = if unclean {
        Election::Unclean
    } else {
        Election::Preferred
    };
    match preferred_or_unclean_change(image, cfg, t, partition_id, p, election) {
        Some(record) => Ok(record),
        None if unclean => Err(ApiError::new(
            ELIGIBLE_LEADERS_NOT_AVAILABLE,
            "Eligible topic partition leaders are not available.",
        )),
        None => Err(ApiError::new(
            PREFERRED_LEADER_NOT_AVAILABLE,
            "The preferred leader was not available.",
        )),
    }
}

/// The builder run of one election (Kafka builds it the same way for ElectLeaders and for
/// balancing): leaders must be active brokers, ELR as the feature says.
fn preferred_or_unclean_change(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    topic: &TopicImage,
    partition_id: i32,
    p: &PartitionRegistration,
    election: Election,
) -> Option<RecordOut> {
    let acceptable = super::leader_acceptor(image, p, |r| image.is_active_broker(r));
    PartitionChangeBuilder::new(p, topic.id, partition_id, &acceptable)
        .election(election)
        .eligible_leader_replicas(
            elr_enabled(image),
            effective_min_isr(image, cfg, &topic.name),
        )
        .guard_last_known_leader(cfg.release.guards_last_known_leader())
        .bump_leader_epoch_on_isr_shrink(leader_epoch_bump_on_isr_shrink(image))
        .build()
        .map(|r| partition_change(r, partition_record_version(image)))
}

/// Kafka's `maybeBalancePartitionLeaders`: a preferred election for every partition not led
/// by its first replica, at most `max_elections` records; whether the limit was reached
/// (then the controller runs it again soon rather than after the check interval).
///
/// Kafka walks its `imbalancedPartitions` hash set; this walks topics by id and partitions by
/// index, so the records of one run may come in another order (the image they make is the
/// same).
pub fn balance_partition_leaders(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    max_elections: usize,
) -> ControllerResult<bool> {
    let mut records = Vec::new();
    'topics: for topic in image.topics.values() {
        for (id, p) in &topic.partitions {
            if records.len() >= max_elections {
                break 'topics;
            }
            if has_preferred_leader(p) {
                continue;
            }
            if let Some(r) =
                preferred_or_unclean_change(image, cfg, topic, *id, p, Election::Preferred)
            {
                records.push(r);
            }
        }
    }
    let more = records.len() >= max_elections;
    ControllerResult::of(records, more)
}

/// Kafka's `maybeElectUncleanLeaders`: an unclean election for every leaderless partition
/// whose topic allows them (`unclean.leader.election.enable`, resolved as a topic config), at
/// most `max_elections` records; whether the limit was reached (then the controller runs it
/// again soon rather than after `unclean.leader.election.interval.ms`). Each attempt is
/// logged as Kafka's `maybeTriggerUncleanLeaderElectionForLeaderlessPartitions` logs it: an
/// election at ERROR (data may be lost), a partition that cannot be elected at WARN.
///
/// Kafka walks its `brokersToIsrs` entries of partitions without a leader; this walks topics
/// by id and partitions by index.
pub fn elect_unclean_leaders(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    max_elections: usize,
) -> ControllerResult<bool> {
    let mut records = Vec::new();
    if image.partition_stats.offline == 0 {
        return ControllerResult::of(records, false);
    }
    'topics: for topic in image.topics.values() {
        let mut allowed: Option<bool> = None;
        for (id, p) in &topic.partitions {
            if records.len() >= max_elections {
                break 'topics;
            }
            if p.leader != NO_LEADER {
                continue;
            }
            if !*allowed
                .get_or_insert_with(|| super::unclean_election_enabled(image, cfg, &topic.name))
            {
                tracing::debug!(
                    "Cannot trigger unclean leader election for offline partition {}-{} because unclean leader election is disabled for this topic.",
                    topic.name,
                    id
                );
                continue;
            }
            match preferred_or_unclean_change(image, cfg, topic, *id, p, Election::Unclean) {
                Some(r) => {
                    tracing::error!(
                        "Triggering unclean leader election for offline partition {}-{}.",
                        topic.name,
                        id
                    );
                    records.push(r);
                }
                None => tracing::warn!(
                    "Cannot trigger unclean leader election for offline partition {}-{}: {}",
                    topic.name,
                    id,
                    crate::common::errors::error_name(ELIGIBLE_LEADERS_NOT_AVAILABLE)
                ),
            }
        }
    }
    let more = records.len() >= max_elections;
    ControllerResult::of(records, more)
}

/// The topics as Kafka's `topicsByName` (a `TimelineHashMap<String, Uuid>`) iterates them.
/// Entries sharing a slot come by creation there (the last created first), which the image
/// does not keep: here they come as if created in name order. Table growth from topics since
/// deleted is not modelled either.
fn topics_in_kafka_order(image: &MetadataImage) -> Vec<&TopicImage> {
    let mut topics: Vec<&TopicImage> = image
        .topic_ids
        .values()
        .filter_map(|id| image.topics.get(id))
        .map(|t| &**t)
        .collect();
    timeline_hash_order(&mut topics, |t| java_string_hash(&t.name));
    topics
}

/// A topic's partition ids as Kafka's `parts` (a `TimelineHashMap<Integer, _>` filled in
/// index order, `Integer.hashCode` being the value) iterates them. A partition change
/// replaces its entry, which grows a full table (`timeline_hash_order_put_after`), but only
/// one after the last partition was added matters (an earlier one grew the table to a size
/// the later insertions reach anyway): the image's replay history tells.
pub(super) fn partitions_in_kafka_order(topic: &TopicImage) -> Vec<i32> {
    let mut ids: Vec<i32> = topic.partitions.keys().copied().collect();
    if topic.history.changed_since_last_partition_added {
        timeline_hash_order_put_after(&mut ids, |id| *id);
    } else {
        timeline_hash_order(&mut ids, |id| *id);
    }
    ids
}
