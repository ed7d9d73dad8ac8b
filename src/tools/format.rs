//! `kafka-storage format` and `info` for a controller (the start-up check of a formatted
//! directory is `storage::formatted`).
//!
//! Format, per directory of `log_dirs ∪ {metadata_log_dir}` in sorted order (Kafka's TreeSet):
//! 1. skip (with `ignore_formatted`) or refuse a directory that already has meta.properties;
//! 2. pick its directory id: the voter's own id in `--initial-controllers`, else random;
//! 3. mkdir, write `bootstrap.checkpoint`, and in the metadata directory of a dynamic quorum
//!    (`--standalone`, `--initial-controllers`) `__cluster_metadata-0/00000000000000000000-0000000000.checkpoint`
//!    = [SNAPSHOT_HEADER(now), KRAFT_VERSION(1), KRAFT_VOTERS] + [SNAPSHOT_FOOTER];
//! 4. write meta.properties last: it is the commit marker, so a crash mid-format leaves an
//!    unformatted directory that can simply be formatted again.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use kafka_protocol::messages::voters_record::{Endpoint, KRaftVersionFeature, Voter};
use kafka_protocol::messages::VotersRecord;
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use crate::common::release::{MetadataVersion, Release, KRAFT_VERSION_FEATURE};
use crate::common::uuid::{
    parse_kafka_uuid, random_directory_id, random_kafka_uuid, uuid_to_kafka_string,
};
use crate::snapshot::{SnapshotHeaderInfo, SnapshotId, SnapshotWriter};
use crate::storage::bootstrap::{write_bootstrap_checkpoint, BootstrapFeatures};
use crate::storage::formatted::check_matches;
pub use crate::storage::formatted::METADATA_PARTITION_DIR;
use crate::storage::meta_properties::MetaProperties;
use crate::storage::StorageError;

/// A listener endpoint of a controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenerEndpoint {
    /// Listener name (the first of `controller.listener.names`).
    pub name: String,
    /// Advertised host (Kafka uses "localhost" when the listener has no host).
    pub host: String,
    /// Port.
    pub port: u16,
}

/// One entry of `--initial-controllers id@host:port:directoryId`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DynamicVoter {
    /// Node id.
    pub node_id: i32,
    /// Host.
    pub host: String,
    /// Port.
    pub port: u16,
    /// The voter's directory id.
    pub directory_id: Uuid,
}

impl DynamicVoter {
    /// Parses the comma-separated `--initial-controllers` value (hosts may be `[ipv6]`).
    pub fn parse_list(s: &str) -> Result<Vec<DynamicVoter>, StorageError> {
        let bad = |m: String| StorageError::InvalidRequest(m);
        let mut out: Vec<DynamicVoter> = Vec::new();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let (id, rest) = item
                .split_once('@')
                .ok_or_else(|| bad(format!("No @ found in dynamic voter string {item}")))?;
            let node_id: i32 = id.parse().map_err(|_| {
                bad(format!(
                    "Failed to parse node id in dynamic voter string {item}"
                ))
            })?;
            let (host, rest) = if let Some(r) = rest.strip_prefix('[') {
                let (h, r) = r
                    .split_once(']')
                    .ok_or_else(|| bad(format!("Unterminated [ in dynamic voter string {item}")))?;
                (h, r.strip_prefix(':').unwrap_or(r))
            } else {
                rest.split_once(':')
                    .ok_or_else(|| bad(format!("No colon following hostname in {item}")))?
            };
            let (port, dir) = rest
                .split_once(':')
                .ok_or_else(|| bad(format!("No colon following port in {item}")))?;
            let port: u16 = port.parse().map_err(|_| {
                bad(format!(
                    "Failed to parse port in dynamic voter string {item}"
                ))
            })?;
            let directory_id = parse_kafka_uuid(dir)
                .map_err(|e| bad(format!("{e} in dynamic voter string {item}")))?;
            if out.iter().any(|v| v.node_id == node_id) {
                return Err(bad(format!(
                    "Node id {node_id} was specified more than once"
                )));
            }
            out.push(DynamicVoter {
                node_id,
                host: host.to_string(),
                port,
                directory_id,
            });
        }
        if out.is_empty() {
            return Err(bad("No dynamic voters were specified".into()));
        }
        Ok(out)
    }
}

