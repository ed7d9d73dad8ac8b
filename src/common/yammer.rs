//! Kafka's request and event-queue histograms, computed as Yammer Metrics computes them.
//!
//! A time recorded (`update`) goes into an exponentially decaying reservoir (Yammer's
//! `ExponentiallyDecayingReservoir`: 1028 samples, α = 0.015, so the last ~5 minutes weigh
//! most): each sample gets the priority `exp(α·(t − start)) / u` for a uniform `u`, and the
//! 1028 highest priorities are kept (a min-heap: a new sample above the lowest replaces it; a
//! priority tie, about 2⁻⁵³ likely, keeps both where Yammer's map drops the new one). Time
//! counts in whole seconds, as Yammer's `currentTimeInSeconds`, so one `exp` serves a second.
//! A scrape takes a [`Snapshot`]: the weighted quantiles Kafka
//! exports as `50thPercentile` … `999thPercentile`, plus the lifetime count, mean and maximum.
//! Plain data: whoever records times owns the histogram; readers copy a snapshot.

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
    /// The reservoir: a binary min-heap on priority (ordered bits of a positive f64) of
    /// (priority, value, weight), so replacing the lowest priority is one sift-down, with no
    /// allocation once full.
    samples: Vec<(u64, f64, f64)>,
    /// Yammer's landmark, in whole seconds.
    start_s: f64,
    /// The second whose weight `weight` holds: Yammer weighs a sample by its whole second, so
    /// one `exp` serves every sample of that second.
    weight_s: f64,
    weight: f64,
    count: u64,
    sum: f64,
    max: f64,
    rng: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self {
            samples: Vec::new(),
            start_s: f64::NAN,
            weight_s: f64::NAN,
            weight: 1.0,
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
    /// Records `value` at `now_s` (seconds on any monotonic clock; Yammer counts whole
    /// seconds). Never inlined, so that a profile shows what the histograms cost.
    #[inline(never)]
    pub fn update(&mut self, value: f64, now_s: f64) {
        // Whole seconds; a cast for the usual non-negative time (`floor` is a libm call that
        // showed in the request path's profile).
        let now_s = if now_s >= 0.0 {
            (now_s as u64) as f64
        } else {
            now_s.floor()
        };
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
        if now_s != self.weight_s {
            self.weight_s = now_s;
            self.weight = (ALPHA * (now_s - self.start_s)).exp();
        }
        let weight = self.weight;
        // u in (0, 1]: never 0, so the priority is finite.
        let u = ((self.next_random() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        let priority = (weight / u).to_bits();
        if self.samples.len() < SIZE {
            self.samples.push((priority, value, weight));
            self.sift_up(self.samples.len() - 1);
        } else if self
            .samples
            .first()
            .is_some_and(|(lowest, _, _)| priority > *lowest)
        {
            // Yammer keeps the highest priorities: the new sample replaces the lowest.
            self.samples[0] = (priority, value, weight);
            self.sift_down(0);
        }
    }

    fn sift_up(&mut self, mut i: usize) {
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.samples[parent].0 <= self.samples[i].0 {
                return;
            }
            self.samples.swap(parent, i);
            i = parent;
        }
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.samples.len();
        loop {
            let (l, r) = (2 * i + 1, 2 * i + 2);
            let mut lowest = i;
            if l < n && self.samples[l].0 < self.samples[lowest].0 {
                lowest = l;
            }
            if r < n && self.samples[r].0 < self.samples[lowest].0 {
                lowest = r;
            }
            if lowest == i {
                return;
            }
            self.samples.swap(i, lowest);
            i = lowest;
        }
    }

    /// Yammer's rescale: the landmark moves to now and every weight and priority shrinks by the
    /// same factor, keeping their order (so the heap stays a heap).
    fn rescale(&mut self, now_s: f64) {
        let factor = (-ALPHA * (now_s - self.start_s)).exp();
        self.start_s = now_s;
        self.weight_s = f64::NAN;
        for (p, _, w) in &mut self.samples {
            *p = (f64::from_bits(*p) * factor).to_bits();
            *w *= factor;
        }
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
        let mut values: Vec<(f64, f64)> = self.samples.iter().map(|&(_, v, w)| (v, w)).collect();
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

    /// The heap keeps exactly the samples a priority-ordered map of the 1028 highest keeps
    /// (Yammer's `ConcurrentSkipListMap`), fed the same priorities.
    #[test]
    fn the_heap_keeps_the_highest_priorities() {
        let mut h = Histogram::default();
        let mut rng = Histogram::default();
        let mut reference = std::collections::BTreeMap::new();
        for i in 0..20_000u32 {
            let now_s = f64::from(i / 100);
            h.update(f64::from(i), now_s);
            let weight = (ALPHA * now_s).exp();
            let u = ((rng.next_random() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
            reference.insert((weight / u).to_bits(), i);
            if reference.len() > SIZE {
                reference.pop_first();
            }
        }
        let mut kept: Vec<u32> = h.samples.iter().map(|&(_, v, _)| v as u32).collect();
        kept.sort_unstable();
        let mut want: Vec<u32> = reference.into_values().collect();
        want.sort_unstable();
        assert_eq!(kept, want);
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
