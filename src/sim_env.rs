//! The one place the Raft simulation (`src/raft/tests/sim`) reads its environment and the
//! wall clock, so `src/raft/` stays sans-IO: `SIM_SEEDS` (runs per scenario), `SIM_SEED_BASE`
//! (first seed) and `SIM_TRACE` (print the event trace of a failing seed).
#![allow(clippy::disallowed_methods)]

use std::time::{Duration, Instant};

fn var_u64(name: &str) -> Option<u64> {
    std::env::var(name).ok().and_then(|v| v.trim().parse().ok())
}

/// The seeds to run: `SIM_SEED_BASE .. SIM_SEED_BASE + SIM_SEEDS` (`default_count` when unset).
pub fn seeds(default_count: u64) -> std::ops::Range<u64> {
    let base = var_u64("SIM_SEED_BASE").unwrap_or(0);
    let count = var_u64("SIM_SEEDS").unwrap_or(default_count);
    base..base + count
}

/// Whether `SIM_TRACE` is set.
pub fn trace_enabled() -> bool {
    std::env::var_os("SIM_TRACE").is_some()
}

/// Wall-clock stopwatch for reporting how long a campaign took.
pub struct Stopwatch(Instant);

impl Stopwatch {
    /// Starts now.
    pub fn start() -> Self {
        Self(Instant::now())
    }

    /// Time since start.
    pub fn elapsed(&self) -> Duration {
        self.0.elapsed()
    }
}
