//! Kafka's side: one JVM running interop/java/difffuzz/DifferentialController.java (Kafka
//! 4.1.2's QuorumController on a LocalLogManager, mock time), driven a line at a time.
//!
//! ```text
//!   javac (Kafka's jars + the kafka-metadata/clients/server-common/raft test jars, resolved
//!   with `mvn dependency:copy` into target/) ─▶ java ─stdin: NEW | REQ api ver hex [hint] | TIME ms
//!                                              ◀stdout: OK <resp-hex|-|cluster-id> <rec-hex>…
//! ```

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use crate::support::kafka::kafka;

/// The test jars that hold LocalLogManagerTestEnv and what it needs (TestUtils).
const TEST_JARS: &[&str] = &[
    "org.apache.kafka:kafka-metadata:4.1.2:jar:test",
    "org.apache.kafka:kafka-clients:4.1.2:jar:test",
    "org.apache.kafka:kafka-server-common:4.1.2:jar:test",
    "org.apache.kafka:kafka-raft:4.1.2:jar:test",
];

/// What Kafka answered to one line.
pub enum Answer {
    /// The first word (response hex, `-`, or the cluster id) and the record values.
    Ok(String, Vec<Vec<u8>>),
    /// ferrokraft's placement broke an invariant of Kafka's placer.
    Placement(String),
}

pub struct KafkaSide {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

fn run(cmd: &mut Command, what: &str) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn work_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("differential_fuzz");
    std::fs::create_dir_all(&dir).expect("target tmp dir");
    dir
}

impl KafkaSide {
    /// Resolves the jars, compiles the harness and starts its JVM.
    pub fn start() -> KafkaSide {
        let k = kafka();
        assert!(
            k.version == "4.1.2",
            "the differential fuzz compares with Kafka 4.1.2 (KAFKA_VERSION={})",
            k.version
        );
        let dir = work_dir();
        let jars = dir.join("test-jars");
        if !jars.join(".complete").exists() {
            for artifact in TEST_JARS {
                run(
                    Command::new("mvn")
                        .args(["-B", "-q", "dependency:copy"])
                        .arg(format!("-Dartifact={artifact}"))
                        .arg(format!("-DoutputDirectory={}", jars.display())),
                    &format!("mvn dependency:copy {artifact}"),
                );
            }
            std::fs::write(jars.join(".complete"), b"").expect("marker");
        }
        let cp = format!("{}/*:{}/*", k.lib.display(), jars.display());
        let classes = dir.join("classes");
        std::fs::create_dir_all(&classes).expect("classes dir");
        // Every harness source in the directory (DifferentialController.java and the classes
        // it calls).
        let sources_dir = k.repo.join("interop/java/difffuzz");
        let mut sources: Vec<PathBuf> = std::fs::read_dir(&sources_dir)
            .expect("interop/java/difffuzz")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "java"))
            .collect();
        sources.sort();
        run(
            Command::new("javac")
                .args(["-nowarn", "-cp", &cp, "-d"])
                .arg(&classes)
                .args(&sources),
            "javac interop/java/difffuzz/*.java",
        );
        let log = std::fs::File::create(dir.join("kafka-side.log")).expect("log file");
        let mut child = Command::new("java")
            .args(["-Xmx384m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"])
            .arg(format!(
                "-Dlog4j2.configurationFile={}",
                k.repo
                    .join("interop/kafka/log4j2-tools.properties")
                    .display()
            ))
            .arg("-cp")
            .arg(format!("{}:{cp}", classes.display()))
            .arg("org.apache.kafka.controller.DifferentialController")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .spawn()
            .expect("start java");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        KafkaSide {
            child,
            stdin,
            stdout,
        }
    }

    pub fn call(&mut self, line: &str) -> Answer {
        writeln!(self.stdin, "{line}").expect("write to the Kafka side");
        self.stdin.flush().expect("flush");
        let mut out = String::new();
        self.stdout
            .read_line(&mut out)
            .expect("read the Kafka side");
        let mut words = out.split_whitespace();
        match words.next() {
            Some("OK") => {
                let first = words.next().unwrap_or("-").to_string();
                let records = words.map(unhex).collect();
                Answer::Ok(first, records)
            }
            Some("PLACEMENT") => Answer::Placement(words.collect::<Vec<_>>().join(" ")),
            _ => panic!(
                "the Kafka side failed on `{line}`: {out} (see {})",
                work_dir().join("kafka-side.log").display()
            ),
        }
    }
}

impl Drop for KafkaSide {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).expect("hex from the Kafka side"))
        .collect()
}
