//! A minimal in-memory log for the scenario tests: batches, an epoch cache with Kafka's
//! `endOffsetFor` semantics, snapshots by id.

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::raft::types::OffsetAndEpoch;
use crate::raft::{LogReader, SnapshotChunk};
use crate::records::framer::BatchFramer;

#[derive(Debug, Clone)]
struct MemBatch {
    base: i64,
    next: i64,
    epoch: i32,
    bytes: Bytes,
}

/// An in-memory log that carries out the core's write outputs.
#[derive(Debug, Clone, Default)]
pub struct MemLog {
    batches: Vec<MemBatch>,
    start_offset: i64,
    /// (epoch, start offset), ascending.
    epochs: Vec<(i32, i64)>,
    pub snapshots: BTreeMap<(i64, i32), Bytes>,
    /// Appends not yet flushed.
    pub unflushed_from: Option<i64>,
}

impl MemLog {
    pub fn append(&mut self, bytes: &Bytes) {
        for (_, batch) in BatchFramer::new(bytes, 0, usize::MAX) {
            let b = MemBatch {
                base: batch.base_offset(),
                next: batch.next_offset(),
                epoch: batch.partition_leader_epoch(),
                bytes: Bytes::copy_from_slice(batch.as_bytes()),
            };
            assert_eq!(
                b.base,
                self.end_offset().offset,
                "append must continue the log"
            );
            if self.epochs.last().is_none_or(|(e, _)| *e < b.epoch) {
                self.epochs.push((b.epoch, b.base));
            }
            self.unflushed_from.get_or_insert(b.base);
            self.batches.push(b);
        }
    }

    pub fn truncate(&mut self, offset: i64) {
        self.batches.retain(|b| b.base < offset);
        if let Some(last) = self.batches.last() {
            assert!(last.next <= offset, "truncation inside a batch");
        }
        self.epochs.retain(|(_, start)| *start < offset);
        // Truncation is a durable write: nothing unflushed remains past it.
        if self.unflushed_from.is_some_and(|u| u >= offset) {
            self.unflushed_from = None;
        }
    }

    pub fn flush(&mut self) {
        self.unflushed_from = None;
    }

    /// A crash: appends not yet flushed are lost. Returns the offset truncated to, if any.
    pub fn crash(&mut self) -> Option<i64> {
        let from = self.unflushed_from.take()?;
        self.truncate(from);
        Some(from)
    }

    /// The end offset that survives a crash.
    pub fn flushed_end_offset(&self) -> i64 {
        self.unflushed_from
            .unwrap_or_else(|| LogReader::end_offset(self).offset)
    }

    /// (base offset, next offset, bytes) of the batches with `from <= base < to`.
    pub fn batches_between(&self, from: i64, to: i64) -> Vec<(i64, i64, Bytes)> {
        let start = self.batches.partition_point(|b| b.base < from);
        self.batches[start..]
            .iter()
            .take_while(|b| b.base < to)
            .map(|b| (b.base, b.next, b.bytes.clone()))
            .collect()
    }

    /// Every (offset, epoch, batch bytes) — for comparing logs.
    pub fn batches(&self) -> Vec<(i64, i32, Bytes)> {
        self.batches
            .iter()
            .map(|b| (b.base, b.epoch, b.bytes.clone()))
            .collect()
    }

    /// The epoch of the batch starting at `base`, if there is one.
    pub fn batch_epoch(&self, base: i64) -> Option<i32> {
        let i = self.batches.partition_point(|b| b.base < base);
        self.batches
            .get(i)
            .filter(|b| b.base == base)
            .map(|b| b.epoch)
    }

    /// Installs a snapshot and empties the log up to it.
    pub fn add_snapshot(&mut self, id: OffsetAndEpoch, bytes: Bytes) {
        self.snapshots.insert((id.offset, id.epoch), bytes);
    }

    /// Kafka's truncateToLatestSnapshot after a download: the log restarts empty at `id`.
    pub fn install_snapshot(&mut self, id: OffsetAndEpoch, bytes: Bytes) {
        self.snapshots.clear();
        self.snapshots.insert((id.offset, id.epoch), bytes);
        self.batches.clear();
        self.epochs.clear();
        self.start_offset = id.offset;
        self.unflushed_from = None;
    }

    pub fn set_start_offset(&mut self, offset: i64) {
        self.batches.retain(|b| b.base >= offset);
        self.start_offset = offset;
    }
}

impl LogReader for MemLog {
    fn log_start_offset(&self) -> i64 {
        self.start_offset
    }

    fn end_offset(&self) -> OffsetAndEpoch {
        match self.batches.last() {
            Some(b) => OffsetAndEpoch::new(b.next, b.epoch),
            None => {
                let snap = self.latest_snapshot_id();
                OffsetAndEpoch::new(self.start_offset, snap.map_or(0, |s| s.epoch))
            }
        }
    }

    fn end_offset_for_epoch(&self, epoch: i32) -> OffsetAndEpoch {
        let leo = self.end_offset();
        let found = if self.epochs.last().is_some_and(|(e, _)| *e == epoch) {
            Some(OffsetAndEpoch::new(leo.offset, epoch))
        } else {
            match self.epochs.iter().find(|(e, _)| *e > epoch) {
                None => None,
                Some((_, higher_start)) => {
                    match self.epochs.iter().rev().find(|(e, _)| *e <= epoch) {
                        None => Some(OffsetAndEpoch::new(*higher_start, epoch)),
                        Some((floor, _)) => Some(OffsetAndEpoch::new(*higher_start, *floor)),
                    }
                }
            }
        };
        match (found, self.earliest_snapshot_id()) {
            (Some(f), Some(s)) if f.offset == s.offset && f.epoch == epoch => s,
            (Some(f), _) => f,
            // Kafka's KafkaMetadataLog: no cache entry → (log end offset, the requested epoch).
            (None, _) => OffsetAndEpoch::new(leo.offset, epoch),
        }
    }

    fn read(&self, offset: i64, max_bytes: usize) -> Result<Bytes, crate::raft::LogReadError> {
        let mut out = Vec::new();
        for b in self.batches.iter().filter(|b| b.next > offset) {
            if !out.is_empty() && out.len() + b.bytes.len() > max_bytes {
                break;
            }
            out.extend_from_slice(&b.bytes);
        }
        Ok(Bytes::from(out))
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
