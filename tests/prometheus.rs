//! A real Prometheus (Debian's `prometheus`) scrapes a three-node ferrokraft quorum serving a
//! Kafka broker, and every PromQL expression operators would point at it returns data: the
//! project's dashboard (docs/grafana/ferrokraft-controller.json), the series its alert rules
//! read (docs/prometheus/alerts.yml), and Strimzi's KRaft dashboard queries (listed below as
//! facts). Then the leader is killed and kept down, a second node too so that no election can
//! succeed, and the AbnormalControllerState rule fires; with the second node back, an election
//! brings one active controller and the alert clears.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use support::cluster::{serial, Cluster, Impl};
use support::kafka::free_port;

/// Strimzi's KRaft dashboard (packaging/examples/metrics/grafana-dashboards/strimzi-kraft.json,
/// strimzi-kafka-operator @ 8541da1): the queries of the panels that read the controller's own
/// series, with its variables `$kubernetes_namespace`, `$strimzi_cluster_name`, `$kraft_node`.
/// Its other panels read the kubelet/cAdvisor (`container_*`, `kubelet_volume_*`) or the JVM
/// (`jvm_*`), which a ferrokraft process does not export (docs/metrics.md).
const STRIMZI_KRAFT: &[&str] = &[
    r#"sum(process_open_fds{namespace="$kubernetes_namespace",kubernetes_pod_name=~"$strimzi_cluster_name-$kraft_node",container="kafka"}) by (kubernetes_pod_name)"#,
    r#"sum(kafka_server_raftmetrics_append_records_rate{namespace="$kubernetes_namespace",strimzi_io_cluster="$strimzi_cluster_name",kubernetes_pod_name=~"$strimzi_cluster_name-$kraft_node"}) by (kubernetes_pod_name)"#,
    r#"sum(kafka_server_raftmetrics_fetch_records_rate{namespace="$kubernetes_namespace",kubernetes_pod_name=~"$strimzi_cluster_name-$kraft_node",strimzi_io_name="$strimzi_cluster_name-kafka"}) by (kubernetes_pod_name)"#,
    r#"sum(kafka_server_raftmetrics_commit_latency_avg{namespace="$kubernetes_namespace",strimzi_io_cluster="$strimzi_cluster_name",kubernetes_pod_name=~"$strimzi_cluster_name-$kraft_node"}) by (kubernetes_pod_name)"#,
    r#"max(kafka_server_raftmetrics_current_state) by (kubernetes_pod_name, current_state)"#,
    r#"sum(kafka_server_raftmetrics_current_leader{namespace="$kubernetes_namespace",strimzi_io_cluster="$strimzi_cluster_name",kubernetes_pod_name=~"$strimzi_cluster_name-$kraft_node"}) by (kubernetes_pod_name)"#,
    r#"sum(kafka_server_raftmetrics_current_vote{namespace="$kubernetes_namespace",strimzi_io_cluster="$strimzi_cluster_name",kubernetes_pod_name=~"$strimzi_cluster_name-$kraft_node"}) by (kubernetes_pod_name)"#,
    r#"sum(kafka_server_raftmetrics_current_epoch{namespace="$kubernetes_namespace",strimzi_io_cluster="$strimzi_cluster_name",kubernetes_pod_name=~"$strimzi_cluster_name-$kraft_node"}) by (kubernetes_pod_name)"#,
    r#"sum(irate(kafka_server_raftchannelmetrics_incoming_byte_total{namespace="$kubernetes_namespace",strimzi_io_cluster="$strimzi_cluster_name",kubernetes_pod_name=~"$strimzi_cluster_name-$kraft_node"}[5m])) by (kubernetes_pod_name)"#,
    r#"sum(irate(kafka_server_raftchannelmetrics_outgoing_byte_total{namespace="$kubernetes_namespace",strimzi_io_cluster="$strimzi_cluster_name",kubernetes_pod_name=~"$strimzi_cluster_name-$kraft_node"}[5m])) by (kubernetes_pod_name)"#,
    r#"sum(irate(kafka_server_raftchannelmetrics_request_total{namespace="$kubernetes_namespace",strimzi_io_cluster="$strimzi_cluster_name",kubernetes_pod_name=~"$strimzi_cluster_name-$kraft_node"}[5m])) by (kubernetes_pod_name)"#,
    r#"sum(irate(kafka_server_raftchannelmetrics_response_total{namespace="$kubernetes_namespace",strimzi_io_cluster="$strimzi_cluster_name",kubernetes_pod_name=~"$strimzi_cluster_name-$kraft_node"}[5m])) by (kubernetes_pod_name)"#,
    r#"sum(kafka_server_raftmetrics_high_watermark{namespace="$kubernetes_namespace",kubernetes_pod_name=~"$strimzi_cluster_name-$kraft_node",strimzi_io_name="$strimzi_cluster_name-kafka"}) by (kubernetes_pod_name)"#,
    r#"sum(kafka_server_raftmetrics_log_end_offset{namespace="$kubernetes_namespace",kubernetes_pod_name=~"$strimzi_cluster_name-$kraft_node",strimzi_io_name="$strimzi_cluster_name-kafka"}) by (kubernetes_pod_name)"#,
];

