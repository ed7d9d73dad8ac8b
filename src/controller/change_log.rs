//! The INFO lines Kafka's controller managers log as they replay each accepted change
//! (`ReplicationControlManager`, `ClusterControlManager`, `FeatureControlManager`,
//! `ConfigurationControlManager`, `AclControlManager`, `ScramControlManager`,
//! `DelegationTokenControlManager`, `ClientQuotaControlManager`, `ProducerIdControlManager`),
//! with Kafka's texts, so an incident reads from ferrokraft's log as from Kafka's.
//!
//! ```text
//!   committed batch ──▶ replay_committed ──(record, image before it)──▶ replayed() ──▶ INFO
//! ```
//!
//! Each controller logs a record once, when it is committed (Kafka's active controller logs
//! it when it replays the record on append, before the commit; the standbys on commit). A
//! snapshot loaded at start is summarised, not logged record by record (Kafka logs each).
//! A configuration value is `[hidden]` where Kafka's `KafkaConfigSchema.isSensitive` hides
//! it: a password, or a key without a known definition.

use crate::common::release::MetadataVersion;
use crate::common::release::Release;
use crate::common::release::METADATA_VERSION_FEATURE;
use crate::common::uuid::{uuid_to_kafka_string, KafkaUuid};
use crate::controller::configs::topic_configs::topic_config;
use crate::metadata::image::resource::{BROKER, TOPIC};
use crate::metadata::image::{
    config_resource_type_name, scram_mechanism_name, MetadataImage, PartitionRegistration,
};
use crate::metadata::records::{ConfigRecord, MetadataRecord, PartitionRecord};
use std::fmt;
use uuid::Uuid;

