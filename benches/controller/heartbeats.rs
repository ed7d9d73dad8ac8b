//! Measurement 6: many brokers heartbeating at the default interval against one controller:
//! reply p50/p99/max, the controller's CPU and RSS, and spurious fencings.
//!
//! ```text
//!   start ─▶ register N brokers ─▶ all unfenced ─▶ heartbeat for S seconds ─▶ p50/p99, CPU
//! ```

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use ferrokraft::metadata::records::MetadataRecord;

use super::committed::records_from;
use super::phases::{against, fleet_of, short, HEARTBEAT_INTERVAL};
use super::procs::{Env, Kind};
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
    against(rt, env, dir, &name, kind, p, async |ctrl, timeline| {
        let fleet = fleet_of(ctrl, timeline, brokers).await?;
        fleet
            .wait_unfenced(Duration::from_secs(120 + brokers as u64 / 50))
            .await?;
        // Every broker's first heartbeat after the unfencing is behind it.
        tokio::time::sleep(HEARTBEAT_INTERVAL).await;
        let from = timeline.high_watermark().max(0);
        let cpu_before = ctrl.cpu_seconds();
        fleet.record_latencies(true);
        tokio::time::sleep(Duration::from_secs(seconds)).await;
        fleet.record_latencies(false);
        let cpu_seconds = ctrl.cpu_seconds() - cpu_before;
        let mut lat = fleet.latencies_us();
        lat.sort_unstable();
        let fenced: BTreeSet<i32> = records_from(ctrl.data_dir(), from)?
            .iter()
            .filter_map(|(_, r)| match r {
                MetadataRecord::BrokerRegistrationChange(c) if c.fenced == 1 => Some(c.broker_id),
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
        })
    })
    .map_err(|e| format!("{} heartbeats of {brokers}: {e}", kind.label()))
}