/// Strimzi's Kafka dashboard and prometheus-kafka-rules.yaml, the expressions that read
/// controller series (same source).
const STRIMZI_KAFKA: &[&str] = &[
    r#"sum(kafka_controller_kafkacontroller_activecontrollercount{namespace="$kubernetes_namespace",strimzi_io_name="$strimzi_cluster_name-kafka"})"#,
    r#"sum(kafka_controller_kafkacontroller_offlinepartitionscount{namespace="$kubernetes_namespace",strimzi_io_name="$strimzi_cluster_name-kafka"})"#,
    r#"sum(kafka_controller_kafkacontroller_activecontrollercount) by (strimzi_io_name, namespace)"#,
    r#"sum(kafka_controller_kafkacontroller_offlinepartitionscount) by (namespace, pod)"#,
    r#"sum(irate(kafka_controller_controllerstats_uncleanleaderelections_total{namespace="$kubernetes_namespace",strimzi_io_cluster="$strimzi_cluster_name"}[5m]))"#,
];

/// Strimzi's AbnormalControllerState expression, loaded as a rule next to ours.
const STRIMZI_ABNORMAL: &str =
    "sum(kafka_controller_kafkacontroller_activecontrollercount) by (strimzi_io_name, namespace) != 1";

/// Every series ferrokraft exports (docs/metrics.md maps each to its Kafka MBean): each must
/// hold a value on the live quorum below.
const EVERY_SERIES: &[&str] = &[
    "ferrokraft_node_id",
    "ferrokraft_raft_voter_lag_ms",
    "ferrokraft_raft_voter_lag_records",
    "kafka_controller_controllereventmanager_eventqueueprocessingtimems",
    "kafka_controller_controllereventmanager_eventqueueprocessingtimems_count",
    "kafka_controller_controllereventmanager_eventqueuetimems",
    "kafka_controller_controllereventmanager_eventqueuetimems_count",
    "kafka_controller_controllerstats_electionfromeligibleleaderreplicas_total",
    "kafka_controller_controllerstats_uncleanleaderelections_total",
    "kafka_controller_kafkacontroller_activebrokercount",
    "kafka_controller_kafkacontroller_activecontrollercount",
    "kafka_controller_kafkacontroller_controlledshutdownbrokercount",
    "kafka_controller_kafkacontroller_fencedbrokercount",
    "kafka_controller_kafkacontroller_globalpartitioncount",
    "kafka_controller_kafkacontroller_globaltopiccount",
    "kafka_controller_kafkacontroller_lastappliedrecordlagms",
    "kafka_controller_kafkacontroller_lastappliedrecordoffset",
    "kafka_controller_kafkacontroller_lastappliedrecordtimestamp",
    "kafka_controller_kafkacontroller_lastcommittedrecordoffset",
    "kafka_controller_kafkacontroller_metadataerrorcount",
    "kafka_controller_kafkacontroller_newactivecontrollerscount",
    "kafka_controller_kafkacontroller_offlinepartitionscount",
    "kafka_controller_kafkacontroller_preferredreplicaimbalancecount",
    "kafka_controller_kafkacontroller_timedoutbrokerheartbeatcount",
    "kafka_server_metadataloader_currentcontrollerid",
    "kafka_server_metadataloader_currentmetadataversion",
    "kafka_server_metadataloader_handleloadsnapshotcount",
    "kafka_server_raftchannelmetrics_incoming_byte_total",
    "kafka_server_raftchannelmetrics_outgoing_byte_total",
    "kafka_server_raftchannelmetrics_request_total",
    "kafka_server_raftchannelmetrics_response_total",
    "kafka_server_raftmetrics_append_records_rate",
    "kafka_server_raftmetrics_commit_latency_avg",
    "kafka_server_raftmetrics_commit_latency_max",
    "kafka_server_raftmetrics_current_epoch",
    "kafka_server_raftmetrics_current_leader",
    "kafka_server_raftmetrics_current_state",
    "kafka_server_raftmetrics_current_vote",
    "kafka_server_raftmetrics_election_latency_avg",
    "kafka_server_raftmetrics_election_latency_max",
    "kafka_server_raftmetrics_fetch_records_rate",
    "kafka_server_raftmetrics_high_watermark",
    "kafka_server_raftmetrics_log_end_epoch",
    "kafka_server_raftmetrics_log_end_offset",
    "kafka_server_raftmetrics_number_of_observers",
    "kafka_server_raftmetrics_number_of_voters",
    "kafka_server_raftmetrics_number_unknown_voter_connections",
    "kafka_server_raftmetrics_poll_idle_ratio_avg",
    "kafka_server_raftmetrics_uncommitted_voter_change",
    "kafka_server_snapshotemitter_latestsnapshotgeneratedagems",
    "kafka_server_snapshotemitter_latestsnapshotgeneratedbytes",
    "process_cpu_seconds_total",
    "process_max_fds",
    "process_open_fds",
    "process_resident_memory_bytes",
    "process_start_time_seconds",
    "process_virtual_memory_bytes",
    "kafka_server_socket_server_metrics_connection_count",
    "kafka_server_socket_server_metrics_connection_creation_total",
    "kafka_server_socket_server_metrics_connection_close_total",
    "kafka_server_socket_server_metrics_successful_authentication_total",
    "kafka_server_socket_server_metrics_failed_authentication_total",
    "kafka_network_requestmetrics_requests_total",
    "kafka_network_requestmetrics_totaltimems",
    "kafka_network_requestmetrics_totaltimems_count",
    "kafka_network_requestmetrics_localtimems",
    "kafka_network_requestmetrics_localtimems_count",
    "kafka_network_requestmetrics_responsesendtimems",
    "kafka_network_requestmetrics_responsesendtimems_count",
    "kafka_network_requestmetrics_requestbytes",
    "kafka_network_requestmetrics_requestbytes_count",
    "kafka_network_requestmetrics_requestqueuetimems",
    "kafka_network_requestmetrics_requestqueuetimems_count",
    "kafka_network_requestmetrics_remotetimems",
    "kafka_network_requestmetrics_remotetimems_count",
    "kafka_network_requestmetrics_throttletimems",
    "kafka_network_requestmetrics_throttletimems_count",
    "kafka_network_requestmetrics_responsequeuetimems",
    "kafka_network_requestmetrics_responsequeuetimems_count",
    // Kafka counts NONE too; a replica's Fetch is also a FetchFollower.
    r#"kafka_network_requestmetrics_errors_total{request="BrokerHeartbeat",error="NONE"}"#,
    r#"kafka_network_requestmetrics_requests_total{request="FetchFollower"}"#,
    r#"kafka_network_requestmetrics_totaltimems{request="FetchFollower",quantile="0.99"}"#,
    "kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent",
    "kafka_server_kafkarequesthandlerpool_requesthandleravgidlepercent_count",
];

