//! The `/metrics` text: every series, named as the Prometheus JMX exporter renders Kafka's MBeans
//! under Strimzi's example rules, encoded by `prometheus-client` (OpenMetrics text).
//!
//! ```text
//!   raft thread ─plain data─▶ RaftMetrics (Mutex) ─┐
//!   sockets, peers ─counts, times─▶ NetStats ──────┼─▶ Exposition::encode (per scrape) ─▶ text
//!   /proc/self ────────────────────────────────────┘
//! ```
//!
//! The rules fix the shapes: `…PerSec` meters and `-total` attributes are counters (`_total`);
//! a Yammer histogram is one gauge per quantile (`quantile="0.50"` … `"0.999"`) plus `_count`
//! (the rules keep no `_sum`); raft `current-state` is one series per node whose label is the
//! state, value 1. Nothing here computes a metric: values come in as plain data.

use std::fmt::Error;
use std::sync::{Arc, Mutex};

use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::metrics::MetricType;

use crate::common::errors::error_name;
use crate::common::yammer::{Snapshot, QUANTILES};
use crate::network::stats::NetStats;

use super::metrics::RaftMetrics;

/// Label pairs of one series.
type Labels = Vec<(String, String)>;

/// The collector behind `/metrics`.
#[derive(Debug)]
pub struct Exposition {
    /// This node's id.
    pub node_id: i32,
    /// Kept by the raft thread.
    pub metrics: Arc<Mutex<RaftMetrics>>,
    /// Kept by the sockets and peers.
    pub net: Arc<NetStats>,
}

pub(super) fn gauge(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: f64,
) -> Result<(), Error> {
    ConstGauge::new(value).encode(enc.encode_descriptor(name, help, None, MetricType::Gauge)?)
}

/// A counter; the text adds `_total` to `name`.
pub(super) fn counter(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: u64,
) -> Result<(), Error> {
    ConstCounter::new(value).encode(enc.encode_descriptor(name, help, None, MetricType::Counter)?)
}

pub(super) fn labelled(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    kind: MetricType,
    rows: &[(Labels, f64)],
) -> Result<(), Error> {
    if rows.is_empty() {
        return Ok(());
    }
    let mut family = enc.encode_descriptor(name, help, None, kind)?;
    for (labels, value) in rows {
        let e = family.encode_family(labels)?;
        if matches!(kind, MetricType::Counter) {
            ConstCounter::new(*value).encode(e)?;
        } else {
            ConstGauge::new(*value).encode(e)?;
        }
    }
    Ok(())
}

pub(super) fn label(k: &str, v: impl ToString) -> (String, String) {
    (k.to_string(), v.to_string())
}

/// A Yammer histogram as the JMX exporter rules render it: `name{…, quantile}` gauges and
/// `name_count`, for each label set.
pub(super) fn histogram(
    enc: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    rows: &[(Labels, Snapshot)],
) -> Result<(), Error> {
    let quantiles: Vec<(Labels, f64)> = rows
        .iter()
        .flat_map(|(labels, s)| {
            QUANTILES.iter().zip(s.quantiles).map(move |((_, q), v)| {
                let mut l = labels.clone();
                l.push(label("quantile", q));
                (l, v)
            })
        })
        .collect();
    labelled(enc, name, help, MetricType::Gauge, &quantiles)?;
    let counts: Vec<(Labels, f64)> = rows
        .iter()
        .map(|(l, s)| (l.clone(), s.count as f64))
        .collect();
    // The rules type `Count` COUNTER but name it `_count`; as a gauge the name stays the
    // one dashboards query (an OpenMetrics counter would gain `_total`).
    labelled(
        enc,
        &format!("{name}_count"),
        &format!("{help} (count)"),
        MetricType::Gauge,
        &counts,
    )
}

