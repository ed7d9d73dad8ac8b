//! The quorum benchmark's measurements, shared by `main.rs` (the full and smoke runs) and
//! tests/bench_smoke.rs (the smoke run under `cargo test`).
#![allow(missing_docs)]

#[path = "catchup.rs"]
pub mod catchup;
#[path = "fetch.rs"]
#[allow(dead_code)]
pub mod fetch;
#[path = "json.rs"]
pub mod json;
#[path = "phases.rs"]
pub mod phases;
#[path = "probe.rs"]
pub mod probe;
#[path = "procs.rs"]
pub mod procs;
#[path = "report.rs"]
pub mod report;
#[path = "snapshot_transfer.rs"]
pub mod snapshot_transfer;
#[path = "../storage/measure.rs"]
#[allow(dead_code)]
pub mod storage_measure;
#[path = "sweep.rs"]
pub mod sweep;

use std::path::{Path, PathBuf};
use std::time::Instant;

use procs::kafka_lib;
use procs::{Env, Timers};

/// The benchmark reads the clock; nothing else may.
#[allow(clippy::disallowed_methods)]
pub fn now() -> Instant {
    Instant::now()
}

/// Sizes and counts of one run.
#[derive(Debug, Clone)]
pub struct Params {
    /// Start-up trials per implementation and log size.
    pub startup_trials: usize,
    /// Size of the "big" log for start-up.
    pub big_log_bytes: u64,
    /// Failover trials per implementation, timer setting and stop signal.
    pub failover_trials: usize,
    /// (label, timers) for failover; the last one is also watched for spurious elections.
    pub timer_sets: Vec<(String, Timers)>,
    /// Idle time before RSS is read.
    pub idle_secs: u64,
    /// How long the spurious-election watch lasts.
    pub spurious_secs: u64,
    /// Record size of the workload.
    pub record_bytes: usize,
    /// Workload rates (records/s) of the latency cells; [`MAX_RATE`] means unpaced (a note,
    /// not a capacity: the sweep finds that).
    pub rates: Vec<u64>,
    /// The offered rates of the sweep (records/s), rising.
    pub sweep_rates: Vec<u64>,
    /// Measured window of each sweep rate.
    pub sweep_secs: u64,
    /// Linger settings.
    pub lingers_ms: Vec<u64>,
    /// Warm-up before a latency measurement.
    pub warmup_secs: u64,
    /// Measured period of a latency run.
    pub latency_secs: u64,
    /// Log bytes an empty follower fetches in the catch-up measurement.
    pub catchup_bytes: u64,
    /// Catch-up trials per implementation (also snapshot-transfer trials).
    pub catchup_trials: usize,
    /// Size of the snapshot an empty follower downloads in the snapshot-transfer measurement.
    pub snapshot_bytes: u64,
    /// Floors at full or smoke sizes.
    pub storage: storage_measure::Params,
    /// The phases to run (`--only`); the floors always run.
    pub phases: Vec<Phase>,
}

/// A measurement phase, for `--only`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Phase {
    Startup,
    Failover,
    Latency,
    CatchUp,
    Snapshot,
    Sweep,
}

impl Phase {
    pub const ALL: [Phase; 6] = [
        Phase::Startup,
        Phase::Failover,
        Phase::Latency,
        Phase::Sweep,
        Phase::CatchUp,
        Phase::Snapshot,
    ];

    /// `startup`, `failover`, `latency`, `sweep`, `catchup` or `snapshot`.
    pub fn parse(name: &str) -> Option<Phase> {
        Phase::ALL.into_iter().find(|p| p.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Phase::Startup => "startup",
            Phase::Failover => "failover",
            Phase::Latency => "latency",
            Phase::CatchUp => "catchup",
            Phase::Snapshot => "snapshot",
            Phase::Sweep => "sweep",
        }
    }
}

/// A rate high enough that the workload is not paced (`--rates max`): ferrokraft's closed loop
/// then commits as fast as it can, Kafka's `TestRaftServer` appends as fast as its workload
/// thread can (not its capacity: the sweep measures that).
pub const MAX_RATE: u64 = 10_000_000;

