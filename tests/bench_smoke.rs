//! The benchmarks (benches/storage, benches/quorum, benches/controller) at tiny sizes, so
//! they keep compiling and their measurements keep checking what they measure.
#![allow(clippy::unwrap_used, missing_docs)]

// The storage benchmark's code, loaded once through the quorum benchmark that also uses it.
use quorum::storage_measure as measure;

#[test]
fn storage_benchmark_runs_at_smoke_sizes() {
    let tmp = tempfile::tempdir().unwrap();
    let p = measure::Params::smoke();
    let report = measure::run(tmp.path(), &p).unwrap();
    assert!(report.floors.fsync_4k.p50 > std::time::Duration::ZERO);
    assert!(report.floors.seq_write_mb_s > 0.0 && report.floors.memcpy_mb_s > 0.0);
    assert_eq!(report.appends.len(), p.batch_sizes.len());
    for (a, n) in report.appends.iter().zip(&p.batch_sizes) {
        assert_eq!(a.batch_records, *n);
        assert!(a.batches >= 3 && a.records_per_s > 0.0);
        assert!(a.batch_bytes > n * p.record_bytes);
    }
    assert!(report.read.segments > 1, "{:?}", report.read);
    assert!(report.read.log_bytes >= p.read_log_bytes);
    assert!(report.read.reads >= (report.read.log_bytes / p.fetch_bytes as u64) as usize);
    let table = measure::markdown(&report);
    assert_eq!(
        table.lines().count(),
        2 + 3 + p.batch_sizes.len() + 2,
        "{table}"
    );
    // Nothing left behind.
    assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0);
}

#[path = "../benches/quorum/bench.rs"]
#[allow(dead_code, clippy::print_stdout)]
mod quorum;

/// The quorum benchmark (benches/quorum) at smoke sizes: ferrokraft and real Kafka processes,
/// every measurement once, and a report with a row for each.
#[test]
fn quorum_benchmark_runs_at_smoke_sizes() {
    let env = quorum::env("4.1.2", "4.4.0").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let p = quorum::Params::smoke();
    let mut phases = 0;
    let r = quorum::run(&env, tmp.path(), &p, &mut |_| phases += 1).unwrap();
    assert_eq!(phases, 7, "progress after every phase");
    // Start-up: both implementations, empty and big log, ApiVersions before DescribeQuorum.
    assert_eq!(r.startup.series.len(), 4);
    for (kind, _, trials) in &r.startup.series {
        assert_eq!(trials.len(), p.startup_trials, "{kind:?}");
        for t in trials {
            assert!(t.api_versions_ms > 0.0 && t.api_versions_ms <= t.describe_quorum_ms);
        }
    }
    assert!(r.startup.series[2].1 >= p.big_log_bytes, "big log written");
    // Failover: kill and term, both kinds, one trial each; RSS read from 3 voters each.
    assert_eq!(r.failover.series.len(), 4);
    assert!(r
        .failover
        .series
        .iter()
        .all(|s| s.3.len() == 1 && s.3[0] > 0.0));
    assert!(r.failover.idle_rss.iter().all(|(_, v)| v.len() == 3));
    assert_eq!(r.failover.spurious.len(), 2);
    // Commit latency: both kinds committed records at the asked rate's order of magnitude.
    assert_eq!(r.latency.len(), 2);
    for run in &r.latency {
        assert!(run.summary.bytes_per_sec > 0.0, "{run:?}");
        assert!(run.summary.p99_ms > 0.0 && run.cpu_seconds > 0.0, "{run:?}");
        assert_eq!(run.rss.len(), 3);
    }
    // The rate sweep: both kinds, every smoke rate tried while sustained, the committed rate
    // read from the leader's high watermark; at these tiny rates both sustain something.
    assert_eq!(r.sweep.len(), 2);
    for s in &r.sweep {
        assert!(!s.steps.is_empty(), "{s:?}");
        for step in &s.steps {
            assert!(step.committed_per_sec > 0.0, "{s:?}");
            assert!(step.p99_ms > 0.0, "{s:?}");
        }
        let best = s.highest_sustained().unwrap_or_else(|| panic!("{s:?}"));
        assert!(p.sweep_rates.contains(&best.rate), "{s:?}");
    }
    // Catch-up and snapshot transfer: both kinds fetched bytes from their first observed
    // fetch on; the snapshot is the size asked for.
    for results in [&r.catchup, &r.snapshot] {
        assert_eq!(results.len(), 2);
        for (kind, trials) in results {
            assert_eq!(trials.len(), 1, "{kind:?}");
            assert!(trials[0].bytes > 0, "{kind:?} {:?}", trials[0]);
            assert!(trials[0].mb_per_sec() > 0.0 && trials[0].follower_peak_rss_kib > 0);
        }
    }
    assert!(r
        .snapshot
        .iter()
        .all(|(_, t)| t[0].bytes >= p.snapshot_bytes));
    // The raw results for plots hold every trial of every phase.
    let raw = quorum::json::results_json(&r);
    for key in [
        "startup", "failover", "latency", "sweep", "catchup", "snapshot",
    ] {
        assert!(
            raw[key].as_array().is_some_and(|a| !a.is_empty()),
            "{key}: {raw}"
        );
    }
    let text = quorum::report::markdown(&r, &p, "4.1.2", "4.4.0");
    assert!(text.contains("follower catch-up"), "{text}");
    assert!(text.contains("snapshot transfer"), "{text}");
    assert!(text.contains("start-up to DescribeQuorum"), "{text}");
    assert!(text.contains("graceful handover"), "{text}");
    assert!(
        text.contains("| 20000/s, 25 ms | Kafka TestRaftServer |"),
        "{text}"
    );
    assert!(
        text.contains("| highest sustained rate, offered (records/s) |"),
        "{text}"
    );
    println!("{text}");
}

