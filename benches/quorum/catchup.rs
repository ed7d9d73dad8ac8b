//! Follower catch-up: a voter whose log is empty joins a leader holding a large log and
//! fetches all of it (the snapshot-transfer phase reuses the trial with a snapshot instead).
//!
//! ```text
//!   ferrokraft writer quorum (nodes 1, 2 up, 3 never started), workload at full speed
//!     ─▶ three data directories: two with the big log, one empty
//!   per implementation: copy the three directories, start 1 and 2, wait for a leader,
//!     start 3 ─▶ leader's DescribeQuorum: voter 3's log end offset from its first fetch
//!     until it reaches the leader's high watermark ─▶ MB/s
//! ```
//!
//! Both implementations replicate the same bytes: a Kafka controller runs on directories
//! ferrokraft wrote (interop scenario f), so the only difference is who serves and who
//! fetches.

use std::path::Path;
use std::time::Duration;

use super::phases::{partition_log_bytes, tail};
use super::probe::describe_once;
use super::procs::{copy_dir, rss_kib, Env, Kind, Quorum, Setup, Timers};
use super::{now, Params, MAX_RATE};

/// One catch-up trial.
#[derive(Debug, Clone, Copy)]
pub struct CatchUpTrial {
    /// Log bytes the follower fetched.
    pub bytes: u64,
    /// From its first fetch to its log end offset reaching the high watermark.
    pub seconds: f64,
    /// Peak RSS of the follower (KiB).
    pub follower_peak_rss_kib: u64,
}

impl CatchUpTrial {
    /// MB/s (10^6 bytes).
    pub fn mb_per_sec(&self) -> f64 {
        self.bytes as f64 / 1e6 / self.seconds.max(1e-9)
    }
}

/// (kind, trials).
pub type CatchUpResults = Vec<(Kind, Vec<CatchUpTrial>)>;

fn three(workload: Option<(u64, usize)>) -> Setup {
    Setup {
        voters: 3,
        timers: Timers::DEFAULT,
        linger_ms: None,
        workload,
    }
}

