//! CreateTopics (Kafka 4.1's `ControllerApis.createTopics` and
//! `ReplicationControlManager.createTopics`): name, config and assignment checks per topic,
//! placement, and one batch of TopicRecord, ConfigRecords and PartitionRecords for every topic
//! that passes.

use crate::controller::mutation_quotas::PartitionChangeQuota;
use crate::metadata::topic_name::validate_topic_name;
use std::collections::BTreeSet;

use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::create_topics_response::{
    CreatableTopicConfigs, CreatableTopicResult,
};
use kafka_protocol::messages::{CreateTopicsRequest, CreateTopicsResponse};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::placement::{Placer, UsableBroker};
use crate::controller::config::ControllerConfig;
use crate::controller::configs::topic_configs::{
    broker_effective_topic_configs, source, topic_value, validate_topic_configs,
};
use crate::controller::errors::{self, ApiError};
use crate::controller::features::partition_record_version;
use crate::controller::result::{ControllerResult, RecordOut};
use crate::metadata::image::{mv, MetadataImage};
use crate::metadata::record::MetadataRecord;
use crate::metadata::records::{ClearElrRecord, ConfigRecord, PartitionRecord, TopicRecord};
use crate::raft::Rng;

/// The metadata log's own topic, never created by request.
pub const METADATA_TOPIC: &str = "__cluster_metadata";
/// Kafka's `MAX_PARTITIONS_PER_BATCH` (KAFKA-17870).
pub const MAX_PARTITIONS_PER_REQUEST: u64 = 10_000;

/// The topic config whose change clears the topic's ELRs.
const MIN_INSYNC_REPLICAS: &str = "min.insync.replicas";

fn topic_error(name: &StrBytes, error: &ApiError) -> CreatableTopicResult {
    CreatableTopicResult::default()
        .with_name(name.clone().into())
        .with_error_code(error.code)
        .with_error_message(error.message.clone().map(StrBytes::from_string))
        .with_num_partitions(-1)
        .with_replication_factor(-1)
}

/// The whole request refused: `e` on every topic.
fn every_topic_refused(
    req: &CreateTopicsRequest,
    e: &ApiError,
) -> ControllerResult<CreateTopicsResponse> {
    ControllerResult::response_only(
        CreateTopicsResponse::default().with_topics(
            req.topics
                .iter()
                .map(|t| topic_error(&t.name.0, e))
                .collect(),
        ),
    )
}

/// The partitions a topic asks for (KAFKA-17870's count, before any other check).
fn requested_partitions(t: &CreatableTopic, default_partitions: i32) -> u64 {
    if !t.assignments.is_empty() {
        t.assignments.len() as u64
    } else if t.num_partitions == -1 {
        u64::try_from(default_partitions).unwrap_or(0)
    } else {
        u64::try_from(t.num_partitions).unwrap_or(0)
    }
}

/// Brokers placement may use (Kafka's `BrokerHeartbeatManager.usableBrokers`): registered,
/// not shutting down as the active controller's heartbeat sessions say (`shutting_down`).
/// Not the image's `in_controlled_shutdown`: Kafka's session forgets a controlled shutdown
/// when a heartbeat fences the broker and on failover, while the registration keeps the flag,
/// so such a broker is usable (as a fenced replica) and counted as registered.
pub fn usable_brokers(
    image: &MetadataImage,
    shutting_down: impl Fn(i32) -> bool,
) -> Vec<UsableBroker> {
    image
        .brokers
        .values()
        .filter(|b| !shutting_down(b.broker_id) && super::directories::has_uncordoned_dirs(b))
        .map(|b| UsableBroker {
            id: b.broker_id,
            rack: b.rack.clone(),
            fenced: b.fenced,
        })
        .collect()
}

