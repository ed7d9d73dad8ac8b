//! A fleet for a side-by-side measurement: the metrics-cost comparison (#39) runs two
//! controllers of 10,000 brokers each at once, and one process may hold fewer than 20,000
//! descriptors here (the hard limit cannot be raised), so fleets that would not fit in this
//! process run each in its own child, the bench's own binary started with
//! `--fleet-child PORT CLUSTER_ID BROKERS`; smaller ones (the smoke sizes, which run inside
//! the test harness, where no such binary exists) run here.
//!
//! ```text
//!   parent                          child
//!   spawn ───────────────────────▶  register, wait unfenced, spread evenly
//!          ◀──────────── "ready"
//!   "start" ─────────────────────▶  keep latencies
//!   "stop"  ─────────────────────▶  stop keeping them
//!          ◀─ "result N P50 P99 MAX FENCED_AGAIN" (µs)
//!   close stdin ─────────────────▶  exit
//! ```

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use super::committed::Timeline;
use super::fleet::Fleet;
use super::phases::HEARTBEAT_INTERVAL;

/// What a child's fleet saw while it kept latencies.
#[derive(Debug, Clone, Default)]
pub struct FleetResult {
    /// Heartbeats answered.
    pub heartbeats: usize,
    pub p50_us: u32,
    pub p99_us: u32,
    pub max_us: u32,
    /// Replies that fenced a broker again after it had been unfenced.
    pub fenced_again: u32,
}

/// Descriptors this process keeps for everything but the fleets' connections.
const SPARE_FDS: u64 = 1_000;

/// One fleet of a side-by-side measurement, here or in a child.
pub enum SideFleet {
    /// In this process, on the runtime it was made on.
    Local(Fleet, Timeline),
    /// In a child process.
    Child(ChildFleet),
}

impl SideFleet {
    /// `fleets` fleets of `brokers` each, in this process if all their connections fit under
    /// its descriptor limit, else each in a child; all unfenced and sending evenly spread.
    pub fn start_all(
        rt: &tokio::runtime::Runtime,
        targets: &[(u16, &str)],
        brokers: usize,
    ) -> Result<Vec<SideFleet>, String> {
        let limit = ferrokraft::network::fd_limit::raise_open_files_limit();
        let needed = (targets.len() * brokers) as u64 + SPARE_FDS;
        let mut out = Vec::new();
        for &(port, cluster_id) in targets {
            out.push(if limit.is_some_and(|l| needed > l) {
                SideFleet::Child(ChildFleet::start(port, cluster_id, brokers)?)
            } else {
                rt.block_on(async {
                    let timeline = Timeline::start(port);
                    let fleet = ready_fleet(port, cluster_id, brokers, &timeline).await?;
                    Ok::<_, String>(SideFleet::Local(fleet, timeline))
                })?
            });
        }
        Ok(out)
    }

    /// Starts keeping latencies.
    pub fn record(&mut self) -> Result<(), String> {
        match self {
            SideFleet::Local(f, _) => {
                f.record_latencies(true);
                Ok(())
            }
            SideFleet::Child(c) => c.record(),
        }
    }

    /// Stops keeping latencies; what the fleet saw since [`SideFleet::record`].
    pub fn result(&mut self) -> Result<FleetResult, String> {
        match self {
            SideFleet::Local(f, _) => {
                f.record_latencies(false);
                Ok(FleetResult::of(f))
            }
            SideFleet::Child(c) => c.result(),
        }
    }
}

impl Drop for SideFleet {
    fn drop(&mut self) {
        if let SideFleet::Local(_, timeline) = self {
            timeline.stop();
        }
    }
}

impl FleetResult {
    /// The latencies `fleet` kept and its brokers fenced again.
    fn of(fleet: &Fleet) -> FleetResult {
        let mut lat = fleet.latencies_us();
        lat.sort_unstable();
        let pct = |q: f64| -> u32 {
            if lat.is_empty() {
                return 0;
            }
            lat[((lat.len() as f64 * q).ceil() as usize).clamp(1, lat.len()) - 1]
        };
        FleetResult {
            heartbeats: lat.len(),
            p50_us: pct(0.50),
            p99_us: pct(0.99),
            max_us: lat.last().copied().unwrap_or(0),
            fenced_again: fleet.fenced_again(),
        }
    }
}

