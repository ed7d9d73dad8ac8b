//! Small files of a KRaft log directory (`kafka-storage format` itself is `tools::format`).
//!
//! ```text
//!   start-up ──formatted::open_formatted()──▶ DirLock + MetaProperties checked against config
//!   raft ──QuorumStateStore──▶ __cluster_metadata-0/quorum-state (tmp, fsync, rename, dir fsync)
//! ```
pub mod bootstrap;
pub mod formatted;
pub mod lock;
pub mod meta_properties;
pub mod quorum_state;

use std::io;
use std::path::{Path, PathBuf};

pub use formatted::{open_formatted, FormattedDir, METADATA_PARTITION_DIR};
pub use lock::DirLock;
pub use meta_properties::MetaProperties;
pub use quorum_state::{QuorumStateData, QuorumStateStore, QuorumStateVersion};

use crate::records::RecordsError;
use crate::snapshot::SnapshotError;

/// Errors of the storage layer.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// A file system operation failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// File or directory involved.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A file exists but its contents are not what Kafka writes.
    #[error("malformed {path}: {reason}")]
    Malformed {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// The directory lock is held.
    #[error("unable to lock {path}: it is held by {holder}; make sure no other node or tool uses this directory")]
    Locked {
        /// The `.lock` file.
        path: PathBuf,
        /// Who holds it, as far as we can tell.
        holder: String,
    },
    /// The directory has no meta.properties.
    #[error("{dir} is not formatted (no meta.properties); run the format command first")]
    NotFormatted {
        /// The directory.
        dir: PathBuf,
    },
    /// meta.properties does not match the configuration.
    #[error("{path}: {field} is {found}, but the configuration says {expected}")]
    Mismatch {
        /// The meta.properties file.
        path: PathBuf,
        /// Which field.
        field: &'static str,
        /// The configured value.
        expected: String,
        /// The value on disk.
        found: String,
    },
    /// The format request is invalid (the message is what Kafka's tool would say).
    #[error("{0}")]
    InvalidRequest(String),
    /// A snapshot file problem.
    #[error(transparent)]
    Snapshot(#[from] SnapshotError),
    /// A batch could not be built or read.
    #[error(transparent)]
    Records(#[from] RecordsError),
}

impl StorageError {
    pub(crate) fn io(path: &Path, source: io::Error) -> Self {
        StorageError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