/// Kafka's CreateTopics (fields a version lacks are left out when the answer is encoded).
pub fn create_topics(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    brokers: &[UsableBroker],
    rng: &mut Rng,
    req: &CreateTopicsRequest,
    quota: &mut dyn PartitionChangeQuota,
) -> ControllerResult<CreateTopicsResponse> {
    // Too many partitions in one request: every topic fails, before anything else.
    let total = req.topics.iter().fold(0u64, |n, t| {
        n.saturating_add(requested_partitions(t, cfg.num_partitions))
    });
    if total > MAX_PARTITIONS_PER_REQUEST {
        return every_topic_refused(
            req,
            &ApiError::new(
                errors::POLICY_VIOLATION,
                "Excessively large number of partitions per request.",
            ),
        );
    }
    // ControllerApis: a name given twice is refused whole; the metadata topic never.
    let mut seen = BTreeSet::new();
    let mut duplicates = BTreeSet::new();
    for t in &req.topics {
        if !seen.insert(t.name.0.to_string()) {
            duplicates.insert(t.name.0.to_string());
        }
    }
    // Sized for the whole request (a TopicRecord and its PartitionRecords a topic; configs
    // add a few more): grown record by record, the list was copied over and over (#41).
    let mut records = Vec::with_capacity(usize::try_from(total).unwrap_or(0) + req.topics.len());
    let mut results = Vec::with_capacity(req.topics.len());
    let mut planned: Vec<(String, Uuid)> = Vec::new();
    let mut record_count = 0usize;
    let placer = Placer::new(brokers);
    // The broker-level values every topic's answer starts from (the image does not change
    // while the request is served).
    let broker_configs: Vec<CreatableTopicConfigs> = broker_effective_topic_configs(
        image,
        cfg.release,
        cfg.node_id,
        cfg.static_properties.map(),
    )
    .into_iter()
    .map(|(name, value, source)| {
        CreatableTopicConfigs::default()
            .with_name(StrBytes::from_static_str(name))
            .with_value(Some(StrBytes::from_string(value)))
            .with_read_only(false)
            .with_config_source(source)
            .with_is_sensitive(false)
    })
    .collect();
    let shared = PerRequest {
        placer: &placer,
        broker_configs: &broker_configs,
    };
    for t in &req.topics {
        let name = t.name.0.to_string();
        if duplicates.contains(&name) || name == METADATA_TOPIC {
            continue;
        }
        match create_topic(image, cfg, &shared, rng, t, &planned, quota) {
            Ok((result, topic_records, id)) => {
                record_count += topic_records.len();
                if !req.validate_only {
                    records.extend(topic_records);
                    planned.push((name, id));
                }
                results.push(result);
            }
            Err(e) => {
                tracing::info!(
                    "CreateTopics refused {name}: error {} ({:?})",
                    e.code,
                    e.message
                );
                results.push(topic_error(&t.name.0, &e));
            }
        }
    }
    for name in &duplicates {
        results.push(topic_error(
            &StrBytes::from_string(name.clone()),
            &ApiError::new(errors::INVALID_REQUEST, "Duplicate topic name."),
        ));
    }
    if seen.contains(METADATA_TOPIC) && !duplicates.contains(METADATA_TOPIC) {
        results.push(topic_error(
            &StrBytes::from_static_str(METADATA_TOPIC),
            &ApiError::new(
                errors::INVALID_REQUEST,
                format!("Creation of internal topic {METADATA_TOPIC} is prohibited."),
            ),
        ));
    }
    if record_count > crate::controller::result::MAX_RECORDS_PER_USER_OP {
        // Kafka's bounded record list (MAX_RECORDS_PER_USER_OP) overflows: the whole request
        // fails, validate_only too (it builds the records as well).
        return every_topic_refused(
            req,
            &ApiError::new(
                errors::POLICY_VIOLATION,
                "Unable to perform excessively large batch operation.",
            ),
        );
    }
    let response = CreateTopicsResponse::default().with_topics(results);
    if req.validate_only {
        return ControllerResult::response_only(response);
    }
    ControllerResult::of(records, response)
}