/// The sweep's offered rates in the full run (records/s).
/// Finer between 200k and 500k, where both implementations' capacities turned out to lie.
pub const SWEEP_LADDER: [u64; 13] = [
    1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 300_000, 400_000, 500_000,
    1_000_000, 2_000_000,
];

impl Params {
    /// The full run of docs/benchmarks.md.
    pub fn full(trials: usize) -> Params {
        Params {
            startup_trials: 10,
            big_log_bytes: 100 * 1024 * 1024,
            failover_trials: trials,
            timer_sets: vec![
                ("default".into(), Timers::DEFAULT),
                ("tenth".into(), Timers::DEFAULT.tenth()),
            ],
            idle_secs: 60,
            spurious_secs: 600,
            record_bytes: 256,
            rates: vec![1_000, 20_000],
            sweep_rates: SWEEP_LADDER.to_vec(),
            sweep_secs: 30,
            lingers_ms: vec![25, 0],
            warmup_secs: 10,
            latency_secs: 60,
            catchup_bytes: 1024 * 1024 * 1024,
            catchup_trials: 3,
            snapshot_bytes: 100 * 1024 * 1024,
            storage: storage_measure::Params::full(),
            phases: Phase::ALL.to_vec(),
        }
    }

    /// Every measurement once, at tiny sizes.
    pub fn smoke() -> Params {
        Params {
            startup_trials: 1,
            big_log_bytes: 2 * 1024 * 1024,
            failover_trials: 1,
            timer_sets: vec![("tenth".into(), Timers::DEFAULT.tenth())],
            idle_secs: 1,
            spurious_secs: 3,
            record_bytes: 256,
            rates: vec![20_000],
            sweep_rates: vec![200, 1_000],
            sweep_secs: 5,
            lingers_ms: vec![25],
            warmup_secs: 1,
            latency_secs: 6,
            catchup_bytes: 32 * 1024 * 1024,
            catchup_trials: 1,
            snapshot_bytes: 16 * 1024 * 1024,
            storage: storage_measure::Params::smoke(),
            phases: Phase::ALL.to_vec(),
        }
    }
}

/// The run's environment for Kafka `kafka_version` and TestRaftServer from `test_raft_version`.
pub fn env(kafka_version: &str, test_raft_version: &str) -> Result<Env, String> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    Ok(Env {
        ferrokraft: PathBuf::from(env!("CARGO_BIN_EXE_ferrokraft")),
        kafka_lib: kafka_lib(kafka_version)?,
        test_raft_lib: kafka_lib(test_raft_version)?,
        log4j: repo.join("interop/kafka/log4j2-server.properties"),
    })
}

/// Everything one run measured.
#[derive(Default)]
pub struct Results {
    pub floors: storage_measure::Floors,
    pub loopback_rtt: storage_measure::Latency,
    pub startup: phases::StartupResults,
    pub failover: phases::FailoverResults,
    pub latency: Vec<phases::LatencyRun>,
    pub catchup: catchup::CatchUpResults,
    pub snapshot: catchup::CatchUpResults,
    pub sweep: Vec<sweep::Sweep>,
}

/// Runs every measurement in `dir`; `progress` sees the results after each phase, so a
/// failure late in a long run loses nothing measured before it.
pub fn run(
    env: &Env,
    dir: &Path,
    p: &Params,
    progress: &mut dyn FnMut(&Results),
) -> Result<Results, String> {
    let mut r = Results::default();
    eprintln!("floors …");
    r.floors = storage_measure::floors(dir, &p.storage)?;
    r.loopback_rtt = storage_measure::loopback_rtt(if p.startup_trials > 1 { 5000 } else { 200 })?;
    progress(&r);
    for &phase in &p.phases {
        eprintln!("{} …", phase.name());
        match phase {
            Phase::Startup => r.startup = phases::startup(env, dir, p)?,
            Phase::Failover => r.failover = phases::failover(env, dir, p)?,
            Phase::Latency => r.latency = phases::latency(env, dir, p)?,
            Phase::CatchUp => r.catchup = catchup::catch_up(env, dir, p)?,
            Phase::Snapshot => r.snapshot = snapshot_transfer::snapshot_transfer(env, dir, p)?,
            Phase::Sweep => r.sweep = sweep::sweep(env, dir, p)?,
        }
        progress(&r);
    }
    Ok(r)
}
