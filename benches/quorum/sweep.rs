//! The highest sustained committed rate of each implementation: a rate sweep. Three voters run
//! the workload (ferrokraft's workload mode, Kafka's `TestRaftServer`) at each offered rate of
//! a rising ladder; a rate is sustained when the commit latency p99 stays under
//! [`MAX_P99_MS`] and the committed rate keeps up with the offered one (at least
//! [`KEEP_UP`] of it). The committed rate is read from the leader's high watermark (a Fetch
//! probe, [`CommitProbe`]) at the start and the end of the measured window, not from the
//! workload's own meter: Kafka's `Meter` divides by a 30 s window until the run is 30 s old,
//! so short runs read far too low. The ladder stops, for each implementation, at its first
//! rate that is not sustained.
//!
//! ```text
//!   for rate in ladder: start 3 voters ─▶ warm-up ─▶ hw₀ ─▶ window ─▶ hw₁ ─▶ next summary line
//!                       committed/s = (hw₁ − hw₀) / window; sustained = p99 < 1 s ∧ committed ≥ 95 %
//! ```

use std::path::Path;
use std::time::{Duration, Instant};

use super::fetch::{METADATA_TOPIC_ID, TEST_RAFT_TOPIC_ID};
use super::phases::{last_workload_line, tail, workload_failure, workload_quorum, Workload};
use super::probe::CommitProbe;
use super::procs::{Env, Kind, Quorum};
use super::{now, Params};

/// The commit-latency p99 a sustained rate stays under.
pub const MAX_P99_MS: f64 = 1000.0;
/// The share of the offered rate a sustained rate commits.
pub const KEEP_UP: f64 = 0.95;

/// One rate of the sweep for one implementation.
#[derive(Debug, Clone)]
pub struct SweepStep {
    /// Records per second offered.
    pub rate: u64,
    /// Records per second committed over the window (from the high watermark); NaN when the
    /// probe failed (the leader changed: not sustained).
    pub committed_per_sec: f64,
    /// The workload's commit-latency p99 from its first summary after the window.
    pub p99_ms: f64,
    /// Whether the rate was sustained.
    pub sustained: bool,
    /// Why not, when it was not.
    pub note: String,
}

/// The sweep of one implementation.
#[derive(Debug, Clone)]
pub struct Sweep {
    pub kind: Kind,
    pub linger_ms: u64,
    pub steps: Vec<SweepStep>,
}

impl Sweep {
    /// The highest offered rate sustained (None: not even the first).
    pub fn highest_sustained(&self) -> Option<&SweepStep> {
        self.steps
            .iter()
            .filter(|s| s.sustained)
            .max_by_key(|s| s.rate)
    }
}

/// Whether a run at `offered` records/s that committed `committed` records/s with a p99 of
/// `p99_ms` sustained its rate; the reason when it did not.
pub fn sustained(offered: u64, committed: f64, p99_ms: f64) -> Result<(), String> {
    if !committed.is_finite() || !p99_ms.is_finite() {
        return Err("no committed rate or no p99".into());
    }
    if p99_ms >= MAX_P99_MS {
        return Err(format!("p99 {p99_ms:.0} ms ≥ {MAX_P99_MS:.0} ms"));
    }
    if committed < KEEP_UP * offered as f64 {
        return Err(format!(
            "committed {committed:.0}/s < {:.0} % of {offered}/s",
            KEEP_UP * 100.0
        ));
    }
    Ok(())
}

/// The high watermark of the `kind` leader on `port`, and when it was read.
fn high_watermark(kind: Kind, port: u16) -> Result<(Instant, i64), String> {
    let topic_id = match kind {
        Kind::KafkaTestRaft => TEST_RAFT_TOPIC_ID,
        _ => METADATA_TOPIC_ID,
    };
    let mut probe = CommitProbe::connect(port, Duration::from_secs(2), topic_id)
        .map_err(|e| format!("probe: {e}"))?;
    let hw = probe.high_watermark().map_err(|e| format!("probe: {e}"))?;
    Ok((now(), hw))
}

