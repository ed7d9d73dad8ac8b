//! The active controller's state, and nothing else: the speculative image (committed plus
//! everything written this epoch), the replies parked until their records commit, the broker
//! sessions (Kafka's `BrokerHeartbeatManager`), the registration offsets, the periodic
//! tasks' schedule and the topics to share with the committed image. What acts on it:
//! `apis.rs` (one function per request), `write.rs` (the write path), `periodic.rs`.

use std::collections::{BTreeMap, VecDeque};

use super::heartbeats::BrokerHeartbeatManager;
use super::replication::{self, placement::UsableBroker};
use super::sharing::TopicSharing;
use crate::codec::{RequestBody, ResponseBody};
use crate::metadata::image::MetadataImage;
use crate::metadata::record::MetadataRecord;

/// A reply waiting for its records (or the writes before it) to commit.
#[derive(Debug)]
pub(super) struct Parked {
    /// The last offset that must commit first.
    pub(super) offset: i64,
    pub(super) request_id: u64,
    pub(super) body: ResponseBody,
    /// The request and its version, kept for the APIs whose error answer Kafka builds from
    /// the request rather than the reply (ElectLeaders' `getErrorResponse`).
    pub(super) request: Option<(i16, RequestBody)>,
}

/// The active controller of one epoch.
#[derive(Debug)]
pub(super) struct ActiveController {
    pub(super) epoch: i32,
    /// Committed image plus every record written in this epoch.
    pub(super) image: MetadataImage,
    /// Offset of the last record written in this epoch (-1: none yet).
    pub(super) last_write_offset: i64,
    pub(super) parked: VecDeque<Parked>,
    pub(super) heartbeats: BrokerHeartbeatManager,
    /// Offset of each broker's RegisterBrokerRecord (its catch-up target), this epoch's
    /// writes included.
    pub(super) registration_offsets: BTreeMap<i32, i64>,
    /// An append found the Raft layer not leading this epoch any more.
    pub(super) lost_leadership: bool,
    /// When the preferred-leader balancing runs (Kafka's SCHEDULED state), if it is due.
    pub(super) balance_at_ms: Option<u64>,
    /// The stale-broker fencing found an expired entry: it runs again no sooner than this
    /// (Kafka reschedules its task 10 ms on), whatever expires meanwhile.
    pub(super) fence_again_at_ms: Option<u64>,
    /// When the expired delegation tokens are next swept (Kafka schedules the sweep at
    /// activation when tokens are on, then every expiry check interval).
    pub(super) token_sweep_at_ms: Option<u64>,
    /// The last run hit its record limit: the next one runs 10 ms after scheduling, not
    /// after the check interval (Kafka's IMMEDIATELY rather than DEFERRED).
    pub(super) balance_again_soon: bool,
    /// `last_write_offset` when the image was last found balanced: no write since, no need
    /// to look again.
    pub(super) balanced_at_offset: Option<i64>,
    /// When the unclean elections of leaderless partitions are next tried (Kafka's
    /// `maybeElectUncleanLeaders` event), `None` while no partition is leaderless.
    pub(super) unclean_at_ms: Option<u64>,
    /// The last unclean run hit its record limit: the next one runs 10 ms after scheduling.
    pub(super) unclean_again_soon: bool,
    /// The topics written, to share with the committed image once their records commit.
    pub(super) sharing: TopicSharing,
    /// A partition may be led by a fenced broker: Kafka 4.0 elects a last known leader that
    /// is fenced (fixed by KAFKA-19522 in 4.1.1), and a node presenting 4.0 does the same.
    pub(super) fenced_leader_possible: bool,
}

impl ActiveController {
    /// Claims `epoch` on top of `committed`: every registered broker gets a fresh session.
    /// `fenced_leader_possible`: the presented release elects a fenced last known leader.
    pub(super) fn new(
        epoch: i32,
        committed: &MetadataImage,
        registration_offsets: &BTreeMap<i32, i64>,
        now_ms: u64,
        fenced_leader_possible: bool,
    ) -> Self {
        // Kafka's `ClusterControlManager.activate` walks `brokerRegistrations`, so the
        // contacts enter its tracker map (whose order picks which of two brokers expiring
        // together is fenced first) in that table's order.
        let heartbeats = BrokerHeartbeatManager::activate(
            committed
                .brokers_in_kafka_order()
                .into_iter()
                .filter_map(|id| committed.brokers.get(&id))
                .map(|b| (b.broker_id, b.broker_epoch, b.fenced)),
            now_ms,
        );
        Self {
            epoch,
            image: committed.clone(),
            last_write_offset: -1,
            parked: VecDeque::new(),
            heartbeats,
            registration_offsets: registration_offsets.clone(),
            lost_leadership: false,
            balance_at_ms: None,
            fence_again_at_ms: None,
            token_sweep_at_ms: None,
            balance_again_soon: false,
            balanced_at_offset: None,
            unclean_at_ms: None,
            unclean_again_soon: false,
            sharing: TopicSharing::default(),
            fenced_leader_possible,
        }
    }

    /// Holds once again the topics whose records the committed image has replayed since
    /// (their copies in the two images are equal then).
    pub(super) fn share_committed(&mut self, committed: &MetadataImage) {
        self.sharing.share_committed(&mut self.image, committed);
    }

    /// The brokers placement may use now: Kafka's `usableBrokers` reads the heartbeat
    /// sessions' controlled-shutdown state, not the registrations'.
    pub(super) fn usable_brokers(&self) -> Vec<UsableBroker> {
        replication::usable_brokers(&self.image, |id| {
            self.heartbeats
                .session(id)
                .is_some_and(|s| s.state().in_controlled_shutdown())
        })
    }
}

/// Keeps the offset of each broker's RegisterBrokerRecord, as Kafka's
/// `ClusterControlManager.registerBrokerRecordOffsets` does on replay.
pub(super) fn track_registration(
    offsets: &mut BTreeMap<i32, i64>,
    offset: i64,
    record: &MetadataRecord,
) {
    match record {
        MetadataRecord::RegisterBroker(r) => {
            offsets.insert(r.broker_id, offset);
        }
        MetadataRecord::UnregisterBroker(r) => {
            offsets.remove(&r.broker_id);
        }
        _ => {}
    }
}
