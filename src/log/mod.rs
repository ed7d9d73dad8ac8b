//! The `__cluster_metadata-0` log.
//!
//! ```text
//!   raft core ──raft::LogReader (the store)──▶ read(offset, max_bytes) / end_offset_for_epoch
//!   driver ──LocalLog (through the store)──▶ append_as_leader / append_as_follower / truncate_to / flush
//!       FileLog: segments <20d>.log + .index + .timeindex, leader-epoch-checkpoint,
//!                partition.metadata; recovery on open cuts torn or corrupt tails
//!       MemLog:  the same rules in memory; `crash()` forgets everything not flushed
//! ```
//!
//! Reads are synchronous and never change state; every write is an explicit call. Data is
//! durable only up to `flushed_offset()`: the driver must call `flush` before acknowledging
//! (quorum-state/vote rules, follower fetch offsets, leader high watermark).
pub mod epoch_cache;
pub mod file_log;
pub mod index;
pub mod mem_log;
pub mod partition_metadata;
mod recovery;
pub mod segment;
mod validate;

#[cfg(test)]
mod conformance;
#[cfg(test)]
mod recovery_tests;

use std::io;
use std::path::{Path, PathBuf};

pub use epoch_cache::{EpochCache, EpochEntry};
pub use file_log::{FileLog, LogConfig};
pub use mem_log::MemLog;

use crate::records::RecordsError;

/// Kafka's `OffsetAndEpoch`: the one type for it, shared with the Raft core.
pub use crate::common::offset_epoch::OffsetAndEpoch;

/// Whole batches read from the log.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LogRead {
    /// Base offset of the first batch (or the requested offset when empty).
    pub start_offset: i64,
    /// Batches back to back.
    pub bytes: Vec<u8>,
}

/// Offsets an append was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendInfo {
    /// First offset appended.
    pub first_offset: i64,
    /// Last offset appended.
    pub last_offset: i64,
}

/// One partition's local log (Kafka's `LocalLog` under `UnifiedLog`): reads never change state;
/// nothing written is durable until `flush`. The Raft core sees it only through the store's
/// [`crate::raft::LogReader`].
pub trait LocalLog {
    /// First offset in the log (a segment boundary).
    fn start_offset(&self) -> i64;
    /// Offset the next record will get (LEO).
    fn end_offset(&self) -> i64;
    /// Everything below this offset is on disk (survives a crash).
    fn flushed_offset(&self) -> i64;
    /// The newest epoch in the epoch cache.
    fn last_epoch(&self) -> Option<i32>;
    /// The epoch cache entries.
    fn epoch_entries(&self) -> Vec<EpochEntry>;
    /// Kafka's `UnifiedLog.endOffsetForEpoch`: where `epoch` ends and the largest known epoch
    /// ≤ it; `None` when undefined (no epochs, or `epoch` above the latest). The metadata log's
    /// answer, with snapshots, is [`metadata_end_offset_for_epoch`].
    fn end_offset_for_epoch(&self, epoch: i32) -> Option<OffsetAndEpoch>;
    /// Whole batches from the one holding `offset`, up to `max_bytes` (at least one batch when
    /// any exists, as Kafka's `minOneMessage`), within one segment. `offset == LEO` gives an
    /// empty read; outside [start, LEO] is `OffsetOutOfRange`.
    fn read(&self, offset: i64, max_bytes: usize) -> Result<LogRead, LogError>;
    /// Appends batches built by this leader: base offsets are reassigned from the LEO and the
    /// partition leader epoch set to `epoch` (both outside the CRC). The CRC must be valid.
    fn append_as_leader(&mut self, batches: &[u8], epoch: i32) -> Result<AppendInfo, LogError>;
    /// Appends fetched batches verbatim after Kafka's follower checks: CRC and KRaft record
    /// rules, contiguous offsets starting at the LEO, PLE ≥ 0, non-decreasing, ≤ `fetch_epoch`.
    fn append_as_follower(
        &mut self,
        batches: &[u8],
        fetch_epoch: i32,
    ) -> Result<AppendInfo, LogError>;
    /// Records `(epoch, LEO)` in the epoch cache (a new leader, before its first batch).
    fn initialize_leader_epoch(&mut self, epoch: i32) -> Result<(), LogError>;
    /// Removes everything from the batch holding `offset` on (Kafka's `truncateTo`).
    fn truncate_to(&mut self, offset: i64) -> Result<(), LogError>;
    /// Deletes all data and restarts the log empty at `offset` (after installing a snapshot).
    fn truncate_fully_and_start_at(&mut self, offset: i64) -> Result<(), LogError>;
    /// Moves the log start forward to `offset` (a snapshot end offset), deleting whole
    /// segments below it. Returns whether it moved.
    fn increment_start_offset(&mut self, offset: i64) -> Result<bool, LogError>;
    /// Makes everything up to the LEO durable (fsync segments, indexes, directory).
    fn flush(&mut self) -> Result<(), LogError>;
}

