//! The controller benchmark's measurements, shared by `main.rs` (the full and smoke runs) and
//! tests/bench_smoke.rs (the smoke run under `cargo test`): a fake-broker load generator
//! speaking the real protocol drives a ferrokraft controller and a Kafka controller in turn,
//! at each size, and every figure is read from the committed log.
#![allow(missing_docs, dead_code)]

#[path = "cold_start.rs"]
pub mod cold_start;
#[path = "committed.rs"]
pub mod committed;
#[path = "failover.rs"]
pub mod failover;
#[path = "../quorum/fetch.rs"]
pub mod fetch;
#[path = "fleet.rs"]
pub mod fleet;
#[path = "fleet_child.rs"]
pub mod fleet_child;
#[path = "heartbeats.rs"]
pub mod heartbeats;
#[path = "observer.rs"]
pub mod observer;
#[path = "phases.rs"]
pub mod phases;
#[path = "../quorum/probe.rs"]
pub mod probe;
#[path = "../quorum/procs.rs"]
pub mod procs;
#[path = "propagation.rs"]
pub mod propagation;
#[path = "report.rs"]
pub mod report;
#[path = "../storage/measure.rs"]
#[allow(dead_code)]
pub mod storage_measure;
#[path = "wire.rs"]
pub mod wire;

use std::path::{Path, PathBuf};
use std::time::Instant;

use procs::kafka_lib;
use procs::{Env, Kind};

/// The benchmark reads the clock; nothing else may.
#[allow(clippy::disallowed_methods)]
pub fn now() -> Instant {
    Instant::now()
}

/// Sizes and counts of one run.
#[derive(Debug, Clone)]
pub struct Params {
    /// Partitions (RF 3) at each size.
    pub sizes: Vec<usize>,
    /// Partitions per topic.
    pub partitions_per_topic: i32,
    /// Topics per CreateTopics request.
    pub topics_per_request: usize,
    /// CreateTopics requests in flight.
    pub in_flight: usize,
    /// `controller.quorum.append.linger.ms` of both controllers in the size phases; `None`
    /// keeps Kafka's default (25 ms), which bounds CreateTopics: requests in flight × their
    /// partitions ÷ (linger + service time) (#41).
    pub linger_ms: Option<u64>,
    /// Fake brokers of each heartbeat measurement.
    pub heartbeat_brokers: Vec<usize>,
    /// How long each heartbeat measurement runs.
    pub heartbeat_secs: u64,
    /// Also measure the metrics' cost at each heartbeat size: ferrokraft with the metrics
    /// listener off and on, side by side (#39).
    pub metrics_cost: bool,
    /// Off/on pairs of the metrics-cost comparison (each pair two fresh controllers measured
    /// side by side in one window).
    pub metrics_cost_pairs: usize,
    /// The CPU the controller under test is pinned to (the load generator then runs on the
    /// others), so the two do not share a core; `None`: unpinned.
    pub pin_controller: Option<usize>,
    /// How often the metrics-cost runs scrape `/metrics`: 1 s by default, 15 times as often
    /// as Strimzi's and Prometheus's usual 15 s, to be on the safe side.
    pub scrape_secs: u64,
    /// The Kafka controller's heap (-Xmx/-Xms).
    pub kafka_heap: String,
    /// SIGKILLs of the leader in the failover measurement (4).
    pub failover_trials: usize,
    /// Fetch-speaking observers of the propagation measurement (7).
    pub observers: usize,
    /// Topics created one after another in the propagation measurement.
    pub propagation_trials: usize,
    /// Which implementations, in the order each size runs them.
    pub kinds: Vec<Kind>,
    /// The machine's floors (fsync, sequential write, memcpy) at full or smoke sizes.
    pub storage: storage_measure::Params,
    /// Loopback round trips of the network floor.
    pub rtt_rounds: usize,
}

impl Params {
    /// The sizes: 10k, 100k and 1M partitions; 1,000 and 10,000 brokers for 10 min.
    pub fn full() -> Params {
        Params {
            sizes: vec![10_000, 100_000, 1_000_000],
            partitions_per_topic: 10,
            topics_per_request: 100,
            in_flight: 4,
            linger_ms: None,
            heartbeat_brokers: vec![1_000, 10_000],
            heartbeat_secs: 600,
            metrics_cost: false,
            metrics_cost_pairs: 2,
            pin_controller: None,
            scrape_secs: 1,
            kafka_heap: "4G".into(),
            failover_trials: 5,
            observers: 3,
            propagation_trials: 10,
            kinds: vec![Kind::Ferrokraft, Kind::KafkaController],
            storage: storage_measure::Params::full(),
            rtt_rounds: 5_000,
        }
    }