impl prometheus_client::collector::Collector for Exposition {
    fn encode(&self, mut enc: DescriptorEncoder) -> Result<(), Error> {
        let m = match self.metrics.lock() {
            Ok(mut m) => {
                let now = m.now_ms;
                m.read(now)
            }
            Err(_) => return Ok(()),
        };
        super::raft_exposition::encode_raft(&mut enc, &m)?;
        super::controller_metrics::encode_controller(&mut enc, &m)?;
        self.encode_network(&mut enc)?;
        encode_process(&mut enc)?;
        gauge(
            &mut enc,
            "ferrokraft_node_id",
            "This node's node.id.",
            f64::from(self.node_id),
        )
    }
}

impl Exposition {
    fn encode_network(&self, enc: &mut DescriptorEncoder) -> Result<(), Error> {
        // raft-channel-metrics: the raft client's requests to the other voters.
        let c = self.net.raft_channel.snapshot();
        let p = "kafka_server_raftchannelmetrics_";
        counter(
            enc,
            &format!("{p}request"),
            "The total number of requests sent",
            c.requests,
        )?;
        counter(
            enc,
            &format!("{p}response"),
            "The total number of responses received",
            c.responses,
        )?;
        counter(
            enc,
            &format!("{p}outgoing_byte"),
            "The total number of outgoing bytes sent to all servers",
            c.bytes_out,
        )?;
        counter(
            enc,
            &format!("{p}incoming_byte"),
            "The total number of bytes read off all sockets",
            c.bytes_in,
        )?;
        // socket-server-metrics per listener (one network processor: the tokio runtime).
        let listeners = self.net.listeners();
        let rows = |f: &dyn Fn(&crate::network::stats::ListenerCounts) -> u64| {
            listeners
                .iter()
                .map(|(name, c)| {
                    (
                        vec![label("listener", name), label("networkProcessor", 0)],
                        f(c) as f64,
                    )
                })
                .collect::<Vec<_>>()
        };
        let s = "kafka_server_socket_server_metrics_";
        labelled(
            enc,
            &format!("{s}connection_count"),
            "The current number of active connections.",
            MetricType::Gauge,
            &rows(&|c| c.open),
        )?;
        for (name, help, f) in [
            (
                "connection_creation",
                "The total number of new connections established",
                (|c| c.created) as fn(&crate::network::stats::ListenerCounts) -> u64,
            ),
            (
                "connection_close",
                "The total number of connections closed",
                |c| c.closed,
            ),
            (
                "successful_authentication",
                "The total number of connections with successful authentication",
                |c| c.auth_succeeded,
            ),
            (
                "failed_authentication",
                "The total number of connections with failed authentication",
                |c| c.auth_failed,
            ),
        ] {
            labelled(
                enc,
                &format!("{s}{name}"),
                help,
                MetricType::Counter,
                &rows(&f),
            )?;
        }
        encode_requests(enc, &self.net)
    }
}

