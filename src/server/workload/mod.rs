//! The benchmark load generator (`--workload-records-per-sec`): while leader, append records
//! at a set rate and size, like Kafka's `TestRaftServer` workload, to measure replication
//! without a controller workload.
//!
//! Records are valid metadata records — a `NoOpRecord` (apiKey 20, v0) in Kafka's
//! `ApiMessageAndVersion` frame, padded to the requested size with an unknown tagged field —
//! so a Java controller following this log replays them as no-ops instead of aborting.

use bytes::Bytes;

use crate::node::no_ops::NO_OP_RECORD_API_KEY;
use crate::records::varint::{put_uvarint, uvarint_size};

pub mod commit_stats;
/// A tag NoOpRecord does not define: readers keep it as an unknown tagged field.
const PADDING_TAG: u8 = 100;

/// A NoOpRecord value of `size_bytes` bytes (at least 4; within a byte of the size where the
/// padding length's varint grows).
pub fn no_op_record(size_bytes: usize) -> Bytes {
    let mut buf = Vec::with_capacity(size_bytes.max(4));
    // frame version 1, api key 20, record version 0
    buf.extend_from_slice(&[1, NO_OP_RECORD_API_KEY, 0]);
    // Layout with padding: 3 header bytes, count, tag, varint length, padding.
    if size_bytes < 3 + 1 + 1 + 1 + 1 {
        buf.push(0); // no tagged fields
        return Bytes::from(buf);
    }
    let target = size_bytes - 5;
    let mut pad = target - 1;
    while pad + uvarint_size(pad as u32) > target {
        pad -= 1;
    }
    buf.extend_from_slice(&[1, PADDING_TAG]);
    put_uvarint(&mut buf, pad as u32);
    buf.resize(buf.len() + pad, 0);
    Bytes::from(buf)
}

/// Settings of the workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Workload {
    /// Records per second (0 = off).
    pub records_per_sec: u64,
    /// Size of each record value.
    pub record_bytes: usize,
}

/// Paces the workload: how many records are due at `now_ms`.
#[derive(Debug, Clone)]
pub struct Pacer {
    workload: Workload,
    started_ms: Option<u64>,
    sent: u64,
}

impl Pacer {
    /// A pacer for `workload`.
    pub fn new(workload: Workload) -> Self {
        Self {
            workload,
            started_ms: None,
            sent: 0,
        }
    }

    /// Records due now, at most `room` (capped so a stall does not produce one giant burst).
    ///
    /// `room` is how many more records may be in flight: at a rate above what the quorum
    /// commits, the backlog would otherwise grow without bound, so the benchmark's maximum
    /// rate is a closed loop that measures the sustained commit throughput.
    pub fn due(&mut self, now_ms: u64, room: u64) -> u64 {
        if self.workload.records_per_sec == 0 {
            return 0;
        }
        let start = *self.started_ms.get_or_insert(now_ms);
        let target = (now_ms - start) * self.workload.records_per_sec / 1000;
        let due = target
            .saturating_sub(self.sent)
            .min(self.workload.records_per_sec.max(1))
            .min(room);
        self.sent = self.sent.max(target.saturating_sub(due)) + due;
        due
    }

    /// Restarts pacing (on becoming leader).
    pub fn reset(&mut self) {
        self.started_ms = None;
        self.sent = 0;
    }

    /// Whether the workload is on.
    pub fn active(&self) -> bool {
        self.workload.records_per_sec > 0
    }

    /// The record value size.
    pub fn record_bytes(&self) -> usize {
        self.workload.record_bytes
    }
}

/// Most workload records proposed and not yet committed (64 Ki; 16 MiB at 256 B).
pub const MAX_PENDING_RECORDS: u64 = 65_536;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_op_records_have_the_requested_size_and_a_valid_frame() {
        for size in [4, 8, 16, 100, 256, 1000] {
            let r = no_op_record(size);
            assert_eq!(r.len(), size, "size {size}");
            assert_eq!(&r[..3], &[1, 20, 0]);
        }
        assert_eq!(&no_op_record(0)[..], &[1, 20, 0, 0]);
    }

    #[test]
    fn pacer_spreads_the_rate_over_time() {
        let mut p = Pacer::new(Workload {
            records_per_sec: 1000,
            record_bytes: 256,
        });
        assert_eq!(p.due(0, u64::MAX), 0);
        assert_eq!(p.due(10, u64::MAX), 10);
        assert_eq!(p.due(10, u64::MAX), 0);
        assert_eq!(p.due(1000, u64::MAX), 990);
        // No room: nothing now, and the backlog is not carried into one burst later.
        assert_eq!(p.due(1500, 0), 0);
        assert_eq!(p.due(1600, 200), 100);
    }
}
