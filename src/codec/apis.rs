//! THE API table: one row per API this node serves, with every fact about it that some layer
//! needs (Kafka keeps the same facts on `ApiKeys` and in `ControllerApis`).
//!
//! ```text
//!   APIS ─▶ max per release                         what ApiVersions lists, per release
//!        ─▶ owner                                   who answers: the node, the Raft core,
//!                                                   the controller (one routing decision)
//!        ─▶ cluster_operation                       ControllerApis' cluster-level ACL check
//!        ─▶ forwardable                             what may arrive inside an Envelope
//!        ─▶ cluster_traffic                         connections never evicted for clients
//!        ─▶ kind                                    answered from the committed image (Read)
//!                                                   or a write on the active controller
//! ```
//!
//! Adding an API is a row here, its error answer in `error_response.rs`, its manager and its
//! entry in `controller::apis` (or the Raft core's dispatch).

use kafka_protocol::messages::ApiKey;

use crate::common::acl::AclOperation;
use crate::common::release::Release;

/// Who answers an API.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    /// The node's request handler itself (ApiVersions, SASL, Envelope, DescribeCluster).
    Node,
    /// The Raft core (Kafka's `KafkaRaftClient`).
    Raft,
    /// The controller (Kafka's `ControllerApis` → `QuorumController`).
    Controller,
}

/// Whether an API reads or may write the metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Answered from what is committed, on any node.
    Read,
    /// May write records; for the controller, only the active controller serves it.
    Write,
}

/// One API and its facts.
#[derive(Debug, Clone, Copy)]
pub struct Api {
    /// The API.
    pub api_key: ApiKey,
    /// Lowest version served.
    pub min_version: i16,
    /// Highest version each release's controller advertises, indexed by [`Release`] (oldest
    /// first; `None`: that release does not list the API).
    pub max: [Option<i16>; Release::ALL.len()],
    /// Who answers it.
    pub owner: Owner,
    /// The operation on the CLUSTER resource Kafka's ControllerApis demands before serving
    /// it; `None` for APIs checked per resource, or not at all (ApiVersions, SASL).
    pub cluster_operation: Option<AclOperation>,
    /// Kafka's `ApiKeys.forwardable`: a broker may send it inside an Envelope.
    pub forwardable: bool,
    /// A request of it marks its connection as cluster traffic (never evicted for a client
    /// connection by `max.connections`).
    pub cluster_traffic: bool,
    /// Read or write.
    pub kind: Kind,
}

impl Api {
    /// The highest version `release` advertises, `None` when it does not list the API.
    pub const fn max_in(&self, release: Release) -> Option<i16> {
        self.max[release as usize]
    }
}

use AclOperation::{Alter, AlterConfigs, ClusterAction, Describe};
use Kind::{Read, Write};
use Owner::{Controller, Node, Raft};

/// A row served alike by every release's controller (4.0.2 to 4.4.0).
const fn row(api_key: ApiKey, min: i16, max: i16, owner: Owner, kind: Kind) -> Api {
    Api {
        api_key,
        min_version: min,
        max: [Some(max); Release::ALL.len()],
        owner,
        cluster_operation: None,
        forwardable: false,
        cluster_traffic: false,
        kind,
    }
}

impl Api {
    const fn op(mut self, operation: AclOperation) -> Self {
        self.cluster_operation = Some(operation);
        self
    }
    const fn forwardable(mut self) -> Self {
        self.forwardable = true;
        self
    }
    const fn cluster_traffic(mut self) -> Self {
        self.cluster_traffic = true;
        self
    }
    /// From `release` on, the controller advertises up to `max`.
    const fn max_from(mut self, release: Release, max: i16) -> Self {
        let mut i = release as usize;
        while i < self.max.len() {
            self.max[i] = Some(max);
            i += 1;
        }
        self
    }
    /// Releases before `release` advertise up to `max` (the row's maximum is newer).
    const fn max_before(mut self, release: Release, max: i16) -> Self {
        let mut i = 0;
        while i < release as usize {
            self.max[i] = Some(max);
            i += 1;
        }
        self
    }
    /// Releases before `release` do not list the API.
    const fn new_in(mut self, release: Release) -> Self {
        let mut i = 0;
        while i < release as usize {
            self.max[i] = None;
            i += 1;
        }
        self
    }
}

