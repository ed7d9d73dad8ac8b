//! Quorum benchmark: ferrokraft side by side with Apache Kafka in one run — memory, start-up,
//! failover, graceful handover, spurious elections, commit latency and throughput — with the
//! machine's floors measured in the same run. Results are ratios (ferrokraft / Kafka).
//!
//! ```text
//! cargo bench --bench quorum -- [--smoke] [--dir DIR] [--trials N] [--kafka-version V]
//!                               [--test-raft-version V] [--spurious-secs S]
//!                               [--latency-secs S] [--catchup-mib M]
//!                               [--catchup-trials N] [--snapshot-mib M]
//!                               [--startup-trials N] [--out FILE] [--json FILE]
//!                               [--only PHASE,…] [--rates R,…] [--lingers MS,…]
//!                               [--sweep-rates R,…] [--sweep-secs S]
//! ```
//!
//! `--only` picks phases (startup, failover, latency, sweep, catchup, snapshot; the floors
//! always run), `--rates`/`--lingers` the latency cells (`max` is the unpaced rate, reported
//! as a note), `--sweep-rates`/`--sweep-secs` the rate sweep that finds each implementation's
//! highest sustained committed rate: for re-running or profiling one measurement.
//!
//! Kafka's jars come from Maven Central through `interop/kafka/fetch.sh` (default 4.1.2 for
//! controllers; TestRaftServer from 4.4.0, which honours --throughput/--record-size — apache/kafka
//! PR #20379; 4.1.x's always runs 20k records/s × 256 B). The Markdown report goes to
//! stdout (and FILE). `--smoke` runs every measurement at tiny sizes; tests/bench_smoke.rs runs
//! it under `cargo test` so the harness cannot rot.
#![allow(clippy::print_stdout, missing_docs)]

mod bench;

use std::path::PathBuf;

use bench::{env, report, run, Params, Phase, MAX_RATE};

/// A comma-separated list for option `opt`, each item parsed by `one`.
fn list<T>(
    opt: &str,
    arg: Option<String>,
    one: impl Fn(&str) -> Option<T>,
) -> Result<Vec<T>, String> {
    let arg = arg.ok_or_else(|| format!("{opt} needs a value"))?;
    arg.split(',')
        .map(|s| one(s.trim()).ok_or_else(|| format!("{opt}: cannot use {s:?}")))
        .collect()
}

