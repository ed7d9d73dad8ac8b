//! The tables of the APIs and version ranges this node advertises on its controller listener,
//! and the features it reports in ApiVersions and in its KIP-919 registration.
//!
//! A node presents itself as the controller of one Kafka release ([`Release`], the
//! `ferrokraft.kafka.release` key): [`ADVERTISED`] and [`SUPPORTED_FEATURES`] are Kafka
//! 4.1.2's, [`ADVERTISED_4_4`] and [`SUPPORTED_FEATURES_4_4`] Kafka 4.4.0's (BrokerHeartbeat
//! v2 with cordoned log directories, UnregisterController, metadata.version up to 4.4-IV2).
//! Java peers pick `min(their max, our max)` per API, so advertising a version means
//! implementing it. Requests are decoded against the widest table ([`advertised`]) whatever
//! the release: the release decides what the node shows, not what it understands.

use kafka_protocol::messages::ApiKey;

pub use crate::common::release::Release;

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

/// One API in both releases: its lowest version, and its newest in Kafka 4.1.2 (`None`: not a
/// 4.1 API) and in Kafka 4.4.0.
#[derive(Clone, Copy)]
struct Served {
    api_key: ApiKey,
    min_version: i16,
    max_4_1: Option<i16>,
    max_4_4: i16,
}

const fn both(api_key: ApiKey, min_version: i16, max_version: i16) -> Served {
    Served {
        api_key,
        min_version,
        max_4_1: Some(max_version),
        max_4_4: max_version,
    }
}

const fn newer_in_4_4(api_key: ApiKey, min_version: i16, max_4_1: i16, max_4_4: i16) -> Served {
    Served {
        api_key,
        min_version,
        max_4_1: Some(max_4_1),
        max_4_4,
    }
}

/// Every API served, in ascending key order (Kafka lists them that way too), with what each
/// release advertises.
const SERVED: &[Served] = &[
    // Fetch below v13 cannot carry the metadata topic id, which KRaft matches on; Kafka 4.x
    // still advertises 4+ (KIP-896 removed 0-3) and rejects the partition later, so do we.
    both(ApiKey::Fetch, 4, 18),
    // Authentication on SASL listeners (`crate::security`); on the others, and after
    // authentication, answered ILLEGAL_SASL_STATE as Kafka's ControllerApis answers.
    both(ApiKey::SaslHandshake, 0, 1),
    // v5 (Kafka 4.4, KIP-1242) adds the cluster and node id the client expects; a controller
    // only checks they come as a pair (a broker answers REBOOTSTRAP_REQUIRED on a mismatch).
    newer_in_4_4(ApiKey::ApiVersions, 0, 4, 5),
    // KIP-896 (Kafka 4.0) removed CreateTopics v0-1.
    both(ApiKey::CreateTopics, 2, 7),
    // KIP-896 removed DeleteTopics v0.
    both(ApiKey::DeleteTopics, 1, 6),
    // KIP-896 removed v0 of the three ACL APIs and DescribeConfigs v0.
    both(ApiKey::DescribeAcls, 1, 3),
    both(ApiKey::CreateAcls, 1, 3),
    both(ApiKey::DeleteAcls, 1, 3),
    both(ApiKey::DescribeConfigs, 1, 4),
    both(ApiKey::AlterConfigs, 0, 2),
    both(ApiKey::SaslAuthenticate, 0, 2),
    both(ApiKey::CreatePartitions, 0, 3),
    // KIP-896 removed v0 of the delegation-token APIs. Forwarded by brokers
    // (kafka-delegation-tokens); Describe is answered by brokers, and a Kafka controller
    // advertises it but has no handler (UNKNOWN_SERVER_ERROR), as here.
    both(ApiKey::CreateDelegationToken, 1, 3),
    both(ApiKey::RenewDelegationToken, 1, 2),
    both(ApiKey::ExpireDelegationToken, 1, 2),
    both(ApiKey::DescribeDelegationToken, 1, 3),
    both(ApiKey::ElectLeaders, 0, 2),
    both(ApiKey::IncrementalAlterConfigs, 0, 1),
    both(ApiKey::AlterPartitionReassignments, 0, 1),
    both(ApiKey::ListPartitionReassignments, 0, 0),
    // Forwarded by brokers (kafka-configs --alter --entity-type users … producer_byte_rate=…).
    both(ApiKey::AlterClientQuotas, 0, 1),
    // Advertised by a Kafka controller, which has no handler for it (UNKNOWN_SERVER_ERROR).
    both(ApiKey::DescribeUserScramCredentials, 0, 0),
    // Forwarded by brokers (kafka-configs --alter --add-config SCRAM-SHA-256=…).
    both(ApiKey::AlterUserScramCredentials, 0, 0),
    both(ApiKey::Vote, 0, 2),
    both(ApiKey::BeginQuorumEpoch, 0, 1),
    both(ApiKey::EndQuorumEpoch, 0, 1),
    both(ApiKey::DescribeQuorum, 0, 2),
    // KIP-896 removed AlterPartition v0-1.
    both(ApiKey::AlterPartition, 2, 3),
    both(ApiKey::UpdateFeatures, 0, 2),
    // A broker forwards DescribeQuorum/AddRaftVoter/RemoveRaftVoter only to a controller that
    // advertises Envelope (its NetworkClient refuses an API the peer does not list).
    both(ApiKey::Envelope, 0, 0),
    both(ApiKey::FetchSnapshot, 0, 1),
    both(ApiKey::DescribeCluster, 0, 2),
    both(ApiKey::BrokerRegistration, 0, 4),
    // v2 (Kafka 4.4, KIP-1066): the broker's cordoned log directories.
    newer_in_4_4(ApiKey::BrokerHeartbeat, 0, 1, 2),
    both(ApiKey::UnregisterBroker, 0, 0),
    both(ApiKey::AllocateProducerIds, 0, 0),
    both(ApiKey::ControllerRegistration, 0, 0),
    both(ApiKey::AssignReplicasToDirs, 0, 0),
    // v1 (Kafka 4.4): AckWhenCommitted false answers once the VotersRecord is appended.
    newer_in_4_4(ApiKey::AddRaftVoter, 0, 0, 1),
    both(ApiKey::RemoveRaftVoter, 0, 0),
    both(ApiKey::UpdateRaftVoter, 0, 0),
    // Kafka 4.4 (KIP-1312).
    Served {
        api_key: ApiKey::UnregisterController,
        min_version: 0,
        max_4_1: None,
        max_4_4: 0,
    },
];

