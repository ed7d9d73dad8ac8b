//! Architecture rules checked mechanically: the Raft core is sans-IO.
//!
//! Nothing under `src/raft/`, `src/controller/`, `src/metadata/`, `src/security/` or `src/node/` (the node
//! state machine) may touch tokio, the
//! filesystem, sockets, threads, the clock or a thread RNG (clippy's `disallowed-methods`
//! covers the clock calls everywhere else). And every module is a logger of the BROKER_LOGGER
//! config resource (`src/logging/loggers.rs`).

#![allow(clippy::expect_used)]

use std::collections::BTreeSet;
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
    assert_sans_io("src/node");
}

#[test]
fn security_is_sans_io() {
    assert_sans_io("src/security");
}

#[test]
fn metadata_is_sans_io() {
    assert_sans_io("src/metadata");
}

/// The module paths of the files of the crate under `file` (`module` is its path), test-only
/// modules (`#[cfg(test)]`, `#[cfg(any(test, …))]`) left out.
fn file_modules(file: &Path, module: &str, child_dir: &Path, out: &mut BTreeSet<String>) {
    out.insert(module.to_string());
    let text = std::fs::read_to_string(file).expect("readable");
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let decl = line
            .trim_start()
            .trim_start_matches("pub(crate) ")
            .trim_start_matches("pub ");
        let Some(name) = decl.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) else {
            continue;
        };
        let test_only = lines[..i]
            .iter()
            .rev()
            .take_while(|l| l.trim_start().starts_with("#["))
            .any(|l| l.contains("cfg(") && l.contains("test"));
        if test_only {
            continue;
        }
        let dir = child_dir.join(name);
        let path = child_dir.join(format!("{name}.rs"));
        let path = if path.exists() {
            path
        } else {
            dir.join("mod.rs")
        };
        file_modules(&path, &format!("{module}::{name}"), &dir, out);
    }
}

/// Every module with a file of its own is a logger of the BROKER_LOGGER resource
/// (`logging::loggers`), and nothing else is.
#[test]
fn every_module_is_a_logger() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut modules = BTreeSet::new();
    for root in ["lib.rs", "main.rs"] {
        file_modules(&src.join(root), "ferrokraft", &src, &mut modules);
    }
    let listed: BTreeSet<String> = ferrokraft::logging::loggers::FERROKRAFT_LOGGERS
        .iter()
        .map(|s| s.to_string())
        .collect();
    let expected: Vec<String> = modules.iter().map(|m| format!("    \"{m}\",")).collect();
    assert_eq!(
        listed,
        modules,
        "src/logging/loggers.rs must list every module; the list:\n{}",
        expected.join("\n")
    );
}
