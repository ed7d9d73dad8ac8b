//! A bad configuration is refused before anything is written (#37): `ferrokraft format` and
//! `ferrokraft start` each exit non-zero with Kafka's message, and the log directory is
//! byte-identical before and after (or never created).
//!
//! - a `node.id` missing from `controller.quorum.voters`: Kafka 4.1.2's `kafka-storage format`
//!   and `kafka.Kafka` both refuse it with "requirement failed: If process.roles contains the
//!   'controller' role, the node id 4 must be included in the set of voters
//!   controller.quorum.voters=Set(1, 2, 3)".

// Integration tests drive real processes: unwrapping is fine.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod local;
use local::free_port;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const CLUSTER_ID: &str = "MkU3OEVBNTcwNTJENDM2Qg";

fn ferrokraft(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ferrokraft"))
        .args(args)
        .env("RUST_LOG", "info")
        .output()
        .expect("ferrokraft runs")
}

fn properties(path: &Path, dir: &Path, node_id: i32) {
    fs::write(
        path,
        format!(
            "process.roles=controller\nnode.id={node_id}\n\
             controller.quorum.voters=1@127.0.0.1:19093,2@127.0.0.1:19094,3@127.0.0.1:19095\n\
             listeners=CONTROLLER://127.0.0.1:19093\ncontroller.listener.names=CONTROLLER\n\
             log.dirs={}\n",
            dir.display()
        ),
    )
    .unwrap();
}

/// Every file under `dir` with its bytes (empty when `dir` does not exist).
fn contents(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries {
            let p = e.unwrap().path();
            if p.is_dir() {
                out.insert(p.clone(), Vec::new());
                stack.push(p);
            } else {
                out.insert(p.clone(), fs::read(&p).unwrap());
            }
        }
    }
    out
}

const NOT_A_VOTER: &str = "requirement failed: If process.roles contains the 'controller' role, the node id 4 must be included in the set of voters controller.quorum.voters=Set(1, 2, 3)";

