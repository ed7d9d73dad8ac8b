//! Controller benchmark: a fake-broker load generator drives a ferrokraft controller and an
//! Apache Kafka controller in turn, at each size, and reports ferrokraft / Kafka ratios
//! (#17). Measurements: 1 CreateTopics committed partitions/s, 2 a broker dying (session
//! expiry to the last leader move committed), 3 a controlled shutdown, 4 active-controller
//! failover with the image (three voters, SIGKILL of the leader), 5 cold start on the log and
//! on a snapshot (and the snapshot's write time), 6 many brokers heartbeating (reply p50/p99,
//! CPU, spurious fencings), 7 metadata propagation to Fetch-speaking observers, and memory.
//!
//! ```text
//! cargo bench --bench controller -- [--smoke] [--dir DIR] [--sizes N,…|none]
//!                                   [--heartbeat-brokers N,…|none] [--heartbeat-secs S]
//!                                   [--failover-trials N] [--kafka-version V]
//!                                   [--kafka-heap 4G] [--out FILE] [--only-ferrokraft]
//!                                   [--metrics-cost] [--metrics-cost-pairs 2]
//!                                   [--scrape-secs 1] [--pin-controller CPU]
//!                                   [--in-flight 4] [--linger-ms MS]
//! ```
//!
//! `--in-flight` is the CreateTopics requests kept in flight (default 4, of 100 topics of 10
//! partitions each); `--linger-ms` sets `controller.quorum.append.linger.ms` on both
//! controllers (default: Kafka's 25 ms). Together they bound the CreateTopics rate of any
//! controller: in flight × 1,000 partitions ÷ (linger + the time to serve them) (#41).
//!
//! `--metrics-cost` adds, at each heartbeat size, `--metrics-cost-pairs` pairs of ferrokraft
//! controllers with the metrics listener off and on, each pair measured side by side
//! (scraped every `--scrape-secs`, default 1), and the CPU the metrics add with its spread
//! (#39). `--pin-controller CPU` runs each controller
//! on that CPU alone and this load generator on the others.
//!
//! Sizes go up to 10,000,000 (`--sizes 10000000`, #41; with `--failover-trials 0` the
//! three-voter failover is left out). A Kafka controller that cannot hold a size (its heap,
//! `--kafka-heap`) is reported as stopped there and the run goes on. Each size's table is
//! followed by its costs per record beside the machine's floors.
//!
//! `--smoke` runs every measurement at tiny sizes; tests/bench_smoke.rs runs it under
//! `cargo test` so the harness cannot rot. Results are in docs/benchmarks.md.
#![allow(clippy::print_stdout, missing_docs)]

mod bench;

use std::path::PathBuf;

use bench::{env, report, run, Params};

/// A comma-separated list; `none` is the empty list (to run one phase alone, e.g. only the
/// heartbeats with `--sizes none`).
fn numbers(arg: Option<String>) -> Option<Vec<usize>> {
    let arg = arg?;
    if arg == "none" {
        return Some(Vec::new());
    }
    arg.split(',').map(|s| s.trim().parse().ok()).collect()
}

fn main() -> std::process::ExitCode {
    let all: Vec<String> = std::env::args().skip(1).collect();
    if all.first().map(String::as_str) == Some("--fleet-child") {
        return bench::fleet_child::run_child(&all[1..]);
    }
    let mut args = all.into_iter();
    let mut smoke = false;
    let mut dir: Option<PathBuf> = None;
    let mut kafka_version = "4.1.2".to_string();
    let mut out: Option<PathBuf> = None;
    let mut sizes = None;
    let mut heartbeat_brokers = None;
    let mut heartbeat_secs = None;
    let mut kafka_heap = None;
    let mut failover_trials = None;
    let mut only_ferrokraft = false;
    let mut metrics_cost = false;
    let mut scrape_secs = None;
    let mut metrics_cost_pairs = None;
    let mut pin_controller = None;
    let mut in_flight = None;
    let mut linger_ms = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--smoke" => smoke = true,
            "--dir" => dir = args.next().map(PathBuf::from),
            "--kafka-version" => kafka_version = args.next().unwrap_or(kafka_version),
            "--kafka-heap" => kafka_heap = args.next(),
            "--out" => out = args.next().map(PathBuf::from),
            "--sizes" => sizes = numbers(args.next()),
            "--heartbeat-brokers" => heartbeat_brokers = numbers(args.next()),
            "--heartbeat-secs" => heartbeat_secs = args.next().and_then(|v| v.parse().ok()),
            "--failover-trials" => failover_trials = args.next().and_then(|v| v.parse().ok()),
            // For profiling ferrokraft alone; a result needs both, in one run.
            "--only-ferrokraft" => only_ferrokraft = true,
            "--metrics-cost" => metrics_cost = true,
            "--metrics-cost-pairs" => metrics_cost_pairs = args.next().and_then(|v| v.parse().ok()),
            "--pin-controller" => pin_controller = args.next().and_then(|v| v.parse().ok()),
            "--in-flight" => in_flight = args.next().and_then(|v| v.parse().ok()),
            "--linger-ms" => linger_ms = args.next().and_then(|v| v.parse().ok()),
            "--scrape-secs" => scrape_secs = args.next().and_then(|v| v.parse().ok()),
            // cargo bench passes --bench; filters are meaningless here.
            _ => {}
        }
    }
    let mut p = if smoke {
        Params::smoke()
    } else {
        Params::full()
    };
    p.sizes = sizes.unwrap_or(p.sizes);
    p.heartbeat_brokers = heartbeat_brokers.unwrap_or(p.heartbeat_brokers);
    p.heartbeat_secs = heartbeat_secs.unwrap_or(p.heartbeat_secs);
    p.kafka_heap = kafka_heap.unwrap_or(p.kafka_heap);
    p.failover_trials = failover_trials.unwrap_or(p.failover_trials);
    p.metrics_cost |= metrics_cost;
    p.scrape_secs = scrape_secs.unwrap_or(p.scrape_secs).max(1);
    p.metrics_cost_pairs = metrics_cost_pairs.unwrap_or(p.metrics_cost_pairs).max(1);
    p.pin_controller = pin_controller;
    p.in_flight = in_flight.unwrap_or(p.in_flight).max(1);
    p.linger_ms = linger_ms.or(p.linger_ms);
    if let Some(cpu) = p.pin_controller {
        if let Err(e) = bench::procs::pin_all_but(std::process::id(), cpu) {
            eprintln!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    }
    if only_ferrokraft {
        p.kinds.retain(|k| *k == bench::procs::Kind::Ferrokraft);
    }
    // Every fake broker holds a connection (two fleets at once in --metrics-cost).
    let _ = ferrokraft::network::fd_limit::raise_open_files_limit();
    let env = match env(&kafka_version) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let tmp = match bench::procs::run_dir(dir, "ferrokraft-controller-bench-") {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    eprintln!("benchmarking in {}", tmp.path().display());
    let mut progress = |r: &bench::Results| {
        if let Some(out) = &out {
            if let Err(e) = std::fs::write(out, report::markdown(r, &p, &kafka_version)) {
                eprintln!("cannot write {}: {e}", out.display());
            }
        }
    };
    match run(&env, tmp.path(), &p.clone(), &mut progress) {
        Ok(results) => {
            println!("{}", report::markdown(&results, &p, &kafka_version));
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("benchmark failed: {e}");
            eprintln!("kept {}", tmp.keep().display());
            std::process::ExitCode::FAILURE
        }
    }
}
