//! The Kafka releases a node can present ([`Release`]) and Kafka's metadata.version levels
//! ([`MetadataVersion`], the levels in [`mv`]), each level defined once, with the feature
//! names and ranges each release supports.
//!
//! The level table was taken from `kafka-storage version-mapping --release-version X` run
//! against the real 4.1.2 jars for every level (3.3-IV3 = 7 … 4.1-IV1 = 27; 27 is 4.1.2's
//! default) and the 4.4.0 jars for the levels after it (4.2-IV0 = 28 … 4.4-IV2 = 33, 4.4.0's
//! default). Which of them a node accepts as a release version follows its [`Release`]. The
//! API tables each release advertises are the codec's (`codec::versions`).

use std::collections::BTreeMap;

/// Feature name of the metadata version.
pub const METADATA_VERSION_FEATURE: &str = "metadata.version";
/// Feature name of the KRaft protocol version (never a FeatureLevelRecord).
pub const KRAFT_VERSION_FEATURE: &str = "kraft.version";
/// `eligible.leader.replicas.version`: ELR fields are written only when it is ≥ 1.
pub const ELR_FEATURE: &str = "eligible.leader.replicas.version";

/// metadata.version levels (Kafka's `MetadataVersion` enum: `IBP_3_3_IV3` is `V3_3_IV3`),
/// and the levels at which a behaviour, a record version or a section changes (Kafka's
/// `MetadataVersion` predicates), named after what they gate.
pub mod mv {
    /// Kafka's `MetadataVersion.MINIMUM_KRAFT_VERSION` (3.0-IV1): what a broker that sends no
    /// metadata.version range is assumed to support.
    pub const MINIMUM_KRAFT: i16 = 1;
    /// 3.3-IV3.
    pub const V3_3_IV3: i16 = 7;
    /// 3.4-IV0.
    pub const V3_4_IV0: i16 = 8;
    /// 3.5-IV0.
    pub const V3_5_IV0: i16 = 9;
    /// 3.5-IV1.
    pub const V3_5_IV1: i16 = 10;
    /// 3.5-IV2.
    pub const V3_5_IV2: i16 = 11;
    /// 3.6-IV0.
    pub const V3_6_IV0: i16 = 12;
    /// 3.6-IV1.
    pub const V3_6_IV1: i16 = 13;
    /// 3.6-IV2.
    pub const V3_6_IV2: i16 = 14;
    /// 3.7-IV0.
    pub const V3_7_IV0: i16 = 15;
    /// 3.7-IV1.
    pub const V3_7_IV1: i16 = 16;
    /// 3.7-IV2.
    pub const V3_7_IV2: i16 = 17;
    /// 3.7-IV3.
    pub const V3_7_IV3: i16 = 18;
    /// 3.7-IV4.
    pub const V3_7_IV4: i16 = 19;
    /// 3.8-IV0.
    pub const V3_8_IV0: i16 = 20;
    /// 3.9-IV0.
    pub const V3_9_IV0: i16 = 21;
    /// 4.0-IV0.
    pub const V4_0_IV0: i16 = 22;
    /// 4.0-IV1.
    pub const V4_0_IV1: i16 = 23;
    /// 4.0-IV2.
    pub const V4_0_IV2: i16 = 24;
    /// 4.0-IV3.
    pub const V4_0_IV3: i16 = 25;
    /// 4.1-IV0.
    pub const V4_1_IV0: i16 = 26;
    /// 4.1-IV1.
    pub const V4_1_IV1: i16 = 27;
    /// 4.2-IV0.
    pub const V4_2_IV0: i16 = 28;
    /// 4.2-IV1.
    pub const V4_2_IV1: i16 = 29;
    /// 4.3-IV0.
    pub const V4_3_IV0: i16 = 30;
    /// 4.4-IV0.
    pub const V4_4_IV0: i16 = 31;
    /// 4.4-IV1.
    pub const V4_4_IV1: i16 = 32;
    /// 4.4-IV2.
    pub const V4_4_IV2: i16 = 33;