/// How the quorum is bootstrapped (the mutually exclusive flags of `kafka-storage format`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatMode {
    /// `controller.quorum.voters` is set: kraft.version 0, no 0-0 snapshot.
    StaticVoters,
    /// `--standalone`: this node is the only voter, at `endpoint`, with a random directory id.
    Standalone {
        /// This controller's endpoint (first controller listener).
        endpoint: ListenerEndpoint,
    },
    /// `--initial-controllers`.
    InitialControllers {
        /// Listener name used for every voter's endpoint.
        controller_listener_name: String,
        /// The voters.
        voters: Vec<DynamicVoter>,
    },
    /// `--no-initial-controllers`: kraft.version 1, no 0-0 snapshot (joins via add-controller).
    NoInitialControllers,
}

/// Everything `format` needs; the CLI/config layer fills it.
#[derive(Debug, Clone)]
pub struct FormatRequest {
    /// `node.id`.
    pub node_id: i32,
    /// `log.dirs`.
    pub log_dirs: Vec<PathBuf>,
    /// `metadata.log.dir` (`None`: the first of `log_dirs`).
    pub metadata_log_dir: Option<PathBuf>,
    /// `--cluster-id`.
    pub cluster_id: String,
    /// Quorum bootstrap mode.
    pub mode: FormatMode,
    /// `--release-version` (default: the latest production level of `kafka_release`).
    pub release_version: Option<String>,
    /// The Kafka release the node presents itself as (`ferrokraft.kafka.release`): which
    /// metadata.version levels `--release-version` may name, and the default.
    pub kafka_release: crate::codec::versions::Release,
    /// `--feature name=level` overrides.
    pub feature_overrides: Vec<(String, i16)>,
    /// `--ignore-formatted`.
    pub ignore_formatted: bool,
    /// `--add-scram` arguments (`SCRAM-SHA-256=[name=alice,password=…]`).
    pub scram_arguments: Vec<String>,
    /// Wall-clock time for timestamps (batch times, snapshot header, meta.properties comment).
    pub now_unix_ms: i64,
}

/// What `format` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatReport {
    /// Lines Kafka's tool prints.
    pub lines: Vec<String>,
    /// The chosen metadata.version.
    pub metadata_version: MetadataVersion,
    /// kraft.version of the quorum.
    pub kraft_version: i16,
    /// Each newly formatted directory and its directory id.
    pub formatted: Vec<(PathBuf, Uuid)>,
}

/// The highest level of feature `name` that `release`'s formatter accepts.
fn formatter_max_level(release: Release, name: &str) -> Option<i16> {
    release
        .known_features()
        .find(|(n, _)| *n == name)
        .map(|(_, max)| max)
}

