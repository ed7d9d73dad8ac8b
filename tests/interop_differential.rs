//! Differential test: one script of Kafka tool runs is played twice, once against a Kafka
//! controller and once against a ferrokraft controller (one controller each time, node id 1),
//! each time with the same two Kafka brokers (ids 100 and 101, small heaps) in front; the two
//! runs must end the same.
//!
//! The script starts with the quorum and cluster tools through the brokers and through the
//! controller (`kafka-metadata-quorum describe` with both brokers as observers, `kafka-cluster
//! cluster-id` and `list-endpoints`, `kafka-features`, `kafka-configs --describe` of the
//! controller's broker resource; [`cluster_tools`]). Then it goes through Kafka's own tools,
//! via the brokers: `kafka-topics --create` with
//! partition counts, replication factors, `--config` values and `--replica-assignment`, and
//! the creations a controller must refuse (existing topic, colliding name, invalid name,
//! replication factor above the broker count, bad and unknown configs, an unknown broker in
//! an assignment); `--alter --partitions` up, down and with an assignment; `kafka-configs`
//! on a topic and on the broker defaults; `kafka-configs --bootstrap-controller --entity-type
//! broker-loggers` on the controller itself (describe, a logger set to DEBUG — and its DEBUG
//! lines then in the controller's log — and deleted, a bad level and the root logger's
//! deletion refused; the logger is each implementation's request logger, see
//! [`request_logger`]); `--delete`; an idempotent VerifiableProducer
//! (AllocateProducerIds, a ProducerIdsRecord); and a controlled shutdown (SIGTERM) of broker
//! 101 (then `list-endpoints --include-fenced-brokers` once it is fenced) and its restart
//! (re-registration, unfencing, ISR expansion). Each tool's exit code, stdout and the error
//! lines of its stderr are recorded.
//!
//! Then the controller and brokers are stopped and the controller's whole metadata log is
//! dumped with `ferrokraft dump --json` (it reads Kafka's log format too): the replayed
//! image and the number of records of each deterministic type are recorded.
//!
//! Both records are normalised ([`Norm`]) only where the runs must differ — topic, directory
//! and incarnation ids, ports, log timestamps, broker epochs (log offsets) — and where
//! Kafka's replica placement is random (see [`RANDOM_TOPICS`]); then compared line by line,
//! and any difference fails the test with a unified diff. Both records are also written to
//! `$TMPDIR/ferrokraft-tool-tests/differential-{kafka,ferrokraft}.txt`.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

#[path = "differential/broker_loggers.rs"]
mod broker_loggers;
#[path = "differential/cluster_tools.rs"]
mod cluster_tools;
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::broker::Broker;
use support::clients::{
    config_command, parse_describe, PartitionState, ProduceSpec, TOPIC_COMMAND,
};
use support::cluster::{serial, tail, Cluster, Impl};
use support::kafka::{kafka, ToolOutput};

/// The brokers of both runs.
const BROKERS: [i32; 2] = [100, 101];

/// Topics placed by the controller's own replica placer (no `--replica-assignment`). Kafka's
/// StripedReplicaPlacer starts at a random broker, so which broker gets which replica (and
/// leads) differs from run to run; what is fixed is each partition's replica count, the
/// replica *set* when the replication factor equals the broker count, that the leader is the
/// first replica, and how evenly leaders spread. For these topics [`Norm`] describes each
/// partition by its replicas' positions instead of broker ids and compares the partitions
/// as a sorted multiset; explicitly assigned topics are compared exactly.
const RANDOM_TOPICS: &[&str] = &["spread", "single", "defaults"];

/// What one tool run showed.
struct Step {
    what: String,
    exit: Option<i32>,
    stdout: String,
    /// The lines of stderr that carry an error (log lines at ERROR and exception lines): the
    /// tools' WARN lines (connection retries and the like) depend on timing.
    stderr: String,
}

/// A run of the script against one controller implementation.
struct Run<'a> {
    c: &'a Cluster,
    bootstrap: String,
    steps: Vec<Step>,
    clock: Instant,
}

