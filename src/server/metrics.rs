//! Kafka's raft metrics, kept by the driver thread and served as Prometheus text.
//!
//! Names follow the Strimzi/JMX-exporter mapping operators already scrape
//! (`kafka.server:type=raft-metrics` → `kafka_server_raftmetrics_<name>`, hyphens to
//! underscores, `current-state` as a one-hot label). Averages, maxima and rates are over a
//! sliding window like Kafka's sampled stats (2 samples × 30 s). Per-voter lag, in records and
//! milliseconds, is ferrokraft's own (`ferrokraft_raft_voter_lag_*`).

use std::collections::{BTreeMap, VecDeque};
use std::fmt::Write;

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
    /// Leader only: lag of each other voter.
    pub voter_lag: BTreeMap<i32, VoterLag>,
    /// The driver's clock at the last update (windows are read at this time).
    pub now_ms: u64,
    /// Kafka's controller gauges.
    pub controller: super::controller_metrics::ControllerGauges,
    /// Durations of controller calls (ms), for `EventQueueProcessingTimeMs`.
    pub controller_event_ms: Window,
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
            voter_lag: BTreeMap::new(),
            now_ms: 0,
            controller: Default::default(),
            controller_event_ms: Window::default(),
        }
    }
}

/// Serves a node's metrics over HTTP.
#[derive(Debug, Clone)]
pub struct MetricsSource {
    /// The node id.
    pub node_id: i32,
    /// Shared with the driver.
    pub metrics: std::sync::Arc<std::sync::Mutex<RaftMetrics>>,
}

