//! Writing snapshots: bytes go to `<stem>-<random>.checkpoint.part` (created 0600), and
//! `freeze` validates the file, fsyncs it, makes it read-only (0400, like Kafka's
//! `setReadOnly`), renames it to `<stem>.checkpoint` and fsyncs the directory. A crash before
//! the rename leaves only a `.part`, which is never listed as a snapshot and is deleted on start.

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::encoder::{SnapshotEncoder, SnapshotHeaderInfo};
use super::reader::validate_snapshot_file;
use super::{SnapshotError, SnapshotId, PART_SUFFIX};
use crate::durable::fsync_dir;

/// Writes raw bytes into a `.part` file (used directly for FetchSnapshot downloads).
#[derive(Debug)]
pub struct RawSnapshotWriter {
    dir: PathBuf,
    id: SnapshotId,
    part_path: PathBuf,
    file: Option<File>,
    size_bytes: u64,
}

impl RawSnapshotWriter {
    /// Creates a new `.part` file for `id` in `dir`.
    pub fn create(dir: &Path, id: SnapshotId) -> Result<Self, SnapshotError> {
        // A random middle part like Java's createTempFile, so two writers never collide.
        let rand = uuid::Uuid::new_v4().as_u64_pair().0;
        let part_path = dir.join(format!("{}-{rand}{PART_SUFFIX}", id.file_stem()));
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&part_path)
            .map_err(|e| SnapshotError::io(&part_path, e))?;
        Ok(RawSnapshotWriter {
            dir: dir.to_path_buf(),
            id,
            part_path,
            file: Some(file),
            size_bytes: 0,
        })
    }

    /// The id being written.
    pub fn id(&self) -> SnapshotId {
        self.id
    }

    /// Bytes written so far (the position of the next FetchSnapshot chunk).
    pub fn size_bytes(&self) -> u64 {
        self.size_bytes
    }

    /// Appends bytes (a chunk need not be batch-aligned).
    pub fn append(&mut self, bytes: &[u8]) -> Result<(), SnapshotError> {
        let file = self
            .file
            .as_mut()
            .ok_or_else(|| SnapshotError::State("writer already closed".into()))?;
        file.write_all(bytes)
            .map_err(|e| SnapshotError::io(&self.part_path, e))?;
        self.size_bytes += bytes.len() as u64;
        Ok(())
    }

    /// Validates, fsyncs, makes read-only, renames to `.checkpoint`, fsyncs the directory.
    /// On a validation error the `.part` file is removed.
    pub fn freeze(mut self) -> Result<PathBuf, SnapshotError> {
        let file = self
            .file
            .take()
            .ok_or_else(|| SnapshotError::State("writer already closed".into()))?;
        let path = self.part_path.clone();
        let result = (|| {
            file.sync_all().map_err(|e| SnapshotError::io(&path, e))?;
            let reader = File::open(&path).map_err(|e| SnapshotError::io(&path, e))?;
            validate_snapshot_file(&path, &reader)?;
            fs::set_permissions(&path, Permissions::from_mode(0o400))
                .map_err(|e| SnapshotError::io(&path, e))?;
            let dest = self.id.path_in(&self.dir);
            fs::rename(&path, &dest).map_err(|e| SnapshotError::io(&dest, e))?;
            fsync_dir(&self.dir).map_err(|e| SnapshotError::io(&self.dir, e))?;
            Ok(dest)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&self.part_path);
        }
        result
    }
}

impl Drop for RawSnapshotWriter {
    fn drop(&mut self) {
        // Not frozen: the partial file is garbage.
        if self.file.is_some() {
            let _ = fs::remove_file(&self.part_path);
        }
    }
}

/// Writes a snapshot from records: header, data batches, footer.
#[derive(Debug)]
pub struct SnapshotWriter {
    raw: RawSnapshotWriter,
    encoder: SnapshotEncoder,
}

