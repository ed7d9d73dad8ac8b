//! Snapshots this node generates, and log cleaning under Kafka's retention rules
//! (`KafkaMetadataLog.maybeClean`), run by the driver every 60 s as `KafkaRaftClient` does.
//!
//! ```text
//!   snapshots s1 < s2 < … < sn (log start ≤ s1)
//!   for each neighbour pair (s, next) in order, while a rule holds for s:
//!     size:  log bytes + remaining snapshot bytes > metadata.max.retention.bytes (≥ 0)
//!     time:  now - s.LastContainedLogTimestamp   > metadata.max.retention.ms (≥ 0)
//!     → log start := next.end_offset (whole segments below it deleted via `.deleted`),
//!       snapshots before next renamed `.checkpoint.deleted` and removed
//! ```
//!
//! The newest snapshot is never deleted, and neither is the log after it.

use super::{RaftStore, StoreError};
use crate::log::LocalLog;
pub use crate::node::snapshot_policy::Retention;
use crate::snapshot::{self, SnapshotId};

impl RaftStore {
    /// Whether snapshot `id` is on disk (Kafka's emitter does not write one twice).
    pub fn has_snapshot(&self, id: SnapshotId) -> bool {
        self.snapshots.contains(&id)
    }

    /// Takes in a snapshot this node just wrote and froze. One ending below the log start
    /// (the log moved on while it was written) is deleted instead.
    pub fn add_snapshot(&mut self, id: SnapshotId) -> Result<(), StoreError> {
        if id.end_offset < self.log.start_offset() {
            snapshot::dir::delete_snapshot(&self.partition_dir, id)?;
            return Ok(());
        }
        if let Err(at) = self.snapshots.binary_search(&id) {
            self.snapshots.insert(at, id);
        }
        Ok(())
    }

    /// Kafka's `maybeClean`: size rule, then time rule. Returns whether anything was deleted.
    pub fn maybe_clean(&mut self, now_ms: i64, retention: Retention) -> Result<bool, StoreError> {
        let mut cleaned = false;
        if retention.max_bytes >= 0 {
            cleaned |= self.clean_for_size(retention.max_bytes)?;
        }
        if retention.max_ms >= 0 {
            cleaned |= self.clean_for_time(now_ms, retention.max_ms)?;
        }
        Ok(cleaned)
    }

    fn clean_for_size(&mut self, max_bytes: i64) -> Result<bool, StoreError> {
        let sizes: Vec<(SnapshotId, u64)> = self
            .snapshots
            .iter()
            .filter_map(|id| {
                let path = id.path_in(&self.partition_dir);
                std::fs::metadata(path).ok().map(|m| (*id, m.len()))
            })
            .collect();
        let mut snapshot_bytes: u64 = sizes.iter().map(|(_, s)| s).sum();
        self.clean_while(|store, id| {
            let size = sizes.iter().find(|(s, _)| *s == id).map(|(_, b)| *b)?;
            let log_bytes = store.log.size_bytes();
            let total = log_bytes + snapshot_bytes;
            if total > max_bytes.unsigned_abs() {
                snapshot_bytes -= size;
                Some(format!(
                    "log size {log_bytes} + snapshot size {total_minus} > metadata.max.retention.bytes {max_bytes}",
                    total_minus = total - log_bytes
                ))
            } else {
                None
            }
        })
    }

    fn clean_for_time(&mut self, now_ms: i64, max_ms: i64) -> Result<bool, StoreError> {
        self.clean_while(|store, id| {
            let ts = snapshot::reader::last_contained_timestamp(&store.partition_dir, id).ok()?;
            (now_ms - ts > max_ms).then(|| {
                format!(
                    "its last contained timestamp {ts} is more than metadata.max.retention.ms {max_ms} before {now_ms}"
                )
            })
        })
    }