fn main() -> std::process::ExitCode {
    let mut args = std::env::args().skip(1);
    let mut smoke = false;
    let mut dir: Option<PathBuf> = None;
    let mut trials = 30;
    let mut kafka_version = "4.1.2".to_string();
    let mut test_raft_version = "4.4.0".to_string();
    let mut out: Option<PathBuf> = None;
    let mut json_out: Option<PathBuf> = None;
    let mut spurious_secs: Option<u64> = None;
    let mut catchup_mib: Option<u64> = None;
    let mut catchup_trials: Option<usize> = None;
    let mut snapshot_mib: Option<u64> = None;
    let mut startup_trials: Option<usize> = None;
    let mut latency_secs: Option<u64> = None;
    let mut only: Option<Result<Vec<Phase>, String>> = None;
    let mut rates: Option<Result<Vec<u64>, String>> = None;
    let mut lingers: Option<Result<Vec<u64>, String>> = None;
    let mut sweep_rates: Option<Result<Vec<u64>, String>> = None;
    let mut sweep_secs: Option<u64> = None;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--smoke" => smoke = true,
            "--dir" => dir = args.next().map(PathBuf::from),
            "--trials" => trials = args.next().and_then(|v| v.parse().ok()).unwrap_or(trials),
            "--kafka-version" => kafka_version = args.next().unwrap_or(kafka_version),
            "--test-raft-version" => test_raft_version = args.next().unwrap_or(test_raft_version),
            "--out" => out = args.next().map(PathBuf::from),
            "--json" => json_out = args.next().map(PathBuf::from),
            "--spurious-secs" => spurious_secs = args.next().and_then(|v| v.parse().ok()),
            "--latency-secs" => latency_secs = args.next().and_then(|v| v.parse().ok()),
            "--catchup-mib" => catchup_mib = args.next().and_then(|v| v.parse().ok()),
            "--catchup-trials" => catchup_trials = args.next().and_then(|v| v.parse().ok()),
            "--snapshot-mib" => snapshot_mib = args.next().and_then(|v| v.parse().ok()),
            "--startup-trials" => startup_trials = args.next().and_then(|v| v.parse().ok()),
            "--only" => only = Some(list(&a, args.next(), Phase::parse)),
            "--rates" => {
                rates = Some(list(&a, args.next(), |r| {
                    if r == "max" {
                        Some(MAX_RATE)
                    } else {
                        r.parse().ok()
                    }
                }))
            }
            "--lingers" => lingers = Some(list(&a, args.next(), |l| l.parse().ok())),
            "--sweep-rates" => sweep_rates = Some(list(&a, args.next(), |r| r.parse().ok())),
            "--sweep-secs" => sweep_secs = args.next().and_then(|v| v.parse().ok()),
            // cargo bench passes --bench; filters are meaningless here.
            _ => {}
        }
    }
    let mut params = if smoke {
        Params::smoke()
    } else {
        Params::full(trials)
    };
    params.spurious_secs = spurious_secs.unwrap_or(params.spurious_secs);
    params.latency_secs = latency_secs.unwrap_or(params.latency_secs);
    params.catchup_bytes = catchup_mib.map_or(params.catchup_bytes, |m| m * 1024 * 1024);
    params.catchup_trials = catchup_trials.unwrap_or(params.catchup_trials);
    params.snapshot_bytes = snapshot_mib.map_or(params.snapshot_bytes, |m| m * 1024 * 1024);
    params.startup_trials = startup_trials.unwrap_or(params.startup_trials);
    params.sweep_secs = sweep_secs.unwrap_or(params.sweep_secs);
    let picked = (
        only.transpose(),
        rates.transpose(),
        lingers.transpose(),
        sweep_rates.transpose(),
    );
    let (only, rates, lingers, sweep_rates) = match picked {
        (Ok(o), Ok(r), Ok(l), Ok(s)) => (o, r, l, s),
        (Err(e), _, _, _) | (_, Err(e), _, _) | (_, _, Err(e), _) | (_, _, _, Err(e)) => {
            eprintln!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    params.phases = only.unwrap_or(params.phases);
    params.rates = rates.unwrap_or(params.rates);
    params.lingers_ms = lingers.unwrap_or(params.lingers_ms);
    params.sweep_rates = sweep_rates.unwrap_or(params.sweep_rates);
    let env = match env(&kafka_version, &test_raft_version) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    let tmp = match bench::procs::run_dir(dir, "ferrokraft-quorum-bench-") {
        Ok(t) => t,
        Err(e) => {
            eprintln!("{e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    eprintln!("benchmarking in {}", tmp.path().display());
    // The report so far, after every phase: a late failure keeps what was measured.
    let mut progress = |r: &bench::Results| {
        let text = report::markdown(r, &params, &kafka_version, &test_raft_version);
        if let Some(out) = &out {
            if let Err(e) = std::fs::write(out, &text) {
                eprintln!("cannot write {}: {e}", out.display());
            }
        }
        if let Some(path) = &json_out {
            let raw = bench::json::results_json(r).to_string();
            if let Err(e) = std::fs::write(path, raw) {
                eprintln!("cannot write {}: {e}", path.display());
            }
        }
    };
    match run(&env, tmp.path(), &params, &mut progress) {
        Ok(results) => {
            println!(
                "{}",
                report::markdown(&results, &params, &kafka_version, &test_raft_version)
            );
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("benchmark failed: {e}");
            eprintln!("kept {}", tmp.keep().display());
            std::process::ExitCode::FAILURE
        }
    }
}