/// Logs Kafka's INFO line for `record`, about to be replayed onto `image`.
pub(super) fn replayed(image: &MetadataImage, record: &MetadataRecord) {
    if !tracing::enabled!(tracing::Level::INFO) {
        return;
    }
    match record {
        MetadataRecord::Topic(r) => tracing::info!(
            "Replayed TopicRecord for topic {} with topic ID {}.",
            r.name,
            uuid_to_kafka_string(&r.topic_id)
        ),
        MetadataRecord::Partition(r) => {
            let name = topic_name(image, &r.topic_id);
            let previous = image
                .topics
                .get(&r.topic_id)
                .and_then(|t| t.partitions.get(&r.partition_id));
            // Written straight into the line: this runs once per partition created, and
            // building the texts first cost more than the replay itself (#41).
            let registration = RecordRegistration(r);
            let (partition, id) = (r.partition_id, KafkaUuid(&r.topic_id));
            let Some(previous) = previous else {
                tracing::info!(
                    "Replayed PartitionRecord for new partition {name}-{partition} with topic \
                     ID {id} and {registration}."
                );
                return;
            };
            // Kafka logs an existing partition only when the record changes it, and then
            // the change itself (maybeLogPartitionChange).
            let next = PartitionRegistration::from_record(r);
            if next.as_ref().is_ok_and(|p| p == &**previous) {
                return;
            }
            tracing::info!(
                "Replayed PartitionRecord for existing partition {name}-{partition} with topic \
                 ID {id} and {registration}."
            );
            if let Ok(next) = next {
                log_partition_change(name, partition, &r.topic_id, previous, &next);
            }
        }
        MetadataRecord::PartitionChange(r) => {
            let name = topic_name(image, &r.topic_id);
            let previous = image
                .topics
                .get(&r.topic_id)
                .and_then(|t| t.partitions.get(&r.partition_id));
            // The change's own line is needed at INFO only after an unclean election (the
            // new state RECOVERING); the merged registration is built only then, or at DEBUG.
            if let Some(previous) = previous {
                let recovering = match r.leader_recovery_state {
                    NO_RECOVERY_STATE_CHANGE => previous.leader_recovery_state == RECOVERING,
                    state => state == RECOVERING,
                };
                if recovering || tracing::enabled!(tracing::Level::DEBUG) {
                    if let Ok(next) = previous.merge(r.clone()) {
                        log_partition_change(name, r.partition_id, &r.topic_id, previous, &next);
                    }
                }
            }
            // Kafka 4.1: at INFO when the record touches a reassignment, else at DEBUG.
            if r.adding_replicas.is_some() || r.removing_replicas.is_some() {
                tracing::info!(
                    "Replayed partition assignment change {} for topic {name}",
                    record.to_kafka_string()
                );
            } else if tracing::enabled!(tracing::Level::DEBUG) {
                tracing::debug!(
                    "Replayed partition change {} for topic {name}",
                    record.to_kafka_string()
                );
            }
        }
        MetadataRecord::RemoveTopic(r) => {
            let name = topic_name(image, &r.topic_id);
            tracing::info!(
                "Replayed RemoveTopicRecord for topic {name} with ID {}.",
                uuid_to_kafka_string(&r.topic_id)
            );
        }
        MetadataRecord::RegisterBroker(r) => {
            let text = record.to_kafka_string();
            match image.brokers.get(&r.broker_id) {
                None => tracing::info!(
                    "Replayed initial RegisterBrokerRecord for broker {}: {text}",
                    r.broker_id
                ),
                Some(prev) if prev.incarnation_id == r.incarnation_id => tracing::info!(
                    "Replayed RegisterBrokerRecord modifying the registration for broker {}: \
                     {text}",
                    r.broker_id
                ),
                Some(_) => tracing::info!(
                    "Replayed RegisterBrokerRecord establishing a new incarnation of broker \
                     {}: {text}",
                    r.broker_id
                ),
            }
        }
        MetadataRecord::UnregisterBroker(_) => {
            tracing::info!("Replayed {}", record.to_kafka_string())
        }
        MetadataRecord::FenceBroker(r) => modifying(record, r.id),
        MetadataRecord::UnfenceBroker(r) => modifying(record, r.id),
        MetadataRecord::BrokerRegistrationChange(r) => modifying(record, r.broker_id),
        MetadataRecord::RegisterController(_) => tracing::info!(
            "Replayed RegisterControllerRecord containing {}.",
            record.to_kafka_string()
        ),
        MetadataRecord::FeatureLevel(r) if r.name == METADATA_VERSION_FEATURE => {
            let version = MetadataVersion::from_level(r.feature_level)
                .map_or_else(|| r.feature_level.to_string(), |v| v.name.to_string());
            tracing::info!("Replayed a FeatureLevelRecord setting metadata.version to {version}")
        }
        MetadataRecord::FeatureLevel(r) if r.feature_level == 0 => {
            tracing::info!("Replayed a FeatureLevelRecord removing feature {}", r.name)
        }
        MetadataRecord::FeatureLevel(r) => tracing::info!(
            "Replayed a FeatureLevelRecord setting feature {} to {}",
            r.name,
            r.feature_level
        ),
        MetadataRecord::Config(r) => {
            let value = if is_sensitive(r) {
                "[hidden]".to_string()
            } else {
                r.value.clone().unwrap_or_else(|| "null".to_string())
            };
            tracing::info!(
                "Replayed ConfigRecord for {} which set configuration {} to {value}",
                config_resource_text(r.resource_type, &r.resource_name),
                r.name
            );
        }
        MetadataRecord::ClientQuota(r) => {
            let entity = r
                .entity
                .iter()
                .map(|e| {
                    format!(
                        "{}={}",
                        e.entity_type,
                        e.entity_name.as_deref().unwrap_or("")
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            if r.remove {
                tracing::info!(
                    "Replayed ClientQuotaRecord for ClientQuotaEntity({entity}) removing {}.",
                    r.key
                );
            } else {
                tracing::info!(
                    "Replayed ClientQuotaRecord for ClientQuotaEntity({entity}) setting {} to \
                     {}.",
                    r.key,
                    r.value
                );
            }
        }
        MetadataRecord::AccessControlEntry(r) => tracing::info!(
            "Replayed AccessControlEntryRecord for {}, setting {}",
            uuid_to_kafka_string(&r.id),
            record.to_kafka_string()
        ),
        MetadataRecord::RemoveAccessControlEntry(r) => {
            let removed = image
                .acls
                .get(&r.id)
                .map(|acl| MetadataRecord::AccessControlEntry(acl.clone()).to_kafka_string())
                .unwrap_or_else(|| "<unknown ACL>".to_string());
            tracing::info!(
                "Replayed RemoveAccessControlEntryRecord for {}, removing {removed}",
                uuid_to_kafka_string(&r.id)
            );
        }
        MetadataRecord::UserScramCredential(r) => {
            let mechanism = scram_mechanism_name(r.mechanism).replace('-', "_");
            if image.scram.contains_key(&(r.mechanism, r.name.clone())) {
                tracing::info!(
                    "Replayed UserScramCredentialRecord modifying existing entry for {} with \
                     mechanism {mechanism}.",
                    r.name
                );
            } else {
                tracing::info!(
                    "Replayed UserScramCredentialRecord creating new entry for {} with \
                     mechanism {mechanism}.",
                    r.name
                );
            }
        }
        MetadataRecord::RemoveUserScramCredential(r) => tracing::info!(
            "Replayed RemoveUserScramCredentialRecord for {} with mechanism {}.",
            r.name,
            scram_mechanism_name(r.mechanism).replace('-', "_")
        ),
        MetadataRecord::DelegationToken(r) => {
            tracing::info!("Replayed DelegationTokenRecord for {}.", r.token_id)
        }
        MetadataRecord::RemoveDelegationToken(r) => {
            tracing::info!("Replayed RemoveDelegationTokenRecord for {}.", r.token_id)
        }
        MetadataRecord::ProducerIds(_) => {
            tracing::info!("Replaying ProducerIdsRecord {}", record.to_kafka_string())
        }
        _ => {}
    }
}

/// A topic's name for a log line.
fn topic_name<'a>(image: &'a MetadataImage, id: &uuid::Uuid) -> &'a str {
    image
        .topics
        .get(id)
        .map_or("<unknown topic>", |t| t.name.as_str())
}

/// LeaderRecoveryState RECOVERING: the leader was elected uncleanly.
const RECOVERING: i8 = 1;
/// PartitionChangeRecord.leader_recovery_state: unchanged.
const NO_RECOVERY_STATE_CHANGE: i8 = -1;

/// Kafka's `PartitionRegistration.maybeLogPartitionChange`: a change whose new state is
/// RECOVERING (an unclean election) at INFO, any other at DEBUG, as `diff` words it.
fn log_partition_change(
    name: &str,
    partition: i32,
    topic_id: &Uuid,
    previous: &PartitionRegistration,
    next: &PartitionRegistration,
) {
    let id = KafkaUuid(topic_id);
    if next.leader_recovery_state == RECOVERING {
        tracing::info!(
            "UNCLEAN partition change for {name}-{partition} with topic ID {id}: {}",
            PartitionDiff(previous, next)
        );
    } else if tracing::enabled!(tracing::Level::DEBUG) {
        tracing::debug!(
            "partition change for {name}-{partition} with topic ID {id}: {}",
            PartitionDiff(previous, next)
        );
    }
}

/// Kafka's `PartitionRegistration.diff(prev)`: each field that changed, `name: old -> new`,
/// in Kafka's order.
struct PartitionDiff<'a>(&'a PartitionRegistration, &'a PartitionRegistration);

impl fmt::Display for PartitionDiff<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (prev, next) = (self.0, self.1);
        let mut first = true;
        let mut field = |f: &mut fmt::Formatter<'_>, name: &str| {
            let prefix = if first { "" } else { ", " };
            first = false;
            write!(f, "{prefix}{name}: ")
        };
        let lists = [
            ("replicas", prev.replicas(), next.replicas()),
            ("isr", prev.isr(), next.isr()),
            (
                "removingReplicas",
                prev.removing_replicas(),
                next.removing_replicas(),
            ),
            (
                "addingReplicas",
                prev.adding_replicas(),
                next.adding_replicas(),
            ),
        ];
        let (before, after) = (prev.directories(), next.directories());
        for (i, (name, old, new)) in lists.iter().enumerate() {
            if old != new {
                field(f, name)?;
                write_ids(f, old)?;
                f.write_str(" -> ")?;
                write_ids(f, new)?;
            }
            // Kafka's order: replicas, directories, isr, …
            if i == 0 && before != after {
                field(f, "directories")?;
                write_directories(f, &before, before.len())?;
                f.write_str(" -> ")?;
                write_directories(f, &after, after.len())?;
            }
        }
        let scalars = [
            ("leader", prev.leader, next.leader),
            (
                "leaderRecoveryState",
                i32::from(prev.leader_recovery_state),
                i32::from(next.leader_recovery_state),
            ),
            ("leaderEpoch", prev.leader_epoch, next.leader_epoch),
        ];
        for (name, old, new) in scalars {
            if old != new {
                field(f, name)?;
                if name == "leaderRecoveryState" {
                    write!(
                        f,
                        "{} -> {}",
                        recovery_state_name(prev.leader_recovery_state),
                        recovery_state_name(next.leader_recovery_state)
                    )?;
                } else {
                    write!(f, "{old} -> {new}")?;
                }
            }
        }
        for (name, old, new) in [
            ("elr", prev.elr(), next.elr()),
            ("lastKnownElr", prev.last_known_elr(), next.last_known_elr()),
        ] {
            if old != new {
                field(f, name)?;
                write_ids(f, old)?;
                f.write_str(" -> ")?;
                write_ids(f, new)?;
            }
        }
        if prev.partition_epoch != next.partition_epoch {
            field(f, "partitionEpoch")?;
            write!(f, "{} -> {}", prev.partition_epoch, next.partition_epoch)?;
        }
        Ok(())
    }
}

