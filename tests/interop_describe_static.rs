//! Differential test of DescribeConfigs on a controller's own BROKER resource (#37): one Kafka
//! controller and one ferrokraft controller (node id 1, alone in their quorums, run side by
//! side) start from the same properties (apart from ports and paths, which the harness picks),
//! and Kafka's `kafka-configs --bootstrap-controller … --entity-type brokers` answers the same
//! on both, line for line once ports and paths are normalised:
//!
//! - `--entity-name 1 --describe --all`: every key of Kafka's broker ConfigDef with its value,
//!   sensitivity and synonyms (the given keys, as given, and Kafka's defaults), plus the keys
//!   Kafka does not know, listed as it lists them (sensitive, value null);
//! - the cluster default and the node set dynamically (`--alter --add-config`: a dynamic key,
//!   a key given statically too, retention and roll synonyms (a dynamic `log.roll.ms`
//!   replaces the static `log.roll.hours`), a per-broker key at the cluster level, a
//!   listener-prefixed key, static-only keys and a key no one knows), then `--entity-default --describe` and
//!   `--entity-name 1 --describe --all` again.
//!
//! ferrokraft's table holds every release's ConfigDef (4.0.2 … 4.4.0); with `KAFKA_VERSION` set
//! to another release, both sides present that release (`ferrokraft.kafka.release`).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::time::{Duration, Instant};

use support::clients::config_command;
use support::cluster::{serial, Cluster, Impl};
use support::kafka::{ferrokraft_release, kafka, ToolOutput};

/// Static keys both controllers get besides the harness's own (node id, quorum, listener,
/// log.dirs, one network and one I/O thread): each ConfigDef type, values as a person writes
/// them (case, spaces around list items), synonyms (log.roll.hours), a password, and keys
/// Kafka does not know.
const STATIC: &[(&str, &str)] = &[
    ("auto.create.topics.enable", "TRUE"),
    ("compression.type", "gzip"),
    ("log.cleaner.min.cleanable.ratio", "0.25"),
    ("log.roll.hours", "24"),
    ("message.max.bytes", " 2000000"),
    ("sasl.enabled.mechanisms", "PLAIN , SCRAM-SHA-256"),
    ("delegation.token.secret.key", "not-so-secret"),
    ("leader.imbalance.check.interval.seconds", "3600"),
    ("some.unknown.key", "x"),
];

/// What each implementation is asked, in order: (what, arguments after the bootstrap, a text
/// the output shows once the changes before it apply).
const SCRIPT: &[(&str, &str, &str)] = &[
    (
        "describe --all of broker 1",
        "--entity-type brokers --entity-name 1 --describe --all",
        "",
    ),
    (
        "set cluster defaults",
        "--entity-type brokers --entity-default --alter --add-config \
         log.cleaner.threads=2,log.retention.ms=1800000,log.retention.minutes=30,\
         compression.type=lz4,ssl.protocol=TLSv1.2,listener.name.controller.max.connections=100,\
         unknown.dynamic.key=y",
        "",
    ),
    (
        "set broker 1's configs",
        "--entity-type brokers --entity-name 1 --alter --add-config \
         log.cleaner.threads=3,log.roll.ms=3600000,ssl.protocol=TLSv1.2,num.partitions=5",
        "",
    ),
    (
        "describe the cluster defaults",
        "--entity-type brokers --entity-default --describe",
        "log.cleaner.threads=2",
    ),
    (
        "describe --all of broker 1 after the changes",
        "--entity-type brokers --entity-name 1 --describe --all",
        "DYNAMIC_BROKER_CONFIG:log.roll.ms=3600000",
    ),
];

/// Plays the script on a one-controller cluster of `kind`; the normalised record.
fn play(kind: Impl) -> Vec<String> {
    let name = match kind {
        Impl::Kafka => "describe-static-kafka",
        Impl::Ferrokraft => "describe-static-ferrokraft",
    };
    let release = ferrokraft_release().name();
    let mut extra: Vec<(&str, &str)> = STATIC.to_vec();
    // ferrokraft's own key, given to both (Kafka lists it as a key it does not know).
    extra.push(("ferrokraft.kafka.release", release));
    let mut c = Cluster::new(name, &[kind], &extra);
    c.start_all();
    let controller = format!("127.0.0.1:{}", c.nodes[0].port);
    let admin = c.art.path("admin.properties");
    std::fs::write(
        &admin,
        "default.api.timeout.ms=30000\nrequest.timeout.ms=10000\n",
    )
    .unwrap();
    let admin = admin.display().to_string();
    let port = format!(":{}", c.nodes[0].port);
    let dir = c.nodes[0].dir.display().to_string();
    let mut record = Vec::new();
    for (i, (what, args, until)) in SCRIPT.iter().enumerate() {
        let mut full = vec![
            "--bootstrap-controller",
            &controller,
            "--command-config",
            &admin,
        ];
        full.extend(args.split_whitespace());
        let run = |n: usize| -> ToolOutput {
            kafka()
                .client_tool(
                    &c.art,
                    &format!("step{i}-{n}"),
                    config_command(),
                    &full,
                    Duration::from_secs(90),
                )
                .unwrap_or_else(|| panic!("{what}: kafka-configs timed out"))
        };
        // A describe after a change waits until the change shows (Kafka's controller applies
        // a committed dynamic config to its own configuration asynchronously).
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut n = 0;
        let out = loop {
            n += 1;
            let out = run(n);
            let settled = out.stdout.contains(until);
            if settled || Instant::now() > deadline {
                break out;
            }
            std::thread::sleep(Duration::from_millis(300));
        };
        record.push(format!("== {what}: exit {:?}", out.status.code()));
        for line in out.stdout.lines() {
            record.push(line.replace(&dir, "<dir>").replace(&port, ":<port>"));
        }
        for line in out.stderr.lines().filter(|l| l.contains("rror")) {
            record.push(format!("stderr: {line}"));
        }
    }
    let file = std::env::temp_dir()
        .join("ferrokraft-tool-tests")
        .join(format!("describe-static-{kind:?}.txt").to_lowercase());
    std::fs::write(&file, record.join("\n") + "\n").unwrap();
    eprintln!("{kind:?}: {} lines in {}", record.len(), file.display());
    record
}

#[test]
fn broker_resource_describes_as_kafkas_controller_does() {
    let _serial = serial();
    kafka();
    let start = Instant::now();
    let (theirs, ours) = std::thread::scope(|s| {
        let k = s.spawn(|| play(Impl::Kafka));
        let f = s.spawn(|| play(Impl::Ferrokraft));
        (k.join().unwrap(), f.join().unwrap())
    });
    eprintln!("both runs in {:.1} s", start.elapsed().as_secs_f64());
    let listed = ours.iter().filter(|l| l.starts_with("  ")).count();
    // Twice the public keys: 289 (Kafka 4.0.2) to 350 (4.4.0).
    assert!(
        listed > 550,
        "the describes list Kafka's whole configuration twice ({listed} lines)"
    );
    if theirs != ours {
        // The lines each side has that the other has not, in order.
        let only = |a: &[String], b: &[String]| -> Vec<String> {
            a.iter().filter(|l| !b.contains(l)).cloned().collect()
        };
        panic!(
            "kafka-configs differs ({} Kafka lines, {} ferrokraft lines)\n\
             only Kafka's:\n{}\nonly ferrokraft's:\n{}",
            theirs.len(),
            ours.len(),
            only(&theirs, &ours).join("\n"),
            only(&ours, &theirs).join("\n")
        );
    }
}
