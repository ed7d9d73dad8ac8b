//! A node's static properties as given (its `server.properties` after `--override`): built by
//! the configuration layer, read by the controller's DescribeConfigs of its own BROKER
//! resource (Kafka's `KafkaConfig.originals`). Shared, not copied, and never printed: values
//! may be secrets, so `Debug` shows the number of keys only.

use std::collections::BTreeMap;
use std::sync::Arc;

/// The raw key → value map of a node's configuration.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct StaticProperties(Arc<BTreeMap<String, String>>);

impl StaticProperties {
    /// Wraps the map.
    pub fn new(map: BTreeMap<String, String>) -> Self {
        StaticProperties(Arc::new(map))
    }

    /// The map.
    pub fn map(&self) -> &BTreeMap<String, String> {
        &self.0
    }
}

impl std::fmt::Debug for StaticProperties {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StaticProperties({} keys)", self.0.len())
    }
}