    /// RegisterBrokerRecord v2 (isMigratingZkBroker).
    pub const MIGRATION: i16 = V3_4_IV0;
    /// SCRAM credentials in the metadata log (`isScramSupported`).
    pub const SCRAM: i16 = V3_5_IV2;
    /// From here an ISR shrink no longer bumps the leader epoch (KAFKA-15021).
    pub const NO_LEADER_EPOCH_BUMP_ON_ISR_SHRINK: i16 = V3_6_IV0;
    /// Metadata transactions (KIP-868).
    pub const TRANSACTIONS: i16 = V3_6_IV1;
    /// Delegation tokens in the metadata log.
    pub const DELEGATION_TOKENS: i16 = V3_6_IV2;
    /// Controller registration (KIP-919).
    pub const CONTROLLER_REGISTRATION: i16 = V3_7_IV0;
    /// Directory assignment (RegisterBrokerRecord v3, PartitionRecord v1).
    pub const DIRECTORY_ASSIGNMENT: i16 = V3_7_IV2;
    /// kraft.version 1 (dynamic quorums) becomes available and the default.
    pub const KRAFT_VERSION_1: i16 = V3_9_IV0;
    /// ELR (PartitionRecord v2).
    pub const ELR: i16 = V4_0_IV1;
    /// Cordoned log directories (RegisterBrokerRecord v4).
    pub const CORDONED_LOG_DIRS: i16 = V4_3_IV0;
    /// CIDR host patterns in ACLs (KIP-1274).
    pub const CIDR_ACLS: i16 = V4_4_IV1;
    /// Controller unregistration (UnregisterControllerRecord).
    pub const CONTROLLER_UNREGISTRATION: i16 = V4_4_IV2;
    /// The default of Kafka 4.1.2's formatter (LATEST_PRODUCTION).
    pub const LATEST_PRODUCTION_4_1: i16 = V4_1_IV1;
    /// The default of Kafka 4.4.0's formatter.
    pub const LATEST_PRODUCTION_4_4: i16 = V4_4_IV2;
}

/// Production metadata versions known to Kafka 4.4.0: (level, name). Kafka 4.1.2's are the
/// first 21 (up to 4.1-IV1).
const METADATA_VERSIONS: [(i16, &str); 27] = [
    (mv::V3_3_IV3, "3.3-IV3"),
    (mv::V3_4_IV0, "3.4-IV0"),
    (mv::V3_5_IV0, "3.5-IV0"),
    (mv::V3_5_IV1, "3.5-IV1"),
    (mv::V3_5_IV2, "3.5-IV2"),
    (mv::V3_6_IV0, "3.6-IV0"),
    (mv::V3_6_IV1, "3.6-IV1"),
    (mv::V3_6_IV2, "3.6-IV2"),
    (mv::V3_7_IV0, "3.7-IV0"),
    (mv::V3_7_IV1, "3.7-IV1"),
    (mv::V3_7_IV2, "3.7-IV2"),
    (mv::V3_7_IV3, "3.7-IV3"),
    (mv::V3_7_IV4, "3.7-IV4"),
    (mv::V3_8_IV0, "3.8-IV0"),
    (mv::V3_9_IV0, "3.9-IV0"),
    (mv::V4_0_IV0, "4.0-IV0"),
    (mv::V4_0_IV1, "4.0-IV1"),
    (mv::V4_0_IV2, "4.0-IV2"),
    (mv::V4_0_IV3, "4.0-IV3"),
    (mv::V4_1_IV0, "4.1-IV0"),
    (mv::V4_1_IV1, "4.1-IV1"),
    (mv::V4_2_IV0, "4.2-IV0"),
    (mv::V4_2_IV1, "4.2-IV1"),
    (mv::V4_3_IV0, "4.3-IV0"),
    (mv::V4_4_IV0, "4.4-IV0"),
    (mv::V4_4_IV1, "4.4-IV1"),
    (mv::V4_4_IV2, "4.4-IV2"),
];

/// Whether metadata.version `level` supports metadata transactions (KIP-868).
pub fn transactions_supported(level: i16) -> bool {
    level >= mv::TRANSACTIONS
}

