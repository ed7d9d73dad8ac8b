//! The scenario tests' and the simulation's log: the project's own in-memory local log
//! ([`crate::log::MemLog`], which runs the log conformance suite beside `FileLog`) plus
//! snapshots by id, seen by the core through the same KafkaMetadataLog rules as the node's
//! store (`crate::log::metadata_end_offset*`).
//!
//! A test's direct appends go through the follower checks (contiguous offsets, epochs that
//! never go back), so a scenario cannot build a log Kafka would refuse.

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::log::LocalLog;
use crate::raft::types::OffsetAndEpoch;
use crate::raft::{LogReadError, LogReader, SnapshotChunk};

/// An in-memory log that carries out the core's write outputs.
#[derive(Debug, Clone, Default)]
pub struct MemLog {
    log: crate::log::MemLog,
    pub snapshots: BTreeMap<(i64, i32), Bytes>,
}

impl MemLog {
    /// Appends whole batches whose offsets and epochs are already set (the core's leader
    /// batches, fetched records, a test's own).
    pub fn append(&mut self, bytes: &Bytes) {
        if let Err(e) = self.log.append_as_follower(bytes, i32::MAX) {
            panic!("append must continue the log: {e}");
        }
    }

    /// (base offset, next offset) of each batch from `from` on.
    pub fn batch_bounds(&self, from: i64) -> Vec<(i64, i64)> {
        self.log
            .batches_from(from)
            .map(|(base, next, _, _)| (base, next))
            .collect()
    }

    /// Kafka's `truncateTo` at a batch boundary.
    pub fn truncate(&mut self, offset: i64) {
        assert!(
            self.log
                .batches_from(0)
                .all(|(base, next, _, _)| offset <= base || offset >= next),
            "truncation inside a batch"
        );
        if let Err(e) = self.log.truncate_to(offset) {
            panic!("truncate to {offset}: {e}");
        }
    }

    pub fn flush(&mut self) {
        // The in-memory log's flush cannot fail.
        let _ = self.log.flush();
    }

    /// Nothing appended waits for a flush.
    pub fn is_flushed(&self) -> bool {
        self.log.flushed_offset() == self.log.end_offset()
    }

    /// A crash: appends not yet flushed are lost. Returns the offset truncated to, if any.
    pub fn crash(&mut self) -> Option<i64> {
        let flushed = self.log.flushed_offset();
        let lost = flushed < self.log.end_offset();
        self.log.crash();
        lost.then_some(flushed)
    }

    /// The end offset that survives a crash.
    pub fn flushed_end_offset(&self) -> i64 {
        self.log.flushed_offset()
    }

    /// (base offset, next offset, bytes) of the batches with `from <= base < to`.
    pub fn batches_between(&self, from: i64, to: i64) -> Vec<(i64, i64, Bytes)> {
        self.log
            .batches_from(from)
            .take_while(|(base, ..)| *base < to)
            .map(|(base, next, _, bytes)| (base, next, bytes.clone()))
            .collect()
    }

    /// Every (offset, epoch, batch bytes) — for comparing logs.
    pub fn batches(&self) -> Vec<(i64, i32, Bytes)> {
        self.log
            .batches_from(0)
            .map(|(base, _, epoch, bytes)| (base, epoch, bytes.clone()))
            .collect()
    }

    /// The epoch of the batch starting at `base`, if there is one.
    pub fn batch_epoch(&self, base: i64) -> Option<i32> {
        self.log
            .batches_from(base)
            .next()
            .filter(|(b, ..)| *b == base)
            .map(|(_, _, epoch, _)| epoch)
    }

    /// Adds a snapshot (the log keeps its batches).
    pub fn add_snapshot(&mut self, id: OffsetAndEpoch, bytes: Bytes) {
        self.snapshots.insert((id.offset, id.epoch), bytes);
    }

