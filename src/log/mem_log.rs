//! An in-memory log with the same rules as `FileLog`, for deterministic simulation.
//!
//! `crash()` models a power loss: batches above the flushed offset are lost, and the epoch
//! cache is reconciled the way `FileLog` recovery does it.

use super::epoch_cache::{EpochCache, EpochEntry};
use super::validate::{check_follower, end_offset_for_epoch, frame_all, stamp_leader};
use super::{AppendInfo, LocalLog, LogError, LogRead, OffsetAndEpoch};

#[derive(Debug, Clone)]
struct MemBatch {
    base_offset: i64,
    next_offset: i64,
    epoch: i32,
    bytes: bytes::Bytes,
}

/// The in-memory log.
#[derive(Debug, Clone, Default)]
pub struct MemLog {
    batches: Vec<MemBatch>,
    start_offset: i64,
    epochs: EpochCache,
    flushed_offset: i64,
}

impl MemLog {
    /// An empty log at offset 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// Loses everything not flushed, as a crash would.
    pub fn crash(&mut self) {
        let flushed = self.flushed_offset;
        self.batches.retain(|b| b.next_offset <= flushed);
        let leo = self.end_offset();
        self.epochs.truncate_from_end(leo);
        for b in &self.batches {
            if self.epochs.latest().is_none_or(|l| b.epoch > l.epoch) {
                // Epochs stored in batches are ≥ 0 (checked on append).
                let _ = self.epochs.assign(b.epoch, b.base_offset);
            }
        }
        self.flushed_offset = leo;
    }

    /// The batches whose base offset is ≥ `from`, in order: (base offset, next offset,
    /// partition leader epoch, bytes). For tests and the simulation's invariants.
    pub fn batches_from(
        &self,
        from: i64,
    ) -> impl Iterator<Item = (i64, i64, i32, &bytes::Bytes)> + '_ {
        let start = self.batches.partition_point(|b| b.base_offset < from);
        self.batches[start..]
            .iter()
            .map(|b| (b.base_offset, b.next_offset, b.epoch, &b.bytes))
    }

    fn push(&mut self, bytes: &[u8]) -> Result<AppendInfo, LogError> {
        let views = frame_all(bytes)?;
        let (Some(first), Some(last)) = (views.first(), views.last()) else {
            return Err(LogError::InvalidAppend("no batches".into()));
        };
        let info = AppendInfo {
            first_offset: first.base_offset(),
            last_offset: last.last_offset(),
        };
        for v in &views {
            let ple = v.partition_leader_epoch();
            if self.epochs.latest().is_none_or(|l| ple != l.epoch) {
                self.epochs.assign(ple, v.base_offset())?;
            }
            self.batches.push(MemBatch {
                base_offset: v.base_offset(),
                next_offset: v.next_offset(),
                epoch: ple,
                bytes: bytes::Bytes::copy_from_slice(v.as_bytes()),
            });
        }
        Ok(info)
    }
}

impl LocalLog for MemLog {
    fn start_offset(&self) -> i64 {
        self.start_offset
    }
    fn end_offset(&self) -> i64 {
        self.batches
            .last()
            .map_or(self.start_offset, |b| b.next_offset)
    }
    fn flushed_offset(&self) -> i64 {
        self.flushed_offset
    }
    fn last_epoch(&self) -> Option<i32> {
        self.epochs.latest().map(|e| e.epoch)
    }
    fn epoch_entries(&self) -> Vec<EpochEntry> {
        self.epochs.entries().to_vec()
    }
    fn end_offset_for_epoch(&self, epoch: i32) -> Option<OffsetAndEpoch> {
        end_offset_for_epoch(&self.epochs, epoch, self.end_offset())
    }
    fn read(&self, offset: i64, max_bytes: usize) -> Result<LogRead, LogError> {
        let leo = self.end_offset();
        if offset < self.start_offset || offset > leo {
            return Err(LogError::OffsetOutOfRange {
                offset,
                start_offset: self.start_offset,
                end_offset: leo,
            });
        }
        let mut out = LogRead {
            start_offset: offset,
            bytes: Vec::new(),
        };
        for b in self.batches.iter().filter(|b| b.next_offset > offset) {
            if out.bytes.is_empty() {
                out.start_offset = b.base_offset;
            } else if out.bytes.len() + b.bytes.len() > max_bytes {
                break;
            }
            out.bytes.extend_from_slice(&b.bytes);
        }
        Ok(out)
    }

    fn append_as_leader(&mut self, batches: &[u8], epoch: i32) -> Result<AppendInfo, LogError> {
        let stamped = stamp_leader(batches, self.end_offset(), epoch, self.last_epoch())?;
        self.push(&stamped)
    }

    fn append_as_follower(
        &mut self,
        batches: &[u8],
        fetch_epoch: i32,
    ) -> Result<AppendInfo, LogError> {
        let views = frame_all(batches)?;
        check_follower(&views, self.end_offset(), self.last_epoch(), fetch_epoch)?;
        self.push(batches)
    }

    fn initialize_leader_epoch(&mut self, epoch: i32) -> Result<(), LogError> {
        if self.last_epoch().is_some_and(|l| epoch < l) {
            return Err(LogError::InvalidEpoch(format!(
                "new leader epoch {epoch} is below {:?}",
                self.last_epoch()
            )));
        }
        self.epochs.assign(epoch, self.end_offset())?;
        Ok(())
    }

    fn truncate_to(&mut self, offset: i64) -> Result<(), LogError> {
        if offset >= self.end_offset() {
            return Ok(());
        }
        if offset < self.start_offset {
            return self.truncate_fully_and_start_at(offset);
        }
        self.batches.retain(|b| b.next_offset <= offset);
        let leo = self.end_offset();
        self.epochs.truncate_from_end(leo);
        self.flushed_offset = self.flushed_offset.min(leo);
        Ok(())
    }

    fn truncate_fully_and_start_at(&mut self, offset: i64) -> Result<(), LogError> {
        if offset < 0 {
            return Err(LogError::InvalidTruncation {
                offset,
                reason: "negative offset".into(),
            });
        }
        self.batches.clear();
        self.start_offset = offset;
        self.epochs = EpochCache::default();
        self.flushed_offset = offset;
        Ok(())
    }

    fn increment_start_offset(&mut self, offset: i64) -> Result<bool, LogError> {
        if offset <= self.start_offset {
            return Ok(false);
        }
        if offset > self.end_offset() {
            return Err(LogError::OffsetOutOfRange {
                offset,
                start_offset: self.start_offset,
                end_offset: self.end_offset(),
            });
        }
        self.start_offset = offset;
        self.batches.retain(|b| b.next_offset > offset);
        self.epochs.truncate_from_start(offset);
        Ok(true)
    }

    fn flush(&mut self) -> Result<(), LogError> {
        self.flushed_offset = self.end_offset();
        Ok(())
    }
}