/// `kafka.network:type=RequestMetrics` per API: `RequestsPerSec` (request, version),
/// `ErrorsPerSec` (request, error) and the histograms (request).
fn encode_requests(enc: &mut DescriptorEncoder, net: &NetStats) -> Result<(), Error> {
    let requests: Vec<(String, crate::network::stats::RequestStats)> = net
        .requests()
        .into_iter()
        .map(|(metric, s)| (metric.name(), s))
        .collect();
    let r = "kafka_network_requestmetrics_";
    let per_version: Vec<(Labels, f64)> = requests
        .iter()
        .flat_map(|(api, s)| {
            s.count
                .iter()
                .map(move |(v, n)| (vec![label("request", api), label("version", v)], *n as f64))
        })
        .collect();
    labelled(
        enc,
        &format!("{r}requests"),
        "Requests answered (RequestsPerSec)",
        MetricType::Counter,
        &per_version,
    )?;
    // Codes Kafka does not know are all UNKNOWN_SERVER_ERROR there (`Errors.forCode`), so
    // they merge into one series.
    let per_error: Vec<(Labels, f64)> = requests
        .iter()
        .flat_map(|(api, s)| {
            let mut by_name = std::collections::BTreeMap::<String, u64>::new();
            for (code, n) in &s.errors {
                *by_name.entry(error_name(*code)).or_default() += n;
            }
            by_name.into_iter().map(move |(error, n)| {
                (vec![label("request", api), label("error", error)], n as f64)
            })
        })
        .collect();
    labelled(
        enc,
        &format!("{r}errors"),
        "Error codes answered, NONE included (ErrorsPerSec)",
        MetricType::Counter,
        &per_error,
    )?;
    type Pick = fn(&crate::network::stats::RequestStats) -> Snapshot;
    let parts: [(&str, &str, Pick); 8] = [
        (
            "requestqueuetimems",
            "Time from the request's last bytes read to the handler called (ms)",
            |s| s.queue_ms.snapshot(),
        ),
        (
            "localtimems",
            "Time in the handler's own call (ms)",
            |s| s.local_ms.snapshot(),
        ),
        (
            "remotetimems",
            "Time from the handler's call to the response encoded: raft thread, commit, long poll (ms)",
            |s| s.remote_ms.snapshot(),
        ),
        (
            "throttletimems",
            "Throttle time applied to the request (ms)",
            |s| s.throttle_ms.snapshot(),
        ),
        (
            "responsequeuetimems",
            "Time from the response encoded to its write started (ms)",
            |s| s.response_queue_ms.snapshot(),
        ),
        (
            "responsesendtimems",
            "Time to write the response (ms)",
            |s| s.send_ms.snapshot(),
        ),
        (
            "totaltimems",
            "Time from the request read to its response written (ms)",
            |s| s.total_ms.snapshot(),
        ),
        ("requestbytes", "Size of the request (bytes)", |s| {
            s.request_bytes.snapshot()
        }),
    ];
    for (name, help, pick) in parts {
        let rows: Vec<(Labels, Snapshot)> = requests
            .iter()
            .map(|(api, s)| (vec![label("request", api)], pick(s)))
            .collect();
        histogram(enc, &format!("{r}{name}"), help, &rows)?;
    }
    Ok(())
}

fn encode_process(enc: &mut DescriptorEncoder) -> Result<(), Error> {
    let Some(p) = super::process_metrics::read() else {
        return Ok(());
    };
    ConstCounter::new(p.cpu_seconds).encode(enc.encode_descriptor(
        "process_cpu_seconds",
        "Total user and system CPU time spent in seconds.",
        None,
        MetricType::Counter,
    )?)?;
    gauge(
        enc,
        "process_resident_memory_bytes",
        "Resident memory size in bytes.",
        p.resident_bytes,
    )?;
    gauge(
        enc,
        "process_virtual_memory_bytes",
        "Virtual memory size in bytes.",
        p.virtual_bytes,
    )?;
    gauge(
        enc,
        "process_open_fds",
        "Number of open file descriptors.",
        p.open_fds,
    )?;
    gauge(
        enc,
        "process_max_fds",
        "Maximum number of open file descriptors.",
        p.max_fds,
    )?;
    gauge(
        enc,
        "process_start_time_seconds",
        "Start time of the process since unix epoch in seconds.",
        p.start_time_seconds,
    )
}

