//! Metadata records on real data (issue #8 §1, §5): a real Apache Kafka node (combined mode,
//! default 4.1.2; `KAFKA_VERSION` selects another) writes its `__cluster_metadata` log while
//! Kafka's own tools create, alter and delete topics, configs, SCRAM users, ACLs, quotas and a
//! delegation token; after it stops, every record of every batch of its log, snapshots and
//! bootstrap file must decode to a described type (never `Other`) and re-encode to the same
//! bytes; `ferrokraft dump` must show them. Then the same dump over a directory ferrokraft
//! wrote. Needs Java 17 + Maven; never skipped.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use ferrokraft::metadata::image::MetadataImage;
use ferrokraft::metadata::record::MetadataRecord;
use ferrokraft::snapshot::{write_snapshot, RawSnapshot, SnapshotHeaderInfo, SnapshotId};
use ferrokraft::tools::dump::{self, DumpedFile, DumpedRecord};
use support::combined::CombinedKafka;
use support::kafka::{free_port, Artifacts};
use support::metadata_shell;

const TOPIC: &[&str] = &["org.apache.kafka.tools.TopicCommand"];
const CONFIGS: &[&str] = &[
    "kafka.admin.ConfigCommand",
    "org.apache.kafka.tools.ConfigCommand",
];
const ACLS: &[&str] = &[
    "org.apache.kafka.tools.AclCommand",
    "kafka.admin.AclCommand",
];
const TOKENS: &[&str] = &["org.apache.kafka.tools.DelegationTokenCommand"];
const PERF: &[&str] = &["org.apache.kafka.tools.ProducerPerformance"];

/// What the files hold, and every way a record failed the round trip.
#[derive(Default)]
struct Census {
    batches: usize,
    control_records: usize,
    /// (record name, version) → count.
    metadata_records: BTreeMap<(String, u16), usize>,
    failures: Vec<String>,
}

fn census(files: &[DumpedFile]) -> Census {
    let mut c = Census::default();
    for f in files {
        if !matches!(f.end, ferrokraft::records::framer::FrameEnd::Clean) {
            c.failures
                .push(format!("{}: framing ended {:?}", f.path.display(), f.end));
        }
        for b in &f.batches {
            c.batches += 1;
            for r in &b.records {
                match r {
                    DumpedRecord::Control { offset, record } => match record {
                        Ok(_) => c.control_records += 1,
                        Err(e) => c
                            .failures
                            .push(format!("{} @{offset}: control: {e}", f.path.display())),
                    },
                    DumpedRecord::Metadata {
                        offset,
                        value,
                        record,
                    } => {
                        let at = format!("{} @{offset}", f.path.display());
                        match record {
                            Err(e) => c.failures.push(format!("{at}: {e}")),
                            Ok(r) if matches!(r.message, MetadataRecord::Other { .. }) => {
                                c.failures.push(format!("{at}: unknown type {r:?}"))
                            }
                            Ok(r) => {
                                match r.encode() {
                                    Ok(ours) if &ours == value => {}
                                    Ok(ours) => c.failures.push(format!(
                                        "{at}: {} v{} re-encodes differently:\n kafka {value:02x?}\n ours  {ours:02x?}",
                                        r.message.name(),
                                        r.version
                                    )),
                                    Err(e) => c.failures.push(format!("{at}: {e}")),
                                }
                                *c.metadata_records
                                    .entry((r.message.name().to_string(), r.version))
                                    .or_default() += 1;
                            }
                        }
                    }
                    DumpedRecord::Broken { error } => c
                        .failures
                        .push(format!("{}: broken record: {error}", f.path.display())),
                }
            }
        }
    }
    c
}

fn ferrokraft(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ferrokraft"))
        .args(args)
        .output()
        .unwrap()
}

