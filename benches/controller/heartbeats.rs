//! Measurement 6: many brokers heartbeating at the default interval against one controller:
//! reply p50/p99/max, the controller's CPU and RSS, and spurious fencings.
//!
//! ```text
//!   start ─▶ register N brokers ─▶ all unfenced ─▶ heartbeat for S seconds ─▶ p50/p99, CPU
//! ```
//!
//! The metrics' cost (`--metrics-cost`, #39) runs two fresh ferrokraft controllers at a time,
//! the metrics listener off on one and on (scraped every `--scrape-secs`, 1 s by default) on
//! the other, each with its own fleet, measured in one window, `--metrics-cost-pairs` times.
//! The report compares the controllers' CPU per heartbeat answered within each pair and gives
//! the mean difference with its spread over the pairs.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use ferrokraft::metadata::records::MetadataRecord;

use super::committed::records_from;
use super::fleet_child::{FleetResult, SideFleet};
use super::phases::{against_with, fleet_of, short, Controller, HEARTBEAT_INTERVAL};
use super::procs::{free_port, pin, Env, Kind};
use super::Params;

/// Measurement 6 for one implementation.
#[derive(Debug, Clone)]
pub struct HeartbeatRun {
    pub kind: Kind,
    pub brokers: usize,
    pub seconds: u64,
    pub heartbeats: usize,
    pub p50_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
    pub cpu_seconds: f64,
    pub rss_kib: u64,
    /// Brokers fenced after they were unfenced (must be 0).
    pub spurious_fencings: usize,
    /// With the metrics listener on: the scrapes answered in the measured window and their
    /// bytes. `None`: the listener off (ferrokraft then keeps no metrics at all).
    pub scrapes: Option<(usize, usize)>,
}

/// The metrics' cost: `p.metrics_cost_pairs` pairs of fresh ferrokraft controllers, one with
/// its metrics listener off and one with it on, each pair measured side by side in one window,
/// each controller with its own fleet of `brokers` ([`SideFleet`]: in a child process at
/// 10,000), so
/// both meet the same machine: on a shared VM a process's CPU per unit of work moves by tens of
/// percent from one minute to the next (its sibling vCPU's and the host's load), which
/// consecutive runs cannot tell from a few percent of cost. The runs come back off, on per
/// pair.
pub fn metrics_cost(
    rt: &tokio::runtime::Runtime,
    env: &Env,
    dir: &Path,
    brokers: usize,
    seconds: u64,
    p: &Params,
) -> Result<Vec<HeartbeatRun>, String> {
    let mut runs = Vec::new();
    for pair in 0..p.metrics_cost_pairs {
        eprintln!(
            "ferrokraft with {brokers} heartbeating brokers, metrics off and on side by side, \
             pair {} of {} …",
            pair + 1,
            p.metrics_cost_pairs
        );
        let metrics_port = free_port()?;
        let on_props = [(
            "ferrokraft.metrics.listener",
            format!("127.0.0.1:{metrics_port}"),
        )];
        let name = |v: &str| format!("fk-cost-{brokers}-{pair}-{v}");
        let off =
            Controller::start_with(env, dir, &name("off"), Kind::Ferrokraft, &p.kafka_heap, &[])?;
        let on = Controller::start_with(
            env,
            dir,
            &name("on"),
            Kind::Ferrokraft,
            &p.kafka_heap,
            &on_props,
        )?;
        let scrape = Duration::from_secs(p.scrape_secs);
        let pair_runs = side_by_side(rt, [&off, &on], metrics_port, scrape, brokers, seconds)
            .map_err(|e| {
                format!(
                    "metrics cost, pair {pair}: {e}\noff:\n{}\non:\n{}",
                    off.log_tail(),
                    on.log_tail()
                )
            })?;
        runs.extend(pair_runs);
    }
    Ok(runs)
}

/// One window over `off` and `on` (whose metrics listener is `metrics_port`, scraped every
/// `scrape`), each heartbeated by its own child fleet of `brokers`.
fn side_by_side(
    rt: &tokio::runtime::Runtime,
    [off, on]: [&Controller; 2],
    metrics_port: u16,
    scrape: Duration,
    brokers: usize,
    seconds: u64,
) -> Result<[HeartbeatRun; 2], String> {
    // Registered one after the other (the registration storm is not measured).
    let mut fleets = SideFleet::start_all(
        rt,
        &[(off.port(), &off.cluster_id), (on.port(), &on.cluster_id)],
        brokers,
    )?;
    // Every broker's first heartbeat after the unfencing is behind it, and each now sends in
    // its own slot.
    std::thread::sleep(HEARTBEAT_INTERVAL * 2);
    let counts = Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)));
    let cpu_before = [off.cpu_seconds(), on.cpu_seconds()];
    let scraping = {
        let _in_runtime = rt.enter();
        scraper(metrics_port, scrape, counts.clone())
    };
    for f in &mut fleets {
        f.record()?;
    }
    // A mark to profile the two controllers by (docs/benchmarks.md, "The metrics' cost").
    eprintln!(
        "metrics cost: measuring {seconds} s: off pid {}, on pid {}",
        off.pid().unwrap_or(0),
        on.pid().unwrap_or(0)
    );
    std::thread::sleep(Duration::from_secs(seconds));
    let mut results = Vec::new();
    for f in &mut fleets {
        results.push(f.result()?);
    }
    let [r_off, r_on] =
        <[FleetResult; 2]>::try_from(results).map_err(|_| "two fleets, two results".to_string())?;
    let cpu_after = [off.cpu_seconds(), on.cpu_seconds()];
    scraping.abort();
    let run = |ctrl: &Controller, r: FleetResult, cpu: f64, scrapes| -> Result<_, String> {
        Ok(HeartbeatRun {
            kind: ctrl.kind,
            brokers,
            seconds,
            heartbeats: r.heartbeats,
            p50_ms: f64::from(r.p50_us) / 1e3,
            p99_ms: f64::from(r.p99_us) / 1e3,
            max_ms: f64::from(r.max_us) / 1e3,
            cpu_seconds: cpu,
            rss_kib: ctrl.rss_kib(),
            // No broker dies here, so any fencing since the start is spurious.
            spurious_fencings: fenced_since(ctrl, 0)?.len().max(r.fenced_again as usize),
            scrapes,
        })
    };
    let scrapes = (
        counts.0.load(Ordering::Relaxed),
        counts.1.load(Ordering::Relaxed),
    );
    Ok([
        run(off, r_off, cpu_after[0] - cpu_before[0], None)?,
        run(on, r_on, cpu_after[1] - cpu_before[1], Some(scrapes))?,
    ])
}

