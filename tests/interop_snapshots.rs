//! Snapshots across implementations (scenario e, issue #8 §3), with real Apache Kafka
//! controllers (default 4.1.2; `KAFKA_VERSION` selects another). Every node snapshots its image
//! and cleans its log as often as Kafka allows; a fresh ferrokraft node joining after the log
//! start moved downloads the Kafka leader's snapshot with FetchSnapshot, byte for byte; then,
//! with ferrokraft leading, ferrokraft writes its own snapshots, moves its log start past them,
//! and a fresh Kafka node downloads a ferrokraft-written snapshot, loads it, and writes a
//! snapshot of its own image that kafka-metadata-shell shows equal to ferrokraft's image at the
//! same offset. Needs Java 17 + Maven; never skipped.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::fs;
use std::time::{Duration, Instant};

use ferrokraft::metadata::image::MetadataImage;
use ferrokraft::snapshot::SnapshotId;
use ferrokraft::tools::dump;
use support::cluster::{serial, AllowedError, Cluster, Impl};
use support::metadata_shell;

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

/// Polls until `id` has installed a snapshot downloaded from `from`: its earliest `.checkpoint`
/// (the ones it writes itself come later) also present on `from`, byte-identical. Returns its
/// file name.
fn wait_installed_checkpoint(c: &mut Cluster, id: i32, from: i32, timeout: Duration) -> String {
    let deadline = Instant::now() + timeout;
    let mut last = String::new();
    loop {
        if let Some(p) = c.node(id).checkpoints().first() {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let theirs = c.node(from).partition_dir().join(&name);
            if let (Ok(a), Ok(b)) = (fs::read(p), fs::read(&theirs)) {
                assert_eq!(
                    a, b,
                    "snapshot {name} on node {id} differs from node {from}'s"
                );
                return name;
            }
            last = name;
        }
        assert!(
            Instant::now() < deadline,
            "node {id} installed no snapshot of node {from}'s (last seen {last:?})"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The snapshot stems ferrokraft node `id` says it wrote ("Successfully wrote snapshot …").
fn written_by_ferrokraft(c: &mut Cluster, id: i32) -> Vec<String> {
    c.node(id)
        .log_text()
        .lines()
        .filter_map(|l| l.split("Successfully wrote snapshot ").nth(1))
        .filter_map(|rest| rest.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

fn snapshot_id(path: &std::path::Path) -> SnapshotId {
    SnapshotId::parse_file_name(&path.file_name().unwrap().to_string_lossy()).unwrap()
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
    // ferrokraft snapshots every 15 s rather than at every publish, so the snapshot a fresh
    // node downloads from it stays on disk long enough to be compared.
    c.node(3).add_props(&[
        ("controller.quorum.fetch.timeout.ms", "3500"),
        (
            "metadata.log.max.record.bytes.between.snapshots",
            "100000000",
        ),
        ("metadata.log.max.snapshot.interval.ms", "15000"),
    ]);
    c.start(1);
    c.start(2);
    let (leader, _, _) = c.wait_for_leader(1, 1, Duration::from_secs(90));
    // The log start moves on the leader when its cleaner first runs (60 s after start).
    let start = wait_log_start_moved(&mut c, leader, Duration::from_secs(150));
    println!("Kafka leader {leader}: log start moved to {start}");

    // A fresh ferrokraft node fetches at 0 < log start: the leader sends it to its snapshot.
    c.start(3);
    let name = wait_installed_checkpoint(&mut c, 3, leader, Duration::from_secs(60));
    println!("ferrokraft installed {name}, byte-identical to the Kafka leader's");
    let text = c.node(3).log_text();
    assert!(
        c.node(3).first_segment_base() > 0,
        "ferrokraft's log restarts at the snapshot:\n{text}"
    );
    c.wait_caught_up(leader, Duration::from_secs(60));

    // Now ferrokraft leads. It writes snapshots of its own image and its cleaner moves its
    // log start past the snapshot it installed from Kafka.
    let l = c.make_leader_kind(Impl::Ferrokraft, Duration::from_secs(240));
    assert_eq!(l, 3);
    c.wait_caught_up(3, Duration::from_secs(60));
    let installed_end = SnapshotId::parse_file_name(&name).unwrap().end_offset;
    let deadline = Instant::now() + Duration::from_secs(150);
    let own_start = loop {
        let written = written_by_ferrokraft(&mut c, 3);
        let start = c.node(3).first_segment_base();
        let latest = c.node(3).checkpoints().last().map(|p| snapshot_id(p));
        if start > installed_end && latest.is_some_and(|id| written.contains(&id.file_stem())) {
            break start;
        }
        assert!(
            Instant::now() < deadline,
            "ferrokraft wrote no snapshot of its own past {installed_end} and moved its log start              (start {start}, wrote {written:?}):\n{}",
            support::cluster::tail(&c.node(3).log_text(), 40)
        );
        std::thread::sleep(Duration::from_secs(1));
    };
    println!("ferrokraft leader: own snapshots written, log start moved to {own_start}");

    // A Kafka node with a wiped directory joins and downloads ferrokraft's snapshot.
    let fresh = 1;
    c.node(fresh).kill();
    c.wipe_and_format(fresh);
    c.start(fresh);
    let name = wait_installed_checkpoint(&mut c, fresh, 3, Duration::from_secs(90));
    let written = written_by_ferrokraft(&mut c, 3);
    assert!(
        written.iter().any(|stem| name.starts_with(stem.as_str())),
        "Kafka installed {name}, which ferrokraft did not write ({written:?})"
    );
    println!("fresh Kafka node {fresh} installed ferrokraft-written {name}, byte-identical");
    c.wait_caught_up(3, Duration::from_secs(90));
    let log = c.node(fresh).log_text();
    assert!(
        log.contains("Fetching snapshot") || log.contains("snapshot"),
        "Kafka logged the snapshot download"
    );

    // Kafka then writes snapshots of the image it loaded plus the log after it.
    let installed = SnapshotId::parse_file_name(&name).unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while !c
        .node(fresh)
        .checkpoints()
        .iter()
        .any(|p| snapshot_id(p) > installed)
    {
        assert!(
            Instant::now() < deadline,
            "the fresh Kafka node wrote no snapshot of its own"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    c.assert_kafka_alive();
    for id in 1..=3 {
        c.node(id).terminate();
    }
    // Compare Kafka's own newest snapshot with ferrokraft's image at the same offset: its
    // newest snapshot plus its log up to there.
    let kafka_own = c.node(fresh).checkpoints().last().unwrap().clone();
    let kafka_id = snapshot_id(&kafka_own);
    let ferro_snapshot = c
        .node(3)
        .checkpoints()
        .into_iter()
        .rfind(|p| snapshot_id(p) <= kafka_id)
        .expect("a ferrokraft snapshot at or below Kafka's");
    let mut ferro_image = MetadataImage::new();
    ferro_image.load_snapshot(
        &fs::read(&ferro_snapshot).unwrap(),
        snapshot_id(&ferro_snapshot).end_offset,
        "ferrokraft snapshot",
    );
    ferro_image.replay_batches(
        &c.node(3).log_bytes(),
        kafka_id.end_offset,
        "ferrokraft log",
    );
    assert_eq!(ferro_image.next_offset, kafka_id.end_offset);
    assert_eq!(
        ferro_image.refused_records + ferro_image.undecodable_records,
        0
    );
    assert!(
        ferro_image.controllers.len() == 3 && ferro_image.metadata_version().is_some(),
        "{}",
        ferro_image.to_text()
    );
    // Kafka's snapshot decodes to the same image here too.
    let kafka_image = dump::image_of(&[dump::dump_file(&kafka_own).unwrap()]);
    assert_eq!(kafka_image.to_json(), ferro_image.to_json());
    if metadata_shell::available() {
        let art = &c.art;
        for (label, file) in [
            (
                "kafka's own snapshot after loading ferrokraft's",
                &kafka_own,
            ),
            ("ferrokraft's snapshot", &ferro_snapshot),
        ] {
            let image = if file == &kafka_own {
                ferro_image.clone()
            } else {
                let mut i = MetadataImage::new();
                i.load_snapshot(&fs::read(file).unwrap(), snapshot_id(file).end_offset, "f");
                i
            };
            let compared = metadata_shell::compare(art, label, file, &image);
            println!(
                "kafka-metadata-shell on {label} ({}): {} features, {} controllers; {} mismatches",
                file.display(),
                compared.features,
                compared.controllers,
                compared.mismatches.len()
            );
            assert!(
                compared.mismatches.is_empty(),
                "{}",
                compared.mismatches.join("\n")
            );
        }
    }
    // This test's own configuration: Kafka warns at ERROR level about the tiny segments it
    // needs to move the log start within a test's time.
    c.assert_kafka_errors_explained(&[
        AllowedError {
            cause: "the test sets internal.metadata.log.segment.bytes to roll segments quickly",
            contains: &[
                "Overriding internal.metadata.log.segment.bytes is only supported for testing",
            ],
        },
        AllowedError {
            cause: "the same override as Kafka 4.0 names it (metadata.log.segment.min.bytes)",
            contains: &["Overriding metadata.log.segment.min.bytes is only supported for testing"],
        },
    ]);
}
