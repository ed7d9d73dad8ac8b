//! Dynamic quorums (KIP-853) mixing Apache Kafka and ferrokraft controllers (default Kafka
//! 4.1.2; `KAFKA_VERSION` selects another), grown and shrunk with Kafka's own
//! `kafka-metadata-quorum add-controller` / `remove-controller`. Needs Java 17 + Maven.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::time::Duration;

use support::cluster::{serial, Cluster, Impl, Quorum};

/// The high watermark through `via` moves past where it is now (the leader's idle NoOpRecords
/// keep it moving): the quorum commits.
fn assert_commits(c: &Cluster, via: i32) -> i32 {
    let (leader, _, hw) = c.wait_for_leader(via, 1, Duration::from_secs(60));
    let (again, _, _) = c.wait_for_leader(via, hw + 5, Duration::from_secs(60));
    assert_eq!(leader, again, "leadership changed while checking commits");
    leader
}

/// #7 scenario 1: a Kafka controller formatted `--standalone` leads; two ferrokraft
/// controllers formatted `--no-initial-controllers` follow as observers and are added with
/// `add-controller`; leadership moves to ferrokraft; the Kafka voter is removed with
/// `remove-controller` through ferrokraft; the quorum keeps committing.
#[test]
fn kafka_standalone_grows_with_ferrokraft_then_the_kafka_voter_is_removed() {
    let _serial = serial();
    let mut c = Cluster::kafka_standalone_then_two_ferrokraft("dyn-kafka-first");
    for via in 1..=3 {
        c.wait_voters(via, &[1, 2, 3], Duration::from_secs(60));
    }
    let leader = c.make_leader_kind(Impl::Ferrokraft, Duration::from_secs(240));
    c.wait_caught_up(leader, Duration::from_secs(60));
    let kafka_dir = c.directory_id(1);
    c.remove_controller(1, &kafka_dir, leader)
        .assert_ok("remove-controller 1");
    c.wait_voters(leader, &[2, 3], Duration::from_secs(60));
    assert_eq!(assert_commits(&c, leader), leader);
    c.assert_kafka_alive();
    c.assert_kafka_errors_explained(&[]);
}

/// #7 scenario 2: ferrokraft formatted `--standalone` leads; two Kafka controllers are added
/// while it leads, then one is removed again; the quorum keeps committing throughout.
#[test]
fn ferrokraft_standalone_adds_and_removes_kafka_controllers() {
    let _serial = serial();
    let mut c = Cluster::with_quorum(
        "dyn-ferrokraft-first",
        &[Impl::Ferrokraft, Impl::Kafka, Impl::Kafka],
        &[],
        Quorum::Dynamic { standalone: 1 },
    );
    c.start_all();
    let (leader, _, _) = c.wait_for_leader(1, 1, Duration::from_secs(90));
    assert_eq!(leader, 1, "the standalone ferrokraft controller leads");
    c.add_controllers(&[2, 3], 1);
    for via in 1..=3 {
        c.wait_voters(via, &[1, 2, 3], Duration::from_secs(60));
    }
    assert_eq!(assert_commits(&c, 1), 1);
    let dir3 = c.directory_id(3);
    c.remove_controller(3, &dir3, 1)
        .assert_ok("remove-controller 3");
    c.wait_voters(1, &[1, 2], Duration::from_secs(60));
    c.wait_voters(2, &[1, 2], Duration::from_secs(60));
    assert_eq!(assert_commits(&c, 1), 1, "ferrokraft still leads");
    c.assert_kafka_alive();
    c.assert_kafka_errors_explained(&[]);
}

