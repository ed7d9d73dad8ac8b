//! The answers a controller gives without running a manager: NOT_CONTROLLER as Kafka words
//! it, a refusal in the shape of each API's response (Kafka's `getErrorResponse`), and a
//! parked success answer rewritten as NOT_CONTROLLER when leadership is lost before commit.

use super::errors::{self, ApiError};
use super::{configuration, delegation_tokens, feature_control, replication, scram};
use crate::codec::{RequestBody, ResponseBody};

/// NOT_CONTROLLER as Kafka's controller words it.
pub fn not_controller(leader_id: Option<i32>) -> ApiError {
    match leader_id {
        Some(id) => ApiError::new(
            errors::NOT_CONTROLLER,
            format!("The active controller appears to be node {id}."),
        ),
        None => ApiError::new(
            errors::NOT_CONTROLLER,
            "No controller appears to be active.",
        ),
    }
}

/// The answer to `body` carrying only `error` (top-level, or on every item where the API has
/// no top-level error code).
pub fn error_response(body: &RequestBody, version: i16, error: &ApiError) -> ResponseBody {
    use kafka_protocol::messages::*;
    use kafka_protocol::protocol::StrBytes;
    let message = || error.message.clone().map(StrBytes::from_string);
    match body {
        RequestBody::BrokerRegistration(_) => ResponseBody::BrokerRegistration(
            BrokerRegistrationResponse::default()
                .with_error_code(error.code)
                .with_broker_epoch(-1),
        ),
        RequestBody::BrokerHeartbeat(_) => ResponseBody::BrokerHeartbeat(
            BrokerHeartbeatResponse::default()
                .with_error_code(error.code)
                .with_is_fenced(true),
        ),
        RequestBody::UnregisterBroker(_) => ResponseBody::UnregisterBroker(
            UnregisterBrokerResponse::default()
                .with_error_code(error.code)
                .with_error_message(message()),
        ),
        RequestBody::UnregisterController(_) => ResponseBody::UnregisterController(
            kafka_protocol::messages::UnregisterControllerResponse::default()
                .with_error_code(error.code)
                .with_error_message(message()),
        ),
        RequestBody::AllocateProducerIds(_) => ResponseBody::AllocateProducerIds(
            AllocateProducerIdsResponse::default()
                .with_error_code(error.code)
                .with_producer_id_start(ProducerId(-1)),
        ),
        RequestBody::ControllerRegistration(_) => ResponseBody::ControllerRegistration(
            ControllerRegistrationResponse::default()
                .with_error_code(error.code)
                .with_error_message(message()),
        ),
        RequestBody::AlterPartition(_) => ResponseBody::AlterPartition(
            AlterPartitionResponse::default().with_error_code(error.code),
        ),
        RequestBody::AssignReplicasToDirs(_) => ResponseBody::AssignReplicasToDirs(
            AssignReplicasToDirsResponse::default().with_error_code(error.code),
        ),
        // Kafka's `ElectLeadersRequest.getErrorResponse`: the top-level code from v1, and the
        // error on every partition asked for (none for a null list).
        RequestBody::ElectLeaders(req) => ResponseBody::ElectLeaders(
            ElectLeadersResponse::default()
                .with_error_code(if version >= 1 { error.code } else { 0 })
                .with_replica_election_results(
                    req.topic_partitions
                        .iter()
                        .flatten()
                        .map(|t| {
                            elect_leaders_response::ReplicaElectionResult::default()
                                .with_topic(t.topic.clone())
                                .with_partition_result(
                                    t.partitions
                                        .iter()
                                        .map(|p| {
                                            elect_leaders_response::PartitionResult::default()
                                                .with_partition_id(*p)
                                                .with_error_code(error.code)
                                                .with_error_message(message())
                                        })
                                        .collect(),
                                )
                        })
                        .collect(),
                ),
        ),
        RequestBody::CreateTopics(req) => ResponseBody::CreateTopics(
            CreateTopicsResponse::default().with_topics(
                req.topics
                    .iter()
                    .map(|t| {
                        create_topics_response::CreatableTopicResult::default()
                            .with_name(t.name.clone())
                            .with_error_code(error.code)
                            .with_error_message(message())
                            .with_num_partitions(-1)
                            .with_replication_factor(-1)
                    })
                    .collect(),
            ),
        ),
        RequestBody::AlterPartitionReassignments(req) => ResponseBody::AlterPartitionReassignments(
            replication::alter_partition_reassignments_error(req, error),
        ),
        RequestBody::ListPartitionReassignments(_) => ResponseBody::ListPartitionReassignments(
            ListPartitionReassignmentsResponse::default()
                .with_error_code(error.code)
                .with_error_message(message()),
        ),
        RequestBody::UpdateFeatures(_) => {
            ResponseBody::UpdateFeatures(feature_control::update_features_error(error))
        }
        RequestBody::DescribeConfigs(req) => ResponseBody::DescribeConfigs(
            configuration::describe::describe_configs_error(req, error),
        ),
        RequestBody::IncrementalAlterConfigs(req) => ResponseBody::IncrementalAlterConfigs(
            configuration::incremental_alter_configs_error(req, error),
        ),
        RequestBody::AlterConfigs(req) => {
            ResponseBody::AlterConfigs(configuration::legacy_alter_configs_error(req, error))
        }
        RequestBody::DeleteTopics(req) => {
            ResponseBody::DeleteTopics(replication::delete_topics_error(req, version, error))
        }
        RequestBody::CreatePartitions(req) => {
            ResponseBody::CreatePartitions(replication::create_partitions_error(req, error))
        }
        RequestBody::AlterUserScramCredentials(req) => {
            ResponseBody::AlterUserScramCredentials(scram::alter_credentials_error(req, error))
        }
        RequestBody::AlterClientQuotas(req) => ResponseBody::AlterClientQuotas(
            super::client_quotas::alter_client_quotas_error(req, error),
        ),
        RequestBody::CreateAcls(req) => {
            ResponseBody::CreateAcls(super::acls::create_acls_error(req, error))
        }
        RequestBody::DeleteAcls(req) => {
            ResponseBody::DeleteAcls(super::acls::delete_acls_error(req, error))
        }
        RequestBody::DescribeAcls(_) => {
            ResponseBody::DescribeAcls(super::acls::describe_acls_error(error))
        }
        RequestBody::CreateDelegationToken(_) => ResponseBody::CreateDelegationToken(
            delegation_tokens::create_error(version, error.code),
        ),
        RequestBody::RenewDelegationToken(_) => {
            ResponseBody::RenewDelegationToken(delegation_tokens::renew_error(error.code))
        }
        RequestBody::ExpireDelegationToken(_) => {
            ResponseBody::ExpireDelegationToken(delegation_tokens::expire_error(error.code))
        }
        // Kafka's `DescribeDelegationTokenResponse(version, throttle, error)`: no tokens.
        RequestBody::DescribeDelegationToken(_) => ResponseBody::DescribeDelegationToken(
            DescribeDelegationTokenResponse::default().with_error_code(error.code),
        ),
        // Kafka's `DescribeUserScramCredentialsRequest.getErrorResponse`: the error at the top
        // and on one nameless result per user asked for (ApiError hides an unexpected
        // error's text: no message then).
        RequestBody::DescribeUserScramCredentials(req) => {
            let results = req
                .users
                .iter()
                .flatten()
                .map(|_| {
                    describe_user_scram_credentials_response::DescribeUserScramCredentialsResult::default()
                        .with_error_code(error.code)
                        .with_error_message(message())
                })
                .collect();
            ResponseBody::DescribeUserScramCredentials(
                DescribeUserScramCredentialsResponse::default()
                    .with_error_code(error.code)
                    .with_error_message(message())
                    .with_results(results),
            )
        }
        // Not a controller API: routing sends none here. Answer as Kafka answers an API a
        // controller does not serve.
        other => crate::node::not_ready_response(other, version).unwrap_or_else(|| {
            ResponseBody::ApiVersions(crate::codec::api_versions::unsupported_version_response(
                Default::default(),
            ))
        }),
    }
}

