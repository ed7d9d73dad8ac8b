//! KRaft snapshot files `<20-digit end offset>-<10-digit epoch>.checkpoint`.
//!
//! ```text
//!   SnapshotEncoder ──header/data/footer batches──▶ SnapshotWriter ──▶ RawSnapshotWriter
//!        (offsets from 0, PLE = snapshot epoch)                      .checkpoint.part
//!                                                                      └─freeze: fsync, 0400,
//!                                                                        rename, dir fsync
//!   FetchSnapshot download ──chunks──▶ RawSnapshotWriter::append ──freeze (validates)──▶ .checkpoint
//!   RawSnapshot::open (validates header + footer + CRCs) ──read_chunk(position, max)──▶ FetchSnapshot
//!   dir::{list, latest, earliest, delete, clean_leftovers}
//! ```
//!
//! A `.part` file is never taken for a snapshot: only names ending exactly in `.checkpoint`
//! with a parseable 20-10 id are listed.
pub mod dir;
pub mod encoder;
pub mod reader;
pub mod writer;

use std::io;
use std::path::{Path, PathBuf};

pub use dir::{
    clean_leftovers, delete_snapshot, earliest_snapshot, latest_snapshot, list_snapshots,
};
pub use encoder::{SnapshotEncoder, SnapshotHeaderInfo};
pub use reader::RawSnapshot;
pub use writer::{write_snapshot, RawSnapshotWriter, SnapshotRecordWriter, SnapshotWriter};

use crate::records::RecordsError;

/// Suffix of a finished snapshot.
pub const CHECKPOINT_SUFFIX: &str = ".checkpoint";
/// Suffix of a snapshot being written.
pub const PART_SUFFIX: &str = ".checkpoint.part";
/// Suffix of a snapshot marked for deletion.
pub const DELETED_SUFFIX: &str = ".checkpoint.deleted";

/// A snapshot's id: the offset after its last contained record, and that record's epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SnapshotId {
    /// Last contained offset + 1.
    pub end_offset: i64,
    /// Epoch of the last contained batch.
    pub epoch: i32,
}

impl SnapshotId {
    /// The bootstrap snapshot id 0-0 written by `kafka-storage format`.
    pub const BOOTSTRAP: SnapshotId = SnapshotId {
        end_offset: 0,
        epoch: 0,
    };

    /// `%020d-%010d`.
    pub fn file_stem(&self) -> String {
        format!("{:020}-{:010}", self.end_offset, self.epoch)
    }

    /// `<stem>.checkpoint`.
    pub fn file_name(&self) -> String {
        format!("{}{CHECKPOINT_SUFFIX}", self.file_stem())
    }

    /// Path of the finished snapshot in `dir`.
    pub fn path_in(&self, dir: &Path) -> PathBuf {
        dir.join(self.file_name())
    }

    /// Parses the fixed-position stem as Kafka's `Snapshots.parse` does: characters 0..20 the
    /// offset, '-', 21..31 the epoch.
    pub fn parse_stem(stem: &str) -> Option<SnapshotId> {
        let b = stem.as_bytes();
        if b.len() < 31 || b[20] != b'-' {
            return None;
        }
        let digits = |s: &[u8]| s.iter().all(u8::is_ascii_digit);
        if !digits(&b[..20]) || !digits(&b[21..31]) {
            return None;
        }
        let end_offset = stem.get(..20)?.parse().ok()?;
        let epoch = stem.get(21..31)?.parse().ok()?;
        Some(SnapshotId { end_offset, epoch })
    }

    /// Parses a finished snapshot's file name (`<20>-<10>.checkpoint` exactly).
    pub fn parse_file_name(name: &str) -> Option<SnapshotId> {
        let stem = name.strip_suffix(CHECKPOINT_SUFFIX)?;
        if stem.len() != 31 {
            return None;
        }
        Self::parse_stem(stem)
    }
}

/// Snapshot errors.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// A file system operation failed.
    #[error("snapshot I/O on {path}: {source}")]
    Io {
        /// File or directory involved.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The file is not a valid snapshot.
    #[error("invalid snapshot {path}: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A batch could not be built.
    #[error("snapshot records: {0}")]
    Records(#[from] RecordsError),
    /// Misuse of the writer (e.g. data before the header).
    #[error("snapshot writer: {0}")]
    State(String),
}

impl SnapshotError {
    pub(crate) fn io(path: &Path, source: io::Error) -> Self {
        SnapshotError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

#[cfg(test)]
mod tests;