/// Every API served, in ascending key order (Kafka's ApiVersions lists them that way).
pub const APIS: &[Api] = &[
    // Fetch below v13 cannot carry the metadata topic id, which KRaft matches on; Kafka 4.x
    // still advertises 4+ (KIP-896 removed 0-3) and rejects the partition later, so do we.
    // Kafka 4.0 advertises up to v17 (v18 adds the follower's high watermark).
    row(ApiKey::Fetch, 4, 18, Raft, Read)
        .max_before(Release::Kafka4_1, 17)
        .op(ClusterAction)
        .cluster_traffic(),
    // Authentication on SASL listeners (`crate::security`); on the others, and after
    // authentication, answered ILLEGAL_SASL_STATE as Kafka's ControllerApis answers.
    row(ApiKey::SaslHandshake, 0, 1, Node, Read),
    // v5 (Kafka 4.4, KIP-1242) adds the cluster and node id the client expects; a controller
    // only checks they come as a pair (a broker answers REBOOTSTRAP_REQUIRED on a mismatch).
    row(ApiKey::ApiVersions, 0, 4, Node, Read).max_from(Release::Kafka4_4, 5),
    // KIP-896 (Kafka 4.0) removed CreateTopics v0-1.
    row(ApiKey::CreateTopics, 2, 7, Controller, Write).forwardable(),
    // KIP-896 removed DeleteTopics v0.
    row(ApiKey::DeleteTopics, 1, 6, Controller, Write).forwardable(),
    // KIP-896 removed v0 of the three ACL APIs and DescribeConfigs v0.
    row(ApiKey::DescribeAcls, 1, 3, Controller, Read).op(Describe),
    row(ApiKey::CreateAcls, 1, 3, Controller, Write)
        .op(Alter)
        .forwardable(),
    row(ApiKey::DeleteAcls, 1, 3, Controller, Write)
        .op(Alter)
        .forwardable(),
    row(ApiKey::DescribeConfigs, 1, 4, Controller, Read),
    row(ApiKey::AlterConfigs, 0, 2, Controller, Write).forwardable(),
    row(ApiKey::SaslAuthenticate, 0, 2, Node, Read),
    row(ApiKey::CreatePartitions, 0, 3, Controller, Write).forwardable(),
    // KIP-896 removed v0 of the delegation-token APIs. Forwarded by brokers
    // (kafka-delegation-tokens); Describe is answered by brokers, and a Kafka controller
    // advertises it but has no handler (UNKNOWN_SERVER_ERROR), as here.
    row(ApiKey::CreateDelegationToken, 1, 3, Controller, Write).forwardable(),
    row(ApiKey::RenewDelegationToken, 1, 2, Controller, Write).forwardable(),
    row(ApiKey::ExpireDelegationToken, 1, 2, Controller, Write).forwardable(),
    row(ApiKey::DescribeDelegationToken, 1, 3, Controller, Read),
    row(ApiKey::ElectLeaders, 0, 2, Controller, Write)
        .op(Alter)
        .forwardable(),
    row(ApiKey::IncrementalAlterConfigs, 0, 1, Controller, Write).forwardable(),
    // v1 (AllowReplicationFactorChange) from Kafka 4.1.
    row(ApiKey::AlterPartitionReassignments, 0, 1, Controller, Write)
        .max_before(Release::Kafka4_1, 0)
        .op(Alter)
        .forwardable(),
    row(ApiKey::ListPartitionReassignments, 0, 0, Controller, Read)
        .op(Describe)
        .forwardable(),
    // Forwarded by brokers (kafka-configs --alter --entity-type users … producer_byte_rate=…).
    row(ApiKey::AlterClientQuotas, 0, 1, Controller, Write)
        .op(AlterConfigs)
        .forwardable(),
    // Advertised by a Kafka controller, which has no handler for it (UNKNOWN_SERVER_ERROR).
    row(ApiKey::DescribeUserScramCredentials, 0, 0, Controller, Read),
    // Forwarded by brokers (kafka-configs --alter --add-config SCRAM-SHA-256=…).
    row(ApiKey::AlterUserScramCredentials, 0, 0, Controller, Write)
        .op(Alter)
        .forwardable(),
    row(ApiKey::Vote, 0, 2, Raft, Write)
        .op(ClusterAction)
        .cluster_traffic(),
    row(ApiKey::BeginQuorumEpoch, 0, 1, Raft, Write)
        .op(ClusterAction)
        .cluster_traffic(),
    row(ApiKey::EndQuorumEpoch, 0, 1, Raft, Write)
        .op(ClusterAction)
        .cluster_traffic(),
    row(ApiKey::DescribeQuorum, 0, 2, Raft, Read)
        .op(Describe)
        .forwardable(),
    // KIP-896 removed AlterPartition v0-1.
    row(ApiKey::AlterPartition, 2, 3, Controller, Write)
        .op(ClusterAction)
        .cluster_traffic(),
    row(ApiKey::UpdateFeatures, 0, 2, Controller, Write)
        .op(Alter)
        .forwardable(),
    // A broker forwards DescribeQuorum/AddRaftVoter/RemoveRaftVoter only to a controller that
    // advertises Envelope (its NetworkClient refuses an API the peer does not list). Its
    // CLUSTER_ACTION is checked where it is unwrapped.
    row(ApiKey::Envelope, 0, 0, Node, Read).cluster_traffic(),
    row(ApiKey::FetchSnapshot, 0, 1, Raft, Read)
        .op(ClusterAction)
        .cluster_traffic(),
    row(ApiKey::DescribeCluster, 0, 2, Node, Read).op(Alter),
    row(ApiKey::BrokerRegistration, 0, 4, Controller, Write)
        .op(ClusterAction)
        .cluster_traffic(),
    // v2 (Kafka 4.3, KIP-1066): the broker's cordoned log directories.
    row(ApiKey::BrokerHeartbeat, 0, 1, Controller, Write)
        .max_from(Release::Kafka4_3, 2)
        .op(ClusterAction)
        .cluster_traffic(),
    row(ApiKey::UnregisterBroker, 0, 0, Controller, Write)
        .op(Alter)
        .forwardable(),
    row(ApiKey::AllocateProducerIds, 0, 0, Controller, Write)
        .op(ClusterAction)
        .forwardable()
        .cluster_traffic(),
    row(ApiKey::ControllerRegistration, 0, 0, Controller, Write)
        .op(ClusterAction)
        .cluster_traffic(),
    row(ApiKey::AssignReplicasToDirs, 0, 0, Controller, Write)
        .op(ClusterAction)
        .cluster_traffic(),
    // v1 (Kafka 4.2): AckWhenCommitted false answers once the VotersRecord is appended.
    row(ApiKey::AddRaftVoter, 0, 0, Raft, Write)
        .max_from(Release::Kafka4_2, 1)
        .op(Alter)
        .forwardable(),
    row(ApiKey::RemoveRaftVoter, 0, 0, Raft, Write)
        .op(Alter)
        .forwardable(),
    row(ApiKey::UpdateRaftVoter, 0, 0, Raft, Write)
        .op(ClusterAction)
        .cluster_traffic(),
    // Kafka 4.4 (KIP-1312).
    row(ApiKey::UnregisterController, 0, 0, Controller, Write)
        .new_in(Release::Kafka4_4)
        .op(Alter)
        .forwardable(),
];