/// `ferrokraft dump PATH` and `dump --json PATH` succeed; the JSON holds `records` metadata
/// records and the text names each of `names`.
fn check_dump_command(path: &std::path::Path, records: usize, names: &[&str]) {
    let p = path.to_str().unwrap();
    let text = ferrokraft(&["dump", p]);
    assert!(
        text.status.success(),
        "dump {p}: {}",
        String::from_utf8_lossy(&text.stderr)
    );
    let text = String::from_utf8(text.stdout).unwrap();
    for name in names {
        assert!(text.contains(name), "dump {p} does not show {name}");
    }
    let json = ferrokraft(&["dump", "--json", p]);
    assert!(json.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    let mut seen = 0;
    for f in doc["files"].as_array().unwrap() {
        for b in f["batches"].as_array().unwrap() {
            for r in b["records"].as_array().unwrap() {
                assert!(r.get("error").is_none(), "dump --json {p}: {r}");
                if r.get("type").is_some() {
                    seen += 1;
                }
            }
        }
    }
    assert_eq!(seen, records, "metadata records in dump --json {p}");
}

#[test]
fn every_record_kafka_writes_decodes_and_re_encodes_byte_for_byte() {
    let art = Artifacts::new("kafka_metadata_log");
    let mut k = CombinedKafka::start(&art);
    let b = k.bootstrap.clone();
    let bs = ["--bootstrap-server", b.as_str()];
    let with = |args: &[&'static str]| -> Vec<String> {
        bs.iter()
            .chain(args)
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
    };
    let run = |name: &str, classes: &[&'static str], args: &[&'static str]| {
        let args = with(args);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        k.tool(&art, name, classes, &args)
    };

    // Topics and partitions.
    for (topic, partitions) in [("orders", "3"), ("audit", "2"), ("doomed", "2")] {
        let args = with(&["--create", "--replication-factor", "1"]);
        let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
        args.extend(["--topic", topic, "--partitions", partitions]);
        k.tool(&art, &format!("create-{topic}"), TOPIC, &args);
    }
    run(
        "add-partitions",
        TOPIC,
        &["--alter", "--topic", "orders", "--partitions", "4"],
    );
    // Topic, broker and cluster-default configs; one removed again.
    run(
        "topic-config",
        CONFIGS,
        &[
            "--alter",
            "--entity-type",
            "topics",
            "--entity-name",
            "orders",
            "--add-config",
            "retention.ms=86400000,min.insync.replicas=1",
        ],
    );
    run(
        "topic-config-delete",
        CONFIGS,
        &[
            "--alter",
            "--entity-type",
            "topics",
            "--entity-name",
            "orders",
            "--delete-config",
            "retention.ms",
        ],
    );
    run(
        "broker-config",
        CONFIGS,
        &[
            "--alter",
            "--entity-type",
            "brokers",
            "--entity-name",
            "1",
            "--add-config",
            "log.cleaner.threads=2",
        ],
    );
    run(
        "cluster-config",
        CONFIGS,
        &[
            "--alter",
            "--entity-type",
            "brokers",
            "--entity-default",
            "--add-config",
            "log.retention.bytes=1073741824",
        ],
    );
    // SCRAM users: alice stays (she asks for the delegation token), bob is removed again.
    for user in ["alice", "bob"] {
        let add = format!("SCRAM-SHA-256=[iterations=8192,password={user}-secret]");
        let args = with(&["--alter", "--entity-type", "users", "--add-config"]);
        let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
        args.extend([add.as_str(), "--entity-name", user]);
        k.tool(&art, &format!("scram-{user}"), CONFIGS, &args);
    }
    run(
        "scram-bob-delete",
        CONFIGS,
        &[
            "--alter",
            "--entity-type",
            "users",
            "--entity-name",
            "bob",
            "--delete-config",
            "SCRAM-SHA-256",
        ],
    );
    // Client quotas: a user's and the default client-id's.
    run(
        "quota-user",
        CONFIGS,
        &[
            "--alter",
            "--entity-type",
            "users",
            "--entity-name",
            "alice",
            "--add-config",
            "producer_byte_rate=1048576,consumer_byte_rate=2097152",
        ],
    );
    run(
        "quota-default-client",
        CONFIGS,
        &[
            "--alter",
            "--entity-type",
            "clients",
            "--entity-default",
            "--add-config",
            "request_percentage=50",
        ],
    );
    // ACLs: two added, one removed.
    run(
        "acl-add-read",
        ACLS,
        &[
            "--add",
            "--allow-principal",
            "User:carol",
            "--operation",
            "Read",
            "--topic",
            "orders",
        ],
    );
    run(
        "acl-add-prefixed",
        ACLS,
        &[
            "--add",
            "--deny-principal",
            "User:mallory",
            "--operation",
            "Write",
            "--topic",
            "aud",
            "--resource-pattern-type",
            "prefixed",
        ],
    );
    run(
        "acl-remove",
        ACLS,
        &[
            "--remove",
            "--force",
            "--allow-principal",
            "User:carol",
            "--operation",
            "Read",
            "--topic",
            "orders",
        ],
    );
    // A delegation token, over SCRAM (Kafka refuses tokens on unauthenticated connections),
    // then expired at once (removal).
    let client = art.path("alice.properties");
    fs::write(
        &client,
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n\
         sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \
         username=\"alice\" password=\"alice-secret\";\n",
    )
    .unwrap();
    let client = client.to_str().unwrap();
    let sasl = k.sasl_bootstrap.clone();
    let token = k.tool(
        &art,
        "token-create",
        TOKENS,
        &[
            "--bootstrap-server",
            &sasl,
            "--command-config",
            client,
            "--create",
            "--max-life-time-period",
            "-1",
            "--renewer-principal",
            "User:bob",
        ],
    );
    // The table's data line: TOKENID HMAC OWNER ...
    let hmac = token
        .stdout
        .lines()
        .skip_while(|l| !l.starts_with("TOKENID"))
        .skip(1)
        .find(|l| !l.trim().is_empty())
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or_else(|| panic!("no token in:\n{}", token.stdout))
        .to_string();
    k.tool(
        &art,
        "token-expire",
        TOKENS,
        &[
            "--bootstrap-server",
            &sasl,
            "--command-config",
            client,
            "--expire",
            "--expiry-time-period",
            "-1",
            "--hmac",
            &hmac,
        ],
    );
    // An idempotent producer makes the broker allocate producer ids.
    let props = format!("bootstrap.servers={b}");
    k.tool(
        &art,
        "produce",
        PERF,
        &[
            "--topic",
            "orders",
            "--num-records",
            "20",
            "--record-size",
            "10",
            "--throughput",
            "-1",
            "--producer-props",
            &props,
            "acks=all",
        ],
    );
    run("delete-topic", TOPIC, &["--delete", "--topic", "doomed"]);
    // Graceful stop: controlled shutdown writes its own records, and the log is flushed.
    k.stop();

    let files = dump::dump_path(&k.log_dir).unwrap();
    let c = census(&files);
    let snapshots: Vec<String> = files
        .iter()
        .map(|f| f.path.file_name().unwrap().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".checkpoint") && !n.starts_with("00000000000000000000-"))
        .filter(|n| n != "bootstrap.checkpoint")
        .collect();
    eprintln!("Kafka's snapshots: {snapshots:?}");
    assert!(!snapshots.is_empty(), "Kafka wrote no snapshot");
    eprintln!(
        "{} files, {} batches, {} control records, {} metadata records:",
        files.len(),
        c.batches,
        c.control_records,
        c.metadata_records.values().sum::<usize>()
    );
    for ((name, version), n) in &c.metadata_records {
        eprintln!("  {name} v{version}: {n}");
    }
    assert!(c.failures.is_empty(), "{}", c.failures.join("\n"));

    let seen: BTreeSet<&str> = c.metadata_records.keys().map(|(n, _)| n.as_str()).collect();
    let provoked = [
        "FeatureLevelRecord",
        "RegisterControllerRecord",
        "RegisterBrokerRecord",
        "BrokerRegistrationChangeRecord",
        "TopicRecord",
        "PartitionRecord",
        "ConfigRecord",
        "RemoveTopicRecord",
        "UserScramCredentialRecord",
        "RemoveUserScramCredentialRecord",
        "ClientQuotaRecord",
        "AccessControlEntryRecord",
        "RemoveAccessControlEntryRecord",
        "DelegationTokenRecord",
        "RemoveDelegationTokenRecord",
        "ProducerIdsRecord",
        "NoOpRecord",
        // Not asked for directly: the leader moves at controlled shutdown, a topic's
        // min.insync.replicas change clears its ELR, activation is a metadata transaction.
        "PartitionChangeRecord",
        "ClearElrRecord",
        "BeginTransactionRecord",
        "EndTransactionRecord",
    ];
    let missing: Vec<&&str> = provoked.iter().filter(|n| !seen.contains(**n)).collect();
    assert!(
        missing.is_empty(),
        "not in Kafka's log: {missing:?}; seen {seen:?}"
    );

    // The image the dump adds up to has the features and this node's controller registration.
    let image = dump::image_of(&files);
    assert!(image.metadata_version().is_some());
    assert!(image.controllers.contains_key(&1), "{image:?}");

    // The dump command over the directory, and over its first segment alone.
    let total = c.metadata_records.values().sum::<usize>();
    check_dump_command(&k.log_dir, total, &provoked);
    let segment = files
        .iter()
        .find(|f| f.path.extension().is_some_and(|e| e == "log"))
        .unwrap();
    let in_segment = census(std::slice::from_ref(segment))
        .metadata_records
        .values()
        .sum();
    check_dump_command(&segment.path, in_segment, &["TopicRecord"]);

    compare_images_with_metadata_shell(&art, &files);
}

