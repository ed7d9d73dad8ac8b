//! ferrokraft's container image (#40), built and run on this machine: `dist/container/
//! build-local.sh` lays out the runtime file system from the test's binary (`rootfs.sh`, the
//! same script the multi-stage `Containerfile` runs in its build stage) and builds
//! `Containerfile.local` with podman; no base image is pulled (the runtime image is `FROM
//! scratch`). The container then runs configured only by apache/kafka-style variables, as a
//! compose file would run it: it formats its volume, serves, answers `/ready`, and stops
//! gracefully on `podman stop` (SIGTERM).
//!
//! podman runs with its own storage under a temporary directory (vfs driver, nothing left
//! behind) and with runc, the host network and explicit ulimits: this machine's kernel has
//! hybrid cgroups, which crun refuses, and forbids raising the open-files limit.

// Integration tests drive real processes: unwrapping and wall-clock waits are fine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

mod local;
use local::{free_port, http_status};
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// podman with storage under `root`.
fn podman(root: &Path) -> Command {
    let mut c = Command::new("podman");
    c.arg("--root")
        .arg(root.join("storage"))
        .arg("--runroot")
        .arg(root.join("run"))
        .args(["--storage-driver", "vfs"]);
    c
}

fn ok(out: Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Removes the container and podman's storage (vfs layers are plain files), also on failure.
struct Cleanup<'a> {
    root: &'a Path,
    container: &'a str,
}

impl Drop for Cleanup<'_> {
    fn drop(&mut self) {
        let _ = podman(self.root)
            .args(["rm", "-f", "-t", "0", self.container])
            .output();
    }
}

#[test]
fn the_image_builds_from_scratch_and_runs_a_controller_from_the_environment() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tag = "localhost/ferrokraft:test";
    let build = Command::new(repo.join("dist/container/build-local.sh"))
        .arg(env!("CARGO_BIN_EXE_ferrokraft"))
        .arg(tag)
        .env(
            "ENGINE_OPTS",
            format!(
                "--root {} --runroot {} --storage-driver vfs",
                root.join("storage").display(),
                root.join("run").display()
            ),
        )
        .output()
        .expect("podman (Debian's podman and runc packages) is needed");
    ok(build, "build-local.sh");

    // The image holds the binary, its libraries and the directories it needs: nothing else.
    let config = ok(
        podman(root)
            .args([
                "image",
                "inspect",
                "--format",
                "{{.Config.User}} {{json .Config.Entrypoint}} {{.Config.StopSignal}}",
                tag,
            ])
            .output()
            .unwrap(),
        "inspect",
    );
    assert_eq!(
        config.trim(),
        r#"1000:1000 ["/ferrokraft","start"] SIGTERM"#
    );

    let data = root.join("data");
    std::fs::create_dir(&data).unwrap();
    // The container runs as uid 1000.
    Command::new("chmod")
        .arg("777")
        .arg(&data)
        .status()
        .unwrap();
    let (port, metrics_port) = (free_port(), free_port());
    let name = format!("ferrokraft-test-{}", std::process::id());
    let _cleanup = Cleanup {
        root,
        container: &name,
    };
    let env = [
        "KAFKA_PROCESS_ROLES=controller".to_string(),
        "KAFKA_NODE_ID=1".to_string(),
        format!("KAFKA_CONTROLLER_QUORUM_VOTERS=1@localhost:{port}"),
        format!("KAFKA_LISTENERS=CONTROLLER://:{port}"),
        "KAFKA_CONTROLLER_LISTENER_NAMES=CONTROLLER".to_string(),
        format!("KAFKA_FERROKRAFT_METRICS_LISTENER=127.0.0.1:{metrics_port}"),
        "CLUSTER_ID=MkU3OEVBNTcwNTJENDM2Qg".to_string(),
        "KAFKA_LOG_DIRS=/var/lib/kafka/data".to_string(),
    ];
    let mut run = podman(root);
    run.args(["--runtime", "runc", "run", "-d", "--name", &name])
        .args(["--network", "host"])
        .args([
            "--ulimit",
            "nofile=4096:4096",
            "--ulimit",
            "nproc=4096:4096",
        ])
        .arg("-v")
        .arg(format!("{}:/var/lib/kafka/data", data.display()));
    for e in &env {
        run.args(["-e", e]);
    }
    ok(run.arg(tag).output().unwrap(), "podman run");

    let logs = || {
        let out = podman(root).args(["logs", &name]).output().unwrap();
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while http_status(metrics_port, "/ready") != Some(200) {
        assert!(Instant::now() < deadline, "never ready:\n{}", logs());
        std::thread::sleep(Duration::from_millis(200));
    }
    let meta = std::fs::read_to_string(data.join("meta.properties")).unwrap();
    assert!(meta.contains("cluster.id=MkU3OEVBNTcwNTJENDM2Qg"), "{meta}");

    ok(
        podman(root)
            .args(["stop", "-t", "20", &name])
            .output()
            .unwrap(),
        "podman stop",
    );
    let text = logs();
    assert!(
        text.contains("Terminating process due to signal SIGTERM")
            && text.contains("shut down completed"),
        "no graceful stop:\n{text}"
    );
    let exit = ok(
        podman(root)
            .args(["inspect", "--format", "{{.State.ExitCode}}", &name])
            .output()
            .unwrap(),
        "inspect exit code",
    );
    assert_eq!(exit.trim(), "0", "{text}");
}
