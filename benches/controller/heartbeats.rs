//! Measurement 6: many brokers heartbeating at the default interval against one controller:
//! reply p50/p99/max, the controller's CPU and RSS, and spurious fencings.
//!
//! ```text
//!   start ─▶ register N brokers ─▶ all unfenced ─▶ heartbeat for S seconds ─▶ p50/p99, CPU
//! ```
//!
//! The metrics' cost (`--metrics-cost`, #39) runs ferrokraft's measurement with the metrics
//! listener off and on (scraped every `--scrape-secs`, 1 s by default), interleaved off, on, off,
//! on so drift on a shared machine falls on both alike; each run is a fresh controller.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use ferrokraft::metadata::records::MetadataRecord;

use super::committed::records_from;
use super::phases::{against_with, fleet_of, short, HEARTBEAT_INTERVAL};
use super::procs::{free_port, Env, Kind};
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

/// The metrics' cost: ferrokraft's heartbeat measurement with `brokers` brokers, listener off,
/// on, off, on (each a fresh controller), in that order.
pub fn metrics_cost(
    rt: &tokio::runtime::Runtime,
    env: &Env,
    dir: &Path,
    brokers: usize,
    seconds: u64,
    p: &Params,
) -> Result<Vec<HeartbeatRun>, String> {
    let mut runs = Vec::new();
    for round in 0..4 {
        let scrape = (round % 2 == 1).then_some(Duration::from_secs(p.scrape_secs));
        let name = format!("fk-cost-{brokers}-{round}");
        eprintln!(
            "ferrokraft with {brokers} heartbeating brokers, metrics {} …",
            if scrape.is_some() { "on" } else { "off" }
        );
        runs.push(heartbeats_named(
            rt,
            env,
            dir,
            &name,
            Kind::Ferrokraft,
            brokers,
            seconds,
            p,
            scrape,
        )?);
    }
    Ok(runs)
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
    heartbeats_named(rt, env, dir, &name, kind, brokers, seconds, p, None)
}

/// [`heartbeats`] under `dir/name`; with `scrape`, the metrics listener on and scraped at
/// that interval through the measured window.
#[allow(clippy::too_many_arguments)] // heartbeats' arguments, the name and the scraping
fn heartbeats_named(
    rt: &tokio::runtime::Runtime,
    env: &Env,
    dir: &Path,
    name: &str,
    kind: Kind,
    brokers: usize,
    seconds: u64,
    p: &Params,
    scrape: Option<Duration>,
) -> Result<HeartbeatRun, String> {
    let metrics_port = match scrape {
        Some(_) => Some(free_port()?),
        None => None,
    };
    let props: Vec<(&str, String)> = metrics_port
        .map(|port| ("ferrokraft.metrics.listener", format!("127.0.0.1:{port}")))
        .into_iter()
        .collect();
    against_with(
        rt,
        env,
        dir,
        name,
        kind,
        p,
        &props,
        async |ctrl, timeline| {
            let fleet = fleet_of(ctrl, timeline, brokers).await?;
            fleet
                .wait_unfenced(Duration::from_secs(120 + brokers as u64 / 50))
                .await?;
            // Every broker's first heartbeat after the unfencing is behind it.
            tokio::time::sleep(HEARTBEAT_INTERVAL).await;
            let from = timeline.high_watermark().max(0);
            let counts = Arc::new((AtomicUsize::new(0), AtomicUsize::new(0)));
            let cpu_before = ctrl.cpu_seconds();
            let scraping = metrics_port
                .zip(scrape)
                .map(|(port, every)| scraper(port, every, counts.clone()));
            fleet.record_latencies(true);
            tokio::time::sleep(Duration::from_secs(seconds)).await;
            fleet.record_latencies(false);
            if let Some(task) = scraping {
                task.abort();
            }
            let cpu_seconds = ctrl.cpu_seconds() - cpu_before;
            let mut lat = fleet.latencies_us();
            lat.sort_unstable();
            let fenced: BTreeSet<i32> = records_from(ctrl.data_dir(), from)?
                .iter()
                .filter_map(|(_, r)| match r {
                    MetadataRecord::BrokerRegistrationChange(c) if c.fenced == 1 => {
                        Some(c.broker_id)
                    }
                    _ => None,
                })
                .collect();
            let pct = |q: f64| -> f64 {
                if lat.is_empty() {
                    return 0.0;
                }
                let i = ((lat.len() as f64 * q).ceil() as usize).clamp(1, lat.len()) - 1;
                f64::from(lat[i]) / 1e3
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
                spurious_fencings: fenced.len().max(fleet.fenced_again() as usize),
                scrapes: scrape.map(|_| {
                    (
                        counts.0.load(Ordering::Relaxed),
                        counts.1.load(Ordering::Relaxed),
                    )
                }),
            })
        },
    )
    .map_err(|e| format!("{} heartbeats of {brokers}: {e}", kind.label()))
}