/// Data record values of a snapshot or log file.
fn data_values(file: &DumpedFile) -> Vec<Vec<u8>> {
    file.batches
        .iter()
        .flat_map(|b| &b.records)
        .filter_map(|r| match r {
            DumpedRecord::Metadata { value, .. } => Some(value.clone()),
            _ => None,
        })
        .collect()
}

/// Issue #8 §3: ferrokraft writes a snapshot of the image it replayed from Kafka's newest
/// snapshot, at the same id and with the same header. It holds exactly Kafka's records (each
/// byte for byte; only the order inside a section may differ, Kafka iterating hash maps),
/// metadata.version first, and it reloads to the same image. Returns (tempdir, file).
fn ferrokraft_snapshot_of(
    id: &SnapshotId,
    kafka_file: &std::path::Path,
    image: &MetadataImage,
) -> (tempfile::TempDir, std::path::PathBuf) {
    let kafka = RawSnapshot::open_path(kafka_file, *id).unwrap();
    let header = SnapshotHeaderInfo {
        last_contained_log_timestamp_ms: kafka.summary().last_contained_log_timestamp_ms,
        kraft_version: kafka.summary().kraft_version,
        voters: kafka.summary().voters.clone(),
    };
    let values = image.snapshot_records().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = write_snapshot(dir.path(), *id, &header, &values, 0).unwrap();

    let theirs = data_values(&dump::dump_file(kafka_file).unwrap());
    let written = data_values(&dump::dump_file(&path).unwrap());
    assert_eq!(written, values);
    assert_eq!(
        written[0], theirs[0],
        "metadata.version first, as Kafka writes it"
    );
    let sorted = |v: &[Vec<u8>]| {
        let mut v = v.to_vec();
        v.sort();
        v
    };
    let (ours_sorted, theirs_sorted) = (sorted(&written), sorted(&theirs));
    if ours_sorted != theirs_sorted {
        let describe = |v: &[Vec<u8>], other: &[Vec<u8>]| -> Vec<String> {
            v.iter()
                .filter(|r| !other.contains(r))
                .map(|r| format!("{:?}", MetadataRecord::decode(r)))
                .collect()
        };
        panic!(
            "ferrokraft's snapshot records differ from Kafka's:\n only ferrokraft: {:#?}\n only Kafka: {:#?}",
            describe(&ours_sorted, &theirs_sorted),
            describe(&theirs_sorted, &ours_sorted)
        );
    }
    let mut reloaded = MetadataImage::new();
    reloaded.load_snapshot(
        &fs::read(&path).unwrap(),
        id.end_offset,
        "ferrokraft snapshot",
    );
    assert_eq!(reloaded.to_json(), image.to_json());
    eprintln!(
        "ferrokraft wrote {} records of Kafka's image as snapshot {}: the same records as Kafka's",
        written.len(),
        id.file_stem()
    );
    (dir, path)
}