impl Run<'_> {
    fn log(&self, what: &str) {
        eprintln!("[{:6.1} s] {what}", self.clock.elapsed().as_secs_f64());
    }

    fn tool(&self, what: &str, class: &str, args: &[&str]) -> ToolOutput {
        self.tool_via(what, class, "--bootstrap-server", &self.bootstrap, args)
    }

    /// A tool run against `bootstrap` given as `option` (`--bootstrap-server` for the
    /// brokers, `--bootstrap-controller` for the controller).
    fn tool_via(
        &self,
        what: &str,
        class: &str,
        option: &str,
        bootstrap: &str,
        args: &[&str],
    ) -> ToolOutput {
        let config = self.c.admin_config();
        let mut full: Vec<&str> = vec![option, bootstrap];
        full.extend([support::clients::config_option(class), &config]);
        full.extend(args);
        let name: String = what
            .chars()
            .map(|ch| if ch.is_ascii_alphanumeric() { ch } else { '-' })
            .collect();
        kafka()
            .client_tool(&self.c.art, &name, class, &full, Duration::from_secs(90))
            .unwrap_or_else(|| panic!("{what}: the tool timed out"))
    }

    /// Runs a tool and records what it showed.
    fn step(&mut self, what: &str, class: &str, args: &[&str]) {
        let out = self.tool(what, class, args);
        self.record(what, &out);
    }

    fn record(&mut self, what: &str, out: &ToolOutput) {
        let stderr = out
            .stderr
            .lines()
            .filter(|l| l.contains("] ERROR ") || (l.contains("Exception") && !l.starts_with('\t')))
            .collect::<Vec<_>>()
            .join("\n");
        self.log(&format!("{what}: exit {:?}", out.status.code()));
        self.steps.push(Step {
            what: what.to_string(),
            exit: out.status.code(),
            stdout: out.stdout.clone(),
            stderr,
        });
    }

    /// `kafka-topics` with `args` (split at spaces).
    fn topics(&mut self, what: &str, args: &str) {
        let args: Vec<&str> = args.split_whitespace().collect();
        self.step(what, TOPIC_COMMAND, &args);
    }

    /// `kafka-configs` with `args` (split at spaces).
    fn configs(&mut self, what: &str, args: &str) {
        let args: Vec<&str> = args.split_whitespace().collect();
        self.step(what, config_command(), &args);
    }

    /// Polls `kafka-topics --describe` (every topic) until `ok` holds for the partitions
    /// of every topic it lists, then records that description as step `what`.
    fn describe_when(&mut self, what: &str, topics: &[&str], ok: impl Fn(&PartitionState) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let out = self.tool(what, TOPIC_COMMAND, &["--describe"]);
            let settled = topics.iter().all(|t| {
                let parts = parse_describe(&out.stdout, t);
                !parts.is_empty() && parts.iter().all(&ok)
            });
            if out.status.success() && settled {
                self.record(what, &out);
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: not reached within 60 s; last --describe:\n{}\n{}",
                out.stdout,
                out.stderr
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }
}

/// Every partition led, all its replicas in sync.
fn in_sync(p: &PartitionState) -> bool {
    let (mut r, mut i) = (p.replicas.clone(), p.isr.clone());
    r.sort();
    i.sort();
    p.leader.is_some() && r == i
}

