//! Real Kafka brokers and clients against a controller quorum: three brokers (ids 100–102),
//! topics made and described with Kafka's `kafka-topics` (TopicCommand), brokers listed with
//! `kafka-cluster list-endpoints` (ClusterTool), and data written and read back with Kafka's
//! system-test clients, VerifiableProducer and VerifiableConsumer, whose JSON lines on stdout
//! say what was acked and what was consumed; [`check_delivery`] compares the two.
//!
//! All tools run through the brokers (`--bootstrap-server`), so they see the cluster as the
//! brokers' metadata images do: whatever the controllers (Kafka or ferrokraft) decided.
// Only tests/interop_brokers.rs uses these; every test binary compiles `support`.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::broker::Broker;
use super::cluster::Cluster;
use super::kafka::{kafka, ProcessGuard, ToolOutput};

pub const TOPIC_COMMAND: &str = "org.apache.kafka.tools.TopicCommand";

/// ConfigCommand's class in this Kafka version (it moved from `kafka.admin` to the tools jar).
pub fn config_command() -> &'static str {
    super::kafka::kafka().class(&[
        "kafka.admin.ConfigCommand",
        "org.apache.kafka.tools.ConfigCommand",
    ])
}
pub const CLUSTER_TOOL: &str = "org.apache.kafka.tools.ClusterTool";
pub const VERIFIABLE_PRODUCER: &str = "org.apache.kafka.tools.VerifiableProducer";
pub const VERIFIABLE_CONSUMER: &str = "org.apache.kafka.tools.VerifiableConsumer";

/// The broker ids of a three-broker cluster.
pub const BROKER_IDS: [i32; 3] = [100, 101, 102];

/// Broker properties for a three-broker cluster that must survive losing any one broker,
/// on top of [`Cluster::start_broker`]'s (one network and one I/O thread, 256 MiB heap):
/// - `__consumer_offsets` replicated to all three brokers (RF 3, Kafka's default), so a
///   consumer group's coordinator moves when its broker dies instead of the group stalling
///   (with RF 1 a killed coordinator takes the group's offsets with it); one partition
///   rather than 50, since creating 150 replicas costs seconds of CPU on two cores and one
///   coordinator is enough for one group at a time;
/// - the transaction log the same way (not used by the idempotent producer, but it should
///   not be the one topic that cannot survive a broker loss);
/// - `group.initial.rebalance.delay.ms=0`: a lone consumer is assigned at once, not after
///   Kafka's 3 s wait for more members.
///
/// `broker.heartbeat.interval.ms` (2 s) and the controllers' `broker.session.timeout.ms`
/// (9 s) stay at Kafka's defaults: a SIGKILLed broker is fenced after about 9 s.
pub const BROKER_PROPS: &[(&str, &str)] = &[
    ("offsets.topic.replication.factor", "3"),
    ("offsets.topic.num.partitions", "1"),
    ("transaction.state.log.replication.factor", "3"),
    ("transaction.state.log.min.isr", "2"),
    ("transaction.state.log.num.partitions", "1"),
    ("group.initial.rebalance.delay.ms", "0"),
];

/// What a Kafka 4.x broker logs (BrokerLifecycleManager, INFO) when a heartbeat response
/// from the active controller unfences it.
pub const UNFENCED_LOG: &str =
    "The broker has been unfenced. Transitioning from RECOVERY to RUNNING.";

/// What a Kafka 4.x broker logs (BrokerLifecycleManager, INFO) on a controlled shutdown, in
/// order: SIGTERM starts it; the active controller then moves the broker's leaderships away
/// and, once the broker has caught up to the metadata offset of that move, says
/// `shouldShutDown` in a heartbeat response; the broker then finishes stopping
/// (BrokerServer). Without the controller's approval the broker gives up at the deadline
/// `BrokerServer.shutdown` is given and logs [`CONTROLLED_SHUTDOWN_TIMED_OUT`] instead.
pub const CONTROLLED_SHUTDOWN_LOG: &[&str] = &[
    "Beginning controlled shutdown.",
    "The controller has asked us to exit controlled shutdown.",
    "shut down completed",
];

