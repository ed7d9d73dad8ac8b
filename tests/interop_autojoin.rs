//! Auto-join (`controller.quorum.auto.join.enable`, Kafka 4.2's KIP-853 auto-join): a quorum
//! formatted `--standalone` grows to three voters with no `add-controller`, the observers
//! adding themselves; a node with auto-join off stays an observer. The voters are read with
//! Kafka's `kafka-metadata-quorum describe --status` (Kafka 4.1.2's jars in CI; needs Java 17
//! and Maven). The mixed variants (Kafka 4.2+ controllers next to ferrokraft's) run with
//! `KAFKA_VERSION=4.2.2` or later and say so and return on older Kafka, whose controllers do
//! not auto-join.
//!
//! ferrokraft auto-joins when it presents Kafka 4.2 or later, and Kafka's auto-join sends
//! AddRaftVoter v1 (AckWhenCommitted false), which only a leader presenting 4.2 or later
//! takes. Every ferrokraft node here presents the release under test, at least 4.2
//! (`ferrokraft.kafka.release=4.2` in CI, where Kafka is 4.1.2), on a directory formatted at
//! the cluster's usual level.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::time::Duration;

use ferrokraft::codec::versions::Release;
use support::cluster::{serial, Cluster, Impl, Quorum};

const AUTO_JOIN: (&str, &str) = ("controller.quorum.auto.join.enable", "true");

/// The release ferrokraft nodes present: the one under test, or the first that auto-joins
/// under an older Kafka.
fn auto_join_release() -> &'static str {
    let under_test = support::kafka::ferrokraft_release();
    if under_test.has_auto_join() {
        return under_test.name();
    }
    Release::ALL
        .into_iter()
        .find(|r| r.has_auto_join())
        .unwrap_or(Release::NEWEST)
        .name()
}

/// Formats `kinds` (node 1 `--standalone`, the others `--no-initial-controllers`), every node
/// with auto-join on but those in `off`, every ferrokraft node presenting 4.2 or later; starts node 1
/// and waits for it to lead alone, then starts the rest.
fn standalone_with_auto_join(test: &str, kinds: &[Impl], off: &[i32]) -> Cluster {
    let mut c = Cluster::with_quorum(test, kinds, &[AUTO_JOIN], Quorum::Dynamic { standalone: 1 });
    for id in 1..=kinds.len() as i32 {
        let node = c.node(id);
        if node.kind == Impl::Ferrokraft {
            // Appended after the line the cluster helper writes: the last one wins.
            node.add_props(&[("ferrokraft.kafka.release", auto_join_release())]);
        }
        if off.contains(&id) {
            node.add_props(&[("controller.quorum.auto.join.enable", "false")]);
        }
    }
    c.start(1);
    let (leader, _, _) = c.wait_for_leader(1, 1, Duration::from_secs(90));
    assert_eq!(leader, 1, "the standalone controller leads");
    c.wait_voters(1, &[1], Duration::from_secs(30));
    for id in 2..=kinds.len() as i32 {
        c.start(id);
    }
    c
}

/// The voters every node reports are `voters`, each with the directory id in its own
/// meta.properties (a node joined as itself, not as a stale key).
fn assert_voters_everywhere(c: &Cluster, nodes: &[i32], voters: &[i32]) {
    for &via in nodes {
        let seen = c.wait_voters(via, voters, Duration::from_secs(120));
        for &id in voters {
            assert!(
                seen.contains(&(id, c.directory_id(id))),
                "through node {via}: node {id} is a voter with its own directory id: {seen:?}"
            );
        }
    }
}

/// Whether the node's log shows it auto-joining (ferrokraft's line on each attempt).
fn ferrokraft_tried_to_join(c: &Cluster, id: i32) -> bool {
    c.nodes[(id - 1) as usize]
        .all_logs_text()
        .contains("Auto-join: asking leader")
}

