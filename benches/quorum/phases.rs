//! The measurements. Each one runs ferrokraft and Apache Kafka in the same run, interleaved
//! trial by trial where trials are short, so both see the same machine.

use std::path::Path;
use std::time::Duration;

use super::probe::{describe_once, Probe, QuorumView};
use super::procs::{copy_dir, cpu_seconds, rss_kib, sync_tree, Env, Kind, Quorum, Setup, Timers};
use super::{now, Params};

const PROBE_TIMEOUT: Duration = Duration::from_millis(300);

fn sleep_ms(ms: u64) {
    std::thread::sleep(Duration::from_millis(ms));
}

fn ms_since(t: std::time::Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

/// Start-up of one node: exec → ApiVersions answered, exec → DescribeQuorum answered.
#[derive(Debug, Clone, Copy)]
pub struct StartupTrial {
    /// Milliseconds to the first ApiVersions answer.
    pub api_versions_ms: f64,
    /// Milliseconds to the first DescribeQuorum answer (single voter: it is the leader).
    pub describe_quorum_ms: f64,
}

/// Start-up trials of `kind` from a copy of `template` each time.
fn startup_trial(q: &mut Quorum, template: &Path) -> Result<StartupTrial, String> {
    let dir = q.nodes[0].dir.clone();
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(template, &dir)?;
    // Written back before the clock starts: otherwise the first fsync at start-up (ferrokraft's
    // after recovery) waits for the whole copy to reach the disk.
    sync_tree(&dir)?;
    let port = q.nodes[0].port;
    let t0 = now();
    q.start(0)?;
    let deadline = t0 + Duration::from_secs(180);
    let mut api_versions_ms = None;
    while now() < deadline {
        if !q.running(0) {
            return Err(format!(
                "{} exited during start-up:\n{}",
                q.kind.label(),
                tail(&q.log_text(0), 20)
            ));
        }
        if let Ok(mut p) = Probe::connect(port, PROBE_TIMEOUT) {
            if api_versions_ms.is_none() && p.api_versions().is_ok() {
                api_versions_ms = Some(ms_since(t0));
            }
            if let (Some(a), Ok(Some(v))) = (api_versions_ms, p.describe_quorum()) {
                if v.leader_id == 1 {
                    q.kill(0);
                    return Ok(StartupTrial {
                        api_versions_ms: a,
                        describe_quorum_ms: ms_since(t0),
                    });
                }
            }
        }
        sleep_ms(2);
    }
    q.kill(0);
    Err(format!("{} did not start within 180 s", q.kind.label()))
}

/// Start-up results per kind and log size.
#[derive(Debug, Clone, Default)]
pub struct StartupResults {
    /// (kind, log bytes, trials).
    pub series: Vec<(Kind, u64, Vec<StartupTrial>)>,
}

/// Bytes of the `.log` segments of `__cluster_metadata-0` under `data_dir`.
pub fn partition_log_bytes(data_dir: &Path) -> u64 {
    let part = data_dir.join("__cluster_metadata-0");
    std::fs::read_dir(part)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// Single-voter start-up, empty log (each implementation formats its own directory) and with
/// a log of `p.big_log_bytes` (written by ferrokraft's workload, the same bytes for both: a
/// Kafka controller runs on a ferrokraft directory unchanged, interop scenario f).
pub fn startup(env: &Env, root: &Path, p: &Params) -> Result<StartupResults, String> {
    let single = Setup {
        voters: 1,
        timers: Timers::DEFAULT,
        linger_ms: None,
        workload: None,
    };
    let mut ferro = Quorum::create(env, root, "startup-ferrokraft", Kind::Ferrokraft, &single)?;
    let mut kafka = Quorum::create(env, root, "startup-kafka", Kind::KafkaController, &single)?;
    let empty_ferro = root.join("template-empty-ferrokraft");
    let empty_kafka = root.join("template-empty-kafka");
    copy_dir(&ferro.nodes[0].dir, &empty_ferro)?;
    copy_dir(&kafka.nodes[0].dir, &empty_kafka)?;

    // The big log: ferrokraft's workload at full speed until the log is large enough.
    let big = root.join("template-big");
    {
        let mut writer = Quorum::create(
            env,
            root,
            "startup-writer",
            Kind::Ferrokraft,
            &Setup {
                workload: Some((1_000_000, 256)),
                ..single.clone()
            },
        )?;
        writer.start(0)?;
        let deadline = now() + Duration::from_secs(900);
        while partition_log_bytes(&writer.nodes[0].dir) < p.big_log_bytes {
            if now() > deadline || !writer.running(0) {
                return Err(format!(
                    "could not write a {} byte log:\n{}",
                    p.big_log_bytes,
                    tail(&writer.log_text(0), 20)
                ));
            }
            sleep_ms(200);
        }
        writer.terminate(0, Duration::from_secs(30));
        copy_dir(&writer.nodes[0].dir, &big)?;
    }
    let big_bytes = partition_log_bytes(&big);

    let mut results = StartupResults::default();
    let mut series: Vec<(Kind, u64, Vec<StartupTrial>)> = vec![
        (Kind::Ferrokraft, 0, vec![]),
        (Kind::KafkaController, 0, vec![]),
        (Kind::Ferrokraft, big_bytes, vec![]),
        (Kind::KafkaController, big_bytes, vec![]),
    ];
    for _ in 0..p.startup_trials {
        for (kind, bytes, trials) in series.iter_mut() {
            let (q, template) = match (*kind, *bytes) {
                (Kind::Ferrokraft, 0) => (&mut ferro, &empty_ferro),
                (Kind::Ferrokraft, _) => (&mut ferro, &big),
                (_, 0) => (&mut kafka, &empty_kafka),
                (_, _) => (&mut kafka, &big),
            };
            trials.push(startup_trial(q, template)?);
        }
    }
    results.series = series;
    for t in [&empty_ferro, &empty_kafka, &big] {
        let _ = std::fs::remove_dir_all(t);
    }
    Ok(results)
}

/// Waits until some node of `q` answers DescribeQuorum as leader with a high watermark of at
/// least `min_hw` and every voter's log end offset at least that too.
fn wait_settled(q: &mut Quorum, min_hw: i64, timeout: Duration) -> Result<QuorumView, String> {
    let deadline = now() + timeout;
    while now() < deadline {
        for i in 0..q.nodes.len() {
            if let Some(v) = describe_once(q.nodes[i].port, PROBE_TIMEOUT) {
                if v.high_watermark >= min_hw && v.min_voter_log_end_offset >= v.high_watermark {
                    return Ok(v);
                }
            }
        }
        sleep_ms(20);
    }
    Err(format!(
        "{} quorum did not settle within {timeout:?}:\n{}",
        q.kind.label(),
        (0..q.nodes.len())
            .map(|i| tail(&q.log_text(i), 8))
            .collect::<Vec<_>>()
            .join("\n---\n")
    ))
}

/// How the leader is stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// SIGKILL.
    Kill,
    /// SIGTERM (graceful handover).
    Term,
}

/// One trial: stop the leader, time until another node answers as leader of a later epoch
/// with a high watermark past the old one, then restart the old leader and let it catch up.
fn failover_trial(q: &mut Quorum, stop: Stop) -> Result<f64, String> {
    let before = wait_settled(q, 0, Duration::from_secs(120))?;
    let old = (before.leader_id - 1) as usize;
    let t0 = now();
    match stop {
        Stop::Kill => q.kill(old),
        Stop::Term => q.signal_term(old),
    }
    let deadline = t0 + Duration::from_secs(120);
    let elapsed = 'wait: loop {
        if now() > deadline {
            return Err(format!(
                "{}: no new leader within 120 s after stopping node {}",
                q.kind.label(),
                before.leader_id
            ));
        }
        for i in (0..q.nodes.len()).filter(|i| *i != old) {
            if let Some(v) = describe_once(q.nodes[i].port, PROBE_TIMEOUT) {
                if v.leader_id != before.leader_id
                    && v.epoch > before.epoch
                    && v.high_watermark > before.high_watermark
                {
                    break 'wait ms_since(t0);
                }
            }
        }
        sleep_ms(5);
    };
    q.reap(old, Duration::from_secs(60));
    q.start(old)?;
    let after = wait_settled(q, before.high_watermark + 1, Duration::from_secs(120))?;
    // Let the restarted node finish its start-up before the next trial stops a leader.
    wait_settled(q, after.high_watermark + 1, Duration::from_secs(120))?;
    Ok(elapsed)
}

