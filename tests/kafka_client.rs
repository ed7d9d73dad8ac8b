//! `ferrokraft start` with no arguments comes up, and Apache Kafka's own client classes get a
//! correct ApiVersions answer from it at every version Kafka knows (v0–v4).

// Integration tests drive real processes and sockets: unwrapping and wall-clock deadlines are fine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Kills the node even when the test fails.
struct Guard(Child);

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn kafka_lib() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("bash")
        .arg(root.join("interop/kafka/fetch.sh"))
        .output()
        .expect("bash runs interop/kafka/fetch.sh (needs Maven and Java 17)");
    assert!(
        out.status.success(),
        "fetching Kafka jars failed (Maven + Java 17 needed): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

#[test]
fn development_node_answers_kafka_api_versions_v0_to_v4() {
    let lib = kafka_lib();
    let cwd = tempfile::tempdir().unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_ferrokraft"))
        .arg("start")
        .current_dir(cwd.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut node = Guard(child);
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect("127.0.0.1:9093").is_err() {
        assert!(node.0.try_wait().unwrap().is_none(), "node exited early");
        assert!(
            Instant::now() < deadline,
            "node did not listen on 127.0.0.1:9093"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let probe = Path::new(env!("CARGO_MANIFEST_DIR")).join("interop/java/ApiVersionsProbe.java");
    let out = Command::new("java")
        .arg("-cp")
        .arg(format!("{}/*", lib.display()))
        .arg(probe)
        .args(["127.0.0.1", "9093"])
        .output()
        .expect("java runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "probe failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for v in 0..=4 {
        assert!(
            stdout.contains(&format!("v{v} OK error=0")),
            "v{v} missing: {stdout}"
        );
    }
    // kraft.version appears only from v4 (features with min 0 are omitted below v4).
    let v4 = stdout.lines().find(|l| l.starts_with("v4")).unwrap();
    assert!(v4.contains("kraft.version:0-1"), "{v4}");
    let v3 = stdout.lines().find(|l| l.starts_with("v3")).unwrap();
    assert!(!v3.contains("kraft.version"), "{v3}");
    assert!(v4.contains("Vote:0-2") && v4.contains("Fetch:4-18"), "{v4}");
}