/// ClusterControlManager's line for a change to an existing registration.
fn modifying(record: &MetadataRecord, broker_id: i32) {
    let text = record.to_kafka_string();
    tracing::info!(
        "Replayed {} modifying the registration for broker {broker_id}: {text}",
        record.name()
    );
}

/// Kafka's `PartitionRegistration.toString`.
pub(crate) fn registration_text(p: &PartitionRegistration) -> String {
    let mut text = String::new();
    // Writing to a String cannot fail.
    let _ = write_registration(
        &mut text,
        &Lists {
            replicas: p.replicas(),
            directories: Directories::Listed(&p.directories()),
            isr: p.isr(),
            removing_replicas: p.removing_replicas(),
            adding_replicas: p.adding_replicas(),
            elr: p.elr(),
            last_known_elr: p.last_known_elr(),
            leader: p.leader,
            leader_recovery_state: p.leader_recovery_state,
            leader_epoch: p.leader_epoch,
            partition_epoch: p.partition_epoch,
        },
    );
    text
}

/// A PartitionRecord as Kafka's `PartitionRegistration.toString` prints the registration it
/// makes, formatted as it is written; a record the registration refuses reads `<invalid: …>`.
struct RecordRegistration<'a>(&'a PartitionRecord);

impl fmt::Display for RecordRegistration<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.0;
        let shaped = r.directories.is_empty() || r.directories.len() == r.replicas.len();
        if !shaped || !matches!(r.leader_recovery_state, 0 | 1) {
            // The registration's own error, built the slow way: never on a valid record.
            return match PartitionRegistration::from_record(r) {
                Ok(p) => f.write_str(&registration_text(&p)),
                Err(e) => write!(f, "<invalid: {e}>"),
            };
        }
        // As PartitionRegistration::from_record: no directory named reads as a migrating
        // (nil) directory for every replica.
        let directories = if r.directories.iter().all(Uuid::is_nil) {
            Directories::Nil(r.replicas.len())
        } else {
            Directories::Listed(&r.directories)
        };
        write_registration(
            f,
            &Lists {
                replicas: &r.replicas,
                directories,
                isr: &r.isr,
                removing_replicas: &r.removing_replicas,
                adding_replicas: &r.adding_replicas,
                elr: r.eligible_leader_replicas.as_deref().unwrap_or_default(),
                last_known_elr: r.last_known_elr.as_deref().unwrap_or_default(),
                leader: r.leader,
                leader_recovery_state: r.leader_recovery_state,
                leader_epoch: r.leader_epoch,
                partition_epoch: r.partition_epoch,
            },
        )
    }
}

