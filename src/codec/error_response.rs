//! Every API's answer carrying only an error (Kafka's `AbstractRequest.getErrorResponse`, one
//! per request type): the error at the top level, or on every item the request named where
//! the API has no top-level error code. The controller, the node and the authenticator answer
//! refusals with it; the few builders a manager also uses for its own refusals
//! (`deletable_topic_result`, …) live here beside the answers they shape.

use kafka_protocol::messages::alter_client_quotas_response::{
    EntityData as ResponseEntity, EntryData as ResponseEntry,
};
use kafka_protocol::messages::alter_configs_response::AlterConfigsResourceResponse as LegacyResult;
use kafka_protocol::messages::alter_partition_reassignments_response::{
    ReassignablePartitionResponse, ReassignableTopicResponse,
};
use kafka_protocol::messages::alter_user_scram_credentials_response::AlterUserScramCredentialsResult;
use kafka_protocol::messages::create_acls_response::AclCreationResult;
use kafka_protocol::messages::create_partitions_response::CreatePartitionsTopicResult;
use kafka_protocol::messages::delete_acls_response::DeleteAclsFilterResult;
use kafka_protocol::messages::delete_topics_response::DeletableTopicResult;
use kafka_protocol::messages::describe_configs_response::DescribeConfigsResult;
use kafka_protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::*;
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::{RequestBody, ResponseBody};
use crate::common::errors::{default_message, ApiError};
use crate::common::principal::Principal;

/// A config resource's result (the same five fields in each config API's answer; the
/// controller's config manager builds its own with it too).
macro_rules! resource_result {
    ($ty:ty, $resource_type:expr, $resource_name:expr, $error:expr) => {
        <$ty>::default()
            .with_resource_type($resource_type)
            .with_resource_name($resource_name)
            .with_error_code($error.code)
            .with_error_message($error.message.clone().map(StrBytes::from_string))
    };
}
pub(crate) use resource_result;

/// The answer to `body` at `version` carrying only `error`: top-level, or on every item where
/// the API has no top-level error code. Every API served is here (the match is exhaustive).
///
/// Long on purpose: one short arm per API, like a table; the compiler checks that a new API
/// gets its error answer here.
pub fn error_response(body: &RequestBody, version: i16, error: &ApiError) -> ResponseBody {
    let message = || error.message.clone().map(StrBytes::from_string);
    match body {
        // The Raft and node APIs: their top-level error code (and message where they
        // carry one).
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
        // The controller APIs.
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
            // Only the error code: ProducerIdStart keeps the schema's default 0.
            AllocateProducerIdsResponse::default().with_error_code(error.code),
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
            alter_partition_reassignments_error(req, error),
        ),
        RequestBody::ListPartitionReassignments(_) => ResponseBody::ListPartitionReassignments(
            ListPartitionReassignmentsResponse::default()
                .with_error_code(error.code)
                .with_error_message(message()),
        ),
        RequestBody::UpdateFeatures(_) => {
            ResponseBody::UpdateFeatures(update_features_error(error))
        }
        RequestBody::DescribeConfigs(req) => {
            ResponseBody::DescribeConfigs(describe_configs_error(req, error))
        }
        RequestBody::IncrementalAlterConfigs(req) => {
            ResponseBody::IncrementalAlterConfigs(incremental_alter_configs_error(req, error))
        }
        RequestBody::AlterConfigs(req) => {
            ResponseBody::AlterConfigs(legacy_alter_configs_error(req, error))
        }
        RequestBody::DeleteTopics(req) => {
            ResponseBody::DeleteTopics(delete_topics_error(req, version, error))
        }
        RequestBody::CreatePartitions(req) => {
            ResponseBody::CreatePartitions(create_partitions_error(req, error))
        }
        RequestBody::AlterUserScramCredentials(req) => {
            ResponseBody::AlterUserScramCredentials(alter_credentials_error(req, error))
        }
        RequestBody::AlterClientQuotas(req) => {
            ResponseBody::AlterClientQuotas(alter_client_quotas_error(req, error))
        }
        RequestBody::CreateAcls(req) => ResponseBody::CreateAcls(create_acls_error(req, error)),
        RequestBody::DeleteAcls(req) => ResponseBody::DeleteAcls(delete_acls_error(req, error)),
        RequestBody::DescribeAcls(_) => ResponseBody::DescribeAcls(describe_acls_error(error)),
        RequestBody::CreateDelegationToken(_) => {
            ResponseBody::CreateDelegationToken(create_delegation_token_error(version, error.code))
        }
        RequestBody::RenewDelegationToken(_) => {
            ResponseBody::RenewDelegationToken(renew_delegation_token_error(error.code))
        }
        RequestBody::ExpireDelegationToken(_) => {
            ResponseBody::ExpireDelegationToken(expire_delegation_token_error(error.code))
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
    }
}

