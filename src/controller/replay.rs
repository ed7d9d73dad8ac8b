//! The committed side, on every controller: the committed image follows what the Raft layer
//! has committed (Kafka's `MetadataLoader` feeding the controller's replay), snapshot first
//! when the log no longer holds the next offset; then the active controller's parked replies
//! below the new high watermark are released and its image is checked against the committed
//! one.

use super::errors::ControllerError;
use super::{active, change_log, Leadership, QuorumController};
use crate::raft::LogReader;

/// What [`QuorumController::replay_committed`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CatchUp {
    /// The image changed (a snapshot loaded or batches replayed).
    pub changed: bool,
    /// The latest snapshot was loaded first.
    pub loaded_snapshot: bool,
    /// Bytes of log batches replayed.
    pub log_bytes: u64,
    /// Committed records remain below the high watermark (the budget of one call was spent,
    /// or a snapshot was loaded): call again, with the time then.
    pub more: bool,
}

/// Bytes read from the log per replay step.
const REPLAY_READ_BYTES: usize = 1 << 20;

/// Log bytes one call replays at most (a few hundred thousand partition records). A node
/// catching up a large log replays it over several rounds, so the requests that arrive
/// meanwhile are served between them and an activation that follows a long catch-up starts
/// its brokers' sessions at the time it really happens (Kafka's MetadataLoader replays batch
/// by batch on its own queue, and its controller activates with the clock of that event).
pub const REPLAY_BYTES_PER_CALL: u64 = 16 << 20;

impl QuorumController {
    /// Replays what is committed below `high_watermark` into the committed image (loading
    /// the latest snapshot first when the log no longer holds the next offset), then releases
    /// the replies whose records are now committed.
    pub fn replay_committed(
        &mut self,
        log: &dyn LogReader,
        high_watermark: i64,
    ) -> Result<CatchUp, ControllerError> {
        let mut done = CatchUp::default();
        let mut spent = 0u64;
        // The active controller never loads a snapshot (Kafka's LeaderNeverLoadSnapshot).
        // Otherwise the latest snapshot is loaded when the log no longer holds the next
        // offset, and also by a new listener (nothing replayed yet) whatever the log holds,
        // once a high watermark is known: KafkaRaftClient.updateListenersProgress hands a
        // listener at STARTING_NEXT_OFFSET the latest snapshot.
        let new_listener = self.committed.next_offset == 0 && high_watermark > 0;
        if !self.is_active() {
            if let Some(id) = log.latest_snapshot_id() {
                if (new_listener || self.committed.next_offset < log.log_start_offset())
                    && id.offset > self.committed.next_offset
                {
                    if let Some(chunk) = log.read_snapshot(id, 0, usize::MAX) {
                        self.committed
                            .load_snapshot(&chunk.bytes, id.offset, "snapshot");
                        // Kafka replays a snapshot's records at its last contained offset.
                        self.registration_offsets = self
                            .committed
                            .brokers
                            .keys()
                            .map(|b| (*b, id.offset - 1))
                            .collect();
                        done.loaded_snapshot = true;
                        self.snapshot_loads += 1;
                        // A large snapshot spends the call's budget as the log would.
                        spent = chunk.bytes.len() as u64;
                    }
                }
            }
        }
        while self.committed.next_offset < high_watermark {
            if spent >= self.replay_budget_bytes {
                done.more = true;
                break;
            }
            let read_bytes = REPLAY_READ_BYTES
                .min(usize::try_from(self.replay_budget_bytes).unwrap_or(usize::MAX));
            let bytes = log.read(self.committed.next_offset, read_bytes)?;
            let offsets = &mut self.registration_offsets;
            let stats = &mut self.election_stats;
            let (replayed, replayed_bytes) = self.committed.replay_batches_observed(
                &bytes,
                high_watermark,
                "metadata log",
                &mut |image, offset, record| {
                    change_log::replayed(image, record);
                    stats.count(image, record);
                    active::track_registration(offsets, offset, record)
                },
            );
            if replayed == 0 {
                break;
            }
            done.log_bytes += replayed_bytes;
            spent += replayed_bytes;
        }
        // A snapshot that spent the budget by itself: whatever follows (the log, or an
        // activation) comes in the next call, with the time then.
        done.more |= spent >= self.replay_budget_bytes;
        done.changed = done.loaded_snapshot || done.log_bytes > 0;
        self.high_watermark = self.high_watermark.max(high_watermark);
        if let Leadership::Active(a) = &mut self.leadership {
            a.release_committed(self.high_watermark, &mut self.outputs);
            a.check_against_committed(&self.committed);
            a.share_committed(&self.committed);
        }
        Ok(done)
    }
}
