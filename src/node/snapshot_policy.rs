//! When a node writes a snapshot of its metadata image, as Kafka's `SnapshotGenerator` decides
//! on every controller (leader, follower or observer alike).
//!
//! ```text
//!   committed batches replayed (bytes) ─▶ log_delta ─▶ bytes ≥ max.record.bytes.between.snapshots
//!                                                      or now - last ≥ max.snapshot.interval.ms
//!                                                      (and no snapshot being written)
//!                                                    ─▶ Some(reason): the driver writes one
//!   snapshot loaded (installed from the leader) ─▶ loaded: counters start over
//! ```
//!
//! Kafka looks only when it publishes an image, which never happens inside a metadata
//! transaction; [`SnapshotGenerator::log_delta`] is told whether one is open. Time is
//! an input (the driver reads the clock).

/// Kafka's retention settings for the metadata log (the driver cleans the log with them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// `metadata.max.retention.bytes` (< 0: no size rule).
    pub max_bytes: i64,
    /// `metadata.max.retention.ms` (< 0: no time rule).
    pub max_ms: i64,
}

/// The metadata log settings applied beyond Raft (by the machine, and by the driver for
/// retention).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetadataLogSettings {
    /// `metadata.max.idle.interval.ms`: an active controller's NoOpRecord cadence.
    pub max_idle_interval_ms: u64,
    /// `metadata.log.max.record.bytes.between.snapshots`.
    pub snapshot_max_new_record_bytes: u64,
    /// `metadata.log.max.snapshot.interval.ms` (0: no time-based snapshots).
    pub snapshot_max_interval_ms: u64,
    /// `metadata.max.retention.bytes` and `metadata.max.retention.ms`.
    pub retention: Retention,
    /// `min.insync.replicas`: the cluster-level value written at bootstrap when ELR is on.
    pub min_insync_replicas: i32,
}

/// How often the log cleaner runs (Kafka's `KafkaRaftClient` runs `maybeClean` every 60 s; it
/// is not configurable).
pub const CLEAN_INTERVAL_MS: u64 = 60_000;

/// Kafka's `SnapshotGenerator` decision.
#[derive(Debug, Clone)]
pub struct SnapshotGenerator {
    max_bytes: u64,
    max_interval_ms: u64,
    bytes_since_last: u64,
    last_snapshot_ms: u64,
    writing: bool,
}

impl SnapshotGenerator {
    /// A generator that starts counting at `now_ms`.
    pub fn new(settings: &MetadataLogSettings, now_ms: u64) -> Self {
        Self {
            max_bytes: settings.snapshot_max_new_record_bytes,
            max_interval_ms: settings.snapshot_max_interval_ms,
            bytes_since_last: 0,
            last_snapshot_ms: now_ms,
            writing: false,
        }
    }

    /// `bytes` more of the log were replayed. Inside a metadata transaction the image is not
    /// published (the bytes still count); otherwise returns why a snapshot is due now, if one
    /// is, and the counters start over.
    pub fn log_delta(&mut self, bytes: u64, now_ms: u64, in_transaction: bool) -> Option<String> {
        self.bytes_since_last += bytes;
        if in_transaction || bytes == 0 {
            return None;
        }
        if self.writing {
            // Kafka's emitter queue is busy: decide again at the next publish.
            return None;
        }
        let reason = if self.bytes_since_last >= self.max_bytes {
            format!("we have replayed at least {} bytes", self.max_bytes)
        } else if self.max_interval_ms != 0
            && now_ms.saturating_sub(self.last_snapshot_ms) >= self.max_interval_ms
        {
            format!(
                "we have waited at least {} minute(s)",
                self.max_interval_ms / 60_000
            )
        } else {
            return None;
        };
        self.start_over(now_ms);
        self.writing = true;
        Some(reason)
    }

    /// The snapshot being written is done (written or failed).
    pub fn written(&mut self) {
        self.writing = false;
    }

    /// A snapshot was loaded into the image: counting starts over.
    pub fn loaded(&mut self, now_ms: u64) {
        self.start_over(now_ms);
    }

    fn start_over(&mut self, now_ms: u64) {
        self.bytes_since_last = 0;
        self.last_snapshot_ms = now_ms;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(bytes: u64, interval_ms: u64) -> MetadataLogSettings {
        MetadataLogSettings {
            max_idle_interval_ms: 500,
            snapshot_max_new_record_bytes: bytes,
            snapshot_max_interval_ms: interval_ms,
            retention: Retention {
                max_bytes: -1,
                max_ms: -1,
            },
            min_insync_replicas: 1,
        }
    }

    /// Kafka's SnapshotGeneratorTest.testCreateSnapshotAfterByteThreshold (in spirit): bytes
    /// accumulate over deltas until the threshold, then one snapshot, then counting restarts.
    #[test]
    fn test_create_snapshot_after_byte_threshold() {
        let mut g = SnapshotGenerator::new(&settings(200, 0), 0);
        assert_eq!(g.log_delta(100, 10, false), None);
        assert!(g
            .log_delta(100, 20, false)
            .unwrap()
            .contains("at least 200 bytes"));
        g.written();
        assert_eq!(
            g.log_delta(150, 30, false),
            None,
            "counting restarted at the snapshot"
        );
    }

    /// While a snapshot is being written no second one starts, but bytes still count.
    #[test]
    fn test_no_second_snapshot_while_one_is_written() {
        let mut g = SnapshotGenerator::new(&settings(100, 0), 0);
        assert!(g.log_delta(100, 1, false).is_some());
        assert_eq!(g.log_delta(500, 2, false), None);
        g.written();
        assert!(
            g.log_delta(1, 3, false).is_some(),
            "the bytes seen meanwhile count"
        );
    }

    /// testTimeBasedSnapshot: the interval alone triggers one, 0 disables it.
    #[test]
    fn test_time_based_snapshot() {
        let mut g = SnapshotGenerator::new(&settings(u64::MAX, 60_000), 1_000);
        assert_eq!(g.log_delta(1, 60_999, false), None);
        assert!(g.log_delta(1, 61_000, false).unwrap().contains("1 minute"));
        g.written();
        assert_eq!(g.log_delta(1, 100_000, false), None);
        let mut off = SnapshotGenerator::new(&settings(u64::MAX, 0), 0);
        assert_eq!(off.log_delta(1, u64::MAX / 2, false), None);
    }

    /// MetadataBatchLoader publishes nothing inside a transaction: no snapshot there, but the
    /// bytes count once it ends.
    #[test]
    fn test_no_snapshot_inside_a_metadata_transaction() {
        let mut g = SnapshotGenerator::new(&settings(100, 10), 0);
        assert_eq!(g.log_delta(500, 1_000, true), None);
        assert!(g
            .log_delta(1, 1_001, false)
            .unwrap()
            .contains("at least 100 bytes"));
    }

    /// Loading a snapshot resets both counters (Kafka's publishSnapshot).
    #[test]
    fn test_snapshot_load_resets_counters() {
        let mut g = SnapshotGenerator::new(&settings(100, 1_000), 0);
        assert_eq!(g.log_delta(90, 10, true), None);
        g.loaded(900);
        assert_eq!(g.log_delta(50, 1_800, false), None);
        assert!(g.log_delta(1, 1_900, false).is_some());
    }
}
