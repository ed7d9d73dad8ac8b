//! One log segment: `<base>.log` plus its `.index` and `.timeindex`.
//!
//! Index rules (Kafka's `LogSegment.append`): before adding an append's bytes, if more than
//! 4096 bytes were appended since the last entry, add an offset entry (largest offset of this
//! append, position where it starts) and a time entry (max timestamp so far, its offset) when
//! the timestamp grew; the first append of a segment never makes an entry. On roll and close a
//! final time entry for the max timestamp so far is added if it grew.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::index::{IndexFile, OffsetEntry, TimeEntry, INDEX_INTERVAL_BYTES};
use super::LogError;
use crate::records::BatchView;

/// File stem of a segment: the base offset in 20 digits.
pub fn segment_stem(base_offset: i64) -> String {
    format!("{base_offset:020}")
}

/// Summary of one append (one or more whole batches).
#[derive(Debug, Clone, Copy)]
pub struct AppendSummary {
    /// Last offset of the appended batches.
    pub last_offset: i64,
    /// Max timestamp over the batches.
    pub max_timestamp_ms: i64,
    /// Last offset of the first batch that reached `max_timestamp_ms`.
    pub offset_of_max_timestamp: i64,
}

impl AppendSummary {
    /// Summarises well-formed batches (`bytes` must frame cleanly; checked by the caller).
    pub fn of(batches: &[BatchView<'_>]) -> Option<Self> {
        let mut s: Option<AppendSummary> = None;
        for b in batches {
            let ts = b.max_timestamp();
            s = Some(match s {
                None => AppendSummary {
                    last_offset: b.last_offset(),
                    max_timestamp_ms: ts,
                    offset_of_max_timestamp: b.last_offset(),
                },
                Some(mut cur) => {
                    cur.last_offset = b.last_offset();
                    if ts > cur.max_timestamp_ms {
                        cur.max_timestamp_ms = ts;
                        cur.offset_of_max_timestamp = b.last_offset();
                    }
                    cur
                }
            });
        }
        s
    }
}

/// An open segment.
#[derive(Debug)]
pub struct Segment {
    base_offset: i64,
    log_path: PathBuf,
    log: File,
    size_bytes: u64,
    /// Offset after the last batch.
    next_offset: i64,
    index: IndexFile<OffsetEntry>,
    time_index: IndexFile<TimeEntry>,
    bytes_since_last_index_entry: u64,
    max_timestamp_so_far: Option<(i64, i64)>,
    /// Max timestamp of the first batch (Kafka's `rollingBasedTimestamp`): time-based rolling
    /// counts from it.
    first_batch_timestamp_ms: Option<i64>,
    /// Whether `log` has writes not yet fsynced.
    dirty: bool,
}

impl Segment {
    /// Creates an empty segment (fails if its `.log` exists).
    pub fn create(dir: &Path, base_offset: i64) -> Result<Self, LogError> {
        let log_path = dir.join(format!("{}.log", segment_stem(base_offset)));
        let log = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&log_path)
            .map_err(|e| LogError::io("create segment", &log_path, e))?;
        Self::with_file(dir, base_offset, log_path, log, 0)
    }

    /// Opens an existing `.log` for recovery with empty indexes; feed it every valid batch
    /// with `recover_batch`, then call `finish_recovery`.
    pub fn open_for_recovery(dir: &Path, base_offset: i64) -> Result<Self, LogError> {
        let log_path = dir.join(format!("{}.log", segment_stem(base_offset)));
        let log = OpenOptions::new()
            .read(true)
            .write(true)
            .open(&log_path)
            .map_err(|e| LogError::io("open segment", &log_path, e))?;
        Self::with_file(dir, base_offset, log_path, log, 0)
    }

    /// Indexes one recovered batch as its own append, like Kafka's `LogSegment.recover`.
    pub fn recover_batch(&mut self, position: u64, batch: &BatchView<'_>) -> Result<(), LogError> {
        self.first_batch_timestamp_ms
            .get_or_insert(batch.max_timestamp());
        self.note_append(
            position,
            batch.size_bytes() as u64,
            AppendSummary::of(&[*batch]),
        )?;
        self.size_bytes = position + batch.size_bytes() as u64;
        Ok(())
    }

    /// Cuts the file to the recovered bytes (dropping a torn or corrupt tail) and fsyncs.
    /// Unlike Kafka's `LogSegment.recover`, no final time index entry is added here (Kafka
    /// writes it into a preallocated file; here it would be the first write of a start): it
    /// comes with the next roll or close.
    pub fn finish_recovery(&mut self) -> Result<(), LogError> {
        let len = self
            .log
            .metadata()
            .map_err(|e| LogError::io("stat segment", &self.log_path, e))?
            .len();
        if len != self.size_bytes {
            self.log
                .set_len(self.size_bytes)
                .map_err(|e| LogError::io("truncate segment", &self.log_path, e))?;
        }
        self.dirty = true;
        self.flush()
    }

    fn with_file(
        dir: &Path,
        base_offset: i64,
        log_path: PathBuf,
        log: File,
        size_bytes: u64,
    ) -> Result<Self, LogError> {
        let stem = segment_stem(base_offset);
        Ok(Segment {
            base_offset,
            log_path,
            log,
            size_bytes,
            next_offset: base_offset,
            index: IndexFile::create(&dir.join(format!("{stem}.index")))?,
            time_index: IndexFile::create(&dir.join(format!("{stem}.timeindex")))?,
            bytes_since_last_index_entry: 0,
            max_timestamp_so_far: None,
            first_batch_timestamp_ms: None,
            dirty: true,
        })
    }

