//! The start-up check of a formatted metadata directory: it is locked, its meta.properties
//! must match this node (and cluster), and its bootstrap features are read.
//!
//! ```text
//!   start-up ──open_formatted()──▶ DirLock + MetaProperties checked against config
//!                                  + directory id (generated if missing) + bootstrap features
//! ```

use std::path::{Path, PathBuf};

use uuid::Uuid;

use super::bootstrap::{read_bootstrap, BootstrapFeatures};
use super::lock::DirLock;
use super::meta_properties::MetaProperties;
use super::StorageError;
use crate::common::uuid::random_directory_id;

/// Directory of the metadata log partition inside the metadata log dir.
pub const METADATA_PARTITION_DIR: &str = "__cluster_metadata-0";

/// A formatted metadata directory, locked for this process.
#[derive(Debug)]
pub struct FormattedDir {
    /// The held `.lock` (keep it for the process lifetime).
    pub lock: DirLock,
    /// The metadata log dir.
    pub metadata_log_dir: PathBuf,
    /// `<metadata_log_dir>/__cluster_metadata-0`.
    pub partition_dir: PathBuf,
    /// meta.properties as read (with a directory id added if it was missing).
    pub meta: MetaProperties,
    /// This directory's id.
    pub directory_id: Uuid,
    /// Bootstrap features (from the 0-0 snapshot or bootstrap.checkpoint), if any.
    pub bootstrap: Option<BootstrapFeatures>,
}

/// Locks and validates a formatted metadata directory at start-up: meta.properties must exist
/// and match `node_id` (and `expected_cluster_id` when given). Like Kafka, a missing
/// directory.id is generated and written.
pub fn open_formatted(
    metadata_log_dir: &Path,
    node_id: i32,
    expected_cluster_id: Option<&str>,
) -> Result<FormattedDir, StorageError> {
    if !metadata_log_dir.is_dir() {
        return Err(StorageError::NotFormatted {
            dir: metadata_log_dir.to_path_buf(),
        });
    }
    let lock = DirLock::acquire(metadata_log_dir)?;
    let mut meta =
        MetaProperties::read(metadata_log_dir)?.ok_or_else(|| StorageError::NotFormatted {
            dir: metadata_log_dir.to_path_buf(),
        })?;
    check_matches(metadata_log_dir, &meta, node_id, expected_cluster_id)?;
    let directory_id = match meta.directory_id {
        Some(d) => d,
        None => {
            let d = random_directory_id(&[]);
            meta.directory_id = Some(d);
            // The meta.properties comment line carries a wall-clock date, as Kafka's does.
            #[allow(clippy::disallowed_methods)]
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis() as i64)
                .unwrap_or(0);
            meta.write(metadata_log_dir, now)?;
            d
        }
    };
    let partition_dir = metadata_log_dir.join(METADATA_PARTITION_DIR);
    let bootstrap = read_bootstrap(metadata_log_dir, &partition_dir)?;
    Ok(FormattedDir {
        lock,
        metadata_log_dir: metadata_log_dir.to_path_buf(),
        partition_dir,
        meta,
        directory_id,
        bootstrap,
    })
}

/// Checks that a directory's meta.properties names `node_id` (and `cluster_id` when given).
pub fn check_matches(
    dir: &Path,
    meta: &MetaProperties,
    node_id: i32,
    cluster_id: Option<&str>,
) -> Result<(), StorageError> {
    let path = dir.join(super::meta_properties::META_PROPERTIES_FILE);
    if meta.node_id != node_id {
        return Err(StorageError::Mismatch {
            path,
            field: "node.id",
            expected: node_id.to_string(),
            found: meta.node_id.to_string(),
        });
    }
    if let Some(c) = cluster_id {
        if meta.cluster_id != c {
            return Err(StorageError::Mismatch {
                path,
                field: "cluster.id",
                expected: c.to_string(),
                found: meta.cluster_id.clone(),
            });
        }
    }
    Ok(())
}
