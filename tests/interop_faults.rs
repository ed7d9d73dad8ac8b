//! Mixed quorums under faults, with real Apache Kafka controllers (default 4.1.2;
//! `KAFKA_VERSION` selects another): drop-in swaps of the implementation on the same directory
//! (scenario f). Needs Java 17 + Maven; never skipped.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::time::Duration;

use support::cluster::{common_prefix_equal, serial, Cluster, Impl};

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