/// Formats the directories as `kafka-storage format` does.
pub fn format(req: &FormatRequest) -> Result<FormatReport, StorageError> {
    let bad = |m: String| StorageError::InvalidRequest(m);
    if req.node_id < 0 {
        return Err(bad("You must specify a valid non-negative node ID.".into()));
    }
    if req.cluster_id.is_empty() {
        return Err(bad("You must specify the cluster id.".into()));
    }
    let metadata_dir = req
        .metadata_log_dir
        .clone()
        .or_else(|| req.log_dirs.first().cloned())
        .ok_or_else(|| bad("You must specify at least one directory to format".into()))?;
    let mv = match &req.release_version {
        Some(r) => MetadataVersion::parse_release(r, req.kafka_release).map_err(|e| {
            // Kafka's message, and the key that would make the level known here.
            let newer = Release::ALL
                .into_iter()
                .filter(|&newer| newer > req.kafka_release)
                .find(|&newer| MetadataVersion::parse_release(r, newer).is_ok());
            bad(match newer {
                Some(newer) if newer != req.kafka_release => format!(
                    "{e} (ferrokraft presents Kafka {}'s controller here; set ferrokraft.kafka.release={} to format and present Kafka {})",
                    req.kafka_release.name(),
                    newer.name(),
                    newer.name()
                ),
                _ => e,
            })
        })?,
        None => MetadataVersion::latest_production(req.kafka_release),
    };
    let dynamic = !matches!(req.mode, FormatMode::StaticVoters);
    let mut kraft_version = if dynamic { 1 } else { 0 };
    let mut features = mv.default_features();
    // Kafka 4.0 knows neither share.version nor streams.version (its format refuses them).
    features.retain(|name, _| formatter_max_level(req.kafka_release, name).is_some());
    for (name, level) in &req.feature_overrides {
        if name == KRAFT_VERSION_FEATURE {
            if *level != kraft_version {
                return Err(bad(format!(
                    "Cannot set kraft.version to {level}: the quorum bootstrap mode requires {kraft_version}"
                )));
            }
            kraft_version = *level;
        } else if let Some(max) = formatter_max_level(req.kafka_release, name) {
            if *level > max {
                return Err(bad(format!("No feature:{name} with feature level {level}")));
            }
            features.insert(name.clone(), *level);
        } else {
            let mut names: Vec<&str> = req
                .kafka_release
                .known_features()
                .map(|(n, _)| n)
                .chain([KRAFT_VERSION_FEATURE])
                .collect();
            names.sort_unstable();
            return Err(bad(format!(
                "Unsupported feature: {name}. Supported features are: {}",
                names.join(", ")
            )));
        }
    }
    if kraft_version >= 1 && mv.default_kraft_version() < 1 {
        return Err(bad(format!(
            "Cannot set kraft.version to 1 with metadata.version {}: dynamic quorums need 3.9-IV0 or newer",
            mv.name
        )));
    }
    let voters = match &req.mode {
        FormatMode::Standalone { endpoint } => Some(vec![DynamicVoter {
            node_id: req.node_id,
            host: endpoint.host.clone(),
            port: endpoint.port,
            // StorageTool builds the standalone voter with Uuid.randomUuid().
            directory_id: random_kafka_uuid(),
        }]),
        FormatMode::InitialControllers { voters, .. } => Some(voters.clone()),
        _ => None,
    };
    let listener_name = match &req.mode {
        FormatMode::Standalone { endpoint } => endpoint.name.clone(),
        FormatMode::InitialControllers {
            controller_listener_name,
            ..
        } => controller_listener_name.clone(),
        _ => String::new(),
    };
    let other_records = if req.scram_arguments.is_empty() {
        Vec::new()
    } else {
        if mv.level < crate::common::release::mv::SCRAM {
            return Err(bad(
                "SCRAM is only supported in metadata.version 3.5-IV2 or later.".into(),
            ));
        }
        super::scram_args::scram_record_values(&req.scram_arguments).map_err(bad)?
    };
    let bootstrap = BootstrapFeatures {
        metadata_version: mv.level,
        features,
        other_records,
    };

    let dirs: BTreeSet<PathBuf> = req
        .log_dirs
        .iter()
        .cloned()
        .chain(std::iter::once(metadata_dir.clone()))
        .collect();
    let mut taken_ids = Vec::new();
    let mut to_format = Vec::new();
    for dir in &dirs {
        match MetaProperties::read(dir)? {
            Some(existing) => {
                check_matches(dir, &existing, req.node_id, Some(&req.cluster_id))?;
                if !req.ignore_formatted {
                    return Err(bad(format!(
                        "Log directory {} is already formatted. Use --ignore-formatted to ignore this directory and format the others.",
                        dir.display()
                    )));
                }
                taken_ids.extend(existing.directory_id);
            }
            None => to_format.push(dir.clone()),
        }
    }
    let mut report = FormatReport {
        lines: Vec::new(),
        metadata_version: mv,
        kraft_version,
        formatted: Vec::new(),
    };
    if to_format.is_empty() {
        report
            .lines
            .push("All of the log directories are already formatted.".into());
        return Ok(report);
    }
    for dir in to_format {
        let is_meta = dir == metadata_dir;
        let own_voter = voters
            .as_ref()
            .and_then(|vs| vs.iter().find(|v| v.node_id == req.node_id));
        let (description, directory_id) = match (&voters, own_voter) {
            _ if !is_meta => ("data directory", None),
            (None, _) => ("metadata directory", None),
            (Some(_), Some(v)) => ("dynamic metadata voter directory", Some(v.directory_id)),
            (Some(_), None) => ("dynamic metadata directory", None),
        };
        let directory_id = directory_id.unwrap_or_else(|| random_directory_id(&taken_ids));
        taken_ids.push(directory_id);
        report.lines.push(format!(
            "Formatting {description} {} with metadata.version {}.",
            dir.display(),
            mv.name
        ));
        fs::create_dir_all(&dir).map_err(|e| StorageError::io(&dir, e))?;
        write_bootstrap_checkpoint(&dir, &bootstrap, req.now_unix_ms)?;
        if let (true, Some(vs)) = (is_meta, &voters) {
            write_bootstrap_snapshot(&dir, vs, &listener_name, kraft_version, req.now_unix_ms)?;
        }
        MetaProperties {
            cluster_id: req.cluster_id.clone(),
            node_id: req.node_id,
            directory_id: Some(directory_id),
        }
        .write(&dir, req.now_unix_ms)?;
        report.formatted.push((dir, directory_id));
    }
    Ok(report)
}