/// The answer to `req` carrying `error` on every entry, entities as the request gave them
/// and the error's default text (Kafka's `AlterClientQuotasRequest.getErrorResponse`).
pub fn alter_client_quotas_error(
    req: &AlterClientQuotasRequest,
    error: &ApiError,
) -> AlterClientQuotasResponse {
    let message = default_message(error.code);
    let entries = req
        .entries
        .iter()
        .map(|entry| {
            let entity = entry
                .entity
                .iter()
                .map(|d| {
                    ResponseEntity::default()
                        .with_entity_type(d.entity_type.clone())
                        .with_entity_name(d.entity_name.clone())
                })
                .collect();
            ResponseEntry::default()
                .with_error_code(error.code)
                .with_error_message(Some(StrBytes::from_static_str(message)))
                .with_entity(entity)
        })
        .collect();
    AlterClientQuotasResponse::default().with_entries(entries)
}

/// Every creation refused with `error` (`CreateAclsRequest.getErrorResponse`).
pub fn create_acls_error(req: &CreateAclsRequest, error: &ApiError) -> CreateAclsResponse {
    CreateAclsResponse::default().with_results(
        req.creations
            .iter()
            .map(|_| acl_creation_result(Some(error)))
            .collect(),
    )
}

/// Every filter refused with `error` (`DeleteAclsRequest.getErrorResponse`).
pub fn delete_acls_error(req: &DeleteAclsRequest, error: &ApiError) -> DeleteAclsResponse {
    DeleteAclsResponse::default().with_filter_results(
        req.filters
            .iter()
            .map(|_| {
                DeleteAclsFilterResult::default()
                    .with_error_code(error.code)
                    .with_error_message(
                        error
                            .message
                            .as_deref()
                            .map(|m| StrBytes::from_string(m.to_string())),
                    )
            })
            .collect(),
    )
}

/// The whole request refused with `error` (`DescribeAclsRequest.getErrorResponse`).
pub fn describe_acls_error(error: &ApiError) -> DescribeAclsResponse {
    DescribeAclsResponse::default()
        .with_error_code(error.code)
        .with_error_message(
            error
                .message
                .as_deref()
                .map(|m| StrBytes::from_string(m.to_string())),
        )
}

/// One ACL creation's result: success or `error`.
pub fn acl_creation_result(error: Option<&ApiError>) -> AclCreationResult {
    match error {
        // Kafka's AclApis sets nothing on a success, so it carries the generated default
        // message, "" (not null: found by the differential fuzz, #36).
        None => AclCreationResult::default().with_error_message(Some(StrBytes::default())),
        Some(e) => AclCreationResult::default()
            .with_error_code(e.code)
            .with_error_message(
                e.message
                    .as_deref()
                    .map(|m| StrBytes::from_string(m.to_string())),
            ),
    }
}

/// Refused before anything is looked up: every topic of the request gets `error` (Kafka's
/// `DeleteTopicsRequest.getErrorResponse`, no message).
pub fn delete_topics_error(
    req: &DeleteTopicsRequest,
    version: i16,
    error: &ApiError,
) -> DeleteTopicsResponse {
    let code_only = ApiError::code(error.code);
    let results = if version >= 6 {
        req.topics
            .iter()
            .map(|t| {
                deletable_topic_result(
                    t.name.as_ref().map(|n| n.0.as_str()),
                    t.topic_id,
                    &code_only,
                )
            })
            .collect()
    } else {
        req.topic_names
            .iter()
            .map(|n| deletable_topic_result(Some(n.0.as_str()), Uuid::nil(), &code_only))
            .collect()
    };
    DeleteTopicsResponse::default().with_responses(results)
}

/// One topic's DeleteTopics result.
pub fn deletable_topic_result(
    name: Option<&str>,
    id: Uuid,
    error: &ApiError,
) -> DeletableTopicResult {
    DeletableTopicResult::default()
        .with_name(name.map(|n| TopicName(StrBytes::from_string(n.to_string()))))
        .with_topic_id(id)
        .with_error_code(error.code)
        .with_error_message(error.message.clone().map(StrBytes::from_string))
}

/// Every resource refused with `error` (Kafka's `DescribeConfigsRequest.getErrorResponse`).
pub fn describe_configs_error(
    req: &DescribeConfigsRequest,
    error: &ApiError,
) -> DescribeConfigsResponse {
    DescribeConfigsResponse::default().with_results(
        req.resources
            .iter()
            .map(|r| {
                DescribeConfigsResult::default()
                    .with_resource_type(r.resource_type)
                    .with_resource_name(r.resource_name.clone())
                    .with_error_code(error.code)
                    .with_error_message(error.message.clone().map(StrBytes::from_string))
            })
            .collect(),
    )
}

/// Every resource of the request refused with `error` (Kafka's `getErrorResponse`).
pub fn incremental_alter_configs_error(
    req: &IncrementalAlterConfigsRequest,
    error: &ApiError,
) -> IncrementalAlterConfigsResponse {
    IncrementalAlterConfigsResponse::default().with_responses(
        req.resources
            .iter()
            .map(|r| {
                resource_result!(
                    AlterConfigsResourceResponse,
                    r.resource_type,
                    r.resource_name.clone(),
                    error
                )
            })
            .collect(),
    )
}