/// What every topic of one request shares: placement over the usable brokers, and the
/// broker-level config values each topic's answer starts from.
struct PerRequest<'a> {
    placer: &'a Placer<'a>,
    broker_configs: &'a [CreatableTopicConfigs],
}

fn create_topic(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    shared: &PerRequest<'_>,
    rng: &mut Rng,
    t: &CreatableTopic,
    planned: &[(String, Uuid)],
    quota: &mut dyn PartitionChangeQuota,
) -> Result<(CreatableTopicResult, Vec<RecordOut>, Uuid), ApiError> {
    let name = t.name.0.to_string();
    let invalid_topic = |reason: String| {
        ApiError::new(
            errors::INVALID_TOPIC_EXCEPTION,
            format!("Topic name is invalid: {reason}"),
        )
    };
    let mut error = validate_topic_name(&name).err().map(invalid_topic);
    if let Some(existing) = image.colliding_topic(&name) {
        error = Some(ApiError::new(
            errors::INVALID_TOPIC_EXCEPTION,
            format!("Topic '{name}' collides with existing topic: {existing}"),
        ));
    }
    if image.topic_ids.contains_key(&name) || planned.iter().any(|(n, _)| *n == name) {
        error = Some(ApiError::new(
            errors::TOPIC_ALREADY_EXISTS,
            format!("Topic '{name}' already exists."),
        ));
    }
    if let Some(e) = error {
        return Err(e);
    }
    // Configs: null values refused first, then each key and value checked.
    let nulls: Vec<&str> = t
        .configs
        .iter()
        .filter(|c| c.value.is_none())
        .map(|c| c.name.as_str())
        .collect();
    if !nulls.is_empty() {
        return Err(ApiError::new(
            errors::INVALID_CONFIG,
            format!(
                "Null value not supported for topic configs: {}",
                nulls.join(",")
            ),
        ));
    }
    let mut configs: Vec<(String, String)> = Vec::new();
    for c in &t.configs {
        let value = c.value.as_ref().map(|v| v.to_string()).unwrap_or_default();
        match configs
            .iter_mut()
            .find(|(k, _)| k.as_str() == c.name.as_str())
        {
            Some(entry) => entry.1 = value,
            None => configs.push((c.name.to_string(), value)),
        }
    }
    // Kafka's LogConfig.validate, as for an alteration: every unknown name before any value,
    // then the values in definition order, then the rules between values.
    let all: std::collections::BTreeMap<String, String> = configs.iter().cloned().collect();
    validate_topic_configs(cfg.release, &all, None)
        .map_err(|m| ApiError::new(errors::INVALID_CONFIG, m))?;
    // Kafka's translateCreationConfigs puts them in a `new HashMap<>()`: its ConfigRecords
    // come in that map's order.
    crate::common::java::java_hash_map_order(
        &mut configs,
        crate::common::java::Built::Default,
        |(k, _)| k.as_str(),
    );
    let assignments = assign(image, cfg, shared.placer, rng, t)?;
    // The controller mutation quota, once the topic is known to be valid (Kafka's order;
    // validate_only spends it too).
    quota.apply(u32::try_from(assignments.len()).unwrap_or(u32::MAX))?;
    // A random id is unique in practice; one already taken would make every standby refuse
    // the TopicRecord, so it is drawn again.
    let mut topic_id = rng.uuid();
    while image.topics.contains_key(&topic_id) || planned.iter().any(|(_, id)| *id == topic_id) {
        topic_id = rng.uuid();
    }
    let mut records = Vec::with_capacity(2 + configs.len() + assignments.len());
    records.push(RecordOut::new(
        MetadataRecord::Topic(TopicRecord {
            name: name.clone(),
            topic_id,
            ..Default::default()
        }),
        0,
    ));
    for (k, v) in &configs {
        records.push(RecordOut::new(
            MetadataRecord::Config(ConfigRecord {
                resource_type: crate::metadata::image::resource::TOPIC,
                resource_name: name.clone(),
                name: k.clone(),
                value: Some(v.clone()),
                ..Default::default()
            }),
            0,
        ));
    }
    // Kafka 4.1 follows a min.insync.replicas ConfigRecord with a ClearElrRecord of its topic
    // when ELR is on (the ELRs were chosen against the old value), new topics included.
    if crate::controller::features::elr_enabled(image)
        && configs
            .iter()
            .any(|(k, _)| k.as_str() == MIN_INSYNC_REPLICAS)
    {
        records.push(RecordOut::new(
            MetadataRecord::ClearElr(ClearElrRecord {
                topic_name: name.clone(),
                ..Default::default()
            }),
            0,
        ));
    }
    let replication_factor = assignments.first().map_or(0, |(r, _)| r.len() as i16);
    let partitions = assignments.len();
    for (partition_id, (replicas, isr)) in assignments.into_iter().enumerate() {
        records.push(new_partition_record(
            image,
            topic_id,
            partition_id as i32,
            replicas,
            isr,
        ));
    }
    // Kafka's resolveEffectiveTopicConfig: the topic's own values over the broker's.
    let effective = shared
        .broker_configs
        .iter()
        .map(|c| match topic_value(&configs, c.name.as_str()) {
            Some(v) => c
                .clone()
                .with_value(Some(StrBytes::from_string(v.to_string())))
                .with_config_source(source::TOPIC_CONFIG),
            None => c.clone(),
        })
        .collect();
    // Kafka's schema defaults ErrorMessage to null; the generated default here is "".
    let result = CreatableTopicResult::default()
        .with_error_message(None)
        .with_name(t.name.clone())
        .with_topic_id(topic_id)
        .with_num_partitions(partitions as i32)
        .with_replication_factor(replication_factor)
        .with_configs(Some(effective));
    Ok((result, records, topic_id))
}

