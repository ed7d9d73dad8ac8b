//! Kafka's `OffsetAndEpoch`: an offset and the epoch of the record before it, the one type for
//! it in the Raft core, the log and the node. (A snapshot's file name is its own
//! `snapshot::SnapshotId`, ordered by offset as the directory lists them.)

/// An offset and the epoch of the record before it (or of a snapshot's last record).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct OffsetAndEpoch {
    /// Offset (exclusive end for log end offsets and snapshot ids).
    pub offset: i64,
    /// Epoch.
    pub epoch: i32,
}

impl OffsetAndEpoch {
    /// Builds one.
    pub const fn new(offset: i64, epoch: i32) -> Self {
        Self { offset, epoch }
    }
}

impl PartialOrd for OffsetAndEpoch {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OffsetAndEpoch {
    /// Epoch first, then offset (Kafka's `OffsetAndEpoch.compareTo`).
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.epoch
            .cmp(&other.epoch)
            .then(self.offset.cmp(&other.offset))
    }
}
