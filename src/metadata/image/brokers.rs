//! Broker lookups the controller's managers share (Kafka's `ClusterControlManager` queries
//! over the registrations the image holds).

use uuid::Uuid;

use super::MetadataImage;
use crate::common::errors::{ApiError, STALE_BROKER_EPOCH};
use crate::metadata::records::RegisterBrokerRecord;

impl MetadataImage {
    /// Kafka's `checkBrokerEpoch`: STALE_BROKER_EPOCH unless `broker_id` is registered with
    /// `broker_epoch`.
    pub fn check_broker_epoch(
        &self,
        broker_id: i32,
        broker_epoch: i64,
    ) -> Result<&RegisterBrokerRecord, ApiError> {
        let registration = self.brokers.get(&broker_id).ok_or_else(|| {
            ApiError::new(
                STALE_BROKER_EPOCH,
                format!("No broker registration found for broker id {broker_id}"),
            )
        })?;
        if registration.broker_epoch != broker_epoch {
            return Err(ApiError::new(
                STALE_BROKER_EPOCH,
                format!(
                    "Expected broker epoch {}, but got broker epoch {broker_epoch}",
                    registration.broker_epoch
                ),
            ));
        }
        Ok(registration)
    }

    /// Whether `broker_id` may lead or join an ISR: registered, unfenced, not shutting down
    /// (Kafka's `ClusterControlManager.isActive`).
    pub fn is_active_broker(&self, broker_id: i32) -> bool {
        self.brokers
            .get(&broker_id)
            .is_some_and(|b| !b.fenced && !b.in_controlled_shutdown)
    }

    /// Kafka's `ClusterControlManager.hasOnlineDir` (`DirectoryId.isOnline`): whether the
    /// replica directory `dir` of `broker_id` is online. MIGRATING and UNASSIGNED are, LOST is
    /// not; a broker that lists no directories (registered before 3.7-IV2) has every one
    /// online; otherwise `dir` must be one the registration lists. An unregistered broker has
    /// none.
    pub fn has_online_dir(&self, broker_id: i32, dir: Uuid) -> bool {
        let Some(b) = self.brokers.get(&broker_id) else {
            return false;
        };
        match dir.as_u64_pair() {
            (0, 0) | (0, 1) => true,
            (0, 2) => false,
            _ => b.log_dirs.is_empty() || b.log_dirs.contains(&dir),
        }
    }

    /// The log directory a new replica on `broker_id` gets (Kafka's `defaultDir`): the broker's
    /// only directory; UNASSIGNED when it has several; MIGRATING when it lists none.
    pub fn default_dir(&self, broker_id: i32) -> Uuid {
        match self.brokers.get(&broker_id).map(|b| b.log_dirs.as_slice()) {
            Some([only]) => *only,
            Some([]) | None => Uuid::nil(),
            Some(_) => Uuid::from_u64_pair(0, 1),
        }
    }
}