/// Failover results.
#[derive(Debug, Clone, Default)]
pub struct FailoverResults {
    /// (timers label, stop, kind, milliseconds per trial).
    pub series: Vec<(String, Stop, Kind, Vec<f64>)>,
    /// (kind, RSS KiB per voter, peak RSS KiB per voter) after the idle period.
    pub idle_rss: Vec<(Kind, Vec<(u64, u64)>)>,
    /// (kind, elections counted, seconds watched) at the shorter timers.
    pub spurious: Vec<(Kind, i64, f64)>,
}

fn three_voters(timers: Timers) -> Setup {
    Setup {
        voters: 3,
        timers,
        linger_ms: None,
        workload: None,
    }
}

/// Idle RSS, SIGKILL and SIGTERM failover at each timer setting, and spurious elections at
/// the shortest timers.
pub fn failover(env: &Env, root: &Path, p: &Params) -> Result<FailoverResults, String> {
    let mut r = FailoverResults::default();
    for (label, timers) in &p.timer_sets {
        let mut quorums = vec![
            Quorum::create(
                env,
                root,
                &format!("failover-{label}-ferrokraft"),
                Kind::Ferrokraft,
                &three_voters(*timers),
            )?,
            Quorum::create(
                env,
                root,
                &format!("failover-{label}-kafka"),
                Kind::KafkaController,
                &three_voters(*timers),
            )?,
        ];
        for q in quorums.iter_mut() {
            q.start_all()?;
            wait_settled(q, 1, Duration::from_secs(120))?;
        }
        if r.idle_rss.is_empty() {
            sleep_ms(p.idle_secs * 1000);
            for q in &quorums {
                let rss = (0..q.nodes.len())
                    .filter_map(|i| q.pid(i).and_then(rss_kib))
                    .collect();
                r.idle_rss.push((q.kind, rss));
            }
        }
        for stop in [Stop::Kill, Stop::Term] {
            let mut per_kind: Vec<Vec<f64>> = vec![vec![]; quorums.len()];
            for _ in 0..p.failover_trials {
                for (q, out) in quorums.iter_mut().zip(per_kind.iter_mut()) {
                    out.push(failover_trial(q, stop)?);
                }
            }
            for (q, out) in quorums.iter().zip(per_kind) {
                r.series.push((label.clone(), stop, q.kind, out));
            }
        }
        if Some(label) == p.timer_sets.last().map(|(l, _)| l) {
            // Spurious elections: both quorums idle side by side; an election bumps the epoch.
            let mut start = vec![];
            for q in quorums.iter_mut() {
                start.push(wait_settled(q, 1, Duration::from_secs(120))?.epoch);
            }
            let t0 = now();
            sleep_ms(p.spurious_secs * 1000);
            let secs = t0.elapsed().as_secs_f64();
            for (q, e0) in quorums.iter_mut().zip(start) {
                let e1 = wait_settled(q, 1, Duration::from_secs(120))?.epoch;
                r.spurious.push((q.kind, i64::from(e1 - e0), secs));
            }
        }
    }
    Ok(r)
}