/// CI: ferrokraft alone. Node 1 `--standalone` leads; nodes 2 and 3 (auto-join on) become
/// voters by themselves; node 4 (auto-join off) stays an observer while the voters commit.
#[test]
fn a_standalone_quorum_grows_to_three_voters_by_auto_join() {
    let _serial = serial();
    let mut c = standalone_with_auto_join(
        "autojoin-ferrokraft",
        &[
            Impl::Ferrokraft,
            Impl::Ferrokraft,
            Impl::Ferrokraft,
            Impl::Ferrokraft,
        ],
        &[4],
    );
    assert_voters_everywhere(&c, &[1, 2, 3, 4], &[1, 2, 3]);
    assert!(ferrokraft_tried_to_join(&c, 2) && ferrokraft_tried_to_join(&c, 3));
    // Node 4 has had many update-voter periods (2 s each) and follows the leader, yet is not
    // a voter: it never asked.
    let (_, _, hw) = c.wait_for_leader(4, 1, Duration::from_secs(60));
    c.wait_for_leader(4, hw + 5, Duration::from_secs(60));
    assert_eq!(
        c.voters(1).map(|v| v.len()),
        Some(3),
        "node 4 stays an observer"
    );
    assert!(!ferrokraft_tried_to_join(&c, 4));
    let status = c.describe(1, "status").unwrap();
    let observers = status
        .lines()
        .find(|l| l.starts_with("CurrentObservers:"))
        .unwrap_or_default();
    assert!(observers.contains("{\"id\": 4"), "{status}");
    assert!(c.node(4).is_running());
}

/// CI: ferrokraft alone. A voter whose disk is replaced (same node id, a fresh directory id,
/// formatted `--no-initial-controllers`) comes back as an observer whose id is a voter under
/// its old directory id: auto-join removes that stale voter, then adds the node as it is now.
#[test]
fn a_reformatted_voter_removes_its_stale_self_and_joins_again_by_auto_join() {
    let _serial = serial();
    let mut c = standalone_with_auto_join(
        "autojoin-reformatted",
        &[Impl::Ferrokraft, Impl::Ferrokraft, Impl::Ferrokraft],
        &[],
    );
    assert_voters_everywhere(&c, &[1, 2, 3], &[1, 2, 3]);
    let old_dir = c.directory_id(3);
    c.node(3).kill();
    c.wipe_and_format(3);
    let new_dir = c.directory_id(3);
    assert_ne!(new_dir, old_dir);
    c.start(3);
    // Until then the voter set still names node 3 with its old directory.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while std::time::Instant::now() < deadline
        && !c
            .voters(1)
            .is_some_and(|v| v.contains(&(3, new_dir.clone())) && v.len() == 3)
    {
        std::thread::sleep(Duration::from_millis(500));
    }
    assert_voters_everywhere(&c, &[1, 2, 3], &[1, 2, 3]);
    let voters = c.voters(1).unwrap();
    assert!(
        voters.contains(&(3, new_dir)) && !voters.iter().any(|(_, d)| *d == old_dir),
        "{voters:?}"
    );
    assert!(c.nodes[2]
        .all_logs_text()
        .contains("Auto-join: removing the stale voter"));
}

/// Kafka 4.2+ controllers run next to ferrokraft's: false on older Kafka (printed).
fn kafka_auto_joins() -> bool {
    let v = support::kafka::kafka_version();
    let joins = !(v.starts_with("4.0.") || v.starts_with("4.1."));
    if !joins {
        println!("Kafka {v}: its controllers do not auto-join (Kafka 4.2 and later do); run with KAFKA_VERSION=4.2.2");
    }
    joins
}

/// Mixed, ferrokraft leading: ferrokraft node 1 `--standalone`; Kafka node 2 and ferrokraft
/// node 3 auto-join it.
#[test]
fn kafka_and_ferrokraft_auto_join_a_ferrokraft_leader() {
    if !kafka_auto_joins() {
        return;
    }
    let _serial = serial();
    let mut c = standalone_with_auto_join(
        "autojoin-mixed-ferrokraft-leads",
        &[Impl::Ferrokraft, Impl::Kafka, Impl::Ferrokraft],
        &[],
    );
    assert_voters_everywhere(&c, &[1, 2, 3], &[1, 2, 3]);
    assert!(ferrokraft_tried_to_join(&c, 3));
    c.assert_kafka_alive();
    c.assert_kafka_errors_explained(&[]);
}

/// Mixed, Kafka leading: Kafka node 1 `--standalone`; ferrokraft node 2 and Kafka node 3
/// auto-join it.
#[test]
fn ferrokraft_and_kafka_auto_join_a_kafka_leader() {
    if !kafka_auto_joins() {
        return;
    }
    let _serial = serial();
    let mut c = standalone_with_auto_join(
        "autojoin-mixed-kafka-leads",
        &[Impl::Kafka, Impl::Ferrokraft, Impl::Kafka],
        &[],
    );
    assert_voters_everywhere(&c, &[1, 2, 3], &[1, 2, 3]);
    assert!(ferrokraft_tried_to_join(&c, 2));
    c.assert_kafka_alive();
    c.assert_kafka_errors_explained(&[]);
}
