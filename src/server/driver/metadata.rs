//! The driver's metadata side, I/O only: writing the snapshots the node state machine asks
//! for, and cleaning the log.
//!
//! ```text
//!   NodeOutput::WriteSnapshot (the machine's SnapshotGenerator said due; records built)
//!     ─▶ writer thread: .part, fsync, rename ─▶ Event::SnapshotWritten
//!     ─▶ store.add_snapshot (served by FetchSnapshot from then on)
//!   every 60 s ─▶ store.maybe_clean (retention) ─▶ log start moves, old snapshots deleted
//! ```
//!
//! Writing the file happens off the raft thread (Kafka's snapshot generator has its own
//! thread too), so a large snapshot never delays a Fetch answer or an election.

use super::{now_ms, Driver, DriverError, Event};
use crate::snapshot::{SnapshotHeaderInfo, SnapshotId};

impl Driver {
    /// Hands snapshot `id` of the image to a writer thread.
    pub(super) fn start_snapshot(
        &mut self,
        id: SnapshotId,
        header: SnapshotHeaderInfo,
        records: Vec<Vec<u8>>,
        reason: &str,
    ) {
        tracing::info!(
            "Creating new KRaft snapshot file {} because {reason}.",
            id.file_stem()
        );
        let now = now_ms();
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
            self.machine.snapshot_written();
        }
    }

    /// A writer thread finished snapshot `id`.
    pub(super) fn snapshot_written(
        &mut self,
        id: SnapshotId,
        result: Result<u64, String>,
    ) -> Result<(), DriverError> {
        self.machine.snapshot_written();
        match result {
            Ok(size_bytes) => {
                self.store
                    .add_snapshot(id)
                    .map_err(|e| self.storage_failure(e))?;
                tracing::info!(
                    "Successfully wrote snapshot {} ({size_bytes} bytes)",
                    id.file_stem()
                );
                let now = super::now_ms();
                if let Ok(mut m) = self.metrics.lock() {
                    m.latest_snapshot_bytes = size_bytes;
                    m.latest_snapshot_at_ms = Some(now);
                }
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