impl SnapshotWriter {
    /// Starts snapshot `id` in `dir` and writes its header batch.
    pub fn create(
        dir: &Path,
        id: SnapshotId,
        header: &SnapshotHeaderInfo,
        append_timestamp_ms: i64,
    ) -> Result<Self, SnapshotError> {
        let mut raw = RawSnapshotWriter::create(dir, id)?;
        let mut encoder = SnapshotEncoder::new(id.epoch);
        raw.append(&encoder.header_batch(header, append_timestamp_ms)?)?;
        Ok(SnapshotWriter { raw, encoder })
    }

    /// Appends one data batch of serialized metadata records.
    pub fn append(
        &mut self,
        values: &[&[u8]],
        append_timestamp_ms: i64,
    ) -> Result<(), SnapshotError> {
        let b = self.encoder.data_batch(values, append_timestamp_ms)?;
        self.raw.append(&b)
    }

    /// Writes the footer and freezes the file.
    pub fn finish(mut self, append_timestamp_ms: i64) -> Result<PathBuf, SnapshotError> {
        let b = self.encoder.footer_batch(append_timestamp_ms)?;
        self.raw.append(&b)?;
        self.raw.freeze()
    }
}

/// Records per data batch, as Kafka's snapshot emitter groups them.
pub const RECORDS_PER_BATCH: usize = 1024;
/// Bytes of record values per data batch at most (Kafka's `MAX_BATCH_SIZE_BYTES`, 8 MiB).
pub const MAX_BATCH_BYTES: usize = 8 * 1024 * 1024;

/// A snapshot written one record value at a time, in data batches of at most
/// [`RECORDS_PER_BATCH`] records and [`MAX_BATCH_BYTES`] bytes: only the batch being filled
/// is held, so a snapshot of any size costs one batch of memory.
#[derive(Debug)]
pub struct SnapshotRecordWriter {
    writer: SnapshotWriter,
    /// The pending batch's values, back to back.
    bytes: Vec<u8>,
    /// Where each pending value ends in `bytes`.
    ends: Vec<usize>,
    append_timestamp_ms: i64,
}

impl SnapshotRecordWriter {
    /// Starts snapshot `id` in `dir` (header batch written).
    pub fn create(
        dir: &Path,
        id: SnapshotId,
        header: &SnapshotHeaderInfo,
        append_timestamp_ms: i64,
    ) -> Result<Self, SnapshotError> {
        Ok(SnapshotRecordWriter {
            writer: SnapshotWriter::create(dir, id, header, append_timestamp_ms)?,
            bytes: Vec::new(),
            ends: Vec::new(),
            append_timestamp_ms,
        })
    }

    /// Adds one record value, writing the pending batch first when `value` would not fit.
    pub fn push(&mut self, value: &[u8]) -> Result<(), SnapshotError> {
        if !self.ends.is_empty()
            && (self.ends.len() == RECORDS_PER_BATCH
                || self.bytes.len() + value.len() > MAX_BATCH_BYTES)
        {
            self.flush()?;
        }
        self.bytes.extend_from_slice(value);
        self.ends.push(self.bytes.len());
        Ok(())
    }

    fn flush(&mut self) -> Result<(), SnapshotError> {
        let mut start = 0;
        let values: Vec<&[u8]> = self
            .ends
            .iter()
            .map(|&end| {
                let value = &self.bytes[start..end];
                start = end;
                value
            })
            .collect();
        self.writer.append(&values, self.append_timestamp_ms)?;
        self.bytes.clear();
        self.ends.clear();
        Ok(())
    }

    /// Writes the last batch and the footer, and freezes the file. Dropped unfinished, the
    /// `.part` file is removed.
    pub fn finish(mut self) -> Result<PathBuf, SnapshotError> {
        if !self.ends.is_empty() {
            self.flush()?;
        }
        self.writer.finish(self.append_timestamp_ms)
    }
}

/// Writes a whole snapshot of `values` (metadata record values) with a
/// [`SnapshotRecordWriter`], then freezes it.
pub fn write_snapshot(
    dir: &Path,
    id: SnapshotId,
    header: &SnapshotHeaderInfo,
    values: &[Vec<u8>],
    append_timestamp_ms: i64,
) -> Result<PathBuf, SnapshotError> {
    let mut writer = SnapshotRecordWriter::create(dir, id, header, append_timestamp_ms)?;
    for value in values {
        writer.push(value)?;
    }
    writer.finish()
}
