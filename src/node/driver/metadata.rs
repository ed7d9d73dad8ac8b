//! The driver's metadata side: replaying committed batches into the image, activating as
//! leader, writing snapshots of the image, and cleaning the log.
//!
//! ```text
//!   HighWatermark ─▶ (end of the round: requests sent) catch_up_image_due
//!     ─▶ image replayed to the HW ─▶ publish to the handler ─▶ waiters answered
//!                                    └▶ SnapshotGenerator says due ─▶ records (this thread)
//!                                         ─▶ writer thread: .part, fsync, rename ─▶ Event::SnapshotWritten
//!                                         ─▶ store.add_snapshot (served by FetchSnapshot from then on)
//!   every 60 s ─▶ store.maybe_clean (retention) ─▶ log start moves, old snapshots deleted
//!   leader whose image passed its epoch start ─▶ the controller activates (controller/)
//! ```
//!
//! Writing the file happens off the raft thread (Kafka's snapshot generator has its own
//! thread too), so a large snapshot never delays a Fetch answer or an election.

use super::{now_ms, Driver, DriverError, Event};
use crate::raft::voters::voter_set_to_record;
use crate::snapshot::{SnapshotHeaderInfo, SnapshotId};

impl Driver {
    /// Replays the log into the image up to the last high watermark the core announced, then
    /// answers the requests waiting for those records (as Kafka's controller completes them
    /// after replaying the commit). The driver calls it at the end of a round, so a follower's
    /// next Fetch is already on its way while it replays what the last one brought (Kafka
    /// replays on its MetadataLoader thread, beside the raft thread); the next event sees the
    /// new image.
    pub(super) fn catch_up_image_due(&mut self) -> Result<(), DriverError> {
        if let Some(hw) = self.image_due.take() {
            self.apply_committed(hw);
            // An activation waiting for the image to reach the epoch start.
            self.carry_out_outputs()?;
        }
        Ok(())
    }

    /// The image replayed to `high_watermark` and the requests waiting below it answered.
    pub(super) fn apply_committed(&mut self, high_watermark: i64) {
        self.catch_up_image(high_watermark);
        self.drain_controller_outputs();
    }

    /// Replays the image up to `high_watermark`, publishes it, and writes a snapshot of it when
    /// one is due.
    pub(super) fn catch_up_image(&mut self, high_watermark: i64) {
        let Some(controller) = self.controller.as_mut() else {
            return;
        };
        let done = match controller.replay_committed(&self.store, high_watermark) {
            Ok(done) => done,
            Err(e) => {
                // An unreadable committed range stops the node (Kafka's controller faults).
                tracing::error!("cannot replay the committed metadata log: {e}");
                self.fatal = Some(DriverError::Controller(e.to_string()));
                return;
            }
        };
        if done.changed {
            self.publish_image();
        }
        let now = now_ms();
        if done.loaded_snapshot {
            self.snapshot_generator.loaded(now);
        }
        let in_transaction = self.image().open_transaction.is_some();
        if let Some(reason) = self
            .snapshot_generator
            .log_delta(done.log_bytes, now, in_transaction)
        {
            if !self.start_snapshot(&reason, now) {
                self.snapshot_generator.written();
            }
        }
    }

    /// Builds the snapshot of the current image and hands it to a writer thread; false when
    /// none is written.
    fn start_snapshot(&mut self, reason: &str, now: u64) -> bool {
        let image = self.image();
        let id = SnapshotId {
            end_offset: image.next_offset,
            epoch: image.last_epoch,
        };
        let log_start = crate::raft::LogReader::log_start_offset(&self.store);
        if id.end_offset < log_start {
            tracing::info!(
                "Cannot create a snapshot with an id ({}) less than the log start offset ({log_start})",
                id.file_stem()
            );
            return false;
        }
        if self.store.has_snapshot(id) {
            tracing::error!(
                "Not generating snapshot {} because it already exists.",
                id.file_stem()
            );
            return false;
        }
        let records = match image.snapshot_records() {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(
                    "KRaft snapshot file generation error for {}: {e}",
                    id.file_stem()
                );
                return false;
            }
        };
        let (kraft_version, voters) = self.core.voters_at_offset(id.end_offset - 1);
        let header = SnapshotHeaderInfo {
            last_contained_log_timestamp_ms: image.last_contained_log_time_ms,
            kraft_version: Some(kraft_version),
            voters: voters.as_ref().map(voter_set_to_record),
        };
        tracing::info!(
            "Creating new KRaft snapshot file {} because {reason}.",
            id.file_stem()
        );
        let dir = self.store.partition_dir().to_path_buf();
        let events = self.events.clone();
        let spawned = std::thread::Builder::new()
            .name("snapshot-writer".into())
            .spawn(move || {
                let result =
                    crate::snapshot::write_snapshot(&dir, id, &header, &records, now as i64)
                        .map(|path| std::fs::metadata(path).map(|m| m.len()).unwrap_or_default())
                        .map_err(|e| e.to_string());
                // The raft thread may be gone (shutdown): the frozen file is found on start.
                let _ = events.send(Event::SnapshotWritten { id, result });
            });
        if let Err(e) = spawned {
            tracing::error!("cannot start the snapshot writer: {e}");
            return false;
        }
        true
    }

    /// A writer thread finished snapshot `id`.
    pub(super) fn snapshot_written(
        &mut self,
        id: SnapshotId,
        result: Result<u64, String>,
    ) -> Result<(), DriverError> {
        self.snapshot_generator.written();
        match result {
            Ok(size_bytes) => {
                self.store
                    .add_snapshot(id)
                    .map_err(|e| self.storage_failure(e))?;
                tracing::info!(
                    "Successfully wrote snapshot {} ({size_bytes} bytes)",
                    id.file_stem()
                );
            }
            // Kafka's snapshot generator reports the fault and goes on; the log keeps
            // everything, so nothing is lost.
            Err(e) => tracing::error!(
                "Encountered error while writing snapshot {}: {e}",
                id.file_stem()
            ),
        }
        Ok(())
    }

    /// Kafka's log cleaner cadence: `maybeClean` every 60 s.
    pub(super) fn run_log_cleaner(&mut self) -> Result<(), DriverError> {
        let now = now_ms();
        if now < self.next_clean_ms {
            return Ok(());
        }
        self.next_clean_ms = now + super::CLEAN_INTERVAL_MS;
        self.store
            .maybe_clean(now as i64, self.settings.retention)
            .map_err(|e| self.storage_failure(e))?;
        Ok(())
    }
}