/// Waits up to `timeout` for a summary line of node `leader` newer than the `seen` first ones.
fn next_summary(q: &Quorum, leader: usize, seen: usize, timeout: Duration) -> Option<f64> {
    let deadline = now() + timeout;
    loop {
        let text = q.log_text(leader);
        let count = text
            .lines()
            .filter(|l| l.contains("Throughput (bytes/second): "))
            .count();
        if count > seen {
            return last_workload_line(&text).map(|w| w.p99_ms);
        }
        if now() > deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn summaries(q: &Quorum, leader: usize) -> usize {
    q.log_text(leader)
        .lines()
        .filter(|l| l.contains("Throughput (bytes/second): "))
        .count()
}

fn step(env: &Env, root: &Path, p: &Params, kind: Kind, rate: u64) -> Result<SweepStep, String> {
    let linger = sweep_linger(p);
    let name = format!("sweep-{}-{rate}", kind.label().replace(' ', "-"));
    let (q, leader) = match workload_quorum(env, root, &name, kind, (rate, p.record_bytes), linger)?
    {
        Workload::Running(q, leader) => (*q, leader),
        // The rate itself stopped the workload: a result (not sustained), not a failed run.
        Workload::Stopped(e) => {
            return Ok(SweepStep {
                rate,
                committed_per_sec: f64::NAN,
                p99_ms: f64::NAN,
                sustained: false,
                note: e,
            })
        }
    };
    let port = q.nodes[leader].port;
    std::thread::sleep(Duration::from_secs(p.warmup_secs));
    let (t0, hw0) = high_watermark(kind, port)?;
    std::thread::sleep(Duration::from_secs(p.sweep_secs));
    let end = high_watermark(kind, port);
    let seen = summaries(&q, leader);
    // Both print a summary every 5 s: the first after the window covers it.
    let p99_ms = next_summary(&q, leader, seen, Duration::from_secs(12)).unwrap_or(f64::NAN);
    let (committed_per_sec, probe_note) = match end {
        Ok((t1, hw1)) => (
            (hw1 - hw0) as f64 / t1.duration_since(t0).as_secs_f64(),
            String::new(),
        ),
        Err(e) => (f64::NAN, e),
    };
    let verdict = sustained(rate, committed_per_sec, p99_ms);
    if p99_ms.is_nan() {
        eprintln!(
            "{} at {rate}/s: no summary after the window:\n{}",
            kind.label(),
            tail(&q.log_text(leader), 5)
        );
    }
    Ok(SweepStep {
        rate,
        committed_per_sec,
        p99_ms,
        sustained: verdict.is_ok(),
        note: match verdict {
            Ok(()) => String::new(),
            Err(e) => {
                let why = [
                    probe_note,
                    workload_failure(&q.log_text(leader)).unwrap_or_default(),
                ]
                .into_iter()
                .filter(|w| !w.is_empty())
                .collect::<Vec<_>>()
                .join("; ");
                if why.is_empty() {
                    e
                } else {
                    format!("{e} ({why})")
                }
            }
        },
    })
}

/// The linger of the sweep: the first of the latency cells' (Kafka's default, 25 ms, in the
/// full run).
pub fn sweep_linger(p: &Params) -> u64 {
    p.lingers_ms.first().copied().unwrap_or(25)
}

/// The sweep of both implementations, alternating rate by rate while both still sustain.
pub fn sweep(env: &Env, root: &Path, p: &Params) -> Result<Vec<Sweep>, String> {
    let mut sweeps: Vec<Sweep> = [Kind::Ferrokraft, Kind::KafkaTestRaft]
        .into_iter()
        .map(|kind| Sweep {
            kind,
            linger_ms: sweep_linger(p),
            steps: Vec::new(),
        })
        .collect();
    for &rate in &p.sweep_rates {
        for s in sweeps.iter_mut() {
            if s.steps.last().is_some_and(|last| !last.sustained) {
                continue;
            }
            eprintln!("sweep: {} at {rate} records/s …", s.kind.label());
            let result = step(env, root, p, s.kind, rate)?;
            eprintln!(
                "sweep: {} at {rate}/s committed {:.0}/s, p99 {:.1} ms{}",
                s.kind.label(),
                result.committed_per_sec,
                result.p99_ms,
                if result.sustained {
                    String::new()
                } else {
                    format!(": not sustained, {}", result.note)
                }
            );
            s.steps.push(result);
        }
    }
    Ok(sweeps)
}
