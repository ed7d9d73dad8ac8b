//! Kafka's own view of a metadata log or snapshot (`kafka-metadata-shell --snapshot FILE`,
//! `ls` and `cat` run non-interactively) against ferrokraft's [`MetadataImage`] of the same
//! file. Every difference is returned naming the shell path, so a test fails on any of them.
//!
//! The shell's leaves are Kafka's `toString`s: partitions, ACLs and SCRAM credentials are
//! rebuilt here in the same form and compared whole; brokers and controllers field by field.
//! `find /` is not used: Kafka 4.1's shell stops on the default client-quota entity (its
//! child name is empty) and on `features/zkMigrationState`.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]

use std::collections::BTreeSet;
use std::path::Path;

use ferrokraft::common::release::MetadataVersion;
use ferrokraft::common::uuid::uuid_to_kafka_string;
use ferrokraft::metadata::image::MetadataImage;
use uuid::Uuid;

use super::kafka::{kafka, Artifacts, METADATA_SHELL};

/// Whether this Kafka release ships kafka-metadata-shell (`kafka-shell`, published up to
/// 4.3.x; interop/kafka/pom.xml).
pub fn available() -> bool {
    kafka().find_class(&[METADATA_SHELL]).is_some()
}

/// What was compared, for the test's log and docs.
#[derive(Debug, Default)]
pub struct Compared {
    pub topics: usize,
    pub partitions: usize,
    pub configs: usize,
    pub quotas: usize,
    pub features: usize,
    pub brokers: usize,
    pub controllers: usize,
    pub acls: usize,
    pub scram_users: usize,
    pub tokens: usize,
    pub mismatches: Vec<String>,
}

fn shell(art: &Artifacts, name: &str, file: &Path, command: &[String]) -> Vec<String> {
    let mut args = vec!["--snapshot".to_string(), file.display().to_string()];
    args.extend(command.iter().cloned());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = kafka().metadata_shell(art, name, &args);
    out.assert_ok(name);
    // The shell logs to stdout too (e.g. "ERROR Ignoring control record with type
    // KRAFT_VERSION"); those lines carry a timestamp and the loader's thread name.
    out.stdout
        .lines()
        .filter(|l| !(l.starts_with("20") && l.contains(" ERROR ")))
        .map(str::to_string)
        .collect()
}

/// `ls` over several directories: each section is `basename:` then one child per line, a
/// blank line between sections (a child may itself be empty: the default quota entity).
fn ls(art: &Artifacts, name: &str, file: &Path, dirs: &[String]) -> Vec<BTreeSet<String>> {
    let lines = shell(
        art,
        name,
        file,
        &[vec!["ls".to_string()], dirs.to_vec()].concat(),
    );
    let headers: Vec<String> = dirs
        .iter()
        .map(|d| format!("{}:", d.rsplit('/').next().unwrap_or(d)))
        .collect();
    // An empty directory prints nothing at all, not even its header: a line that is the
    // header of a later directory starts that one, and the ones skipped are empty.
    let mut sections: Vec<Vec<String>> = vec![Vec::new(); dirs.len()];
    let mut current: Option<usize> = None;
    for line in lines {
        let start = current.map_or(0, |i| i + 1);
        if let Some(j) = (start..headers.len()).find(|&j| headers[j] == line) {
            if let Some(prev) = current {
                // The blank line that separates sections.
                if sections[prev].last().is_some_and(String::is_empty) {
                    sections[prev].pop();
                }
            }
            current = Some(j);
        } else if let Some(i) = current {
            sections[i].push(line);
        }
    }
    sections
        .into_iter()
        .map(|s| s.into_iter().collect())
        .collect()
}

fn list(v: &[i32]) -> String {
    let parts: Vec<String> = v.iter().map(i32::to_string).collect();
    format!("[{}]", parts.join(", "))
}

