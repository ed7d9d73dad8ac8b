//! Topics, partitions and the brokers under them (Kafka's `ReplicationControlManager`):
//! creation (`create_topics.rs`), ISR changes from partition leaders (`alter_partition.rs`),
//! admin elections and preferred-leader balancing (`elect_leaders.rs`), the partition changes
//! a broker's fencing, unfencing and controlled shutdown cause (here), placement
//! (`placement.rs`) and the election rules (`partition_change.rs`).
//!
//! ```text
//!   heartbeat ─▶ next broker state ─▶ fenced:    PartitionChangeRecords (leaves ISRs) + BRCR fenced
//!                                  ─▶ unfenced:  BRCR unfenced + leaders for leaderless partitions
//!                                  ─▶ shutdown:  BRCR in controlled shutdown + leaves ISRs
//! ```

mod alter_partition;
mod create_partitions;
mod create_topics;
mod delete_topics;
pub mod directories;
pub mod elect_leaders;
pub mod partition_change;
pub mod placement;
pub mod reassignments;

use std::collections::BTreeMap;

use kafka_protocol::messages::{
    AssignReplicasToDirsRequest, AssignReplicasToDirsResponse, BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
};

pub use alter_partition::alter_partition;
pub use create_partitions::create_partitions;
pub use create_topics::{create_topics, usable_brokers};
pub use delete_topics::delete_topics;
pub use elect_leaders::{
    are_partition_leaders_imbalanced, balance_partition_leaders, elect_leaders,
    elect_unclean_leaders,
};
pub use reassignments::{alter_partition_reassignments, list_partition_reassignments};

use super::config::ControllerConfig;
use super::errors::{self, ApiError};
use super::features::{elr_enabled, leader_epoch_bump_on_isr_shrink, partition_record_version};
use super::heartbeats::{BrokerControlState, BrokerHeartbeatManager, HeartbeatAsk};
use super::result::{ControllerResult, RecordOut};
use crate::metadata::image::{mv, MetadataImage, PartitionRegistration, TopicImage};
use crate::metadata::record::MetadataRecord;
use crate::metadata::records::{BrokerRegistrationChangeRecord, PartitionChangeRecord};
use partition_change::{Election, PartitionChangeBuilder, NO_LEADER};

/// Topic config that allows unclean elections.
const UNCLEAN_LEADER_ELECTION: &str = "unclean.leader.election.enable";

/// Whether `topic` allows unclean leader elections (Kafka's
/// `uncleanLeaderElectionEnabledForTopic`: the effective topic config, parsed as Java's
/// `Boolean.parseBoolean`).
pub(crate) fn unclean_election_enabled(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    topic: &str,
) -> bool {
    effective_topic_config(image, cfg, topic, UNCLEAN_LEADER_ELECTION)
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

/// A topic config's effective value as Kafka's `KafkaConfigSchema.resolveEffectiveTopicConfig`
/// finds it: the topic's own, else this controller's dynamic broker config (BROKER
/// "<node id>"), else the cluster default (BROKER ""), else the controller's static
/// configuration (its properties file); `None` for the default. (Both keys resolved here are
/// their own only synonym.)
fn effective_topic_config<'a>(
    image: &'a MetadataImage,
    cfg: &'a ControllerConfig,
    topic: &str,
    key: &str,
) -> Option<&'a str> {
    let get = |resource_type: i8, name: &str| {
        image
            .configs
            .get(&crate::metadata::image::ConfigResource {
                resource_type,
                resource_name: name.to_string(),
            })
            .and_then(|c| c.get(key))
            .map(String::as_str)
    };
    use crate::metadata::image::resource;
    get(resource::TOPIC, topic)
        .or_else(|| get(resource::BROKER, &cfg.node_id.to_string()))
        .or_else(|| get(resource::BROKER, ""))
        .or_else(|| cfg.static_properties.map().get(key).map(|v| v.trim()))
}

/// Topic config (and cluster default) that sets the ISR size ELR tracking keeps.
const MIN_INSYNC_REPLICAS: &str = "min.insync.replicas";

/// Kafka's `getTopicEffectiveMinIsr`: `min.insync.replicas` as the effective topic config
/// resolves it, else the controller's own, capped at the topic's replication factor (that of
/// partition 0).
pub fn effective_min_isr(image: &MetadataImage, cfg: &ControllerConfig, topic: &str) -> usize {
    let configured = effective_topic_config(image, cfg, topic, MIN_INSYNC_REPLICAS)
        .and_then(|v| v.trim().parse::<i32>().ok())
        .unwrap_or(cfg.min_insync_replicas);
    let replication_factor = image
        .topic_by_name(topic)
        .and_then(|t| t.partitions.get(&0))
        .map_or(0, |p| p.replicas().len());
    usize::try_from(configured)
        .unwrap_or(0)
        .min(replication_factor)
}