/// Every resource of the legacy request refused with `error`.
pub fn legacy_alter_configs_error(
    req: &AlterConfigsRequest,
    error: &ApiError,
) -> AlterConfigsResponse {
    AlterConfigsResponse::default().with_responses(
        req.resources
            .iter()
            .map(|r| {
                resource_result!(
                    LegacyResult,
                    r.resource_type,
                    r.resource_name.clone(),
                    error
                )
            })
            .collect(),
    )
}

/// The generic error answers (Kafka's `getErrorResponse` of each request).
pub fn create_delegation_token_error(version: i16, code: i16) -> CreateDelegationTokenResponse {
    create_token_refusal(
        version,
        code,
        &Principal::anonymous(),
        &Principal::anonymous(),
    )
}

/// RenewDelegationToken's error answer.
pub fn renew_delegation_token_error(code: i16) -> RenewDelegationTokenResponse {
    RenewDelegationTokenResponse::default().with_error_code(code)
}

/// ExpireDelegationToken's error answer.
pub fn expire_delegation_token_error(code: i16) -> ExpireDelegationTokenResponse {
    ExpireDelegationTokenResponse::default().with_error_code(code)
}

/// Kafka's `CreateDelegationTokenResponse.prepareResponse` for a refusal: timestamps -1, no id,
/// an empty HMAC; the requester only from v3.
pub fn create_token_refusal(
    version: i16,
    error_code: i16,
    owner: &Principal,
    requester: &Principal,
) -> CreateDelegationTokenResponse {
    let mut r = CreateDelegationTokenResponse::default()
        .with_error_code(error_code)
        .with_principal_type(StrBytes::from_string(owner.principal_type.clone()))
        .with_principal_name(StrBytes::from_string(owner.name.clone()))
        .with_issue_timestamp_ms(-1)
        .with_expiry_timestamp_ms(-1)
        .with_max_timestamp_ms(-1)
        .with_token_id(StrBytes::from_static_str(""));
    if version > 2 {
        r = r
            .with_token_requester_principal_type(StrBytes::from_string(
                requester.principal_type.clone(),
            ))
            .with_token_requester_principal_name(StrBytes::from_string(requester.name.clone()));
    }
    r
}

/// The refusal of a whole UpdateFeatures request (Kafka's `getErrorResponse`): the top-level
/// error, no results.
pub fn update_features_error(error: &ApiError) -> UpdateFeaturesResponse {
    UpdateFeaturesResponse::default()
        .with_error_code(error.code)
        .with_error_message(error.message.clone().map(StrBytes::from_string))
}

/// The answer to `req` carrying `error` for every user it names, sorted as Java sorts
/// strings (Kafka's `getErrorResponse`).
pub fn alter_credentials_error(
    req: &AlterUserScramCredentialsRequest,
    error: &ApiError,
) -> AlterUserScramCredentialsResponse {
    let mut names: Vec<&StrBytes> = req
        .deletions
        .iter()
        .map(|d| &d.name)
        .chain(req.upsertions.iter().map(|u| &u.name))
        .collect();
    names.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
    names.dedup();
    let results = names
        .into_iter()
        .map(|name| {
            AlterUserScramCredentialsResult::default()
                .with_user(name.clone())
                .with_error_code(error.code)
                .with_error_message(error.message.clone().map(StrBytes::from_string))
        })
        .collect();
    AlterUserScramCredentialsResponse::default().with_results(results)
}

/// Every topic of the request refused with `error` (Kafka's
/// `CreatePartitionsRequest.getErrorResponse`).
pub fn create_partitions_error(
    req: &CreatePartitionsRequest,
    error: &ApiError,
) -> CreatePartitionsResponse {
    CreatePartitionsResponse::default().with_results(
        req.topics
            .iter()
            .map(|t| create_partitions_topic_result(t.name.0.as_str(), error))
            .collect(),
    )
}

/// One topic's CreatePartitions result.
pub fn create_partitions_topic_result(name: &str, error: &ApiError) -> CreatePartitionsTopicResult {
    CreatePartitionsTopicResult::default()
        .with_name(StrBytes::from_string(name.to_string()).into())
        .with_error_code(error.code)
        .with_error_message(error.message.clone().map(StrBytes::from_string))
}

/// The request refused with `error`, at the top and on every partition (Kafka's
/// `getErrorResponse`).
pub fn alter_partition_reassignments_error(
    req: &AlterPartitionReassignmentsRequest,
    error: &ApiError,
) -> AlterPartitionReassignmentsResponse {
    let message = || error.message.clone().map(StrBytes::from_string);
    AlterPartitionReassignmentsResponse::default()
        .with_error_code(error.code)
        .with_error_message(message())
        .with_responses(
            req.topics
                .iter()
                .map(|t| {
                    ReassignableTopicResponse::default()
                        .with_name(t.name.clone())
                        .with_partitions(
                            t.partitions
                                .iter()
                                .map(|p| {
                                    ReassignablePartitionResponse::default()
                                        .with_partition_index(p.partition_index)
                                        .with_error_code(error.code)
                                        .with_error_message(message())
                                })
                                .collect(),
                        )
                })
                .collect(),
        )
}