/// Writes a log of at least `log_bytes` with nodes 1 and 2 of a ferrokraft quorum; returns
/// copies of the three directories (`template-<name>-<id>`).
pub fn write_big_log(
    env: &Env,
    root: &Path,
    name: &str,
    log_bytes: u64,
    record_bytes: usize,
) -> Result<Vec<std::path::PathBuf>, String> {
    let mut w = Quorum::create(
        env,
        root,
        &format!("{name}-writer"),
        Kind::Ferrokraft,
        &three(Some((MAX_RATE, record_bytes))),
    )?;
    w.start(0)?;
    w.start(1)?;
    let deadline = now() + Duration::from_secs(1800);
    while (0..2)
        .map(|i| partition_log_bytes(&w.nodes[i].dir))
        .min()
        .unwrap_or(0)
        < log_bytes
    {
        if now() > deadline || !w.running(0) || !w.running(1) {
            return Err(format!(
                "could not write a {log_bytes} byte log:\n{}",
                tail(&w.log_text(0), 20)
            ));
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    w.terminate(0, Duration::from_secs(30));
    w.terminate(1, Duration::from_secs(30));
    let mut dirs = Vec::new();
    for (i, node) in w.nodes.iter().enumerate() {
        let to = root.join(format!("template-{name}-{}", i + 1));
        copy_dir(&node.dir, &to)?;
        dirs.push(to);
    }
    Ok(dirs)
}

/// What a trial times on the empty node 3.
#[derive(Debug, Clone)]
pub enum Watch {
    /// Log catch-up: from its first fetch (the leader reports its log end offset) until its
    /// log end offset reaches the high watermark.
    Log,
    /// Snapshot transfer: from the first `.checkpoint.part` in its partition directory (the
    /// first chunk written) until this `.checkpoint` exists (downloaded, fsynced, renamed).
    /// The leader reports no log end offset for a fetch below its log start, so the log
    /// rule cannot see the download start.
    Snapshot(String),
}

/// One trial: copies of `templates` for nodes 1–3, 1 and 2 started, then the empty node 3
/// timed as `watch` says; `bytes` is what nodes 1 and 2 hold beyond node 3 (log or snapshot).
pub fn trial(
    env: &Env,
    root: &Path,
    kind: Kind,
    name: &str,
    templates: &[std::path::PathBuf],
    bytes: u64,
    watch: &Watch,
) -> Result<CatchUpTrial, String> {
    let mut q = Quorum::create(env, root, name, kind, &three(None))?;
    for (node, template) in q.nodes.iter().zip(templates) {
        let _ = std::fs::remove_dir_all(&node.dir);
        copy_dir(template, &node.dir)?;
    }
    q.start(0)?;
    q.start(1)?;
    let deadline = now() + Duration::from_secs(600);
    let (leader_port, target) = 'leader: loop {
        for i in 0..2 {
            if let Some(v) = describe_once(q.nodes[i].port, Duration::from_millis(500)) {
                if v.high_watermark > 0 {
                    break 'leader (q.nodes[i].port, v.high_watermark);
                }
            }
        }
        if now() > deadline || !q.running(0) || !q.running(1) {
            return Err(format!(
                "{}: no leader on the big log:\n{}",
                kind.label(),
                tail(&q.log_text(0), 20)
            ));
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    q.start(2)?;
    let partition = q.nodes[2].dir.join("__cluster_metadata-0");
    let mut first: Option<(std::time::Instant, i64)> = None;
    loop {
        if now() > deadline || !q.running(2) {
            return Err(format!(
                "{}: follower did not catch up:\n{}",
                kind.label(),
                tail(&q.log_text(2), 20)
            ));
        }
        let done = match watch {
            Watch::Log => {
                let leo = describe_once(leader_port, Duration::from_millis(500))
                    .and_then(|v| v.voters.iter().find(|(id, _)| *id == 3).map(|(_, o)| *o))
                    .unwrap_or(-1);
                if leo >= 0 && first.is_none() {
                    first = Some((now(), leo));
                }
                first.filter(|_| leo >= target).map(|(t0, leo0)| {
                    let fetched = bytes as f64 * (target - leo0) as f64 / target as f64;
                    (t0, fetched as u64)
                })
            }
            Watch::Snapshot(file_name) => {
                let names: Vec<String> = std::fs::read_dir(&partition)
                    .map(|d| {
                        d.flatten()
                            .map(|e| e.file_name().to_string_lossy().into_owned())
                            .collect()
                    })
                    .unwrap_or_default();
                if first.is_none() && names.iter().any(|n| n.ends_with(".checkpoint.part")) {
                    first = Some((now(), 0));
                }
                if first.is_none() && names.contains(file_name) {
                    return Err(format!(
                        "{}: the snapshot download finished between two polls",
                        kind.label()
                    ));
                }
                first
                    .filter(|_| names.contains(file_name))
                    .map(|(t0, _)| (t0, bytes))
            }
        };
        if let Some((t0, fetched)) = done {
            return Ok(CatchUpTrial {
                bytes: fetched,
                seconds: t0.elapsed().as_secs_f64(),
                follower_peak_rss_kib: q.pid(2).and_then(rss_kib).map_or(0, |r| r.1),
            });
        }
        std::thread::sleep(Duration::from_millis(match watch {
            Watch::Log => 10,
            Watch::Snapshot(_) => 2,
        }));
    }
}

/// Catch-up of an empty voter from a leader holding `p.catchup_bytes`, both implementations,
/// alternating.
pub fn catch_up(env: &Env, root: &Path, p: &Params) -> Result<CatchUpResults, String> {
    let templates = write_big_log(env, root, "catchup", p.catchup_bytes, p.record_bytes)?;
    let bytes = partition_log_bytes(&templates[0]);
    let mut results: CatchUpResults =
        vec![(Kind::Ferrokraft, vec![]), (Kind::KafkaController, vec![])];
    for n in 0..p.catchup_trials {
        for (kind, trials) in results.iter_mut() {
            let name = format!("catchup-{}-{n}", kind.label().replace(' ', "-"));
            trials.push(trial(
                env,
                root,
                *kind,
                &name,
                &templates,
                bytes,
                &Watch::Log,
            )?);
        }
    }
    for t in &templates {
        let _ = std::fs::remove_dir_all(t);
    }
    Ok(results)
}
