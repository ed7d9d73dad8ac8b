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
            match previous {
                None => tracing::info!(
                    "Replayed PartitionRecord for new partition {name}-{partition} with topic \
                     ID {id} and {registration}."
                ),
                // Kafka logs an existing partition only when the record changes it.
                Some(previous)
                    if PartitionRegistration::from_record(r).is_ok_and(|p| p == **previous) => {}
                Some(_) => tracing::info!(
                    "Replayed PartitionRecord for existing partition {name}-{partition} with \
                     topic ID {id} and {registration}."
                ),
            }
        }
        MetadataRecord::PartitionChange(r)
            if r.replicas.is_some()
                || r.adding_replicas.is_some()
                || r.removing_replicas.is_some() =>
        {
            let name = topic_name(image, &r.topic_id);
            tracing::info!(
                "Replayed partition assignment change {} for topic {name}",
                record.to_kafka_string()
            );
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
    let ids = |out: &mut dyn fmt::Write, v: &[i32]| -> fmt::Result {
        out.write_char('[')?;
        for (i, id) in v.iter().enumerate() {
            if i > 0 {
                out.write_str(", ")?;
            }
            out.write_str(itoa::Buffer::new().format(*id))?;
        }
        out.write_char(']')
    };
    out.write_str("PartitionRegistration(replicas=")?;
    ids(out, p.replicas)?;
    out.write_str(", directories=[")?;
    let nil = Uuid::nil();
    let (listed, count) = match p.directories {
        Directories::Listed(d) => (d, d.len()),
        Directories::Nil(n) => (&[][..], n),
    };
    for i in 0..count {
        if i > 0 {
            out.write_str(", ")?;
        }
        write!(out, "{}", KafkaUuid(listed.get(i).unwrap_or(&nil)))?;
    }
    out.write_str("], isr=")?;
    ids(out, p.isr)?;
    out.write_str(", removingReplicas=")?;
    ids(out, p.removing_replicas)?;
    out.write_str(", addingReplicas=")?;
    ids(out, p.adding_replicas)?;
    out.write_str(", elr=")?;
    ids(out, p.elr)?;
    out.write_str(", lastKnownElr=")?;
    ids(out, p.last_known_elr)?;
    let recovery = if p.leader_recovery_state == 1 {
        "RECOVERING"
    } else {
        "RECOVERED"
    };
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
mod tests {
    use super::*;
    use crate::metadata::image::PartitionParts;

    fn config(resource_type: i8, name: &str) -> ConfigRecord {
        ConfigRecord {
            resource_type,
            resource_name: String::new(),
            name: name.to_string(),
            value: Some("v".to_string()),
            ..Default::default()
        }
    }

    #[test]
    fn secrets_and_unknown_keys_are_hidden_as_kafka_hides_them() {
        assert!(!is_sensitive(&config(TOPIC, "retention.ms")));
        assert!(is_sensitive(&config(TOPIC, "no.such.key")));
        assert!(!is_sensitive(&config(BROKER, "log.retention.ms")));
        assert!(is_sensitive(&config(BROKER, "ssl.keystore.password")));
        assert!(is_sensitive(&config(
            BROKER,
            "listener.name.internal.ssl.key.password"
        )));
        assert!(is_sensitive(&config(
            BROKER,
            "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config"
        )));
        assert!(is_sensitive(&config(
            crate::metadata::image::resource::GROUP,
            "consumer.session.timeout.ms"
        )));
    }

    #[test]
    fn registrations_read_as_kafka_prints_them() {
        let p = PartitionRegistration::from_parts(PartitionParts {
            replicas: vec![1, 2],
            directories: vec![uuid::Uuid::nil(); 2],
            isr: vec![1, 2],
            removing_replicas: vec![],
            adding_replicas: vec![],
            leader: 1,
            leader_recovery_state: 0,
            leader_epoch: 0,
            partition_epoch: 0,
            elr: vec![],
            last_known_elr: vec![],
        });
        assert_eq!(
            registration_text(&p),
            "PartitionRegistration(replicas=[1, 2], directories=[AAAAAAAAAAAAAAAAAAAAAA, \
             AAAAAAAAAAAAAAAAAAAAAA], isr=[1, 2], removingReplicas=[], addingReplicas=[], \
             elr=[], lastKnownElr=[], leader=1, leaderRecoveryState=RECOVERED, leaderEpoch=0, \
             partitionEpoch=0)"
        );
    }

    /// The line written for each replayed PartitionRecord formats the record as the
    /// registration it makes prints, for every shape of record, and names what is wrong
    /// with one the registration refuses.
    #[test]
    fn a_record_reads_as_the_registration_it_makes() {
        let dir = uuid::Uuid::from_u128(0x7c81_6805_a9e8_cb63_55e0_8e45_e098_86f3);
        let base = PartitionRecord {
            partition_id: 3,
            topic_id: uuid::Uuid::from_u128(7),
            replicas: vec![1, 2, 3],
            isr: vec![1, 3],
            removing_replicas: vec![3],
            adding_replicas: vec![2],
            leader: 1,
            leader_recovery_state: 1,
            leader_epoch: 4,
            partition_epoch: 9,
            ..Default::default()
        };
        let shapes = [
            base.clone(),
            PartitionRecord {
                directories: vec![dir, uuid::Uuid::nil(), dir],
                eligible_leader_replicas: Some(vec![2]),
                last_known_elr: Some(vec![]),
                ..base.clone()
            },
            PartitionRecord {
                directories: vec![uuid::Uuid::nil(); 3],
                eligible_leader_replicas: Some(vec![]),
                last_known_elr: Some(vec![5, 6]),
                leader_recovery_state: 0,
                ..base.clone()
            },
            PartitionRecord {
                replicas: vec![],
                isr: vec![],
                removing_replicas: vec![],
                adding_replicas: vec![],
                leader: -1,
                ..base.clone()
            },
        ];
        for r in shapes {
            let made = PartitionRegistration::from_record(&r).unwrap();
            assert_eq!(RecordRegistration(&r).to_string(), registration_text(&made));
        }
        assert!(RecordRegistration(&PartitionRecord {
            directories: vec![dir],
            ..base.clone()
        })
        .to_string()
        .starts_with("<invalid: "));
        assert!(RecordRegistration(&PartitionRecord {
            leader_recovery_state: 2,
            ..base
        })
        .to_string()
        .starts_with("<invalid: "));
        assert!(registration_text(
            &PartitionRegistration::from_record(&PartitionRecord {
                replicas: vec![4],
                directories: vec![dir],
                ..Default::default()
            })
            .unwrap()
        )
        .contains("directories=[fIFoBanoy2NV4I5F4JiG8w]"));
    }

    /// As Kafka's `ReplicationControlManager.replay(PartitionRecord)`: a new partition is
    /// logged, a record that changes an existing one is logged as such, and one equal to the
    /// partition it replaces is not logged at all.
    #[test]
    fn an_existing_partition_is_logged_only_when_the_record_changes_it() {
        use crate::metadata::records::TopicRecord;
        let topic_id = uuid::Uuid::from_u128(7);
        let mut image = MetadataImage::new();
        image
            .replay(MetadataRecord::Topic(TopicRecord {
                name: "t".into(),
                topic_id,
                ..Default::default()
            }))
            .unwrap();
        let record = PartitionRecord {
            partition_id: 0,
            topic_id,
            replicas: vec![1],
            isr: vec![1],
            leader: 1,
            ..Default::default()
        };
        let mut replay = |r: &PartitionRecord| {
            let r = MetadataRecord::Partition(r.clone());
            let log = crate::logging::captured(tracing::Level::INFO, || replayed(&image, &r));
            image.replay(r).unwrap();
            log
        };
        assert!(replay(&record).contains("Replayed PartitionRecord for new partition t-0 "));
        assert_eq!(replay(&record), "");
        let changed = PartitionRecord {
            leader_epoch: 1,
            ..record
        };
        assert!(replay(&changed).contains("for existing partition t-0 with topic ID "));
    }
}
