//! The on-disk log: segments in the partition directory, the epoch checkpoint and
//! partition.metadata.
//!
//! Open = recovery, as Kafka does for the metadata log on every start (recovery point 0): every
//! batch of every segment is framed and checked as Kafka's `LogSegment.recover` does (size, CRC,
//! offsets within the segment; see [`super::recovery`]): epochs and offsets outside the CRC are
//! kept as Kafka keeps them. At the first torn or corrupt batch the segment is cut there, later
//! segments are deleted, and what was cut is logged. Indexes are rebuilt, the epoch cache is
//! reconciled with the batches, and everything is fsynced.

use std::fs;
use std::path::{Path, PathBuf};

use super::epoch_cache::{EpochCache, EpochCheckpointFile, EpochEntry};
use super::partition_metadata::ensure_partition_metadata;
use super::recovery::recover_segment;
use super::segment::Segment;
use super::validate::{check_follower, end_offset_for_epoch, frame_all, stamp_leader};
use super::{AppendInfo, LocalLog, LogError, LogRead, OffsetAndEpoch};
use crate::durable::fsync_dir;
use crate::records::batch::MAX_BATCH_SIZE_BYTES;
use crate::records::{BatchView, FileFramer, FrameEnd};

/// Settings of the metadata log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogConfig {
    /// `metadata.log.segment.bytes` (default 1 GiB).
    pub segment_bytes: u64,
    /// `metadata.log.segment.ms` (default 7 days): an append whose max timestamp is this much
    /// past the active segment's first batch rolls a new segment first (Kafka's
    /// `LogSegment.shouldRoll`; the metadata log has no jitter).
    pub segment_ms: u64,
}

impl Default for LogConfig {
    fn default() -> Self {
        LogConfig {
            segment_bytes: 1024 * 1024 * 1024,
            segment_ms: 7 * 24 * 60 * 60 * 1000,
        }
    }
}

/// What recovery cut on open.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecoveryReport {
    /// (segment file, byte position, reason) of each cut.
    pub cuts: Vec<(PathBuf, u64, String)>,
    /// Files removed (later segments, stray `.deleted`, orphan indexes).
    pub removed: Vec<PathBuf>,
    /// Index files that were missing or corrupt, and the epoch checkpoint when recovery
    /// changed or recreated it (each logged at WARN).
    pub rebuilt: Vec<PathBuf>,
}

/// The `.index` and `.timeindex` of a segment as found (`None` when missing).
type OldIndexes = [(PathBuf, Option<Vec<u8>>); 2];

