//! Typed request and response bodies for every API in [`super::versions::ADVERTISED`].
//!
//! One macro row per API keeps the request enum, the response enum and their version-checked
//! decode/encode in step with the advertised table: adding an API is one row here and one in
//! `versions.rs`.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::{
    AddRaftVoterRequest, AddRaftVoterResponse, AllocateProducerIdsRequest,
    AllocateProducerIdsResponse, AlterClientQuotasRequest, AlterClientQuotasResponse,
    AlterConfigsRequest, AlterConfigsResponse, AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse, AlterPartitionRequest, AlterPartitionResponse,
    AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse, ApiKey,
    ApiVersionsRequest, ApiVersionsResponse, AssignReplicasToDirsRequest,
    AssignReplicasToDirsResponse, BeginQuorumEpochRequest, BeginQuorumEpochResponse,
    BrokerHeartbeatRequest, BrokerHeartbeatResponse, BrokerRegistrationRequest,
    BrokerRegistrationResponse, ControllerRegistrationRequest, ControllerRegistrationResponse,
    CreateAclsRequest, CreateAclsResponse, CreateDelegationTokenRequest,
    CreateDelegationTokenResponse, CreatePartitionsRequest, CreatePartitionsResponse,
    CreateTopicsRequest, CreateTopicsResponse, DeleteAclsRequest, DeleteAclsResponse,
    DeleteTopicsRequest, DeleteTopicsResponse, DescribeAclsRequest, DescribeAclsResponse,
    DescribeClusterRequest, DescribeClusterResponse, DescribeConfigsRequest,
    DescribeConfigsResponse, DescribeDelegationTokenRequest, DescribeDelegationTokenResponse,
    DescribeQuorumRequest, DescribeQuorumResponse, DescribeUserScramCredentialsRequest,
    DescribeUserScramCredentialsResponse, ElectLeadersRequest, ElectLeadersResponse,
    EndQuorumEpochRequest, EndQuorumEpochResponse, EnvelopeRequest, EnvelopeResponse,
    ExpireDelegationTokenRequest, ExpireDelegationTokenResponse, FetchRequest, FetchResponse,
    FetchSnapshotRequest, FetchSnapshotResponse, IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse, ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse, RemoveRaftVoterRequest, RemoveRaftVoterResponse,
    RenewDelegationTokenRequest, RenewDelegationTokenResponse, SaslAuthenticateRequest,
    SaslAuthenticateResponse, SaslHandshakeRequest, SaslHandshakeResponse, UnregisterBrokerRequest,
    UnregisterBrokerResponse, UnregisterControllerRequest, UnregisterControllerResponse,
    UpdateFeaturesRequest, UpdateFeaturesResponse, UpdateRaftVoterRequest, UpdateRaftVoterResponse,
    VoteRequest, VoteResponse,
};
use kafka_protocol::protocol::{Decodable, Encodable};

use super::error::CodecError;

macro_rules! kraft_apis {
    ($($variant:ident => $req:ident, $resp:ident;)*) => {
        /// A decoded request body of an API we serve.
        #[derive(Debug, Clone, PartialEq)]
        #[allow(missing_docs)]
        pub enum RequestBody {
            $($variant($req),)*
        }

        /// A response body of an API we serve.
        #[derive(Debug, Clone, PartialEq)]
        #[allow(missing_docs)]
        pub enum ResponseBody {
            $($variant($resp),)*
        }

        impl RequestBody {
            /// Decodes the body of `api_key` at `version`. Unknown trailing bytes are left in
            /// `buf` (Kafka ignores them too).
            pub fn decode(api_key: ApiKey, version: i16, buf: &mut Bytes) -> Result<Self, CodecError> {
                let malformed = |e: anyhow::Error| CodecError::MalformedBody {
                    api_key,
                    version,
                    reason: format!("{e:#}"),
                };
                match api_key {
                    $(ApiKey::$variant => Ok(Self::$variant($req::decode(buf, version).map_err(malformed)?)),)*
                    _ => Err(CodecError::ApiNotEnabled { api_key, version }),
                }
            }

            /// Encodes the body at `version` (what we send to peers).
            pub fn encode(&self, version: i16, buf: &mut BytesMut) -> Result<(), CodecError> {
                let api_key = self.api_key();
                let failed = |e: anyhow::Error| CodecError::Encode { api_key, version, reason: format!("{e:#}") };
                match self {
                    $(Self::$variant(m) => m.encode(buf, version).map_err(failed),)*
                }
            }

            /// The API this body belongs to.
            pub fn api_key(&self) -> ApiKey {
                match self {
                    $(Self::$variant(_) => ApiKey::$variant,)*
                }
            }
        }

        impl ResponseBody {
            /// Decodes a response body of `api_key` at `version` (what peers answer us).
            pub fn decode(api_key: ApiKey, version: i16, buf: &mut Bytes) -> Result<Self, CodecError> {
                let malformed = |e: anyhow::Error| CodecError::MalformedBody {
                    api_key,
                    version,
                    reason: format!("{e:#}"),
                };
                match api_key {
                    $(ApiKey::$variant => Ok(Self::$variant($resp::decode(buf, version).map_err(malformed)?)),)*
                    _ => Err(CodecError::ApiNotEnabled { api_key, version }),
                }
            }

            /// Encodes the body at `version`, the version of the request it answers.
            pub fn encode(&self, version: i16, buf: &mut BytesMut) -> Result<(), CodecError> {
                let api_key = self.api_key();
                let failed = |e: anyhow::Error| CodecError::Encode { api_key, version, reason: format!("{e:#}") };
                match self {
                    $(Self::$variant(m) => m.encode(buf, version).map_err(failed),)*
                }
            }

            /// The API this body belongs to.
            pub fn api_key(&self) -> ApiKey {
                match self {
                    $(Self::$variant(_) => ApiKey::$variant,)*
                }
            }
        }
    };
}

