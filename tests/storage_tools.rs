//! Tool compatibility: the real Kafka 4.1.2 jars read what we write, and we read what they
//! write (reference kraft-storage-and-tools.md §3, §5). Needs Java + Maven; never skipped.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use ferrokraft::log::{FileLog, LocalLog, LogConfig};
use ferrokraft::records::batch::{
    ATTRIBUTES_OFFSET, BASE_TIMESTAMP_OFFSET, CRC_OFFSET, MAX_BATCH_SIZE_BYTES,
};
use ferrokraft::records::feature_level::feature_level_record;
use ferrokraft::records::{
    build_control_batch, build_data_batch, BatchFramer, ControlRecord, ControlRecordType,
};
use ferrokraft::snapshot::{SnapshotHeaderInfo, SnapshotId, SnapshotWriter};
use ferrokraft::storage::{
    open_formatted, DirLock, QuorumStateStore, QuorumStateVersion, StorageError,
};
use ferrokraft::tools::format::{
    format, voters_record, DynamicVoter, FormatMode, FormatRequest, ListenerEndpoint,
    METADATA_PARTITION_DIR,
};
use kafka_protocol::messages::leader_change_message::Voter as LcVoter;
use kafka_protocol::messages::LeaderChangeMessage;
use support::kafka::{free_port, kafka, Artifacts};

const CLUSTER_ID: &str = "MkU3OEVBNTcwNTJENDM2Qk";

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn feature_values(n: usize) -> Vec<Vec<u8>> {
    let mut v = vec![feature_level_record("metadata.version", 27)];
    for i in 1..n {
        v.push(feature_level_record(
            &format!("test.feature.{i}"),
            (i % 3 + 1) as i16,
        ));
    }
    v
}

fn count_batches(bytes: &[u8]) -> usize {
    BatchFramer::new(bytes, 0, MAX_BATCH_SIZE_BYTES).count()
}

fn snapshot_with_features(pdir: &Path, id: SnapshotId) -> PathBuf {
    let voters = voters_record(
        &[DynamicVoter {
            node_id: 1,
            host: "localhost".into(),
            port: 9093,
            directory_id: uuid::Uuid::from_u128(0xabc),
        }],
        "CONTROLLER",
    );
    let header = SnapshotHeaderInfo {
        last_contained_log_timestamp_ms: now_ms(),
        kraft_version: Some(1),
        voters: Some(voters),
    };
    let mut w = SnapshotWriter::create(pdir, id, &header, now_ms()).unwrap();
    let vals = [
        feature_level_record("metadata.version", 27),
        feature_level_record("group.version", 1),
    ];
    let refs: Vec<&[u8]> = vals.iter().map(Vec::as_slice).collect();
    w.append(&refs, now_ms()).unwrap();
    w.finish(now_ms()).unwrap()
}

