//! Mixed quorums under faults, with real Apache Kafka controllers (default 4.1.2;
//! `KAFKA_VERSION` selects another): a ferrokraft-led soak with restarts (scenario c),
//! divergence after SIGSTOP of a leader holding uncommitted appends (d), and drop-in swaps of
//! the implementation on the same directory (f). Needs Java 17 + Maven; never skipped.
//!
//! `INTEROP_SOAK_SECS` (default 45) sets how long ferrokraft leads in the soak.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::time::{Duration, Instant};

use support::cluster::{common_prefix_equal, serial, AllowedError, Cluster, Impl};

/// ferrokraft's workload in these tests: a leader appends this many 256-byte NoOpRecords a
/// second (Kafka's active controller writes one every 500 ms).
const WORKLOAD: (u64, usize) = (20, 256);

fn soak_secs() -> u64 {
    std::env::var("INTEROP_SOAK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(45)
}

fn with_workload(c: &mut Cluster) {
    for n in &mut c.nodes {
        if n.kind == Impl::Ferrokraft {
            n.workload = Some(WORKLOAD);
        }
    }
}

/// Scenario c: one Kafka + two ferrokraft nodes. A ferrokraft node leads with the workload on
/// for `INTEROP_SOAK_SECS` while Kafka follows; then every node is SIGKILLed and restarted in
/// turn. Committed bytes never disappear from any node, all logs converge byte for byte, no
/// Kafka controller exits, and every ERROR/exception in the Kafka logs has a documented cause.
#[test]
fn soak_ferrokraft_leads_kafka_follows_and_every_node_restarts() {
    let _serial = serial();
    let mut c = Cluster::new(
        "soak",
        &[Impl::Kafka, Impl::Ferrokraft, Impl::Ferrokraft],
        &[],
    );
    with_workload(&mut c);
    c.start_all();
    let leader = c.make_leader_kind(Impl::Ferrokraft, Duration::from_secs(240));
    let (_, epoch, hw0) = c.wait_for_leader(leader, 1, Duration::from_secs(30));
    c.wait_caught_up(leader, Duration::from_secs(60));
    let secs = soak_secs();
    println!("soak: ferrokraft node {leader} leads epoch {epoch} from hw {hw0} for {secs} s");
    let t0 = Instant::now();
    let mut last_hw = hw0;
    while t0.elapsed() < Duration::from_secs(secs) {
        std::thread::sleep(Duration::from_secs(5));
        let (l, e, hw) = c.wait_for_leader(leader, 1, Duration::from_secs(30));
        assert_eq!(
            (l, e),
            (leader, epoch),
            "leadership changed during the soak (hw {hw})"
        );
        assert!(hw > last_hw, "high watermark stalled at {hw}");
        last_hw = hw;
        c.assert_kafka_alive();
    }
    // The Kafka follower has everything ferrokraft committed, byte for byte.
    let n = c.wait_converged(leader, &[1, 2, 3], Duration::from_secs(60));
    let (_, hw1, committed) = c.committed(leader);
    println!(
        "soak: hw {hw0} → {hw1} ({} records/s), {n} bytes converged",
        (hw1 - hw0) / secs.max(1) as i64
    );
    assert!(
        hw1 - hw0 >= (secs as i64) * (WORKLOAD.0 as i64) / 2,
        "the workload ran"
    );

    // Restart every node in turn (SIGKILL: committed data must be durable).
    let mut all_committed = committed;
    for id in [1, 2, 3] {
        c.node(id).kill();
        let (l, e, _) = c.wait_for_leader_any(&[id], 1, Duration::from_secs(60));
        c.start(id);
        c.wait_caught_up(l, Duration::from_secs(90));
        c.assert_has_committed(
            &[1, 2, 3],
            &all_committed,
            &format!("after restarting node {id}"),
        );
        let (_, hw, now) = c.committed(l);
        println!("restarted node {id}: leader {l} epoch {e} hw {hw}");
        assert!(now.len() >= all_committed.len(), "committed log shrank");
        all_committed = now;
        c.assert_kafka_alive();
    }
    let via = c.wait_for_leader_any(&[], 1, Duration::from_secs(60)).0;
    c.wait_converged(via, &[1, 2, 3], Duration::from_secs(60));
    c.assert_kafka_alive();
    c.assert_kafka_errors_explained(&[]);
}

/// Scenario d, shared by both variants: pause both followers so the leader appends entries
/// nobody fetches, pause the leader, resume the followers (they elect a new leader, which
/// writes at the same offsets), resume the old leader. It must truncate its uncommitted tail
/// (DivergingEpoch) and converge; committed bytes survive everywhere.
fn divergence(c: &mut Cluster, old: i32) {
    let followers: Vec<i32> = [1, 2, 3].into_iter().filter(|i| *i != old).collect();
    c.wait_caught_up(old, Duration::from_secs(60));
    let (_, hw, committed) = c.committed(old);
    for &f in &followers {
        c.node(f).pause();
    }
    // The leader keeps appending (NoOpRecords / workload) that no follower fetches. Poll its
    // log until it is clearly ahead of both followers (Kafka: one NoOp every 500 ms).
    let deadline = Instant::now() + Duration::from_secs(10);
    let follower_len = followers
        .iter()
        .map(|f| c.node(*f).log_bytes().len())
        .max()
        .unwrap();
    while c.node(old).log_bytes().len() <= follower_len + 200 {
        assert!(
            Instant::now() < deadline,
            "the paused-away leader appended nothing"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    c.node(old).pause();
    let uncommitted = c.node(old).log_bytes();
    for &f in &followers {
        c.node(f).resume();
    }
    let (new_leader, new_epoch, _) = c.wait_for_leader_any(&[old], hw, Duration::from_secs(90));
    assert_ne!(new_leader, old);
    // The new leader writes its own entries over the old leader's tail; wait until its log is
    // past the old leader's end so every uncommitted old entry conflicts.
    let deadline = Instant::now() + Duration::from_secs(30);
    while c.node(new_leader).log_bytes().len() <= uncommitted.len() + 200 {
        assert!(Instant::now() < deadline, "new leader did not write");
        std::thread::sleep(Duration::from_millis(200));
    }
    let new_log = c.node(new_leader).log_bytes();
    let diverge_at = match common_prefix_equal(&uncommitted, &new_log) {
        Err(at) => at,
        Ok(n) => panic!("the old leader's log ({n} bytes) did not diverge from the new leader's"),
    };
    assert!(
        diverge_at >= committed.len(),
        "divergence at {diverge_at} inside the committed {} bytes",
        committed.len()
    );
    c.node(old).resume();
    println!(
        "old leader {old} resumed: {} bytes, diverging at {diverge_at}; new leader {new_leader} epoch {new_epoch}",
        uncommitted.len()
    );
    c.wait_caught_up(new_leader, Duration::from_secs(90));
    c.wait_converged(new_leader, &[1, 2, 3], Duration::from_secs(60));
    c.assert_has_committed(&[1, 2, 3], &committed, "after divergence");
    // The old leader now holds the new leader's bytes where it had its own.
    let old_log = c.node(old).log_bytes();
    let new_log = c.node(new_leader).log_bytes();
    let n = common_prefix_equal(&old_log, &new_log).expect("old and new leader agree");
    assert!(
        n > diverge_at,
        "old leader converged past the divergence point ({n} > {diverge_at})"
    );
    c.assert_kafka_alive();
}

/// Scenario d with a Kafka old leader (followers: Kafka and ferrokraft).
#[test]
fn kafka_leader_with_uncommitted_appends_truncates_after_sigstop() {
    let _serial = serial();
    let mut c = Cluster::new(
        "diverge-kafka",
        &[Impl::Kafka, Impl::Kafka, Impl::Ferrokraft],
        &[],
    );
    with_workload(&mut c);
    // Kafka leads first: after a ferrokraft first leader, a Kafka active controller stays
    // unregistered for a while and DescribeCluster through Kafka finds no controller (see
    // docs/interop.md).
    c.start(1);
    c.start(2);
    c.wait_for_leader(1, 1, Duration::from_secs(90));
    c.start(3);
    let old = c.make_leader_kind(Impl::Kafka, Duration::from_secs(240));
    divergence(&mut c, old);
    let text = c.node(old).log_text();
    assert!(
        text.contains("Truncated to offset"),
        "Kafka node {old} logged its truncation"
    );
    // The test itself froze this Kafka leader: on SIGCONT its controller's queued events ran
    // long past their time and failed once it learned it was no longer active.
    c.assert_kafka_errors_explained(&[
        AllowedError {
            cause: "SIGSTOP of the Kafka active controller: its events took the pause to run",
            contains: &["Exceptionally slow controller event"],
        },
        AllowedError {
            cause: "SIGSTOP of the Kafka active controller: queued events fail with NotControllerException after it lost leadership",
            contains: &["NotControllerException"],
        },
    ]);
}

/// Scenario d with a ferrokraft old leader (followers: Kafka and ferrokraft).
#[test]
fn ferrokraft_leader_with_uncommitted_appends_truncates_after_sigstop() {
    let _serial = serial();
    let mut c = Cluster::new(
        "diverge-ferrokraft",
        &[Impl::Kafka, Impl::Ferrokraft, Impl::Ferrokraft],
        &[],
    );
    with_workload(&mut c);
    c.start_all();
    let old = c.make_leader_kind(Impl::Ferrokraft, Duration::from_secs(240));
    divergence(&mut c, old);
    let text = c.node(old).log_text();
    assert!(
        text.contains("Truncating to offset"),
        "ferrokraft node {old} logged its truncation"
    );
    c.assert_kafka_errors_explained(&[]);
}

/// Scenario f: drop-in swap. A Kafka follower is stopped and ferrokraft starts with the same
/// properties file on the same directory: it rejoins without truncating anything Kafka wrote.
/// Then ferrokraft is stopped and Kafka starts again on that directory and rejoins.
#[test]
fn kafka_and_ferrokraft_swap_on_the_same_directory() {
    let _serial = serial();
    let mut c = Cluster::new("swap", &[Impl::Kafka, Impl::Kafka, Impl::Kafka], &[]);
    c.start_all();
    let leader = c.wait_for_leader_any(&[], 1, Duration::from_secs(90)).0;
    c.wait_caught_up(leader, Duration::from_secs(60));
    let swap = [1, 2, 3].into_iter().find(|i| *i != leader).unwrap();

    // Kafka → ferrokraft.
    c.node(swap).terminate();
    let kafka_wrote = c.node(swap).log_bytes();
    assert!(kafka_wrote.len() > 100, "Kafka node {swap} replicated data");
    c.node(swap).kind = Impl::Ferrokraft;
    c.start(swap);
    let leader = c.wait_for_leader_any(&[], 1, Duration::from_secs(60)).0;
    c.wait_caught_up(leader, Duration::from_secs(60));
    c.wait_converged(leader, &[1, 2, 3], Duration::from_secs(60));
    let ours = c.node(swap).log_bytes();
    assert!(
        ours.len() > kafka_wrote.len(),
        "ferrokraft appended after rejoining"
    );
    common_prefix_equal(&ours, &kafka_wrote)
        .expect("ferrokraft kept every byte Kafka wrote on that directory");
    let text = c.node(swap).log_text();
    assert!(
        !text.contains("Truncat"),
        "no truncation on rejoin:\n{text}"
    );
    assert!(!text.contains("Recovery cut"), "no recovery cut:\n{text}");

    // ferrokraft → Kafka.
    c.node(swap).terminate();
    let ferrokraft_wrote = c.node(swap).log_bytes();
    c.node(swap).kind = Impl::Kafka;
    c.start(swap);
    let leader = c.wait_for_leader_any(&[], 1, Duration::from_secs(60)).0;
    c.wait_caught_up(leader, Duration::from_secs(90));
    c.wait_converged(leader, &[1, 2, 3], Duration::from_secs(60));
    let theirs = c.node(swap).log_bytes();
    assert!(
        theirs.len() > ferrokraft_wrote.len(),
        "Kafka appended after rejoining"
    );
    common_prefix_equal(&theirs, &ferrokraft_wrote)
        .expect("Kafka kept every byte ferrokraft wrote on that directory");
    let text = c.node(swap).log_text();
    assert!(
        !text.contains("Truncated to offset"),
        "no truncation on rejoin"
    );
    // No "clean shutdown" check: a Kafka controller opens its metadata log with
    // lastShutdownClean=false and recovers it from offset 0 on every start (KafkaMetadataLog
    // passes `false` to UnifiedLog.create), even after its own clean shutdown.
    c.assert_kafka_alive();
    c.assert_kafka_errors_explained(&[]);
}
