//! `ferrokraft start` configured the way the apache/kafka image configures a controller (#40):
//! no properties file, `KAFKA_PROCESS_ROLES` and the other `KAFKA_*` variables in the
//! environment, a mounted `server.properties` under `--mounted-configs-dir`, `CLUSTER_ID`.
//!
//! - the first start formats the empty directory with `CLUSTER_ID` and serves; a second start
//!   with another `CLUSTER_ID` does not format again (the image's launch tolerates "already
//!   formatted" the same way);
//! - what the image refuses (`KAFKA_ADVERTISED_LISTENERS` on a controller) and a start that
//!   cannot bind its listener leave no directory behind;
//! - an unset `CLUSTER_ID` takes the image's default, and `KAFKA_LOG4J_ROOT_LOGLEVEL` sets the
//!   log level.

// Integration tests drive real processes: unwrapping and wall-clock waits are fine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod local;
use local::{free_port, http_status};
use std::fs;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// The variables a compose file gives an apache/kafka controller (one voter).
fn controller_env(port: u16, metrics_port: u16, dir: &Path) -> Vec<(String, String)> {
    [
        ("KAFKA_PROCESS_ROLES", "controller".to_string()),
        ("KAFKA_NODE_ID", "1".to_string()),
        (
            "KAFKA_CONTROLLER_QUORUM_VOTERS",
            format!("1@127.0.0.1:{port}"),
        ),
        ("KAFKA_LISTENERS", format!("CONTROLLER://127.0.0.1:{port}")),
        ("KAFKA_CONTROLLER_LISTENER_NAMES", "CONTROLLER".to_string()),
        ("KAFKA_LOG_DIRS", dir.display().to_string()),
        (
            "KAFKA_FERROKRAFT_METRICS_LISTENER",
            format!("127.0.0.1:{metrics_port}"),
        ),
        // Not server properties: the image leaves them out.
        ("KAFKA_HEAP_OPTS", "-Xmx1G -Xms1G".to_string()),
        (
            "KAFKA_JMX_OPTS",
            "-Dcom.sun.management.jmxremote".to_string(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

fn command(env: &[(String, String)], mounted: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_ferrokraft"));
    cmd.arg("start")
        .arg("--mounted-configs-dir")
        .arg(mounted)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .envs(env.iter().map(|(k, v)| (k, v)));
    cmd
}

fn run(env: &[(String, String)], mounted: &Path) -> Output {
    command(env, mounted).output().unwrap()
}

struct Node {
    child: Child,
    log: std::path::PathBuf,
}

impl Node {
    fn start(env: &[(String, String)], mounted: &Path, log: std::path::PathBuf) -> Node {
        let file = fs::File::create(&log).unwrap();
        let child = command(env, mounted)
            .stdout(Stdio::from(file.try_clone().unwrap()))
            .stderr(Stdio::from(file))
            .spawn()
            .unwrap();
        Node { child, log }
    }

    fn log_text(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until `GET /ready` answers 200.
    fn wait_ready(&mut self, metrics_port: u16) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!("the node exited ({status}):\n{}", self.log_text());
            }
            if http_status(metrics_port, "/ready") == Some(200) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "never ready:\n{}",
                self.log_text()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// SIGTERM, then the exit status.
    fn stop(mut self) -> String {
        let pid = self.child.id().to_string();
        Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        let deadline = Instant::now() + Duration::from_secs(15);
        while self.child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "no exit after SIGTERM");
            std::thread::sleep(Duration::from_millis(50));
        }
        self.log_text()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn meta_properties(dir: &Path) -> String {
    fs::read_to_string(dir.join("meta.properties")).unwrap()
}

#[test]
fn the_first_start_formats_with_cluster_id_and_the_next_does_not() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let mounted = tmp.path().join("mnt");
    fs::create_dir(&mounted).unwrap();
    // A mounted file comes first; the variables are appended to it and win.
    fs::write(
        mounted.join("server.properties"),
        "num.partitions=3\nnode.id=9\n",
    )
    .unwrap();
    let (port, metrics_port) = (free_port(), free_port());
    let mut env = controller_env(port, metrics_port, &dir);
    env.push(("CLUSTER_ID".into(), "MkU3OEVBNTcwNTJENDM2Qg".into()));

    let mut node = Node::start(&env, &mounted, tmp.path().join("first.log"));
    node.wait_ready(metrics_port);
    let log = node.stop();
    let meta = meta_properties(&dir);
    assert!(
        meta.contains("cluster.id=MkU3OEVBNTcwNTJENDM2Qg") && meta.contains("node.id=1"),
        "meta.properties after the first start:\n{meta}\nlog:\n{log}"
    );
    assert!(
        log.contains("Formatting metadata directory"),
        "the first start formats:\n{log}"
    );

    // Another CLUSTER_ID on the next start: the directory keeps its own.
    let env: Vec<_> = env
        .into_iter()
        .map(|(k, v)| {
            if k == "CLUSTER_ID" {
                (k, "AAAAAAAAAAAAAAAAAAAAAA".to_string())
            } else {
                (k, v)
            }
        })
        .collect();
    let mut node = Node::start(&env, &mounted, tmp.path().join("second.log"));
    node.wait_ready(metrics_port);
    let log = node.stop();
    assert_eq!(meta_properties(&dir), meta, "the second start reformatted");
    assert!(
        !log.contains("Formatting metadata directory")
            && log.contains("is already formatted: starting without formatting"),
        "the second start does not format:\n{log}"
    );
}

#[test]
fn what_the_image_refuses_and_a_taken_port_leave_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let mounted = tmp.path().join("no-mount");
    let (port, metrics_port) = (free_port(), free_port());

    let mut env = controller_env(port, metrics_port, &dir);
    env.push((
        "KAFKA_ADVERTISED_LISTENERS".into(),
        format!("CONTROLLER://127.0.0.1:{port}"),
    ));
    let out = run(&env, &mounted);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("KAFKA_ADVERTISED_LISTENERS is not supported on a KRaft controller."),
        "{stderr}"
    );
    assert!(!dir.exists(), "the refused start created {}", dir.display());

    // The listener's port is taken: refused before the directory is formatted.
    let taken = std::net::TcpListener::bind(("127.0.0.1", port)).unwrap();
    let out = run(&controller_env(port, metrics_port, &dir), &mounted);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("Address already in use") || stderr.contains("address in use"),
        "{stderr}"
    );
    assert!(
        !dir.exists(),
        "a start on a taken port created {}",
        dir.display()
    );
    drop(taken);
}

#[test]
fn an_unset_cluster_id_takes_the_image_default_and_the_root_log_level_applies() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let mounted = tmp.path().join("no-mount");
    let (port, metrics_port) = (free_port(), free_port());

    let env = controller_env(port, metrics_port, &dir);
    let mut node = Node::start(&env, &mounted, tmp.path().join("default.log"));
    node.wait_ready(metrics_port);
    let log = node.stop();
    assert!(
        log.contains("CLUSTER_ID not set. Setting it to default value: \"5L6g3nShT-eMCtK--X86sw\""),
        "{log}"
    );
    assert!(meta_properties(&dir).contains("cluster.id=5L6g3nShT-eMCtK--X86sw"));

    // WARN: the next start logs no INFO line.
    let mut env = env;
    env.push(("KAFKA_LOG4J_ROOT_LOGLEVEL".into(), "WARN".into()));
    let mut node = Node::start(&env, &mounted, tmp.path().join("warn.log"));
    node.wait_ready(metrics_port);
    let log = node.stop();
    assert!(
        !log.lines().any(|l| l.contains(" INFO ")),
        "INFO lines at KAFKA_LOG4J_ROOT_LOGLEVEL=WARN:\n{log}"
    );
}