/// Kafka's `KafkaMetadataLog.endOffset` with `lastFetchedEpoch`: the log end offset and the
/// latest epoch in the log, else the latest snapshot's (an empty log after a snapshot), else 0.
pub fn metadata_end_offset<L: LocalLog + ?Sized>(
    log: &L,
    latest_snapshot: Option<OffsetAndEpoch>,
) -> OffsetAndEpoch {
    let epoch = log
        .last_epoch()
        .or(latest_snapshot.map(|s| s.epoch))
        .unwrap_or(0);
    OffsetAndEpoch::new(log.end_offset(), epoch)
}

/// Kafka's `KafkaMetadataLog.endOffsetForEpoch`: the local log's answer, except that an epoch
/// ending exactly at the earliest snapshot is that snapshot, and an undefined one is the log
/// end with `lastFetchedEpoch`.
pub fn metadata_end_offset_for_epoch<L: LocalLog + ?Sized>(
    log: &L,
    epoch: i32,
    earliest_snapshot: Option<OffsetAndEpoch>,
    latest_snapshot: Option<OffsetAndEpoch>,
) -> OffsetAndEpoch {
    match (log.end_offset_for_epoch(epoch), earliest_snapshot) {
        (Some(found), Some(snapshot))
            if found.offset == snapshot.offset && found.epoch == epoch =>
        {
            snapshot
        }
        (Some(found), _) => found,
        (None, _) => metadata_end_offset(log, latest_snapshot),
    }
}

/// Log errors. Disk-full and fsync failures come out as `Io`, never swallowed.
#[derive(Debug, thiserror::Error)]
pub enum LogError {
    /// A file operation failed.
    #[error("log {op} failed on {path}: {source}")]
    Io {
        /// What was being done.
        op: &'static str,
        /// File or directory.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// Stored data is unreadable.
    #[error("corrupt log data in {path} at byte {position}: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// Byte position.
        position: u64,
        /// What is wrong.
        reason: String,
    },
    /// A checkpoint file (leader-epoch-checkpoint) is malformed.
    #[error("corrupt checkpoint file {path} at line {line}: {reason}")]
    CorruptCheckpoint {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// The offset is not in the log.
    #[error("offset {offset} is outside the log [{start_offset}, {end_offset}]")]
    OffsetOutOfRange {
        /// Requested offset.
        offset: i64,
        /// Log start.
        start_offset: i64,
        /// Log end.
        end_offset: i64,
    },
    /// An append does not start at the log end.
    #[error("append starts at offset {found}, expected the log end offset {expected}")]
    UnexpectedAppendOffset {
        /// LEO.
        expected: i64,
        /// First offset of the append.
        found: i64,
    },
    /// Bad or out-of-order epochs.
    #[error("invalid epoch: {0}")]
    InvalidEpoch(String),
    /// The bytes are not valid KRaft batches.
    #[error("invalid batch at byte {position} of the append: {source}")]
    InvalidBatch {
        /// Position inside the appended bytes.
        position: usize,
        /// Why.
        source: RecordsError,
    },
    /// Empty appends or other misuse.
    #[error("invalid append: {0}")]
    InvalidAppend(String),
    /// Truncating below what is allowed.
    #[error("cannot truncate to {offset}: {reason}")]
    InvalidTruncation {
        /// Requested offset.
        offset: i64,
        /// Why.
        reason: String,
    },
}

impl LogError {
    pub(crate) fn io(op: &'static str, path: &Path, source: io::Error) -> Self {
        LogError::Io {
            op,
            path: path.to_path_buf(),
            source,
        }
    }
}
