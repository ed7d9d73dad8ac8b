//! Mixed quorums with real Apache Kafka controllers (default 4.1.2; `KAFKA_VERSION` selects
//! another): ferrokraft follows a Kafka leader byte for byte, wins elections, and leads Kafka
//! followers. Needs Java 17 + Maven; never skipped.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::time::{Duration, Instant};

use support::cluster::{common_prefix_equal, serial, Cluster, Impl};
use support::kafka::kafka;

/// Scenario a: two Kafka controllers and one ferrokraft node, static voters. Kafka leads,
/// ferrokraft follows and catches up (as kafka-metadata-quorum shows), its segment bytes equal
/// the leader's, and kafka-dump-log reads its files.
#[test]
fn ferrokraft_follows_a_kafka_leader_byte_for_byte() {
    let _serial = serial();
    // ferrokraft never times out first here, so a Kafka node leads.
    let mut c = Cluster::new(
        "follows-kafka",
        &[Impl::Kafka, Impl::Kafka, Impl::Ferrokraft],
        &[],
    );
    c.start(1);
    c.start(2);
    let (leader, _, _) = c.wait_for_leader(1, 1, Duration::from_secs(90));
    assert!(leader == 1 || leader == 2, "a Kafka node leads");
    c.start(3);
    // The Kafka active controller writes a NoOpRecord every 500 ms: the log keeps growing.
    let (_, _, hw) = c.wait_for_leader(3, 1, Duration::from_secs(60));
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let rows = c.replication(3);
        let me = rows.iter().find(|r| r.0 == 3).map(|r| r.1).unwrap_or(-1);
        if me >= hw {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "ferrokraft did not catch up to {hw}: {rows:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    // KIP-919 the other way: ferrokraft registered with the Kafka active controller, whose
    // QuorumController wrote the record; it came back to ferrokraft through replication.
    let registered = wait_registered(&mut c, 3, &[1, 2, 3]);
    assert_eq!(
        registered,
        [1, 2, 3],
        "controllers registered in ferrokraft's log"
    );
    assert!(
        c.node(3)
            .log_text()
            .contains("The active controller acknowledged our registration"),
        "the Kafka leader acknowledged ferrokraft's ControllerRegistration"
    );
    let leader_log = c.node(leader).segment();
    let ours = c.node(3).segment();
    assert!(
        ours.len() > 500,
        "ferrokraft replicated data ({} bytes)",
        ours.len()
    );
    match common_prefix_equal(&leader_log, &ours) {
        Ok(n) => assert!(
            n == ours.len() || n == leader_log.len(),
            "compared {n} bytes"
        ),
        Err(at) => panic!("ferrokraft's segment differs from the Kafka leader's at byte {at}"),
    }
    let seg = c.node(3).partition_dir().join("00000000000000000000.log");
    let out = kafka().tool(
        &c.art,
        "dump-log",
        kafka().dump_log_class(),
        &[
            "--cluster-metadata-decoder",
            "--files",
            seg.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "dump-log failed: {}", out.stderr);
    // 4.1+ prints the decoded LeaderChange record; 4.0 only its control type.
    assert!(
        out.stdout.contains("LeaderChange") || out.stdout.contains("controlType: LEADER_CHANGE"),
        "dump-log printed the LeaderChange batch"
    );
    assert!(!out.stdout.contains("isvalid: false"), "every batch valid");
    assert!(
        !out.stderr.contains("Exception"),
        "no exceptions: {}",
        out.stderr
    );
}

/// Scenario b: failover both ways. The Kafka leader is killed until ferrokraft wins; the Kafka
/// follower then replicates from ferrokraft and its bytes equal ferrokraft's; DescribeQuorum
/// through ferrokraft shows ferrokraft as leader; no Kafka controller logs an error.
#[test]
fn failover_both_ways_between_kafka_and_ferrokraft() {
    let _serial = serial();
    let mut c = Cluster::new(
        "failover",
        &[Impl::Kafka, Impl::Kafka, Impl::Ferrokraft],
        &[],
    );
    c.start_all();
    let (mut leader, _, _) = c.wait_for_leader(3, 1, Duration::from_secs(90));
    let deadline = Instant::now() + Duration::from_secs(240);
    while leader != 3 {
        assert!(
            Instant::now() < deadline,
            "ferrokraft never won an election"
        );
        c.node(leader).kill();
        let (next, _, _) = c.wait_for_leader(3, 1, Duration::from_secs(60));
        let art_leader = leader;
        c.start(art_leader);
        leader = next;
        if leader != 3 {
            // Let the restarted node catch up before the next round.
            std::thread::sleep(Duration::from_secs(3));
        }
    }
    let (l, epoch, hw) = c.wait_for_leader(3, 1, Duration::from_secs(30));
    assert_eq!(
        l, 3,
        "DescribeQuorum through ferrokraft names ferrokraft (epoch {epoch}, hw {hw})"
    );
    // Both Kafka followers replicate from ferrokraft.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let rows = c.replication(3);
        let leader_leo = rows.iter().find(|r| r.0 == 3).map(|r| r.1).unwrap_or(-1);
        let all = rows.len() == 3 && rows.iter().all(|r| r.1 == leader_leo);
        if all {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "Kafka followers did not catch up: {rows:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    let ours = c.node(3).segment();
    for id in [1, 2] {
        let theirs = c.node(id).segment();
        if let Err(at) = common_prefix_equal(&ours, &theirs) {
            panic!("Kafka node {id}'s segment differs from ferrokraft's at byte {at}");
        }
    }
    for id in [1, 2] {
        let log = c.node(id).log_text();
        assert!(
            !log.contains("IllegalStateException"),
            "node {id} hit an IllegalStateException"
        );
        assert!(!log.contains("Exiting Kafka"), "node {id} exited");
        assert!(c.node(id).is_running(), "node {id} still runs");
    }
}

/// Graceful handover: SIGTERM to a ferrokraft leader resigns with EndQuorumEpoch and a Kafka
/// node takes over without waiting for a fetch timeout.
#[test]
fn ferrokraft_leader_resigns_gracefully_to_kafka() {
    let _serial = serial();
    let mut c = Cluster::new(
        "graceful",
        &[Impl::Ferrokraft, Impl::Kafka, Impl::Kafka],
        &[],
    );
    c.start(1);
    c.start(2);
    c.start(3);
    let mut leader = c.wait_for_leader(1, 1, Duration::from_secs(90)).0;
    let deadline = Instant::now() + Duration::from_secs(180);
    while leader != 1 {
        assert!(
            Instant::now() < deadline,
            "ferrokraft never won an election"
        );
        c.node(leader).kill();
        let next = c.wait_for_leader(1, 1, Duration::from_secs(60)).0;
        c.start(leader);
        std::thread::sleep(Duration::from_secs(3));
        leader = next;
    }
    // The new leader is read from the Kafka nodes' own logs: while ferrokraft led, the Kafka
    // controllers could not register (ControllerRegistration is not served yet), so right after
    // the handover `kafka-metadata-quorum` through a Kafka node may find no controller for a
    // while (docs/interop.md).
    let leader_lines = |c: &Cluster, id: i32| {
        c.nodes[(id - 1) as usize]
            .log_text()
            .matches("Completed transition to Leader(")
            .count()
    };
    let before: Vec<usize> = [2, 3].iter().map(|id| leader_lines(&c, *id)).collect();
    let t0 = Instant::now();
    c.node(1).terminate();
    let next = loop {
        let now: Vec<usize> = [2, 3].iter().map(|id| leader_lines(&c, *id)).collect();
        if let Some(i) = (0..2).find(|i| now[*i] > before[*i]) {
            break [2, 3][i];
        }
        assert!(
            t0.elapsed() < Duration::from_secs(30),
            "no Kafka node took over within 30 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    let took = t0.elapsed();
    let log = c.node(1).log_text();
    assert!(
        log.contains("Terminating process due to signal SIGTERM"),
        "{log}"
    );
    assert!(log.contains("shut down completed"), "{log}");
    println!("graceful handover to node {next} observed after {took:?} (SIGTERM to Kafka's leader log line)");
}

/// Scenario g: pre-vote across implementations. With a Kafka leader, a Kafka follower and then
/// a ferrokraft follower are each SIGSTOPped past the fetch timeout and resumed: their
/// pre-votes are rejected (the others still follow the leader) and the epoch never moves.
#[test]
fn paused_followers_of_either_kind_do_not_bump_the_epoch() {
    let _serial = serial();
    let mut c = Cluster::new(
        "prevote",
        &[Impl::Kafka, Impl::Kafka, Impl::Ferrokraft],
        &[],
    );
    c.start_all();
    let leader = c.make_leader_kind(Impl::Kafka, Duration::from_secs(240));
    c.wait_caught_up(leader, Duration::from_secs(60));
    let (_, epoch, _) = c.wait_for_leader(leader, 1, Duration::from_secs(30));
    let kafka_follower = if leader == 1 { 2 } else { 1 };
    for paused in [kafka_follower, 3] {
        c.node(paused).pause();
        // controller.quorum.fetch.timeout.ms is 2000: 5 s is well past it.
        std::thread::sleep(Duration::from_secs(5));
        c.node(paused).resume();
        // Observe for a while: the resumed node pre-votes, is rejected, and fetches again.
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(10) {
            let (l, e, _) = c.wait_for_leader(leader, 1, Duration::from_secs(30));
            assert_eq!(
                (l, e),
                (leader, epoch),
                "pausing node {paused} changed the leader or epoch"
            );
            std::thread::sleep(Duration::from_millis(500));
        }
        c.wait_caught_up(leader, Duration::from_secs(60));
        let (l, e, _) = c
            .try_leader(paused, 1)
            .expect("the resumed node knows the leader");
        assert_eq!(
            (l, e),
            (leader, epoch),
            "node {paused} follows the same leader"
        );
    }
    let text = c.node(3).log_text();
    assert!(
        text.contains("Transitioned to prospective"),
        "the paused ferrokraft node's fetch timeout fired (it pre-voted)"
    );
    assert!(
        !text.contains("Transitioned to candidate"),
        "ferrokraft never became a candidate"
    );
    let kafka_text = c.node(kafka_follower).log_text();
    println!(
        "Kafka follower {kafka_follower} went prospective: {}",
        kafka_text.contains("transition to ProspectiveState")
    );
    c.assert_kafka_alive();
    c.assert_kafka_errors_explained(&[]);
}

/// Scenario h: ferrokraft is the first leader of a fresh cluster (the Kafka controllers get a
/// long election timeout so they cannot win first). The Kafka followers replicate its log byte
/// for byte and stay up; what they log because ferrokraft writes no bootstrap metadata records
/// is documented in docs/interop.md and allowed here.
#[test]
fn ferrokraft_first_leader_of_a_fresh_cluster_keeps_kafka_followers_healthy() {
    let _serial = serial();
    let mut c = Cluster::new(
        "first-leader",
        &[Impl::Ferrokraft, Impl::Kafka, Impl::Kafka],
        &[],
    );
    for id in [2, 3] {
        c.node(id)
            .add_props(&[("controller.quorum.election.timeout.ms", "20000")]);
    }
    c.node(1).workload = Some((10, 256));
    c.start_all();
    let (leader, epoch, _) = c.wait_for_leader(1, 1, Duration::from_secs(90));
    assert_eq!((leader, epoch), (1, 1), "ferrokraft won the first election");
    c.wait_caught_up(1, Duration::from_secs(90));
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_secs(5));
        c.assert_kafka_alive();
    }
    let (l, e, _) = c.wait_for_leader(1, 1, Duration::from_secs(30));
    assert_eq!((l, e), (1, 1), "ferrokraft still leads epoch 1");
    c.wait_converged(1, &[1, 2, 3], Duration::from_secs(60));
    // KIP-919 across implementations: the Kafka controllers registered with the ferrokraft
    // leader (API 70), ferrokraft registered itself, every RegisterControllerRecord was
    // committed, and Kafka's own ControllerRegistrationManager found its record in the log.
    let registered = wait_registered(&mut c, 1, &[1, 2, 3]);
    assert_eq!(registered, [1, 2, 3], "controllers registered in the log");
    for id in [2, 3] {
        assert!(
            c.node(id)
                .log_text()
                .contains("Our registration has been persisted to the metadata log."),
            "Kafka controller {id} saw its registration committed"
        );
    }
    // Kafka answers DescribeCluster from those registrations: the tool finds the ferrokraft
    // leader through a Kafka controller.
    let (l, e, _) = c.wait_for_leader(2, 1, Duration::from_secs(30));
    assert_eq!((l, e), (1, 1), "kafka-metadata-quorum via Kafka node 2");
    c.assert_kafka_alive();
    c.assert_kafka_errors_explained(&[]);
}

/// Polls node `id`'s log (up to 60 s) until its RegisterControllerRecords name `want`; returns
/// the controller ids registered last seen.
fn wait_registered(c: &mut Cluster, id: i32, want: &[i32]) -> Vec<i32> {
    let t0 = Instant::now();
    loop {
        let mut image = ferrokraft::metadata::image::MetadataImage::default();
        image.replay_batches(&c.node(id).log_bytes(), i64::MAX, "test");
        let ids: Vec<i32> = image.controllers.keys().copied().collect();
        if ids == want || t0.elapsed() > Duration::from_secs(60) {
            return ids;
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}
