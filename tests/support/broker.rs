//! A real Apache Kafka broker (`process.roles=broker`) beside a mixed controller quorum, and
//! Kafka's `kafka-metadata-quorum --bootstrap-server <broker>`, which the broker answers by
//! forwarding to the active controller inside an Envelope (API 58).
// Only tests/interop_envelope.rs and tests/interop_brokers.rs use these; every test binary
// compiles `support`.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

use std::fs;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::time::Duration;

use super::cluster::{tail, unexplained_errors, AllowedError, Cluster};
use super::kafka::{
    broker_kafka, cluster_release_version, free_port, kafka, Artifacts, ProcessGuard, ToolOutput,
};

const METADATA_QUORUM: &str = "org.apache.kafka.tools.MetadataQuorumCommand";

/// Broker JVMs: the 256 MiB heap and serial collector controllers get, and C1 only (no C2
/// JIT): measured in tests/interop_brokers.rs, a broker had used 3.4 s of CPU by the time
/// it was unfenced instead of 5.5 s, on a machine of two cores that also runs three
/// controllers and the tools; a test's few hundred messages a second do not need C2.
pub const BROKER_JVM: &[&str] = &["-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"];

/// A Kafka broker: running, or stopped with its directory kept for a restart.
pub struct Broker {
    pub id: i32,
    /// Its PLAINTEXT (client) address: loopback, or its namespace's.
    pub host: String,
    /// Its PLAINTEXT (client) port.
    pub port: u16,
    /// The network namespace it runs in, if any.
    pub netns: Option<String>,
    pub props: PathBuf,
    /// Every log this broker wrote (one per start), oldest first.
    pub logs: Vec<PathBuf>,
    process: Option<ProcessGuard>,
}

