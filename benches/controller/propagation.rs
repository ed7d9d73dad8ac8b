//! Measurement 7: metadata propagation to brokers. Fetch-speaking observers
//! ([`super::observer`], as registered brokers with their directory ids) follow the active
//! controller's `__cluster_metadata-0` from its log end; a CreateTopics (one partition, RF 1)
//! is answered, and the figure runs from that answer to the last observer having the batch
//! with the TopicRecord (fetched), and to the last observer having a Fetch answer whose high
//! watermark passed it (it may apply the record: what a broker's metadata publisher waits
//! for). Both are signed: a leader may ship a batch to observers before it commits it, and
//! before the controller's answer.
//!
//! ```text
//!   observers at the log end ─▶ [CreateTopics "propagate-i" ─▶ answer at t₀ ─▶
//!       every observer: batch fetched at tᶠ, high watermark past it at tᶜ] × trials
//!   fetched = max tᶠ − t₀, committed = max tᶜ − t₀
//! ```

use std::time::Duration;

use super::cold_start::serving;
use super::committed::Timeline;
use super::fleet::Fleet;
use super::now;
use super::observer::{Identity, Observer};
use super::phases::ms_between;
use super::Params;

/// The TopicRecords the observers watch.
const PREFIX: &str = "propagate-";

/// Measurement 7.
#[derive(Debug, Clone, Default)]
pub struct PropagationResult {
    /// Observers.
    pub observers: usize,
    /// Per trial: from the CreateTopics answer to the last observer having fetched the batch
    /// with the TopicRecord (ms).
    pub fetched_ms: Vec<f64>,
    /// Per trial: to the last observer having a high watermark past it (ms).
    pub committed_ms: Vec<f64>,
}

/// The median of `v` (NaN when empty).
pub fn median(v: &[f64]) -> f64 {
    let mut v: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len().is_multiple_of(2) {
        (v[m - 1] + v[m]) / 2.0
    } else {
        v[m]
    }
}

impl PropagationResult {
    /// Median over the trials, fetched and committed.
    pub fn medians(&self) -> (f64, f64) {
        (median(&self.fetched_ms), median(&self.committed_ms))
    }
}

/// Measurement 7 on the controller on `port`, `p.observers` observers fetching as the first
/// brokers of `fleet`, `p.propagation_trials` topics.
pub async fn propagation(
    port: u16,
    cluster_id: &str,
    timeline: &Timeline,
    fleet: &Fleet,
    p: &Params,
) -> Result<PropagationResult, String> {
    let observers: Vec<Observer> = fleet
        .brokers
        .iter()
        .take(p.observers)
        .map(|b| {
            Observer::start(
                timeline,
                Identity {
                    id: b.id,
                    directory_id: b.directory_id,
                    cluster_id: cluster_id.to_string(),
                    watch_prefix: PREFIX.to_string(),
                },
            )
        })
        .collect();
    if observers.is_empty() {
        return Err("no broker to observe as".into());
    }
    // Caught up: every observer at or past the high watermark.
    let deadline = now() + Duration::from_secs(60);
    loop {
        let hw = timeline.high_watermark();
        let behind: Vec<_> = observers
            .iter()
            .map(|o| (o.id, o.state()))
            .filter(|(_, s)| s.seeking || s.next_offset < hw)
            .collect();
        if behind.is_empty() {
            break;
        }
        if now() > deadline {
            let (id, s) = &behind[0];
            return Err(format!(
                "observer {id} not caught up to {hw} in 60 s: {s:?}"
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let mut r = PropagationResult {
        observers: observers.len(),
        ..PropagationResult::default()
    };
    for trial in 0..p.propagation_trials {
        let topic = format!("{PREFIX}{trial}");
        let answered = serving(&[port], &topic, 1).await?;
        let deadline = now() + Duration::from_secs(60);
        let seen = loop {
            let seen: Vec<_> = observers
                .iter()
                .filter_map(|o| o.state().topics.get(&topic).copied())
                .filter_map(|s| Some((s.fetched, s.committed?)))
                .collect();
            if seen.len() == observers.len() {
                break seen;
            }
            if now() > deadline {
                let states: Vec<_> = observers.iter().map(|o| (o.id, o.state())).collect();
                return Err(format!(
                    "{topic}: {} of {} observers have it committed after 60 s: {states:?}",
                    seen.len(),
                    observers.len()
                ));
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        };
        let last_fetched = seen.iter().map(|s| s.0).max();
        let last_committed = seen.iter().map(|s| s.1).max();
        if let (Some(f), Some(c)) = (last_fetched, last_committed) {
            r.fetched_ms.push(ms_between(answered, f));
            r.committed_ms.push(ms_between(answered, c));
        }
    }
    Ok(r)
}
