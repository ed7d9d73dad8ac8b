//! The leader epoch cache and its `leader-epoch-checkpoint` file.
//!
//! File format (Kafka's `CheckpointFile`): `0\n<N>\n<epoch> <startOffset>\n…`, replaced
//! atomically. Semantics follow Kafka's `LeaderEpochFileCache`: `assign` keeps epochs and start
//! offsets strictly increasing by first removing conflicting entries; `end_offset_for` answers
//! "where does `epoch` end" for Fetch divergence checks.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::LogError;
use crate::durable::write_atomic;

/// File name inside the partition directory.
pub const LEADER_EPOCH_CHECKPOINT_FILE: &str = "leader-epoch-checkpoint";

/// One (epoch, first offset of that epoch) entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EpochEntry {
    /// Leader epoch.
    pub epoch: i32,
    /// First offset written in that epoch.
    pub start_offset: i64,
}

/// In-memory epoch cache (shared by the file and memory logs).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EpochCache {
    entries: Vec<EpochEntry>,
}

impl EpochCache {
    /// All entries, oldest first.
    pub fn entries(&self) -> &[EpochEntry] {
        &self.entries
    }

    /// The newest entry.
    pub fn latest(&self) -> Option<EpochEntry> {
        self.entries.last().copied()
    }

    /// Adds `(epoch, start_offset)` as Kafka's `assign` does; returns whether it changed.
    pub fn assign(&mut self, epoch: i32, start_offset: i64) -> Result<bool, LogError> {
        if epoch < 0 || start_offset < 0 {
            return Err(LogError::InvalidEpoch(format!(
                "cannot assign epoch {epoch} at offset {start_offset}"
            )));
        }
        if let Some(last) = self.latest() {
            // Same epoch already known from an earlier or equal offset: nothing to do.
            if last.epoch == epoch && start_offset >= last.start_offset {
                return Ok(false);
            }
        }
        self.entries
            .retain(|e| e.epoch < epoch && e.start_offset < start_offset);
        self.entries.push(EpochEntry {
            epoch,
            start_offset,
        });
        Ok(true)
    }

    /// Removes entries starting at or after `end_offset` (log truncation).
    pub fn truncate_from_end(&mut self, end_offset: i64) -> bool {
        let before = self.entries.len();
        self.entries.retain(|e| e.start_offset < end_offset);
        before != self.entries.len()
    }

    /// Drops entries wholly before `start_offset` and moves the first remaining one up to it
    /// (log start moved forward).
    pub fn truncate_from_start(&mut self, start_offset: i64) -> bool {
        let keep_from = self
            .entries
            .iter()
            .rposition(|e| e.start_offset <= start_offset);
        match keep_from {
            None => false,
            Some(i) => {
                let changed = i > 0 || self.entries[i].start_offset != start_offset;
                self.entries.drain(..i);
                self.entries[0].start_offset = start_offset;
                changed
            }
        }
    }

    /// Kafka's `endOffsetFor(requestedEpoch, logEndOffset)`: `Some((epoch, end_offset))` where
    /// `epoch` is the largest known epoch ≤ the requested one and `end_offset` the start of the
    /// next higher epoch (or the LEO for the latest epoch); `None` when undefined.
    pub fn end_offset_for(&self, requested: i32, log_end_offset: i64) -> Option<(i32, i64)> {
        if requested < 0 {
            return None;
        }
        let latest = self.latest()?;
        if latest.epoch == requested {
            return Some((requested, log_end_offset));
        }
        let higher = self.entries.iter().find(|e| e.epoch > requested)?;
        match self.entries.iter().rev().find(|e| e.epoch <= requested) {
            None => Some((requested, higher.start_offset)),
            Some(floor) => Some((floor.epoch, higher.start_offset)),
        }
    }

    /// The checkpoint file text.
    pub fn to_text(&self) -> String {
        let mut s = format!("0\n{}\n", self.entries.len());
        for e in &self.entries {
            s.push_str(&format!("{} {}\n", e.epoch, e.start_offset));
        }
        s
    }

    /// Parses the checkpoint file text as Kafka's `CheckpointFile.CheckpointReadBuffer` does:
    /// an empty file, or one with only the version line, has no entries; the version must be
    /// 0; every line after the count is `<epoch> <start offset>` split on whitespace; the count
    /// must match. A bad file is `(line number, reason)`, 1-based.
    pub fn from_text(text: &str) -> Result<Self, (usize, String)> {
        let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
        let Some((n, version)) = lines.next() else {
            return Ok(EpochCache::default());
        };
        match version.parse::<i32>() {
            Ok(0) => {}
            Ok(v) => return Err((n, format!("unrecognised version {v}, expected 0"))),
            Err(_) => return Err((n, format!("malformed version line {version:?}"))),
        }
        let Some((n, count)) = lines.next() else {
            return Ok(EpochCache::default());
        };
        let expected: usize = count
            .parse()
            .map_err(|_| (n, format!("malformed entry count {count:?}")))?;
        // Each entry goes through `assign`, as Kafka's constructor feeds the file to it
        // (`checkpoint.read().forEach(this::assign)`): a negative one fails the load, one that
        // goes backwards replaces those it conflicts with.
        let mut cache = EpochCache::default();
        let mut found = 0;
        let mut last_line = n;
        for (n, line) in lines {
            last_line = n;
            // Java's `split("\\s+")`: a leading separator gives an empty first field.
            let fields: Vec<&str> = line
                .split(|c: char| c.is_ascii_whitespace())
                .filter(|f| !f.is_empty())
                .collect();
            let leading = line.starts_with(|c: char| c.is_ascii_whitespace());
            let parsed = match (leading, fields.as_slice()) {
                (false, [epoch, start]) => epoch.parse().ok().zip(start.parse().ok()),
                _ => None,
            };
            let Some((epoch, start_offset)) = parsed else {
                return Err((n, format!("malformed entry {line:?}")));
            };
            found += 1;
            cache
                .assign(epoch, start_offset)
                .map_err(|e| (n, format!("invalid entry {line:?}: {e}")))?;
        }
        if found != expected {
            return Err((
                last_line,
                format!("{expected} entries declared, {found} found"),
            ));
        }
        Ok(cache)
    }
}