/// A rate that stops Kafka's `TestRaftServer` workload (its Raft client refuses an append once
/// 10 batches are waiting, and the thread dies) is read from the log as the sweep's reason.
#[test]
fn a_stopped_workload_is_found_in_the_log() {
    use quorum::phases::workload_failure;
    let log = "[2026-12-05 08:16:04,874] INFO [RaftManager id=1] Setting the next offset\n\
               [2026-12-05 08:16:08,256] ERROR [raft-workload-generator]: Error due to (kafka.tools.TestRaftServer$RaftWorkloadGenerator)\n\
               java.lang.IllegalStateException: Attempting to append records when the number of batches 10 reached 10\n\
               [2026-12-05 08:16:08,257] INFO [raft-workload-generator]: Stopped\n";
    assert_eq!(
        workload_failure(log).as_deref(),
        Some("java.lang.IllegalStateException: Attempting to append records when the number of batches 10 reached 10")
    );
    assert_eq!(
        workload_failure("Throughput (bytes/second): 256000.0"),
        None
    );
}

/// The sweep's verdict: a rate is sustained only under 1 s p99 and keeping up with the offer.
#[test]
fn quorum_sweep_sustains_a_rate_only_under_one_second_p99_and_keeping_up() {
    use quorum::sweep::{sustained, Sweep, SweepStep};
    assert!(sustained(1000, 990.0, 30.0).is_ok());
    assert!(sustained(1000, 1003.0, 999.0).is_ok());
    assert!(sustained(1000, 1000.0, 1000.0).is_err(), "p99 at the bound");
    assert!(sustained(1000, 940.0, 30.0).is_err(), "not keeping up");
    // Kafka's unpaced TestRaftServer: 718 records/s committed of 10 M offered.
    assert!(sustained(10_000_000, 718.0, 249.0).is_err());
    assert!(sustained(1000, f64::NAN, 30.0).is_err(), "probe failed");
    assert!(sustained(1000, 1000.0, f64::NAN).is_err(), "no summary");
    let step = |rate, ok| SweepStep {
        rate,
        committed_per_sec: rate as f64,
        p99_ms: 10.0,
        sustained: ok,
        note: String::new(),
    };
    let s = Sweep {
        kind: quorum::procs::Kind::Ferrokraft,
        linger_ms: 25,
        steps: vec![step(1000, true), step(2000, true), step(5000, false)],
    };
    assert_eq!(s.highest_sustained().map(|x| x.rate), Some(2000));
}

#[test]
fn quorum_benchmark_parses_kafka_and_ferrokraft_summary_lines() {
    let kafka =
        "Throughput (bytes/second): 256855.16, Latency (ms): 139.0 p75 249.0 p99 249.0 p999";
    let w = quorum::phases::last_workload_line(kafka).unwrap();
    assert_eq!(w.bytes_per_sec, 256855.16);
    assert!(w.p50_ms.is_nan());
    assert_eq!((w.p75_ms, w.p99_ms, w.p999_ms), (139.0, 249.0, 249.0));
    let ferro = "x\nINFO Workload: Throughput (bytes/second): 5120.00, Latency (ms): 1.000 p50 2.000 p75 3.000 p99 4.000 p999, committed records 20\n";
    let w = quorum::phases::last_workload_line(ferro).unwrap();
    assert_eq!(
        (w.p50_ms, w.p75_ms, w.p99_ms, w.p999_ms),
        (1.0, 2.0, 3.0, 4.0)
    );
    let s = quorum::report::Spread::of(&[3.0, 1.0, 2.0, f64::NAN]);
    assert_eq!((s.n, s.min, s.median, s.max), (3, 1.0, 2.0, 3.0));
}