/// The labels Strimzi's PodMonitor relabelling gives a controller pod's series.
fn substitute(expr: &str) -> String {
    expr.replace("$kubernetes_namespace", "kafka")
        .replace("$strimzi_cluster_name", "my-cluster")
        .replace("$kraft_node", "controller-.*")
        .replace("$job", "ferrokraft")
}

struct Prometheus {
    child: Child,
    port: u16,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// GET `path` (HTTP/1.0: the body ends with the connection, never chunked).
fn http_get(port: u16, path: &str) -> Option<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    Some(text.split_once("\r\n\r\n")?.1.to_string())
}

impl Prometheus {
    fn query(&self, expr: &str) -> serde_json::Value {
        let body = http_get(
            self.port,
            &format!("/api/v1/query?query={}", percent_encode(expr)),
        )
        .unwrap_or_default();
        let v: serde_json::Value =
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{expr}: {e}: {body}"));
        assert_eq!(v["status"], "success", "{expr}: {body}");
        v["data"]["result"].clone()
    }

    fn non_empty(&self, expr: &str) -> bool {
        self.query(expr).as_array().is_some_and(|a| !a.is_empty())
    }

    /// Waits until `expr` returns data (true) or not (false) as `want`.
    fn wait_for(&self, expr: &str, want: bool, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while self.non_empty(expr) != want {
            assert!(
                Instant::now() < deadline,
                "{expr} still {} after {timeout:?}",
                if want { "empty" } else { "non-empty" }
            );
            std::thread::sleep(Duration::from_millis(250));
        }
    }
}

