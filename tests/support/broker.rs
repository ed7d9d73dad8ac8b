//! A real Apache Kafka broker (`process.roles=broker`) beside a mixed controller quorum, and
//! Kafka's `kafka-metadata-quorum --bootstrap-server <broker>`, which the broker answers by
//! forwarding to the active controller inside an Envelope (API 58).
// Only tests/interop_envelope.rs uses these; every test binary compiles `support`.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

use std::fs;
use std::path::PathBuf;
use std::time::Duration;

use super::cluster::{format_node, tail, unexplained_errors, AllowedError, Cluster, Impl};
use super::kafka::{free_port, kafka, ProcessGuard, ToolOutput};

const METADATA_QUORUM: &str = "org.apache.kafka.tools.MetadataQuorumCommand";

/// A running Kafka broker.
pub struct Broker {
    pub id: i32,
    /// Its PLAINTEXT (client) port.
    pub port: u16,
    pub props: PathBuf,
    process: ProcessGuard,
}

impl Broker {
    pub fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn log_text(&self) -> String {
        fs::read(&self.process.log)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default()
    }

    /// Waits until the broker's log contains `needle` (panics with the log tail otherwise).
    pub fn wait_for_log(&mut self, needle: &str, timeout: Duration) {
        self.process.wait_for_log(needle, timeout);
    }

    /// Asserts the broker still runs and logged only errors `allowed` explains.
    pub fn assert_errors_explained(&mut self, allowed: &[AllowedError]) {
        assert!(
            self.process.is_running(),
            "broker {} exited:\n{}",
            self.id,
            tail(&self.log_text(), 30)
        );
        let bad: Vec<String> = unexplained_errors(&self.log_text(), allowed)
            .into_iter()
            .map(|e| e.lines().take(6).collect::<Vec<_>>().join("\n"))
            .collect();
        assert!(
            bad.is_empty(),
            "{} unexplained ERROR/exception entries in the broker's log:\n{}",
            bad.len(),
            bad.join("\n---\n")
        );
    }
}

impl Cluster {
    /// Formats and starts broker `id` against this quorum (the controllers' quorum line is
    /// copied from node 1, so static and dynamic quorums both work).
    pub fn start_broker(&self, id: i32) -> Broker {
        let port = free_port();
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
             listeners=PLAINTEXT://127.0.0.1:{port}\n\
             advertised.listeners=PLAINTEXT://127.0.0.1:{port}\n\
             inter.broker.listener.name=PLAINTEXT\ncontroller.listener.names=CONTROLLER\n\
             listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT\n\
             log.dirs={}\nnum.network.threads=1\nnum.io.threads=1\n\
             offsets.topic.replication.factor=1\ntransaction.state.log.replication.factor=1\n\
             transaction.state.log.min.isr=1\n",
            dir.display()
        );
        fs::write(&props, text).unwrap();
        format_node(&self.art, Impl::Kafka, &props, &self.cluster_id, &[]);
        let process = kafka().start_server(&self.art, &format!("broker{id}"), &props);
        Broker {
            id,
            port,
            props,
            process,
        }
    }

    /// An admin config with short timeouts, so a failed call returns instead of retrying for
    /// minutes (as [`Cluster::describe`] does for controllers).
    fn admin_config(&self) -> String {
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