/// One commit-latency run.
#[derive(Debug, Clone)]
pub struct LatencyRun {
    /// What ran it.
    pub kind: Kind,
    /// Records per second asked (u64::MAX-ish: as fast as possible).
    pub rate: u64,
    /// controller.quorum.append.linger.ms
    pub linger_ms: u64,
    /// The leader's last summary line, parsed.
    pub summary: WorkloadLine,
    /// CPU seconds of the three voters over the measured period.
    pub cpu_seconds: f64,
    /// Length of the measured period.
    pub seconds: f64,
    /// (RSS KiB, peak RSS KiB) per voter at the end.
    pub rss: Vec<(u64, u64)>,
}

impl LatencyRun {
    /// Records committed per second (from the committed-bytes rate).
    pub fn records_per_sec(&self, record_bytes: usize) -> f64 {
        self.summary.bytes_per_sec / record_bytes as f64
    }
}

/// A `Throughput (bytes/second): …, Latency (ms): …` line (TestRaftServer's format; ferrokraft
/// adds p50 and a committed-records count).
#[derive(Debug, Clone, Copy, Default)]
pub struct WorkloadLine {
    /// Committed bytes per second over the window.
    pub bytes_per_sec: f64,
    /// p50 (ferrokraft only; NaN for Kafka).
    pub p50_ms: f64,
    /// p75.
    pub p75_ms: f64,
    /// p99.
    pub p99_ms: f64,
    /// p99.9.
    pub p999_ms: f64,
}

/// Parses the last workload line of `log`.
pub fn last_workload_line(log: &str) -> Option<WorkloadLine> {
    let line = log
        .lines()
        .rev()
        .find(|l| l.contains("Throughput (bytes/second): "))?;
    let rest = line.split("Throughput (bytes/second): ").nth(1)?;
    let (rate, rest) = rest.split_once(',')?;
    let mut w = WorkloadLine {
        bytes_per_sec: rate.trim().parse().ok()?,
        p50_ms: f64::NAN,
        ..WorkloadLine::default()
    };
    let latency = rest.split("Latency (ms):").nth(1)?;
    let latency = latency.split(',').next()?;
    let tokens: Vec<&str> = latency.split_whitespace().collect();
    for pair in tokens.chunks(2) {
        let [value, label] = pair else { break };
        let value: f64 = value.parse().ok()?;
        match *label {
            "p50" => w.p50_ms = value,
            "p75" => w.p75_ms = value,
            "p99" => w.p99_ms = value,
            "p999" => w.p999_ms = value,
            _ => {}
        }
    }
    Some(w)
}