/// kafka-dump-log with the cluster metadata decoder reads our segment, indexes, snapshot,
/// bootstrap.checkpoint and 0-0 checkpoint without errors and shows what we wrote.
#[test]
fn dump_log_segments_reads_our_files() {
    let art = Artifacts::new("dump_log");
    let meta = art.path("meta");
    let pdir = meta.join(METADATA_PARTITION_DIR);
    let (mut log, _) = FileLog::open(&pdir, LogConfig::default()).unwrap();
    log.initialize_leader_epoch(1).unwrap();
    let lc = LeaderChangeMessage::default()
        .with_leader_id(1.into())
        .with_voters(vec![LcVoter::default().with_voter_id(1)])
        .with_granting_voters(vec![LcVoter::default().with_voter_id(1)]);
    let start = build_control_batch(
        0,
        0,
        now_ms(),
        &[
            ControlRecord::LeaderChange(lc),
            ControlRecord::kraft_version(1),
        ],
    )
    .unwrap();
    log.append_as_leader(&start, 1).unwrap();
    let vals = feature_values(6);
    let refs: Vec<&[u8]> = vals.iter().map(Vec::as_slice).collect();
    for _ in 0..40 {
        log.append_as_leader(&build_data_batch(0, 0, now_ms(), &refs).unwrap(), 1)
            .unwrap();
    }
    let end = log.end_offset();
    log.close().unwrap();
    let snap = snapshot_with_features(
        &pdir,
        SnapshotId {
            end_offset: end,
            epoch: 1,
        },
    );
    // A formatted standalone dir gives a bootstrap.checkpoint and a 0-0 snapshot.
    let fmt_dir = art.path("fmt");
    format(&FormatRequest {
        node_id: 1,
        log_dirs: vec![fmt_dir.clone()],
        metadata_log_dir: None,
        cluster_id: CLUSTER_ID.into(),
        mode: FormatMode::Standalone {
            endpoint: ListenerEndpoint {
                name: "CONTROLLER".into(),
                host: "localhost".into(),
                port: 9093,
            },
        },
        release_version: None,
        kafka_release: Default::default(),
        feature_overrides: vec![],
        ignore_formatted: false,
        scram_arguments: Vec::new(),
        now_unix_ms: now_ms(),
    })
    .unwrap();
    let seg = pdir.join("00000000000000000000.log");
    let files = [
        seg.clone(),
        pdir.join("00000000000000000000.index"),
        pdir.join("00000000000000000000.timeindex"),
        snap.clone(),
        fmt_dir.join("bootstrap.checkpoint"),
        fmt_dir
            .join(METADATA_PARTITION_DIR)
            .join(SnapshotId::BOOTSTRAP.file_name()),
    ];
    let joined = files
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(",");
    let out = kafka().tool(
        &art,
        "dump",
        kafka().dump_log_class(),
        &["--cluster-metadata-decoder", "--files", &joined],
    );
    assert!(out.status.success(), "{out:?}");
    let expected_batches = count_batches(&fs::read(&seg).unwrap())
        + count_batches(&fs::read(&snap).unwrap())
        + count_batches(&fs::read(&files[4]).unwrap())
        + count_batches(&fs::read(&files[5]).unwrap());
    assert_eq!(
        out.stdout.matches("isvalid: true").count(),
        expected_batches,
        "{}",
        out.stdout
    );
    for bad in ["isvalid: false", "Error at", "invalid bytes", "Exception"] {
        assert!(
            !out.stdout.contains(bad) && !out.stderr.contains(bad),
            "found {bad:?}:\n{}\n{}",
            out.stdout,
            out.stderr
        );
    }
    assert!(!out.stderr.contains("Mismatches"), "{}", out.stderr);
    assert!(out.stdout.contains(r#"LeaderChange: {"version":0,"leaderId":1,"voters":[{"voterId":1}],"grantingVoters":[{"voterId":1}]}"#), "{}", out.stdout);
    assert!(out
        .stdout
        .contains(r#"KRaftVersion {"version":0,"kRaftVersion":1}"#));
    assert!(out.stdout.contains(r#"payload: {"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"metadata.version","featureLevel":27}}"#));
    assert!(
        out.stdout
            .contains(&format!("Snapshot end offset: {end}, epoch: 1")),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("partitionLeaderEpoch: 1"));
    assert!(
        out.stdout.contains("offset: 4"),
        "index entries printed:\n{}",
        out.stdout
    );
    assert!(out.stdout.contains("SnapshotFooter"), "{}", out.stdout);
}

/// kafka-metadata-shell loads our snapshot, and refuses to run while we hold `.lock`.
#[test]
fn metadata_shell_reads_our_snapshot_and_sees_our_lock() {
    let art = Artifacts::new("shell");
    let meta = art.path("meta");
    let pdir = meta.join(METADATA_PARTITION_DIR);
    fs::create_dir_all(&pdir).unwrap();
    let snap = snapshot_with_features(
        &pdir,
        SnapshotId {
            end_offset: 5,
            epoch: 2,
        },
    );
    let s = snap.to_str().unwrap();
    let args = [
        "--snapshot",
        s,
        "cat",
        "/image/features/metadataVersion",
        "/image/features/finalized_group.version",
    ];
    // Kafka's shell can also answer before its MetadataLoader published the features image
    // (metadataVersion reads `Optional.empty` while the finalized levels are there): the same
    // SnapshotFileReader/MetadataLoader race as its hang (docs/interop.md); asked again.
    let mut out = kafka().metadata_shell(&art, "shell", &args);
    for attempt in 2..=3 {
        if !out.stdout.starts_with("Optional.empty") {
            break;
        }
        eprintln!(
            "kafka-metadata-shell answered before publishing metadata.version; attempt {attempt}"
        );
        out = kafka().metadata_shell(&art, &format!("shell-{attempt}"), &args);
    }
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        out.stdout.lines().collect::<Vec<_>>(),
        vec!["Optional[4.1-IV1]", "1"],
        "{out:?}"
    );
    let lock = DirLock::acquire(&meta).unwrap();
    let out = kafka().metadata_shell(&art, "shell_locked", &args);
    assert!(!out.status.success(), "{out:?}");
    assert!(
        format!("{}{}", out.stdout, out.stderr).contains("Unable to lock"),
        "{out:?}"
    );
    drop(lock);
}

fn props(path: &Path, dir: &Path, port: u16, static_voters: bool) {
    let quorum = if static_voters {
        format!("controller.quorum.voters=1@127.0.0.1:{port}")
    } else {
        format!("controller.quorum.bootstrap.servers=127.0.0.1:{port}")
    };
    fs::write(
        path,
        format!(
            "process.roles=controller\nnode.id=1\n{quorum}\ncontroller.listener.names=CONTROLLER\nlisteners=CONTROLLER://127.0.0.1:{port}\nlistener.security.protocol.map=CONTROLLER:PLAINTEXT\nlog.dirs={}\n",
            dir.display()
        ),
    )
    .unwrap();
}

/// Batches with their timestamps (batch header and SNAPSHOT_HEADER value) zeroed, 16-byte ids
/// substituted, and the CRC recomputed: what remains must match Kafka byte for byte.
fn normalize(bytes: &[u8], subs: &[(uuid::Uuid, uuid::Uuid)]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut f = BatchFramer::new(bytes, 0, MAX_BATCH_SIZE_BYTES);
    for (_, v) in f.by_ref() {
        let orig = v.as_bytes();
        let mut b = orig.to_vec();
        b[BASE_TIMESTAMP_OFFSET..BASE_TIMESTAMP_OFFSET + 16].fill(0);
        for r in v.records() {
            let r = r.unwrap();
            if r.control_type() == Some(ControlRecordType::SnapshotHeader) {
                let at = r.value.as_ptr() as usize - orig.as_ptr() as usize;
                b[at + 2..at + 10].fill(0);
            }
        }
        for (from, to) in subs {
            let from = from.as_bytes();
            if let Some(p) = b.windows(16).position(|w| w == from) {
                b[p..p + 16].copy_from_slice(to.as_bytes());
            }
        }
        let crc = crc32c::crc32c(&b[ATTRIBUTES_OFFSET..]);
        b[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
        out.extend(b);
    }
    assert_eq!(f.end(), Some(&ferrokraft::records::FrameEnd::Clean));
    out
}

fn meta_props_without_date(dir: &Path) -> Vec<String> {
    fs::read_to_string(dir.join("meta.properties"))
        .unwrap()
        .lines()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .map(|(_, l)| l.to_string())
        .collect()
}

/// `kafka-storage format` and our format give the same files in every mode (ignoring only
/// timestamps and random directory ids), and we open every directory Kafka formats.
/// `--add-scram` arguments of the format comparison (Kafka's ScramParserTest salt and salted
/// password).
const SCRAM_ALICE: &str = "SCRAM-SHA-256=[name=alice,password=alice-secret,iterations=8192,\
                           salt=\"MWx2NHBkbnc0ZndxN25vdGN4bTB5eTFrN3E=\"]";
const SCRAM_BOB: &str = "SCRAM-SHA-512=[name=bob,salt=\"MWx2NHBkbnc0ZndxN25vdGN4bTB5eTFrN3E=\",\
                         saltedpassword=\"mT0yyUUxnlJaC99HXgRTSYlbuqa4FSGtJCJfTMvjYCE=\"]";

#[test]
fn our_format_matches_kafka_storage_format() {
    let art = Artifacts::new("format");
    let port = 19093;
    let voters =
        "1@127.0.0.1:19093:fIFoBanoy2NV4I5F4JiG8w,2@localhost:19094:AAAAAAAAAAAAAAAAAAAAAw";
    let cases: Vec<(&str, Vec<&str>, FormatMode, Option<&str>)> = vec![
        ("static", vec![], FormatMode::StaticVoters, None),
        (
            "static38",
            vec!["--release-version", "3.8"],
            FormatMode::StaticVoters,
            Some("3.8"),
        ),
        (
            "standalone",
            vec!["--standalone"],
            FormatMode::Standalone {
                endpoint: ListenerEndpoint {
                    name: "CONTROLLER".into(),
                    host: "127.0.0.1".into(),
                    port,
                },
            },
            None,
        ),
        (
            "initial40",
            vec![
                "--initial-controllers",
                voters,
                "--release-version",
                "4.0-IV3",
            ],
            FormatMode::InitialControllers {
                controller_listener_name: "CONTROLLER".into(),
                voters: DynamicVoter::parse_list(voters).unwrap(),
            },
            Some("4.0-IV3"),
        ),
        (
            "noinit",
            vec!["--no-initial-controllers"],
            FormatMode::NoInitialControllers,
            None,
        ),
        // SCRAM credentials in the bootstrap records: salts given, so the bytes are fixed.
        (
            "scram",
            vec!["--add-scram", SCRAM_ALICE, "--add-scram", SCRAM_BOB],
            FormatMode::StaticVoters,
            None,
        ),
    ];
    for (name, flags, mode, release) in cases {
        let scram_arguments: Vec<String> = flags
            .windows(2)
            .filter(|w| w[0] == "--add-scram")
            .map(|w| w[1].to_string())
            .collect();
        let kdir = art.path(&format!("kafka-{name}"));
        let rdir = art.path(&format!("ours-{name}"));
        let pfile = art.path(&format!("{name}.properties"));
        props(
            &pfile,
            &kdir,
            port,
            matches!(mode, FormatMode::StaticVoters),
        );
        let mut args = vec!["format", "-t", CLUSTER_ID, "-c", pfile.to_str().unwrap()];
        args.extend(flags);
        let out = kafka().tool(
            &art,
            &format!("format-{name}"),
            "kafka.tools.StorageTool",
            &args,
        );
        assert!(out.status.success(), "{name}: {out:?}");
        let report = format(&FormatRequest {
            node_id: 1,
            log_dirs: vec![rdir.clone()],
            metadata_log_dir: None,
            cluster_id: CLUSTER_ID.into(),
            mode,
            release_version: release.map(String::from),
            kafka_release: Default::default(),
            feature_overrides: vec![],
            ignore_formatted: false,
            scram_arguments,
            now_unix_ms: now_ms(),
        })
        .unwrap();
        // Same message, up to the directory path.
        assert_eq!(
            out.stdout.trim().replace(kdir.to_str().unwrap(), "DIR"),
            report
                .lines
                .join("\n")
                .replace(rdir.to_str().unwrap(), "DIR"),
            "{name}"
        );
        // meta.properties: same keys in the same order; directory ids equal where not random.
        let kmeta = open_formatted(&kdir, 1, Some(CLUSTER_ID)).unwrap();
        let kdir_id = kmeta.directory_id;
        let rdir_id = report.formatted[0].1;
        let ours_meta = meta_props_without_date(&rdir);
        let kafka_meta = meta_props_without_date(&kdir);
        let swap = |l: &String| {
            l.replace(
                &ferrokraft::common::uuid::uuid_to_kafka_string(&rdir_id),
                &ferrokraft::common::uuid::uuid_to_kafka_string(&kdir_id),
            )
        };
        assert_eq!(
            ours_meta.iter().map(swap).collect::<Vec<_>>(),
            kafka_meta,
            "{name}"
        );
        if name == "initial40" {
            assert_eq!(rdir_id, kdir_id);
        }
        // bootstrap.checkpoint and the 0-0 snapshot.
        let subs = [(rdir_id, kdir_id)];
        let kb = fs::read(kdir.join("bootstrap.checkpoint")).unwrap();
        let rb = fs::read(rdir.join("bootstrap.checkpoint")).unwrap();
        assert_eq!(
            normalize(&rb, &[]),
            normalize(&kb, &[]),
            "{name}: bootstrap.checkpoint"
        );
        let zero = |d: &Path| {
            d.join(METADATA_PARTITION_DIR)
                .join(SnapshotId::BOOTSTRAP.file_name())
        };
        assert_eq!(
            zero(&kdir).exists(),
            zero(&rdir).exists(),
            "{name}: 0-0 presence"
        );
        if zero(&kdir).exists() {
            let k0 = fs::read(zero(&kdir)).unwrap();
            let r0 = fs::read(zero(&rdir)).unwrap();
            assert_eq!(
                normalize(&r0, &subs),
                normalize(&k0, &[]),
                "{name}: 0-0 snapshot"
            );
            use std::os::unix::fs::PermissionsExt;
            assert_eq!(
                fs::metadata(zero(&rdir)).unwrap().permissions().mode() & 0o777,
                fs::metadata(zero(&kdir)).unwrap().permissions().mode() & 0o777
            );
        }
        // We read Kafka's bootstrap features the same as ours.
        let rmeta = open_formatted(&rdir, 1, Some(CLUSTER_ID)).unwrap();
        assert_eq!(kmeta.bootstrap, rmeta.bootstrap, "{name}");
    }
}

/// A Kafka controller starts on directories we formatted, elects itself, and after it is
/// killed we open the log, quorum-state and epoch checkpoint it wrote. While it runs, we see
/// its `.lock`.
#[test]
fn kafka_controller_starts_on_our_formatted_dirs() {
    let art = Artifacts::new("controller");
    for name in ["static", "standalone", "initial", "noinit"] {
        let port = free_port();
        let dir = art.path(&format!("dir-{name}"));
        let mode = match name {
            "static" => FormatMode::StaticVoters,
            "standalone" => FormatMode::Standalone {
                endpoint: ListenerEndpoint {
                    name: "CONTROLLER".into(),
                    host: "127.0.0.1".into(),
                    port,
                },
            },
            "initial" => FormatMode::InitialControllers {
                controller_listener_name: "CONTROLLER".into(),
                voters: DynamicVoter::parse_list(&format!(
                    "1@127.0.0.1:{port}:fIFoBanoy2NV4I5F4JiG8w"
                ))
                .unwrap(),
            },
            _ => FormatMode::NoInitialControllers,
        };
        let static_voters = matches!(mode, FormatMode::StaticVoters);
        format(&FormatRequest {
            node_id: 1,
            log_dirs: vec![dir.clone()],
            metadata_log_dir: None,
            cluster_id: CLUSTER_ID.into(),
            mode,
            release_version: None,
            kafka_release: Default::default(),
            feature_overrides: vec![],
            ignore_formatted: false,
            scram_arguments: Vec::new(),
            now_unix_ms: now_ms(),
        })
        .unwrap();
        let pfile = art.path(&format!("{name}.properties"));
        props(&pfile, &dir, port, static_voters);
        let mut server = kafka().start_server(&art, name, &pfile);
        if name == "noinit" {
            // No voters are known: the node starts and waits as an observer.
            server.wait_for_log(
                "Completed transition to Unattached",
                Duration::from_secs(60),
            );
        } else {
            server.wait_for_log("Completed transition to Leader", Duration::from_secs(60));
            server.wait_for_log(
                "Loaded new metadata FinalizedFeatures[metadataVersion=4.1-IV1",
                Duration::from_secs(30),
            );
        }
        match DirLock::acquire(&dir) {
            Err(StorageError::Locked { .. }) => {}
            other => panic!("{name}: Kafka's lock not seen: {other:?}"),
        }
        assert!(server.is_running(), "{name}: controller died");
        server.kill();
        let text = fs::read_to_string(&server.log).unwrap();
        assert!(
            !text.contains("FATAL") && !text.contains("Exiting Kafka"),
            "{name}: {}",
            server.log.display()
        );
        // Now read what Kafka wrote.
        let opened = open_formatted(&dir, 1, Some(CLUSTER_ID)).unwrap();
        let qs = QuorumStateStore::new(&opened.partition_dir)
            .read()
            .unwrap()
            .expect("quorum-state");
        // kraft.version comes from the 0-0 snapshot; without one (static, or an observer
        // formatted with --no-initial-controllers) Kafka 4.1.2 writes data_version 0.
        let want = if static_voters || name == "noinit" {
            QuorumStateVersion::V0
        } else {
            QuorumStateVersion::V1
        };
        assert_eq!(qs.data_version, want, "{name}: {qs:?}");
        let (log, report) = FileLog::open(&opened.partition_dir, LogConfig::default()).unwrap();
        assert!(report.cuts.is_empty(), "{name}: {report:?}");
        if name != "noinit" {
            assert_eq!(
                (qs.leader_id, qs.leader_epoch),
                (1, log.last_epoch().unwrap()),
                "{name}"
            );
            assert!(log.end_offset() > 3, "{name}");
            let first = log.read(0, 1 << 20).unwrap();
            let (_, v) = BatchFramer::new(&first.bytes, 0, MAX_BATCH_SIZE_BYTES)
                .next()
                .unwrap();
            assert!(matches!(
                v.control_records().unwrap()[0],
                ControlRecord::LeaderChange(_)
            ));
        }
    }
}