/// The VotersRecord for a list of dynamic voters. Voters are in ascending id order, which is
/// Java's HashMap order for ids below the map capacity (the common case); readers accept any.
pub fn voters_record(voters: &[DynamicVoter], listener_name: &str) -> VotersRecord {
    let mut sorted: Vec<&DynamicVoter> = voters.iter().collect();
    sorted.sort_by_key(|v| v.node_id);
    VotersRecord::default().with_version(0).with_voters(
        sorted
            .into_iter()
            .map(|v| {
                Voter::default()
                    .with_voter_id(v.node_id.into())
                    .with_voter_directory_id(v.directory_id)
                    .with_endpoints(vec![Endpoint::default()
                        .with_name(StrBytes::from_string(listener_name.to_string()))
                        .with_host(StrBytes::from_string(v.host.clone()))
                        .with_port(v.port)])
                    // DynamicVoter.toVoterNode always advertises kraft.version [0, 1].
                    .with_k_raft_version_feature(
                        KRaftVersionFeature::default()
                            .with_min_supported_version(0)
                            .with_max_supported_version(1),
                    )
            })
            .collect(),
    )
}

fn write_bootstrap_snapshot(
    dir: &Path,
    voters: &[DynamicVoter],
    listener_name: &str,
    kraft_version: i16,
    now_ms: i64,
) -> Result<(), StorageError> {
    let pdir = dir.join(METADATA_PARTITION_DIR);
    fs::create_dir_all(&pdir).map_err(|e| StorageError::io(&pdir, e))?;
    let header = SnapshotHeaderInfo {
        last_contained_log_timestamp_ms: now_ms,
        kraft_version: Some(kraft_version),
        voters: Some(voters_record(voters, listener_name)),
    };
    let w = SnapshotWriter::create(&pdir, SnapshotId::BOOTSTRAP, &header, now_ms)?;
    w.finish(now_ms)?;
    Ok(())
}