/// What starting a workload quorum gave: running, with the index of the leader (the node
/// printing workload lines), or a workload that stopped by itself with its error (a result of
/// the offered rate, not a failure of the run).
pub enum Workload {
    Running(Box<Quorum>, usize),
    Stopped(String),
}

/// The error that stopped `TestRaftServer`'s workload thread, from a node's log: the line after
/// its "Error due to" (at high offered rates Kafka's Raft client refuses an append once its
/// accumulator holds 10 batches, and the thread dies).
pub fn workload_failure(log: &str) -> Option<String> {
    let mut lines = log.lines();
    lines.find(|l| l.contains("[raft-workload-generator]: Error due to"))?;
    Some(lines.next().unwrap_or("").trim().to_string())
}

/// Three voters of `kind` running the workload at `rate` records/s of `record_bytes`, linger
/// `linger_ms`, under `root/name`, started.
pub fn workload_quorum(
    env: &Env,
    root: &Path,
    name: &str,
    kind: Kind,
    (rate, record_bytes): (u64, usize),
    linger_ms: u64,
) -> Result<Workload, String> {
    let setup = Setup {
        voters: 3,
        timers: Timers::DEFAULT,
        linger_ms: Some(linger_ms),
        workload: Some((rate, record_bytes)),
    };
    let mut q = Quorum::create(env, root, name, kind, &setup)?;
    q.start_all()?;
    let deadline = now() + Duration::from_secs(180);
    loop {
        if let Some(i) = (0..q.nodes.len()).find(|i| last_workload_line(&q.log_text(*i)).is_some())
        {
            return Ok(Workload::Running(Box::new(q), i));
        }
        if let Some(e) = (0..q.nodes.len()).find_map(|i| workload_failure(&q.log_text(i))) {
            return Ok(Workload::Stopped(format!(
                "{}: the workload stopped: {e}",
                kind.label()
            )));
        }
        if now() > deadline || (0..q.nodes.len()).any(|i| !q.running(i)) {
            return Err(format!(
                "{}: no workload output within 180 s:\n{}",
                kind.label(),
                tail(&q.log_text(0), 20)
            ));
        }
        sleep_ms(100);
    }
}

fn latency_run(
    env: &Env,
    root: &Path,
    p: &Params,
    kind: Kind,
    rate: u64,
    linger_ms: u64,
) -> Result<LatencyRun, String> {
    let name = format!(
        "latency-{}-{rate}-{linger_ms}",
        kind.label().replace(' ', "-")
    );
    // A fixed rate that stops the workload leaves nothing to measure here (the sweep reports it).
    let (q, leader) =
        match workload_quorum(env, root, &name, kind, (rate, p.record_bytes), linger_ms)? {
            Workload::Running(q, leader) => (*q, leader),
            Workload::Stopped(e) => return Err(e),
        };
    sleep_ms(p.warmup_secs * 1000);
    let cpu = |q: &Quorum| -> f64 {
        (0..q.nodes.len())
            .filter_map(|i| q.pid(i).and_then(cpu_seconds))
            .sum()
    };
    let cpu0 = cpu(&q);
    let t0 = now();
    sleep_ms(p.latency_secs * 1000);
    let cpu1 = cpu(&q);
    let seconds = t0.elapsed().as_secs_f64();
    let rss = (0..q.nodes.len())
        .filter_map(|i| q.pid(i).and_then(rss_kib))
        .collect();
    let summary = last_workload_line(&q.log_text(leader))
        .ok_or_else(|| format!("{}: workload line vanished", kind.label()))?;
    Ok(LatencyRun {
        kind,
        rate,
        linger_ms,
        summary,
        cpu_seconds: cpu1 - cpu0,
        seconds,
        rss,
    })
}

/// Commit latency and throughput: ferrokraft's workload mode against Kafka's TestRaftServer,
/// three voters each, alternating, at every (rate, linger) of `p`.
pub fn latency(env: &Env, root: &Path, p: &Params) -> Result<Vec<LatencyRun>, String> {
    let mut runs = Vec::new();
    for &linger in &p.lingers_ms {
        for &rate in &p.rates {
            for kind in [Kind::Ferrokraft, Kind::KafkaTestRaft] {
                runs.push(latency_run(env, root, p, kind, rate, linger)?);
            }
        }
    }
    Ok(runs)
}

/// The last `n` lines of `text`.
pub fn tail(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
