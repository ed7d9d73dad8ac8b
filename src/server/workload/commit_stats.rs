//! Commit latency and throughput of the workload, reported the way Kafka's `TestRaftServer`
//! reports its own, so the benchmark can read both side by side.
//!
//! ```text
//!   driver: propose(n records) ─▶ proposed(last offset, n, now_us)
//!           HighWatermark(hw)  ─▶ committed(hw, now_us) ─▶ latency per record into the window
//!           every 5 s          ─▶ summary(now_us) ─▶ one log line
//! ```
//!
//! Latency is measured from the moment the record is handed to the Raft core (before linger)
//! to the moment this leader learns the high watermark passed it, as `TestRaftServer` measures
//! from `prepareAppend` to `handleCommit`. The window mirrors Kafka's sampled stats: two
//! samples of 30 s, so a figure covers the last 30–60 s. Times are microseconds because the
//! linger-0 target is a couple of milliseconds; `TestRaftServer` only has milliseconds.

use std::collections::VecDeque;

/// Length of one sample of the window (Kafka: `metrics.sample.window.ms`).
const SAMPLE_US: u64 = 30_000_000;
/// How often the summary line is due (TestRaftServer's `printIntervalMs`).
pub const SUMMARY_INTERVAL_US: u64 = 5_000_000;
/// Values below this are their own bucket; above, each power of two has `SUB_BUCKETS`.
const SUB_BUCKETS: u64 = 32;
const SUB_BITS: u32 = 5;
/// Enough buckets for 2^40 µs (12 days): anything longer lands in the last one.
const BUCKETS: usize = (SUB_BUCKETS as usize) * (40 - SUB_BITS as usize + 1);

/// A log-linear histogram of microsecond values with about 3% relative precision.
#[derive(Debug, Clone)]
struct Histogram {
    counts: Vec<u64>,
    total: u64,
}

impl Histogram {
    fn new() -> Self {
        Self {
            counts: vec![0; BUCKETS],
            total: 0,
        }
    }

    fn bucket(value_us: u64) -> usize {
        if value_us < SUB_BUCKETS {
            return value_us as usize;
        }
        let msb = 63 - value_us.leading_zeros();
        let shift = msb - SUB_BITS;
        let index = (shift as u64 + 1) * SUB_BUCKETS + ((value_us >> shift) - SUB_BUCKETS);
        (index as usize).min(BUCKETS - 1)
    }

    /// The largest value a bucket holds (what a percentile in it reports).
    fn bucket_high(index: usize) -> u64 {
        let index = index as u64;
        if index < SUB_BUCKETS {
            return index;
        }
        let shift = index / SUB_BUCKETS - 1;
        let base = (SUB_BUCKETS + index % SUB_BUCKETS) << shift;
        base + (1 << shift) - 1
    }

    fn record(&mut self, value_us: u64, count: u64) {
        self.counts[Self::bucket(value_us)] += count;
        self.total += count;
    }

    fn clear(&mut self) {
        self.counts.iter_mut().for_each(|c| *c = 0);
        self.total = 0;
    }
}

/// One window sample: a histogram and the bytes committed since `start_us`.
#[derive(Debug, Clone)]
struct Sample {
    start_us: u64,
    latency: Histogram,
    bytes: u64,
}

/// What [`CommitStats::summary`] reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Summary {
    /// Committed bytes per second over the window.
    pub bytes_per_sec: f64,
    /// Latency percentiles in milliseconds: p50, p75, p99, p99.9.
    pub p50_ms: f64,
    /// 75th percentile.
    pub p75_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// 99.9th percentile.
    pub p999_ms: f64,
    /// Records committed since start-up (all leader terms).
    pub committed_records: u64,
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Throughput (bytes/second): {:.2}, Latency (ms): {:.3} p50 {:.3} p75 {:.3} p99 {:.3} p999, committed records {}",
            self.bytes_per_sec, self.p50_ms, self.p75_ms, self.p99_ms, self.p999_ms, self.committed_records
        )
    }
}

/// The workload's commit statistics.
#[derive(Debug, Clone)]
pub struct CommitStats {
    record_bytes: u64,
    /// Proposed and not yet committed: (last offset, records, proposed at).
    pending: VecDeque<(i64, u64, u64)>,
    samples: [Sample; 2],
    current: usize,
    committed_records: u64,
    next_summary_us: Option<u64>,
}

impl CommitStats {
    /// Statistics for records of `record_bytes` bytes.
    pub fn new(record_bytes: usize) -> Self {
        let sample = |start_us| Sample {
            start_us,
            latency: Histogram::new(),
            bytes: 0,
        };
        Self {
            record_bytes: record_bytes as u64,
            pending: VecDeque::new(),
            samples: [sample(0), sample(0)],
            current: 0,
            committed_records: 0,
            next_summary_us: None,
        }
    }

    /// `records` records ending at `last_offset` were handed to the Raft core at `now_us`.
    pub fn proposed(&mut self, last_offset: i64, records: u64, now_us: u64) {
        if self.next_summary_us.is_none() {
            self.next_summary_us = Some(now_us + SUMMARY_INTERVAL_US);
            for s in &mut self.samples {
                s.start_us = now_us;
            }
        }
        self.pending.push_back((last_offset, records, now_us));
    }

    /// The high watermark reached `high_watermark` at `now_us`: every record below it is
    /// committed.
    pub fn committed(&mut self, high_watermark: i64, now_us: u64) {
        self.roll(now_us);
        while let Some(&(last, records, at_us)) = self.pending.front() {
            if last >= high_watermark {
                break;
            }
            self.pending.pop_front();
            let sample = &mut self.samples[self.current];
            sample.latency.record(now_us.saturating_sub(at_us), records);
            sample.bytes += records * self.record_bytes;
            self.committed_records += records;
        }
    }