/// The answer to any request this node serves carrying only `error` (Kafka's
/// `getErrorResponse` of each request): the controller APIs' as [`error_response`], the
/// Raft and node APIs' with their top-level error code (and message where they carry one).
pub fn any_error_response(body: &RequestBody, version: i16, error: &ApiError) -> ResponseBody {
    use kafka_protocol::messages::*;
    use kafka_protocol::protocol::StrBytes;
    let message = || error.message.clone().map(StrBytes::from_string);
    match body {
        RequestBody::Fetch(_) => {
            ResponseBody::Fetch(FetchResponse::default().with_error_code(error.code))
        }
        RequestBody::FetchSnapshot(_) => ResponseBody::FetchSnapshot(
            FetchSnapshotResponse::default().with_error_code(error.code),
        ),
        RequestBody::Vote(_) => {
            ResponseBody::Vote(VoteResponse::default().with_error_code(error.code))
        }
        RequestBody::BeginQuorumEpoch(_) => ResponseBody::BeginQuorumEpoch(
            BeginQuorumEpochResponse::default().with_error_code(error.code),
        ),
        RequestBody::EndQuorumEpoch(_) => ResponseBody::EndQuorumEpoch(
            EndQuorumEpochResponse::default().with_error_code(error.code),
        ),
        RequestBody::DescribeQuorum(_) => ResponseBody::DescribeQuorum(
            DescribeQuorumResponse::default()
                .with_error_code(error.code)
                .with_error_message(message()),
        ),
        RequestBody::AddRaftVoter(_) => ResponseBody::AddRaftVoter(
            AddRaftVoterResponse::default()
                .with_error_code(error.code)
                .with_error_message(message()),
        ),
        RequestBody::RemoveRaftVoter(_) => ResponseBody::RemoveRaftVoter(
            RemoveRaftVoterResponse::default()
                .with_error_code(error.code)
                .with_error_message(message()),
        ),
        RequestBody::UpdateRaftVoter(_) => ResponseBody::UpdateRaftVoter(
            UpdateRaftVoterResponse::default().with_error_code(error.code),
        ),
        RequestBody::DescribeCluster(_) => ResponseBody::DescribeCluster(
            DescribeClusterResponse::default()
                .with_error_code(error.code)
                .with_error_message(message()),
        ),
        RequestBody::ApiVersions(_) => {
            ResponseBody::ApiVersions(ApiVersionsResponse::default().with_error_code(error.code))
        }
        RequestBody::SaslHandshake(_) => ResponseBody::SaslHandshake(
            SaslHandshakeResponse::default().with_error_code(error.code),
        ),
        RequestBody::SaslAuthenticate(_) => ResponseBody::SaslAuthenticate(
            SaslAuthenticateResponse::default()
                .with_error_code(error.code)
                .with_error_message(message()),
        ),
        RequestBody::Envelope(_) => {
            ResponseBody::Envelope(EnvelopeResponse::default().with_error_code(error.code))
        }
        other => error_response(other, version, error),
    }
}

