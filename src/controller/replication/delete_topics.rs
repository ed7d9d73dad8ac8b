//! DeleteTopics (Kafka 4.1's `ControllerApis.deleteTopics` and
//! `ReplicationControlManager.deleteTopics`): names and ids are checked for duplicates and
//! resolved, then every topic that resolves is removed with one RemoveTopicRecord, all in one
//! batch.
//!
//! ```text
//!   names + ids ─▶ duplicates / both-or-neither refused ─▶ resolved at the committed offset
//!              ─▶ RemoveTopicRecord per topic still in the speculative image ─▶ shuffled reply
//! ```
//!
//! Kafka resolves names and ids at the last committed offset and removes at the latest one,
//! so a topic whose removal is not committed yet resolves and then answers UNKNOWN_TOPIC_ID;
//! the two images are passed for that.

use crate::codec::error_response::{deletable_topic_result, delete_topics_error};
use crate::common::errors::TOPIC_DELETION_DISABLED;
use crate::controller::authorization::{Allowance, TOPIC_AUTHORIZATION_FAILED};
use crate::metadata::acl::{AclOperation, ResourceType, CLUSTER_NAME};
use std::collections::{BTreeMap, BTreeSet};

use kafka_protocol::messages::{DeleteTopicsRequest, DeleteTopicsResponse};
use uuid::Uuid;

use crate::controller::config::ControllerConfig;
use crate::controller::errors::{self, ApiError};
use crate::controller::result::{ControllerResult, RecordOut};
use crate::metadata::image::MetadataImage;
use crate::metadata::record::MetadataRecord;
use crate::metadata::records::RemoveTopicRecord;
use crate::raft::Rng;

/// Kafka's `Errors.UNKNOWN_TOPIC_OR_PARTITION.message()`, which a failed name lookup carries.
const UNKNOWN_TOPIC_MESSAGE: &str = "This server does not host this topic-partition.";
/// Kafka's `Errors.UNKNOWN_TOPIC_ID.message()`, which a failed id lookup carries.
const UNKNOWN_TOPIC_ID_MESSAGE: &str = "This server does not host this topic ID.";

