//! Kafka's admin tools through real brokers on a ferrokraft quorum (#15), with a producer
//! running: `kafka-topics --alter --partitions` grows the produced topic, `--delete` removes
//! a topic from the cluster and from every broker's disk, refusals carry Kafka's messages,
//! and every acked message is read back. One quorum and one set of brokers serve the whole
//! file (three ferrokraft controllers, three Kafka 4.1.2 brokers; `KAFKA_VERSION` selects
//! another Kafka). Needs Java 17 + Maven.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use support::clients::{
    bootstrap_servers, check_delivery, PartitionState, ProduceSpec, BROKER_IDS, TOPIC_COMMAND,
};
use support::cluster::{serial, Cluster, Impl};

/// The topic produced to throughout.
const TOPIC: &str = "orders";

fn in_sync(n: usize) -> impl Fn(&[PartitionState]) -> bool {
    move |parts| {
        parts.len() == n
            && parts
                .iter()
                .all(|p| p.leader.is_some() && p.isr.len() == p.replicas.len())
    }
}

/// The partition directories of `topic` a broker still has under `dir` (a deleted one is
/// first renamed `<topic>-<n>.<id>-delete`, then removed).
fn partition_dirs(dir: &Path, topic: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| {
            n.strip_prefix(&format!("{topic}-"))
                .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit()))
        })
        .collect()
}

const REASSIGN_COMMAND: &str = "org.apache.kafka.tools.reassign.ReassignPartitionsCommand";
const LEADER_ELECTION_COMMAND: &str = "org.apache.kafka.tools.LeaderElectionCommand";

fn text(out: &support::kafka::ToolOutput) -> String {
    format!("{}{}", out.stdout, out.stderr)
}

