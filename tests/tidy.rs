//! Architecture rules checked mechanically: the layers point one way (`LAYERS`), and the
//! sans-IO cores stay sans-IO.
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
        "quanta",
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

/// What a module may import from the crate.
enum May {
    /// Exactly these modules (each listed above it).
    Import(&'static [&'static str]),
    /// Every module listed above it but these.
    ImportAllBelowBut(&'static [&'static str]),
}

/// The layers, from the ground up, and what each top-level module of `src/` may import from
/// the crate (Kafka keeps the same rule in `checkstyle/import-control.xml`). A module may only
/// import modules listed above it, so the table itself has no cycle; `layers_point_down` holds
/// the code to it. Test-only code (`tests/` folders, `*_tests.rs`, `tests.rs`, `#[cfg(test)]`
/// modules) is left out.
const LAYERS: &[(&str, May)] = &[
    // The ground floor: record batches, the logger registry, Kafka's shared values.
    ("records", May::Import(&[])),
    ("logging", May::Import(&[])),
    ("common", May::Import(&["records"])),
    // Bytes ⇄ messages, the API table, every error answer.
    ("codec", May::Import(&["common", "records"])),
    // Files.
    ("durable", May::Import(&[])),
    ("snapshot", May::Import(&["common", "records", "durable"])),
    ("storage", May::ImportAllBelowBut(&["logging", "codec"])),
    ("log", May::ImportAllBelowBut(&["logging", "codec"])),
    // The sans-IO cores.
    ("metadata", May::Import(&["common", "codec", "records"])),
    ("raft", May::Import(&["common", "codec", "records"])),
    ("security", May::Import(&["common", "codec"])),
    ("controller", May::ImportAllBelowBut(&FILES)),
    (
        "node",
        May::ImportAllBelowBut(&["durable", "storage", "log"]),
    ),
    // The I/O shell.
    (
        "network",
        May::Import(&["common", "codec", "records", "raft", "security"]),
    ),
    ("server", May::ImportAllBelowBut(&[])),
    // Configuration on top: reads server.properties, builds each layer's own settings; never
    // the shell it configures.
    ("config", May::ImportAllBelowBut(&["server"])),
    // The composition root and the CLI verbs.
    ("launch", May::ImportAllBelowBut(&[])),
    ("tools", May::ImportAllBelowBut(&[])),
    ("cli", May::ImportAllBelowBut(&[])),
];

/// The file layers, which the sans-IO controller never touches.
const FILES: [&str; 4] = ["durable", "snapshot", "storage", "log"];

/// The modules `module` (the `i`-th row of [`LAYERS`]) may import.
fn allowed(i: usize) -> Vec<&'static str> {
    let below = LAYERS[..i].iter().map(|(m, _)| *m);
    match &LAYERS[i].1 {
        May::Import(list) => list.to_vec(),
        May::ImportAllBelowBut(except) => below.filter(|m| !except.contains(m)).collect(),
    }
}

/// The crate-internal modules `text` (one file's production code) names: `crate::x`, and the
/// names inside `crate::{x, y::z}`.
fn crate_imports(text: &str) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut out = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        rest = &rest[i + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                let name: String = part
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                out.insert(name);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.insert(name);
        }
    }
    out
}

/// `text` up to its first `#[cfg(test)]`-gated inline module (test code comes last in a file).
fn production_part(text: &str) -> &str {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("#[cfg(test)]") {
            let after = &text[offset + line.len()..];
            let next = after.lines().next().unwrap_or("").trim_start();
            let next = next.strip_prefix("pub(crate) ").unwrap_or(next);
            if next.starts_with("mod ") && next.ends_with('{') {
                return &text[..offset];
            }
        }
        offset += line.len();
    }
    text
}

fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name == "tests.rs"
        || name.ends_with("_tests.rs")
        || path.components().any(|c| c.as_os_str() == "tests")
}

/// Every import in `src/` points down the [`LAYERS`] table (and the table is a DAG).
#[test]
fn layers_point_down() {
    let order: Vec<&str> = LAYERS.iter().map(|(m, _)| *m).collect();
    for (i, (module, _)) in LAYERS.iter().enumerate() {
        for a in allowed(i) {
            let j = order.iter().position(|m| *m == a);
            assert!(
                j.is_some_and(|j| j < i),
                "LAYERS: {module} may import {a}, which is not listed below it"
            );
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut violations = Vec::new();
    let mut checked = 0;
    for file in &files {
        let rel = file.strip_prefix(&src).expect("under src");
        let first = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .unwrap_or("");
        let top = first.strip_suffix(".rs").unwrap_or(first);
        if is_test_file(rel) || matches!(top, "lib" | "main" | "commands" | "sim_env") {
            continue;
        }
        let Some(row) = LAYERS.iter().position(|(m, _)| *m == top) else {
            violations.push(format!("{}: module {top} is not in LAYERS", rel.display()));
            continue;
        };
        checked += 1;
        let allowed = allowed(row);
        let text = std::fs::read_to_string(file).expect("readable");
        for import in crate_imports(production_part(&text)) {
            let is_module = order.contains(&import.as_str());
            if is_module && import != top && !allowed.contains(&import.as_str()) {
                violations.push(format!(
                    "{}: {top} imports {import}, which is not below it",
                    rel.display()
                ));
            }
        }
    }
    assert!(checked > 150, "checked the sources ({checked} files)");
    assert!(
        violations.is_empty(),
        "imports that run back up the layers (tests/tidy.rs LAYERS):\n{}",
        violations.join("\n")
    );
}