/// The Kafka release whose controller a node presents itself as: which APIs, versions and
/// feature ranges it advertises, which config keys and messages it uses, and the
/// metadata.version `ferrokraft format` picks by default. Ordered by age, so a fact true
/// "from release X on" is `release >= X`. Every release-dependent fact is a method here (or
/// a column of the codec's API table), read from that release's own jars.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Hash)]
pub enum Release {
    /// Kafka 4.0 (4.0.2): metadata.version 3.3-IV3 to 4.0-IV3; Fetch up to v17, no share.version.
    Kafka4_0,
    /// Kafka 4.1 (4.1.2): metadata.version 3.3-IV3 to 4.1-IV1.
    #[default]
    Kafka4_1,
    /// Kafka 4.2 (4.2.2): metadata.version up to 4.2-IV1, streams.version, AddRaftVoter v1,
    /// `controller.quorum.auto.join.enable`.
    Kafka4_2,
    /// Kafka 4.3 (4.3.2): metadata.version up to 4.3-IV0, BrokerHeartbeat v2 (cordoned log
    /// directories, KIP-1066), the CreatePartitions cap, `controller.quorum.fetch.*.max.bytes`.
    Kafka4_3,
    /// Kafka 4.4 (4.4.0): metadata.version up to 4.4-IV2, share.version 2, ApiVersions v5,
    /// UnregisterController, CIDR ACLs.
    Kafka4_4,
}

impl Release {
    /// Every release, oldest first.
    pub const ALL: [Release; 5] = [
        Self::Kafka4_0,
        Self::Kafka4_1,
        Self::Kafka4_2,
        Self::Kafka4_3,
        Self::Kafka4_4,
    ];

    /// The newest release.
    pub const NEWEST: Release = Self::Kafka4_4;