/// NOT_CONTROLLER in the shape of `body`'s API.
pub(super) fn not_controller_body(body: &ResponseBody, error: &ApiError) -> ResponseBody {
    use kafka_protocol::protocol::StrBytes;
    let message = || error.message.clone().map(StrBytes::from_string);
    match body.clone() {
        ResponseBody::BrokerRegistration(r) => {
            ResponseBody::BrokerRegistration(r.with_error_code(error.code).with_broker_epoch(-1))
        }
        ResponseBody::BrokerHeartbeat(r) => ResponseBody::BrokerHeartbeat(
            r.with_error_code(error.code)
                .with_is_caught_up(false)
                .with_is_fenced(true)
                .with_should_shut_down(false),
        ),
        ResponseBody::UnregisterBroker(r) => ResponseBody::UnregisterBroker(
            r.with_error_code(error.code).with_error_message(message()),
        ),
        ResponseBody::ControllerRegistration(r) => ResponseBody::ControllerRegistration(
            r.with_error_code(error.code).with_error_message(message()),
        ),
        ResponseBody::UnregisterController(r) => ResponseBody::UnregisterController(
            r.with_error_code(error.code).with_error_message(message()),
        ),
        ResponseBody::AllocateProducerIds(r) => ResponseBody::AllocateProducerIds(
            r.with_error_code(error.code)
                .with_producer_id_start(kafka_protocol::messages::ProducerId(-1))
                .with_producer_id_len(0),
        ),
        ResponseBody::AlterPartition(r) => {
            ResponseBody::AlterPartition(r.with_error_code(error.code).with_topics(Vec::new()))
        }
        ResponseBody::AssignReplicasToDirs(r) => ResponseBody::AssignReplicasToDirs(
            r.with_error_code(error.code).with_directories(Vec::new()),
        ),
        ResponseBody::UpdateFeatures(r) => ResponseBody::UpdateFeatures(
            r.with_error_code(error.code)
                .with_error_message(message())
                .with_results(Vec::new()),
        ),
        ResponseBody::AlterPartitionReassignments(mut r) => {
            r.error_code = error.code;
            r.error_message = message();
            for p in r.responses.iter_mut().flat_map(|t| t.partitions.iter_mut()) {
                p.error_code = error.code;
                p.error_message = message();
            }
            ResponseBody::AlterPartitionReassignments(r)
        }
        ResponseBody::IncrementalAlterConfigs(mut r) => {
            for t in &mut r.responses {
                t.error_code = error.code;
                t.error_message = message();
            }
            ResponseBody::IncrementalAlterConfigs(r)
        }
        ResponseBody::AlterConfigs(mut r) => {
            for t in &mut r.responses {
                t.error_code = error.code;
                t.error_message = message();
            }
            ResponseBody::AlterConfigs(r)
        }
        ResponseBody::DeleteTopics(mut r) => {
            for t in &mut r.responses {
                t.error_code = error.code;
                t.error_message = None;
            }
            ResponseBody::DeleteTopics(r)
        }
        ResponseBody::CreatePartitions(mut r) => {
            for t in &mut r.results {
                t.error_code = error.code;
                t.error_message = message();
            }
            ResponseBody::CreatePartitions(r)
        }
        ResponseBody::AlterUserScramCredentials(mut r) => {
            for t in &mut r.results {
                t.error_code = error.code;
                t.error_message = message();
            }
            ResponseBody::AlterUserScramCredentials(r)
        }
        ResponseBody::CreateTopics(mut r) => {
            for t in &mut r.topics {
                t.error_code = error.code;
                t.error_message = message();
                t.topic_id = uuid::Uuid::nil();
                t.num_partitions = -1;
                t.replication_factor = -1;
                t.configs = None;
            }
            ResponseBody::CreateTopics(r)
        }
        ResponseBody::CreateAcls(mut r) => {
            for c in &mut r.results {
                c.error_code = error.code;
                c.error_message = message();
            }
            ResponseBody::CreateAcls(r)
        }
        ResponseBody::DeleteAcls(mut r) => {
            for f in &mut r.filter_results {
                f.error_code = error.code;
                f.error_message = message();
                f.matching_acls.clear();
            }
            ResponseBody::DeleteAcls(r)
        }
        other => other,
    }
}