const fn max_in(s: &Served, release: Release) -> Option<i16> {
    match release {
        Release::Kafka4_1 => s.max_4_1,
        Release::Kafka4_4 => Some(s.max_4_4),
    }
}

const fn count_in(release: Release) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < SERVED.len() {
        if max_in(&SERVED[i], release).is_some() {
            n += 1;
        }
        i += 1;
    }
    n
}

const fn table_of<const N: usize>(release: Release) -> [ApiRange; N] {
    let mut out = [api(ApiKey::Fetch, 0, 0); N];
    let (mut i, mut j) = (0, 0);
    while i < SERVED.len() {
        let s = &SERVED[i];
        if let Some(max) = max_in(s, release) {
            out[j] = api(s.api_key, s.min_version, max);
            j += 1;
        }
        i += 1;
    }
    out
}

const TABLE_4_1: [ApiRange; count_in(Release::Kafka4_1)] = table_of(Release::Kafka4_1);
const TABLE_4_4: [ApiRange; count_in(Release::Kafka4_4)] = table_of(Release::Kafka4_4);

/// Kafka 4.1.2's controller APIs, in ascending key order.
pub const ADVERTISED: &[ApiRange] = &TABLE_4_1;

/// Kafka 4.4.0's controller APIs: [`ADVERTISED`] with ApiVersions v5 (KIP-1242),
/// BrokerHeartbeat v2 (KIP-1066 cordoned log directories), AddRaftVoter v1 (AckWhenCommitted)
/// and UnregisterController (API 94).
pub const ADVERTISED_4_4: &[ApiRange] = &TABLE_4_4;

/// The range of `api_key` this node decodes and serves, whatever release it presents
/// ([`ADVERTISED_4_4`], the widest table).
pub fn advertised(api_key: ApiKey) -> Option<ApiRange> {
    ADVERTISED_4_4
        .iter()
        .copied()
        .find(|r| r.api_key == api_key)
}

impl Release {
    /// The APIs advertised in ApiVersions, in ascending key order.
    pub fn advertised(self) -> &'static [ApiRange] {
        match self {
            Self::Kafka4_1 => ADVERTISED,
            Self::Kafka4_4 => ADVERTISED_4_4,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advertised_ranges_are_within_what_the_codec_can_decode() {
        for r in ADVERTISED_4_4 {
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
        for table in [ADVERTISED, ADVERTISED_4_4] {
            let keys: Vec<i16> = table.iter().map(|r| r.api_key as i16).collect();
            let mut sorted = keys.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(keys, sorted);
        }
    }

    /// The decoding table must cover every release's: a node never advertises what it would
    /// refuse to decode.
    #[test]
    fn every_release_advertises_within_what_is_decoded() {
        for release in [Release::Kafka4_1, Release::Kafka4_4] {
            for r in release.advertised() {
                let served = advertised(r.api_key).expect("advertised API is decoded");
                assert!(served.min_version <= r.min_version && r.max_version <= served.max_version);
            }
            let names: Vec<&str> = release
                .supported_features()
                .iter()
                .map(|f| f.name)
                .collect();
            let mut order: Vec<&str> = release.registration_order().to_vec();
            assert_eq!(order.len(), names.len());
            order.sort_unstable();
            let mut sorted = names.clone();
            sorted.sort_unstable();
            assert_eq!(
                order, sorted,
                "{release:?}: registration lists other features"
            );
        }
    }
}