/// Runs the script against a controller of `kind`; returns (steps, dump of the log).
fn play(kind: Impl) -> (Vec<Step>, Value, BTreeMap<String, String>) {
    let name = match kind {
        Impl::Kafka => "differential-kafka",
        Impl::Ferrokraft => "differential-ferrokraft",
    };
    // Automatic leader balancing runs 300 s after an imbalance by default: one run may last
    // that long and the other not, so it is put past the end of either run (elections are
    // compared through kafka-leader-election instead).
    let mut c = Cluster::new(
        name,
        &[kind],
        &[("leader.imbalance.check.interval.seconds", "3600")],
    );
    c.start_all();
    let mut brokers: Vec<Broker> = std::thread::scope(|s| {
        let c = &c;
        let started: Vec<_> = BROKERS
            .iter()
            .map(|id| s.spawn(move || c.start_broker(*id)))
            .collect();
        started.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let via: Vec<&Broker> = brokers.iter().collect();
    c.wait_brokers_unfenced(&via, &BROKERS, Duration::from_secs(120));
    // Ports → names, in tool output (`:port`) and in the image (`"port": port`).
    let mut subs = BTreeMap::new();
    // The run's directory (Kafka 4.4's kafka-reassign-partitions prints the brokers' log dirs).
    subs.insert(c.art.dir.display().to_string(), "<run dir>".to_string());
    let names = brokers.iter().map(|b| (b.port, format!("broker {}", b.id)));
    subs.insert(
        broker_loggers::request_logger(kind).0.to_string(),
        "<request logger>".to_string(),
    );
    for (port, name) in names.chain([(c.nodes[0].port, "controller".to_string())]) {
        subs.insert(format!(":{port}"), format!(":<port of {name}>"));
        subs.insert(
            format!("\"port\": {port}"),
            format!("\"port\": \"<port of {name}>\""),
        );
    }
    let bootstrap = brokers
        .iter()
        .map(Broker::bootstrap)
        .collect::<Vec<_>>()
        .join(",");
    let mut run = Run {
        c: &c,
        bootstrap,
        steps: Vec::new(),
        clock: Instant::now(),
    };
    run.log(&format!("{kind:?}: controller and brokers {BROKERS:?} up"));
    script(&mut run, &mut brokers);
    let steps = std::mem::take(&mut run.steps);
    drop(run);

    // Stop the controller first, so nothing fences the brokers when they go.
    c.node(1).terminate();
    for b in &mut brokers {
        b.kill();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_ferrokraft"))
        .args(["dump", "--json"])
        .arg(&c.nodes[0].dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ferrokraft dump failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dump: Value = serde_json::from_slice(&out.stdout).expect("dump --json is JSON");
    (steps, dump, subs)
}

/// The operations, in order; both runs do exactly these. Arguments are split at spaces.
fn script(run: &mut Run<'_>, brokers: &mut [Broker]) {
    cluster_tools::script(run);
    let create = [
        ("create fixed.assign (explicit assignment)", "--topic fixed.assign --replica-assignment 100:101,101:100,100:101"),
        ("create solo (RF 1, explicit)", "--topic solo --replica-assignment 101,100"),
        ("create spread (RF 2, configs)", "--topic spread --partitions 4 --replication-factor 2 --config cleanup.policy=compact --config min.insync.replicas=2"),
        // Refused creations.
        ("create an existing topic", "--topic solo --partitions 1 --replication-factor 1"),
        ("create a colliding name", "--topic fixed_assign --partitions 1 --replication-factor 1"),
        ("create an invalid name", "--topic bad/name --partitions 1 --replication-factor 1"),
        ("create with RF above the broker count", "--topic too-wide --partitions 1 --replication-factor 3"),
        ("create with a bad config value", "--topic bad-value --partitions 1 --replication-factor 1 --config min.insync.replicas=abc"),
        ("create with an unknown config", "--topic bad-key --partitions 1 --replication-factor 1 --config no.such.config=1"),
        ("create with an unknown broker", "--topic ghost --replica-assignment 100:999"),
    ];
    for (what, args) in create {
        run.topics(what, &format!("--create {args}"));
    }
    run.describe_when("describe after the creations", &LASTING, in_sync);
    run.topics(
        "add partitions to spread",
        "--alter --topic spread --partitions 6",
    );
    run.topics(
        "remove partitions from spread",
        "--alter --topic spread --partitions 2",
    );
    run.topics(
        "add assigned partitions to fixed.assign",
        "--alter --topic fixed.assign --partitions 4 --replica-assignment 100:101,101:100,100:101,101:100",
    );
    let topic = "--entity-type topics --entity-name fixed.assign";
    let alter = [
        ("add topic configs", format!("{topic} --alter --add-config retention.ms=86400000,cleanup.policy=compact")),
        ("delete a topic config", format!("{topic} --alter --delete-config cleanup.policy")),
        ("add a bad topic config value", format!("{topic} --alter --add-config min.insync.replicas=xyz")),
        ("add a broker default config", "--entity-type brokers --entity-default --alter --add-config log.cleaner.backoff.ms=20000".to_string()),
    ];
    for (what, args) in alter {
        run.configs(what, &args);
    }
    run.configs("describe topic configs", &format!("{topic} --describe"));
    cluster_tools::configs(run);
    broker_loggers::script(run);
    reassign_and_elect(run);
    features(run);
    produce_and_restart(run, brokers);
}

/// The tools' classes.
const REASSIGN_COMMAND: &str = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand";
const LEADER_ELECTION_COMMAND: &str = "org.apache.kafka.tools.LeaderElectionCommand";

/// Reassignments of explicitly placed partitions (a reorder, which completes at once, and a
/// move, which completes once the new replica is in sync), a cancel with nothing running, and
/// leader elections.
fn reassign_and_elect(run: &mut Run<'_>) {
    let plan = run.c.art.path("reassignment.json");
    std::fs::write(
        &plan,
        r#"{"version":1,"partitions":[{"topic":"fixed.assign","partition":0,"replicas":[101,100]},{"topic":"solo","partition":0,"replicas":[100]}]}"#,
    )
    .unwrap();
    let plan = plan.display().to_string();
    let file = ["--reassignment-json-file", plan.as_str()];
    run.step(
        "reassign fixed.assign-0 (reorder) and solo-0 (move to 100)",
        REASSIGN_COMMAND,
        &[&["--execute"][..], &file].concat(),
    );
    // `--verify` until the move is done (how long it takes is timing); that output is
    // recorded, and it clears the throttles through IncrementalAlterConfigs.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let what = "verify the reassignments";
        let out = run.tool(what, REASSIGN_COMMAND, &[&["--verify"][..], &file].concat());
        if !out.stdout.contains("still in progress") {
            run.record(what, &out);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: still in progress:\n{}",
            out.stdout
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    run.step(
        "cancel with no reassignment running",
        REASSIGN_COMMAND,
        &[&["--cancel"][..], &file].concat(),
    );
    run.step(
        "preferred leader election of every partition",
        LEADER_ELECTION_COMMAND,
        &["--election-type", "PREFERRED", "--all-topic-partitions"],
    );
    run.step(
        "preferred leader election of a partition already led by it",
        LEADER_ELECTION_COMMAND,
        &[
            "--election-type",
            "PREFERRED",
            "--topic",
            "fixed.assign",
            "--partition",
            "0",
        ],
    );
    run.step(
        "unclean leader election of a led partition",
        LEADER_ELECTION_COMMAND,
        &[
            "--election-type",
            "UNCLEAN",
            "--topic",
            "solo",
            "--partition",
            "1",
        ],
    );
    run.step(
        "preferred leader election of a missing partition",
        LEADER_ELECTION_COMMAND,
        &[
            "--election-type",
            "PREFERRED",
            "--topic",
            "solo",
            "--partition",
            "9",
        ],
    );
}

const FEATURE_COMMAND: &str = "org.apache.kafka.tools.FeatureCommand";

/// `kafka-features` through a broker (it forwards UpdateFeatures to the controller): accepted
/// upgrades, downgrades and a disable, refusals of a level the controller does not support and
/// of a downgrade across a metadata change, and describe before and after.
fn features(run: &mut Run<'_>) {
    let steps: [(&str, &[&str]); 8] = [
        ("features describe", &["describe"]),
        (
            "upgrade group.version to its level",
            &["upgrade", "--feature", "group.version=1"],
        ),
        (
            "downgrade transaction.version",
            &["downgrade", "--feature", "transaction.version=1"],
        ),
        (
            "dry-run upgrade of metadata.version beyond the controller",
            &["upgrade", "--dry-run", "--feature", "metadata.version=28"],
        ),
        (
            "downgrade metadata.version across a metadata change",
            &["downgrade", "--feature", "metadata.version=16"],
        ),
        (
            "downgrade metadata.version where nothing changed",
            &["downgrade", "--feature", "metadata.version=26"],
        ),
        (
            "disable share.version",
            &["disable", "--feature", "share.version"],
        ),
        ("features describe after the changes", &["describe"]),
    ];
    for (what, args) in steps {
        run.step(what, FEATURE_COMMAND, args);
    }
}

/// The topics created first, which live through the broker restart.
const LASTING: [&str; 3] = ["fixed.assign", "solo", "spread"];

/// An idempotent producer, then broker 101's controlled shutdown and restart; then the
/// randomly placed RF 1 topics.
fn produce_and_restart(run: &mut Run<'_>, brokers: &mut [Broker]) {
    // An idempotent producer: its broker asks the controller for a block of producer ids.
    let mut p = run.c.start_producer(
        &run.bootstrap,
        &ProduceSpec {
            topic: "fixed.assign".into(),
            max_messages: 200,
            throughput: 1000,
            value_prefix: 1,
        },
    );
    let report = p.wait(Duration::from_secs(90));
    run.steps.push(Step {
        what: "idempotent VerifiableProducer, 200 messages".into(),
        exit: Some(0),
        stdout: format!(
            "acked {} errors {:?}",
            report.acked.len(),
            report.errors.iter().map(|e| &e.message).collect::<Vec<_>>()
        ),
        stderr: String::new(),
    });
    run.log("producer done");
    run.describe_when("describe after the changes", &LASTING, in_sync);

    // Controlled shutdown of broker 101 and its restart.
    brokers[1].terminate(Duration::from_secs(60));
    let log = brokers[1].log_text();
    assert!(
        log.contains("The controller has asked us to exit controlled shutdown."),
        "broker 101's controlled shutdown was not approved:\n{}",
        tail(&log, 30)
    );
    run.bootstrap = brokers[0].bootstrap();
    run.log("broker 101 shut down");
    run.describe_when("describe with 101 shut down", &LASTING, |p| {
        p.leader != Some(101) && (!p.isr.contains(&101) || p.isr == [101])
    });
    cluster_tools::fenced(run, 101);
    run.c.restart_broker(&mut brokers[1]);
    run.c
        .wait_brokers_unfenced(&[&brokers[1]], &BROKERS, Duration::from_secs(90));
    run.bootstrap = format!("{},{}", brokers[0].bootstrap(), brokers[1].bootstrap());
    run.log("broker 101 back");
    run.describe_when("describe after 101's restart", &LASTING, in_sync);
    // The randomly placed RF 1 topics come after the restart: where their partitions would
    // end up through it depends on where they were placed.
    run.topics(
        "create single (RF 1)",
        "--create --topic single --partitions 3 --replication-factor 1 --config retention.ms=3600000",
    );
    run.topics(
        "create defaults (controller defaults)",
        "--create --topic defaults",
    );
    let all = ["fixed.assign", "solo", "spread", "single", "defaults"];
    run.describe_when("describe the new topics", &all, in_sync);
    run.topics("delete single", "--delete --topic single");
    run.topics("delete a missing topic", "--delete --topic missing");
    run.topics("list", "--list");
}

/// Normalisation of a run's record.
struct Norm {
    /// Literal replacements (ports).
    subs: BTreeMap<String, String>,
    /// Directory id → `<dir of broker N>`.
    dirs: BTreeMap<String, String>,
}

impl Norm {
    fn text(&self, s: &str) -> String {
        let mut s = s.to_string();
        for (from, to) in &self.subs {
            s = s.replace(from, to);
        }
        s.lines()
            .map(|l| {
                // Log lines start with a timestamp: `[2026-12-01 12:00:00,123] ERROR …`.
                let l = match (l.starts_with('['), l.find("] ")) {
                    (true, Some(end)) => format!("[<time>]{}", &l[end + 1..]),
                    _ => l.to_string(),
                };
                // kafka-features' epoch is the offset of the last feature change: timing.
                let l = match (l.starts_with("Feature: "), l.find("Epoch: ")) {
                    (true, Some(at)) => format!("{}Epoch: <offset>", &l[..at]),
                    _ => l,
                };
                normalise_describe_line(&l)
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// `TopicId: <id>` in a describe line becomes `TopicId: <id>`; a partition line of a
/// [`RANDOM_TOPICS`] topic is described by replica positions (see [`placement`]).
fn normalise_describe_line(l: &str) -> String {
    let fields: Vec<(&str, &str)> = l
        .split('\t')
        .filter_map(|f| {
            f.split_once(": ")
                .or_else(|| f.strip_suffix(':').map(|k| (k, "")))
        })
        .collect();
    let get = |k: &str| {
        fields
            .iter()
            .find(|(n, _)| n.trim() == k)
            .map(|(_, v)| v.trim())
    };
    if let Some(id) = get("TopicId") {
        return l.replace(id, "<id>");
    }
    match (get("Topic"), get("Partition")) {
        (Some(t), Some(_)) if RANDOM_TOPICS.contains(&t) => {
            let list = |k| {
                get(k)
                    .unwrap_or("")
                    .split(',')
                    .filter_map(|x| x.parse().ok())
                    .collect::<Vec<i32>>()
            };
            let leader = get("Leader").and_then(|l| l.parse().ok()).unwrap_or(-1);
            let p = placement(
                &list("Replicas"),
                leader,
                &list("Isr"),
                &list("Elr"),
                &list("LastKnownElr"),
            );
            format!("\tTopic: {t}\tPartition: *\t{p}")
        }
        _ => l.to_string(),
    }
}

/// A randomly placed partition by replica positions: `replicas` as a sorted set when every
/// broker holds one (else only their count), the leader as its position in `replicas`, and
/// the ISR and ELRs as sorted positions.
fn placement(replicas: &[i32], leader: i32, isr: &[i32], elr: &[i32], lkelr: &[i32]) -> String {
    let pos = |b: &i32| {
        replicas
            .iter()
            .position(|r| r == b)
            .map_or(format!("not-a-replica {b}"), |i| format!("r{i}"))
    };
    let set = |v: &[i32]| {
        let mut v: Vec<String> = v.iter().map(pos).collect();
        v.sort();
        v.join(",")
    };
    let placed = if replicas.len() == BROKERS.len() {
        let mut r = replicas.to_vec();
        r.sort();
        format!("{r:?}")
    } else {
        format!("{} replicas", replicas.len())
    };
    let leader = if leader < 0 {
        "none".to_string()
    } else {
        pos(&leader)
    };
    format!(
        "Leader: {leader}\tReplicas: {placed}\tIsr: {}\tElr: {}\tLastKnownElr: {}",
        set(isr),
        set(elr),
        set(lkelr)
    )
}

/// Record types whose count in the log depends on timing, not on the script: heartbeats
/// and fencing, ISR changes (AlterPartition timing), NoOps (written on a timer), producer id
/// blocks.
const TIMED_RECORDS: &[&str] = &[
    "NoOpRecord",
    // See normalise_image: checked by producer_id_blocks instead.
    "ProducerIdsRecord",
    "PartitionChangeRecord",
    "BrokerRegistrationChangeRecord",
    "FenceBrokerRecord",
    "UnfenceBrokerRecord",
];

/// The run's record as lines: each step, then the image and the record counts.
fn report(steps: &[Step], dump: &Value, subs: BTreeMap<String, String>) -> Vec<String> {
    let image = &dump["image"];
    let mut dirs = BTreeMap::new();
    for b in image["brokers"].as_array().unwrap() {
        for (i, d) in b["log_dirs"].as_array().unwrap().iter().enumerate() {
            dirs.insert(
                d.as_str().unwrap().to_string(),
                format!("<dir {i} of broker {}>", b["broker_id"]),
            );
        }
    }
    let norm = Norm { subs, dirs };
    let mut out = Vec::new();
    for s in steps {
        out.push(format!("## {}: exit {:?}", s.what, s.exit));
        let stdout = norm.text(&s.stdout);
        // Sort the partition lines of each randomly placed topic (a multiset, see
        // RANDOM_TOPICS); the rest keeps its order.
        let mut lines: Vec<String> = stdout.lines().map(str::to_string).collect();
        let mut i = 0;
        while i < lines.len() {
            let mut j = i;
            while j < lines.len()
                && lines[j].contains("\tPartition: *\t")
                && lines[j].split('\t').nth(1) == lines[i].split('\t').nth(1)
            {
                j += 1;
            }
            lines[i..j].sort();
            i = j.max(i + 1);
        }
        out.extend(lines.into_iter().map(|l| format!("  {l}")));
        for l in norm.text(&s.stderr).lines() {
            out.push(format!("  stderr: {l}"));
        }
    }
    out.push("## final image".into());
    let image = normalise_image(image, &norm);
    out.extend(
        serde_json::to_string_pretty(&image)
            .unwrap()
            .lines()
            .map(str::to_string),
    );
    out.push("## records in the log, by type (timing-dependent types left out)".into());
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for r in log_records(dump) {
        let t = r["type"].as_str().map(str::to_string).unwrap_or_else(|| {
            r["control"]["type"]
                .as_str()
                .map_or("?".into(), |t| format!("control {t}"))
        });
        // LeaderChange (per election) and the records written on timers or by heartbeat
        // timing.
        if !TIMED_RECORDS.contains(&t.as_str()) && t != "control LeaderChange" {
            *counts.entry(t).or_default() += 1;
        }
    }
    out.extend(counts.iter().map(|(t, n)| format!("  {t}: {n}")));
    out.push(format!(
        "  producer id blocks: {}",
        producer_id_blocks(dump)
    ));
    out
}

/// Every record of the dump's segments (`.log` files), in log order.
fn log_records(dump: &Value) -> impl Iterator<Item = &Value> {
    dump["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["path"].as_str().unwrap().ends_with(".log"))
        .flat_map(|f| f["batches"].as_array().unwrap())
        .flat_map(|b| b["records"].as_array().unwrap())
}

/// Whether the ProducerIdsRecords of the log hand out consecutive blocks of 1000 from 0,
/// ending at the image's next producer id.
fn producer_id_blocks(dump: &Value) -> &'static str {
    let next: Vec<i64> = log_records(dump)
        .filter(|r| r["type"] == "ProducerIdsRecord")
        .map(|r| r["data"]["next_producer_id"].as_i64().unwrap())
        .collect();
    let consecutive = !next.is_empty()
        && next
            .iter()
            .enumerate()
            .all(|(i, n)| *n == 1000 * (i as i64 + 1))
        && dump["image"]["next_producer_id"].as_i64() == next.last().copied();
    if consecutive {
        "consecutive blocks of 1000 from 0"
    } else {
        "NOT consecutive blocks of 1000 from 0"
    }
}

/// The image with run-specific values replaced (see the module doc).
fn normalise_image(image: &Value, norm: &Norm) -> Value {
    let mut text = serde_json::to_string_pretty(image).unwrap();
    for (from, to) in &norm.subs {
        if from.starts_with("\"port\"") {
            text = text.replace(from, to);
        }
    }
    for (from, to) in &norm.dirs {
        text = text.replace(&format!("\"{from}\""), &format!("\"{to}\""));
    }
    let mut image: Value = serde_json::from_str(&text).unwrap();
    for b in image["brokers"].as_array_mut().unwrap() {
        // Broker epochs are the offsets of the registrations, incarnation ids random.
        b["broker_epoch"] = json!("<offset>");
        b["incarnation_id"] = json!("<random>");
    }
    for c in image["controllers"].as_array_mut().unwrap() {
        c["incarnation_id"] = json!("<random>");
        c["end_points"] = json!(c["end_points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e.as_str().unwrap().rsplit_once(':').unwrap().0.to_string() + ":<port>")
            .collect::<Vec<_>>());
    }
    // The image keys topics by id, which is random: order them by name.
    image["topics"]
        .as_array_mut()
        .unwrap()
        .sort_by_key(|t| t["name"].as_str().unwrap().to_string());
    // How many blocks of producer ids the brokers take depends on timing: an InitProducerId
    // that reaches a broker still fetching its first block is retried, maybe on the other
    // broker, which then takes a block too. What must hold is that the blocks are
    // consecutive from 0 ([`producer_id_blocks`] checks them); the count is left out.
    image["next_producer_id"] = json!("<1000 × blocks taken>");
    for t in image["topics"].as_array_mut().unwrap() {
        t["topic_id"] = json!("<random>");
        let name = t["name"].as_str().unwrap().to_string();
        if !RANDOM_TOPICS.contains(&name.as_str()) {
            continue;
        }
        let ids = |v: &Value| -> Vec<i32> {
            v.as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_i64().unwrap() as i32)
                .collect()
        };
        let mut parts: Vec<String> = Vec::new();
        let mut leaders: BTreeMap<i64, usize> = BROKERS.iter().map(|b| (*b as i64, 0)).collect();
        for p in t["partitions"].as_array().unwrap() {
            let replicas = ids(&p["replicas"]);
            let leader = p["leader"].as_i64().unwrap();
            *leaders.entry(leader).or_default() += 1;
            let dirs_ok = p["directories"]
                .as_array()
                .unwrap()
                .iter()
                .zip(&replicas)
                .all(|(d, r)| d.as_str().unwrap().ends_with(&format!("of broker {r}>")));
            parts.push(format!(
                "{} epochs {}/{} recovery {} dirs {} adding {} removing {}",
                placement(
                    &replicas,
                    leader as i32,
                    &ids(&p["isr"]),
                    &ids(&p["eligible_leader_replicas"]),
                    &ids(&p["last_known_elr"])
                ),
                p["leader_epoch"],
                p["partition_epoch"],
                p["leader_recovery_state"],
                if dirs_ok {
                    "those of the replicas"
                } else {
                    "OTHER"
                },
                p["adding_replicas"],
                p["removing_replicas"],
            ));
        }
        parts.sort();
        let mut spread: Vec<usize> = leaders.values().copied().collect();
        spread.sort();
        t["partitions"] = json!(parts);
        t["leaders per broker, sorted"] = json!(spread);
    }
    image
}

/// A unified diff of `a` and `b` (3 lines of context), empty when they are equal.
fn diff(a: &[String], b: &[String]) -> String {
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut ops: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            ops.push((' ', &a[i]));
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            ops.push(('-', &a[i]));
            i += 1;
        } else {
            ops.push(('+', &b[j]));
            j += 1;
        }
    }
    let changed: Vec<usize> = (0..ops.len()).filter(|k| ops[*k].0 != ' ').collect();
    let keep: BTreeSet<usize> = changed
        .iter()
        .flat_map(|k| k.saturating_sub(3)..(k + 4).min(ops.len()))
        .collect();
    let mut out = String::new();
    let mut last = None;
    for k in keep {
        if last.is_some_and(|l: usize| l + 1 != k) {
            out.push_str("  ...\n");
        }
        out.push_str(&format!("{}{}\n", ops[k].0, ops[k].1));
        last = Some(k);
    }
    out
}

/// The script on a Kafka controller, then on a ferrokraft one: the tool outputs, the final
/// images and the record counts agree once normalised.
#[test]
fn ferrokraft_controller_ends_where_kafkas_does() {
    let _serial = serial();
    let start = Instant::now();
    let mut reports = Vec::new();
    for kind in [Impl::Kafka, Impl::Ferrokraft] {
        let (steps, dump, subs) = play(kind);
        let r = report(&steps, &dump, subs);
        let file = std::env::temp_dir()
            .join("ferrokraft-tool-tests")
            .join(format!("differential-{kind:?}.txt").to_lowercase());
        std::fs::write(&file, r.join("\n") + "\n").unwrap();
        eprintln!(
            "[{:6.1} s] {kind:?} run recorded in {}",
            start.elapsed().as_secs_f64(),
            file.display()
        );
        reports.push(r);
    }
    let d = diff(&reports[0], &reports[1]);
    assert!(
        d.is_empty(),
        "ferrokraft's run differs from Kafka's (- Kafka, + ferrokraft):\n{d}"
    );
}

#[test]
fn placement_and_diff_helpers() {
    assert_eq!(
        placement(&[101, 100], 101, &[100, 101], &[], &[]),
        "Leader: r0\tReplicas: [100, 101]\tIsr: r0,r1\tElr: \tLastKnownElr: "
    );
    assert_eq!(
        normalise_describe_line("\tTopic: single\tPartition: 2\tLeader: 100\tReplicas: 100\tIsr: 100\tElr: \tLastKnownElr: "),
        "\tTopic: single\tPartition: *\tLeader: r0\tReplicas: 1 replicas\tIsr: r0\tElr: \tLastKnownElr: "
    );
    assert_eq!(
        normalise_describe_line("Topic: solo\tTopicId: abcDEF\tPartitionCount: 2"),
        "Topic: solo\tTopicId: <id>\tPartitionCount: 2"
    );
    let a: Vec<String> = ["x", "y", "z"].iter().map(|s| s.to_string()).collect();
    let b: Vec<String> = ["x", "q", "z"].iter().map(|s| s.to_string()).collect();
    assert_eq!(diff(&a, &a), "");
    assert_eq!(diff(&a, &b), " x\n-y\n+q\n z\n");
}