/// `kafka-reassign-partitions` --generate, --execute (throttled), --verify and --cancel of a
/// move, a reorder of the produced topic's replicas and `kafka-leader-election` to its new
/// preferred leader, with the producer running.
fn reassign_and_elect(c: &Cluster, all: &str, clock: &Instant) {
    c.create_topic(all, "moves", 1, 1, &[]);
    let placed = c.wait_topic(all, "moves", "led", Duration::from_secs(60), in_sync(1));
    let from = placed[0].replicas[0];
    let to = BROKER_IDS.iter().copied().find(|b| *b != from).unwrap();
    // Data to move, so that a throttled move takes long enough to cancel: more than one
    // replica fetch (replica.fetch.max.bytes, 1 MiB), which a broker may take before its
    // throttle applies.
    let p = c.produce(
        all,
        &ProduceSpec {
            topic: "moves".into(),
            max_messages: 150_000,
            throughput: 150_000,
            value_prefix: 9,
        },
        Duration::from_secs(120),
    );
    assert_eq!(p.acked.len(), 150_000, "{:?}", p.errors.first());
    let topics = c.art.path("moves-topics.json");
    std::fs::write(&topics, r#"{"version":1,"topics":[{"topic":"moves"}]}"#).unwrap();
    let to_list = to.to_string();
    let generate = c.admin_tool(
        all,
        "reassign-generate",
        REASSIGN_COMMAND,
        &[
            "--generate",
            "--topics-to-move-json-file",
            topics.to_str().unwrap(),
            "--broker-list",
            &to_list,
        ],
    );
    generate.assert_ok("kafka-reassign-partitions --generate");
    assert!(
        generate
            .stdout
            .contains("Proposed partition reassignment configuration")
            && generate.stdout.contains(&format!("\"replicas\":[{to}]")),
        "--generate proposes moving to {to}:\n{}",
        generate.stdout
    );
    let plan = c.art.path("moves-plan.json");
    std::fs::write(
        &plan,
        format!(
            r#"{{"version":1,"partitions":[{{"topic":"moves","partition":0,"replicas":[{to}]}}]}}"#
        ),
    )
    .unwrap();
    let plan = plan.to_str().unwrap();
    let execute = c.admin_tool(
        all,
        "reassign-execute",
        REASSIGN_COMMAND,
        &[
            "--execute",
            "--reassignment-json-file",
            plan,
            "--throttle",
            "1000",
        ],
    );
    execute.assert_ok("kafka-reassign-partitions --execute --throttle");
    assert!(
        text(&execute).contains("Successfully started partition reassignment"),
        "{}",
        text(&execute)
    );
    // The brokers learn of the move from the metadata log, a moment later.
    c.wait_topic(
        all,
        "moves",
        "both replicas while moving",
        Duration::from_secs(30),
        |p| {
            let mut replicas = p[0].replicas.clone();
            replicas.sort_unstable();
            let mut both = vec![from, to];
            both.sort_unstable();
            replicas == both
        },
    );
    let verify = c.admin_tool(
        all,
        "reassign-verify",
        REASSIGN_COMMAND,
        &["--verify", "--reassignment-json-file", plan],
    );
    assert!(
        text(&verify).contains("Reassignment of partition moves-0 is still in progress."),
        "throttled to 1 kB/s, 150,000 messages are still moving:\n{}",
        text(&verify)
    );
    let cancel = c.admin_tool(
        all,
        "reassign-cancel",
        REASSIGN_COMMAND,
        &["--cancel", "--reassignment-json-file", plan],
    );
    cancel.assert_ok("kafka-reassign-partitions --cancel");
    assert!(
        text(&cancel).contains("Successfully cancelled partition reassignment"),
        "{}",
        text(&cancel)
    );
    let back = c.wait_topic(
        all,
        "moves",
        "back on its broker",
        Duration::from_secs(30),
        |p| p.len() == 1 && p[0].replicas == [from],
    );
    step(
        clock,
        &format!("moves-0: throttled move to {to} started, cancelled: {back:?}"),
    );

    // The produced topic: reverse partition 0's replicas (complete at once: all in sync),
    // then elect the new preferred leader.
    let before = c.describe_topic(all, TOPIC).unwrap();
    let mut reversed = before[0].replicas.clone();
    reversed.reverse();
    let plan = c.art.path("orders-plan.json");
    std::fs::write(
        &plan,
        format!(
            r#"{{"version":1,"partitions":[{{"topic":"{TOPIC}","partition":0,"replicas":{reversed:?}}}]}}"#
        ),
    )
    .unwrap();
    let plan = plan.to_str().unwrap();
    c.admin_tool(
        all,
        "reorder",
        REASSIGN_COMMAND,
        &["--execute", "--reassignment-json-file", plan],
    )
    .assert_ok("kafka-reassign-partitions --execute (reorder)");
    let verify = c.admin_tool(
        all,
        "reorder-verify",
        REASSIGN_COMMAND,
        &["--verify", "--reassignment-json-file", plan],
    );
    assert!(
        text(&verify).contains(&format!(
            "Reassignment of partition {TOPIC}-0 is completed."
        )),
        "{}",
        text(&verify)
    );
    let elect = c.admin_tool(
        all,
        "elect-preferred",
        LEADER_ELECTION_COMMAND,
        &["--election-type", "PREFERRED", "--all-topic-partitions"],
    );
    elect.assert_ok("kafka-leader-election --election-type PREFERRED");
    assert!(
        text(&elect).contains("Successfully completed leader election (PREFERRED) for partitions")
            && text(&elect).contains(&format!("{TOPIC}-0")),
        "{}",
        text(&elect)
    );
    let after = c.wait_topic(
        all,
        TOPIC,
        "the preferred leader leads",
        Duration::from_secs(30),
        |p| p[0].leader == Some(reversed[0]),
    );
    step(
        clock,
        &format!(
            "{TOPIC}-0 reordered to {reversed:?}, led by {:?}",
            after[0].leader
        ),
    );
    let again = c.admin_tool(
        all,
        "elect-again",
        LEADER_ELECTION_COMMAND,
        &[
            "--election-type",
            "PREFERRED",
            "--topic",
            TOPIC,
            "--partition",
            "0",
        ],
    );
    assert!(
        text(&again).contains("Valid replica already elected for partitions"),
        "{}",
        text(&again)
    );
}

fn step(clock: &Instant, what: &str) {
    eprintln!("[{:6.1} s] {what}", clock.elapsed().as_secs_f64());
}

/// Topic administration with a producer running: partitions added to the produced topic
/// (placed on the brokers, led and in sync), a second topic deleted (gone from the cluster
/// and from every broker's log directory), Kafka's refusals for shrinking, for a topic that
/// does not exist and for a bad assignment; nothing acked is lost.
#[test]
fn topic_admin_through_brokers_with_a_producer_running() {
    let _serial = serial();
    let clock = Instant::now();
    let mut c = Cluster::new("interop-admin", &[Impl::Ferrokraft; 3], &[]);
    c.start_all();
    // Small replica fetches, so the 1 kB/s throttle of the reassignment bites after the
    // first one (Kafka 4.4 brokers moved the 2.3 MB of the throttled partition in a few
    // 1 MiB fetches before `--cancel` ran).
    let brokers = c.start_brokers_with(&BROKER_IDS, &[("replica.fetch.max.bytes", "65536")]);
    let via: Vec<_> = brokers.iter().collect();
    c.wait_brokers_unfenced(&via, &BROKER_IDS, Duration::from_secs(120));
    let all = bootstrap_servers(&brokers);
    step(&clock, "quorum and brokers up");

    c.create_topic(&all, TOPIC, 3, 3, &[("min.insync.replicas", "2")]);
    c.wait_topic(
        &all,
        TOPIC,
        "3 partitions in sync",
        Duration::from_secs(60),
        in_sync(3),
    );
    let mut producer = c.start_producer(
        &all,
        &ProduceSpec {
            topic: TOPIC.into(),
            max_messages: 100_000,
            throughput: 300,
            value_prefix: 1,
        },
    );
    producer.wait_acked(300, Duration::from_secs(60));
    step(&clock, "producing");

    // Grow the produced topic: the new partitions are placed, led and in sync, and the
    // producer writes to them.
    let grow = c.admin_tool(
        &all,
        "grow-orders",
        TOPIC_COMMAND,
        &["--alter", "--topic", TOPIC, "--partitions", "6"],
    );
    grow.assert_ok("kafka-topics --alter --partitions 6");
    let parts = c.wait_topic(
        &all,
        TOPIC,
        "6 partitions in sync",
        Duration::from_secs(60),
        in_sync(6),
    );
    assert!(
        parts.iter().all(|p| p.replicas.len() == 3),
        "RF 3 kept: {parts:?}"
    );
    step(&clock, &format!("{TOPIC} grown to 6: {parts:?}"));
    // The running producer keeps its metadata for minutes; a second one sees six partitions
    // from its start and writes to the new ones too.
    let acked = producer.report().acked.len();
    producer.wait_acked(acked + 300, Duration::from_secs(60));
    let first = producer.stop(Duration::from_secs(60));
    assert!(
        first.errors.is_empty(),
        "{:?}",
        &first.errors[..first.errors.len().min(5)]
    );
    let mut producer = c.start_producer(
        &all,
        &ProduceSpec {
            topic: TOPIC.into(),
            max_messages: 100_000,
            throughput: 300,
            value_prefix: 2,
        },
    );
    producer.wait_acked(300, Duration::from_secs(60));

    // Refusals, with Kafka's messages.
    let shrink = c.admin_tool(
        &all,
        "shrink-orders",
        TOPIC_COMMAND,
        &["--alter", "--topic", TOPIC, "--partitions", "2"],
    );
    let text = format!("{}{}", shrink.stdout, shrink.stderr);
    assert!(
        !shrink.status.success()
            && text.contains("InvalidPartitionsException")
            && text.contains(
                "The topic orders currently has 6 partition(s); 2 would not be an increase."
            ),
        "shrinking refused:\n{text}"
    );
    let bad = c.admin_tool(
        &all,
        "assign-unknown-broker",
        TOPIC_COMMAND,
        &[
            "--alter",
            "--topic",
            TOPIC,
            "--partitions",
            "7",
            "--replica-assignment",
            "100:101:102,100:101:102,100:101:102,100:101:102,100:101:102,100:101:102,100:101:999",
        ],
    );
    let text = format!("{}{}", bad.stdout, bad.stderr);
    assert!(
        !bad.status.success()
            && text.contains(
                "The manual partition assignment includes broker 999, but no such broker is registered."
            ),
        "an assignment to an unknown broker refused:\n{text}"
    );
    let missing = c.admin_tool(
        &all,
        "delete-missing",
        TOPIC_COMMAND,
        &["--delete", "--topic", "missing"],
    );
    let text = format!("{}{}", missing.stdout, missing.stderr);
    assert!(
        !missing.status.success() && text.contains("missing"),
        "deleting a topic that does not exist fails:\n{text}"
    );
    step(&clock, "refusals checked");

    reassign_and_elect(&c, &all, &clock);

    // Delete a topic with data: it leaves the cluster and every broker's disk.
    c.create_topic(&all, "scratch", 3, 2, &[]);
    c.wait_topic(
        &all,
        "scratch",
        "in sync",
        Duration::from_secs(60),
        in_sync(3),
    );
    let dirs: Vec<_> = BROKER_IDS
        .iter()
        .map(|id| c.art.path(&format!("broker{id}")))
        .collect();
    let held: usize = dirs
        .iter()
        .map(|d| partition_dirs(d, "scratch").len())
        .sum();
    assert_eq!(held, 6, "3 partitions × RF 2 on the brokers' disks");
    let delete = c.admin_tool(
        &all,
        "delete-scratch",
        TOPIC_COMMAND,
        &["--delete", "--topic", "scratch"],
    );
    delete.assert_ok("kafka-topics --delete --topic scratch");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let list = c.admin_tool(&all, "list", TOPIC_COMMAND, &["--list"]);
        let left: Vec<String> = dirs
            .iter()
            .flat_map(|d| partition_dirs(d, "scratch"))
            .collect();
        let listed = list.stdout.lines().any(|l| l.trim() == "scratch");
        if !listed && left.is_empty() {
            assert!(list.stdout.lines().any(|l| l.trim() == TOPIC));
            break;
        }
        assert!(
            Instant::now() < deadline,
            "scratch still listed ({listed}) or on disk: {left:?}"
        );
        std::thread::sleep(Duration::from_secs(1));
    }
    step(
        &clock,
        "scratch deleted from the cluster and the brokers' disks",
    );

    // Feature changes through a broker while producing.
    let feature = "org.apache.kafka.tools.FeatureCommand";
    for (args, said) in [
        (
            &["downgrade", "--feature", "transaction.version=1"][..],
            "transaction.version was downgraded to 1.",
        ),
        (
            &["upgrade", "--feature", "transaction.version=2"][..],
            "transaction.version was upgraded to 2.",
        ),
    ] {
        let out = c.admin_tool(&all, "features", feature, args);
        assert!(
            out.status.success() && out.stdout.contains(said),
            "{}",
            format!("{}{}", out.stdout, out.stderr)
        );
    }
    let out = c.admin_tool(&all, "features-describe", feature, &["describe"]);
    // Kafka 4.1 separates the columns with tabs, 4.4 pads them.
    let words = out.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        words.contains("Feature: transaction.version SupportedMinVersion: 0 SupportedMaxVersion: 2 FinalizedVersionLevel: 2"),
        "{}",
        format!("{}{}", out.stdout, out.stderr)
    );
    step(&clock, "transaction.version downgraded and upgraded again");

    // Everything acked is there, on all six partitions.
    let acked = producer.report().acked.len();
    producer.wait_acked(acked + 600, Duration::from_secs(60));
    let p = producer.stop(Duration::from_secs(60));
    assert!(
        p.errors.is_empty(),
        "{:?}",
        &p.errors[..p.errors.len().min(5)]
    );
    let used: std::collections::BTreeSet<i32> = p.acked.iter().map(|a| a.partition).collect();
    assert!(
        used.iter().any(|p| *p >= 3),
        "the producer wrote to the new partitions: {used:?}"
    );
    let every = [first.acked, p.acked].concat();
    let r = c.consume(&all, TOPIC, "g-admin", &every, Duration::from_secs(90));
    let d = check_delivery(&every, &r.records);
    step(
        &clock,
        &format!(
            "{} acked, {} consumed, {} redelivered",
            d.acked, d.consumed, d.redelivered
        ),
    );
    d.assert_ok("after the topic changes");

    // Every controller logs each committed change as Kafka's controller managers do (#37):
    // once per record (a record replayed twice would be logged twice).
    let once = |line: String| (line, true);
    let some = |line: &str| (line.to_string(), false);
    for node in &c.nodes {
        let log = node.log_text();
        for (line, exactly_once) in [
            once(format!(
                "Replayed TopicRecord for topic {TOPIC} with topic ID "
            )),
            once(format!(
                "Replayed PartitionRecord for new partition {TOPIC}-0 with topic ID "
            )),
            once("Replayed RemoveTopicRecord for topic scratch with ID ".to_string()),
            once(
                "Replayed initial RegisterBrokerRecord for broker 100: \
                 RegisterBrokerRecord(brokerId=100,"
                    .to_string(),
            ),
            once(format!(
                "Replayed ConfigRecord for ConfigResource(type=TOPIC, name='{TOPIC}') which set \
                 configuration min.insync.replicas to 2"
            )),
            once(
                "Replayed a FeatureLevelRecord setting feature transaction.version to 1"
                    .to_string(),
            ),
            some(
                "Replayed BrokerRegistrationChangeRecord modifying the registration for broker \
                 100: BrokerRegistrationChangeRecord(brokerId=100, brokerEpoch=",
            ),
            some("Replayed partition assignment change PartitionChangeRecord("),
        ] {
            let n = log.matches(&line).count();
            assert!(
                if exactly_once { n == 1 } else { n >= 1 },
                "node {} logs '{line}' {} (found {n})",
                node.id,
                if exactly_once {
                    "once"
                } else {
                    "at least once"
                }
            );
        }
    }
}
