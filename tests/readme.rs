//! The README's quickstart (#40), run as written: its `sh` blocks are read from README.md (not
//! copied here), joined in order and run by one bash, as a reader pastes them into one shell.
//! The one line not run is `cargo build --release`: `B` points at this test's build of
//! ferrokraft and `D` at a temporary directory (the blocks take both from the environment).
//!
//! Checked from what the blocks print: the three brokers register and unfence before the topic
//! is created (an RF-3 creation would otherwise fail), the topic is created with RF 3, the
//! 1,000 messages produced are the 1,000 consumed, the quorum answers `describe --status`,
//! the controller's metrics endpoint answers, and everything stops (brokers first).

// Integration tests drive real processes: unwrapping and wall-clock waits are fine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use std::fs;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The `sh` blocks of the README section whose heading starts with `## Quickstart`.
fn quickstart_blocks(readme: &str) -> Vec<String> {
    let section: String = readme
        .split("\n## ")
        .find(|s| s.starts_with("Quickstart"))
        .expect("README.md has a '## Quickstart' section")
        .to_string();
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in section.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```sh") => current = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), _) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    blocks
}

#[test]
fn the_readme_quickstart_runs_as_written() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = fs::read_to_string(repo.join("README.md")).unwrap();
    let blocks = quickstart_blocks(&readme);
    assert!(blocks.len() >= 3, "the quickstart has its three blocks");
    let script: String = blocks
        .concat()
        .lines()
        .filter(|l| l.trim() != "cargo build --release")
        .map(|l| format!("{l}\n"))
        .collect();

    let tmp = tempfile::tempdir().unwrap();
    let demo = tmp.path().join("demo");
    let out_path = tmp.path().join("out.txt");
    let out = fs::File::create(&out_path).unwrap();
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(repo)
        .env("B", env!("CARGO_BIN_EXE_ferrokraft"))
        .env("D", &demo)
        .stdout(Stdio::from(out.try_clone().unwrap()))
        .stderr(Stdio::from(out))
        // Its own process group, so a failure stops every node it started.
        .process_group(0)
        .spawn()
        .unwrap();
    let pgid = child.id().to_string();
    let deadline = Instant::now() + Duration::from_secs(300);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    // Whatever happened, nothing it started outlives the test.
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .status();
    let output = fs::read_to_string(&out_path).unwrap_or_default();
    let logs = || {
        let mut text = String::new();
        for name in ["c1.log", "c2.log", "c3.log", "b1.log", "b2.log", "b3.log"] {
            let log = fs::read_to_string(demo.join(name)).unwrap_or_default();
            let tail: Vec<&str> = log.lines().rev().take(15).collect();
            text.push_str(&format!("--- {name} (last lines)\n"));
            for l in tail.into_iter().rev() {
                text.push_str(l);
                text.push('\n');
            }
        }
        text
    };
    assert!(
        status.is_some(),
        "the quickstart did not finish in 5 minutes:\n{output}\n{}",
        logs()
    );
    for expected in [
        "3 brokers registered and unfenced",
        "Created topic demo.",
        "CurrentVoters:",
        "LeaderId:",
    ] {
        assert!(
            output.contains(expected),
            "the quickstart did not print {expected:?}:\n{output}\n{}",
            logs()
        );
    }
    assert!(
        output.lines().any(|l| l.trim() == "1000"),
        "1,000 messages were not consumed back:\n{output}\n{}",
        logs()
    );
    assert!(
        output.lines().any(
            |l| l.starts_with("kafka_controller_kafkacontroller_globaltopiccount ")
                && l.split_whitespace()
                    .nth(1)
                    .and_then(|v| v.parse::<f64>().ok())
                    == Some(2.0)
        ),
        "the metrics endpoint did not count demo and __consumer_offsets:\n{output}"
    );
    // Every controller stopped on its SIGTERM, after the brokers.
    for n in 1..=3 {
        let log = fs::read_to_string(demo.join(format!("c{n}.log"))).unwrap_or_default();
        assert!(
            log.contains("shut down completed"),
            "controller {n} did not stop gracefully:\n{}",
            logs()
        );
    }
}