    /// Kafka's truncateToLatestSnapshot after a download: the log restarts empty at `id`.
    pub fn install_snapshot(&mut self, id: OffsetAndEpoch, bytes: Bytes) {
        self.snapshots.clear();
        self.snapshots.insert((id.offset, id.epoch), bytes);
        if let Err(e) = self.log.truncate_fully_and_start_at(id.offset) {
            panic!("install snapshot {id:?}: {e}");
        }
    }

    /// Moves the log start to a snapshot's end offset (segments below it deleted).
    pub fn set_start_offset(&mut self, offset: i64) {
        if let Err(e) = self.log.increment_start_offset(offset) {
            panic!("log start to {offset}: {e}");
        }
    }
}

impl LogReader for MemLog {
    fn log_start_offset(&self) -> i64 {
        self.log.start_offset()
    }

    fn end_offset(&self) -> OffsetAndEpoch {
        crate::log::metadata_end_offset(&self.log, self.latest_snapshot_id())
    }

    fn end_offset_for_epoch(&self, epoch: i32) -> OffsetAndEpoch {
        crate::log::metadata_end_offset_for_epoch(
            &self.log,
            epoch,
            self.earliest_snapshot_id(),
            self.latest_snapshot_id(),
        )
    }

    fn read(&self, offset: i64, max_bytes: usize) -> Result<Bytes, LogReadError> {
        self.log
            .read(offset, max_bytes)
            .map(|read| Bytes::from(read.bytes))
            .map_err(|e| LogReadError {
                offset,
                reason: e.to_string(),
            })
    }

    fn latest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
        self.snapshots
            .keys()
            .next_back()
            .map(|(o, e)| OffsetAndEpoch::new(*o, *e))
    }

    fn earliest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
        self.snapshots
            .keys()
            .next()
            .map(|(o, e)| OffsetAndEpoch::new(*o, *e))
    }

    fn read_snapshot(
        &self,
        id: OffsetAndEpoch,
        position: i64,
        max_bytes: usize,
    ) -> Option<SnapshotChunk> {
        let bytes = self.snapshots.get(&(id.offset, id.epoch))?;
        let size = bytes.len() as i64;
        let start = position.clamp(0, size) as usize;
        let end = (start + max_bytes).min(bytes.len());
        Some(SnapshotChunk {
            bytes: bytes.slice(start..end),
            size,
        })
    }
}

/// `LogReader` for a test type that keeps its log in a [`MemLog`] field: every read goes to it.
macro_rules! delegate_log_reader {
    ($type:ty, $field:ident) => {
        impl $crate::raft::LogReader for $type {
            fn log_start_offset(&self) -> i64 {
                $crate::raft::LogReader::log_start_offset(&self.$field)
            }
            fn end_offset(&self) -> $crate::raft::types::OffsetAndEpoch {
                $crate::raft::LogReader::end_offset(&self.$field)
            }
            fn end_offset_for_epoch(&self, epoch: i32) -> $crate::raft::types::OffsetAndEpoch {
                $crate::raft::LogReader::end_offset_for_epoch(&self.$field, epoch)
            }
            fn read(
                &self,
                offset: i64,
                max_bytes: usize,
            ) -> Result<bytes::Bytes, $crate::raft::LogReadError> {
                $crate::raft::LogReader::read(&self.$field, offset, max_bytes)
            }
            fn latest_snapshot_id(&self) -> Option<$crate::raft::types::OffsetAndEpoch> {
                $crate::raft::LogReader::latest_snapshot_id(&self.$field)
            }
            fn earliest_snapshot_id(&self) -> Option<$crate::raft::types::OffsetAndEpoch> {
                $crate::raft::LogReader::earliest_snapshot_id(&self.$field)
            }
            fn read_snapshot(
                &self,
                id: $crate::raft::types::OffsetAndEpoch,
                position: i64,
                max_bytes: usize,
            ) -> Option<$crate::raft::SnapshotChunk> {
                $crate::raft::LogReader::read_snapshot(&self.$field, id, position, max_bytes)
            }
        }
    };
}
pub(crate) use delegate_log_reader;
