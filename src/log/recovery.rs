//! Recovery of one segment on open, keeping what Kafka's recovery keeps.
//!
//! Kafka recovers the metadata log from offset 0 on every start (`KafkaMetadataLog` creates its
//! `UnifiedLog` with `recoveryPoint = 0` and `lastShutdownClean = false`), segment by segment
//! (`LogLoader.recoverLog`), each with `LogSegment.recover`. For every batch that one:
//!
//! - frames it (`FileLogInputStream.nextBatch`: fewer than 17 bytes left or a batch running
//!   past the end of the file ends the walk, a size below 14 is corrupt; a magic below 2 is
//!   read as a legacy batch, whose CRC then fails, any other magic as a v2 batch) and checks
//!   its size and CRC (`DefaultRecordBatch.ensureValid`); the CRC covers everything from the
//!   attributes on, so the base offset, batch length, partition leader epoch and magic are
//!   outside it;
//! - requires the batch's last offset to be relative to the segment base within
//!   `[0, Integer.MAX_VALUE]` (`ensureOffsetInRange`), else it splits the segment
//!   (`LocalLog.splitOverflowedSegment`);
//! - every 4096 bytes adds an offset index entry (the batch's last offset, which must be above
//!   the previous entry's, else `InvalidOffsetException`) and a time index entry (whose offset
//!   must not be below the previous one's);
//! - gives the leader epoch cache `assign(ple, baseOffset)` when the partition leader epoch is
//!   non-negative and above the cache's latest epoch. Nothing else is checked: offsets need not
//!   follow each other, epochs may go down, a negative epoch is kept.
//!
//! A bad batch cuts the segment there and `recoverLog` deletes every later segment. An
//! `InvalidOffsetException` makes `recoverLog` truncate the segment to its base offset, i.e.
//! empty it, and delete every later segment. Differences (see docs/interop.md), both cut here:
//! a batch whose offsets overflow the segment (Kafka splits the segment into out-of-order
//! segment files), and a batch whose magic byte is above 2 (Kafka keeps it as a v2 batch;
//! ferrokraft's readers accept only magic 2).

use std::path::Path;

use super::epoch_cache::EpochCache;
use super::index::INDEX_INTERVAL_BYTES;
use super::segment::Segment;
use super::LogError;
use crate::records::batch::MAX_BATCH_SIZE_BYTES;
use crate::records::{BatchView, FileFramer, FrameEnd};

/// Where and why recovery cut a segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SegmentCut {
    /// Byte position of the cut (0 when the segment was emptied).
    pub position: u64,
    /// What was wrong.
    pub reason: String,
}

/// Kafka's offset and time indexes as its recovery builds them, only to find where it would
/// throw `InvalidOffsetException` (`OffsetIndex.append`, `TimeIndex.maybeAppend`).
#[derive(Debug)]
struct KafkaIndexes {
    segment_base: i64,
    valid_bytes: u64,
    last_index_entry: u64,
    last_offset_entry: Option<i64>,
    /// `(timestamp, offset)` of the last time entry; Kafka starts it at `(-1, base)`.
    last_time_entry: (i64, i64),
    time_entries: usize,
    /// `maxTimestampAndOffsetSoFar`, from `TimestampOffset.UNKNOWN` = `(-1, -1)`.
    max_so_far: (i64, i64),
}

impl KafkaIndexes {
    fn new(segment_base: i64) -> Self {
        KafkaIndexes {
            segment_base,
            valid_bytes: 0,
            last_index_entry: 0,
            last_offset_entry: None,
            last_time_entry: (-1, segment_base),
            time_entries: 0,
            max_so_far: (-1, -1),
        }
    }

    /// One batch, in the order of `LogSegment.recover`; `Err` is the exception's message.
    fn batch(&mut self, view: &BatchView<'_>) -> Result<(), String> {
        if view.max_timestamp() > self.max_so_far.0 {
            self.max_so_far = (view.max_timestamp(), view.last_offset());
        }
        if self.valid_bytes - self.last_index_entry > INDEX_INTERVAL_BYTES {
            let offset = view.last_offset();
            if self.last_offset_entry.is_some_and(|last| offset <= last) {
                return Err(format!(
                    "offset index entry {offset} is not above the previous one {:?}",
                    self.last_offset_entry
                ));
            }
            self.last_offset_entry = Some(offset);
            self.time_entry()?;
            self.last_index_entry = self.valid_bytes;
        }
        self.valid_bytes += view.size_bytes() as u64;
        Ok(())
    }