fn start_prometheus(dir: &Path, metrics_ports: &[u16]) -> Prometheus {
    let port = free_port();
    let repo = env!("CARGO_MANIFEST_DIR");
    let strimzi_rules = dir.join("strimzi-rules.yml");
    std::fs::write(
        &strimzi_rules,
        format!(
            "groups:\n  - name: strimzi\n    rules:\n      - alert: StrimziAbnormalControllerState\n        expr: {STRIMZI_ABNORMAL}\n        for: 10s\n"
        ),
    )
    .unwrap();
    let mut targets = String::new();
    for (i, p) in metrics_ports.iter().enumerate() {
        let pod = format!("my-cluster-controller-{i}");
        targets.push_str(&format!(
            "      - targets: ['127.0.0.1:{p}']\n        labels: {{namespace: kafka, strimzi_io_cluster: my-cluster, strimzi_io_name: my-cluster-kafka, kubernetes_pod_name: {pod}, pod: {pod}, container: kafka}}\n"
        ));
    }
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 500ms\n  evaluation_interval: 500ms\nrule_files:\n  - {repo}/docs/prometheus/alerts.yml\n  - {}\nscrape_configs:\n  - job_name: ferrokraft\n    static_configs:\n{targets}",
            strimzi_rules.display()
        ),
    )
    .unwrap();
    let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("tsdb").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .expect("Debian's prometheus package (apt-get install prometheus; .ci/run installs it)");
    let p = Prometheus { child, port };
    let deadline = Instant::now() + Duration::from_secs(30);
    while http_get(port, "/-/ready").is_none_or(|b| !b.contains("Ready")) {
        assert!(Instant::now() < deadline, "prometheus not ready");
        std::thread::sleep(Duration::from_millis(200));
    }
    p
}

