//! A deterministic cluster simulation in the spirit of Kafka's `RaftEventSimulationTest`:
//! 1–5 voters and 0–3 observers, each a `RaftCore` over an in-memory log that loses unflushed
//! appends on a crash; a network with delay, reordering, drops, duplicates and partitions;
//! crashes (also part-way through carrying out a core's outputs), restarts and graceful
//! shutdowns; a workload proposing on every leader; Kafka's invariants after every event.
//!
//! One seed drives a run. `SIM_SEEDS` (runs per scenario) and `SIM_SEED_BASE` pick the seeds;
//! a failure prints the command that replays it; `SIM_TRACE=1` prints every event.

mod auto_join;
mod cluster;
mod invariants;
mod network;
mod node;
mod reconfig;
mod scenarios;
mod snapshots;
mod soak;

use crate::raft::Rng;
use crate::sim_env;

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub struct Stats {
    pub virtual_ms: u64,
    pub events: u64,
    /// Soak only: virtual ms from the last fault healing to a leader with a known high
    /// watermark, and to the high watermark passing every pre-heal log end.
    pub time_to_leader_ms: Option<u64>,
    pub time_to_progress_ms: Option<u64>,
    /// Snapshots taken, and snapshots installed by replicas behind their leader's log start.
    pub snapshots_taken: u64,
    pub snapshots_installed: u64,
}

/// The run's generator: the seed mixed with the scenario name, so scenarios differ.
pub fn rng_for(name: &str, seed: u64) -> Rng {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let mut rng = Rng::new(h ^ seed);
    rng.next_u64();
    rng
}

/// How a scenario reports: its stats, or what failed (with the event trace when asked).
pub type Outcome = Result<Stats, String>;

/// Runs `scenario` for every seed; on failure, reruns the seed with a trace, prints it with
/// the replay command, and fails the test after all seeds ran.
pub fn run_seeds(name: &str, default_count: u64, scenario: fn(u64, bool) -> Outcome) -> Vec<Stats> {
    let seeds = sim_env::seeds(default_count);
    let live_trace = sim_env::trace_enabled();
    let watch = sim_env::Stopwatch::start();
    let mut stats = Vec::new();
    let mut failures = Vec::new();
    for seed in seeds.clone() {
        let result = std::panic::catch_unwind(|| scenario(seed, live_trace))
            .unwrap_or_else(|p| Err(panic_message(p)));
        match result {
            Ok(s) => stats.push(s),
            Err(first) => {
                let traced = std::panic::catch_unwind(|| scenario(seed, true))
                    .unwrap_or_else(|p| Err(panic_message(p)));
                let detail = traced
                    .err()
                    .unwrap_or_else(|| "(passed when traced!)".into());
                eprintln!(
                    "\n=== {name} seed {seed} FAILED: {first}\n--- rerun with trace:\n{detail}\n--- replay: {}",
                    replay_command(name, seed)
                );
                failures.push(seed);
            }
        }
    }
    let events: u64 = stats.iter().map(|s| s.events).sum();
    let virt: u64 = stats.iter().map(|s| s.virtual_ms).sum();
    let taken: u64 = stats.iter().map(|s| s.snapshots_taken).sum();
    let installed: u64 = stats.iter().map(|s| s.snapshots_installed).sum();
    let runs_installing = stats.iter().filter(|s| s.snapshots_installed > 0).count();
    eprintln!(
        "sim {name}: seeds {}..{} ({} runs), failures {}, events {events}, virtual {} s, snapshots taken {taken}, installed {installed} (in {runs_installing} runs), wall {:.2} s",
        seeds.start,
        seeds.end,
        seeds.end - seeds.start,
        failures.len(),
        virt / 1000,
        watch.elapsed().as_secs_f64()
    );
    assert!(
        failures.is_empty(),
        "{name} failed for seeds {failures:?}; replay the first with: {}",
        replay_command(name, failures[0])
    );
    stats
}

fn replay_command(name: &str, seed: u64) -> String {
    format!(
        "SIM_SEED_BASE={seed} SIM_SEEDS=1 cargo test --lib raft::tests::sim::{name} -- --nocapture"
    )
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    let msg = p
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "non-string panic".into());
    format!("panic: {msg}")
}

/// Turns a run's result into an outcome, attaching the trace when one was kept.
pub fn finish(cluster: &cluster::Cluster, result: Result<(), String>, extra: Stats) -> Outcome {
    match result {
        Ok(()) => Ok(Stats {
            virtual_ms: cluster.elapsed_ms(),
            events: cluster.events,
            snapshots_taken: cluster.snapshots_taken,
            snapshots_installed: cluster.snapshots_installed,
            ..extra
        }),
        Err(e) => {
            let mut msg = e;
            if let Some(trace) = &cluster.trace {
                msg.push_str("\n--- last events:\n");
                for line in trace {
                    msg.push_str(line);
                    msg.push('\n');
                }
            }
            Err(msg)
        }
    }
}
