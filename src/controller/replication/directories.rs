//! A broker's log directories as its heartbeats report them (Kafka's
//! `ReplicationControlManager.handleDirectoriesOffline` / `handleDirectoriesCordoned`).
//!
//! ```text
//!   heartbeat ─▶ (metadata.version ≥ 3.7-IV2) offline dirs ∩ registered dirs
//!             │     ─▶ leader/ISR updates without the broker for the partitions on them
//!             │     ─▶ BrokerRegistrationChangeRecord v2 { log_dirs: the dirs still online }
//!             └▶ (metadata.version ≥ 4.3-IV0) cordoned dirs ≠ registered cordoned dirs
//!                   ─▶ BrokerRegistrationChangeRecord v3 { cordoned_log_dirs }
//! ```
//!
//! Placement skips a broker whose every directory is cordoned ([`has_uncordoned_dirs`]).

use uuid::Uuid;

use super::leader_and_isr_updates;
use super::partition_change::NO_LEADER;
use super::registration_change;
use crate::controller::config::ControllerConfig;
use crate::controller::result::RecordOut;
use crate::metadata::image::MetadataImage;
use crate::metadata::record::MetadataRecord;
use crate::metadata::records::RegisterBrokerRecord;

/// Kafka's `BrokerRegistration.hasUncordonedDirs`: true when the broker lists no directories
/// or has not reported cordoned ones, else whether one directory is not cordoned.
pub fn has_uncordoned_dirs(broker: &RegisterBrokerRecord) -> bool {
    match &broker.cordoned_log_dirs {
        None => true,
        Some(_) if broker.log_dirs.is_empty() => true,
        Some(cordoned) => broker.log_dirs.iter().any(|d| !cordoned.contains(d)),
    }
}

/// The records for `offline` directories of `broker_id` (Kafka's `handleDirectoriesOffline`):
/// its partitions on a registered directory among them move leadership and ISR away from it,
/// then the registration keeps only the other directories. Nothing when no registered
/// directory is offline.
pub fn directories_offline(
    image: &MetadataImage,
    cfg: &ControllerConfig,
    broker_id: i32,
    broker_epoch: i64,
    offline: &[Uuid],
) -> Vec<RecordOut> {
    let Some(broker) = image.brokers.get(&broker_id) else {
        return Vec::new();
    };
    let gone: Vec<Uuid> = broker
        .log_dirs
        .iter()
        .copied()
        .filter(|d| offline.contains(d))
        .collect();
    if gone.is_empty() {
        return Vec::new();
    }
    let mut records = leader_and_isr_updates(
        image,
        cfg,
        broker_id,
        NO_LEADER,
        NO_LEADER,
        |_| true,
        |p| {
            p.replicas()
                .iter()
                .zip(&p.directories())
                .any(|(r, d)| *r == broker_id && gone.contains(d))
        },
    );
    let remaining: Vec<Uuid> = broker
        .log_dirs
        .iter()
        .copied()
        .filter(|d| !offline.contains(d))
        .collect();
    let kafka_ids = |ids: &[Uuid]| -> Vec<String> {
        ids.iter()
            .map(crate::common::uuid::uuid_to_kafka_string)
            .collect()
    };
    tracing::warn!(
        "Directories {:?} in broker {broker_id} marked offline, remaining directories: {:?}",
        kafka_ids(&gone),
        kafka_ids(&remaining)
    );
    let mut change = registration_change(broker_id, broker_epoch);
    change.log_dirs = remaining;
    records.push(RecordOut::new(
        MetadataRecord::BrokerRegistrationChange(change),
        2,
    ));
    records
}

/// The record for the `cordoned` directories `broker_id` reports (Kafka's
/// `handleDirectoriesCordoned`): written when the list is non-null and differs as a set from
/// the registration's, or the registration has none yet.
pub fn directories_cordoned(
    image: &MetadataImage,
    broker_id: i32,
    broker_epoch: i64,
    cordoned: Option<&[Uuid]>,
) -> Option<RecordOut> {
    let cordoned = cordoned?;
    let broker = image.brokers.get(&broker_id)?;
    let changed = match &broker.cordoned_log_dirs {
        None => true,
        Some(current) => {
            let as_set = |v: &[Uuid]| v.iter().copied().collect::<std::collections::BTreeSet<_>>();
            as_set(current) != as_set(cordoned)
        }
    };
    if !changed {
        return None;
    }
    tracing::debug!("Directories {cordoned:?} in broker {broker_id} marked cordoned");
    let mut change = registration_change(broker_id, broker_epoch);
    change.cordoned_log_dirs = Some(cordoned.to_vec());
    Some(RecordOut::new(
        MetadataRecord::BrokerRegistrationChange(change),
        3,
    ))
}