kraft_apis! {
    Fetch => FetchRequest, FetchResponse;
    ApiVersions => ApiVersionsRequest, ApiVersionsResponse;
    SaslHandshake => SaslHandshakeRequest, SaslHandshakeResponse;
    SaslAuthenticate => SaslAuthenticateRequest, SaslAuthenticateResponse;
    Vote => VoteRequest, VoteResponse;
    BeginQuorumEpoch => BeginQuorumEpochRequest, BeginQuorumEpochResponse;
    EndQuorumEpoch => EndQuorumEpochRequest, EndQuorumEpochResponse;
    DescribeQuorum => DescribeQuorumRequest, DescribeQuorumResponse;
    Envelope => EnvelopeRequest, EnvelopeResponse;
    FetchSnapshot => FetchSnapshotRequest, FetchSnapshotResponse;
    DescribeCluster => DescribeClusterRequest, DescribeClusterResponse;
    AddRaftVoter => AddRaftVoterRequest, AddRaftVoterResponse;
    RemoveRaftVoter => RemoveRaftVoterRequest, RemoveRaftVoterResponse;
    UpdateRaftVoter => UpdateRaftVoterRequest, UpdateRaftVoterResponse;
    ControllerRegistration => ControllerRegistrationRequest, ControllerRegistrationResponse;
    CreateTopics => CreateTopicsRequest, CreateTopicsResponse;
    DeleteTopics => DeleteTopicsRequest, DeleteTopicsResponse;
    CreatePartitions => CreatePartitionsRequest, CreatePartitionsResponse;
    DescribeConfigs => DescribeConfigsRequest, DescribeConfigsResponse;
    AlterConfigs => AlterConfigsRequest, AlterConfigsResponse;
    IncrementalAlterConfigs => IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse;
    AlterPartition => AlterPartitionRequest, AlterPartitionResponse;
    BrokerRegistration => BrokerRegistrationRequest, BrokerRegistrationResponse;
    BrokerHeartbeat => BrokerHeartbeatRequest, BrokerHeartbeatResponse;
    UnregisterBroker => UnregisterBrokerRequest, UnregisterBrokerResponse;
    AlterUserScramCredentials => AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse;
    AlterClientQuotas => AlterClientQuotasRequest, AlterClientQuotasResponse;
    DescribeUserScramCredentials => DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse;
    CreateDelegationToken => CreateDelegationTokenRequest, CreateDelegationTokenResponse;
    RenewDelegationToken => RenewDelegationTokenRequest, RenewDelegationTokenResponse;
    ExpireDelegationToken => ExpireDelegationTokenRequest, ExpireDelegationTokenResponse;
    DescribeDelegationToken => DescribeDelegationTokenRequest, DescribeDelegationTokenResponse;
    DescribeAcls => DescribeAclsRequest, DescribeAclsResponse;
    CreateAcls => CreateAclsRequest, CreateAclsResponse;
    DeleteAcls => DeleteAclsRequest, DeleteAclsResponse;
    UnregisterController => UnregisterControllerRequest, UnregisterControllerResponse;
    AllocateProducerIds => AllocateProducerIdsRequest, AllocateProducerIdsResponse;
    AssignReplicasToDirs => AssignReplicasToDirsRequest, AssignReplicasToDirsResponse;
    ElectLeaders => ElectLeadersRequest, ElectLeadersResponse;
    AlterPartitionReassignments => AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse;
    ListPartitionReassignments => ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse;
    UpdateFeatures => UpdateFeaturesRequest, UpdateFeaturesResponse;
}