    /// Every measurement once, at tiny sizes.
    pub fn smoke() -> Params {
        Params {
            sizes: vec![60],
            partitions_per_topic: 3,
            topics_per_request: 5,
            in_flight: 2,
            linger_ms: None,
            heartbeat_brokers: vec![20],
            heartbeat_secs: 3,
            metrics_cost: true,
            metrics_cost_pairs: 1,
            pin_controller: None,
            scrape_secs: 1,
            kafka_heap: "512M".into(),
            failover_trials: 2,
            observers: 3,
            propagation_trials: 3,
            kinds: vec![Kind::Ferrokraft, Kind::KafkaController],
            storage: storage_measure::Params::smoke(),
            rtt_rounds: 200,
        }
    }
}

/// The run's environment for Kafka `kafka_version`.
pub fn env(kafka_version: &str) -> Result<Env, String> {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib = kafka_lib(kafka_version)?;
    Ok(Env {
        ferrokraft: PathBuf::from(env!("CARGO_BIN_EXE_ferrokraft")),
        kafka_lib: lib.clone(),
        test_raft_lib: lib,
        log4j: repo.join("interop/kafka/log4j2-server.properties"),
    })
}

/// Everything one run measured.
#[derive(Default)]
pub struct Results {
    /// The machine's floors, measured first in the same run.
    pub floors: storage_measure::Floors,
    pub loopback_rtt: storage_measure::Latency,
    pub sizes: Vec<phases::SizeRun>,
    pub failovers: Vec<failover::FailoverRun>,
    pub heartbeats: Vec<heartbeats::HeartbeatRun>,
    /// The metrics' cost runs, in the order run.
    pub metrics_cost: Vec<heartbeats::HeartbeatRun>,
    /// Sizes a controller could not hold (Kafka's beyond its heap).
    pub stopped: Vec<Stopped>,
}

/// A size run that failed: where a controller stops.
#[derive(Debug, Clone)]
pub struct Stopped {
    pub kind: procs::Kind,
    pub partitions: usize,
    pub heap: String,
    /// The error's first line.
    pub why: String,
}

/// Runs every measurement in `dir`, the implementations taking turns at each size;
/// `progress` sees the results after each, so a failure late in a long run loses nothing
/// measured before it.
pub fn run(
    env: &Env,
    dir: &Path,
    p: &Params,
    progress: &mut dyn FnMut(&Results),
) -> Result<Results, String> {
    // One worker thread: the generator must leave the controller its cores.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    let mut r = Results::default();
    eprintln!("floors …");
    r.floors = storage_measure::floors(dir, &p.storage)?;
    r.loopback_rtt = storage_measure::loopback_rtt(p.rtt_rounds)?;
    progress(&r);
    for &size in &p.sizes {
        for &kind in &p.kinds {
            eprintln!("{} at {size} partitions …", kind.label());
            match phases::size_run(&rt, env, dir, kind, size, p) {
                Ok(run) => r.sizes.push(run),
                // A Kafka controller that cannot hold a size (its heap) is a result, where it
                // stops (#41), not the end of the run; ferrokraft failing is.
                Err(e) if kind != procs::Kind::Ferrokraft => {
                    eprintln!("{} stopped at {size}: {e}", kind.label());
                    r.stopped.push(Stopped {
                        kind,
                        partitions: size,
                        heap: p.kafka_heap.clone(),
                        why: e.lines().next().unwrap_or_default().to_string(),
                    });
                }
                Err(e) => return Err(e),
            }
            progress(&r);
        }
        for &kind in &p.kinds {
            // --failover-trials 0 leaves failover out (a size where only the image matters).
            if p.failover_trials == 0
                || r.stopped
                    .iter()
                    .any(|s| s.kind == kind && s.partitions == size)
            {
                continue;
            }
            eprintln!("{} failover, 3 voters, {size} partitions …", kind.label());
            r.failovers
                .push(failover::failover_run(&rt, env, dir, kind, size, p)?);
            progress(&r);
        }
    }
    for &brokers in &p.heartbeat_brokers {
        for &kind in &p.kinds {
            eprintln!("{} with {brokers} heartbeating brokers …", kind.label());
            r.heartbeats.push(heartbeats::heartbeats(
                &rt,
                env,
                dir,
                kind,
                brokers,
                p.heartbeat_secs,
                p,
            )?);
            progress(&r);
        }
        if p.metrics_cost {
            r.metrics_cost.extend(heartbeats::metrics_cost(
                &rt,
                env,
                dir,
                brokers,
                p.heartbeat_secs,
                p,
            )?);
            progress(&r);
        }
    }
    Ok(r)
}
