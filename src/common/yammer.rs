//! Kafka's request and event-queue histograms, computed as Yammer Metrics computes them.
//!
//! A time recorded (`update`) goes into an exponentially decaying reservoir (Yammer's
//! `ExponentiallyDecayingReservoir`: 1028 samples, α = 0.015, so the last ~5 minutes weigh
//! most): each sample gets the priority `exp(α·(t − start)) / u` for a uniform `u`, and the
//! 1028 highest priorities are kept. A scrape takes a [`Snapshot`]: the weighted quantiles Kafka
//! exports as `50thPercentile` … `999thPercentile`, plus the lifetime count, mean and maximum.
//! Plain data: whoever records times owns the histogram; readers copy a snapshot.

use std::collections::BTreeMap;

/// Samples kept (Yammer's default reservoir size).
const SIZE: usize = 1028;
/// Decay per second (Yammer's default α, biased to the last ~5 minutes).
const ALPHA: f64 = 0.015;
/// Priorities are rescaled this often so that `exp` does not overflow (Yammer: one hour).
const RESCALE_S: f64 = 3600.0;

/// The quantiles Kafka's JMX histograms expose, with the label the JMX exporter gives each
/// (`<n>thPercentile` → `quantile="0.<n>"`).
pub const QUANTILES: [(f64, &str); 6] = [
    (0.5, "0.50"),
    (0.75, "0.75"),
    (0.95, "0.95"),
    (0.98, "0.98"),
    (0.99, "0.99"),
    (0.999, "0.999"),
];

/// One histogram.
#[derive(Debug, Clone)]
pub struct Histogram {
    /// priority (as ordered bits of a positive f64) → (value, weight).
    samples: BTreeMap<u64, (f64, f64)>,
    start_s: f64,
    count: u64,
    sum: f64,
    max: f64,
    rng: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self {
            samples: BTreeMap::new(),
            start_s: f64::NAN,
            count: 0,
            sum: 0.0,
            max: f64::NAN,
            rng: 0x9E37_79B9_7F4A_7C15,
        }
    }
}

/// What a scrape reads of a histogram.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Values at [`QUANTILES`], in order (0 when empty, as Yammer reports).
    pub quantiles: [f64; 6],
    /// Values recorded since start.
    pub count: u64,
    /// Mean over the lifetime (0 when empty).
    pub mean: f64,
    /// Largest value over the lifetime (0 when empty).
    pub max: f64,
}

impl Histogram {
    /// Records `value` at `now_s` (seconds on any monotonic clock).
    pub fn update(&mut self, value: f64, now_s: f64) {
        if self.start_s.is_nan() {
            self.start_s = now_s;
        }
        if now_s - self.start_s >= RESCALE_S {
            self.rescale(now_s);
        }
        self.count += 1;
        self.sum += value;
        self.max = if self.max.is_nan() {
            value
        } else {
            self.max.max(value)
        };
        let weight = (ALPHA * (now_s - self.start_s)).exp();
        // u in (0, 1]: never 0, so the priority is finite.
        let u = ((self.next_random() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        let priority = weight / u;
        if self.samples.len() < SIZE {
            self.samples.insert(priority.to_bits(), (value, weight));
        } else if let Some((&lowest, _)) = self.samples.iter().next() {
            if priority.to_bits() > lowest {
                self.samples.remove(&lowest);
                self.samples.insert(priority.to_bits(), (value, weight));
            }
        }
    }

    /// Yammer's rescale: the landmark moves to now and every weight and priority shrinks by the
    /// same factor, keeping their order.
    fn rescale(&mut self, now_s: f64) {
        let factor = (-ALPHA * (now_s - self.start_s)).exp();
        self.start_s = now_s;
        self.samples = std::mem::take(&mut self.samples)
            .into_iter()
            .map(|(p, (v, w))| ((f64::from_bits(p) * factor).to_bits(), (v, w * factor)))
            .collect();
    }

    /// xorshift64*: enough randomness for sampling priorities, no dependency.
    fn next_random(&mut self) -> u64 {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// The weighted quantiles of the reservoir (Yammer's `WeightedSnapshot`) and the counts.
    pub fn snapshot(&self) -> Snapshot {
        let mut values: Vec<(f64, f64)> = self.samples.values().copied().collect();
        values.sort_by(|a, b| a.0.total_cmp(&b.0));
        let total: f64 = values.iter().map(|(_, w)| w).sum();
        // Cumulative normalized weight before each sample; a quantile is the first sample
        // whose cumulative weight reaches it.
        let mut quantiles = [0.0; 6];
        if total > 0.0 {
            let mut before = Vec::with_capacity(values.len());
            let mut acc = 0.0;
            for (_, w) in &values {
                before.push(acc);
                acc += w / total;
            }
            for (slot, (q, _)) in quantiles.iter_mut().zip(QUANTILES) {
                let i = before.partition_point(|b| *b <= q).saturating_sub(1);
                *slot = values.get(i).map_or(0.0, |(v, _)| *v);
            }
        }
        Snapshot {
            quantiles,
            count: self.count,
            mean: if self.count == 0 {
                0.0
            } else {
                self.sum / self.count as f64
            },
            max: if self.max.is_nan() { 0.0 } else { self.max },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_histogram_reports_zeros() {
        let s = Histogram::default().snapshot();
        assert_eq!(s.quantiles, [0.0; 6]);
        assert_eq!((s.count, s.mean, s.max), (0, 0.0, 0.0));
    }

    #[test]
    fn quantiles_of_a_uniform_stream() {
        let mut h = Histogram::default();
        for i in 1..=1000 {
            h.update(f64::from(i), 10.0);
        }
        let s = h.snapshot();
        assert_eq!(s.count, 1000);
        assert_eq!(s.max, 1000.0);
        assert!((s.mean - 500.5).abs() < 1e-9);
        // Same weights: the quantiles are the order statistics.
        assert!((s.quantiles[0] - 500.0).abs() <= 1.0, "{:?}", s.quantiles);
        assert!((s.quantiles[4] - 990.0).abs() <= 1.0, "{:?}", s.quantiles);
        assert!(s.quantiles.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn recent_samples_outweigh_old_ones() {
        let mut h = Histogram::default();
        for _ in 0..2000 {
            h.update(1.0, 0.0);
        }
        // Ten minutes later: weight e^(0.015·600) ≈ 8100 per new sample.
        for _ in 0..2000 {
            h.update(100.0, 600.0);
        }
        let s = h.snapshot();
        assert_eq!(s.quantiles[0], 100.0, "the median follows recent values");
        assert_eq!(s.count, 4000);
    }

    #[test]
    fn rescaling_keeps_the_distribution() {
        let mut h = Histogram::default();
        for i in 0..500 {
            h.update(f64::from(i % 10), 0.0);
        }
        for i in 0..500 {
            h.update(f64::from(i % 10), RESCALE_S + 1.0);
        }
        let s = h.snapshot();
        assert!(s.quantiles.iter().all(|q| q.is_finite() && *q <= 9.0));
        assert_eq!(s.quantiles[5], 9.0);
    }
}