impl Broker {
    pub fn bootstrap(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    /// The current (last) start's log.
    pub fn log_text(&self) -> String {
        self.logs
            .last()
            .and_then(|p| fs::read(p).ok())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    /// The logs of every start, oldest first, joined.
    pub fn all_logs_text(&self) -> String {
        self.logs
            .iter()
            .map(|p| {
                fs::read(p)
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Waits until the current start's log contains `needle` (panics with the log tail
    /// otherwise).
    pub fn wait_for_log(&mut self, needle: &str, timeout: Duration) {
        self.process
            .as_mut()
            .unwrap_or_else(|| panic!("broker {} is not running", self.id))
            .wait_for_log(needle, timeout);
    }

    /// Polls the current start's log (without touching the process) until it contains
    /// `needle`; panics with the log tail at `deadline`.
    pub fn wait_for_log_text(&self, needle: &str, deadline: std::time::Instant) {
        loop {
            let text = self.log_text();
            if text.contains(needle) {
                return;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "`{needle}` did not appear in broker {}'s log:\n{}",
                self.id,
                tail(&text, 40)
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Started and not killed or stopped since (the process may still have died).
    pub fn is_started(&self) -> bool {
        self.process.is_some()
    }

    pub fn is_running(&mut self) -> bool {
        self.process.as_mut().is_some_and(|p| p.is_running())
    }

    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(|p| p.pid())
    }

    /// SIGKILL (kill -9): no controlled shutdown, the directory stays as it is.
    pub fn kill(&mut self) {
        if let Some(mut p) = self.process.take() {
            p.kill();
        }
    }

    /// SIGTERM (a controlled shutdown), then waits up to `timeout` for the JVM to exit;
    /// returns its exit status. Panics if it is still running then (and kills it).
    pub fn terminate(&mut self, timeout: Duration) -> ExitStatus {
        let mut p = self
            .process
            .take()
            .unwrap_or_else(|| panic!("broker {} is not running", self.id));
        p.signal("TERM");
        match p.wait_exit(timeout) {
            Some(status) => status,
            None => {
                p.kill();
                panic!(
                    "broker {} still ran {timeout:?} after SIGTERM:\n{}",
                    self.id,
                    tail(&self.log_text(), 30)
                );
            }
        }
    }

    /// Asserts the broker still runs and logged (in every start) only errors `allowed`
    /// explains.
    pub fn assert_errors_explained(&mut self, allowed: &[AllowedError]) {
        assert!(
            self.is_running(),
            "broker {} exited:\n{}",
            self.id,
            tail(&self.log_text(), 30)
        );
        self.assert_logs_explained(allowed);
    }

    /// Asserts every log of this broker (all starts) holds only errors `allowed` (or the
    /// common [`super::cluster::ALLOWED_KAFKA_ERRORS`]) explains; running or not.
    pub fn assert_logs_explained(&self, allowed: &[AllowedError]) {
        let mut bad = Vec::new();
        for (i, log) in self.logs.iter().enumerate() {
            let text = fs::read(log)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default();
            for e in unexplained_errors(&text, allowed) {
                let short: String = e.lines().take(6).collect::<Vec<_>>().join("\n");
                bad.push(format!("broker {} (start {}): {short}", self.id, i + 1));
            }
        }
        assert!(
            bad.is_empty(),
            "{} unexplained ERROR/exception entries in broker {}'s logs:\n{}",
            bad.len(),
            self.id,
            bad.join("\n---\n")
        );
    }
}

/// Formats a broker's directory with the brokers' own `kafka-storage` ([`broker_kafka`]).
fn format_broker(art: &Artifacts, props: &std::path::Path, cluster_id: &str) {
    let mut args = vec!["format", "-t", cluster_id, "-c", props.to_str().unwrap()];
    if let Some(release) = cluster_release_version() {
        args.extend(["--release-version", release]);
    }
    let out = broker_kafka().tool(art, "format-broker", "kafka.tools.StorageTool", &args);
    assert!(
        out.status.success(),
        "kafka-storage format of a broker failed: {}{}",
        out.stdout,
        out.stderr
    );
}

impl Cluster {
    /// Formats and starts broker `id` against this quorum (the controllers' quorum line is
    /// copied from node 1, so static and dynamic quorums both work).
    pub fn start_broker(&self, id: i32) -> Broker {
        self.start_broker_with(id, &[])
    }

    /// Starts a stopped broker again on its directory as it is (no format), same port and
    /// properties; its log goes to `broker<id>-<n>.log` for the n-th start.
    pub fn restart_broker(&self, broker: &mut Broker) {
        assert!(
            broker.process.is_none(),
            "broker {} is still running",
            broker.id
        );
        let name = format!("broker{}-{}", broker.id, broker.logs.len() + 1);
        let process = broker_kafka().start_server_in(
            broker.netns.as_deref(),
            &[],
            &self.art,
            &name,
            &broker.props,
            BROKER_JVM,
        );
        broker.logs.push(process.log.clone());
        broker.process = Some(process);
    }

    /// As [`Cluster::start_broker`], with `extra` properties appended (a later key wins in a
    /// Java properties file, so these override the defaults below).
    pub fn start_broker_with(&self, id: i32, extra: &[(&str, &str)]) -> Broker {
        let port = free_port();
        let (host, netns) = match &self.net {
            Some(net) => {
                net.add_node(id);
                (net.ip(id), Some(net.ns(id)))
            }
            None => ("127.0.0.1".to_string(), None),
        };
        let dir = self.art.path(&format!("broker{id}"));
        let props = self.art.path(&format!("broker{id}.properties"));
        let controller = fs::read_to_string(&self.nodes[0].props).unwrap();
        let quorum_line = controller
            .lines()
            .find(|l| {
                l.starts_with("controller.quorum.voters=")
                    || l.starts_with("controller.quorum.bootstrap.servers=")
            })
            .expect("a quorum line in node 1's properties");
        let text = format!(
            "process.roles=broker\nnode.id={id}\n{quorum_line}\n\
             listeners=PLAINTEXT://{host}:{port}\n\
             advertised.listeners=PLAINTEXT://{host}:{port}\n\
             inter.broker.listener.name=PLAINTEXT\ncontroller.listener.names=CONTROLLER\n\
             listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT\n\
             log.dirs={}\nnum.network.threads=1\nnum.io.threads=1\n\
             offsets.topic.replication.factor=1\ntransaction.state.log.replication.factor=1\n\
             transaction.state.log.min.isr=1\n",
            dir.display()
        );
        let mut text = text;
        for (k, v) in extra {
            text.push_str(&format!("{k}={v}\n"));
        }
        fs::write(&props, text).unwrap();
        format_broker(&self.art, &props, &self.cluster_id);
        let process = broker_kafka().start_server_in(
            netns.as_deref(),
            &[],
            &self.art,
            &format!("broker{id}"),
            &props,
            BROKER_JVM,
        );
        Broker {
            id,
            host,
            port,
            netns,
            props,
            logs: vec![process.log.clone()],
            process: Some(process),
        }
    }

    /// An admin config with short timeouts, so a failed call returns instead of retrying for
    /// minutes (as [`Cluster::describe`] does for controllers).
    pub fn admin_config(&self) -> String {
        let admin = self.art.path("broker-admin.properties");
        if !admin.exists() {
            fs::write(
                &admin,
                "default.api.timeout.ms=15000\nrequest.timeout.ms=8000\nmetadata.max.age.ms=1000\n",
            )
            .unwrap();
        }
        admin.display().to_string()
    }

    /// `kafka-metadata-quorum --bootstrap-server <broker> describe --<what>`.
    pub fn describe_via_broker(&self, broker: &Broker, what: &str) -> ToolOutput {
        let config = self.admin_config();
        kafka().tool(
            &self.art,
            &format!("describe-{what}-via-broker{}", broker.id),
            METADATA_QUORUM,
            &[
                "--bootstrap-server",
                &broker.bootstrap(),
                "--command-config",
                &config,
                "describe",
                &format!("--{what}"),
            ],
        )
    }

    /// `kafka-metadata-quorum --bootstrap-server <broker> --command-config <controller id's
    /// properties> add-controller`.
    pub fn add_controller_via_broker(&self, broker: &Broker, id: i32) -> ToolOutput {
        let props = self.nodes[(id - 1) as usize].props.clone();
        kafka().tool(
            &self.art,
            &format!("add-controller-{id}-via-broker{}", broker.id),
            METADATA_QUORUM,
            &[
                "--bootstrap-server",
                &broker.bootstrap(),
                "--command-config",
                props.to_str().unwrap(),
                "add-controller",
            ],
        )
    }

    /// `kafka-metadata-quorum --bootstrap-server <broker> remove-controller`.
    pub fn remove_controller_via_broker(
        &self,
        broker: &Broker,
        id: i32,
        directory_id: &str,
    ) -> ToolOutput {
        let config = self.admin_config();
        kafka().tool(
            &self.art,
            &format!("remove-controller-{id}-via-broker{}", broker.id),
            METADATA_QUORUM,
            &[
                "--bootstrap-server",
                &broker.bootstrap(),
                "--command-config",
                &config,
                "remove-controller",
                "--controller-id",
                &id.to_string(),
                "--controller-directory-id",
                directory_id,
            ],
        )
    }
}