impl crate::network::http::HttpSource for MetricsSource {
    fn metrics(&self) -> String {
        match self.metrics.lock() {
            Ok(mut m) => {
                let now = m.now_ms;
                m.render(now, self.node_id)
            }
            Err(_) => String::new(),
        }
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

fn gauge(out: &mut String, name: &str, help: &str, value: f64) {
    let _ = writeln!(out, "# HELP {name} {help}");
    let _ = writeln!(out, "# TYPE {name} gauge");
    if value.is_nan() {
        let _ = writeln!(out, "{name} NaN");
    } else {
        let _ = writeln!(out, "{name} {value}");
    }
}

/// Kafka's `current-state` values, for the one-hot family.
const STATES: &[&str] = &[
    "leader",
    "candidate",
    "prospective",
    "prospective-voted",
    "unattached",
    "unattached-voted",
    "follower",
    "observer",
];

impl RaftMetrics {
    /// Prometheus text exposition (format 0.0.4).
    pub fn render(&mut self, now_ms: u64, node_id: i32) -> String {
        let mut out = String::new();
        let p = "kafka_server_raftmetrics_";
        let _ = writeln!(out, "# HELP {p}current_state The current state of this member; possible values are leader, prospective, prospective-voted, candidate, unattached-voted, follower, observer, unattached");
        let _ = writeln!(out, "# TYPE {p}current_state gauge");
        for s in STATES {
            let _ = writeln!(
                out,
                "{p}current_state{{current_state=\"{s}\"}} {}",
                u8::from(*s == self.current_state)
            );
        }
        gauge(
            &mut out,
            &format!("{p}current_leader"),
            "The current quorum leader's id; -1 indicates unknown",
            f64::from(self.current_leader),
        );
        gauge(
            &mut out,
            &format!("{p}current_vote"),
            "The current voted leader's id; -1 indicates not voted for anyone",
            f64::from(self.current_vote),
        );
        gauge(
            &mut out,
            &format!("{p}current_epoch"),
            "The current quorum epoch.",
            f64::from(self.current_epoch),
        );
        gauge(
            &mut out,
            &format!("{p}high_watermark"),
            "The high watermark maintained on this member; -1 if it is unknown",
            self.high_watermark as f64,
        );
        gauge(
            &mut out,
            &format!("{p}log_end_offset"),
            "The current raft log end offset.",
            self.log_end_offset as f64,
        );
        gauge(
            &mut out,
            &format!("{p}log_end_epoch"),
            "The current raft log end epoch.",
            f64::from(self.log_end_epoch),
        );
        gauge(&mut out, &format!("{p}number_unknown_voter_connections"), "Number of unknown voters whose connection information is not cached; would never be larger than quorum-size.", self.unknown_voter_connections as f64);
        gauge(
            &mut out,
            &format!("{p}commit_latency_avg"),
            "The average time in milliseconds to commit an entry in the raft log.",
            self.commit_latency_ms.avg(now_ms),
        );
        gauge(
            &mut out,
            &format!("{p}commit_latency_max"),
            "The maximum time in milliseconds to commit an entry in the raft log.",
            self.commit_latency_ms.max(now_ms),
        );
        gauge(
            &mut out,
            &format!("{p}election_latency_avg"),
            "The average time in milliseconds spent on electing a new leader.",
            self.election_latency_ms.avg(now_ms),
        );
        gauge(
            &mut out,
            &format!("{p}election_latency_max"),
            "The maximum time in milliseconds spent on electing a new leader.",
            self.election_latency_ms.max(now_ms),
        );
        gauge(
            &mut out,
            &format!("{p}fetch_records_rate"),
            "The average number of records fetched from the leader of the raft quorum.",
            self.fetch_records.rate(now_ms),
        );
        gauge(
            &mut out,
            &format!("{p}append_records_rate"),
            "The average number of records appended per sec by the leader of the raft quorum.",
            self.append_records.rate(now_ms),
        );
        gauge(&mut out, &format!("{p}poll_idle_ratio_avg"), "The ratio of time the Raft IO thread is idle as opposed to doing work (e.g. handling requests or replicating from the leader)", self.poll_idle_ratio.avg(now_ms));
        let _ = writeln!(out, "# HELP ferrokraft_raft_voter_lag_records Records each voter is behind the leader's log end offset (leader only).");
        let _ = writeln!(out, "# TYPE ferrokraft_raft_voter_lag_records gauge");
        for (id, lag) in &self.voter_lag {
            let _ = writeln!(
                out,
                "ferrokraft_raft_voter_lag_records{{voter_id=\"{id}\"}} {}",
                lag.records
            );
        }
        let _ = writeln!(out, "# HELP ferrokraft_raft_voter_lag_ms Milliseconds since each voter was last caught up with the leader (leader only; -1 never).");
        let _ = writeln!(out, "# TYPE ferrokraft_raft_voter_lag_ms gauge");
        for (id, lag) in &self.voter_lag {
            let _ = writeln!(
                out,
                "ferrokraft_raft_voter_lag_ms{{voter_id=\"{id}\"}} {}",
                lag.ms
            );
        }
        self.controller.event_queue_processing_time_ms = self.controller_event_ms.avg(now_ms);
        self.controller.render(&mut out);
        gauge(
            &mut out,
            "ferrokraft_node_id",
            "This node's node.id.",
            f64::from(node_id),
        );
        out
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
    fn render_uses_kafka_names_and_a_one_hot_state() {
        let mut m = RaftMetrics {
            current_state: "leader",
            current_leader: 3,
            high_watermark: 42,
            ..Default::default()
        };
        m.controller.metadata_loaded = true;
        m.controller.active_controller_count = 1;
        m.voter_lag.insert(2, VoterLag { records: 5, ms: 10 });
        let text = m.render(0, 3);
        assert!(text.contains("kafka_server_raftmetrics_current_state{current_state=\"leader\"} 1"));
        assert!(
            text.contains("kafka_server_raftmetrics_current_state{current_state=\"follower\"} 0")
        );
        assert!(text.contains("kafka_server_raftmetrics_current_leader 3"));
        assert!(text.contains("kafka_server_raftmetrics_high_watermark 42"));
        assert!(text.contains("ferrokraft_raft_voter_lag_records{voter_id=\"2\"} 5"));
        assert!(text.contains("kafka_controller_kafkacontroller_activecontrollercount 1"));
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