/// `brokers` fake brokers registered with the controller on `port`, all unfenced, sending
/// evenly spread over the interval.
async fn ready_fleet(
    port: u16,
    cluster_id: &str,
    brokers: usize,
    timeline: &Timeline,
) -> Result<Fleet, String> {
    let fleet =
        Fleet::register(port, cluster_id, brokers, 64, HEARTBEAT_INTERVAL, timeline).await?;
    fleet
        .wait_unfenced(Duration::from_secs(120 + brokers as u64 / 50))
        .await?;
    fleet.spread_evenly();
    Ok(fleet)
}

/// The parent's handle on one child fleet.
pub struct ChildFleet {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl ChildFleet {
    /// Starts a child fleet of `brokers` against the controller on `port` and waits until all
    /// of them are unfenced and sending evenly spread.
    pub fn start(port: u16, cluster_id: &str, brokers: usize) -> Result<ChildFleet, String> {
        let exe = std::env::current_exe().map_err(|e| format!("current_exe: {e}"))?;
        let mut child = Command::new(exe)
            .args(["--fleet-child", &port.to_string(), cluster_id])
            .arg(brokers.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("fleet child: {e}"))?;
        let stdin = child.stdin.take();
        let stdout = child
            .stdout
            .take()
            .map(BufReader::new)
            .ok_or("fleet child: no stdout")?;
        let mut fleet = ChildFleet {
            child,
            stdin,
            stdout,
        };
        fleet.expect("ready")?;
        Ok(fleet)
    }

    /// Starts keeping latencies.
    pub fn record(&mut self) -> Result<(), String> {
        self.send("start")?;
        self.expect("started").map(|_| ())
    }

    /// Stops keeping latencies; what the fleet saw since [`ChildFleet::record`].
    pub fn result(&mut self) -> Result<FleetResult, String> {
        self.send("stop")?;
        let line = self.expect("result")?;
        let n: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(|v| v.parse().map_err(|e| format!("fleet child: {line:?}: {e}")))
            .collect::<Result<_, _>>()?;
        let [heartbeats, p50, p99, max, fenced_again] = n[..] else {
            return Err(format!("fleet child: {line:?}"));
        };
        let u = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        Ok(FleetResult {
            heartbeats: heartbeats as usize,
            p50_us: u(p50),
            p99_us: u(p99),
            max_us: u(max),
            fenced_again: u(fenced_again),
        })
    }

    fn send(&mut self, line: &str) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("fleet child: stdin closed")?;
        writeln!(stdin, "{line}")
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("fleet child: {e}"))
    }

    /// The child's next line, which must start with `word`.
    fn expect(&mut self, word: &str) -> Result<String, String> {
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .map_err(|e| format!("fleet child: {e}"))?;
        if line.split_whitespace().next() == Some(word) {
            Ok(line.trim_end().to_string())
        } else {
            Err(format!("fleet child: expected {word}, got {line:?}"))
        }
    }
}

impl Drop for ChildFleet {
    fn drop(&mut self) {
        // A closed stdin ends the child; kill it if it does not go.
        self.stdin.take();
        for _ in 0..50 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The child's side: `args` are PORT CLUSTER_ID BROKERS. Errors go to stderr and the exit code.
pub fn run_child(args: &[String]) -> std::process::ExitCode {
    match child(args) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("fleet child: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn child(args: &[String]) -> Result<(), String> {
    let [port, cluster_id, brokers] = args else {
        return Err(format!(
            "usage: --fleet-child PORT CLUSTER_ID BROKERS, got {args:?}"
        ));
    };
    let port: u16 = port.parse().map_err(|e| format!("port {port}: {e}"))?;
    let brokers: usize = brokers
        .parse()
        .map_err(|e| format!("brokers {brokers}: {e}"))?;
    let rt = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let timeline = Timeline::start(port);
        let fleet =
            Fleet::register(port, cluster_id, brokers, 64, HEARTBEAT_INTERVAL, &timeline).await?;
        fleet
            .wait_unfenced(Duration::from_secs(120 + brokers as u64 / 50))
            .await?;
        fleet.spread_evenly();
        // The commands come on a blocking reader; the fleet's tasks go on meanwhile.
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        say("ready")?;
        while let Some(line) = rx.recv().await {
            match line.trim() {
                "start" => {
                    fleet.record_latencies(true);
                    say("started")?;
                }
                "stop" => {
                    fleet.record_latencies(false);
                    let r = FleetResult::of(&fleet);
                    say(&format!(
                        "result {} {} {} {} {}",
                        r.heartbeats, r.p50_us, r.p99_us, r.max_us, r.fenced_again
                    ))?;
                }
                other => return Err(format!("unknown command {other:?}")),
            }
        }
        timeline.stop();
        Ok(())
    })
}

fn say(line: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")
        .and_then(|()| out.flush())
        .map_err(|e| e.to_string())
}
