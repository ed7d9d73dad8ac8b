//! GROUP configs per release, against the real thing (`KAFKA_VERSION`, default 4.1.2; the
//! ferrokraft node presents that release). The cases of `tests/group_configs/cases.txt` (a
//! group's whole config after a change, one a line) are answered three ways by
//! `interop/java/GroupConfigOracle.java`:
//!
//! ```text
//!   cases ─▶ the release's ControllerConfigurationValidator, in process ─▶ = kafka-<v>.txt
//!         ─▶ IncrementalAlterConfigs (validate only) to a Kafka controller ──┐ equal, code
//!         ─▶ IncrementalAlterConfigs (validate only) to a ferrokraft node ───┘ and message
//! ```
//!
//! The first shows the recorded answers the unit tests check ferrokraft against
//! (`src/controller/tests/configs_group.rs`) are the release's own; the other two compare
//! the controllers over the wire, through Kafka's Admin client. Needs Java 17.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::fs;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use support::cluster::{serial, Cluster, Impl};
use support::kafka::{kafka, Artifacts};

/// The cases file.
fn cases_path() -> PathBuf {
    kafka().repo.join("tests/group_configs/cases.txt")
}

/// Compiles the oracle against the Kafka under test into `art`; its class path.
fn compile_oracle(art: &Artifacts) -> String {
    kafka().compile(art, "interop/java/GroupConfigOracle.java", "oracle-classes")
}

/// The oracle's answers to every case, one line each (`args` picks the mode).
fn run_oracle(art: &Artifacts, cp: &str, name: &str, args: &[&str]) -> String {
    let k = kafka();
    let mut child = Command::new("java")
        .args(["-Xmx256m", "-XX:+UseSerialGC"])
        .arg(format!(
            "-Dlog4j2.configurationFile={}",
            k.repo
                .join("interop/kafka/log4j2-tools.properties")
                .display()
        ))
        .args(["-cp", cp, "GroupConfigOracle"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("java");
    let cases = fs::read(cases_path()).unwrap();
    child.stdin.take().unwrap().write_all(&cases).unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    fs::write(art.path(&format!("{name}.out")), &stdout).unwrap();
    fs::write(art.path(&format!("{name}.err")), &out.stderr).unwrap();
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Lines that differ, numbered, for a failure message.
fn differences(left: &str, right: &str, left_name: &str, right_name: &str) -> Vec<String> {
    let (l, r): (Vec<&str>, Vec<&str>) = (left.lines().collect(), right.lines().collect());
    let mut out = Vec::new();
    if l.len() != r.len() {
        out.push(format!(
            "{left_name}: {} lines, {right_name}: {}",
            l.len(),
            r.len()
        ));
    }
    for (a, b) in l.iter().zip(&r) {
        if a != b {
            out.push(format!("{left_name}: {a}\n{right_name}: {b}"));
        }
    }
    out
}

/// What the Admin client sees of an in-process answer: a ConfigException reaches it as
/// INVALID_CONFIG, raised as InvalidConfigurationException.
fn as_client_sees(answers: &str) -> String {
    answers
        .lines()
        .map(|l| {
            l.replacen(
                "\tConfigException\t",
                "\tInvalidConfigurationException\t",
                1,
            )
        })
        .map(|l| l + "\n")
        .collect()
}

#[test]
fn recorded_answers_are_the_release_s_own() {
    let art = Artifacts::new("group-configs-oracle");
    let version = &kafka().version;
    let recorded = kafka()
        .repo
        .join(format!("tests/group_configs/kafka-{version}.txt"));
    let recorded = fs::read_to_string(&recorded).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; record it with the oracle (see interop/java/GroupConfigOracle.java)",
            recorded.display()
        )
    });
    let cp = compile_oracle(&art);
    let live = run_oracle(&art, &cp, "in-process", &[]);
    let diff = differences(&recorded, &live, "recorded", "Kafka");
    assert!(diff.is_empty(), "{}", diff.join("\n"));
}

/// One controller of `kind` (node 1, alone in its quorum), started, with a leader.
fn controller(test: &str, kind: Impl) -> Cluster {
    let mut c = Cluster::new(test, &[kind], &[]);
    c.start_all();
    c.wait_for_leader(1, 1, Duration::from_secs(90));
    c
}

#[test]
fn kafka_and_ferrokraft_controllers_answer_group_configs_alike() {
    let _serial = serial();
    let art = Artifacts::new("group-configs-wire");
    let cp = compile_oracle(&art);
    let k = controller("group-configs-kafka", Impl::Kafka);
    let kafka_answers = run_oracle(
        &art,
        &cp,
        "kafka-controller",
        &["--bootstrap-controller", &k.controller_address(1)],
    );
    drop(k);
    let f = controller("group-configs-ferrokraft", Impl::Ferrokraft);
    let ferrokraft_answers = run_oracle(
        &art,
        &cp,
        "ferrokraft-controller",
        &["--bootstrap-controller", &f.controller_address(1)],
    );
    drop(f);
    let cases = fs::read_to_string(cases_path()).unwrap();
    assert_eq!(kafka_answers.lines().count(), cases.lines().count());
    let diff = differences(&kafka_answers, &ferrokraft_answers, "Kafka", "ferrokraft");
    assert!(diff.is_empty(), "{}", diff.join("\n"));
    // The wire answers are the in-process ones, as the client sees them.
    let recorded = fs::read_to_string(
        kafka()
            .repo
            .join(format!("tests/group_configs/kafka-{}.txt", kafka().version)),
    )
    .unwrap();
    let diff = differences(
        &as_client_sees(&recorded),
        &kafka_answers,
        "in process",
        "over the wire",
    );
    assert!(diff.is_empty(), "{}", diff.join("\n"));
}

/// The oracle's describe mode against `address`: DescribeConfigs of a group, before and after
/// one key is stored.
fn describe_via(art: &Artifacts, cp: &str, name: &str, address: &str) -> String {
    let k = kafka();
    let out = Command::new("java")
        .args(["-Xmx256m", "-XX:+UseSerialGC"])
        .arg(format!(
            "-Dlog4j2.configurationFile={}",
            k.repo
                .join("interop/kafka/log4j2-tools.properties")
                .display()
        ))
        .args([
            "-cp",
            cp,
            "GroupConfigOracle",
            "--describe-controller",
            address,
        ])
        .output()
        .expect("java");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    fs::write(art.path(&format!("{name}.out")), &stdout).unwrap();
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn kafka_and_ferrokraft_controllers_describe_a_group_alike() {
    let _serial = serial();
    let art = Artifacts::new("group-configs-describe");
    let cp = compile_oracle(&art);
    let k = controller("group-describe-kafka", Impl::Kafka);
    let kafka_answer = describe_via(&art, &cp, "kafka-describe", &k.controller_address(1));
    drop(k);
    let f = controller("group-describe-ferrokraft", Impl::Ferrokraft);
    let ferrokraft_answer =
        describe_via(&art, &cp, "ferrokraft-describe", &f.controller_address(1));
    drop(f);
    let diff = differences(&kafka_answer, &ferrokraft_answer, "Kafka", "ferrokraft");
    assert!(
        diff.is_empty(),
        "{}\n--- Kafka\n{kafka_answer}",
        diff.join("\n")
    );
}
