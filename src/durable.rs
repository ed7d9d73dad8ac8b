//! Atomic replacement of small files, as Kafka's `Utils.atomicMoveWithFallback` does it:
//! write `<name>.tmp`, fsync it, rename over the target, fsync the directory. A crash at any
//! point leaves either the old or the new file, never a mix.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// Fsyncs a directory so a rename or create inside it is durable.
pub fn fsync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// The temp path Kafka uses next to `path` (`<name>.tmp`).
pub fn tmp_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".tmp");
    path.with_file_name(name)
}

/// Replaces `path` with `contents` atomically. With `durable` false the file and directory are
/// not fsynced (what Kafka does for `bootstrap.checkpoint`).
pub fn write_atomic(path: &Path, contents: &[u8], durable: bool) -> io::Result<()> {
    let tmp = tmp_path(path);
    // A leftover tmp from a crash is garbage: Kafka deletes it before writing.
    match fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    let written = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| {
            f.write_all(contents)?;
            if durable {
                f.sync_all()?;
            }
            Ok(())
        });
    if let Err(e) = written {
        // The target is untouched; drop the partial tmp (best effort: it is garbage anyway).
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    fs::rename(&tmp, path)?;
    if durable {
        if let Some(dir) = path.parent() {
            fsync_dir(if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            })?;
        }
    }
    Ok(())
}