/// BrokerLifecycleManager's line when the controller never approved a controlled shutdown.
pub const CONTROLLED_SHUTDOWN_TIMED_OUT: &str =
    "Timed out waiting for the controller to approve controlled shutdown";

/// A short name for each tool run in the artifacts folder (`<what>-<n>.stdout`).
fn run_name(what: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!("{what}-{}", N.fetch_add(1, Ordering::Relaxed))
}

/// Comma-separated `host:port` of the brokers started (not killed or stopped).
pub fn bootstrap_servers(brokers: &[Broker]) -> String {
    let list: Vec<String> = brokers
        .iter()
        .filter(|b| b.is_started())
        .map(Broker::bootstrap)
        .collect();
    assert!(!list.is_empty(), "no broker is running");
    list.join(",")
}

/// One row of `kafka-cluster list-endpoints --include-fenced-brokers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BrokerEndpoint {
    pub id: i32,
    pub host: String,
    pub port: u16,
    /// `STATE` column: `fenced` or `unfenced`.
    pub fenced: bool,
}

/// Parses `list-endpoints --include-fenced-brokers` output: a header
/// `ID HOST PORT RACK STATE ENDPOINT_TYPE`, then one row per broker, e.g.
/// `100 127.0.0.1 40123 null unfenced broker`.
pub fn parse_endpoints(out: &str) -> Vec<BrokerEndpoint> {
    // Kafka 4.4 prints a deprecation notice for `--config` before the table.
    let mut lines = out
        .lines()
        .filter(|l| !l.trim().is_empty())
        .skip_while(|l| !l.trim_start().starts_with("ID "));
    let Some(header) = lines.next() else {
        return Vec::new();
    };
    let cols: Vec<&str> = header.split_whitespace().collect();
    let at = |name: &str| cols.iter().position(|c| *c == name);
    let (Some(id), Some(host), Some(port)) = (at("ID"), at("HOST"), at("PORT")) else {
        return Vec::new();
    };
    // Without `--include-fenced-brokers` there is no STATE column: every broker listed is
    // unfenced.
    let state = at("STATE");
    lines
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Some(BrokerEndpoint {
                id: f.get(id)?.parse().ok()?,
                host: f.get(host)?.to_string(),
                port: f.get(port)?.parse().ok()?,
                fenced: match state.map(|s| f.get(s)) {
                    None => false,
                    Some(Some(&"fenced")) => true,
                    Some(Some(&"unfenced")) => false,
                    Some(_) => return None,
                },
            })
        })
        .collect()
}

/// One partition of `kafka-topics --describe`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionState {
    pub partition: i32,
    /// `None` for `Leader: none`.
    pub leader: Option<i32>,
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    /// Eligible leader replicas (KIP-966), empty when the field is absent or empty.
    pub elr: Vec<i32>,
}

fn id_list(s: &str) -> Vec<i32> {
    s.split(',').filter_map(|x| x.trim().parse().ok()).collect()
}

/// Parses `kafka-topics --describe --topic T` output. Kafka 4.1 prints a topic line
/// (`Topic: T\tTopicId: …\tPartitionCount: 3\tReplicationFactor: 3\tConfigs: …`) and one
/// tab-separated line per partition:
/// `\tTopic: T\tPartition: 0\tLeader: 100\tReplicas: 100,101,102\tIsr: 100,101,102\tElr: \tLastKnownElr: `.
pub fn parse_describe(out: &str, topic: &str) -> Vec<PartitionState> {
    let mut parts: Vec<PartitionState> = out
        .lines()
        .filter_map(|l| {
            let fields: BTreeMap<&str, &str> = l
                .split('\t')
                .filter_map(|f| {
                    let (k, v) = f.split_once(':')?;
                    Some((k.trim(), v.trim()))
                })
                .collect();
            if fields.get("Topic") != Some(&topic) {
                return None;
            }
            let partition = fields.get("Partition")?.parse().ok()?;
            let leader = match *fields.get("Leader")? {
                "none" => None,
                l => Some(l.parse().ok()?),
            };
            Some(PartitionState {
                partition,
                leader,
                replicas: id_list(fields.get("Replicas")?),
                isr: id_list(fields.get("Isr")?),
                elr: fields.get("Elr").map(|e| id_list(e)).unwrap_or_default(),
            })
        })
        .collect();
    parts.sort_by_key(|p| p.partition);
    parts
}