/// Kafka's DeleteTopics. `committed` resolves names and ids; `image` (the speculative one)
/// decides what is removed. Long on purpose: Kafka's ControllerApis and
/// ReplicationControlManager steps in their order (names and ids resolved, authorized,
/// deduplicated, quota, removal), each refusing per topic with the first error that applies.
pub fn delete_topics(
    committed: &MetadataImage,
    image: &MetadataImage,
    cfg: &ControllerConfig,
    rng: &mut Rng,
    allowance: Allowance<'_>,
    req: &DeleteTopicsRequest,
    version: i16,
) -> ControllerResult<DeleteTopicsResponse> {
    if !cfg.delete_topic_enable {
        let error = if version < 3 {
            ApiError::new(errors::INVALID_REQUEST, "Topic deletion is disabled.")
        } else {
            ApiError::code(TOPIC_DELETION_DISABLED)
        };
        return ControllerResult::response_only(delete_topics_error(req, version, &error));
    }
    let mut responses = Vec::new();
    let mut names = BTreeSet::new();
    let mut duplicate_names = BTreeSet::new();
    let mut ids = BTreeSet::new();
    let mut duplicate_ids = BTreeSet::new();
    let mut add_name = |name: &str, names: &mut BTreeSet<String>| {
        if duplicate_names.contains(name) || !names.insert(name.to_string()) {
            duplicate_names.insert(name.to_string());
            names.remove(name);
        }
    };
    for n in &req.topic_names {
        add_name(n.0.as_str(), &mut names);
    }
    for t in &req.topics {
        match (&t.name, t.topic_id.is_nil()) {
            (None, true) => responses.push(deletable_topic_result(
                None,
                Uuid::nil(),
                &ApiError::new(
                    errors::INVALID_REQUEST,
                    "Neither topic name nor id were specified.",
                ),
            )),
            (None, false) => {
                if duplicate_ids.contains(&t.topic_id) || !ids.insert(t.topic_id) {
                    duplicate_ids.insert(t.topic_id);
                    ids.remove(&t.topic_id);
                }
            }
            (Some(name), true) => add_name(name.0.as_str(), &mut names),
            (Some(name), false) => responses.push(deletable_topic_result(
                Some(name.0.as_str()),
                t.topic_id,
                &ApiError::new(
                    errors::INVALID_REQUEST,
                    "You may not specify both topic name and topic id.",
                ),
            )),
        }
    }
    for name in &duplicate_names {
        responses.push(deletable_topic_result(
            Some(name),
            Uuid::nil(),
            &ApiError::new(errors::INVALID_REQUEST, "Duplicate topic name."),
        ));
    }
    for id in &duplicate_ids {
        responses.push(deletable_topic_result(
            None,
            *id,
            &ApiError::new(errors::INVALID_REQUEST, "Duplicate topic id."),
        ));
    }
    // Resolve ids, then names, against the committed image.
    let mut id_to_name: BTreeMap<Uuid, String> = BTreeMap::new();
    for id in &ids {
        match committed.topics.get(id) {
            Some(topic) => {
                id_to_name.insert(*id, topic.name.clone());
            }
            None => responses.push(deletable_topic_result(
                None,
                *id,
                &ApiError::new(errors::UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_ID_MESSAGE),
            )),
        }
    }
    let Allowance { quota, access } = allowance;
    // ControllerApis' checks, on every name given or resolved at once: DELETE on the
    // cluster, else DESCRIBE and DELETE per topic. A topic the sender may not see is refused
    // without a word on whether it exists.
    let cluster = access.allowed(
        AclOperation::Delete,
        ResourceType::Cluster,
        CLUSTER_NAME,
        false,
    );
    let to_check: BTreeSet<String> = names.iter().chain(id_to_name.values()).cloned().collect();
    let allowed = |op| -> BTreeSet<&String> {
        to_check
            .iter()
            .filter(|n| cluster || access.allowed(op, ResourceType::Topic, n, true))
            .collect()
    };
    let (describable, deletable) = (
        allowed(AclOperation::Describe),
        allowed(AclOperation::Delete),
    );
    let refused = || {
        ApiError::new(
            TOPIC_AUTHORIZATION_FAILED,
            crate::raft::errors::default_message(TOPIC_AUTHORIZATION_FAILED),
        )
    };
    id_to_name.retain(|id, name| {
        if deletable.contains(name) {
            return true;
        }
        let shown = describable.contains(name).then_some(name.as_str());
        responses.push(deletable_topic_result(shown, *id, &refused()));
        false
    });
    for name in &names {
        if !describable.contains(name) {
            responses.push(deletable_topic_result(Some(name), Uuid::nil(), &refused()));
            continue;
        }
        match committed.topic_ids.get(name) {
            None => responses.push(deletable_topic_result(
                Some(name),
                Uuid::nil(),
                &ApiError::new(errors::UNKNOWN_TOPIC_OR_PARTITION, UNKNOWN_TOPIC_MESSAGE),
            )),
            Some(_) if !deletable.contains(name) => {
                responses.push(deletable_topic_result(Some(name), Uuid::nil(), &refused()));
            }
            Some(id) => {
                if duplicate_ids.contains(id) || id_to_name.contains_key(id) {
                    // A name that maps to an id also given: both refused.
                    duplicate_ids.insert(*id);
                    id_to_name.remove(id);
                    responses.push(deletable_topic_result(
                        Some(name),
                        *id,
                        &ApiError::new(
                            errors::INVALID_REQUEST,
                            "The provided topic name maps to an ID that was already supplied.",
                        ),
                    ));
                } else {
                    id_to_name.insert(*id, name.clone());
                }
            }
        }
    }
    let mut records = Vec::new();
    for (id, name) in &id_to_name {
        if let Some(topic) = image.topics.get(id) {
            let partitions = u32::try_from(topic.partitions.len()).unwrap_or(u32::MAX);
            if let Err(e) = quota.apply(partitions) {
                responses.push(deletable_topic_result(Some(name), *id, &e));
                continue;
            }
            records.push(RecordOut::new(
                MetadataRecord::RemoveTopic(RemoveTopicRecord {
                    topic_id: *id,
                    ..Default::default()
                }),
                0,
            ));
            tracing::info!("Deleting topic {name} with id {id}.");
            responses.push(deletable_topic_result(
                Some(name),
                *id,
                &ApiError::code(errors::NONE),
            ));
        } else {
            responses.push(deletable_topic_result(
                Some(name),
                *id,
                &ApiError::code(errors::UNKNOWN_TOPIC_ID),
            ));
        }
    }
    if records.len() > crate::controller::result::MAX_RECORDS_PER_USER_OP {
        // Kafka's bounded record list overflows: the whole request fails.
        return ControllerResult::response_only(delete_topics_error(
            req,
            version,
            &ApiError::new(
                errors::POLICY_VIOLATION,
                "Unable to perform excessively large batch operation.",
            ),
        ));
    }
    // Kafka shuffles the answers so that their positions tell nothing.
    for i in (1..responses.len()).rev() {
        let j = rng.below(i as u64 + 1) as usize;
        responses.swap(i, j);
    }
    ControllerResult::of(
        records,
        DeleteTopicsResponse::default().with_responses(responses),
    )
}