/// Highest API key plus one that the index below covers (Kafka's keys are below 128).
const INDEX_LEN: usize = 128;

/// `APIS` indexed by API key (`u8::MAX`: not served), so every request's lookups (routing,
/// authorization, quotas) are one array read, not a scan.
const INDEX: [u8; INDEX_LEN] = {
    let mut index = [u8::MAX; INDEX_LEN];
    let mut i = 0;
    while i < APIS.len() {
        index[APIS[i].api_key as usize] = i as u8;
        i += 1;
    }
    index
};

/// The row of `api_key`, if this node serves it.
pub fn api(api_key: ApiKey) -> Option<&'static Api> {
    let i = *INDEX.get(api_key as i16 as usize)?;
    APIS.get(usize::from(i))
}

/// Whether `api_key` is served by the controller layer.
pub fn is_controller_api(api_key: ApiKey) -> bool {
    api(api_key).is_some_and(|a| a.owner == Owner::Controller)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_index_finds_every_row_and_nothing_else() {
        for row in APIS {
            assert_eq!(api(row.api_key).map(|a| a.api_key), Some(row.api_key));
        }
        assert!(api(ApiKey::Produce).is_none());
        assert!(api(ApiKey::JoinGroup).is_none());
    }

    #[test]
    fn one_row_per_api_in_key_order() {
        let keys: Vec<i16> = APIS.iter().map(|a| a.api_key as i16).collect();
        let mut sorted = keys.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(keys, sorted);
    }

    /// Kafka 4.1's `ApiKeys.forwardable` among the APIs a controller serves.
    #[test]
    fn forwardable_apis_are_kafkas() {
        let forwardable: Vec<ApiKey> = APIS
            .iter()
            .filter(|a| a.forwardable)
            .map(|a| a.api_key)
            .collect();
        assert_eq!(
            forwardable,
            [
                ApiKey::CreateTopics,
                ApiKey::DeleteTopics,
                ApiKey::CreateAcls,
                ApiKey::DeleteAcls,
                ApiKey::AlterConfigs,
                ApiKey::CreatePartitions,
                ApiKey::CreateDelegationToken,
                ApiKey::RenewDelegationToken,
                ApiKey::ExpireDelegationToken,
                ApiKey::ElectLeaders,
                ApiKey::IncrementalAlterConfigs,
                ApiKey::AlterPartitionReassignments,
                ApiKey::ListPartitionReassignments,
                ApiKey::AlterClientQuotas,
                ApiKey::AlterUserScramCredentials,
                ApiKey::DescribeQuorum,
                ApiKey::UpdateFeatures,
                ApiKey::UnregisterBroker,
                ApiKey::AllocateProducerIds,
                ApiKey::AddRaftVoter,
                ApiKey::RemoveRaftVoter,
                ApiKey::UnregisterController,
            ]
        );
    }
}