    /// Parses `ferrokraft.kafka.release` (`4.0` … `4.4`).
    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.name() == value.trim())
    }

    /// The value as written in the config file.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Kafka4_0 => "4.0",
            Self::Kafka4_1 => "4.1",
            Self::Kafka4_2 => "4.2",
            Self::Kafka4_3 => "4.3",
            Self::Kafka4_4 => "4.4",
        }
    }

    /// The supported features, in the order of that release's ApiVersions answer.
    pub fn supported_features(self) -> &'static [SupportedFeature] {
        match self {
            Self::Kafka4_0 => SUPPORTED_FEATURES_4_0,
            Self::Kafka4_1 => SUPPORTED_FEATURES,
            Self::Kafka4_2 => SUPPORTED_FEATURES_4_2,
            Self::Kafka4_3 => SUPPORTED_FEATURES_4_3,
            Self::Kafka4_4 => SUPPORTED_FEATURES_4_4,
        }
    }

    /// The supported range of feature `name`, if this release supports it at all.
    pub fn supported_feature(self, name: &str) -> Option<SupportedFeature> {
        self.supported_features()
            .iter()
            .copied()
            .find(|f| f.name == name)
    }

    /// The features of this release's `Feature` enum other than metadata.version and
    /// kraft.version, with the highest level it knows: the controller's supported features,
    /// and 4.1's streams.version, which its `Feature` enum (so its formatter and its
    /// UpdateFeatures check) knows before its controller supports it.
    pub fn known_features(self) -> impl Iterator<Item = (&'static str, i16)> {
        let streams_early = (self == Self::Kafka4_1).then_some(("streams.version", 1));
        self.supported_features()
            .iter()
            .filter(|f| f.name != METADATA_VERSION_FEATURE && f.name != KRAFT_VERSION_FEATURE)
            .map(|f| (f.name, f.max_version))
            .chain(streams_early)
    }

    /// Whether `name` is a feature this release's `Feature` enum knows (metadata.version and
    /// kraft.version included); Kafka's `Feature.validateVersion` says "Feature … not found."
    /// of any other.
    pub fn knows_feature(self, name: &str) -> bool {
        name == METADATA_VERSION_FEATURE
            || name == KRAFT_VERSION_FEATURE
            || self.known_features().any(|(n, _)| n == name)
    }

    /// The order of the supported features in that release's ControllerRegistration (a
    /// `new HashMap<>(1)` filled with them, where ApiVersions uses a 16-bucket one).
    pub fn registration_order(self) -> &'static [&'static str] {
        match self {
            Self::Kafka4_0 => &[
                "group.version",
                "transaction.version",
                ELR_FEATURE,
                KRAFT_VERSION_FEATURE,
                METADATA_VERSION_FEATURE,
            ],
            Self::Kafka4_1 => REGISTRATION_ORDER,
            // Seven features fill a 16-bucket HashMap whichever its initial capacity, so the
            // registration lists them in the ApiVersions order.
            Self::Kafka4_2 | Self::Kafka4_3 | Self::Kafka4_4 => &[
                "group.version",
                KRAFT_VERSION_FEATURE,
                METADATA_VERSION_FEATURE,
                "share.version",
                "streams.version",
                "transaction.version",
                ELR_FEATURE,
            ],
        }
    }

    /// The most partitions one CreatePartitions request may add in all (Kafka 4.3's
    /// `ReplicationControlManager.validateTotalNumberOfPartitions` for CreatePartitions;
    /// every release caps CreateTopics alike); `None` before 4.3.
    pub fn max_added_partitions_per_request(self) -> Option<u64> {
        (self >= Self::Kafka4_3).then_some(10_000)
    }

    /// Whether CreateAcls checks each host pattern (Kafka 4.4's `validateHostPattern`: not
    /// empty, and a CIDR range only from metadata.version [`mv::CIDR_ACLS`]); older releases
    /// store any.
    pub fn checks_acl_host_patterns(self) -> bool {
        self >= Self::Kafka4_4
    }

    /// Whether a partition's last known leader (LastKnownElr, with ELR on) follows
    /// KAFKA-19522 (4.1.1 on, so every 4.1+ release presented): it is recorded only when a
    /// change leaves the partition without a leader and none is recorded yet, cleared only
    /// when the change names a leader, and elected only when it is an acceptable leader.
    /// Kafka 4.0 records it whenever a change empties the ISR and elects it even when fenced.
    pub fn guards_last_known_leader(self) -> bool {
        self >= Self::Kafka4_1
    }

    /// Whether the controller knows cordoned log directories (KIP-1066, Kafka 4.3): the
    /// `cordoned.log.dirs` broker config and the placer's refusals naming them.
    pub fn has_cordoned_log_dirs(self) -> bool {
        self >= Self::Kafka4_3
    }

    /// Whether a refused metadata.version downgrade is worded `Unsupported metadata.version
    /// downgrade from X to Y` (Kafka 4.2's `FeatureControlManager`) rather than `Invalid
    /// metadata.version Y`.
    pub fn names_both_levels_in_downgrade_refusal(self) -> bool {
        self >= Self::Kafka4_2
    }

    /// Whether the controller auto-joins the quorum as a voter
    /// (`controller.quorum.auto.join.enable`, Kafka 4.2's key; 4.0 and 4.1 do not know it).
    pub fn has_auto_join(self) -> bool {
        self >= Self::Kafka4_2
    }

    /// Whether `controller.quorum.fetch.max.bytes` and `.fetch.snapshot.max.bytes` exist
    /// (KIP-1219, Kafka 4.3): a follower asks for 1 MiB by default and a leader reads at most a
    /// Fetch's MaxBytes. Before, followers ask for 8 MiB and leaders answer up to 8 MiB.
    pub fn has_fetch_max_bytes_keys(self) -> bool {
        self >= Self::Kafka4_3
    }

    /// MaxBytes of a follower's Fetch and FetchSnapshot when the KIP-1219 keys are not set:
    /// Kafka 4.3's `QuorumConfig` default (1 MiB), before 4.3 the fixed 8 MiB.
    pub fn default_quorum_fetch_max_bytes(self) -> i32 {
        if self.has_fetch_max_bytes_keys() {
            1024 * 1024
        } else {
            8 * 1024 * 1024
        }
    }

    /// The latest production metadata.version: `kafka-storage format`'s default.
    pub const fn latest_production_level(self) -> i16 {
        match self {
            Self::Kafka4_0 => mv::V4_0_IV3,
            Self::Kafka4_1 => mv::LATEST_PRODUCTION_4_1,
            Self::Kafka4_2 => mv::V4_2_IV1,
            Self::Kafka4_3 => mv::V4_3_IV0,
            Self::Kafka4_4 => mv::LATEST_PRODUCTION_4_4,
        }
    }

    /// The release a node presents on a directory formatted at metadata.version `level`:
    /// the one whose formatter defaults to it, else the newest (every release reads every
    /// level from 3.3-IV3 up to its own latest).
    pub fn for_bootstrap_level(level: i16) -> Release {
        Self::ALL
            .into_iter()
            .find(|r| r.latest_production_level() == level)
            .unwrap_or(Self::NEWEST)
    }
}