/// #7 scenario 3: replace a dead voter the way Kafka's documentation describes — remove the
/// lost replica by its old directory id, format a fresh directory (new directory id, same node
/// id, `--no-initial-controllers`), start it, add it back. Done for a ferrokraft and then a
/// Kafka voter of a quorum led by ferrokraft.
#[test]
fn a_dead_voter_is_replaced_with_a_new_directory_id() {
    let _serial = serial();
    let mut c = Cluster::with_quorum(
        "dyn-replace",
        &[Impl::Ferrokraft, Impl::Kafka, Impl::Ferrokraft],
        &[],
        Quorum::Dynamic { standalone: 1 },
    );
    c.start_all();
    let (leader, _, _) = c.wait_for_leader(1, 1, Duration::from_secs(90));
    assert_eq!(leader, 1);
    c.add_controllers(&[2, 3], 1);
    for dead in [3, 2] {
        let old_dir = c.directory_id(dead);
        c.node(dead).kill();
        c.remove_controller(dead, &old_dir, 1)
            .assert_ok(&format!("remove-controller {dead}"));
        let others: Vec<i32> = [1, 2, 3].into_iter().filter(|i| *i != dead).collect();
        c.wait_voters(1, &others, Duration::from_secs(60));
        c.wipe_and_format(dead);
        let new_dir = c.directory_id(dead);
        assert_ne!(new_dir, old_dir, "a fresh directory id for node {dead}");
        c.start(dead);
        c.wait_caught_up(1, Duration::from_secs(90));
        c.add_controller(dead, 1)
            .assert_ok(&format!("add-controller {dead} again"));
        let voters = c.wait_voters(1, &[1, 2, 3], Duration::from_secs(60));
        assert!(
            voters.contains(&(dead, new_dir.clone())),
            "node {dead} is a voter again with its new directory id: {voters:?}"
        );
        assert_eq!(assert_commits(&c, 1), 1, "ferrokraft still leads");
    }
    c.assert_kafka_alive();
    c.assert_kafka_errors_explained(&[]);
}

/// Two Kafka controllers and ferrokraft (node 3) on a static quorum, started, for the
/// kraft.version upgrade scenarios; `None` on Kafka 4.0, whose raft layer has no upgrade
/// (KafkaRaftClient.upgradeKRaftVersion and the followers' UpdateRaftVoter at kraft.version 0
/// arrived in 4.1; docs/interop.md).
fn static_kafka_kafka_ferrokraft(name: &str) -> Option<Cluster> {
    if support::kafka::kafka_version().starts_with("4.0.") {
        println!(
            "Kafka {}: no kraft.version upgrade to test",
            support::kafka::kafka_version()
        );
        return None;
    }
    let mut c = Cluster::new(name, &[Impl::Kafka, Impl::Kafka, Impl::Ferrokraft], &[]);
    // The second follower to time out wins after a Kafka leader dies (see
    // tests/interop_snapshots.rs): a longer fetch timeout lets ferrokraft take over.
    c.node(3)
        .add_props(&[("controller.quorum.fetch.timeout.ms", "3500")]);
    c.start_all();
    Some(c)
}