/// The records of one heartbeat: its reply and where the broker goes.
#[derive(Debug)]
pub struct HeartbeatOutcome {
    /// Records and reply.
    pub result: ControllerResult<BrokerHeartbeatResponse>,
    /// The broker's state after it.
    pub next: BrokerControlState,
}

/// Whether `broker_id` leads any partition.
pub fn leads_partitions(image: &MetadataImage, broker_id: i32) -> bool {
    image.partition_stats.leaders.contains_key(&broker_id)
}

/// Kafka's `processBrokerHeartbeat` (QuorumController and ReplicationControlManager parts).
pub fn process_broker_heartbeat(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    registration_offsets: &BTreeMap<i32, i64>,
    heartbeats: &BrokerHeartbeatManager,
    req: &BrokerHeartbeatRequest,
) -> Result<HeartbeatOutcome, ApiError> {
    let broker_id = req.broker_id.0;
    let Some(&registration_offset) = registration_offsets.get(&broker_id) else {
        return Err(ApiError::new(
            errors::STALE_BROKER_EPOCH,
            format!("Receive a heartbeat from broker {broker_id} before registration"),
        ));
    };
    image.check_broker_epoch(broker_id, req.broker_epoch)?;
    let caught_up = req.current_metadata_offset >= registration_offset;
    let ask = HeartbeatAsk {
        want_fence: req.want_fence,
        want_shut_down: req.want_shut_down,
        caught_up,
    };
    let (current, next) =
        heartbeats.next_state(broker_id, ask, || leads_partitions(image, broker_id));
    let mut records = Vec::new();
    if current != next {
        match next {
            BrokerControlState::Fenced | BrokerControlState::ShutdownNow => {
                // BrokerHeartbeatManager.calculateNextBrokerState's words.
                match current {
                    BrokerControlState::Fenced => tracing::info!(
                        "Fenced broker {broker_id} has requested and been granted an immediate \
                         shutdown."
                    ),
                    BrokerControlState::ControlledShutdown => tracing::info!(
                        "The request from broker {broker_id} to shut down has been granted \
                         since the lowest active offset {} is now greater than the broker's \
                         controlled shutdown offset {}.",
                        heartbeats.lowest_active_offset(),
                        heartbeats
                            .session(broker_id)
                            .and_then(|s| s.controlled_shutdown_offset)
                            .unwrap_or(-1)
                    ),
                    _ if next == BrokerControlState::Fenced => tracing::info!(
                        "Unfenced broker {broker_id} has requested and been granted fencing"
                    ),
                    _ => tracing::info!(
                        "Unfenced broker {broker_id} has requested and been granted an \
                         immediate shutdown."
                    ),
                }
                records = broker_fenced(image, cfg, broker_id);
            }
            BrokerControlState::Unfenced => {
                tracing::info!(
                    "The request from broker {broker_id} to unfence has been granted because it \
                     has caught up with the offset of its register broker record \
                     {registration_offset}."
                );
                records = broker_unfenced(image, cfg, broker_id, req.broker_epoch);
            }
            BrokerControlState::ControlledShutdown => {
                tracing::info!(
                    "Unfenced broker {broker_id} has requested and been granted a controlled \
                     shutdown."
                );
                records = broker_in_controlled_shutdown(image, cfg, broker_id, req.broker_epoch);
            }
        }
    }
    let level = image.metadata_version().unwrap_or(0);
    if level >= mv::DIRECTORY_ASSIGNMENT {
        records.extend(directories::directories_offline(
            image,
            cfg,
            broker_id,
            req.broker_epoch,
            &req.offline_log_dirs,
        ));
    }
    if level >= mv::CORDONED_LOG_DIRS {
        records.extend(directories::directories_cordoned(
            image,
            broker_id,
            req.broker_epoch,
            req.cordoned_log_dirs.as_deref(),
        ));
    }
    let response = BrokerHeartbeatResponse::default()
        .with_is_caught_up(caught_up)
        .with_is_fenced(next.fenced())
        .with_should_shut_down(next.should_shut_down());
    Ok(HeartbeatOutcome {
        result: ControllerResult::of(records, response),
        next,
    })
}

fn registration_change(broker_id: i32, broker_epoch: i64) -> BrokerRegistrationChangeRecord {
    BrokerRegistrationChangeRecord {
        broker_id,
        broker_epoch,
        ..Default::default()
    }
}