/// Issue #8 §2: the image ferrokraft replays from Kafka's log, and from Kafka's newest
/// snapshot, equals what kafka-metadata-shell shows of the same file; and the image of the
/// whole directory (newest snapshot, then the log after it) equals the log's.
fn compare_images_with_metadata_shell(art: &Artifacts, files: &[DumpedFile]) {
    let segments: Vec<&DumpedFile> = files
        .iter()
        .filter(|f| f.path.extension().is_some_and(|e| e == "log"))
        .collect();
    assert_eq!(
        segments.len(),
        1,
        "one segment expected, so the shell reads the whole log"
    );
    let log = &segments[0].path;
    let mut from_log = MetadataImage::new();
    from_log.replay_batches(&fs::read(log).unwrap(), i64::MAX, "kafka log");
    let newest = files
        .iter()
        .filter_map(|f| {
            let name = f.path.file_name()?.to_string_lossy().into_owned();
            SnapshotId::parse_file_name(&name).map(|id| (id, f.path.clone()))
        })
        .max_by_key(|(id, _)| *id)
        .unwrap();
    let mut from_snapshot = MetadataImage::new();
    from_snapshot.load_snapshot(
        &fs::read(&newest.1).unwrap(),
        newest.0.end_offset,
        "snapshot",
    );
    for image in [&from_log, &from_snapshot] {
        assert_eq!(
            image.refused_records + image.undecodable_records,
            0,
            "{}",
            image.to_text()
        );
        assert!(image.open_transaction.is_none());
    }
    // Kafka's log is complete: snapshot + tail and the log alone give the same image.
    let whole = dump::image_of(files);
    assert_eq!(whole.to_json(), from_log.to_json());
    let ours = ferrokraft_snapshot_of(&newest.0, &newest.1, &from_snapshot);

    if !metadata_shell::available() {
        // Kafka 4.4 publishes no kafka-shell artifact: only the checks above apply.
        eprintln!(
            "Kafka {} has no kafka-metadata-shell: image compared between snapshot and log only",
            support::kafka::kafka_version()
        );
        return;
    }
    let mut mismatches = Vec::new();
    for (label, file, image) in [
        ("log", log, &from_log),
        ("snapshot", &newest.1, &from_snapshot),
        ("ferrokraft-written snapshot", &ours.1, &from_snapshot),
    ] {
        let c = metadata_shell::compare(art, label, file, image);
        eprintln!(
            "kafka-metadata-shell vs ferrokraft ({label}, {}): {} topics, {} partitions, \
             {} config keys, {} quotas, {} features, {} brokers, {} controllers, {} ACLs, \
             {} SCRAM credentials, {} delegation tokens; {} mismatches",
            file.display(),
            c.topics,
            c.partitions,
            c.configs,
            c.quotas,
            c.features,
            c.brokers,
            c.controllers,
            c.acls,
            c.scram_users,
            c.tokens,
            c.mismatches.len()
        );
        // The scenario's operations must be in the image, or the comparison proves little.
        assert!(
            c.topics >= 2 && c.partitions >= 6 && c.configs >= 3,
            "{c:?}"
        );
        assert!(
            c.quotas >= 3 && c.acls >= 1 && c.scram_users >= 1 && c.brokers == 1,
            "{c:?}"
        );
        mismatches.extend(c.mismatches);
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));

    // The comparison can fail: a changed leader epoch, config value and SCRAM iteration count
    // are each reported by path.
    let mut tampered = from_snapshot.clone();
    let orders = tampered.topic_ids["orders"];
    let p0 = std::sync::Arc::make_mut(
        std::sync::Arc::make_mut(tampered.topics.get_mut(&orders).unwrap())
            .partitions
            .get_mut(&0)
            .unwrap(),
    );
    p0.leader_epoch += 1;
    let keys = tampered.configs.values_mut().next().unwrap();
    let key = keys.keys().next().unwrap().clone();
    keys.insert(key.clone(), "tampered".into());
    tampered.scram.values_mut().next().unwrap().iterations += 1;
    let c = metadata_shell::compare(art, "tampered", &newest.1, &tampered);
    for expected in [
        "/image/topics/byName/orders/0:".to_string(),
        format!("/{key}:"),
        "/image/scram/".to_string(),
    ] {
        assert!(
            c.mismatches.iter().any(|m| m.contains(&expected)),
            "{expected} not reported: {:?}",
            c.mismatches
        );
    }
    assert_eq!(c.mismatches.len(), 3, "{:?}", c.mismatches);
    assert!(
        from_log.topic_by_name("doomed").is_none(),
        "deleted topic still in the image"
    );
}

