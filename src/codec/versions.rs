//! The single table of the APIs and version ranges this node advertises on its controller
//! listener, and the features it reports in ApiVersions.
//!
//! The ranges are those of an Apache Kafka 4.1 controller for the KRaft APIs (Java peers pick
//! `min(their max, our max)` per API, so advertising a version means implementing it).

use kafka_protocol::messages::ApiKey;

/// One advertised API and its inclusive version range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiRange {
    /// The API.
    pub api_key: ApiKey,
    /// Lowest version served.
    pub min_version: i16,
    /// Highest version served.
    pub max_version: i16,
}

impl ApiRange {
    /// Whether `version` is inside the range.
    pub fn contains(&self, version: i16) -> bool {
        (self.min_version..=self.max_version).contains(&version)
    }
}

const fn api(api_key: ApiKey, min_version: i16, max_version: i16) -> ApiRange {
    ApiRange {
        api_key,
        min_version,
        max_version,
    }
}

/// Every API we advertise, in ascending key order (Kafka lists them that way too).
pub const ADVERTISED: &[ApiRange] = &[
    // Fetch below v13 cannot carry the metadata topic id, which KRaft matches on; Kafka 4.x
    // still advertises 4+ (KIP-896 removed 0-3) and rejects the partition later, so do we.
    api(ApiKey::Fetch, 4, 18),
    api(ApiKey::ApiVersions, 0, 4),
    // KIP-896 (Kafka 4.0) removed CreateTopics v0-1.
    api(ApiKey::CreateTopics, 2, 7),
    // KIP-896 removed DeleteTopics v0.
    api(ApiKey::DeleteTopics, 1, 6),
    // KIP-896 removed DescribeConfigs v0.
    api(ApiKey::DescribeConfigs, 1, 4),
    api(ApiKey::AlterConfigs, 0, 2),
    api(ApiKey::CreatePartitions, 0, 3),
    api(ApiKey::ElectLeaders, 0, 2),
    api(ApiKey::IncrementalAlterConfigs, 0, 1),
    api(ApiKey::AlterPartitionReassignments, 0, 1),
    api(ApiKey::ListPartitionReassignments, 0, 0),
    api(ApiKey::Vote, 0, 2),
    api(ApiKey::BeginQuorumEpoch, 0, 1),
    api(ApiKey::EndQuorumEpoch, 0, 1),
    api(ApiKey::DescribeQuorum, 0, 2),
    // KIP-896 removed AlterPartition v0-1.
    api(ApiKey::AlterPartition, 2, 3),
    api(ApiKey::UpdateFeatures, 0, 2),
    // A broker forwards DescribeQuorum/AddRaftVoter/RemoveRaftVoter only to a controller that
    // advertises Envelope (its NetworkClient refuses an API the peer does not list).
    api(ApiKey::Envelope, 0, 0),
    api(ApiKey::FetchSnapshot, 0, 1),
    api(ApiKey::DescribeCluster, 0, 2),
    api(ApiKey::BrokerRegistration, 0, 4),
    api(ApiKey::BrokerHeartbeat, 0, 1),
    api(ApiKey::UnregisterBroker, 0, 0),
    api(ApiKey::AllocateProducerIds, 0, 0),
    api(ApiKey::ControllerRegistration, 0, 0),
    api(ApiKey::AssignReplicasToDirs, 0, 0),
    api(ApiKey::AddRaftVoter, 0, 0),
    api(ApiKey::RemoveRaftVoter, 0, 0),
    api(ApiKey::UpdateRaftVoter, 0, 0),
];

/// The advertised range of `api_key`, if we serve it at all.
pub fn advertised(api_key: ApiKey) -> Option<ApiRange> {
    ADVERTISED.iter().copied().find(|r| r.api_key == api_key)
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
    feature(crate::storage::features::KRAFT_VERSION_FEATURE, 0, 1),
    feature(
        crate::storage::features::METADATA_VERSION_FEATURE,
        7,
        crate::storage::features::LATEST_PRODUCTION_LEVEL,
    ),
    feature("share.version", 0, 1),
    feature("transaction.version", 0, 2),
    feature("eligible.leader.replicas.version", 0, 1),
];

/// The order of [`SUPPORTED_FEATURES`] in Kafka 4.1.2's ControllerRegistration (a
/// `new HashMap<>(1)` filled with them).
pub const REGISTRATION_ORDER: &[&str] = &[
    "group.version",
    "transaction.version",
    "eligible.leader.replicas.version",
    crate::storage::features::KRAFT_VERSION_FEATURE,
    crate::storage::features::METADATA_VERSION_FEATURE,
    "share.version",
];

const fn feature(name: &'static str, min_version: i16, max_version: i16) -> SupportedFeature {
    SupportedFeature {
        name,
        min_version,
        max_version,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advertised_ranges_are_within_what_the_codec_can_decode() {
        for r in ADVERTISED {
            let valid = r.api_key.valid_versions();
            assert!(
                r.min_version >= valid.min && r.max_version <= valid.max,
                "{:?} {}..{} outside crate range {}",
                r.api_key,
                r.min_version,
                r.max_version,
                valid
            );
        }
    }

    #[test]
    fn advertised_is_sorted_by_key_without_duplicates() {
        let keys: Vec<i16> = ADVERTISED.iter().map(|r| r.api_key as i16).collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(keys, sorted);
    }
}