fn uuids(v: &[Uuid]) -> String {
    let parts: Vec<String> = v.iter().map(uuid_to_kafka_string).collect();
    format!("[{}]", parts.join(", "))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn name_of(table: &[&'static str], code: i8) -> &'static str {
    usize::try_from(code)
        .ok()
        .and_then(|i| table.get(i).copied())
        .unwrap_or("UNKNOWN")
}

/// Enumeration names by code (Kafka's `ResourceType`, `PatternType`, `AclOperation`,
/// `AclPermissionType`): facts needed to print an ACL as the shell does.
const RESOURCE_TYPES: &[&str] = &[
    "UNKNOWN",
    "ANY",
    "TOPIC",
    "GROUP",
    "CLUSTER",
    "TRANSACTIONAL_ID",
    "DELEGATION_TOKEN",
    "USER",
];
const PATTERN_TYPES: &[&str] = &["UNKNOWN", "ANY", "MATCH", "LITERAL", "PREFIXED"];
const OPERATIONS: &[&str] = &[
    "UNKNOWN",
    "ANY",
    "ALL",
    "READ",
    "WRITE",
    "CREATE",
    "DELETE",
    "ALTER",
    "DESCRIBE",
    "CLUSTER_ACTION",
    "DESCRIBE_CONFIGS",
    "ALTER_CONFIGS",
    "IDEMPOTENT_WRITE",
    "CREATE_TOKENS",
    "DESCRIBE_TOKENS",
    "TWO_PHASE_COMMIT",
];
const PERMISSIONS: &[&str] = &["UNKNOWN", "ANY", "DENY", "ALLOW"];

fn config_dir(resource_type: i8, name: &str) -> String {
    let t = match resource_type {
        2 => "TOPIC",
        4 => "BROKER",
        8 => "BROKER_LOGGER",
        16 => "CLIENT_METRICS",
        32 => "GROUP",
        _ => "UNKNOWN",
    };
    if name.is_empty() {
        t.to_string()
    } else {
        format!("{t}:{name}")
    }
}

/// The shell's name for a quota entity: parts with a null (default) name are left out, which
/// makes a default entity's name empty (a shell limitation: it cannot be opened).
fn quota_dir(entity: &std::collections::BTreeMap<String, Option<String>>) -> String {
    let esc = |s: &str| {
        s.replace('\\', "\\\\")
            .replace('(', "\\(")
            .replace(')', "\\)")
    };
    let mut parts = Vec::new();
    for (ty, label) in [("client-id", "clientId"), ("ip", "ip"), ("user", "user")] {
        if let Some(Some(n)) = entity.get(ty) {
            parts.push(format!("{label}({})", esc(n)));
        }
    }
    parts.join("_")
}

/// Compares `image` with the shell's view of `file` (a snapshot or a log segment).
///
/// Kafka 4.1's shell can answer from the empty image it starts with: its non-interactive
/// mode runs the command once the loader's last applied offset is positive, which the loader
/// sets on its first publish, before the shell's own publisher (installed while the loader
/// was still catching up) has been handed the image. The command's first paths then read
/// the empty image ("Optional.empty", no controllers) and later ones the loaded one. So a
/// comparison with differences is run again, three runs at most, and the run with the
/// fewest differences is returned: a real difference is in every run, the race in few.
pub fn compare(art: &Artifacts, label: &str, file: &Path, image: &MetadataImage) -> Compared {
    let mut best = compare_once(art, &format!("{label}-run1"), label, file, image);
    for run in 2..=3 {
        if best.mismatches.is_empty() {
            break;
        }
        let next = compare_once(art, &format!("{label}-run{run}"), label, file, image);
        if next.mismatches.len() < best.mismatches.len() {
            eprintln!(
                "kafka-metadata-shell on {label}: run {run} differed less than an earlier \
                 run, whose differences were the shell's start-up race: {:?}",
                best.mismatches
            );
            best = next;
        }
    }
    best
}

fn compare_once(
    art: &Artifacts,
    run: &str,
    label: &str,
    file: &Path,
    image: &MetadataImage,
) -> Compared {
    let mut c = Compared::default();
    let mut diff = |path: &str, ours: &str, kafka: &str| {
        if ours != kafka {
            c.mismatches.push(format!(
                "{label} {path}: ferrokraft {ours:?}, kafka {kafka:?}"
            ));
        }
    };
    let fmt_set = |s: &BTreeSet<String>| format!("{s:?}");

    // 1. Listings: every directory whose children we know.
    let topic_dirs: Vec<String> = image
        .topics
        .values()
        .map(|t| format!("/image/topics/byName/{}", t.name))
        .collect();
    let config_dirs: Vec<String> = image
        .configs
        .keys()
        .map(|r| {
            format!(
                "/image/configs/{}",
                config_dir(r.resource_type, &r.resource_name)
            )
        })
        .collect();
    let quota_dirs: Vec<String> = image
        .client_quotas
        .keys()
        .map(quota_dir)
        .filter(|d| !d.is_empty())
        .map(|d| format!("/image/clientQuotas/{d}"))
        .collect();
    let fixed = [
        "/image/features",
        "/image/cluster/brokers",
        "/image/cluster/controllers",
        "/image/topics/byName",
        "/image/configs",
        "/image/clientQuotas",
        "/image/acls/byId",
        "/image/scram/SCRAM-SHA-256",
        "/image/scram/SCRAM-SHA-512",
        "/image/delegationToken",
    ];
    let dirs: Vec<String> = fixed
        .iter()
        .map(|s| s.to_string())
        .chain(topic_dirs.iter().cloned())
        .chain(config_dirs.iter().cloned())
        .chain(quota_dirs.iter().cloned())
        .collect();
    let listed = ls(art, &format!("shell-ls-{run}"), file, &dirs);
    let ours: Vec<BTreeSet<String>> = {
        let mut v = Vec::new();
        let mut features: BTreeSet<String> = ["metadataVersion", "zkMigrationState"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        features.extend(
            image
                .features
                .keys()
                .filter(|k| *k != "metadata.version")
                .map(|k| format!("finalized_{k}")),
        );
        v.push(features);
        v.push(image.brokers.keys().map(i32::to_string).collect());
        v.push(image.controllers.keys().map(i32::to_string).collect());
        v.push(image.topics.values().map(|t| t.name.clone()).collect());
        v.push(
            image
                .configs
                .keys()
                .map(|r| config_dir(r.resource_type, &r.resource_name))
                .collect(),
        );
        v.push(image.client_quotas.keys().map(quota_dir).collect());
        v.push(image.acls.keys().map(uuid_to_kafka_string).collect());
        for mechanism in [1, 2] {
            v.push(
                image
                    .scram
                    .keys()
                    .filter(|(m, _)| *m == mechanism)
                    .map(|(_, n)| n.clone())
                    .collect(),
            );
        }
        v.push(image.delegation_tokens.keys().cloned().collect());
        for t in image.topics.values() {
            let mut s: BTreeSet<String> = t.partitions.keys().map(i32::to_string).collect();
            s.insert("id".into());
            s.insert("name".into());
            v.push(s);
        }
        for keys in image.configs.values() {
            v.push(keys.keys().cloned().collect());
        }
        for (entity, q) in &image.client_quotas {
            if !quota_dir(entity).is_empty() {
                v.push(q.keys().cloned().collect());
            }
        }
        v
    };
    for ((dir, kafka_children), our_children) in dirs.iter().zip(&listed).zip(&ours) {
        diff(dir, &fmt_set(our_children), &fmt_set(kafka_children));
    }

    // 2. Leaves, all in one `cat`: (path, what ferrokraft expects, how to compare).
    enum Check {
        Exact(String),
        Contains(Vec<String>),
    }
    let mut leaves: Vec<(String, Check)> = Vec::new();
    match image
        .metadata_version()
        .and_then(MetadataVersion::from_level)
    {
        Some(mv) => leaves.push((
            "/image/features/metadataVersion".into(),
            Check::Exact(format!("Optional[{}]", mv.name)),
        )),
        // A level newer than our table: only its presence is compared.
        None => leaves.push((
            "/image/features/metadataVersion".into(),
            Check::Contains(vec!["Optional[".into()]),
        )),
    }
    for (name, level) in image
        .features
        .iter()
        .filter(|(k, _)| *k != "metadata.version")
    {
        leaves.push((
            format!("/image/features/finalized_{name}"),
            Check::Exact(level.to_string()),
        ));
    }
    for b in image.brokers.values() {
        let rack = match &b.rack {
            Some(r) => format!("rack=Optional[{r}]"),
            None => "rack=Optional.empty".into(),
        };
        leaves.push((
            format!("/image/cluster/brokers/{}", b.broker_id),
            Check::Contains(vec![
                format!(
                    "BrokerRegistration(id={}, epoch={}, incarnationId={},",
                    b.broker_id,
                    b.broker_epoch,
                    uuid_to_kafka_string(&b.incarnation_id)
                ),
                format!(
                    "{rack}, fenced={}, inControlledShutdown={}, isMigratingZkBroker={}, \
                     directories={})",
                    b.fenced,
                    b.in_controlled_shutdown,
                    b.is_migrating_zk_broker,
                    uuids(&b.log_dirs)
                ),
            ]),
        ));
    }
    for r in image.controllers.values() {
        leaves.push((
            format!("/image/cluster/controllers/{}", r.controller_id),
            Check::Contains(vec![format!(
                "ControllerRegistration(id={}, incarnationId={}, zkMigrationReady={},",
                r.controller_id,
                uuid_to_kafka_string(&r.incarnation_id),
                r.zk_migration_ready
            )]),
        ));
    }
    for t in image.topics.values() {
        let dir = format!("/image/topics/byName/{}", t.name);
        leaves.push((
            format!("{dir}/id"),
            Check::Exact(uuid_to_kafka_string(&t.id)),
        ));
        for (id, p) in &t.partitions {
            let recovery = if p.leader_recovery_state == 1 {
                "RECOVERING"
            } else {
                "RECOVERED"
            };
            leaves.push((
                format!("{dir}/{id}"),
                Check::Exact(format!(
                    "PartitionRegistration(replicas={}, directories={}, isr={}, \
                     removingReplicas={}, addingReplicas={}, elr={}, lastKnownElr={}, \
                     leader={}, leaderRecoveryState={recovery}, leaderEpoch={}, \
                     partitionEpoch={})",
                    list(p.replicas()),
                    uuids(&p.directories()),
                    list(p.isr()),
                    list(p.removing_replicas()),
                    list(p.adding_replicas()),
                    list(p.elr()),
                    list(p.last_known_elr()),
                    p.leader,
                    p.leader_epoch,
                    p.partition_epoch
                )),
            ));
        }
    }
    for (r, keys) in &image.configs {
        for (k, v) in keys {
            leaves.push((
                format!(
                    "/image/configs/{}/{k}",
                    config_dir(r.resource_type, &r.resource_name)
                ),
                Check::Exact(v.clone()),
            ));
        }
    }
    for (entity, q) in &image.client_quotas {
        let d = quota_dir(entity);
        if d.is_empty() {
            continue;
        }
        for (k, v) in q {
            // Java prints a double with at least one decimal ("1048576.0").
            let shown = if v.fract() == 0.0 && v.abs() < 1e7 {
                format!("{v:.1}")
            } else {
                format!("{v}")
            };
            leaves.push((format!("/image/clientQuotas/{d}/{k}"), Check::Exact(shown)));
        }
    }
    leaves.push((
        "/image/producerIds/nextProducerId".into(),
        Check::Exact(image.next_producer_id.to_string()),
    ));
    for (id, a) in &image.acls {
        leaves.push((
            format!("/image/acls/byId/{}", uuid_to_kafka_string(id)),
            Check::Exact(format!(
                "StandardAcl(resourceType={}, resourceName={}, patternType={}, principal={}, \
                 host={}, operation={}, permissionType={})",
                name_of(RESOURCE_TYPES, a.resource_type),
                a.resource_name,
                name_of(PATTERN_TYPES, a.pattern_type),
                a.principal,
                a.host,
                name_of(OPERATIONS, a.operation),
                name_of(PERMISSIONS, a.permission_type)
            )),
        ));
    }
    for ((m, user), s) in &image.scram {
        let mech = if *m == 1 {
            "SCRAM-SHA-256"
        } else {
            "SCRAM-SHA-512"
        };
        leaves.push((
            format!("/image/scram/{mech}/{user}"),
            Check::Exact(format!(
                "ScramCredentialData(salt={}, storedKey={}, serverKey={}, iterations={})",
                hex(&s.salt),
                hex(&s.stored_key),
                hex(&s.server_key),
                s.iterations
            )),
        ));
    }
    let paths: Vec<String> = leaves.iter().map(|(p, _)| p.clone()).collect();
    let values = shell(
        art,
        &format!("shell-cat-{run}"),
        file,
        &[vec!["cat".to_string()], paths].concat(),
    );
    if values.len() != leaves.len() {
        diff(
            "(cat)",
            &format!("{} leaves", leaves.len()),
            &format!("{} lines: {values:?}", values.len()),
        );
    }
    for ((path, check), value) in leaves.iter().zip(&values) {
        match check {
            Check::Exact(ours) => diff(path, ours, value),
            Check::Contains(parts) => {
                for p in parts {
                    if !value.contains(p.as_str()) {
                        diff(path, p, value);
                    }
                }
            }
        }
    }

    c.topics = image.topics.len();
    c.partitions = image.topics.values().map(|t| t.partitions.len()).sum();
    c.configs = image.configs.values().map(|k| k.len()).sum();
    c.quotas = image.client_quotas.values().map(|q| q.len()).sum();
    c.features = image.features.len();
    c.brokers = image.brokers.len();
    c.controllers = image.controllers.len();
    c.acls = image.acls.len();
    c.scram_users = image.scram.len();
    c.tokens = image.delegation_tokens.len();
    c
}
