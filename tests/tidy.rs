//! Architecture rules checked mechanically: the Raft core is sans-IO.
//!
//! Nothing under `src/raft/`, `src/controller/`, `src/metadata/` or `src/machine/` (the node
//! state machine) may touch tokio, the
//! filesystem, sockets, threads, the clock or a thread RNG (clippy's `disallowed-methods`
//! covers the clock calls everywhere else).

#![allow(clippy::expect_used)]

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("readable source dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn assert_sans_io(dir: &str) {
    const BANNED: &[&str] = &[
        "tokio",
        "std::fs",
        "std::net",
        "std::thread",
        "std::time::Instant",
        "SystemTime",
        "Instant::now",
        "thread_rng",
        "std::process",
        "std::env",
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(files.len() >= 3, "found the sources of {dir}");
    let mut violations = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for banned in BANNED {
                if code.contains(banned) {
                    violations.push(format!("{}:{}: {banned}: {line}", file.display(), n + 1));
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "{dir} must stay sans-IO:\n{}",
        violations.join("\n")
    );
}

#[test]
fn raft_core_is_sans_io() {
    assert_sans_io("src/raft");
}

#[test]
fn controller_is_sans_io() {
    assert_sans_io("src/controller");
}

#[test]
fn node_state_machine_is_sans_io() {
    assert_sans_io("src/machine");
}

#[test]
fn metadata_is_sans_io() {
    assert_sans_io("src/metadata");
}