/// A registration's directories: the ones listed, or a nil one for each of `n` replicas.
enum Directories<'a> {
    Listed(&'a [Uuid]),
    Nil(usize),
}

/// What `PartitionRegistration.toString` prints, by reference.
struct Lists<'a> {
    replicas: &'a [i32],
    directories: Directories<'a>,
    isr: &'a [i32],
    removing_replicas: &'a [i32],
    adding_replicas: &'a [i32],
    elr: &'a [i32],
    last_known_elr: &'a [i32],
    leader: i32,
    leader_recovery_state: i8,
    leader_epoch: i32,
    partition_epoch: i32,
}

/// Writes Kafka's `PartitionRegistration.toString` of `p`.
fn write_registration(out: &mut impl fmt::Write, p: &Lists<'_>) -> fmt::Result {
    let ids = write_ids;
    out.write_str("PartitionRegistration(replicas=")?;
    ids(out, p.replicas)?;
    out.write_str(", directories=")?;
    match p.directories {
        Directories::Listed(d) => write_directories(out, d, d.len())?,
        Directories::Nil(n) => write_directories(out, &[], n)?,
    }
    out.write_str(", isr=")?;
    ids(out, p.isr)?;
    out.write_str(", removingReplicas=")?;
    ids(out, p.removing_replicas)?;
    out.write_str(", addingReplicas=")?;
    ids(out, p.adding_replicas)?;
    out.write_str(", elr=")?;
    ids(out, p.elr)?;
    out.write_str(", lastKnownElr=")?;
    ids(out, p.last_known_elr)?;
    let recovery = recovery_state_name(p.leader_recovery_state);
    let mut number = itoa::Buffer::new();
    out.write_str(", leader=")?;
    out.write_str(number.format(p.leader))?;
    out.write_str(", leaderRecoveryState=")?;
    out.write_str(recovery)?;
    out.write_str(", leaderEpoch=")?;
    out.write_str(number.format(p.leader_epoch))?;
    out.write_str(", partitionEpoch=")?;
    out.write_str(number.format(p.partition_epoch))?;
    out.write_char(')')
}