/// Kafka's `validateManualPartitionAssignment`: the replicas are registered brokers, each
/// once, and as many as `replication_factor` when it is known.
pub(super) fn validate_manual_assignment(
    image: &MetadataImage,
    replicas: &[i32],
    replication_factor: Option<usize>,
) -> Result<(), ApiError> {
    let bad = |m: String| ApiError::new(errors::INVALID_REPLICA_ASSIGNMENT, m);
    if replicas.is_empty() {
        return Err(bad(
            "The manual partition assignment includes an empty replica list.".into(),
        ));
    }
    let mut sorted = replicas.to_vec();
    sorted.sort_unstable();
    for (i, id) in sorted.iter().enumerate() {
        if !image.brokers.contains_key(id) {
            return Err(bad(format!(
                "The manual partition assignment includes broker {id}, but no such broker is \
                 registered."
            )));
        }
        if i > 0 && sorted[i - 1] == *id {
            return Err(bad(format!(
                "The manual partition assignment includes the broker {id} more than once."
            )));
        }
    }
    match replication_factor {
        Some(rf) if rf != replicas.len() => Err(bad(format!(
            "The manual partition assignment includes a partition with {} replica(s), but this \
             is not consistent with previous partitions, which have {rf} replica(s).",
            replicas.len()
        ))),
        _ => Ok(()),
    }
}

/// A new partition's record (Kafka's `buildPartitionRegistration(...).toRecord`): the
/// leader is the first of the ISR; each replica in its broker's only directory where the
/// metadata.version records directories.
pub(super) fn new_partition_record(
    image: &MetadataImage,
    topic_id: Uuid,
    partition_id: i32,
    replicas: Vec<i32>,
    isr: Vec<i32>,
) -> RecordOut {
    let level = image.metadata_version().unwrap_or(1);
    let directories = if level >= mv::DIRECTORY_ASSIGNMENT {
        replicas.iter().map(|r| image.default_dir(*r)).collect()
    } else {
        Vec::new()
    };
    RecordOut::new(
        MetadataRecord::Partition(PartitionRecord {
            partition_id,
            topic_id,
            leader: isr.first().copied().unwrap_or(-1),
            replicas,
            isr,
            removing_replicas: Vec::new(),
            adding_replicas: Vec::new(),
            leader_recovery_state: 0,
            leader_epoch: 0,
            partition_epoch: 0,
            directories,
            eligible_leader_replicas: None,
            last_known_elr: None,
            ..Default::default()
        }),
        partition_record_version(image),
    )
}

