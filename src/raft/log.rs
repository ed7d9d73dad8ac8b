//! What the Raft core reads from the log: a synchronous, read-only view.
//!
//! Writes leave the core as outputs ([`super::Output`]); the driver carries them out in order
//! before it calls the core again, so each call sees every write the previous calls asked for.

use bytes::Bytes;

use super::types::OffsetAndEpoch;

/// A snapshot chunk for FetchSnapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotChunk {
    /// Bytes starting at the requested position.
    pub bytes: Bytes,
    /// Total size of the snapshot file.
    pub size: i64,
}

/// A read of the log that failed: I/O error or corruption where data must be.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot read the metadata log at offset {offset}: {reason}")]
pub struct LogReadError {
    /// Where the read started.
    pub offset: i64,
    /// Why it failed.
    pub reason: String,
}

/// Read access to the replicated log and its snapshots.
pub trait LogReader {
    /// First offset still in the log.
    fn log_start_offset(&self) -> i64;
    /// Offset after the last record, and the epoch of the last batch (or of the latest
    /// snapshot when the log is empty; 0 when there is neither).
    fn end_offset(&self) -> OffsetAndEpoch;
    /// Kafka's `endOffsetForEpoch`: the largest epoch ≤ `epoch` and the offset where it ends
    /// (the start of the next epoch, or the log end offset for the latest epoch).
    fn end_offset_for_epoch(&self, epoch: i32) -> OffsetAndEpoch;
    /// Whole batches from `offset`, at most `max_bytes` (at least one batch if any). An I/O
    /// error or corruption is an `Err`, never an empty read: the caller stops (Kafka's raft
    /// thread dies on a failed read of its own log).
    fn read(&self, offset: i64, max_bytes: usize) -> Result<Bytes, LogReadError>;
    /// The control batches among the batches from `offset` (a stretch of the log, about
    /// `max_bytes` of it or of its control batches), and the offset after that stretch;
    /// the offset does not move at the log end. A log that can skip data batches unread
    /// overrides this.
    fn read_control_batches(
        &self,
        offset: i64,
        max_bytes: usize,
    ) -> Result<(Bytes, i64), LogReadError> {
        let chunk = self.read(offset, max_bytes)?;
        let mut control = Vec::new();
        let mut next = offset;
        // Batches the log hands out were checked when they were appended or recovered.
        for (_, batch) in crate::records::framer::BatchFramer::trusted(&chunk) {
            if batch.is_control() {
                control.extend_from_slice(batch.as_bytes());
            }
            next = batch.next_offset();
        }
        Ok((Bytes::from(control), next))
    }
    /// The latest snapshot id, if any.
    fn latest_snapshot_id(&self) -> Option<OffsetAndEpoch>;
    /// The earliest snapshot id, if any.
    fn earliest_snapshot_id(&self) -> Option<OffsetAndEpoch>;
    /// A chunk of snapshot `id` from `position`, at most `max_bytes`; `None` if no such snapshot.
    fn read_snapshot(
        &self,
        id: OffsetAndEpoch,
        position: i64,
        max_bytes: usize,
    ) -> Option<SnapshotChunk>;
}

/// Kafka's `ValidOffsetAndEpoch`: what a leader tells a fetcher about its position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValidOffsetAndEpoch {
    /// The fetcher's log matches ours up to its fetch offset.
    Valid,
    /// The fetcher diverged: truncate to (at most) this end offset of this epoch.
    Diverging(OffsetAndEpoch),
    /// The fetcher must load this snapshot.
    Snapshot(OffsetAndEpoch),
}

/// `ReplicatedLog.validateOffsetAndEpoch` (Kafka 4.1).
pub fn validate_offset_and_epoch(
    log: &dyn LogReader,
    offset: i64,
    epoch: i32,
) -> ValidOffsetAndEpoch {
    let log_start = log.log_start_offset();
    if log_start == 0 && offset == 0 {
        return ValidOffsetAndEpoch::Valid;
    }
    if let Some(earliest) = log.earliest_snapshot_id() {
        let before_start = offset < log_start
            || (offset == log_start && epoch != earliest.epoch)
            || epoch < earliest.epoch;
        if before_start {
            let latest = log.latest_snapshot_id().unwrap_or(earliest);
            return ValidOffsetAndEpoch::Snapshot(latest);
        }
    }
    let end = log.end_offset_for_epoch(epoch);
    if end.epoch != epoch || end.offset < offset {
        ValidOffsetAndEpoch::Diverging(end)
    } else {
        ValidOffsetAndEpoch::Valid
    }
}
