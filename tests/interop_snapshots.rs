//! Snapshots across implementations (scenario e), with real Apache Kafka controllers (default
//! 4.1.2; `KAFKA_VERSION` selects another). Kafka controllers are configured to snapshot and
//! clean their log as often as they allow; a fresh ferrokraft node joining after the log start
//! moved downloads the leader's snapshot with FetchSnapshot, byte for byte; then a fresh Kafka
//! node joining a ferrokraft-led quorum downloads that snapshot from ferrokraft. Needs Java 17 +
//! Maven; never skipped.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::fs;
use std::time::{Duration, Instant};

use support::cluster::{serial, AllowedError, Cluster, Impl};

/// What makes Kafka 4.x snapshot and move its log start quickly. The log start can only move
/// when `KafkaRaftClient`'s cleaner runs (every 60 s, not configurable), there are ≥ 2
/// snapshots, a retention rule holds, and whole segments lie below the newer snapshot.
const SNAPSHOT_OFTEN: &[(&str, &str)] = &[
    // A snapshot after every few NoOpRecords, or at least every second.
    ("metadata.log.max.record.bytes.between.snapshots", "100"),
    ("metadata.log.max.snapshot.interval.ms", "1000"),
    // Small segments: 4.1+ takes only the internal override (the public
    // metadata.log.segment.bytes must stay ≥ 8 MiB: kafka-storage format rejects 16384).
    ("internal.metadata.log.segment.bytes", "16384"),
    ("metadata.log.segment.min.bytes", "16384"),
    ("metadata.log.segment.ms", "2000"),
    // Every retention rule holds as soon as there are two snapshots.
    ("metadata.max.retention.bytes", "1"),
    ("metadata.max.retention.ms", "1000"),
];

/// Waits until `id`'s first segment starts past 0 (its log start moved); returns that base.
fn wait_log_start_moved(c: &mut Cluster, id: i32, timeout: Duration) -> i64 {
    let deadline = Instant::now() + timeout;
    loop {
        let base = c.node(id).first_segment_base();
        if base > 0 {
            return base;
        }
        assert!(
            Instant::now() < deadline,
            "node {id}'s log start did not move within {timeout:?}; checkpoints: {:?}",
            c.node(id).checkpoints()
        );
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// Polls until `id` has a `.checkpoint` also present (same name) on `other`, byte-identical;
/// returns its file name.
fn wait_same_checkpoint(c: &mut Cluster, id: i32, other: i32, timeout: Duration) -> String {
    let deadline = Instant::now() + timeout;
    let mut last = String::new();
    loop {
        for p in c.node(id).checkpoints() {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let theirs = c.node(other).partition_dir().join(&name);
            if let (Ok(a), Ok(b)) = (fs::read(&p), fs::read(&theirs)) {
                assert_eq!(
                    a, b,
                    "snapshot {name} on node {id} differs from node {other}'s"
                );
                return name;
            }
            last = name;
        }
        assert!(
            Instant::now() < deadline,
            "node {id} got no snapshot shared with node {other} (last seen {last:?})"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn snapshots_cross_implementations_with_fetch_snapshot() {
    let _serial = serial();
    let mut c = Cluster::new(
        "snapshots",
        &[Impl::Kafka, Impl::Kafka, Impl::Ferrokraft],
        SNAPSHOT_OFTEN,
    );
    // After a Kafka leader dies, the follower whose fetch timeout fires *second* wins: the
    // first one's pre-vote is rejected by a follower that still has fetched from the leader
    // (Kafka's FollowerState.canGrantVote) and it goes back to following with a fresh timer,
    // while the second one's pre-vote reaches a follower that has not fetched since. A longer
    // fetch timeout on ferrokraft makes it the second, so `make_leader_kind` gets it elected.
    c.node(3)
        .add_props(&[("controller.quorum.fetch.timeout.ms", "3500")]);
    c.start(1);
    c.start(2);
    let (leader, _, _) = c.wait_for_leader(1, 1, Duration::from_secs(90));
    // The log start moves on the leader when its cleaner first runs (60 s after start).
    let start = wait_log_start_moved(&mut c, leader, Duration::from_secs(150));
    println!("Kafka leader {leader}: log start moved to {start}");

    // A fresh ferrokraft node fetches at 0 < log start: the leader sends it to its snapshot.
    c.start(3);
    let name = wait_same_checkpoint(&mut c, 3, leader, Duration::from_secs(60));
    println!("ferrokraft installed {name}, byte-identical to the Kafka leader's");
    let text = c.node(3).log_text();
    assert!(
        c.node(3).first_segment_base() > 0,
        "ferrokraft's log restarts at the snapshot:\n{text}"
    );
    c.wait_caught_up(leader, Duration::from_secs(60));

    // Now ferrokraft leads; a Kafka node with a wiped directory joins and gets the snapshot
    // from ferrokraft (whose log starts at the snapshot it installed).
    let l = c.make_leader_kind(Impl::Ferrokraft, Duration::from_secs(240));
    assert_eq!(l, 3);
    c.wait_caught_up(3, Duration::from_secs(60));
    let fresh = 1;
    c.node(fresh).kill();
    c.wipe_and_format(fresh);
    c.start(fresh);
    let name = wait_same_checkpoint(&mut c, fresh, 3, Duration::from_secs(90));
    println!("fresh Kafka node {fresh} installed {name} from ferrokraft, byte-identical");
    c.wait_caught_up(3, Duration::from_secs(90));
    let log = c.node(fresh).log_text();
    assert!(
        log.contains("Fetching snapshot") || log.contains("snapshot"),
        "Kafka logged the snapshot download"
    );
    c.assert_kafka_alive();
    // This test's own configuration: Kafka warns at ERROR level about the tiny segments it
    // needs to move the log start within a test's time.
    c.assert_kafka_errors_explained(&[AllowedError {
        cause: "the test sets internal.metadata.log.segment.bytes to roll segments quickly",
        contains: &["Overriding internal.metadata.log.segment.bytes is only supported for testing"],
    }]);
}