/// The checkpoint file.
#[derive(Debug, Clone)]
pub struct EpochCheckpointFile {
    path: PathBuf,
}

impl EpochCheckpointFile {
    /// `<dir>/leader-epoch-checkpoint`.
    pub fn new(dir: &Path) -> Self {
        EpochCheckpointFile {
            path: dir.join(LEADER_EPOCH_CHECKPOINT_FILE),
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the cache; an absent file is an empty cache. A malformed file is an error naming
    /// the line, as in Kafka (which fails the log directory: `CheckpointFileWithFailureHandler`).
    pub fn read(&self) -> Result<EpochCache, LogError> {
        match fs::read_to_string(&self.path) {
            Ok(t) => {
                EpochCache::from_text(&t).map_err(|(line, reason)| LogError::CorruptCheckpoint {
                    path: self.path.clone(),
                    line,
                    reason,
                })
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(EpochCache::default()),
            Err(e) => Err(LogError::io("read", &self.path, e)),
        }
    }

    /// Atomically replaces the file.
    pub fn write(&self, cache: &EpochCache) -> Result<(), LogError> {
        write_atomic(&self.path, cache.to_text().as_bytes(), true)
            .map_err(|e| LogError::io("write", &self.path, e))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn cache(e: &[(i32, i64)]) -> EpochCache {
        let mut c = EpochCache::default();
        for &(ep, off) in e {
            c.assign(ep, off).unwrap();
        }
        c
    }

    #[test]
    fn end_offset_for_matches_kafka() {
        let c = cache(&[(1, 0), (3, 10), (5, 20)]);
        assert_eq!(c.end_offset_for(5, 30), Some((5, 30)));
        assert_eq!(c.end_offset_for(3, 30), Some((3, 20)));
        assert_eq!(c.end_offset_for(4, 30), Some((3, 20)));
        assert_eq!(c.end_offset_for(2, 30), Some((1, 10)));
        assert_eq!(c.end_offset_for(0, 30), Some((0, 0)));
        assert_eq!(c.end_offset_for(6, 30), None);
        assert_eq!(c.end_offset_for(-1, 30), None);
        assert_eq!(EpochCache::default().end_offset_for(1, 0), None);
    }

    /// Kafka's `LeaderEpochFileCache` constructor: `checkpoint.read().forEach(this::assign)`.
    #[test]
    fn a_checkpoint_is_read_through_assign() {
        let c = EpochCache::from_text("0\n3\n1 0\n5 100\n3 50\n").unwrap();
        let got: Vec<(i32, i64)> = c
            .entries()
            .iter()
            .map(|e| (e.epoch, e.start_offset))
            .collect();
        assert_eq!(
            got,
            vec![(1, 0), (3, 50)],
            "the backwards entry replaces what it conflicts with"
        );
        let (line, reason) = EpochCache::from_text("0\n2\n1 0\n-1 5\n").unwrap_err();
        assert_eq!(line, 4, "{reason}");
    }

    #[test]
    fn assign_removes_conflicts_and_text_round_trips() {
        let mut c = cache(&[(1, 0), (3, 10), (5, 20)]);
        assert!(!c.assign(5, 25).unwrap());
        assert!(c.assign(4, 15).unwrap());
        assert_eq!(
            c.entries(),
            &[
                EpochEntry {
                    epoch: 1,
                    start_offset: 0
                },
                EpochEntry {
                    epoch: 3,
                    start_offset: 10
                },
                EpochEntry {
                    epoch: 4,
                    start_offset: 15
                }
            ]
        );
        assert!(c.assign(-1, 0).is_err());
        assert_eq!(c.to_text(), "0\n3\n1 0\n3 10\n4 15\n");
        assert_eq!(EpochCache::from_text(&c.to_text()).unwrap(), c);
        assert!(EpochCache::from_text("0\n2\n1 0\n").is_err());
        assert_eq!(EpochCache::from_text("").unwrap(), EpochCache::default());
        assert!(c.truncate_from_end(10));
        assert_eq!(c.to_text(), "0\n1\n1 0\n");
        let mut c = cache(&[(1, 0), (3, 10), (5, 20)]);
        c.truncate_from_start(12);
        assert_eq!(c.to_text(), "0\n2\n3 12\n5 20\n");
    }
}
