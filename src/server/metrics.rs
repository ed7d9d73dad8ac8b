//! Kafka's raft and controller metrics as plain data, kept by the driver thread; a scrape
//! takes a [`MetricsView`] of them and `super::exposition` encodes it.
//!
//! ```text
//!   driver ─record / set─▶ RaftMetrics (Mutex) ─read(now)─▶ MetricsView ─▶ exposition
//! ```
//!
//! Averages, maxima and rates are over a sliding window like Kafka's sampled stats
//! (2 samples × 30 s); the event-queue times are Yammer histograms (`common::yammer`).
//! Per-voter lag, in records and milliseconds, is ferrokraft's own (`ferrokraft_raft_voter_lag_*`).

use std::collections::{BTreeMap, VecDeque};

use crate::common::yammer::{Histogram, Snapshot};

/// Window of averages, maxima and rates (Kafka: metrics.num.samples=2 × 30 s).
pub const WINDOW_MS: u64 = 60_000;

/// Timestamped samples over the window.
#[derive(Debug, Clone, Default)]
pub struct Window {
    samples: VecDeque<(u64, f64)>,
}

impl Window {
    /// Adds a sample taken at `now_ms`.
    pub fn record(&mut self, now_ms: u64, value: f64) {
        self.samples.push_back((now_ms, value));
        self.expire(now_ms);
    }

    fn expire(&mut self, now_ms: u64) {
        while self
            .samples
            .front()
            .is_some_and(|(t, _)| now_ms.saturating_sub(*t) > WINDOW_MS)
        {
            self.samples.pop_front();
        }
    }

    /// Mean of the samples in the window (NaN when empty, as Kafka reports).
    pub fn avg(&mut self, now_ms: u64) -> f64 {
        self.expire(now_ms);
        if self.samples.is_empty() {
            return f64::NAN;
        }
        self.samples.iter().map(|(_, v)| v).sum::<f64>() / self.samples.len() as f64
    }

    /// Largest sample in the window (NaN when empty).
    pub fn max(&mut self, now_ms: u64) -> f64 {
        self.expire(now_ms);
        self.samples
            .iter()
            .map(|(_, v)| *v)
            .fold(f64::NAN, f64::max)
    }

    /// Sum of the samples per second over the window.
    pub fn rate(&mut self, now_ms: u64) -> f64 {
        self.expire(now_ms);
        self.samples.iter().map(|(_, v)| v).sum::<f64>() / (WINDOW_MS as f64 / 1000.0)
    }
}

/// What the leader knows of one voter, for the lag gauges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VoterLag {
    /// Records behind the leader's log end offset.
    pub records: i64,
    /// Milliseconds since it was last caught up (-1 unknown).
    pub ms: i64,
}

/// The raft metrics of one node.
#[derive(Debug, Clone)]
pub struct RaftMetrics {
    /// Kafka's `current-state` value.
    pub current_state: &'static str,
    /// `current-leader` (-1 unknown).
    pub current_leader: i32,
    /// `current-vote` (-1 none).
    pub current_vote: i32,
    /// `current-epoch`.
    pub current_epoch: i32,
    /// `high-watermark` (-1 unknown).
    pub high_watermark: i64,
    /// `log-end-offset`.
    pub log_end_offset: i64,
    /// `log-end-epoch`.
    pub log_end_epoch: i32,
    /// `number-unknown-voter-connections`.
    pub unknown_voter_connections: usize,
    /// `commit-latency-avg/max` samples (ms).
    pub commit_latency_ms: Window,
    /// `election-latency-avg/max` samples (ms).
    pub election_latency_ms: Window,
    /// Records appended as follower (for `fetch-records-rate`).
    pub fetch_records: Window,
    /// Records appended as leader (for `append-records-rate`).
    pub append_records: Window,
    /// Idle fractions of each poll (for `poll-idle-ratio-avg`).
    pub poll_idle_ratio: Window,
    /// Whether the raft thread records these at all: false without a metrics listener,
    /// since nothing could read them (a node without one pays nothing for its metrics).
    pub recording: bool,
    /// Raft thread time since it started, idle and in all (ns), for
    /// `RequestHandlerAvgIdlePercent`: Kafka's meter of its handler threads' idle time.
    pub thread_ns: (u64, u64),
    /// Leader only: lag of each other voter.
    pub voter_lag: BTreeMap<i32, VoterLag>,
    /// The driver's clock at the last update (windows are read at this time).
    pub now_ms: u64,
    /// Kafka's controller gauges.
    pub controller: super::controller_metrics::ControllerGauges,
    /// Durations of controller calls (ms): `EventQueueProcessingTimeMs`.
    pub controller_event_ms: Histogram,
    /// Time controller requests waited in the raft thread's queue (ms): `EventQueueTimeMs`.
    pub event_queue_ms: Histogram,
    /// `number-of-voters`.
    pub number_of_voters: usize,
    /// `number-of-observers` (leader only).
    pub number_of_observers: usize,
    /// `uncommitted-voter-change`: a voter change in progress on the leader.
    pub uncommitted_voter_change: bool,
    /// `NewActiveControllersCount`: times this node became the active controller.
    pub new_active_controllers: u64,
    /// `TimedOutBrokerHeartbeatCount`: broker heartbeats answered without reaching the
    /// controller because its queue was full.
    pub timed_out_heartbeats: u64,
    /// Wall clock (ms) when the applied offset last moved, for `LastAppliedRecordTimestamp`.
    pub last_applied_at_ms: Option<u64>,
    /// Size of the last snapshot this node wrote (SnapshotEmitter `LatestSnapshotGeneratedBytes`).
    pub latest_snapshot_bytes: u64,
    /// Wall clock (ms) when this node last wrote a snapshot, else when its metrics began (Kafka
    /// starts the age at the emitter's creation).
    pub latest_snapshot_at_ms: Option<u64>,
}

