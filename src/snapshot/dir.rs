//! Listing and deleting snapshots in the partition directory.
//!
//! Deletion is Kafka's two-step: rename to `.checkpoint.deleted` (so a crash never leaves a
//! half-deleted file that looks like a snapshot), then remove.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::{SnapshotError, SnapshotId, DELETED_SUFFIX, PART_SUFFIX};

/// All finished snapshots in `dir`, oldest first. `.part` and `.deleted` files are ignored.
pub fn list_snapshots(dir: &Path) -> Result<Vec<SnapshotId>, SnapshotError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(SnapshotError::io(dir, e)),
    };
    let mut ids = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| SnapshotError::io(dir, e))?;
        if let Some(id) = entry
            .file_name()
            .to_str()
            .and_then(SnapshotId::parse_file_name)
        {
            ids.push(id);
        }
    }
    ids.sort();
    Ok(ids)
}

/// The newest snapshot.
pub fn latest_snapshot(dir: &Path) -> Result<Option<SnapshotId>, SnapshotError> {
    Ok(list_snapshots(dir)?.pop())
}

/// The oldest snapshot.
pub fn earliest_snapshot(dir: &Path) -> Result<Option<SnapshotId>, SnapshotError> {
    Ok(list_snapshots(dir)?.into_iter().next())
}

/// Renames the snapshot to `.checkpoint.deleted`, then removes it.
pub fn delete_snapshot(dir: &Path, id: SnapshotId) -> Result<(), SnapshotError> {
    let path = id.path_in(dir);
    let deleted = dir.join(format!("{}{DELETED_SUFFIX}", id.file_stem()));
    fs::rename(&path, &deleted).map_err(|e| SnapshotError::io(&path, e))?;
    fs::remove_file(&deleted).map_err(|e| SnapshotError::io(&deleted, e))
}

/// Removes `.checkpoint.part` and `.checkpoint.deleted` leftovers of a crash. Returns what it
/// removed.
pub fn clean_leftovers(dir: &Path) -> Result<Vec<PathBuf>, SnapshotError> {
    let mut removed = Vec::new();
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(removed),
        Err(e) => return Err(SnapshotError::io(dir, e)),
    };
    for entry in entries {
        let entry = entry.map_err(|e| SnapshotError::io(dir, e))?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if name.ends_with(PART_SUFFIX) || name.ends_with(DELETED_SUFFIX) {
            let p = entry.path();
            fs::remove_file(&p).map_err(|e| SnapshotError::io(&p, e))?;
            removed.push(p);
        }
    }
    Ok(removed)
}