/// A feature in ApiVersions' SupportedFeatures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SupportedFeature {
    /// Feature name, e.g. `kraft.version`.
    pub name: &'static str,
    /// Lowest level supported.
    pub min_version: i16,
    /// Highest level supported.
    pub max_version: i16,
}

/// Features this node supports, in ApiVersions and in its KIP-919 registration, with Kafka
/// 4.1.2's ranges: the metadata.version levels it reads (3.3-IV3 … 4.1-IV1), `kraft.version`
/// 0 (static voters) and 1 (KIP-853), and the features whose levels a controller only
/// validates and stores (transaction, group, share) or follows (eligible leader replicas,
/// KIP-966). Listed in the order of Kafka's ApiVersions answer (a `new HashMap<>()` of them);
/// [`REGISTRATION_ORDER`] is its registration's.
pub const SUPPORTED_FEATURES: &[SupportedFeature] = &[
    feature("group.version", 0, 1),
    feature(KRAFT_VERSION_FEATURE, 0, 1),
    feature(METADATA_VERSION_FEATURE, 7, mv::LATEST_PRODUCTION_4_1),
    feature("share.version", 0, 1),
    feature("transaction.version", 0, 2),
    feature(ELR_FEATURE, 0, 1),
];

/// Kafka 4.0.2's supported features (no share.version; its ApiVersions order).
pub const SUPPORTED_FEATURES_4_0: &[SupportedFeature] = &[
    feature("group.version", 0, 1),
    feature(KRAFT_VERSION_FEATURE, 0, 1),
    feature(METADATA_VERSION_FEATURE, 7, mv::V4_0_IV3),
    feature("transaction.version", 0, 2),
    feature(ELR_FEATURE, 0, 1),
];

/// Kafka 4.2.2's supported features (its ApiVersions order: seven entries in a `HashMap`).
pub const SUPPORTED_FEATURES_4_2: &[SupportedFeature] = &[
    feature("group.version", 0, 1),
    feature(KRAFT_VERSION_FEATURE, 0, 1),
    feature(METADATA_VERSION_FEATURE, 7, mv::V4_2_IV1),
    feature("share.version", 0, 1),
    feature("streams.version", 0, 1),
    feature("transaction.version", 0, 2),
    feature(ELR_FEATURE, 0, 1),
];

/// Kafka 4.3.2's supported features: 4.2's, metadata.version up to 4.3-IV0.
pub const SUPPORTED_FEATURES_4_3: &[SupportedFeature] = &[
    feature("group.version", 0, 1),
    feature(KRAFT_VERSION_FEATURE, 0, 1),
    feature(METADATA_VERSION_FEATURE, 7, mv::V4_3_IV0),
    feature("share.version", 0, 1),
    feature("streams.version", 0, 1),
    feature("transaction.version", 0, 2),
    feature(ELR_FEATURE, 0, 1),
];

/// Kafka 4.4.0's supported features (its ApiVersions order: seven entries in a `HashMap`).
pub const SUPPORTED_FEATURES_4_4: &[SupportedFeature] = &[
    feature("group.version", 0, 1),
    feature(KRAFT_VERSION_FEATURE, 0, 1),
    feature(METADATA_VERSION_FEATURE, 7, mv::LATEST_PRODUCTION_4_4),
    feature("share.version", 0, 2),
    feature("streams.version", 0, 1),
    feature("transaction.version", 0, 2),
    feature(ELR_FEATURE, 0, 1),
];

/// The order of [`SUPPORTED_FEATURES`] in Kafka 4.1.2's ControllerRegistration (a
/// `new HashMap<>(1)` filled with them).
pub const REGISTRATION_ORDER: &[&str] = &[
    "group.version",
    "transaction.version",
    ELR_FEATURE,
    KRAFT_VERSION_FEATURE,
    METADATA_VERSION_FEATURE,
    "share.version",
];

const fn feature(name: &'static str, min_version: i16, max_version: i16) -> SupportedFeature {
    SupportedFeature {
        name,
        min_version,
        max_version,
    }
}

/// A metadata.version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct MetadataVersion {
    /// Feature level.
    pub level: i16,
    /// Kafka's name, e.g. `4.1-IV1`.
    pub name: &'static str,
}