    /// Records proposed and not yet committed.
    pub fn pending_records(&self) -> u64 {
        self.pending.iter().map(|(_, records, _)| records).sum()
    }

    /// Leadership was lost: what was pending may never commit in this leader's term (Kafka's
    /// `TestRaftServer` drops its pending appends on resign too).
    pub fn resigned(&mut self) {
        self.pending.clear();
    }

    /// Starts a new sample once the current one is 30 s old, dropping the oldest.
    fn roll(&mut self, now_us: u64) {
        if now_us.saturating_sub(self.samples[self.current].start_us) >= SAMPLE_US {
            self.current = 1 - self.current;
            let s = &mut self.samples[self.current];
            s.start_us = now_us;
            s.latency.clear();
            s.bytes = 0;
        }
    }

    /// The summary, when one is due at `now_us` (every 5 s once the workload has started).
    pub fn summary_due(&mut self, now_us: u64) -> Option<Summary> {
        let due = self.next_summary_us?;
        if now_us < due {
            return None;
        }
        self.next_summary_us = Some(now_us + SUMMARY_INTERVAL_US);
        Some(self.summary(now_us))
    }

    /// The figures over the current window.
    pub fn summary(&mut self, now_us: u64) -> Summary {
        self.roll(now_us);
        let oldest = self.samples[0].start_us.min(self.samples[1].start_us);
        let elapsed_s = (now_us.saturating_sub(oldest) as f64 / 1e6).max(1e-3);
        let bytes: u64 = self.samples.iter().map(|s| s.bytes).sum();
        let mut merged = Histogram::new();
        for s in &self.samples {
            for (i, c) in s.latency.counts.iter().enumerate() {
                merged.counts[i] += c;
            }
            merged.total += s.latency.total;
        }
        let pct = |q: f64| percentile_ms(&merged, q);
        Summary {
            bytes_per_sec: bytes as f64 / elapsed_s,
            p50_ms: pct(0.50),
            p75_ms: pct(0.75),
            p99_ms: pct(0.99),
            p999_ms: pct(0.999),
            committed_records: self.committed_records,
        }
    }
}

/// The `q` quantile of `h` in milliseconds (NaN when empty, as Kafka's percentiles report).
fn percentile_ms(h: &Histogram, q: f64) -> f64 {
    if h.total == 0 {
        return f64::NAN;
    }
    let rank = ((q * h.total as f64).ceil() as u64).clamp(1, h.total);
    let mut seen = 0;
    for (i, c) in h.counts.iter().enumerate() {
        seen += c;
        if seen >= rank {
            return Histogram::bucket_high(i) as f64 / 1000.0;
        }
    }
    f64::NAN
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_cover_values_with_three_percent_precision() {
        for v in [
            0u64,
            1,
            31,
            32,
            33,
            63,
            64,
            100,
            999,
            1_000,
            12_345,
            250_000,
            1 << 39,
        ] {
            let b = Histogram::bucket(v);
            let high = Histogram::bucket_high(b);
            assert!(high >= v, "value {v} bucket {b} high {high}");
            assert!(
                (high - v) as f64 <= (v as f64 * 0.032).max(0.0),
                "value {v} bucket {b} high {high}"
            );
            if b > 0 {
                assert!(Histogram::bucket_high(b - 1) < v, "value {v} bucket {b}");
            }
        }
    }

    #[test]
    fn latency_is_from_proposal_to_the_high_watermark_passing_the_last_record() {
        let mut s = CommitStats::new(256);
        s.proposed(9, 10, 1_000); // offsets 0..=9
        s.proposed(19, 10, 3_000); // offsets 10..=19
        s.committed(10, 5_000); // first batch: 4 ms
        s.committed(19, 9_000); // offset 19 not yet below the high watermark
        s.committed(20, 11_000); // second batch: 8 ms
        let sum = s.summary(11_000);
        assert_eq!(sum.committed_records, 20);
        assert!((sum.p50_ms - 4.0).abs() < 0.15, "{sum}");
        assert!((sum.p99_ms - 8.0).abs() < 0.3, "{sum}");
        // 20 × 256 B over the 10 ms since the first proposal.
        assert!((sum.bytes_per_sec - 512_000.0).abs() < 1.0, "{sum}");
    }

    #[test]
    fn resigning_drops_pending_records_and_the_window_forgets_old_samples() {
        let mut s = CommitStats::new(100);
        s.proposed(0, 1, 0);
        s.resigned();
        s.committed(5, 1_000);
        assert_eq!(s.summary(1_000).committed_records, 0);
        assert!(s.summary(1_000).p50_ms.is_nan());
        // A slow record now, fast ones 70 s later: the slow one has left the window.
        s.proposed(1, 1, 2_000);
        s.committed(2, 502_000);
        s.proposed(2, 1, 70_000_000);
        s.committed(3, 70_001_000);
        s.committed(3, 100_500_000); // rolls the window past the slow sample
        let sum = s.summary(100_500_000);
        assert_eq!(sum.committed_records, 2);
        assert!(sum.p999_ms < 2.0, "{sum}");
    }

    #[test]
    fn a_summary_is_due_every_five_seconds_once_started() {
        let mut s = CommitStats::new(1);
        assert!(s.summary_due(10_000_000).is_none());
        s.proposed(0, 1, 10_000_000);
        assert!(s.summary_due(14_000_000).is_none());
        assert!(s.summary_due(15_000_000).is_some());
        assert!(s.summary_due(16_000_000).is_none());
        assert!(s.summary_due(20_000_000).is_some());
    }
}