/// The brokers `ctrl` fenced in records from offset `from` on.
fn fenced_since(ctrl: &Controller, from: i64) -> Result<BTreeSet<i32>, String> {
    Ok(records_from(ctrl.data_dir(), from)?
        .iter()
        .filter_map(|(_, r)| match r {
            MetadataRecord::BrokerRegistrationChange(c) if c.fenced == 1 => Some(c.broker_id),
            _ => None,
        })
        .collect())
}

/// One `GET /metrics` on `port`: the response's bytes, if it is a whole OpenMetrics text.
async fn scrape_once(port: u16) -> Option<usize> {
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .ok()?;
    s.write_all(b"GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n")
        .await
        .ok()?;
    let mut text = Vec::new();
    s.read_to_end(&mut text).await.ok()?;
    text.ends_with(b"# EOF\n").then_some(text.len())
}

/// Scrapes `port` every `every` until aborted, counting the scrapes and their bytes.
fn scraper(
    port: u16,
    every: Duration,
    counts: Arc<(AtomicUsize, AtomicUsize)>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut tick = tokio::time::interval(every);
        loop {
            tick.tick().await;
            if let Some(bytes) = scrape_once(port).await {
                counts.0.fetch_add(1, Ordering::Relaxed);
                counts.1.fetch_add(bytes, Ordering::Relaxed);
            }
        }
    })
}

/// Measurement 6: `brokers` fake brokers heartbeat at the default interval for `seconds`.
pub fn heartbeats(
    rt: &tokio::runtime::Runtime,
    env: &Env,
    dir: &Path,
    kind: Kind,
    brokers: usize,
    seconds: u64,
    p: &Params,
) -> Result<HeartbeatRun, String> {
    let name = format!("{}-hb-{brokers}", short(kind));
    heartbeats_named(rt, env, dir, &name, kind, brokers, seconds, p)
}

/// [`heartbeats`] under `dir/name`.
#[allow(clippy::too_many_arguments)] // heartbeats' arguments and the name
fn heartbeats_named(
    rt: &tokio::runtime::Runtime,
    env: &Env,
    dir: &Path,
    name: &str,
    kind: Kind,
    brokers: usize,
    seconds: u64,
    p: &Params,
) -> Result<HeartbeatRun, String> {
    against_with(rt, env, dir, name, kind, p, &[], async |ctrl, timeline| {
        if let Some(cpu) = p.pin_controller {
            let pid = ctrl.pid().ok_or("the controller is not running")?;
            pin(pid, &cpu.to_string())?;
        }
        let fleet = fleet_of(ctrl, timeline, brokers).await?;
        fleet
            .wait_unfenced(Duration::from_secs(120 + brokers as u64 / 50))
            .await?;
        fleet.spread_evenly();
        // Every broker's first heartbeat after the unfencing is behind it, and each now sends
        // in its own slot.
        tokio::time::sleep(HEARTBEAT_INTERVAL * 2).await;
        let from = timeline.high_watermark().max(0);
        let cpu_before = ctrl.cpu_seconds();
        fleet.record_latencies(true);
        tokio::time::sleep(Duration::from_secs(seconds)).await;
        fleet.record_latencies(false);
        let cpu_seconds = ctrl.cpu_seconds() - cpu_before;
        let mut lat = fleet.latencies_us();
        lat.sort_unstable();
        let pct = |q: f64| -> f64 {
            if lat.is_empty() {
                return 0.0;
            }
            let k = ((lat.len() as f64 * q).ceil() as usize).clamp(1, lat.len()) - 1;
            f64::from(lat[k]) / 1e3
        };
        Ok::<_, String>(HeartbeatRun {
            kind,
            brokers,
            seconds,
            heartbeats: lat.len(),
            p50_ms: pct(0.50),
            p99_ms: pct(0.99),
            max_ms: lat.last().map_or(0.0, |&m| f64::from(m) / 1e3),
            cpu_seconds,
            rss_kib: ctrl.rss_kib(),
            spurious_fencings: fenced_since(ctrl, from)?
                .len()
                .max(fleet.fenced_again() as usize),
            scrapes: None,
        })
    })
    .map_err(|e| format!("{} heartbeats of {brokers}: {e}", kind.label()))
}