/// The PromQL expressions of the shipped dashboard.
fn dashboard_exprs() -> Vec<String> {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/grafana/ferrokraft-controller.json");
    let d: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let exprs: Vec<String> = d["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().unwrap().iter())
        .map(|t| t["expr"].as_str().unwrap().to_string())
        .collect();
    assert!(exprs.len() >= 20, "{exprs:?}");
    exprs
}

/// The metric names the shipped alert rules read.
fn alert_series() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/prometheus/alerts.yml");
    let text = std::fs::read_to_string(path).unwrap();
    let docs = yaml_rust2::YamlLoader::load_from_str(&text).unwrap();
    let mut names = Vec::new();
    for rule in docs[0]["groups"][0]["rules"].as_vec().unwrap() {
        let expr = rule["expr"].as_str().unwrap();
        for word in expr.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if ["kafka_", "ferrokraft_", "process_"]
                .iter()
                .any(|p| word.starts_with(p))
            {
                names.push(word.to_string());
            }
        }
    }
    names.sort();
    names.dedup();
    assert!(names.len() >= 7, "{names:?}");
    names
}

#[test]
fn prometheus_evaluates_the_dashboards_and_the_controller_alert_fires() {
    let _serial = serial();
    let started = Instant::now();
    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let mut c = Cluster::new("prometheus", &[Impl::Ferrokraft; 3], &[]);
    for (i, port) in ports.iter().enumerate() {
        c.nodes[i].add_props(&[("ferrokraft.metrics.listener", &format!("127.0.0.1:{port}"))]);
    }
    c.start_all();
    let (leader, _, _) = c.wait_for_leader(1, 0, Duration::from_secs(30));
    let mut broker = c.start_broker(101);
    broker.wait_for_log(support::clients::UNFENCED_LOG, Duration::from_secs(60));
    let prom = start_prometheus(&c.art.dir, &ports);
    // Every target up, and enough scrapes for rate() and irate().
    prom.wait_for("count(up == 1) == 3", true, Duration::from_secs(20));
    std::thread::sleep(Duration::from_secs(3));

    let mut empty = Vec::new();
    let exprs = dashboard_exprs()
        .into_iter()
        .chain(STRIMZI_KRAFT.iter().map(|s| s.to_string()))
        .chain(STRIMZI_KAFKA.iter().map(|s| s.to_string()))
        .chain(alert_series())
        .chain(EVERY_SERIES.iter().map(|s| s.to_string()));
    for expr in exprs {
        let expr = substitute(&expr);
        if !prom.non_empty(&expr) {
            empty.push(expr);
        }
    }
    assert!(empty.is_empty(), "expressions without data: {empty:#?}");
    // Strimzi's current-state table: one row per node.
    let states = prom.query(STRIMZI_KRAFT[4]);
    assert_eq!(states.as_array().unwrap().len(), 3, "{states}");
    // Both rule files loaded and healthy.
    let rules = http_get(prom.port, "/api/v1/rules").unwrap();
    assert_eq!(rules.matches("\"health\":\"ok\"").count(), 8, "{rules}");

    let firing = r#"ALERTS{alertname="AbnormalControllerState",alertstate="firing"}"#;
    let strimzi_firing =
        r#"ALERTS{alertname="StrimziAbnormalControllerState",alertstate="firing"}"#;
    assert!(!prom.non_empty(firing), "one active controller: no alert");

    // The leader dies and stays down; a second node too, so no election can succeed.
    c.node(leader).kill();
    let second = (1..=3).find(|id| *id != leader).unwrap();
    c.node(second).kill();
    prom.wait_for(firing, true, Duration::from_secs(30));
    prom.wait_for(strimzi_firing, true, Duration::from_secs(5));

    // The second node back: an election among two of three, the leader still down.
    c.start(second);
    prom.wait_for(
        "sum(kafka_controller_kafkacontroller_activecontrollercount) == 1",
        true,
        Duration::from_secs(30),
    );
    prom.wait_for(firing, false, Duration::from_secs(10));
    drop(broker);
    eprintln!("took {:?}", started.elapsed());
}