/// Java's `Arrays.toString` of broker ids: `[1, 2, 3]`.
fn write_ids(out: &mut dyn fmt::Write, ids: &[i32]) -> fmt::Result {
    out.write_char('[')?;
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            out.write_str(", ")?;
        }
        out.write_str(itoa::Buffer::new().format(*id))?;
    }
    out.write_char(']')
}

/// `count` directory ids as Java's `Arrays.toString` prints Kafka Uuids; past the end of
/// `listed`, the nil ("migrating") id.
fn write_directories(out: &mut dyn fmt::Write, listed: &[Uuid], count: usize) -> fmt::Result {
    let nil = Uuid::nil();
    out.write_char('[')?;
    for i in 0..count {
        if i > 0 {
            out.write_str(", ")?;
        }
        write!(out, "{}", KafkaUuid(listed.get(i).unwrap_or(&nil)))?;
    }
    out.write_char(']')
}

/// Kafka's `LeaderRecoveryState` name.
fn recovery_state_name(state: i8) -> &'static str {
    if state == RECOVERING {
        "RECOVERING"
    } else {
        "RECOVERED"
    }
}

/// Kafka's `ConfigResource.toString`.
fn config_resource_text(resource_type: i8, name: &str) -> String {
    format!(
        "ConfigResource(type={}, name='{name}')",
        config_resource_type_name(resource_type)
    )
}

/// Kafka's `KafkaConfigSchema.isSensitive` on a controller, whose schema holds the broker and
/// topic definitions only: a resource type without definitions, an unknown key or a password
/// is sensitive.
fn is_sensitive(r: &ConfigRecord) -> bool {
    match r.resource_type {
        // The log has no release at hand; the keys 4.4 adds hold no secrets, so the newest
        // table is used whatever the release presented.
        TOPIC => topic_config(Release::NEWEST, &r.name).is_none(),
        BROKER => broker_key_is_password(&r.name),
        _ => true,
    }
}

/// Broker keys of Kafka's PASSWORD type, also under a `listener.name.<l>.` prefix.
fn broker_key_is_password(name: &str) -> bool {
    let key = name
        .strip_prefix("listener.name.")
        .and_then(|rest| rest.split_once('.'))
        .map_or(name, |(_, key)| key);
    let key = key
        .split_once(".sasl.jaas.config")
        .map_or(key, |_| "sasl.jaas.config");
    key.ends_with(".password")
        || matches!(
            key,
            "sasl.jaas.config"
                | "ssl.keystore.key"
                | "ssl.keystore.certificate.chain"
                | "ssl.truststore.certificates"
                | "delegation.token.secret.key"
                | "delegation.token.master.key"
                | "password.encoder.secret"
                | "password.encoder.old.secret"
        )
}

#[cfg(test)]
#[path = "change_log_tests.rs"]
mod tests;