/// Kafka's `generateLeaderAndIsrUpdates` over the partitions `select` picks: `remove` leaves
/// their ISRs and may not lead; `add` may lead although its registration is still fenced;
/// `unclean` (a broker that shut down uncleanly) leaves their ISRs and ELRs and may not lead.
fn leader_and_isr_updates(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    remove: i32,
    add: i32,
    unclean: i32,
    topics: impl Fn(&TopicImage) -> bool,
    select: impl Fn(&PartitionRegistration) -> bool,
) -> Vec<RecordOut> {
    let version = partition_record_version(image);
    let bump = leader_epoch_bump_on_isr_shrink(image);
    let acceptable =
        |r: i32| r != remove && r != unclean && (r == add || image.is_active_broker(r));
    let elr = elr_enabled(image);
    let mut out = Vec::new();
    for topic in image.topics.values() {
        if !topics(topic) {
            // The topic filter stands for the partition one (an index kept by replay): debug
            // and simulation builds check that it skips nothing the scan would pick.
            debug_assert!(
                !topic.partitions.values().any(|p| select(p)),
                "topic {} skipped with a selected partition",
                topic.name
            );
            continue;
        }
        // The topic's configs are looked up only for a topic with a selected partition: on a
        // large image most have none, and the lookups cost more than the scan.
        let mut per_topic: Option<(Election, usize)> = None;
        for (id, p) in &topic.partitions {
            if !select(p) {
                continue;
            }
            let (election, min_isr) = *per_topic.get_or_insert_with(|| {
                let election = if unclean_election_enabled(image, cfg, &topic.name) {
                    Election::Unclean
                } else {
                    Election::Online
                };
                (election, effective_min_isr(image, cfg, &topic.name))
            });
            let target: Vec<i32> = p
                .isr()
                .iter()
                .copied()
                .filter(|r| *r != remove && *r != unclean)
                .collect();
            let unclean_replicas = if unclean == NO_LEADER {
                Vec::new()
            } else {
                vec![unclean]
            };
            let accept = leader_acceptor(image, p, &acceptable);
            let record = PartitionChangeBuilder::new(p, topic.id, *id, &accept)
                .election(election)
                .eligible_leader_replicas(elr, min_isr)
                .guard_last_known_leader(cfg.release.guards_last_known_leader())
                .unclean_shutdown_replicas(unclean_replicas)
                .bump_leader_epoch_on_isr_shrink(bump)
                .target_isr(target)
                .build();
            if let Some(r) = record {
                out.push(partition_change(r, version));
            }
        }
    }
    out
}

/// Kafka's `LeaderAcceptor`, which every PartitionChangeBuilder of 4.1.2's
/// ReplicationControlManager is given: a replica may lead when `acceptable` says so and the
/// directory the partition places it in is online on its broker (a broker that re-registered
/// with other directories leads none of the partitions assigned to its old ones). A replica
/// the partition does not hold (Kafka's `directory` would throw) counts as unassigned.
pub(crate) fn leader_acceptor<'a>(
    image: &'a MetadataImage,
    partition: &'a PartitionRegistration,
    acceptable: impl Fn(i32) -> bool + 'a,
) -> impl Fn(i32) -> bool + 'a {
    move |r| {
        acceptable(r) && {
            let dir = partition
                .replicas()
                .iter()
                .position(|x| *x == r)
                .and_then(|i| partition.directory(i))
                .unwrap_or(uuid::Uuid::from_u64_pair(0, 1));
            image.has_online_dir(r, dir)
        }
    }
}

fn partition_change(r: PartitionChangeRecord, version: u16) -> RecordOut {
    RecordOut::new(MetadataRecord::PartitionChange(r), version)
}

/// The partitions whose ISR holds `broker_id` lose it (and its leaderships), as fencing,
/// shutdown and unregistration do.
pub fn broker_removed_from_isrs(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    broker_id: i32,
) -> Vec<RecordOut> {
    leader_and_isr_updates(
        image,
        cfg,
        broker_id,
        NO_LEADER,
        NO_LEADER,
        |t| t.isr_holds(broker_id),
        |p| p.isr().contains(&broker_id),
    )
}

/// Kafka 4.1's `handleBrokerShutdown` for a broker that re-registers after an unclean
/// shutdown with ELR on (`handleBrokerUncleanShutdown`): it may have lost data, so it leaves
/// every ISR, then every ELR, and leads nothing.
pub fn broker_shut_down_uncleanly(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    broker_id: i32,
) -> Vec<RecordOut> {
    let mut out = leader_and_isr_updates(
        image,
        cfg,
        NO_LEADER,
        NO_LEADER,
        broker_id,
        |t| t.isr_holds(broker_id),
        |p| p.isr().contains(&broker_id),
    );
    out.extend(leader_and_isr_updates(
        image,
        cfg,
        NO_LEADER,
        NO_LEADER,
        broker_id,
        |_| true,
        |p| p.elr().contains(&broker_id),
    ));
    out
}