/// The option an admin tool takes its client properties file with.
pub fn config_option(class: &str) -> &'static str {
    if class.ends_with("LeaderElectionCommand") {
        "--admin.config"
    } else {
        "--command-config"
    }
}

impl Cluster {
    /// Formats and starts one broker per id with [`BROKER_PROPS`], all at once (each format
    /// is a JVM of its own: in parallel they take half the time on two cores).
    pub fn start_brokers(&self, ids: &[i32]) -> Vec<Broker> {
        self.start_brokers_with(ids, &[])
    }

    /// As [`Cluster::start_brokers`], with `extra` properties after the usual ones.
    pub fn start_brokers_with(&self, ids: &[i32], extra: &[(&str, &str)]) -> Vec<Broker> {
        let props: Vec<(&str, &str)> = BROKER_PROPS.iter().chain(extra).copied().collect();
        let props = &props;
        std::thread::scope(|s| {
            let started: Vec<_> = ids
                .iter()
                .map(|id| s.spawn(move || self.start_broker_with(*id, props)))
                .collect();
            started.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    fn broker_tool(&self, what: &str, class: &str, args: &[&str]) -> Option<ToolOutput> {
        kafka().client_tool(
            &self.art,
            &run_name(what),
            class,
            args,
            Duration::from_secs(60),
        )
    }

    /// An admin tool (`class`) through `bootstrap` with the short-timeout admin config, the
    /// tool's own arguments after those; panics if it does not finish.
    pub fn admin_tool(
        &self,
        bootstrap: &str,
        what: &str,
        class: &str,
        args: &[&str],
    ) -> ToolOutput {
        let config = self.admin_config();
        let mut full = vec![
            "--bootstrap-server",
            bootstrap,
            config_option(class),
            &config,
        ];
        full.extend(args);
        self.broker_tool(what, class, &full)
            .unwrap_or_else(|| panic!("{what}: the tool did not finish"))
    }

    /// `kafka-cluster list-endpoints --bootstrap-server <bootstrap> --include-fenced-brokers`:
    /// every registered broker and whether it is fenced, as the broker answering sees it.
    /// `None` if the tool failed.
    pub fn list_brokers(&self, bootstrap: &str) -> Option<Vec<BrokerEndpoint>> {
        let config = self.admin_config();
        let mut args = vec![
            "list-endpoints",
            "--bootstrap-server",
            bootstrap,
            "--config",
            &config,
        ];
        // DescribeCluster v2 (fenced brokers included) is 4.0's: 3.9 brokers list the
        // unfenced ones only.
        if !super::kafka::broker_kafka_version().starts_with("3.") {
            args.push("--include-fenced-brokers");
        }
        let out = self.broker_tool("list-endpoints", CLUSTER_TOOL, &args)?;
        out.status.success().then(|| parse_endpoints(&out.stdout))
    }

    /// Waits until each broker in `via` has logged (in its current start) that the
    /// controller unfenced it, then polls `kafka-cluster list-endpoints` through them until
    /// the broker answering lists exactly `ids` as registered and unfenced. Returns that
    /// listing. The log wait is only a cheap gate before the JVM polls (two cores run the
    /// brokers starting up); the listing is what counts.
    pub fn wait_brokers_unfenced(
        &self,
        via: &[&Broker],
        ids: &[i32],
        timeout: Duration,
    ) -> Vec<BrokerEndpoint> {
        let deadline = Instant::now() + timeout;
        for b in via {
            b.wait_for_log_text(UNFENCED_LOG, deadline);
        }
        let bootstrap: Vec<String> = via.iter().map(|b| b.bootstrap()).collect();
        let bootstrap = bootstrap.join(",");
        let want: BTreeSet<i32> = ids.iter().copied().collect();
        let mut last = None;
        loop {
            if let Some(listing) = self.list_brokers(&bootstrap) {
                let unfenced: BTreeSet<i32> =
                    listing.iter().filter(|e| !e.fenced).map(|e| e.id).collect();
                if unfenced == want {
                    return listing;
                }
                last = Some(listing);
            }
            assert!(
                Instant::now() < deadline,
                "brokers {ids:?} not all registered and unfenced within {timeout:?}; last \
                 list-endpoints through {bootstrap}: {last:?}"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }

    /// `kafka-topics --create --topic T --partitions P --replication-factor R [--config k=v]…`
    /// through `bootstrap`; panics if the tool fails.
    pub fn create_topic(
        &self,
        bootstrap: &str,
        topic: &str,
        partitions: i32,
        replication_factor: i32,
        configs: &[(&str, &str)],
    ) -> ToolOutput {
        let config = self.admin_config();
        let (p, r) = (partitions.to_string(), replication_factor.to_string());
        let mut args = vec![
            "--bootstrap-server",
            bootstrap,
            "--command-config",
            &config,
            "--create",
            "--topic",
            topic,
            "--partitions",
            &p,
            "--replication-factor",
            &r,
        ];
        let kv: Vec<String> = configs.iter().map(|(k, v)| format!("{k}={v}")).collect();
        for c in &kv {
            args.extend(["--config", c]);
        }
        let out = self
            .broker_tool(&format!("create-{topic}"), TOPIC_COMMAND, &args)
            .unwrap_or_else(|| panic!("kafka-topics --create {topic} timed out"));
        out.assert_ok(&format!("kafka-topics --create --topic {topic}"));
        assert!(
            out.stdout.contains(&format!("Created topic {topic}.")),
            "kafka-topics --create said:\n{}\n{}",
            out.stdout,
            out.stderr
        );
        out
    }

    /// `kafka-topics --describe --topic T` through `bootstrap`, parsed; `None` if the tool
    /// failed or printed no partition.
    pub fn describe_topic(&self, bootstrap: &str, topic: &str) -> Option<Vec<PartitionState>> {
        let config = self.admin_config();
        let out = self.broker_tool(
            &format!("describe-{topic}"),
            TOPIC_COMMAND,
            &[
                "--bootstrap-server",
                bootstrap,
                "--command-config",
                &config,
                "--describe",
                "--topic",
                topic,
            ],
        )?;
        let parts = parse_describe(&out.stdout, topic);
        (out.status.success() && !parts.is_empty()).then_some(parts)
    }

    /// Polls `describe_topic` until `ok` holds for the partitions; returns them. Panics with
    /// `what` and the last description on timeout.
    pub fn wait_topic(
        &self,
        bootstrap: &str,
        topic: &str,
        what: &str,
        timeout: Duration,
        ok: impl Fn(&[PartitionState]) -> bool,
    ) -> Vec<PartitionState> {
        let deadline = Instant::now() + timeout;
        let mut last = None;
        loop {
            if let Some(parts) = self.describe_topic(bootstrap, topic) {
                if ok(&parts) {
                    return parts;
                }
                last = Some(parts);
            }
            assert!(
                Instant::now() < deadline,
                "{topic}: {what} not reached within {timeout:?}; last --describe: {last:#?}"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

/// One message VerifiableProducer reported acked (`producer_send_success`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Acked {
    pub partition: i32,
    pub offset: i64,
    pub value: String,
}

/// One send VerifiableProducer reported failed (`producer_send_error`).
#[derive(Debug, Clone)]
pub struct SendError {
    pub value: String,
    pub exception: String,
    pub message: String,
}

impl SendError {
    /// The send raced the producer's close when the tool was stopped (SIGTERM: the shutdown
    /// hook closes the producer while the main thread may still call `send`): the message
    /// was never handed to the producer, so it is neither acked nor lost.
    pub fn is_after_close(&self) -> bool {
        self.message
            .contains("Cannot perform operation after producer has been closed")
    }
}

/// What VerifiableProducer printed.
#[derive(Debug, Default, Clone)]
pub struct ProducerReport {
    pub acked: Vec<Acked>,
    /// Failed sends, apart from those [`SendError::is_after_close`].
    pub errors: Vec<SendError>,
    /// Sends refused because the producer was already closing (see
    /// [`SendError::is_after_close`]).
    pub not_sent: usize,
    /// `tool_data.sent` / `.acked` (printed by the shutdown hook), if it got that far.
    pub sent: Option<i64>,
    pub tool_acked: Option<i64>,
    pub shutdown_complete: bool,
    /// Non-JSON stdout lines (deprecation notes and the like).
    pub other: Vec<String>,
}

/// Parses VerifiableProducer's stdout (complete lines only: a run may be in progress).
pub fn parse_producer(out: &str) -> ProducerReport {
    let mut r = ProducerReport::default();
    for line in complete_lines(out) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            r.other.push(line.to_string());
            continue;
        };
        let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        match v.get("name").and_then(Value::as_str) {
            Some("producer_send_success") => r.acked.push(Acked {
                partition: v["partition"].as_i64().unwrap() as i32,
                offset: v["offset"].as_i64().unwrap(),
                value: s("value"),
            }),
            Some("producer_send_error") => {
                let e = SendError {
                    value: s("value"),
                    exception: s("exception"),
                    message: s("message"),
                };
                if e.is_after_close() {
                    r.not_sent += 1;
                } else {
                    r.errors.push(e);
                }
            }
            Some("tool_data") => {
                r.sent = v.get("sent").and_then(Value::as_i64);
                r.tool_acked = v.get("acked").and_then(Value::as_i64);
            }
            Some("shutdown_complete") => r.shutdown_complete = true,
            _ => {}
        }
    }
    r
}

/// Lines of `text` that end with a newline (a writer may be mid-line at the end).
fn complete_lines(text: &str) -> impl Iterator<Item = &str> {
    let end = text.rfind('\n').map_or(0, |i| i + 1);
    text[..end].lines().filter(|l| !l.trim().is_empty())
}

/// VerifiableProducer settings.
#[derive(Debug, Clone)]
pub struct ProduceSpec {
    pub topic: String,
    /// `--max-messages` (bounded: the tool exits after this many sends).
    pub max_messages: u64,
    /// `--throughput`, messages per second.
    pub throughput: u64,
    /// `--value-prefix`: values are `<prefix>.<n>`, unique across runs with distinct prefixes.
    pub value_prefix: u32,
}

/// The producer config every run uses (`--producer.config`): VerifiableProducer itself sets
/// `acks` from `--acks` and forces `retries=0`, which Kafka refuses with idempotence
/// ("Must set retries to non-zero when using the idempotent producer"), so the file sets
/// retries back to Kafka's default; a send then fails only when `delivery.timeout.ms`
/// (Kafka's default 2 minutes) runs out.
pub const PRODUCER_CONFIG: &str = "enable.idempotence=true\nacks=all\nretries=2147483647\n\
max.in.flight.requests.per.connection=5\n";

/// A VerifiableProducer process (`--acks -1`, idempotent), running or finished.
pub struct Producer {
    pub name: String,
    process: ProcessGuard,
    stdout: PathBuf,
}

impl Cluster {
    /// Starts VerifiableProducer in the background against `bootstrap`.
    pub fn start_producer(&self, bootstrap: &str, spec: &ProduceSpec) -> Producer {
        let config = self.art.path("producer.properties");
        if !config.exists() {
            fs::write(&config, PRODUCER_CONFIG).unwrap();
        }
        let name = run_name(&format!("producer-{}", spec.value_prefix));
        let (max, rate, prefix) = (
            spec.max_messages.to_string(),
            spec.throughput.to_string(),
            spec.value_prefix.to_string(),
        );
        let process = kafka().spawn_client_tool(
            &self.art,
            &name,
            VERIFIABLE_PRODUCER,
            &[
                "--bootstrap-server",
                bootstrap,
                "--topic",
                &spec.topic,
                "--acks",
                "-1",
                "--producer.config",
                config.to_str().unwrap(),
                "--max-messages",
                &max,
                "--throughput",
                &rate,
                "--value-prefix",
                &prefix,
            ],
        );
        let stdout = process.log.clone();
        Producer {
            name,
            process,
            stdout,
        }
    }

    /// Runs VerifiableProducer to completion (panics if it outlives `timeout`).
    pub fn produce(
        &self,
        bootstrap: &str,
        spec: &ProduceSpec,
        timeout: Duration,
    ) -> ProducerReport {
        let mut p = self.start_producer(bootstrap, spec);
        p.wait(timeout)
    }
}

impl Producer {
    /// What it printed so far.
    pub fn report(&self) -> ProducerReport {
        parse_producer(&fs::read_to_string(&self.stdout).unwrap_or_default())
    }

    fn stderr(&self) -> String {
        fs::read_to_string(self.stdout.with_extension("stderr")).unwrap_or_default()
    }

    /// Waits until at least `n` messages are acked (so a fault lands mid-stream); panics if
    /// the producer exits first or `timeout` passes.
    pub fn wait_acked(&mut self, n: usize, timeout: Duration) -> ProducerReport {
        let deadline = Instant::now() + timeout;
        loop {
            let r = self.report();
            if r.acked.len() >= n {
                return r;
            }
            assert!(
                self.process.is_running() && Instant::now() < deadline,
                "{}: {} of {n} acked (running: {}), errors {:?}\n{}",
                self.name,
                r.acked.len(),
                self.process.is_running(),
                r.errors.iter().take(5).collect::<Vec<_>>(),
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Waits for the producer to finish its `--max-messages` and exit; panics after
    /// `timeout` or if it did not end with `shutdown_complete`.
    pub fn wait(&mut self, timeout: Duration) -> ProducerReport {
        let status = self.process.wait_exit(timeout);
        self.finish(status, timeout)
    }

    /// SIGTERM: the tool stops sending, flushes what is in flight (every outstanding send is
    /// acked or fails) and exits; waits up to `timeout` for that.
    pub fn stop(&mut self, timeout: Duration) -> ProducerReport {
        if self.process.is_running() {
            self.process.signal("TERM");
        }
        let status = self.process.wait_exit(timeout);
        self.finish(status, timeout)
    }

    fn finish(&mut self, status: Option<ExitStatus>, timeout: Duration) -> ProducerReport {
        let r = self.report();
        if status.is_none() {
            self.process.kill();
            panic!(
                "{} still ran after {timeout:?} ({} acked)\n{}",
                self.name,
                r.acked.len(),
                self.stderr()
            );
        }
        assert!(
            r.shutdown_complete,
            "{} exited ({status:?}) without shutdown_complete; {} acked\n{}",
            self.name,
            r.acked.len(),
            self.stderr()
        );
        r
    }
}

/// One record VerifiableConsumer consumed (`record_data`, printed with `--verbose`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Consumed {
    pub partition: i32,
    pub offset: i64,
    pub value: String,
}

/// What VerifiableConsumer printed.
#[derive(Debug, Default, Clone)]
pub struct ConsumerReport {
    pub records: Vec<Consumed>,
    /// `offsets_committed` events with `success: false`.
    pub failed_commits: Vec<String>,
    pub partitions_assigned: usize,
    pub shutdown_complete: bool,
}

/// Parses VerifiableConsumer's stdout (complete lines only).
pub fn parse_consumer(out: &str) -> ConsumerReport {
    let mut r = ConsumerReport::default();
    for line in complete_lines(out) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        match v.get("name").and_then(Value::as_str) {
            Some("record_data") => r.records.push(Consumed {
                partition: v["partition"].as_i64().unwrap() as i32,
                offset: v["offset"].as_i64().unwrap(),
                value: v["value"].as_str().unwrap_or("").to_string(),
            }),
            Some("offsets_committed") if v.get("success") == Some(&Value::Bool(false)) => {
                r.failed_commits.push(line.to_string());
            }
            Some("partitions_assigned") => r.partitions_assigned += 1,
            Some("shutdown_complete") => r.shutdown_complete = true,
            _ => {}
        }
    }
    r
}

impl Cluster {
    /// Runs VerifiableConsumer (`--verbose`, group `group`, from the earliest offset, offsets
    /// committed synchronously after each poll) until it has consumed every (partition,
    /// offset) in `expect` or `timeout` passes, then stops it with SIGTERM (it closes the
    /// consumer and prints `shutdown_complete`). Returns what it consumed; whether that is
    /// everything is for [`check_delivery`] to judge.
    pub fn consume(
        &self,
        bootstrap: &str,
        topic: &str,
        group: &str,
        expect: &[Acked],
        timeout: Duration,
    ) -> ConsumerReport {
        let name = run_name(&format!("consumer-{group}"));
        let mut process = kafka().spawn_client_tool(
            &self.art,
            &name,
            VERIFIABLE_CONSUMER,
            &[
                "--bootstrap-server",
                bootstrap,
                "--topic",
                topic,
                "--group-id",
                group,
                "--reset-policy",
                "earliest",
                "--verbose",
            ],
        );
        let want: BTreeSet<(i32, i64)> = expect.iter().map(|a| (a.partition, a.offset)).collect();
        let deadline = Instant::now() + timeout;
        loop {
            let r = parse_consumer(&fs::read_to_string(&process.log).unwrap_or_default());
            let seen: BTreeSet<(i32, i64)> =
                r.records.iter().map(|c| (c.partition, c.offset)).collect();
            if want.is_subset(&seen) || Instant::now() > deadline || !process.is_running() {
                break;
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        if process.is_running() {
            process.signal("TERM");
        }
        if process.wait_exit(Duration::from_secs(30)).is_none() {
            process.kill();
        }
        parse_consumer(&fs::read_to_string(&process.log).unwrap_or_default())
    }
}

/// [`check_delivery`]'s findings.
#[derive(Debug, Default)]
pub struct Delivery {
    pub acked: usize,
    pub consumed: usize,
    /// Acked messages whose (partition, offset) was never consumed, or consumed holding
    /// another value (the acked write was lost and its offset reused).
    pub lost: Vec<Acked>,
    /// Values consumed at more than one (partition, offset): written twice (idempotence
    /// should prevent it).
    pub duplicated: Vec<(String, Vec<(i32, i64)>)>,
    /// Consumed records whose (partition, offset) came more than once (re-delivery after a
    /// rebalance; harmless, but counted).
    pub redelivered: usize,
    /// Consumed values never reported acked (e.g. sends that timed out but were written).
    pub unacked: usize,
}

impl Delivery {
    /// Panics unless every acked message was consumed and nothing was written twice.
    pub fn assert_ok(&self, what: &str) {
        assert!(
            self.lost.is_empty(),
            "{what}: {} of {} acked messages lost (first: {:?})",
            self.lost.len(),
            self.acked,
            &self.lost[..self.lost.len().min(10)]
        );
        assert!(
            self.duplicated.is_empty(),
            "{what}: {} values written more than once (first: {:?})",
            self.duplicated.len(),
            &self.duplicated[..self.duplicated.len().min(10)]
        );
    }
}

/// Compares what the producers acked with what a consumer read.
pub fn check_delivery(acked: &[Acked], consumed: &[Consumed]) -> Delivery {
    let mut at: BTreeMap<(i32, i64), BTreeSet<&str>> = BTreeMap::new();
    let mut where_value: BTreeMap<&str, BTreeSet<(i32, i64)>> = BTreeMap::new();
    let mut seen_positions = 0usize;
    for c in consumed {
        let values = at.entry((c.partition, c.offset)).or_default();
        values.insert(&c.value);
        seen_positions += 1;
        where_value
            .entry(&c.value)
            .or_default()
            .insert((c.partition, c.offset));
    }
    let acked_values: BTreeSet<&str> = acked.iter().map(|a| a.value.as_str()).collect();
    let lost = acked
        .iter()
        .filter(|a| {
            !at.get(&(a.partition, a.offset))
                .is_some_and(|v| v.contains(a.value.as_str()))
        })
        .cloned()
        .collect();
    let duplicated = where_value
        .iter()
        .filter(|(_, positions)| positions.len() > 1)
        .map(|(v, positions)| (v.to_string(), positions.iter().copied().collect()))
        .collect();
    Delivery {
        acked: acked.len(),
        consumed: consumed.len(),
        lost,
        duplicated,
        redelivered: seen_positions - at.len(),
        unacked: where_value
            .keys()
            .filter(|v| !acked_values.contains(*v))
            .count(),
    }
}