// It loads benches/quorum's procs.rs and probe.rs too, as its own modules.
#[path = "../benches/controller/bench.rs"]
#[allow(clippy::print_stdout, clippy::duplicate_mod)]
mod controller;

/// The controller benchmark (benches/controller) at smoke sizes: fake brokers drive a
/// ferrokraft controller and a real Kafka controller through every measurement, and each
/// figure comes out of the committed log.
#[test]
fn controller_benchmark_runs_at_smoke_sizes() {
    use controller::procs::Kind;
    let env = controller::env("4.1.2").unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let p = controller::Params::smoke();
    let mut steps = 0;
    let r = controller::run(&env, tmp.path(), &p, &mut |_| steps += 1).unwrap();
    assert_eq!(steps, 8, "progress after the floors and every measurement");
    // The machine's floors, measured first in the same run.
    assert!(r.floors.fsync_4k.p50 > std::time::Duration::ZERO);
    assert!(r.floors.seq_write_mb_s > 0.0 && r.floors.memcpy_mb_s > 0.0);
    assert!(r.loopback_rtt.p50 > std::time::Duration::ZERO);
    assert_eq!(r.sizes.len(), 2);
    for (s, kind) in r
        .sizes
        .iter()
        .zip([Kind::Ferrokraft, Kind::KafkaController])
    {
        assert_eq!(s.kind, kind);
        // 1: every partition asked for is in the committed log.
        assert_eq!(s.create.partitions, 60, "{s:?}");
        assert!(s.create.rate() > 0.0, "{s:?}");
        // 2: with RF 3 on 3 brokers the dead one is in every ISR: one change per partition,
        // fenced after its session expired (the expiry is taken from the last answered
        // heartbeat's send time, before the controller saw it).
        assert_eq!(s.fence.changes, 60, "{s:?}");
        assert!(s.fence.leaders_moved > 0, "{s:?}");
        assert!(
            s.fence.fence_ms >= 0.0 && s.fence.fence_ms <= s.fence.moved_ms,
            "{s:?}"
        );
        // 3: the broker in controlled shutdown led partitions (its own and some of the dead
        // one's) and lost them before it was told to stop.
        assert!(s.shutdown.led > 0, "{s:?}");
        assert!(s.shutdown.changes >= s.shutdown.led, "{s:?}");
        assert!(s.shutdown.moved_ms > 0.0, "{s:?}");
        // (Told after the move committed; the timeline samples the commit a few ms late.)
        assert!(s.shutdown.should_shut_down_ms > 0.0, "{s:?}");
        // 5: served again after a SIGKILL, on the log and then on a snapshot of the image.
        let cold = &s.cold_start;
        assert!(
            cold.from_log_ms > 0.0 && cold.from_snapshot_ms > 0.0,
            "{s:?}"
        );
        assert!(cold.snapshot_offset > s.create.last_offset, "{s:?}");
        assert!(cold.snapshot_bytes > 0 && cold.rss_kib > 0, "{s:?}");
        // The snapshot's write time: from its last record's commit to its file (signed: both
        // ends are sampled every 5 ms).
        assert!(cold.snapshot_write_ms.is_finite(), "{s:?}");
        // 7: every trial's topic reached every observer, fetched and then known committed.
        let prop = &s.propagation;
        assert_eq!(prop.observers, p.observers, "{s:?}");
        assert_eq!(prop.fetched_ms.len(), p.propagation_trials, "{s:?}");
        assert_eq!(prop.committed_ms.len(), p.propagation_trials, "{s:?}");
        for (f, c) in prop.fetched_ms.iter().zip(&prop.committed_ms) {
            assert!(f.is_finite() && c.is_finite() && c >= f, "{s:?}");
        }
        assert!(s.rss_idle_kib > 0 && s.rss_end_kib > 0, "{s:?}");
        assert_eq!(s.spurious_fencings, 0, "{s:?}");
    }
    // 4: three voters each, the leader SIGKILLed with the 60 partitions in the image; a survivor
    // answered CreateTopics, the new epoch committed, and the fleet followed the new leader
    // without a fencing.
    assert_eq!(r.failovers.len(), 2);
    for (f, kind) in r
        .failovers
        .iter()
        .zip([Kind::Ferrokraft, Kind::KafkaController])
    {
        assert_eq!(f.kind, kind);
        assert_eq!(f.partitions, 60, "{f:?}");
        assert_eq!(f.epochs.len(), p.failover_trials, "{f:?}");
        assert!(f.epochs.iter().all(|(old, new)| new > old), "{f:?}");
        for figures in [&f.to_create_ms, &f.to_epoch_committed_ms, &f.to_fleet_ms] {
            assert_eq!(figures.len(), p.failover_trials, "{f:?}");
            assert!(figures.iter().all(|&ms| ms > 0.0), "{f:?}");
        }
        assert_eq!(f.spurious_fencings, 0, "{f:?}");
    }
    assert_eq!(r.heartbeats.len(), 2);
    for h in &r.heartbeats {
        // 20 brokers every 2 s for 3 s: at least one heartbeat each.
        assert!(h.heartbeats >= 20, "{h:?}");
        assert!(
            h.p50_ms > 0.0 && h.p50_ms <= h.p99_ms && h.p99_ms <= h.max_ms,
            "{h:?}"
        );
        assert!(h.cpu_seconds >= 0.0 && h.rss_kib > 0, "{h:?}");
        assert_eq!(h.spurious_fencings, 0, "{h:?}");
        assert_eq!(h.scrapes, None, "the comparison runs keep the listener off");
    }
    // The metrics' cost: one pair of ferrokraft controllers side by side, off then on; the
    // "on" one was scraped (3 s at one scrape a second) and both answered their heartbeats.
    let on: Vec<_> = r.metrics_cost.iter().map(|h| h.scrapes.is_some()).collect();
    assert_eq!(on, [false, true]);
    for h in &r.metrics_cost {
        assert_eq!(h.kind, Kind::Ferrokraft);
        assert!(h.heartbeats >= 20 && h.spurious_fencings == 0, "{h:?}");
        if let Some((scrapes, bytes)) = h.scrapes {
            assert!(scrapes >= 2 && bytes > scrapes * 1000, "{h:?}");
        }
    }
    let text = controller::report::markdown(&r, &p, "4.1.2");
    assert!(
        text.contains("| 1. CreateTopics, committed (partitions/s) |"),
        "{text}"
    );
    assert!(text.contains("## 6. 20 brokers heartbeating"), "{text}");
    assert!(
        text.contains("## 6b. Metrics cost: ferrokraft, 20 brokers"),
        "{text}"
    );
    assert!(
        text.contains("CPU per heartbeat, on over off, per pair: "),
        "{text}"
    );
    assert!(text.contains("## 4. Active-controller failover"), "{text}");
    assert!(
        text.contains("| 7. propagation: CreateTopics answer to 3 observers"),
        "{text}"
    );
    assert!(text.contains("| 5. snapshot write"), "{text}");
    assert!(
        text.contains("| 1. CreateTopics per partition committed (µs) |"),
        "{text}"
    );
    assert!(
        text.contains("| loopback round trip (64 B) | p50 "),
        "{text}"
    );
    // No measurement is missing a figure for either implementation (the tables after the
    // floors).
    let (_, measurements) = text.split_once("\n## ").expect("measurement sections");
    // The metrics' cost is ferrokraft's alone, in a table of its own, checked after.
    let (measurements, cost) = measurements
        .split_once("\n## 6b.")
        .expect("the metrics' cost section");
    for line in cost
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| Run"))
    {
        // | run | off/on | heartbeats | p99 | CPU | scrapes | bytes per scrape |
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        assert!(matches!(cells[2], "off" | "on"), "{line}");
        for figure in &cells[3..6] {
            assert!(
                figure.parse::<f64>().is_ok_and(f64::is_finite),
                "a figure is missing: {line}\n{text}"
            );
        }
    }
    for line in measurements
        .lines()
        // Headers: the measurement tables and the per-record costs beside the floors.
        .filter(|l| {
            l.starts_with("| ") && !l.starts_with("| Measurement") && !l.starts_with("| Cost |")
        })
    {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        for figure in &cells[2..4] {
            assert!(
                figure.parse::<f64>().is_ok_and(f64::is_finite),
                "a figure is missing: {line}\n{text}"
            );
        }
    }
    println!("{text}");
}