/// `kafka-storage info`: describes the directories in Kafka's words. Returns the text and
/// whether a problem was found (Kafka then exits with 1).
pub fn describe_dirs(dirs: &[PathBuf]) -> (String, bool) {
    let mut found = Vec::new();
    let mut problems = Vec::new();
    let mut metas = BTreeSet::new();
    for dir in dirs {
        if !dir.is_dir() {
            problems.push(format!("{} does not exist", dir.display()));
            continue;
        }
        found.push(dir.display().to_string());
        match MetaProperties::read(dir) {
            Ok(Some(m)) => {
                let dir_id = m
                    .directory_id
                    .map(|d| format!("directory.id={}, ", uuid_to_kafka_string(&d)))
                    .unwrap_or_default();
                metas.insert(format!(
                    "{{cluster.id={}, {dir_id}node.id={}, version=1}}",
                    m.cluster_id, m.node_id
                ));
            }
            Ok(None) => problems.push(format!("{} is not formatted.", dir.display())),
            Err(e) => problems.push(e.to_string()),
        }
    }
    let mut out = String::new();
    if !found.is_empty() {
        out.push_str(if found.len() == 1 {
            "Found log directory:\n"
        } else {
            "Found log directories:\n"
        });
        for f in &found {
            out.push_str(&format!("  {f}\n"));
        }
        out.push('\n');
    }
    for m in &metas {
        out.push_str(&format!("Found metadata: {m}\n\n"));
    }
    if metas.len() > 1 {
        problems.push("Mismatched cluster IDs or node IDs between storage directories.".into());
    }
    if !problems.is_empty() {
        out.push_str(if problems.len() == 1 {
            "Found problem:\n"
        } else {
            "Found problems:\n"
        });
        for p in &problems {
            out.push_str(&format!("  {p}\n"));
        }
        out.push('\n');
    }
    (out, !problems.is_empty())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::snapshot::RawSnapshot;
    use crate::storage::bootstrap::read_bootstrap;
    use crate::storage::open_formatted;

    fn req(dir: &Path, mode: FormatMode) -> FormatRequest {
        FormatRequest {
            node_id: 1,
            log_dirs: vec![dir.to_path_buf()],
            metadata_log_dir: None,
            cluster_id: "MkU3OEVBNTcwNTJENDM2Qk".into(),
            mode,
            release_version: None,
            kafka_release: Default::default(),
            feature_overrides: vec![],
            ignore_formatted: false,
            scram_arguments: Vec::new(),
            now_unix_ms: 1_700_000_000_000,
        }
    }

    /// A 4.4 level on a node presenting 4.1: Kafka 4.1.2's refusal, then the key that makes
    /// ferrokraft present 4.4; nothing formatted. Features are refused with each release's
    /// words (Kafka 4.0.2's and 4.4.0's `kafka-storage format --feature`).
    #[test]
    fn a_newer_release_version_names_the_release_key() {
        let d = tempfile::tempdir().unwrap();
        let mut r = req(d.path(), FormatMode::StaticVoters);
        r.release_version = Some("4.4".into());
        let e = format(&r).unwrap_err().to_string();
        assert!(
            e.contains("Version 4.4 is not a valid version. The minimum version is 3.3-IV3 and the maximum version is 4.2-IV1 (ferrokraft presents Kafka 4.1's controller here; set ferrokraft.kafka.release=4.4 to format and present Kafka 4.4)"),
            "{e}"
        );
        assert!(!d.path().join("meta.properties").exists());
        // An unstable 4.1 level is a 4.2 production one: the hint names the oldest release
        // that formats it.
        r.release_version = Some("4.2-IV1".into());
        let e = format(&r).unwrap_err().to_string();
        assert!(
            e.contains("metadata.version 4.2-IV1 is not yet stable. (ferrokraft presents Kafka 4.1's controller here; set ferrokraft.kafka.release=4.2"),
            "{e}"
        );
        r.release_version = Some("9.9".into());
        let e = format(&r).unwrap_err().to_string();
        assert!(!e.contains("ferrokraft.kafka.release"), "{e}");

        r.release_version = None;
        r.kafka_release = Release::Kafka4_0;
        r.feature_overrides = vec![("share.version".into(), 1)];
        assert!(format(&r).unwrap_err().to_string().contains(
            "Unsupported feature: share.version. Supported features are: \
             eligible.leader.replicas.version, group.version, kraft.version, transaction.version"
        ));
        r.kafka_release = Release::Kafka4_4;
        r.feature_overrides = vec![("share.version".into(), 3)];
        assert!(format(&r)
            .unwrap_err()
            .to_string()
            .contains("No feature:share.version with feature level 3"));
        r.feature_overrides = vec![("share.version".into(), 2)];
        assert!(format(&r).is_ok());
    }

    /// `--add-scram` puts the credentials after the features in bootstrap.checkpoint, read
    /// back as they were written; below 3.5-IV2 it is refused and nothing is formatted.
    #[test]
    fn add_scram_writes_credentials_into_the_bootstrap_records() {
        let d = tempfile::tempdir().unwrap();
        let mut r = req(d.path(), FormatMode::StaticVoters);
        r.scram_arguments = vec!["SCRAM-SHA-256=[name=alice,password=alice-secret]".into()];
        format(&r).unwrap();
        let b = open_formatted(d.path(), 1, None)
            .unwrap()
            .bootstrap
            .unwrap();
        assert_eq!(b.other_records.len(), 1);
        let record =
            crate::metadata::record::ApiMessageAndVersion::decode(&b.other_records[0]).unwrap();
        let crate::metadata::record::MetadataRecord::UserScramCredential(c) = record.message else {
            panic!("{record:?}");
        };
        let keys = crate::security::scram::ScramCredential::from_password(
            crate::security::scram::ScramMechanism::Sha256,
            "alice-secret",
            &c.salt,
            4096,
        );
        assert_eq!(
            (c.name.as_str(), c.iterations, c.stored_key, c.server_key),
            ("alice", 4096, keys.stored_key, keys.server_key)
        );
        assert_eq!(b.record_values().last(), Some(&b.other_records[0]));

        let low = tempfile::tempdir().unwrap();
        let mut r = req(low.path(), FormatMode::StaticVoters);
        r.release_version = Some("3.5-IV1".into());
        r.scram_arguments = vec!["SCRAM-SHA-256=[name=alice,password=alice-secret]".into()];
        let err = format(&r).unwrap_err().to_string();
        assert!(
            err.contains("SCRAM is only supported in metadata.version 3.5-IV2 or later."),
            "{err}"
        );
        assert!(!low.path().join("meta.properties").exists());
    }

    #[test]
    fn standalone_writes_zero_snapshot_and_reopens() {
        let d = tempfile::tempdir().unwrap();
        let ep = ListenerEndpoint {
            name: "CONTROLLER".into(),
            host: "127.0.0.1".into(),
            port: 9093,
        };
        let r = format(&req(d.path(), FormatMode::Standalone { endpoint: ep })).unwrap();
        assert_eq!(
            r.lines,
            vec![format!(
                "Formatting dynamic metadata voter directory {} with metadata.version 4.1-IV1.",
                d.path().display()
            )]
        );
        let pdir = d.path().join(METADATA_PARTITION_DIR);
        let snap = RawSnapshot::open(&pdir, SnapshotId::BOOTSTRAP).unwrap();
        let voters = snap.summary().voters.clone().unwrap();
        assert_eq!(voters.voters.len(), 1);
        assert_eq!(
            Some(voters.voters[0].voter_directory_id),
            Some(r.formatted[0].1)
        );
        let opened = open_formatted(d.path(), 1, Some("MkU3OEVBNTcwNTJENDM2Qk")).unwrap();
        assert_eq!(opened.directory_id, r.formatted[0].1);
        let b = opened.bootstrap.clone().unwrap();
        assert_eq!(b.metadata_version, 27);
        assert_eq!(b.features.get("transaction.version"), Some(&2));
        // A second open while locked fails and names the lock file.
        let e = open_formatted(d.path(), 1, None).unwrap_err();
        assert!(e.to_string().contains(".lock"), "{e}");
        drop(opened);
        let e = open_formatted(d.path(), 2, None).unwrap_err();
        assert!(
            matches!(
                e,
                StorageError::Mismatch {
                    field: "node.id",
                    ..
                }
            ),
            "{e}"
        );
        let e = format(&req(d.path(), FormatMode::NoInitialControllers)).unwrap_err();
        assert!(e.to_string().contains("already formatted"), "{e}");
        let mut again = req(d.path(), FormatMode::NoInitialControllers);
        again.ignore_formatted = true;
        assert_eq!(
            format(&again).unwrap().lines,
            vec!["All of the log directories are already formatted."]
        );
    }

    #[test]
    fn static_and_no_initial_controllers_have_no_zero_snapshot() {
        for mode in [FormatMode::StaticVoters, FormatMode::NoInitialControllers] {
            let d = tempfile::tempdir().unwrap();
            let data = d.path().join("data");
            let meta = d.path().join("meta");
            let mut r = req(&meta, mode.clone());
            r.log_dirs = vec![data.clone(), meta.clone()];
            r.metadata_log_dir = Some(meta.clone());
            r.release_version = Some("3.9".into());
            let rep = format(&r).unwrap();
            assert_eq!(rep.lines.len(), 2);
            assert!(rep.lines[0].starts_with("Formatting data directory"));
            assert!(rep.lines[1].starts_with("Formatting metadata directory"));
            assert!(!meta.join(METADATA_PARTITION_DIR).exists());
            assert!(data.join("bootstrap.checkpoint").exists());
            let b = read_bootstrap(&meta, &meta.join(METADATA_PARTITION_DIR))
                .unwrap()
                .unwrap();
            assert_eq!(b.metadata_version, 21);
        }
    }

    #[test]
    fn initial_controllers_parsing_and_non_voter() {
        let vs = DynamicVoter::parse_list(
            "1@localhost:9093:fIFoBanoy2NV4I5F4JiG8w,2@[::1]:9094:AAAAAAAAAAAAAAAAAAAAAw",
        )
        .unwrap();
        assert_eq!(vs[1].host, "::1");
        assert!(DynamicVoter::parse_list("1@localhost:9093").is_err());
        let d = tempfile::tempdir().unwrap();
        let mut r = req(
            d.path(),
            FormatMode::InitialControllers {
                controller_listener_name: "CONTROLLER".into(),
                voters: vs,
            },
        );
        r.node_id = 3;
        let rep = format(&r).unwrap();
        assert!(rep.lines[0].starts_with("Formatting dynamic metadata directory"));
        assert!(d
            .path()
            .join(METADATA_PARTITION_DIR)
            .join(SnapshotId::BOOTSTRAP.file_name())
            .exists());
        let mut r = req(d.path(), FormatMode::NoInitialControllers);
        r.release_version = Some("3.8".into());
        assert!(format(&r).is_err());
    }

    #[test]
    fn info_describes() {
        let d = tempfile::tempdir().unwrap();
        format(&req(d.path(), FormatMode::StaticVoters)).unwrap();
        let (text, problem) = describe_dirs(&[d.path().to_path_buf()]);
        assert!(!problem);
        assert!(
            text.contains("Found metadata: {cluster.id=MkU3OEVBNTcwNTJENDM2Qk, directory.id="),
            "{text}"
        );
        let e = tempfile::tempdir().unwrap();
        let (text, problem) = describe_dirs(&[e.path().to_path_buf()]);
        assert!(problem && text.contains("is not formatted"), "{text}");
    }
}