#[test]
fn dump_shows_what_ferrokraft_wrote() {
    let art = Artifacts::new("dump_ferrokraft");
    let port = free_port();
    let dir = art.path("data");
    let props = art.path("server.properties");
    fs::write(
        &props,
        format!(
            "process.roles=controller\nnode.id=1\n\
             controller.quorum.bootstrap.servers=127.0.0.1:{port}\n\
             listeners=CONTROLLER://127.0.0.1:{port}\ncontroller.listener.names=CONTROLLER\n\
             log.dirs={}\n",
            dir.display()
        ),
    )
    .unwrap();
    let id = String::from_utf8(ferrokraft(&["random-uuid"]).stdout).unwrap();
    let p = props.to_str().unwrap();
    let out = ferrokraft(&["format", "-c", p, "-t", id.trim(), "--standalone"]);
    assert!(out.status.success(), "{out:?}");
    let log = fs::File::create(art.path("ferrokraft.log")).unwrap();
    let mut node = Command::new(env!("CARGO_BIN_EXE_ferrokraft"))
        .args(["start", "-c", p, "--workload-records-per-sec", "50"])
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap();
    // Wait until the committed log holds the node's own registration and workload records.
    let deadline = Instant::now() + Duration::from_secs(60);
    let files = loop {
        let files = dump::dump_path(&dir).unwrap_or_default();
        let c = census(&files);
        let has = |n: &str| c.metadata_records.keys().any(|(name, _)| name == n);
        if has("RegisterControllerRecord") && has("NoOpRecord") {
            break files;
        }
        assert!(
            Instant::now() < deadline,
            "ferrokraft wrote no registration"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    let _ = node.kill();
    let _ = node.wait();
    let c = census(&files);
    assert!(c.failures.is_empty(), "{}", c.failures.join("\n"));
    assert!(c.control_records > 0, "no LeaderChange/KRaftVersion/Voters");
    let names: Vec<&str> = files
        .iter()
        .map(|f| f.path.file_name().unwrap().to_str().unwrap())
        .collect();
    assert!(
        names.contains(&"bootstrap.checkpoint")
            && names.contains(&"00000000000000000000-0000000000.checkpoint"),
        "{names:?}"
    );
    let image = dump::image_of(&files);
    assert!(image.controllers.contains_key(&1), "{image:?}");
    // The node was killed mid-write, so check the command's counts over the finished files
    // (format's bootstrap file and 0-0 snapshot), then the directory as it is now (text:
    // every part named).
    let bootstrap = dir.join("bootstrap.checkpoint");
    let in_bootstrap = census(&[dump::dump_file(&bootstrap).unwrap()])
        .metadata_records
        .values()
        .sum();
    assert!(in_bootstrap > 0);
    check_dump_command(
        &bootstrap,
        in_bootstrap,
        &["FeatureLevelRecord", "SnapshotHeader"],
    );
    let snapshot = dir.join("__cluster_metadata-0/00000000000000000000-0000000000.checkpoint");
    check_dump_command(&snapshot, 0, &["KRaftVersion", "Voters", "SnapshotFooter"]);
    let text = ferrokraft(&["dump", dir.to_str().unwrap()]);
    assert!(text.status.success());
    let text = String::from_utf8(text.stdout).unwrap();
    for part in [
        "RegisterControllerRecord",
        "NoOpRecord",
        "LeaderChange",
        "control",
        "Image:",
    ] {
        assert!(text.contains(part), "dump does not show {part}:\n{text}");
    }
}
