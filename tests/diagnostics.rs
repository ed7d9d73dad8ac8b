//! Diagnostics as Kafka gives them (#37): what an operator reads in a controller's log when the
//! quorum is misconfigured.
//!
//! - Two voters formatted with different cluster ids answer each other's Vote with
//!   INCONSISTENT_CLUSTER_ID. Kafka's raft client logs ERROR "Unexpected error
//!   INCONSISTENT_CLUSTER_ID in VOTE response: …" for every answer; ferrokraft logs the same
//!   words at ERROR, naming the peer, once a minute per peer.

// Integration tests drive real processes: unwrapping and wall-clock waits are fine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod local;
use local::free_port;
use std::fs;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn properties(path: &Path, node_id: u16, ports: [u16; 2], dir: &Path) {
    fs::write(
        path,
        format!(
            "process.roles=controller\nnode.id={node_id}\n\
             controller.quorum.voters=1@127.0.0.1:{},2@127.0.0.1:{}\n\
             listeners=CONTROLLER://127.0.0.1:{}\ncontroller.listener.names=CONTROLLER\n\
             log.dirs={}\n",
            ports[0],
            ports[1],
            ports[usize::from(node_id) - 1],
            dir.display()
        ),
    )
    .unwrap();
}

struct Node(Child);

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_voter_of_another_cluster_is_named_at_error_once_a_minute() {
    let tmp = tempfile::tempdir().unwrap();
    let ports = [free_port(), free_port()];
    let cluster_ids = ["MkU3OEVBNTcwNTJENDM2Qg", "AAAAAAAAAAAAAAAAAAAAAA"];
    let mut nodes = Vec::new();
    for node_id in [1u16, 2] {
        let dir = tmp.path().join(format!("data{node_id}"));
        let props = tmp.path().join(format!("node{node_id}.properties"));
        properties(&props, node_id, ports, &dir);
        let out = Command::new(env!("CARGO_BIN_EXE_ferrokraft"))
            .args(["format", "-t", cluster_ids[usize::from(node_id) - 1], "-c"])
            .arg(&props)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let log = fs::File::create(tmp.path().join(format!("node{node_id}.log"))).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_ferrokraft"))
            .args(["start", "-c"])
            .arg(&props)
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .unwrap();
        nodes.push(Node(child));
    }
    // Each node retries its election every few hundred milliseconds; in six seconds it has
    // been refused many times.
    let wanted = "Unexpected error INCONSISTENT_CLUSTER_ID in VOTE response from node 2";
    let deadline = Instant::now() + Duration::from_secs(20);
    let log_path = tmp.path().join("node1.log");
    while !fs::read_to_string(&log_path)
        .unwrap_or_default()
        .contains(wanted)
    {
        assert!(
            Instant::now() < deadline,
            "node 1 never named node 2's refusal:\n{}",
            fs::read_to_string(&log_path).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_secs(6));
    drop(nodes);
    let log = fs::read_to_string(&log_path).unwrap();
    let lines: Vec<&str> = log.lines().filter(|l| l.contains(wanted)).collect();
    assert_eq!(
        lines.len(),
        1,
        "logged once a minute, not per answer:\n{log}"
    );
    assert!(lines[0].contains("ERROR"), "at ERROR: {}", lines[0]);
}
