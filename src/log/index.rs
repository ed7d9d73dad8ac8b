//! `.index` and `.timeindex` files in Kafka's layout.
//!
//! `.index`: 8-byte entries `int32 relativeOffset, int32 position`. `.timeindex`: 12-byte
//! entries `int64 timestamp, int32 relativeOffset`. Kafka preallocates and mmaps them and trims
//! on roll/close; we write them unpreallocated, which is the trimmed form Kafka leaves behind.
//! Both are derived data: they are rebuilt from the `.log` on every open, as Kafka does for the
//! metadata log.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::LogError;

/// Bytes between offset index entries (`index.interval.bytes`).
pub const INDEX_INTERVAL_BYTES: u64 = 4096;

/// An append-only index file with its entries in memory.
#[derive(Debug)]
pub struct IndexFile<E> {
    path: PathBuf,
    file: File,
    entries: Vec<E>,
    dirty: bool,
}

/// An offset index entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetEntry {
    /// Absolute offset.
    pub offset: i64,
    /// Byte position of the batch in the `.log`.
    pub position: u32,
}

/// A time index entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeEntry {
    /// Max timestamp so far.
    pub timestamp_ms: i64,
    /// Absolute offset of the batch that reached it.
    pub offset: i64,
}

/// Encoding of one entry kind.
pub trait IndexEntry: Copy {
    /// Bytes per entry.
    const SIZE: usize;
    /// Encodes relative to the segment base offset.
    fn encode(&self, base_offset: i64, out: &mut Vec<u8>);
}

impl IndexEntry for OffsetEntry {
    const SIZE: usize = 8;
    fn encode(&self, base_offset: i64, out: &mut Vec<u8>) {
        out.extend_from_slice(&((self.offset - base_offset) as i32).to_be_bytes());
        out.extend_from_slice(&(self.position as i32).to_be_bytes());
    }
}

impl IndexEntry for TimeEntry {
    const SIZE: usize = 12;
    fn encode(&self, base_offset: i64, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.timestamp_ms.to_be_bytes());
        out.extend_from_slice(&((self.offset - base_offset) as i32).to_be_bytes());
    }
}

impl<E: IndexEntry> IndexFile<E> {
    /// Creates (truncating) the index file.
    pub fn create(path: &Path) -> Result<Self, LogError> {
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)
            .map_err(|e| LogError::io("create index", path, e))?;
        Ok(IndexFile {
            path: path.to_path_buf(),
            file,
            entries: Vec::new(),
            dirty: true,
        })
    }

    /// Entries in memory.
    pub fn entries(&self) -> &[E] {
        &self.entries
    }

    /// Appends one entry to memory and the file.
    pub fn push(&mut self, base_offset: i64, entry: E) -> Result<(), LogError> {
        let mut buf = Vec::with_capacity(E::SIZE);
        entry.encode(base_offset, &mut buf);
        let at = (self.entries.len() * E::SIZE) as u64;
        self.file
            .write_all_at(&buf, at)
            .map_err(|e| LogError::io("append index", &self.path, e))?;
        self.entries.push(entry);
        self.dirty = true;
        Ok(())
    }

    /// Keeps the first `n` entries.
    pub fn truncate_entries(&mut self, n: usize) -> Result<(), LogError> {
        self.entries.truncate(n);
        self.file
            .set_len((n * E::SIZE) as u64)
            .map_err(|e| LogError::io("truncate index", &self.path, e))?;
        self.dirty = true;
        Ok(())
    }

    /// Fsyncs when changed.
    pub fn flush(&mut self) -> Result<(), LogError> {
        if self.dirty {
            self.file
                .sync_data()
                .map_err(|e| LogError::io("fsync index", &self.path, e))?;
            self.dirty = false;
        }
        Ok(())
    }

    /// The file path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
