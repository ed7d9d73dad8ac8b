//! One real Apache Kafka node in combined mode (`process.roles=broker,controller`, formatted
//! `--standalone`), for tests that need a metadata log Kafka wrote with brokers, topics and
//! security records in it. Two broker listeners: PLAINTEXT (anonymous, a super user) for the
//! admin tools, and SASL_PLAINTEXT with SCRAM-SHA-256, because Kafka creates delegation tokens
//! only for SASL-authenticated connections. The controller snapshots every 5 s, so the
//! directory holds Kafka-written snapshots beside the log.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

use std::fs;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use super::kafka::{free_port, kafka, Artifacts, ProcessGuard, ToolOutput};

/// A running combined Kafka node.
pub struct CombinedKafka {
    /// Its log directory (holding `__cluster_metadata-0`).
    pub log_dir: PathBuf,
    /// `host:port` of the PLAINTEXT broker listener.
    pub bootstrap: String,
    /// `host:port` of the SASL_PLAINTEXT (SCRAM-SHA-256) broker listener.
    pub sasl_bootstrap: String,
    server: Option<ProcessGuard>,
}

impl CombinedKafka {
    /// Formats and starts the node; returns once the broker is serving.
    pub fn start(art: &Artifacts) -> CombinedKafka {
        let k = kafka();
        let (broker, sasl, controller) = (free_port(), free_port(), free_port());
        let log_dir = art.path("kafka-data");
        let props = art.path("combined.properties");
        let text = format!(
            "process.roles=broker,controller\n\
             node.id=1\n\
             controller.quorum.bootstrap.servers=127.0.0.1:{controller}\n\
             listeners=PLAINTEXT://127.0.0.1:{broker},SASL_PLAINTEXT://127.0.0.1:{sasl},CONTROLLER://127.0.0.1:{controller}\n\
             advertised.listeners=PLAINTEXT://127.0.0.1:{broker},SASL_PLAINTEXT://127.0.0.1:{sasl}\n\
             controller.listener.names=CONTROLLER\n\
             inter.broker.listener.name=PLAINTEXT\n\
             listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,CONTROLLER:PLAINTEXT\n\
             sasl.enabled.mechanisms=SCRAM-SHA-256\n\
             listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;\n\
             log.dirs={}\n\
             num.partitions=1\n\
             offsets.topic.replication.factor=1\n\
             transaction.state.log.replication.factor=1\n\
             transaction.state.log.min.isr=1\n\
             authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\n\
             super.users=User:ANONYMOUS;User:alice\n\
             delegation.token.secret.key=ferrokraft-test-secret\n\
             metadata.log.max.snapshot.interval.ms=5000\n",
            log_dir.display()
        );
        fs::write(&props, text).unwrap();
        let cluster_id = String::from_utf8(
            Command::new(env!("CARGO_BIN_EXE_ferrokraft"))
                .arg("random-uuid")
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap()
        .trim()
        .to_string();
        k.tool(
            art,
            "format",
            "kafka.tools.StorageTool",
            &[
                "format",
                "-t",
                &cluster_id,
                "-c",
                props.to_str().unwrap(),
                "--standalone",
            ],
        )
        .assert_ok("kafka-storage format --standalone");
        let mut server = k.start_server(art, "kafka", &props);
        server.wait_for_log("Kafka Server started", Duration::from_secs(120));
        CombinedKafka {
            log_dir,
            bootstrap: format!("127.0.0.1:{broker}"),
            sasl_bootstrap: format!("127.0.0.1:{sasl}"),
            server: Some(server),
        }
    }

    /// Runs an admin tool (the first of `classes` this Kafka has) and asserts it succeeded.
    pub fn tool(
        &self,
        art: &Artifacts,
        name: &str,
        classes: &[&'static str],
        args: &[&str],
    ) -> ToolOutput {
        let k = kafka();
        let out = k.tool(art, name, k.class(classes), args);
        out.assert_ok(name);
        out
    }

    /// Stops the node gracefully (SIGTERM: controlled shutdown, logs flushed), killing it
    /// after two minutes.
    pub fn stop(&mut self) {
        let Some(mut server) = self.server.take() else {
            return;
        };
        server.signal("TERM");
        let deadline = Instant::now() + Duration::from_secs(120);
        while server.is_running() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(200));
        }
        server.kill();
    }
}

impl Drop for CombinedKafka {
    fn drop(&mut self) {
        if let Some(mut server) = self.server.take() {
            server.kill();
        }
    }
}