impl MetadataVersion {
    /// The default metadata.version of `release`'s formatter.
    pub fn latest_production(release: Release) -> Self {
        let level = release.latest_production_level();
        Self::from_level(level).unwrap_or(MetadataVersion {
            level,
            name: "4.1-IV1",
        })
    }

    /// Looks up a level (any level Kafka 4.4.0 knows).
    pub fn from_level(level: i16) -> Option<Self> {
        METADATA_VERSIONS
            .iter()
            .find(|(l, _)| *l == level)
            .map(|&(level, name)| MetadataVersion { level, name })
    }

    /// Parses `--release-version` as `release`'s `kafka-storage format` does, with its
    /// message on refusal. A release name (`3.7`) means its latest production IV.
    /// - 4.0 and 4.1 (`MetadataVersion.fromVersionString`): a full name among every level they
    ///   know, unstable ones included (4.1 knows 4.2-IV0/IV1), else `Version … is not a valid
    ///   version …`; an unstable level is then refused as `not yet stable`.
    /// - 4.2 on: production levels only, else `Unknown metadata.version '…'. Supported
    ///   metadata.version are: <every production level>`.
    pub fn parse_release(s: &str, release: Release) -> Result<Self, String> {
        let up_to = |top: i16| -> Vec<(i16, &'static str)> {
            METADATA_VERSIONS
                .iter()
                .copied()
                .filter(|(l, _)| *l <= top)
                .collect()
        };
        let production = up_to(release.latest_production_level());
        let by_release = |known: &[(i16, &'static str)]| {
            let prefix = format!("{s}-IV");
            known
                .iter()
                .rev()
                .find(|(_, n)| n.starts_with(&prefix))
                .copied()
        };
        let make = |(level, name): (i16, &'static str)| MetadataVersion { level, name };
        if release >= Release::Kafka4_2 {
            let found = production
                .iter()
                .copied()
                .find(|(_, n)| *n == s)
                .or_else(|| by_release(&production));
            return found.map(make).ok_or_else(|| {
                let names: Vec<&str> = production.iter().map(|(_, n)| *n).collect();
                format!(
                    "Unknown metadata.version '{s}'. Supported metadata.version are: {}",
                    names.join(", ")
                )
            });
        }
        // The newest level 4.0 and 4.1 know, unstable (`MetadataVersion.latestTesting`).
        let testing = up_to(match release {
            Release::Kafka4_0 => mv::V4_1_IV0,
            _ => mv::V4_2_IV1,
        });
        let found = testing
            .iter()
            .copied()
            .find(|(_, n)| *n == s)
            .or_else(|| by_release(&production));
        match found {
            Some((level, name)) if level > release.latest_production_level() => {
                Err(format!("metadata.version {name} is not yet stable."))
            }
            Some(found) => Ok(make(found)),
            None => Err(format!(
                "Version {s} is not a valid version. The minimum version is {} and the maximum \
                 version is {}",
                testing.first().map_or("", |v| v.1),
                testing.last().map_or("", |v| v.1)
            )),
        }
    }

    /// kraft.version this metadata.version defaults to (1 from 3.9-IV0).
    pub fn default_kraft_version(&self) -> i16 {
        i16::from(self.level >= mv::KRAFT_VERSION_1)
    }

    /// Defaults of the other features at this metadata.version (from `version-mapping`).
    pub fn default_features(&self) -> BTreeMap<String, i16> {
        let l = self.level;
        let mut m = BTreeMap::new();
        m.insert(ELR_FEATURE.into(), i16::from(l >= 26));
        m.insert("group.version".into(), i16::from(l >= 22));
        // share.version 1 from 4.2-IV0 and 2 from 4.4-IV0; streams.version 1 from 4.2-IV1.
        m.insert(
            "share.version".into(),
            match l {
                31.. => 2,
                28.. => 1,
                _ => 0,
            },
        );
        m.insert("streams.version".into(), i16::from(l >= 29));
        m.insert("transaction.version".into(), if l >= 24 { 2 } else { 0 });
        m
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn release_versions() {
        let r41 = Release::Kafka4_1;
        assert_eq!(
            MetadataVersion::parse_release("4.1", r41).unwrap().level,
            27
        );
        assert_eq!(
            MetadataVersion::parse_release("3.5", r41).unwrap().level,
            11
        );
        assert_eq!(
            MetadataVersion::parse_release("3.7-IV2", r41)
                .unwrap()
                .level,
            17
        );
        assert_eq!(
            MetadataVersion::parse_release("4.2", r41).unwrap_err(),
            "Version 4.2 is not a valid version. The minimum version is 3.3-IV3 and the maximum \
             version is 4.2-IV1"
        );
        assert_eq!(
            MetadataVersion::parse_release("4.2-IV1", r41).unwrap_err(),
            "metadata.version 4.2-IV1 is not yet stable."
        );
        assert_eq!(
            MetadataVersion::parse_release("4.1-IV0", Release::Kafka4_0).unwrap_err(),
            "metadata.version 4.1-IV0 is not yet stable."
        );
        assert_eq!(MetadataVersion::latest_production(r41).name, "4.1-IV1");
        let r44 = Release::Kafka4_4;
        assert_eq!(
            MetadataVersion::parse_release("4.2", r44).unwrap().level,
            29
        );
        assert_eq!(
            MetadataVersion::parse_release("4.3-IV0", r44)
                .unwrap()
                .level,
            30
        );
        assert_eq!(
            MetadataVersion::parse_release("4.5", r44).unwrap_err(),
            "Unknown metadata.version '4.5'. Supported metadata.version are: 3.3-IV3, 3.4-IV0, \
             3.5-IV0, 3.5-IV1, 3.5-IV2, 3.6-IV0, 3.6-IV1, 3.6-IV2, 3.7-IV0, 3.7-IV1, 3.7-IV2, \
             3.7-IV3, 3.7-IV4, 3.8-IV0, 3.9-IV0, 4.0-IV0, 4.0-IV1, 4.0-IV2, 4.0-IV3, 4.1-IV0, \
             4.1-IV1, 4.2-IV0, 4.2-IV1, 4.3-IV0, 4.4-IV0, 4.4-IV1, 4.4-IV2"
        );
        // 4.2.2 knows 4.3-IV0 as unstable and names only its production levels.
        assert!(MetadataVersion::parse_release("4.3-IV0", Release::Kafka4_2)
            .unwrap_err()
            .ends_with("4.1-IV1, 4.2-IV0, 4.2-IV1"));
        assert_eq!(
            MetadataVersion::parse_release("4.3", Release::Kafka4_3)
                .unwrap()
                .level,
            30
        );
        assert_eq!(MetadataVersion::latest_production(r44).name, "4.4-IV2");
    }

    /// Auto-join is Kafka 4.2's, KIP-1219's 1 MiB fetch size 4.3's.
    #[test]
    fn release_dependent_raft_settings() {
        assert!(!Release::Kafka4_1.has_auto_join());
        assert!(Release::Kafka4_2.has_auto_join());
        assert!(!Release::Kafka4_2.has_fetch_max_bytes_keys());
        assert_eq!(
            Release::Kafka4_2.default_quorum_fetch_max_bytes(),
            8_388_608
        );
        assert_eq!(
            Release::Kafka4_3.default_quorum_fetch_max_bytes(),
            1_048_576
        );
        assert_eq!(
            Release::Kafka4_4.default_quorum_fetch_max_bytes(),
            1_048_576
        );
    }

    /// What `kafka-storage format` 4.4.0 writes with no `--release-version`:
    /// `metadata.version=33, eligible.leader.replicas.version=1, group.version=1,
    /// share.version=2, streams.version=1, transaction.version=2`.
    #[test]
    fn default_features_of_kafka_4_4_format() {
        let mv = MetadataVersion::latest_production(Release::Kafka4_4);
        let got: Vec<(String, i16)> = mv.default_features().into_iter().collect();
        let want: Vec<(String, i16)> = [
            ("eligible.leader.replicas.version", 1),
            ("group.version", 1),
            ("share.version", 2),
            ("streams.version", 1),
            ("transaction.version", 2),
        ]
        .iter()
        .map(|(n, l)| (n.to_string(), *l))
        .collect();
        assert_eq!(got, want);
        let at_28 = MetadataVersion::from_level(28).unwrap().default_features();
        assert_eq!((at_28["share.version"], at_28["streams.version"]), (1, 0));
    }
}