    /// Base offset.
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }
    /// Offset after the last batch.
    pub fn next_offset(&self) -> i64 {
        self.next_offset
    }
    /// Max timestamp of the segment's first batch, once it has one.
    pub fn first_batch_timestamp_ms(&self) -> Option<i64> {
        self.first_batch_timestamp_ms
    }

    /// `.log` size.
    pub fn size_bytes(&self) -> u64 {
        self.size_bytes
    }
    /// `.log` path.
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }
    /// Offset index entries.
    pub fn offset_index(&self) -> &[OffsetEntry] {
        self.index.entries()
    }

    fn note_append(
        &mut self,
        position: u64,
        len: u64,
        summary: Option<AppendSummary>,
    ) -> Result<(), LogError> {
        let Some(s) = summary else { return Ok(()) };
        if let Some((ts, _)) = self.max_timestamp_so_far {
            if s.max_timestamp_ms > ts {
                self.max_timestamp_so_far = Some((s.max_timestamp_ms, s.offset_of_max_timestamp));
            }
        } else {
            self.max_timestamp_so_far = Some((s.max_timestamp_ms, s.offset_of_max_timestamp));
        }
        if self.bytes_since_last_index_entry > INDEX_INTERVAL_BYTES {
            self.index.push(
                self.base_offset,
                OffsetEntry {
                    offset: s.last_offset,
                    position: position as u32,
                },
            )?;
            self.maybe_append_time_entry()?;
            self.bytes_since_last_index_entry = 0;
        }
        self.bytes_since_last_index_entry += len;
        self.next_offset = s.last_offset + 1;
        Ok(())
    }

    fn maybe_append_time_entry(&mut self) -> Result<(), LogError> {
        if let Some((ts, off)) = self.max_timestamp_so_far {
            let grows = self
                .time_index
                .entries()
                .last()
                .is_none_or(|e| ts > e.timestamp_ms && off >= e.offset);
            if grows {
                self.time_index.push(
                    self.base_offset,
                    TimeEntry {
                        timestamp_ms: ts,
                        offset: off,
                    },
                )?;
            }
        }
        Ok(())
    }

    /// Appends whole batches (already validated and framed by the caller).
    pub fn append(&mut self, bytes: &[u8], batches: &[BatchView<'_>]) -> Result<(), LogError> {
        if let Err(e) = self.log.write_all_at(bytes, self.size_bytes) {
            // A short write (disk full, file size limit) may have left part of the batch
            // behind; cut it so the file ends on a batch boundary. If that fails too, recovery
            // cuts the torn tail on the next open.
            let _ = self.log.set_len(self.size_bytes);
            return Err(LogError::io("append", &self.log_path, e));
        }
        let position = self.size_bytes;
        self.size_bytes += bytes.len() as u64;
        self.dirty = true;
        if let Some(first) = batches.first() {
            self.first_batch_timestamp_ms
                .get_or_insert(first.max_timestamp());
        }
        self.note_append(position, bytes.len() as u64, AppendSummary::of(batches))
    }

    /// Reads `len` bytes at `position`.
    pub fn read_at(&self, position: u64, len: usize) -> Result<Vec<u8>, LogError> {
        let mut buf = vec![0u8; len];
        self.log
            .read_exact_at(&mut buf, position)
            .map_err(|e| LogError::io("read", &self.log_path, e))?;
        Ok(buf)
    }

    /// The file handle (for framing reads).
    pub fn file(&self) -> &File {
        &self.log
    }

    /// Largest indexed position at or before the batch holding `offset` (a scan start).
    pub fn index_lookup(&self, offset: i64) -> u64 {
        // An entry's offset is the last offset of the append at its position, so only entries
        // with offset < target are guaranteed to start before the target batch.
        self.index
            .entries()
            .iter()
            .take_while(|e| e.offset < offset)
            .last()
            .map_or(0, |e| u64::from(e.position))
    }

    /// Cuts the segment at `position` (a batch boundary) where `next_offset` is the new end;
    /// index entries at or past the cut are dropped.
    pub fn truncate_at(&mut self, position: u64, next_offset: i64) -> Result<(), LogError> {
        self.log
            .set_len(position)
            .map_err(|e| LogError::io("truncate", &self.log_path, e))?;
        self.size_bytes = position;
        self.next_offset = next_offset;
        if position == 0 {
            self.first_batch_timestamp_ms = None;
        }
        let keep = self
            .index
            .entries()
            .iter()
            .take_while(|e| u64::from(e.position) < position && e.offset < next_offset)
            .count();
        self.index.truncate_entries(keep)?;
        let keep_t = self
            .time_index
            .entries()
            .iter()
            .take_while(|e| e.offset < next_offset)
            .count();
        self.time_index.truncate_entries(keep_t)?;
        // Kafka resets these after truncation; the next entry comes after 4096 more bytes.
        self.bytes_since_last_index_entry = 0;
        self.max_timestamp_so_far = self
            .time_index
            .entries()
            .last()
            .map(|e| (e.timestamp_ms, e.offset));
        self.dirty = true;
        Ok(())
    }

    /// Adds the final time index entry (roll / close), as Kafka's `onBecomeInactiveSegment`.
    pub fn seal(&mut self) -> Result<(), LogError> {
        self.maybe_append_time_entry()
    }

    /// Fsyncs the log and both indexes.
    pub fn flush(&mut self) -> Result<(), LogError> {
        if self.dirty {
            self.log
                .sync_all()
                .map_err(|e| LogError::io("fsync", &self.log_path, e))?;
            self.dirty = false;
        }
        self.index.flush()?;
        self.time_index.flush()
    }

    /// Paths of the three files.
    pub fn paths(&self) -> [PathBuf; 3] {
        [
            self.log_path.clone(),
            self.index.path().to_path_buf(),
            self.time_index.path().to_path_buf(),
        ]
    }
}