fn read_indexes(dir: &Path, stem: &str) -> Result<OldIndexes, LogError> {
    let read = |ext: &str| -> Result<(PathBuf, Option<Vec<u8>>), LogError> {
        let p = dir.join(format!("{stem}.{ext}"));
        match fs::read(&p) {
            Ok(b) => Ok((p, Some(b))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok((p, None)),
            Err(e) => Err(LogError::io("read index", &p, e)),
        }
    };
    Ok([read("index")?, read("timeindex")?])
}

/// Why an index as found on disk is corrupt (Kafka's `CorruptIndexException` rules of
/// `OffsetIndex`/`TimeIndex.sanityCheck`: a size that is not a whole number of entries, and here
/// also offsets or timestamps that go backwards); `None` when it is sound. Kafka preallocates
/// the active segment's indexes with zeros, so trailing zeros are left out. An index that is
/// sound but differs from the rebuilt one (built per append rather than per batch) is normal.
fn index_problem(bytes: &[u8], time: bool) -> Option<String> {
    let end = bytes.iter().rposition(|&x| x != 0).map_or(0, |i| i + 1);
    let size = if time { 12 } else { 8 };
    let whole = end.div_ceil(size) * size;
    if whole > bytes.len() {
        return Some(format!(
            "its size {} is not a multiple of {size}",
            bytes.len()
        ));
    }
    let mut last: Option<(i64, i32)> = None;
    for e in bytes[..whole].chunks_exact(size) {
        let (key, rel) = if time {
            let ts = e[..8].try_into().map(i64::from_be_bytes).unwrap_or(0);
            let rel = e[8..12].try_into().map(i32::from_be_bytes).unwrap_or(0);
            (ts, rel)
        } else {
            let rel = e[..4].try_into().map(i32::from_be_bytes).unwrap_or(0);
            (i64::from(rel), rel)
        };
        if rel < 0 || last.is_some_and(|(k, r)| key < k || rel < r || (!time && rel == r)) {
            return Some("its entries go backwards".into());
        }
        last = Some((key, rel));
    }
    None
}

/// Logs at WARN (and reports) each index that recovery rebuilt because it was missing or
/// corrupt ([`index_problem`]).
fn note_rebuilt_indexes(old: OldIndexes, report: &mut RecoveryReport) {
    for (i, (path, before)) in old.into_iter().enumerate() {
        let why = match before {
            None => Some("was missing".to_string()),
            Some(b) => index_problem(&b, i == 1).map(|p| format!("was corrupt: {p}")),
        };
        if let Some(why) = why {
            tracing::warn!(
                "Rebuilt index file {} during recovery: it {why}",
                path.display()
            );
            report.rebuilt.push(path);
        }
    }
}

/// The file-backed `__cluster_metadata-0` log.
#[derive(Debug)]
pub struct FileLog {
    dir: PathBuf,
    config: LogConfig,
    segments: Vec<Segment>,
    start_offset: i64,
    epochs: EpochCache,
    epoch_file: EpochCheckpointFile,
    flushed_offset: i64,
    dir_dirty: bool,
}

fn remove(path: &Path, report: &mut RecoveryReport) -> Result<(), LogError> {
    fs::remove_file(path).map_err(|e| LogError::io("remove", path, e))?;
    report.removed.push(path.to_path_buf());
    Ok(())
}

impl FileLog {
    /// Opens (creating if needed) and recovers the log in `dir` (the partition directory).
    pub fn open(dir: &Path, config: LogConfig) -> Result<(FileLog, RecoveryReport), LogError> {
        fs::create_dir_all(dir).map_err(|e| LogError::io("create dir", dir, e))?;
        ensure_partition_metadata(dir)?;
        let mut report = RecoveryReport::default();
        let mut bases = Vec::new();
        let mut stems_with_index = Vec::new();
        for entry in fs::read_dir(dir).map_err(|e| LogError::io("list", dir, e))? {
            let entry = entry.map_err(|e| LogError::io("list", dir, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            if (name.ends_with(".deleted") && !name.ends_with(".checkpoint.deleted"))
                || name.ends_with(".cleaned")
                || name.ends_with(".swap")
            {
                remove(&path, &mut report)?;
            } else if let Some(stem) = name.strip_suffix(".log") {
                if let Some(base) = parse_stem(stem) {
                    bases.push(base);
                }
            } else if let Some(stem) = name
                .strip_suffix(".index")
                .or_else(|| name.strip_suffix(".timeindex"))
            {
                stems_with_index.push((stem.to_string(), path));
            }
        }
        bases.sort_unstable();
        for (stem, path) in stems_with_index {
            if parse_stem(&stem).is_some_and(|b| !bases.contains(&b)) {
                remove(&path, &mut report)?;
            }
        }
        let epoch_file = EpochCheckpointFile::new(dir);
        let checkpoint_found = epoch_file.path().exists();
        let mut epochs = epoch_file.read()?;
        let original_epochs = epochs.clone();
        let mut segments: Vec<Segment> = Vec::new();
        let mut cut = false;
        // One buffer for every batch of every segment (see FileFramer::next_batch_into).
        let mut read_buf = Vec::new();
        // Kafka's LogLoader does not check that a segment starts where the previous one ends:
        // a gap or an overlap (a damaged last base offset) is kept.
        for base in bases {
            let stem = super::segment::segment_stem(base);
            if cut {
                for ext in ["log", "index", "timeindex"] {
                    let p = dir.join(format!("{stem}.{ext}"));
                    if p.exists() {
                        remove(&p, &mut report)?;
                    }
                }
                continue;
            }
            let old_indexes = read_indexes(dir, &stem)?;
            let mut seg = Segment::open_for_recovery(dir, base)?;
            let before = seg
                .file()
                .metadata()
                .map_err(|e| LogError::io("stat", seg.log_path(), e))?
                .len();
            if let Some(c) = recover_segment(dir, &mut seg, &mut epochs, &mut read_buf)? {
                tracing::warn!(
                    segment = %seg.log_path().display(),
                    position = c.position,
                    cut_bytes = before.saturating_sub(c.position),
                    reason = %c.reason,
                    "cutting the metadata log during recovery"
                );
                report
                    .cuts
                    .push((seg.log_path().to_path_buf(), c.position, c.reason));
                cut = true;
            }
            note_rebuilt_indexes(old_indexes, &mut report);
            segments.push(seg);
        }
        if segments.is_empty() {
            segments.push(Segment::create(dir, 0)?);
        }
        let start_offset = segments[0].base_offset();
        let leo = segments.last().map_or(0, Segment::next_offset);
        epochs.truncate_from_end(leo);
        epochs.truncate_from_start(start_offset);
        if epochs != original_epochs || (!checkpoint_found && !epochs.entries().is_empty()) {
            tracing::warn!(
                "Rebuilt {} from the log during recovery: {:?} became {:?}{}",
                epoch_file.path().display(),
                original_epochs.entries(),
                epochs.entries(),
                if checkpoint_found {
                    ""
                } else {
                    " (the file was missing)"
                }
            );
            epoch_file.write(&epochs)?;
            report.rebuilt.push(epoch_file.path().to_path_buf());
        }
        fsync_dir(dir).map_err(|e| LogError::io("fsync dir", dir, e))?;
        let log = FileLog {
            dir: dir.to_path_buf(),
            config,
            segments,
            start_offset,
            epochs,
            epoch_file,
            flushed_offset: leo,
            dir_dirty: false,
        };
        Ok((log, report))
    }

    /// Seals the active segment (final time index entry) and flushes: a clean shutdown.
    pub fn close(mut self) -> Result<(), LogError> {
        if let Some(s) = self.segments.last_mut() {
            s.seal()?;
        }
        self.flush()
    }

    /// The partition directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Bytes in all segment files (Kafka's `UnifiedLog.size`, what size retention counts).
    pub fn size_bytes(&self) -> u64 {
        self.segments.iter().map(Segment::size_bytes).sum()
    }

    /// Base offsets of the segments.
    pub fn segment_bases(&self) -> Vec<i64> {
        self.segments.iter().map(Segment::base_offset).collect()
    }

    /// Every segment's offset index entries (tests).
    #[cfg(test)]
    pub(crate) fn segments_index_entries(&self) -> Vec<Vec<super::index::OffsetEntry>> {
        self.segments
            .iter()
            .map(|s| s.offset_index().to_vec())
            .collect()
    }

    fn active(&mut self) -> Result<&mut Segment, LogError> {
        self.segments
            .last_mut()
            .ok_or_else(|| LogError::InvalidAppend("log has no segment".into()))
    }

    fn append_views(
        &mut self,
        bytes: &[u8],
        views: &[BatchView<'_>],
    ) -> Result<AppendInfo, LogError> {
        let (Some(first), Some(last)) = (views.first(), views.last()) else {
            return Err(LogError::InvalidAppend("no batches".into()));
        };
        let (first_offset, last_offset) = (first.base_offset(), last.last_offset());
        let seg_bytes = self.config.segment_bytes;
        let seg_ms = self.config.segment_ms;
        let active = self.active()?;
        let too_big =
            active.size_bytes() > 0 && active.size_bytes() + bytes.len() as u64 > seg_bytes;
        let overflow = last_offset - active.base_offset() > i64::from(i32::MAX);
        let max_timestamp = views
            .iter()
            .map(BatchView::max_timestamp)
            .max()
            .unwrap_or(-1);
        let timed_out = active.size_bytes() > 0
            && active.first_batch_timestamp_ms().is_some_and(|first| {
                max_timestamp.saturating_sub(first) > i64::try_from(seg_ms).unwrap_or(i64::MAX)
            });
        if too_big || overflow || timed_out {
            self.roll(first_offset)?;
        }
        // The epoch checkpoint goes first, as in Kafka: recovery trims it back to the LEO.
        let mut changed = false;
        for v in views {
            let ple = v.partition_leader_epoch();
            if self.epochs.latest().is_none_or(|l| ple != l.epoch) {
                changed |= self.epochs.assign(ple, v.base_offset())?;
            }
        }
        if changed {
            self.epoch_file.write(&self.epochs)?;
        }
        self.active()?.append(bytes, views)?;
        Ok(AppendInfo {
            first_offset,
            last_offset,
        })
    }

    fn roll(&mut self, base: i64) -> Result<(), LogError> {
        let active = self.active()?;
        active.seal()?;
        // Kafka flushes the old segment asynchronously; doing it now keeps flush() cheap.
        active.flush()?;
        let seg = Segment::create(&self.dir, base)?;
        self.segments.push(seg);
        self.dir_dirty = true;
        Ok(())
    }

    fn delete_segment_files(&self, seg: &Segment) -> Result<(), LogError> {
        // Kafka's two-step delete: a crash between the steps leaves only `.deleted` files,
        // which recovery removes.
        for p in seg.paths() {
            let mut d = p.clone().into_os_string();
            d.push(".deleted");
            let d = PathBuf::from(d);
            fs::rename(&p, &d).map_err(|e| LogError::io("rename", &p, e))?;
            fs::remove_file(&d).map_err(|e| LogError::io("remove", &d, e))?;
        }
        Ok(())
    }

    fn persist_epochs(&self) -> Result<(), LogError> {
        self.epoch_file.write(&self.epochs)
    }
}

fn parse_stem(stem: &str) -> Option<i64> {
    if stem.len() == 20 && stem.bytes().all(|b| b.is_ascii_digit()) {
        stem.parse().ok()
    } else {
        None
    }
}

impl LocalLog for FileLog {
    fn start_offset(&self) -> i64 {
        self.start_offset
    }

    fn end_offset(&self) -> i64 {
        self.segments
            .last()
            .map_or(self.start_offset, Segment::next_offset)
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
        if offset == leo {
            return Ok(out);
        }
        // Batch headers locate the range of whole batches to send (at least one, then as
        // many as fit in `max_bytes`); the range is read in one go. Bodies were checked when
        // appended or recovered, and the follower checks every CRC again (Kafka's leader
        // sends file ranges unread).
        let Some((seg, mut framer)) = self.walk_from(offset) else {
            return Ok(out);
        };
        let mut range: Option<(u64, u64)> = None;
        while let Some(h) = framer
            .next_header()
            .map_err(|e| LogError::io("read", seg.log_path(), e))?
        {
            if h.last_offset < offset {
                continue;
            }
            let end = h.position + h.size_bytes as u64;
            match range {
                None => {
                    out.start_offset = h.base_offset;
                    range = Some((h.position, end));
                }
                Some((start, _)) if end - start > max_bytes as u64 => break,
                Some((start, _)) => range = Some((start, end)),
            }
        }
        corrupt_end(seg, &framer)?;
        if let Some((start, end)) = range {
            out.bytes = seg.read_at(start, (end - start) as usize)?;
        }
        Ok(out)
    }

    fn append_as_leader(&mut self, batches: &[u8], epoch: i32) -> Result<AppendInfo, LogError> {
        let stamped = stamp_leader(batches, self.end_offset(), epoch, self.last_epoch())?;
        let views = frame_all(&stamped)?;
        self.append_views(&stamped, &views)
    }

    fn append_as_follower(
        &mut self,
        batches: &[u8],
        fetch_epoch: i32,
    ) -> Result<AppendInfo, LogError> {
        let views = frame_all(batches)?;
        check_follower(&views, self.end_offset(), self.last_epoch(), fetch_epoch)?;
        self.append_views(batches, &views)
    }

    fn initialize_leader_epoch(&mut self, epoch: i32) -> Result<(), LogError> {
        if self.last_epoch().is_some_and(|l| epoch < l) {
            return Err(LogError::InvalidEpoch(format!(
                "new leader epoch {epoch} is below {:?}",
                self.last_epoch()
            )));
        }
        if self.epochs.assign(epoch, self.end_offset())? {
            self.persist_epochs()?;
        }
        Ok(())
    }

    fn truncate_to(&mut self, offset: i64) -> Result<(), LogError> {
        if offset >= self.end_offset() {
            return Ok(());
        }
        if offset < self.start_offset {
            return self.truncate_fully_and_start_at(offset);
        }
        while self.segments.len() > 1
            && self
                .segments
                .last()
                .is_some_and(|s| s.base_offset() > offset)
        {
            if let Some(seg) = self.segments.pop() {
                self.delete_segment_files(&seg)?;
            }
        }
        let seg = self.active()?;
        // Cut before the batch holding `offset` (Kafka's LogSegment.truncateTo).
        let mut framer = FileFramer::new(seg.file(), 0, seg.size_bytes(), MAX_BATCH_SIZE_BYTES);
        let mut cut = (seg.size_bytes(), seg.next_offset());
        while let Some((pos, bytes)) = framer
            .next_batch()
            .map_err(|e| LogError::io("read", seg.log_path(), e))?
        {
            if let Ok(v) = BatchView::new(&bytes) {
                if v.last_offset() >= offset {
                    cut = (pos, v.base_offset());
                    break;
                }
            }
        }
        seg.truncate_at(cut.0, cut.1)?;
        seg.flush()?;
        let leo = self.end_offset();
        if self.epochs.truncate_from_end(leo) {
            self.persist_epochs()?;
        }
        self.flushed_offset = self.flushed_offset.min(leo);
        fsync_dir(&self.dir).map_err(|e| LogError::io("fsync dir", &self.dir, e))?;
        Ok(())
    }

    fn truncate_fully_and_start_at(&mut self, offset: i64) -> Result<(), LogError> {
        if offset < 0 {
            return Err(LogError::InvalidTruncation {
                offset,
                reason: "negative offset".into(),
            });
        }
        for seg in std::mem::take(&mut self.segments) {
            self.delete_segment_files(&seg)?;
        }
        self.segments.push(Segment::create(&self.dir, offset)?);
        self.start_offset = offset;
        self.epochs = EpochCache::default();
        self.persist_epochs()?;
        self.flushed_offset = offset;
        fsync_dir(&self.dir).map_err(|e| LogError::io("fsync dir", &self.dir, e))?;
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
        while self.segments.len() > 1 && self.segments[1].base_offset() <= offset {
            let seg = self.segments.remove(0);
            self.delete_segment_files(&seg)?;
        }
        if self.epochs.truncate_from_start(offset) {
            self.persist_epochs()?;
        }
        Ok(true)
    }

    fn flush(&mut self) -> Result<(), LogError> {
        for seg in &mut self.segments {
            seg.flush()?;
        }
        if self.dir_dirty {
            fsync_dir(&self.dir).map_err(|e| LogError::io("fsync dir", &self.dir, e))?;
            self.dir_dirty = false;
        }
        self.flushed_offset = self.end_offset();
        Ok(())
    }
}

impl FileLog {
    /// The control batches among the whole batches from `offset` to the end of the segment
    /// holding it, stopping once `max_bytes` of them are collected; and the offset after the
    /// last batch looked at. Only batch headers and control batches are read: at start-up
    /// the voter history needs the log's control records, and reading every data batch of a
    /// large log again doubled the start-up's reading.
    pub fn read_control_batches(
        &self,
        offset: i64,
        max_bytes: usize,
    ) -> Result<(Vec<u8>, i64), LogError> {
        let mut out = Vec::new();
        let mut next = offset;
        let Some((seg, mut framer)) = self.walk_from(offset) else {
            return Ok((out, next));
        };
        while let Some(h) = framer
            .next_header()
            .map_err(|e| LogError::io("read", seg.log_path(), e))?
        {
            if h.last_offset < offset {
                continue;
            }
            if h.is_control {
                out.extend_from_slice(&seg.read_at(h.position, h.size_bytes)?);
            }
            next = h.last_offset + 1;
            if out.len() >= max_bytes {
                break;
            }
        }
        corrupt_end(seg, &framer)?;
        Ok((out, next))
    }

    /// The segment holding `offset`, and a batch walk from its last index entry before it.
    fn walk_from(&self, offset: i64) -> Option<(&Segment, FileFramer<'_>)> {
        // Kafka's LocalLog.read: the floor segment, else the next one up (segments need not
        // be contiguous after recovery).
        let seg = self
            .segments
            .iter()
            .rev()
            .find(|s| s.base_offset() <= offset && s.next_offset() > offset)
            .or_else(|| self.segments.iter().find(|s| s.base_offset() > offset))?;
        let framer = FileFramer::new(
            seg.file(),
            seg.index_lookup(offset),
            seg.size_bytes(),
            MAX_BATCH_SIZE_BYTES,
        );
        Some((seg, framer))
    }
}

/// A walk that stopped on a corrupt batch is an error naming the segment and position.
fn corrupt_end(seg: &Segment, framer: &FileFramer<'_>) -> Result<(), LogError> {
    match framer.end() {
        Some(FrameEnd::Corrupt { position, reason }) => Err(LogError::Corrupt {
            path: seg.log_path().to_path_buf(),
            position: *position,
            reason: reason.clone(),
        }),
        _ => Ok(()),
    }
}
