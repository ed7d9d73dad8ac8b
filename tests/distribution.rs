//! The bare-metal distribution (#40): `dist/make-tarball.sh` packs the built binary with
//! Kafka-compatible `bin/kafka-server-start.sh` / `bin/kafka-server-stop.sh`,
//! `config/controller.properties` (the settings of Kafka's shipped controller file) and a
//! systemd unit.
//!
//! - the unit passes `systemd-analyze verify` without a warning (paths moved to the unpacked
//!   tarball);
//! - the shipped controller file, formatted `--standalone` as Kafka's quickstart does, starts
//!   through `kafka-server-start.sh -daemon` with only its port and log directory changed, and
//!   `kafka-server-stop.sh --node-id=1` stops it gracefully;
//! - started in the foreground with `NOTIFY_SOCKET` set (as systemd starts a `Type=notify`
//!   unit), the node sends `READY=1` once it serves and `STOPPING=1` on SIGTERM.

// Integration tests drive real processes: unwrapping and wall-clock waits are fine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod local;
use local::free_port;
use std::fs;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The tarball of the test's binary, built once per run (packing a debug binary takes
/// seconds) under cargo's scratch directory for integration tests.
fn tarball() -> &'static Path {
    static TARBALL: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    TARBALL.get_or_init(|| {
        let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dist");
        let out = Command::new(repo.join("dist/make-tarball.sh"))
            .arg(env!("CARGO_BIN_EXE_ferrokraft"))
            .arg(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "make-tarball.sh: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        PathBuf::from(String::from_utf8_lossy(&out.stdout).trim().to_string())
    })
}

/// The tarball unpacked under `into`; the install dir.
fn unpacked(into: &Path) -> PathBuf {
    let tarball = tarball();
    let status = Command::new("tar")
        .arg("-C")
        .arg(into)
        .arg("-xzf")
        .arg(tarball)
        .status()
        .unwrap();
    assert!(status.success());
    let name = tarball
        .file_name()
        .unwrap()
        .to_string_lossy()
        .trim_end_matches(".tar.gz")
        .to_string();
    let install = into.join(name);
    for f in [
        "bin/ferrokraft",
        "bin/kafka-server-start.sh",
        "bin/kafka-server-stop.sh",
        "config/controller.properties",
        "systemd/ferrokraft.service",
    ] {
        assert!(install.join(f).exists(), "the tarball has no {f}");
    }
    install
}

/// The shipped controller file with its port and log directory moved.
fn controller_properties(install: &Path, port: u16, data: &Path) -> PathBuf {
    let shipped = fs::read_to_string(install.join("config/controller.properties")).unwrap();
    let moved = shipped
        .replace(":9093", &format!(":{port}"))
        .replace("/tmp/kraft-controller-logs", &data.display().to_string());
    assert_ne!(moved, shipped);
    let path = install.join("config/test-controller.properties");
    fs::write(&path, moved).unwrap();
    path
}

fn format_standalone(install: &Path, props: &Path) {
    let out = Command::new(install.join("bin/ferrokraft"))
        .args([
            "format",
            "-t",
            "MkU3OEVBNTcwNTJENDM2Qg",
            "--standalone",
            "-c",
        ])
        .arg(props)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "format: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn wait_for(path: &Path, needle: &str, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !fs::read_to_string(path)
        .unwrap_or_default()
        .contains(needle)
    {
        assert!(
            Instant::now() < deadline,
            "{what}:\n{}",
            fs::read_to_string(path).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_systemd_unit_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let install = unpacked(tmp.path());
    let unit = fs::read_to_string(install.join("systemd/ferrokraft.service")).unwrap();
    assert!(unit.contains("Type=notify") && unit.contains("LimitNOFILE="));
    let moved = unit.replace("/opt/ferrokraft", &install.display().to_string());
    let path = tmp.path().join("ferrokraft.service");
    fs::write(&path, moved).unwrap();
    let out = Command::new("systemd-analyze")
        .arg("verify")
        .arg(&path)
        .output()
        .expect("systemd-analyze (Debian's systemd package) is needed");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stderr.trim().is_empty(),
        "systemd-analyze verify: {stderr}"
    );
}

#[test]
fn kafkas_start_and_stop_scripts_run_the_shipped_controller_file() {
    let tmp = tempfile::tempdir().unwrap();
    let install = unpacked(tmp.path());
    let data = tmp.path().join("data");
    let props = controller_properties(&install, free_port(), &data);
    format_standalone(&install, &props);

    let started = Command::new(install.join("bin/kafka-server-start.sh"))
        .arg("-daemon")
        .arg(&props)
        .status()
        .unwrap();
    assert!(started.success());
    let out = install.join("logs/kafkaServer.out");
    wait_for(&out, "Kafka Server started", "never started");
    wait_for(
        &out,
        "Becoming the active controller",
        "never became active",
    );
    let text = fs::read_to_string(&out).unwrap();
    assert!(
        !text.contains("isn't a known config"),
        "Kafka's controller file has keys ferrokraft warns about:\n{text}"
    );

    // Another node id stops nothing; the node's own stops it gracefully.
    let other = Command::new(install.join("bin/kafka-server-stop.sh"))
        .arg("--node-id=7")
        .output()
        .unwrap();
    assert!(!other.status.success());
    assert!(String::from_utf8_lossy(&other.stdout).contains("No kafka server to stop"));
    let stop = Command::new(install.join("bin/kafka-server-stop.sh"))
        .arg("--node-id=1")
        .output()
        .unwrap();
    assert!(
        stop.status.success(),
        "{}",
        String::from_utf8_lossy(&stop.stdout)
    );
    wait_for(&out, "shut down completed", "no graceful shutdown");
    assert!(fs::read_to_string(&out)
        .unwrap()
        .contains("Terminating process due to signal SIGTERM"));
}

#[test]
fn a_node_started_as_a_notify_service_says_ready_and_stopping() {
    let tmp = tempfile::tempdir().unwrap();
    let install = unpacked(tmp.path());
    let data = tmp.path().join("data");
    let props = controller_properties(&install, free_port(), &data);
    // Not node 1: the script test beside this one stops node 1 by id.
    let text = fs::read_to_string(&props).unwrap();
    fs::write(&props, text.replace("node.id=1\n", "node.id=2\n")).unwrap();
    format_standalone(&install, &props);
    let socket_path = tmp.path().join("notify");
    let socket = UnixDatagram::bind(&socket_path).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();

    let mut child = Command::new(install.join("bin/kafka-server-start.sh"))
        .arg(&props)
        .env("NOTIFY_SOCKET", &socket_path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut buf = [0u8; 128];
    let n = socket.recv(&mut buf).expect("no READY=1 within 20 s");
    assert_eq!(&buf[..n], b"READY=1");
    Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    let n = socket.recv(&mut buf).expect("no STOPPING=1 after SIGTERM");
    assert_eq!(&buf[..n], b"STOPPING=1");
    let status = child.wait().unwrap();
    assert!(status.success(), "exit after SIGTERM: {status}");
}
