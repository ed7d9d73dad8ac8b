//! The `.lock` file of a log directory: an exclusive POSIX record lock (`fcntl(F_SETLK)`), the
//! lock family Java's `FileChannel.tryLock` uses, so Kafka servers and tools (e.g.
//! `kafka-metadata-shell`) see it and we see theirs. `flock(2)` would be invisible to Java.
//!
//! POSIX record locks belong to the process and are dropped when *any* descriptor of the file
//! is closed, and they never conflict within one process. So this module keeps a process-wide
//! registry: a second `DirLock` on the same directory fails instead of silently succeeding, and
//! no second descriptor is ever opened (whose close would release the lock).

use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use rustix::fs::{fcntl_lock, FlockOperation};

use super::StorageError;

/// File name of the lock file.
pub const LOCK_FILE: &str = ".lock";

fn registry() -> &'static Mutex<HashSet<PathBuf>> {
    static REG: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    REG.get_or_init(|| Mutex::new(HashSet::new()))
}

/// A held directory lock; released when dropped (or when the process exits).
#[derive(Debug)]
pub struct DirLock {
    path: PathBuf,
    // Kept open: closing it releases the lock.
    _file: File,
}

impl DirLock {
    /// Takes `<dir>/.lock` without blocking. Fails with `StorageError::Locked` naming the path
    /// when another process (or this one) holds it.
    pub fn acquire(dir: &Path) -> Result<DirLock, StorageError> {
        let path = dir.join(LOCK_FILE);
        let key = dir
            .canonicalize()
            .map_err(|e| StorageError::io(dir, e))?
            .join(LOCK_FILE);
        let mut reg = registry()
            .lock()
            .map_err(|_| StorageError::io(&path, io::Error::other("lock registry poisoned")))?;
        if reg.contains(&key) {
            return Err(StorageError::Locked {
                path,
                holder: "this process".into(),
            });
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| StorageError::io(&path, e))?;
        match fcntl_lock(&file, FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => {}
            Err(e) if e == rustix::io::Errno::AGAIN || e == rustix::io::Errno::ACCESS => {
                return Err(StorageError::Locked {
                    path,
                    holder: "another process (a Kafka or ferrokraft node, or a Kafka tool)".into(),
                });
            }
            Err(e) => return Err(StorageError::io(&path, e.into())),
        }
        reg.insert(key.clone());
        Ok(DirLock {
            path: key,
            _file: file,
        })
    }

    /// The lock file path.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        if let Ok(mut reg) = registry().lock() {
            reg.remove(&self.path);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn second_lock_in_process_fails_and_drop_releases() {
        let dir = tempfile::tempdir().unwrap();
        let a = DirLock::acquire(dir.path()).unwrap();
        let err = DirLock::acquire(dir.path()).unwrap_err();
        assert!(err.to_string().contains(".lock"), "{err}");
        drop(a);
        DirLock::acquire(dir.path()).unwrap();
    }
}
