//! Dynamic configs and client quotas (Kafka's `ConfigurationsDelta`, `ClientQuotasDelta`).

use std::collections::BTreeMap;

use super::{MetadataImage, ReplayError};
use crate::metadata::records::{ClientQuotaRecord, ConfigRecord};

/// `ConfigResource.Type` ids.
pub mod resource {
    /// A topic.
    pub const TOPIC: i8 = 2;
    /// A broker (by id), or the cluster default ("").
    pub const BROKER: i8 = 4;
    /// A node's log levels.
    pub const BROKER_LOGGER: i8 = 8;
    /// A client-metrics subscription.
    pub const CLIENT_METRICS: i8 = 16;
    /// A consumer, share or streams group.
    pub const GROUP: i8 = 32;
}

/// A config resource: type id (`ConfigResource.Type`: 2 topic, 4 broker, 8 broker logger,
/// 16 client metrics, 32 group) and name (empty for the cluster default).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConfigResource {
    /// Type id.
    pub resource_type: i8,
    /// Name.
    pub resource_name: String,
}

/// Kafka's name of a config resource type, as kafka-metadata-shell shows it.
pub fn config_resource_type_name(id: i8) -> &'static str {
    match id {
        2 => "TOPIC",
        4 => "BROKER",
        8 => "BROKER_LOGGER",
        16 => "CLIENT_METRICS",
        32 => "GROUP",
        _ => "UNKNOWN",
    }
}

/// A client-quota entity: entity type (`user`, `client-id`, `ip`) → name, `None` for the
/// default entity. The parts form a set, whatever order the record lists them in.
pub type ClientQuotaEntity = BTreeMap<String, Option<String>>;

impl MetadataImage {
    /// ConfigRecord: set the key, or remove it when the value is null; a resource left
    /// without keys is dropped.
    pub(super) fn replay_config(&mut self, r: ConfigRecord) -> Result<(), ReplayError> {
        let resource = ConfigResource {
            resource_type: r.resource_type,
            resource_name: r.resource_name,
        };
        match r.value {
            Some(value) => {
                self.configs
                    .entry(resource)
                    .or_default()
                    .insert(r.name, value);
            }
            None => {
                if let Some(keys) = self.configs.get_mut(&resource) {
                    keys.remove(&r.name);
                    if keys.is_empty() {
                        self.configs.remove(&resource);
                    }
                }
            }
        }
        Ok(())
    }

    /// ClientQuotaRecord: set the key, or remove it (`remove` true, the value ignored); an
    /// entity left without quotas is dropped.
    pub(super) fn replay_client_quota(&mut self, r: ClientQuotaRecord) -> Result<(), ReplayError> {
        let entity: ClientQuotaEntity = r
            .entity
            .into_iter()
            .map(|e| (e.entity_type, e.entity_name))
            .collect();
        if r.remove {
            if let Some(quotas) = self.client_quotas.get_mut(&entity) {
                quotas.remove(&r.key);
                if quotas.is_empty() {
                    self.client_quotas.remove(&entity);
                }
            }
        } else {
            self.client_quotas
                .entry(entity)
                .or_default()
                .insert(r.key, r.value);
        }
        Ok(())
    }
}