    /// `TimeIndex.maybeAppend(maxTimestampSoFar, shallowOffsetOfMaxTimestampSoFar)`.
    fn time_entry(&mut self) -> Result<(), String> {
        let (ts, offset) = self.max_so_far;
        if self.time_entries > 0 && offset < self.last_time_entry.1 {
            return Err(format!(
                "time index offset {offset} is below the previous one {}",
                self.last_time_entry.1
            ));
        }
        if ts > self.last_time_entry.0 {
            self.last_time_entry = (ts, offset);
            self.time_entries += 1;
        }
        Ok(())
    }

    /// Whether `last_offset` can be relative to the segment base (`canConvertToRelativeOffset`).
    fn in_range(&self, last_offset: i64) -> bool {
        last_offset
            .checked_sub(self.segment_base)
            .is_some_and(|rel| (0..=i64::from(i32::MAX)).contains(&rel))
    }
}

/// Recovers `seg` (opened with `Segment::open_for_recovery`) as Kafka's `LogSegment.recover`
/// does, assigning epochs to `epochs`; `buf` is reused for every batch. Returns the cut, if
/// any; the caller then deletes every later segment. The file is cut and fsynced.
pub(super) fn recover_segment(
    dir: &Path,
    seg: &mut Segment,
    epochs: &mut EpochCache,
    buf: &mut Vec<u8>,
) -> Result<Option<SegmentCut>, LogError> {
    let len = seg
        .file()
        .metadata()
        .map_err(|e| LogError::io("stat", seg.log_path(), e))?
        .len();
    let mut kafka = KafkaIndexes::new(seg.base_offset());
    let mut cut: Option<SegmentCut> = None;
    let mut emptied = false;
    {
        let file = seg
            .file()
            .try_clone()
            .map_err(|e| LogError::io("dup", dir, e))?;
        let mut framer = FileFramer::new(&file, 0, len, MAX_BATCH_SIZE_BYTES);
        while let Some((pos, size)) = framer
            .next_batch_into(buf)
            .map_err(|e| LogError::io("read", dir, e))?
        {
            // The framer checked the size, magic and CRC.
            let Some(view) = buf.get(..size).and_then(|b| BatchView::new(b).ok()) else {
                cut = Some(SegmentCut {
                    position: pos,
                    reason: "unframeable batch".into(),
                });
                break;
            };
            if !kafka.in_range(view.last_offset()) {
                cut = Some(SegmentCut {
                    position: pos,
                    reason: format!(
                        "batch offsets {}..={} overflow segment {}",
                        view.base_offset(),
                        view.last_offset(),
                        seg.base_offset()
                    ),
                });
                break;
            }
            if let Err(reason) = kafka.batch(&view) {
                cut = Some(SegmentCut {
                    position: 0,
                    reason: format!("{reason} at byte {pos}; the segment is emptied as Kafka does"),
                });
                emptied = true;
                break;
            }
            let ple = view.partition_leader_epoch();
            if ple >= 0 && view.base_offset() >= 0 && epochs.latest().is_none_or(|l| ple > l.epoch)
            {
                epochs.assign(ple, view.base_offset())?;
            }
            seg.recover_batch(pos, &view)?;
        }
        if cut.is_none() {
            cut = match framer.end() {
                Some(FrameEnd::TornTail {
                    position,
                    available_bytes,
                }) => Some(SegmentCut {
                    position: *position,
                    reason: format!("torn tail: {available_bytes} bytes of an incomplete batch"),
                }),
                Some(FrameEnd::Corrupt { position, reason }) => Some(SegmentCut {
                    position: *position,
                    reason: reason.clone(),
                }),
                _ => None,
            };
        }
    }
    if cut.is_none() {
        // The final `timeIndex().maybeAppend(.., true)` of `LogSegment.recover` throws too.
        if let Err(reason) = kafka.time_entry() {
            cut = Some(SegmentCut {
                position: 0,
                reason: format!("{reason} at the end; the segment is emptied as Kafka does"),
            });
            emptied = true;
        }
    }
    if emptied {
        let base = seg.base_offset();
        seg.truncate_at(0, base)?;
    }
    // An empty segment cut to 0 keeps nothing to cut: Kafka counts only truncated bytes.
    if cut.as_ref().is_some_and(|c| c.position >= len) {
        cut = None;
    }
    seg.finish_recovery()?;
    Ok(cut)
}