#[test]
fn a_node_id_outside_the_static_voters_is_refused_before_anything_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let props = tmp.path().join("server.properties");

    // format: refused, nothing created.
    properties(&props, &dir, 4);
    let out = ferrokraft(&["format", "-t", CLUSTER_ID, "-c", props.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "format of a non-voter: {stderr}");
    assert!(stderr.contains(NOT_A_VOTER), "format said: {stderr}");
    assert!(
        !dir.exists(),
        "format of a non-voter created {}",
        dir.display()
    );

    // start on a directory formatted as voter 1, now configured as node 4: refused, and the
    // directory is byte-identical.
    properties(&props, &dir, 1);
    let out = ferrokraft(&["format", "-t", CLUSTER_ID, "-c", props.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let before = contents(&dir);
    assert!(!before.is_empty());
    properties(&props, &dir, 4);
    let out = ferrokraft(&["start", "-c", props.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success(),
        "start of a non-voter: {stderr}{stdout}"
    );
    assert!(
        stderr.contains(NOT_A_VOTER) || stdout.contains(NOT_A_VOTER),
        "start said: {stderr}{stdout}"
    );
    assert_eq!(
        contents(&dir),
        before,
        "start of a non-voter changed the directory"
    );
}

/// A misspelt key (`controller.quorum.voter`) is named with the key it was meant to be, before
/// the refusal it causes (Kafka 4.1.2's QuorumConfig message, word for word); nothing written.
#[test]
fn a_misspelt_key_is_warned_about_with_a_hint_before_the_refusal() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let props = tmp.path().join("server.properties");
    fs::write(
        &props,
        format!(
            "process.roles=controller\nnode.id=1\ncontroller.quorum.voter=1@127.0.0.1:19093\n\
             listeners=CONTROLLER://127.0.0.1:19093\ncontroller.listener.names=CONTROLLER\n\
             log.dirs={}\n",
            dir.display()
        ),
    )
    .unwrap();
    for args in [
        vec!["format", "-t", CLUSTER_ID, "-c", props.to_str().unwrap()],
        vec!["start", "-c", props.to_str().unwrap()],
    ] {
        let out = ferrokraft(&args);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.status.success(), "{args:?}: {text}");
        let hint = text
            .find("The configuration 'controller.quorum.voter' was supplied but isn't a known config; did you mean 'controller.quorum.voters'?");
        let refusal = text.find("If using process.roles, either controller.quorum.bootstrap.servers must contain the set of bootstrap controllers or controller.quorum.voters must contain a parseable set of controllers.");
        assert!(
            hint.is_some() && refusal.is_some() && hint < refusal,
            "{args:?} said: {text}"
        );
        assert!(
            !text.contains("value  for"),
            "{args:?}: an empty value in: {text}"
        );
        assert!(!dir.exists(), "{args:?} created {}", dir.display());
    }
}

/// A formatted single-voter directory, then `start` with `extra` properties (and the listener
/// on `port`): refused, saying `expect`, each OS error once, the directory byte-identical.
fn start_is_refused_before_touching_the_directory(port: u16, extra: &str, expect: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let props = tmp.path().join("server.properties");
    let write = |port: u16, extra: &str| {
        fs::write(
            &props,
            format!(
                "process.roles=controller\nnode.id=1\ncontroller.quorum.voters=1@127.0.0.1:{port}\n\
                 listeners=CONTROLLER://127.0.0.1:{port}\ncontroller.listener.names=CONTROLLER\n\
                 log.dirs={}\n{extra}",
                dir.display()
            ),
        )
        .unwrap();
    };
    write(port, "");
    let out = ferrokraft(&["format", "-t", CLUSTER_ID, "-c", props.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let before = contents(&dir);
    write(port, extra);
    let out = ferrokraft(&["start", "-c", props.to_str().unwrap()]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!out.status.success(), "{extra}: {text}");
    assert!(
        text.contains(expect),
        "{extra}: expected {expect:?} in: {text}"
    );
    assert!(
        !text.contains("Transitioned to") && !text.contains("Kafka Server started"),
        "{extra}: the node ran before refusing: {text}"
    );
    for line in text.lines() {
        if let Some(i) = line.find("(os error ") {
            assert!(
                !line[i + 1..].contains("(os error "),
                "an OS error printed twice: {line}"
            );
        }
    }
    assert_eq!(
        contents(&dir),
        before,
        "{extra}: the refused start changed the directory"
    );
}

#[test]
fn a_taken_listener_port_is_refused_before_touching_the_directory() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    start_is_refused_before_touching_the_directory(
        port,
        "",
        &format!("cannot bind listener CONTROLLER on 127.0.0.1:{port}"),
    );
}

#[test]
fn a_taken_metrics_port_is_refused_before_touching_the_directory() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let metrics = taken.local_addr().unwrap();
    start_is_refused_before_touching_the_directory(
        free_port(),
        &format!("ferrokraft.metrics.listener={metrics}\n"),
        &format!("cannot bind ferrokraft.metrics.listener {metrics}"),
    );
}

#[test]
fn a_missing_keystore_is_refused_before_touching_the_directory() {
    start_is_refused_before_touching_the_directory(
        free_port(),
        "listener.security.protocol.map=CONTROLLER:SSL\nssl.keystore.type=PEM\n\
         ssl.keystore.location=/nonexistent/ferrokraft-keystore.pem\n",
        "/nonexistent/ferrokraft-keystore.pem",
    );
}

/// `ferrokraft start server.properties --override k=v`, as `kafka-server-start.sh` is called:
/// the positional file is read (here refused as with `-c`, after the override made node 4 a
/// non-voter), and giving both forms is a usage error.
#[test]
fn the_properties_file_may_be_given_positionally() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("data");
    let props = tmp.path().join("server.properties");
    properties(&props, &dir, 1);
    let path = props.to_str().unwrap();
    let out = ferrokraft(&["start", path, "--override", "node.id=4"]);
    let text = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && text.contains(NOT_A_VOTER),
        "{text}"
    );
    let out = ferrokraft(&["start", path, "-c", path]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot be used with"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!dir.exists());
}

/// KIP-1219's keys (Kafka 4.3's QuorumConfig, `atLeast(1)`): 0 is refused by `format` and by
/// `start` with Kafka's ConfigException message, before anything is written.
#[test]
fn a_zero_quorum_fetch_max_bytes_is_refused_before_anything_is_written() {
    for key in [
        "controller.quorum.fetch.max.bytes",
        "controller.quorum.fetch.snapshot.max.bytes",
    ] {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("data");
        let props = tmp.path().join("server.properties");
        let expect = format!("Invalid value 0 for configuration {key}: Value must be at least 1");
        properties(&props, &dir, 1);
        let out = ferrokraft(&["format", "-t", CLUSTER_ID, "-c", props.to_str().unwrap()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let before = contents(&dir);
        let good = fs::read_to_string(&props).unwrap();
        fs::write(&props, format!("{good}{key}=0\n")).unwrap();
        let out = ferrokraft(&["start", "-c", props.to_str().unwrap()]);
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stderr),
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(!out.status.success(), "start with {key}=0: {said}");
        assert!(said.contains(&expect), "start said: {said}");
        assert_eq!(contents(&dir), before, "start changed the directory");

        let fresh = tmp.path().join("fresh");
        fs::write(
            &props,
            format!("{good}{key}=0\n")
                .replace(&dir.display().to_string(), &fresh.display().to_string()),
        )
        .unwrap();
        let out = ferrokraft(&["format", "-t", CLUSTER_ID, "-c", props.to_str().unwrap()]);
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "format with {key}=0: {said}");
        assert!(said.contains(&expect), "format said: {said}");
        assert!(!fresh.exists(), "format created {}", fresh.display());
    }
}