/// Kafka's `handleBrokerFenced`: partition changes first, then the fencing record.
pub fn broker_fenced(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    broker_id: i32,
) -> Vec<RecordOut> {
    let Some(registration) = image.brokers.get(&broker_id) else {
        return Vec::new();
    };
    let mut records = broker_removed_from_isrs(image, cfg, broker_id);
    let mut change = registration_change(broker_id, registration.broker_epoch);
    change.fenced = 1;
    records.push(RecordOut::new(
        MetadataRecord::BrokerRegistrationChange(change),
        0,
    ));
    records
}

/// Kafka's `handleBrokerUnfenced`: the unfencing record first, then leaders for the
/// leaderless partitions this broker can lead.
pub fn broker_unfenced(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    broker_id: i32,
    broker_epoch: i64,
) -> Vec<RecordOut> {
    let mut change = registration_change(broker_id, broker_epoch);
    change.fenced = -1;
    let mut records = vec![RecordOut::new(
        MetadataRecord::BrokerRegistrationChange(change),
        0,
    )];
    // Only leaderless partitions can gain a leader: none, and nothing is visited.
    if image.partition_stats.offline > 0 {
        records.extend(leader_and_isr_updates(
            image,
            cfg,
            NO_LEADER,
            broker_id,
            NO_LEADER,
            |_| true,
            |p| p.leader == NO_LEADER,
        ));
    }
    records
}

/// Kafka's `handleBrokerInControlledShutdown`: the controlled-shutdown record first, then
/// the broker leaves every ISR (so its leaderships move).
pub fn broker_in_controlled_shutdown(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    broker_id: i32,
    broker_epoch: i64,
) -> Vec<RecordOut> {
    let mut records = Vec::new();
    if image
        .brokers
        .get(&broker_id)
        .is_some_and(|b| !b.in_controlled_shutdown)
    {
        let mut change = registration_change(broker_id, broker_epoch);
        change.in_controlled_shutdown = 1;
        records.push(RecordOut::new(
            MetadataRecord::BrokerRegistrationChange(change),
            1,
        ));
    }
    // The image still shows the broker as active; it may not lead from now on.
    records.extend(broker_removed_from_isrs(image, cfg, broker_id));
    records
}

/// Kafka's `handleAssignReplicasToDirs`: records each replica's directory as its broker says.
pub fn assign_replicas_to_dirs(
    image: &MetadataImage,
    _cfg: &ControllerConfig,
    req: &AssignReplicasToDirsRequest,
) -> ControllerResult<AssignReplicasToDirsResponse> {
    use kafka_protocol::messages::assign_replicas_to_dirs_response::{
        DirectoryData, PartitionData, TopicData,
    };
    let broker_id = req.broker_id.0;
    if let Err(e) = image.check_broker_epoch(broker_id, req.broker_epoch) {
        return ControllerResult::response_only(
            AssignReplicasToDirsResponse::default().with_error_code(e.code),
        );
    }
    let version = partition_record_version(image);
    let mut records = Vec::new();
    let mut directories = Vec::new();
    for dir in &req.directories {
        let mut topics = Vec::new();
        for t in &dir.topics {
            let mut partitions = Vec::new();
            for p in &t.partitions {
                let code = match image
                    .topics
                    .get(&t.topic_id)
                    .map(|topic| topic.partitions.get(&p.partition_index))
                {
                    None => errors::UNKNOWN_TOPIC_ID,
                    Some(None) => errors::UNKNOWN_TOPIC_OR_PARTITION,
                    Some(Some(part)) => {
                        match part.replicas().iter().position(|r| *r == broker_id) {
                            None => errors::NOT_LEADER_OR_FOLLOWER,
                            Some(i) => {
                                if part.directories().get(i) != Some(&dir.id) {
                                    let mut dirs = part.directories();
                                    if let Some(d) = dirs.get_mut(i) {
                                        *d = dir.id;
                                    }
                                    records.push(partition_change(
                                        PartitionChangeRecord {
                                            topic_id: t.topic_id,
                                            partition_id: p.partition_index,
                                            leader: crate::metadata::image::NO_LEADER_CHANGE,
                                            leader_recovery_state: -1,
                                            directories: Some(dirs),
                                            ..Default::default()
                                        },
                                        version,
                                    ));
                                }
                                errors::NONE
                            }
                        }
                    }
                };
                partitions.push(
                    PartitionData::default()
                        .with_partition_index(p.partition_index)
                        .with_error_code(code),
                );
            }
            topics.push(
                TopicData::default()
                    .with_topic_id(t.topic_id)
                    .with_partitions(partitions),
            );
        }
        directories.push(DirectoryData::default().with_id(dir.id).with_topics(topics));
    }
    ControllerResult::of(
        records,
        AssignReplicasToDirsResponse::default().with_directories(directories),
    )
}
