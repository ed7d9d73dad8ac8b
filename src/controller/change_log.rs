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
use crate::common::uuid::uuid_to_kafka_string;
use crate::controller::configs::topic_configs::topic_config;
use crate::metadata::image::resource::{BROKER, TOPIC};
use crate::metadata::image::{
    config_resource_type_name, scram_mechanism_name, MetadataImage, PartitionRegistration,
};
use crate::metadata::records::{ConfigRecord, MetadataRecord};

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
            let existing = image
                .topics
                .get(&r.topic_id)
                .is_some_and(|t| t.partitions.contains_key(&r.partition_id));
            let description = format!(
                "{name}-{} with topic ID {}",
                r.partition_id,
                uuid_to_kafka_string(&r.topic_id)
            );
            let registration = PartitionRegistration::from_record(r.clone())
                .map_or_else(|e| format!("<invalid: {e}>"), |p| registration_text(&p));
            if existing {
                tracing::info!(
                    "Replayed PartitionRecord for existing partition {description} and \
                     {registration}."
                );
            } else {
                tracing::info!(
                    "Replayed PartitionRecord for new partition {description} and \
                     {registration}."
                );
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
    let ids = |v: &[i32]| {
        let items: Vec<String> = v.iter().map(i32::to_string).collect();
        format!("[{}]", items.join(", "))
    };
    let dirs: Vec<String> = p.directories().iter().map(uuid_to_kafka_string).collect();
    format!(
        "PartitionRegistration(replicas={}, directories=[{}], isr={}, removingReplicas={}, \
         addingReplicas={}, elr={}, lastKnownElr={}, leader={}, leaderRecoveryState={}, \
         leaderEpoch={}, partitionEpoch={})",
        ids(p.replicas()),
        dirs.join(", "),
        ids(p.isr()),
        ids(p.removing_replicas()),
        ids(p.adding_replicas()),
        ids(p.elr()),
        ids(p.last_known_elr()),
        p.leader,
        if p.leader_recovery_state == 1 {
            "RECOVERING"
        } else {
            "RECOVERED"
        },
        p.leader_epoch,
        p.partition_epoch
    )
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
}