/// What one scrape reads: the windows and histograms evaluated now.
#[derive(Debug, Clone)]
pub struct MetricsView {
    /// Kafka's `current-state` value.
    pub current_state: &'static str,
    /// `current-leader`.
    pub current_leader: i32,
    /// `current-vote`.
    pub current_vote: i32,
    /// `current-epoch`.
    pub current_epoch: i32,
    /// `high-watermark`.
    pub high_watermark: i64,
    /// `log-end-offset`.
    pub log_end_offset: i64,
    /// `log-end-epoch`.
    pub log_end_epoch: i32,
    /// `number-unknown-voter-connections`.
    pub unknown_voter_connections: usize,
    /// `number-of-voters`.
    pub number_of_voters: usize,
    /// `number-of-observers`.
    pub number_of_observers: usize,
    /// `uncommitted-voter-change`.
    pub uncommitted_voter_change: bool,
    /// `commit-latency-avg` / `-max` (ms).
    pub commit_latency: (f64, f64),
    /// `election-latency-avg` / `-max` (ms).
    pub election_latency: (f64, f64),
    /// `fetch-records-rate`.
    pub fetch_records_rate: f64,
    /// `append-records-rate`.
    pub append_records_rate: f64,
    /// `poll-idle-ratio-avg`.
    pub poll_idle_ratio_avg: f64,
    /// `RequestHandlerAvgIdlePercent`'s `Count`: ns the raft thread was idle (Kafka: idle ns
    /// summed over handler threads ÷ their number; here one thread).
    pub handler_idle_ns: u64,
    /// `RequestHandlerAvgIdlePercent`'s `MeanRate`: idle share since the thread started
    /// (Kafka's meter counts ns at a per-ns rate unit, so its mean rate is a 0..1 share).
    pub handler_idle_mean: f64,
    /// Leader only: lag of each other voter.
    pub voter_lag: BTreeMap<i32, VoterLag>,
    /// The controller gauges.
    pub controller: super::controller_metrics::ControllerGauges,
    /// `EventQueueProcessingTimeMs`.
    pub event_processing: Snapshot,
    /// `EventQueueTimeMs`.
    pub event_queue: Snapshot,
    /// `NewActiveControllersCount`.
    pub new_active_controllers: u64,
    /// `TimedOutBrokerHeartbeatCount`.
    pub timed_out_heartbeats: u64,
    /// `LastAppliedRecordTimestamp` (ms since the epoch; 0 none yet).
    pub last_applied_timestamp_ms: u64,
    /// `LastAppliedRecordLagMs`.
    pub last_applied_lag_ms: u64,
    /// `LatestSnapshotGeneratedBytes`.
    pub latest_snapshot_bytes: u64,
    /// `LatestSnapshotGeneratedAgeMs`.
    pub latest_snapshot_age_ms: u64,
}

impl Default for RaftMetrics {
    /// Nothing known yet: no leader, no vote, no high watermark (Kafka's -1 sentinels).
    fn default() -> Self {
        Self {
            current_state: "unattached",
            current_leader: -1,
            current_vote: -1,
            current_epoch: 0,
            high_watermark: -1,
            log_end_offset: 0,
            log_end_epoch: 0,
            unknown_voter_connections: 0,
            commit_latency_ms: Window::default(),
            election_latency_ms: Window::default(),
            fetch_records: Window::default(),
            append_records: Window::default(),
            poll_idle_ratio: Window::default(),
            recording: true,
            thread_ns: (0, 0),
            voter_lag: BTreeMap::new(),
            now_ms: 0,
            controller: Default::default(),
            controller_event_ms: Histogram::default(),
            event_queue_ms: Histogram::default(),
            number_of_voters: 0,
            number_of_observers: 0,
            uncommitted_voter_change: false,
            new_active_controllers: 0,
            timed_out_heartbeats: 0,
            last_applied_at_ms: None,
            latest_snapshot_bytes: 0,
            latest_snapshot_at_ms: None,
        }
    }
}

/// Serves a node's metrics over HTTP.
#[derive(Debug)]
pub struct MetricsSource {
    /// Shared with the driver.
    pub metrics: std::sync::Arc<std::sync::Mutex<RaftMetrics>>,
    registry: prometheus_client::registry::Registry,
}