    /// Kafka's `cleanSnapshots`: walks neighbour pairs oldest first; while `rule` gives a
    /// reason to drop a snapshot, everything before its successor goes.
    fn clean_while(
        &mut self,
        mut rule: impl FnMut(&RaftStore, SnapshotId) -> Option<String>,
    ) -> Result<bool, StoreError> {
        let mut cleaned = false;
        let pairs: Vec<(SnapshotId, SnapshotId)> =
            self.snapshots.windows(2).map(|w| (w[0], w[1])).collect();
        for (old, next) in pairs {
            let Some(reason) = rule(self, old) else {
                break;
            };
            if !self.delete_before_snapshot(next, &reason)? {
                break;
            }
            cleaned = true;
        }
        Ok(cleaned)
    }

    /// Kafka's `deleteBeforeSnapshot`: moves the log start to `next`'s end offset (deleting
    /// whole segments below it) and deletes the snapshots before `next`.
    fn delete_before_snapshot(
        &mut self,
        next: SnapshotId,
        reason: &str,
    ) -> Result<bool, StoreError> {
        let Some(latest) = self.snapshots.last().copied() else {
            return Ok(false);
        };
        if !self.snapshots.contains(&next)
            || self.log.start_offset() >= next.end_offset
            || next.end_offset > latest.end_offset
            || !self.log.increment_start_offset(next.end_offset)?
        {
            return Ok(false);
        }
        tracing::info!(
            "Log start offset of {} moved to {} (snapshot {})",
            self.partition_dir.display(),
            next.end_offset,
            next.file_stem()
        );
        let expired: Vec<SnapshotId> = self
            .snapshots
            .iter()
            .copied()
            .filter(|s| *s < next)
            .collect();
        self.snapshots.retain(|s| *s >= next);
        for id in expired {
            tracing::info!(
                "Marking snapshot {} for deletion because {reason}",
                id.file_stem()
            );
            snapshot::dir::delete_snapshot(&self.partition_dir, id)?;
        }
        Ok(true)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    //! Kafka's KafkaMetadataLogTest cleaning cases: `testSegmentsLessThanLatestSnapshot…`,
    //! `testSnapshotDeletionWithInvalidSnapshotState`, retention by size and by time.
    use super::*;
    use crate::raft::LogReader as _;
    use crate::records::build_data_batch;
    use crate::snapshot::{write_snapshot, SnapshotHeaderInfo};

    /// Small segments: each 100-byte record batch is ~170 bytes, so a few per segment.
    const SEGMENT_BYTES: u64 = 1024;

    fn store_with_records(dir: &std::path::Path, records: i64) -> RaftStore {
        let mut store = RaftStore::open(
            dir,
            crate::log::LogConfig {
                segment_bytes: SEGMENT_BYTES,
                ..Default::default()
            },
            0,
            vec![1],
        )
        .unwrap();
        for _ in 0..records {
            let b = build_data_batch(0, 1, 0, &[[7u8; 100].as_slice()]).unwrap();
            store.append_as_leader(&b, 1).unwrap();
        }
        store.flush().unwrap();
        store
    }

    fn snapshot(store: &mut RaftStore, end_offset: i64, timestamp_ms: i64) -> SnapshotId {
        let id = SnapshotId {
            end_offset,
            epoch: 1,
        };
        let header = SnapshotHeaderInfo {
            last_contained_log_timestamp_ms: timestamp_ms,
            kraft_version: Some(0),
            voters: None,
        };
        write_snapshot(store.partition_dir(), id, &header, &[vec![1, 20, 0, 0]], 0).unwrap();
        store.add_snapshot(id).unwrap();
        id
    }

    const KEEP_ALL: Retention = Retention {
        max_bytes: -1,
        max_ms: -1,
    };

    #[test]
    fn one_snapshot_never_cleans_and_negative_settings_disable_the_rules() {
        let tmp = tempfile::tempdir().unwrap();
        let mut store = store_with_records(tmp.path(), 40);
        let only = snapshot(&mut store, 30, 0);
        let any = Retention {
            max_bytes: 0,
            max_ms: 0,
        };
        assert!(!store.maybe_clean(1_000_000, any).unwrap(), "one snapshot");
        snapshot(&mut store, 35, 0);
        assert!(!store.maybe_clean(1_000_000, KEEP_ALL).unwrap());
        assert_eq!(store.log_start_offset(), 0);
        assert!(only.path_in(tmp.path()).exists());
    }

    #[test]
    fn size_retention_moves_the_log_start_to_the_next_snapshot() {
        let tmp = tempfile::tempdir().unwrap();
        let mut store = store_with_records(tmp.path(), 40);
        let first = snapshot(&mut store, 20, 0);
        let second = snapshot(&mut store, 30, 0);
        let segments_before = store.log.segment_bases().len();
        let rule = Retention {
            max_bytes: 1,
            max_ms: -1,
        };
        assert!(store.maybe_clean(0, rule).unwrap());
        assert_eq!(store.snapshots, vec![second], "the newest snapshot stays");
        assert!(!first.path_in(tmp.path()).exists());
        assert!(second.path_in(tmp.path()).exists());
        assert_eq!(store.log_start_offset(), 30);
        assert!(store.log.segment_bases().len() < segments_before);
        assert!(
            store.log.segment_bases()[0] <= 30,
            "the segment holding 30 stays"
        );
        // Nothing left to clean with one snapshot.
        assert!(!store.maybe_clean(0, rule).unwrap());
        // No `.deleted` leftovers.
        let leftovers: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".deleted"))
            .collect();
        assert!(leftovers.is_empty());
    }

    #[test]
    fn size_retention_stops_once_under_the_limit() {
        let tmp = tempfile::tempdir().unwrap();
        let mut store = store_with_records(tmp.path(), 40);
        snapshot(&mut store, 10, 0);
        let second = snapshot(&mut store, 20, 0);
        let third = snapshot(&mut store, 30, 0);
        // Generous: log + snapshots fit, nothing goes.
        let fits = Retention {
            max_bytes: 1 << 30,
            max_ms: -1,
        };
        assert!(!store.maybe_clean(0, fits).unwrap());
        assert_eq!(store.snapshots.len(), 3);
        // Just under the total: one step (to the second snapshot) is enough only if it frees
        // enough; the walk stops as soon as the rule no longer holds.
        let total = store.log.size_bytes()
            + store
                .snapshots
                .iter()
                .map(|s| std::fs::metadata(s.path_in(tmp.path())).unwrap().len())
                .sum::<u64>();
        let rule = Retention {
            max_bytes: total as i64 - 1,
            max_ms: -1,
        };
        assert!(store.maybe_clean(0, rule).unwrap());
        assert_eq!(store.snapshots, vec![second, third]);
        assert_eq!(store.log_start_offset(), 20);
    }

    #[test]
    fn time_retention_uses_the_snapshot_timestamp() {
        let tmp = tempfile::tempdir().unwrap();
        let mut store = store_with_records(tmp.path(), 40);
        snapshot(&mut store, 10, 1_000);
        let second = snapshot(&mut store, 20, 5_000);
        let third = snapshot(&mut store, 30, 9_000);
        let rule = Retention {
            max_bytes: -1,
            max_ms: 3_000,
        };
        // At 4 000 nothing is older than 3 s.
        assert!(!store.maybe_clean(4_000, rule).unwrap());
        // At 7 500 the first (1 000) is too old, the second (5 000) is not.
        assert!(store.maybe_clean(7_500, rule).unwrap());
        assert_eq!(store.snapshots, vec![second, third]);
        assert_eq!(store.log_start_offset(), 20);
    }

    #[test]
    fn a_snapshot_below_the_log_start_is_deleted_not_added() {
        let tmp = tempfile::tempdir().unwrap();
        let mut store = store_with_records(tmp.path(), 40);
        snapshot(&mut store, 20, 0);
        snapshot(&mut store, 30, 0);
        let rule = Retention {
            max_bytes: 1,
            max_ms: -1,
        };
        store.maybe_clean(0, rule).unwrap();
        let late = snapshot(&mut store, 25, 0);
        assert!(!store.has_snapshot(late));
        assert!(!late.path_in(tmp.path()).exists());
    }
}