/// The text of one scrape of `collector`.
pub fn render(registry: &prometheus_client::registry::Registry) -> String {
    let mut out = String::new();
    // Writing to a String cannot fail but for a collector's own error, which leaves what was
    // written so far.
    let _ = prometheus_client::encoding::text::encode(&mut out, registry);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::http::HttpSource;
    use crate::network::stats::RequestTimes;

    #[test]
    fn series_are_named_as_the_jmx_exporter_renders_them() {
        let metrics = Arc::new(Mutex::new(RaftMetrics {
            current_state: "leader",
            current_leader: 3,
            high_watermark: 42,
            number_of_voters: 3,
            ..Default::default()
        }));
        if let Ok(mut m) = metrics.lock() {
            m.controller.active_controller_count = 1;
            m.controller.elections.unclean = 2;
            m.voter_lag
                .insert(2, super::super::metrics::VoterLag { records: 5, ms: 10 });
            m.event_queue_ms.update(4.0, 1.0);
        }
        let net = Arc::new(NetStats::default());
        let _open = net.connection_opened("CONTROLLER");
        let t = RequestTimes {
            total_ms: 2.0,
            local_ms: 1.0,
            send_ms: 1.0,
            ..Default::default()
        };
        net.request_done(
            kafka_protocol::messages::ApiKey::Fetch,
            17,
            true,
            t,
            90,
            &[(0, 2), (-1, 1)],
        );
        net.raft_channel.sent(100);
        let source = super::super::metrics::MetricsSource::new(3, metrics, net.clone());
        let text = source.metrics();
        for line in [
            "kafka_server_raftmetrics_current_state{current_state=\"leader\"} 1",
            "kafka_server_raftmetrics_current_leader 3",
            "kafka_server_raftmetrics_high_watermark 42",
            "kafka_server_raftmetrics_number_of_voters 3",
            "ferrokraft_raft_voter_lag_records{voter_id=\"2\"} 5",
            "kafka_controller_kafkacontroller_activecontrollercount 1",
            "kafka_controller_controllerstats_uncleanleaderelections_total 2",
            "kafka_controller_controllerstats_electionfromeligibleleaderreplicas_total 0",
            "kafka_server_metadataloader_currentmetadataversion 7",
            "kafka_server_metadataloader_currentcontrollerid 3",
            "kafka_server_metadataloader_handleloadsnapshotcount 0",
            "kafka_server_snapshotemitter_latestsnapshotgeneratedbytes 0",
            "kafka_server_snapshotemitter_latestsnapshotgeneratedagems 0",
            "kafka_controller_controllereventmanager_eventqueuetimems{quantile=\"0.99\"} 4",
            "kafka_controller_controllereventmanager_eventqueuetimems_count 1",
            "kafka_server_raftchannelmetrics_request_total 1",
            "kafka_server_raftchannelmetrics_outgoing_byte_total 100",
            "kafka_server_socket_server_metrics_connection_count{listener=\"CONTROLLER\",networkProcessor=\"0\"} 1",
            "kafka_server_socket_server_metrics_connection_creation_total{listener=\"CONTROLLER\",networkProcessor=\"0\"} 1",
            "kafka_network_requestmetrics_requests_total{request=\"Fetch\",version=\"17\"} 1",
            "kafka_network_requestmetrics_totaltimems{request=\"Fetch\",quantile=\"0.50\"} 2",
            "kafka_network_requestmetrics_totaltimems_count{request=\"Fetch\"} 1",
            "kafka_network_requestmetrics_requests_total{request=\"FetchFollower\",version=\"17\"} 1",
            "kafka_network_requestmetrics_errors_total{request=\"Fetch\",error=\"NONE\"} 2",
            "kafka_network_requestmetrics_errors_total{request=\"Fetch\",error=\"UNKNOWN_SERVER_ERROR\"} 1",
            "kafka_network_requestmetrics_remotetimems{request=\"Fetch\",quantile=\"0.99\"} 0",
            "kafka_network_requestmetrics_requestqueuetimems_count{request=\"Fetch\"} 1",
            "kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent 0",
            "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_count 0",
            "ferrokraft_node_id 3",
        ] {
            assert!(text.contains(line), "missing {line:?} in\n{text}");
        }
        assert!(
            !text.contains("current_state=\"follower\""),
            "only the current state is a series"
        );
        for name in [
            "process_cpu_seconds_total",
            "process_resident_memory_bytes",
            "process_open_fds",
            "process_max_fds",
            "process_start_time_seconds",
        ] {
            assert!(
                text.lines().any(|l| l.starts_with(&format!("{name} "))),
                "{name} missing"
            );
        }
        assert!(text.ends_with("# EOF\n"), "OpenMetrics text");
    }
}