impl MetricsSource {
    /// The metrics of node `node_id`, kept by its driver (`metrics`) and sockets (`net`).
    pub fn new(
        node_id: i32,
        metrics: std::sync::Arc<std::sync::Mutex<RaftMetrics>>,
        net: std::sync::Arc<crate::network::stats::NetStats>,
    ) -> Self {
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register_collector(Box::new(super::exposition::Exposition {
            node_id,
            metrics: metrics.clone(),
            net,
        }));
        Self { metrics, registry }
    }
}

impl crate::network::http::HttpSource for MetricsSource {
    fn metrics(&self) -> String {
        super::exposition::render(&self.registry)
    }

    fn ready(&self) -> (bool, String) {
        match self.metrics.lock() {
            Ok(m) if m.ready() => (
                true,
                format!(
                    "ready: leader {} epoch {} high watermark {}",
                    m.current_leader, m.current_epoch, m.high_watermark
                ),
            ),
            Ok(m) if m.current_leader < 0 => (
                false,
                format!("not ready: no known leader in epoch {}", m.current_epoch),
            ),
            Ok(m) if m.high_watermark >= 0 && !m.controller.metadata_loaded => (
                false,
                "not ready: the metadata image holds no metadata.version yet".into(),
            ),
            Ok(m) => (
                false,
                format!(
                    "not ready: leader {} known but the high watermark is not",
                    m.current_leader
                ),
            ),
            Err(_) => (false, "not ready: metrics unavailable".into()),
        }
    }
}

impl RaftMetrics {
    /// The metrics as of `now_ms`.
    pub fn read(&mut self, now_ms: u64) -> MetricsView {
        MetricsView {
            current_state: self.current_state,
            current_leader: self.current_leader,
            current_vote: self.current_vote,
            current_epoch: self.current_epoch,
            high_watermark: self.high_watermark,
            log_end_offset: self.log_end_offset,
            log_end_epoch: self.log_end_epoch,
            unknown_voter_connections: self.unknown_voter_connections,
            number_of_voters: self.number_of_voters,
            number_of_observers: self.number_of_observers,
            uncommitted_voter_change: self.uncommitted_voter_change,
            commit_latency: (
                self.commit_latency_ms.avg(now_ms),
                self.commit_latency_ms.max(now_ms),
            ),
            election_latency: (
                self.election_latency_ms.avg(now_ms),
                self.election_latency_ms.max(now_ms),
            ),
            fetch_records_rate: self.fetch_records.rate(now_ms),
            append_records_rate: self.append_records.rate(now_ms),
            poll_idle_ratio_avg: self.poll_idle_ratio.avg(now_ms),
            handler_idle_ns: self.thread_ns.0,
            // Yammer's mean rate of a meter never marked is 0.
            handler_idle_mean: if self.thread_ns.1 == 0 {
                0.0
            } else {
                self.thread_ns.0 as f64 / self.thread_ns.1 as f64
            },
            voter_lag: self.voter_lag.clone(),
            controller: self.controller.clone(),
            event_processing: self.controller_event_ms.snapshot(),
            event_queue: self.event_queue_ms.snapshot(),
            new_active_controllers: self.new_active_controllers,
            timed_out_heartbeats: self.timed_out_heartbeats,
            last_applied_timestamp_ms: self.last_applied_at_ms.unwrap_or(0),
            last_applied_lag_ms: self
                .last_applied_at_ms
                .map_or(0, |t| now_ms.saturating_sub(t)),
            latest_snapshot_bytes: self.latest_snapshot_bytes,
            latest_snapshot_age_ms: self
                .latest_snapshot_at_ms
                .map_or(0, |t| now_ms.saturating_sub(t)),
        }
    }

    /// Ready when a leader and the high watermark are known and the committed metadata
    /// holds a metadata.version: the node can serve as controller.
    pub fn ready(&self) -> bool {
        self.current_leader >= 0 && self.high_watermark >= 0 && self.controller.metadata_loaded
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_averages_and_expires() {
        let mut w = Window::default();
        assert!(w.avg(0).is_nan());
        w.record(0, 10.0);
        w.record(1000, 30.0);
        assert_eq!(w.avg(1000), 20.0);
        assert_eq!(w.max(1000), 30.0);
        assert_eq!(w.rate(1000), 40.0 / 60.0);
        assert_eq!(w.avg(61_000), 30.0, "the first sample left the window");
        assert!(w.max(62_000).is_nan());
    }

    #[test]
    fn ready_needs_a_leader_a_high_watermark_and_metadata() {
        let mut m = RaftMetrics {
            current_state: "leader",
            current_leader: 3,
            high_watermark: 42,
            ..Default::default()
        };
        m.controller.metadata_loaded = true;
        assert!(m.ready());
        m.controller.metadata_loaded = false;
        assert!(
            !m.ready(),
            "no metadata.version: cannot serve as controller"
        );
        m.controller.metadata_loaded = true;
        m.high_watermark = -1;
        assert!(!m.ready());
    }
}