/// The ISR a new partition starts with: its active replicas, in replica order.
pub(super) fn active_replicas(image: &MetadataImage, replicas: &[i32]) -> Vec<i32> {
    replicas
        .iter()
        .copied()
        .filter(|r| image.is_active_broker(*r))
        .collect()
}

/// A partition's (replicas, ISR).
type Assignment = (Vec<i32>, Vec<i32>);

/// (replicas, ISR) of every partition: the manual assignment checked, or placement.
fn assign(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    placer: &Placer,
    rng: &mut Rng,
    t: &CreatableTopic,
) -> Result<Vec<Assignment>, ApiError> {
    let bad = |m: String| ApiError::new(errors::INVALID_REPLICA_ASSIGNMENT, m);
    if !t.assignments.is_empty() {
        if t.replication_factor != -1 {
            return Err(ApiError::new(
                errors::INVALID_REQUEST,
                "A manual partition assignment was specified, but replication factor was not \
                 set to -1.",
            ));
        }
        if t.num_partitions != -1 {
            return Err(ApiError::new(
                errors::INVALID_REQUEST,
                "A manual partition assignment was specified, but numPartitions was not set to \
                 -1.",
            ));
        }
        let mut by_index: std::collections::BTreeMap<i32, (Vec<i32>, Vec<i32>)> =
            std::collections::BTreeMap::new();
        let mut rf: Option<usize> = None;
        for a in &t.assignments {
            if by_index.contains_key(&a.partition_index) {
                return Err(bad(format!(
                    "Found multiple manual partition assignments for partition {}",
                    a.partition_index
                )));
            }
            let replicas: Vec<i32> = a.broker_ids.iter().map(|b| b.0).collect();
            validate_manual_assignment(image, &replicas, rf)?;
            rf.get_or_insert(replicas.len());
            let isr = active_replicas(image, &replicas);
            if isr.is_empty() {
                return Err(bad(format!(
                    "All brokers specified in the manual partition assignment for partition {} \
                     are fenced or in controlled shutdown.",
                    a.partition_index
                )));
            }
            by_index.insert(a.partition_index, (replicas, isr));
        }
        for i in 0..by_index.len() as i32 {
            if !by_index.contains_key(&i) {
                return Err(bad(
                    "partitions should be a consecutive 0-based integer sequence".into(),
                ));
            }
        }
        return Ok(by_index.into_values().collect());
    }
    if t.replication_factor < -1 || t.replication_factor == 0 {
        return Err(ApiError::new(
            errors::INVALID_REPLICATION_FACTOR,
            "Replication factor must be larger than 0, or -1 to use the default value.",
        ));
    }
    if t.num_partitions < -1 || t.num_partitions == 0 {
        return Err(ApiError::new(
            errors::INVALID_PARTITIONS,
            "Number of partitions was set to an invalid non-positive value.",
        ));
    }
    let rf = if t.replication_factor == -1 {
        cfg.default_replication_factor
    } else {
        t.replication_factor
    };
    let partitions = if t.num_partitions == -1 {
        cfg.num_partitions
    } else {
        t.num_partitions
    };
    let unable = |m: String| {
        ApiError::new(
            errors::INVALID_REPLICATION_FACTOR,
            format!("Unable to replicate the partition {rf} time(s): {m}"),
        )
    };
    let placed = placer
        .place(partitions, rf, rng, cfg.release)
        .map_err(unable)?;
    placed
        .into_iter()
        .map(|replicas| {
            let isr = active_replicas(image, &replicas);
            if isr.is_empty() {
                return Err(unable(
                    "All brokers are currently fenced or in controlled shutdown.".into(),
                ));
            }
            Ok((replicas, isr))
        })
        .collect()
}