/// #7: the static → dynamic upgrade Kafka 4.1 supports. A static quorum (kraft.version 0) of
/// two Kafka controllers and ferrokraft, Kafka leading, is upgraded with `kafka-features
/// upgrade --feature kraft.version=1`; the first VotersRecord carries every voter's directory
/// id, ferrokraft's included (it sends it in every Fetch, as Kafka does); ferrokraft follows,
/// then leads the upgraded quorum.
#[test]
fn static_quorum_upgrades_to_kraft_version_1() {
    let _serial = serial();
    let Some(mut c) = static_kafka_kafka_ferrokraft("dyn-upgrade") else {
        return;
    };
    let leader = c.make_leader_kind(Impl::Kafka, Duration::from_secs(240));
    c.wait_caught_up(leader, Duration::from_secs(60));
    // The leader learns each voter's supported kraft.version range from its UpdateRaftVoter,
    // which a follower sends one update-voter period after it starts following (Kafka's
    // FollowerState timer, ours too); until every voter has, Kafka refuses the upgrade with
    // "not all of the voters support it", and an operator runs it again.
    let bootstrap = format!("127.0.0.1:{}", c.nodes[(leader - 1) as usize].port);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let out = support::kafka::kafka().tool(
            &c.art,
            "upgrade-kraft-version",
            "org.apache.kafka.tools.FeatureCommand",
            &[
                "--bootstrap-controller",
                &bootstrap,
                "upgrade",
                "--feature",
                "kraft.version=1",
            ],
        );
        let waiting = out.stdout.contains("not all of the voters support it");
        if !waiting || std::time::Instant::now() > deadline {
            out.assert_ok("kafka-features upgrade kraft.version=1");
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    let want: Vec<(i32, String)> = (1..=3).map(|id| (id, c.directory_id(id))).collect();
    for via in [leader, 3] {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let mut voters = c.voters(via).unwrap_or_default();
            voters.sort();
            if voters == want {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "voters through node {via} never carried every directory id: {voters:?}"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }
    let leader = c.make_leader_kind(Impl::Ferrokraft, Duration::from_secs(240));
    assert_eq!(leader, 3);
    assert_eq!(
        assert_commits(&c, 1),
        3,
        "ferrokraft leads the upgraded quorum"
    );
    let mut voters = c.voters(1).unwrap_or_default();
    voters.sort();
    assert_eq!(voters, want, "the voter set survives the change of leader");
    c.assert_kafka_alive();
    c.assert_kafka_errors_explained(&[]);
}

/// #7 upgrade, ferrokraft leading: the same static quorum of two Kafka controllers and
/// ferrokraft, ferrokraft leading, upgraded with `kafka-features upgrade --feature
/// kraft.version=1` through ferrokraft (its controller hands the upgrade to its Raft layer).
/// The Kafka followers' UpdateRaftVoter gave it their directory ids and kraft.version ranges;
/// its KRaftVersionRecord + VotersRecord batch is what the Kafka controllers then follow, and
/// a Kafka controller leads the upgraded quorum with that voter set.
#[test]
fn ferrokraft_leader_upgrades_a_static_quorum_to_kraft_version_1() {
    let _serial = serial();
    let Some(mut c) = static_kafka_kafka_ferrokraft("dyn-upgrade-ferrokraft") else {
        return;
    };
    let leader = c.make_leader_kind(Impl::Ferrokraft, Duration::from_secs(240));
    assert_eq!(leader, 3);
    c.wait_caught_up(leader, Duration::from_secs(60));
    // The upgrade is refused until every follower's UpdateRaftVoter reached the leader (one
    // fetch timeout after it follows this leader): Kafka's own refusal, retried.
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let out = support::kafka::kafka().tool(
            &c.art,
            &format!("upgrade-kraft-version-{attempt}"),
            "org.apache.kafka.tools.FeatureCommand",
            &[
                "--bootstrap-controller",
                &format!("127.0.0.1:{}", c.nodes[2].port),
                "upgrade",
                "--feature",
                "kraft.version=1",
            ],
        );
        if out.status.success() {
            assert!(
                out.stdout.contains("kraft.version was upgraded to 1."),
                "{}",
                out.stdout
            );
            break;
        }
        let text = format!("{}{}", out.stdout, out.stderr);
        assert!(
            text.contains("Invalid upgrade of kraft.version to KRAFT_VERSION_1 because not all of the voters support it")
                && std::time::Instant::now() < deadline,
            "kafka-features upgrade kraft.version=1 through ferrokraft:\n{text}"
        );
        std::thread::sleep(Duration::from_secs(1));
    }
    let want: Vec<(i32, String)> = (1..=3).map(|id| (id, c.directory_id(id))).collect();
    for via in [1, 3] {
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let mut voters = c.voters(via).unwrap_or_default();
            voters.sort();
            if voters == want {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "voters through node {via} never carried every directory id: {voters:?}"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
    }
    let leader = c.make_leader_kind(Impl::Kafka, Duration::from_secs(240));
    assert_eq!(
        assert_commits(&c, leader),
        leader,
        "a Kafka controller leads the upgraded quorum"
    );
    let mut voters = c.voters(3).unwrap_or_default();
    voters.sort();
    assert_eq!(voters, want, "the voter set survives the change of leader");
    c.assert_kafka_alive();
    c.assert_kafka_errors_explained(&[]);
}

/// The migration procedure of docs/operating.md on a dynamic quorum: three Kafka controllers
/// (one formatted `--standalone`, two added with `add-controller`) are replaced one at a time
/// by ferrokraft on their own directories, then back by Kafka. Each replacement keeps the
/// node's directory id, so it stays a voter without `remove-controller`/`add-controller`; a
/// leader is elected and catches up after each step and the quorum commits.
#[test]
fn a_dynamic_kafka_quorum_is_replaced_by_ferrokraft_one_at_a_time_and_back() {
    let _serial = serial();
    let mut c = Cluster::with_quorum(
        "dyn-rolling",
        &[Impl::Kafka, Impl::Kafka, Impl::Kafka],
        &[],
        Quorum::Dynamic { standalone: 1 },
    );
    c.start_all();
    c.wait_for_leader(1, 1, Duration::from_secs(90));
    c.add_controllers(&[2, 3], 1);
    let voters = c.wait_voters(1, &[1, 2, 3], Duration::from_secs(60));
    for to in [Impl::Ferrokraft, Impl::Kafka] {
        for id in 1..=3 {
            c.node(id).terminate();
            c.node(id).kind = to;
            c.start(id);
            let (leader, _, _) = c.wait_for_leader_any(&[], 1, Duration::from_secs(90));
            c.wait_caught_up(leader, Duration::from_secs(90));
            let now = c.wait_voters(leader, &[1, 2, 3], Duration::from_secs(60));
            assert_eq!(
                now, voters,
                "node {id} replaced by {to:?}: the same voters and directory ids"
            );
            assert_commits(&c, leader);
        }
    }
    c.assert_kafka_alive();
    c.assert_kafka_errors_explained(&[]);
}
