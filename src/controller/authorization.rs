//! What each request must be allowed before the controller serves it (Kafka's `ControllerApis`
//! checks through its `AuthHelper`), decided by the StandardAuthorizer over the committed
//! image's ACLs (`metadata::authorizer`).
//!
//! ```text
//!   request ─▶ authorizer configured? no ─▶ served (Kafka: every check passes)
//!     ├─ inside an Envelope: the forwarding broker needs CLUSTER_ACTION ─▶ Envelope error
//!     ├─ a cluster-level API (table below) ─▶ CLUSTER_AUTHORIZATION_FAILED in the API's shape
//!     ├─ CreateTopics: CREATE on the cluster, else per topic ─▶ refused topics cut from the
//!     │     request, answered TOPIC_AUTHORIZATION_FAILED "Authorization failed."; created topics
//!     │     without DESCRIBE_CONFIGS answered without their configs
//!     └─ DeleteTopics, CreatePartitions, (Incremental)AlterConfigs, DescribeConfigs: each
//!           resource checked by its manager through a [`ResourceAccess`] where Kafka's
//!           ControllerApis checks it, the refused ones answered with their error beside the
//!           others, which go on
//! ```

pub use crate::common::errors::{
    CLUSTER_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED,
};
use kafka_protocol::messages::create_topics_response::CreatableTopicResult;
use kafka_protocol::messages::{
    ApiKey, CreateTopicsRequest, CreateTopicsResponse, EnvelopeResponse,
};
use kafka_protocol::protocol::StrBytes;
use std::collections::BTreeMap;
use uuid::Uuid;

use super::errors::{self, ApiError};
use crate::codec::ResponseBody;
use crate::metadata::acl::{AclOperation, ResourceType, CLUSTER_NAME};
use crate::metadata::authorizer::{self, Action, AuthorizerConfig, Requester};
use crate::metadata::image::resource;
use crate::metadata::image::MetadataImage;
use crate::metadata::records::AccessControlEntryRecord;
use crate::raft::InboundRequest;

/// The metadata topic, never creatable (left to CreateTopics' own refusal).
const METADATA_TOPIC: &str = "__cluster_metadata";

/// The cluster-level operation Kafka's ControllerApis demands before serving `api`; `None`
/// for the APIs checked per resource (or not at all: ApiVersions, SASL). From the API table.
pub fn cluster_operation(api: ApiKey) -> Option<AclOperation> {
    crate::codec::apis::api(api).and_then(|a| a.cluster_operation)
}

/// One authorization against the committed ACLs; a denial is logged as Kafka's audit logger
/// logs it (INFO) when `log_denied`.
pub struct Checker<'a> {
    cfg: &'a AuthorizerConfig,
    committed: &'a MetadataImage,
    who: Requester<'a>,
    api: ApiKey,
}

impl<'a> Checker<'a> {
    /// Checks for `request`'s sender, `None` without an authorizer or for the node's own
    /// request.
    pub fn new(
        cfg: Option<&'a AuthorizerConfig>,
        committed: &'a MetadataImage,
        request: &'a InboundRequest,
    ) -> Option<Self> {
        let sender = request.sender.as_ref()?;
        Some(Self {
            cfg: cfg?,
            committed,
            who: Requester {
                principal: &sender.principal,
                host: &sender.host,
            },
            api: request.body.api_key(),
        })
    }

    /// Whether the sender may do `operation` on the resource.
    pub fn allowed(
        &self,
        operation: AclOperation,
        resource_type: ResourceType,
        resource_name: &str,
        log_denied: bool,
    ) -> bool {
        self.allowed_for(
            self.who,
            operation,
            resource_type,
            resource_name,
            log_denied,
        )
    }

    fn allowed_for(
        &self,
        who: Requester<'_>,
        operation: AclOperation,
        resource_type: ResourceType,
        resource_name: &str,
        log_denied: bool,
    ) -> bool {
        let action = Action {
            operation,
            resource_type,
            resource_name,
        };
        authorize_logged(
            self.cfg,
            &self.committed.acls,
            who,
            self.api,
            action,
            log_denied,
        )
    }
}

/// What the sender of a per-resource request may do, for the managers to check each resource
/// where Kafka's ControllerApis does: everything without an authorizer (or for the node's own
/// request).
#[derive(Clone, Copy)]
pub struct ResourceAccess<'a> {
    checker: Option<&'a Checker<'a>>,
}

impl<'a> ResourceAccess<'a> {
    /// Decided by `checker`; unchecked when it is `None`.
    pub fn new(checker: Option<&'a Checker<'a>>) -> Self {
        Self { checker }
    }

    /// Every action allowed (no authorizer).
    pub fn unchecked() -> Self {
        Self { checker: None }
    }

    /// Whether the sender may do `operation` on the resource (a denial logged as Kafka's
    /// audit logger logs it when `log_denied`).
    pub fn allowed(
        &self,
        operation: AclOperation,
        resource_type: ResourceType,
        resource_name: &str,
        log_denied: bool,
    ) -> bool {
        self.checker
            .is_none_or(|c| c.allowed(operation, resource_type, resource_name, log_denied))
    }

    /// Kafka's `authorizeAlterResource` / ConfigHelper check of a config resource with
    /// `operation` (ALTER_CONFIGS or DESCRIBE_CONFIGS): `None` when allowed, else the error
    /// (the authorization failure of the resource's kind, Kafka's default message); a type
    /// with no check is `Unexpected resource type`.
    pub fn config_resource(
        &self,
        operation: AclOperation,
        resource_type: i8,
        resource_name: &str,
    ) -> Option<ApiError> {
        // Altering a BROKER_LOGGER is the node's own business (IncrementalAlterConfigs answers
        // it before this check; the legacy API cannot): Kafka's authorizeAlterResource has no
        // case for it.
        let checked = if operation == AclOperation::AlterConfigs
            && resource_type == resource::BROKER_LOGGER
        {
            None
        } else {
            config_resource_check(resource_type, resource_name)
        };
        let Some((ty, name, code)) = checked else {
            return Some(ApiError::new(
                errors::INVALID_REQUEST,
                format!(
                    "Unexpected resource type {}.",
                    crate::metadata::image::config_resource_type_name(resource_type)
                ),
            ));
        };
        if self.allowed(operation, ty, &name, true) {
            return None;
        }
        Some(ApiError::new(
            code,
            crate::raft::errors::default_message(code),
        ))
    }
}

/// What a mutating request's sender may do (Kafka's ControllerRequestContext quota recorder
/// and ControllerApis' per-resource filters): its controller mutation quota and its access.
pub struct Allowance<'a> {
    /// The partitions it may still create or delete.
    pub quota: &'a mut dyn super::mutation_quotas::PartitionChangeQuota,
    /// The resources it may touch.
    pub access: ResourceAccess<'a>,
}

/// The authorizer's decision on `action` for `who`'s `api` request; a denial is logged as
/// Kafka's audit logger logs it (INFO) when `log_denied`.
pub fn authorize_logged(
    cfg: &AuthorizerConfig,
    acls: &BTreeMap<Uuid, AccessControlEntryRecord>,
    who: Requester<'_>,
    api: ApiKey,
    action: Action<'_>,
    log_denied: bool,
) -> bool {
    let decision = authorizer::authorize(cfg, acls, who, action);
    if !decision.allowed && log_denied {
        tracing::info!(
            "{}",
            authorizer::audit_message(who, action, &format!("{api:?}"), &decision)
        );
    }
    decision.allowed
}

/// The answer refusing `request` before it is served, if it must be refused (Kafka's
/// `authorizeClusterOperation` and the per-resource checks this layer makes whole).
pub fn refusal(checker: Option<&Checker<'_>>, request: &InboundRequest) -> Option<ResponseBody> {
    let checker = checker?;
    if let Some(broker) = &request.forwarded_by {
        let who = Requester {
            principal: &broker.principal,
            host: &broker.host,
        };
        if !checker.allowed_for(
            who,
            AclOperation::ClusterAction,
            ResourceType::Cluster,
            CLUSTER_NAME,
            true,
        ) {
            return Some(ResponseBody::Envelope(
                EnvelopeResponse::default().with_error_code(CLUSTER_AUTHORIZATION_FAILED),
            ));
        }
    }
    let api = request.body.api_key();
    if let Some(op) = cluster_operation(api) {
        if checker.allowed(op, ResourceType::Cluster, CLUSTER_NAME, true) {
            return None;
        }
        let error = cluster_refusal(checker.who, &request.listener_name, api, op);
        return Some(refused_body(request, &error));
    }
    None
}

/// Kafka's `authorizeClusterOperation` refusal, "Request <request> needs <OPERATION>
/// permission.", the request described by what Kafka's `Request.toString` shows of it that
/// this layer knows (no processor or connection id).
pub fn cluster_refusal(
    who: Requester<'_>,
    listener_name: &str,
    api: ApiKey,
    operation: AclOperation,
) -> ApiError {
    ApiError::new(
        CLUSTER_AUTHORIZATION_FAILED,
        format!(
            "Request Request(api={api:?}, session=Session({},/{}), listenerName=ListenerName({listener_name})) needs {operation} permission.",
            who.principal, who.host
        ),
    )
}

fn refused_body(request: &InboundRequest, error: &ApiError) -> ResponseBody {
    crate::codec::error_response::error_response(&request.body, request.api_version, error)
}

/// A config resource's check: the operation on the ACL resource Kafka maps it to, and the
/// error of a refusal.
fn config_resource_check(resource_type: i8, name: &str) -> Option<(ResourceType, String, i16)> {
    match resource_type {
        resource::TOPIC => Some((
            ResourceType::Topic,
            name.to_string(),
            TOPIC_AUTHORIZATION_FAILED,
        )),
        resource::GROUP => Some((
            ResourceType::Group,
            name.to_string(),
            GROUP_AUTHORIZATION_FAILED,
        )),
        resource::BROKER | resource::BROKER_LOGGER | resource::CLIENT_METRICS => Some((
            ResourceType::Cluster,
            CLUSTER_NAME.to_string(),
            CLUSTER_AUTHORIZATION_FAILED,
        )),
        _ => None,
    }
}

/// CreateTopics' per-topic checks (ControllerApis.createTopics): without CREATE on the
/// cluster, the topics the sender may not create leave the request; `None` when every topic
/// stays. Returns the request to serve and the names refused.
pub fn create_topics_access(
    checker: &Checker<'_>,
    req: &CreateTopicsRequest,
) -> (Option<CreateTopicsRequest>, Vec<String>) {
    if checker.allowed(
        AclOperation::Create,
        ResourceType::Cluster,
        CLUSTER_NAME,
        false,
    ) {
        return (None, Vec::new());
    }
    let count = |name: &str| {
        req.topics
            .iter()
            .filter(|t| t.name.as_str() == name)
            .count()
    };
    let refused: Vec<String> = req
        .topics
        .iter()
        .map(|t| t.name.to_string())
        .filter(|n| n != METADATA_TOPIC && count(n) == 1)
        .filter(|n| !checker.allowed(AclOperation::Create, ResourceType::Topic, n, true))
        .collect();
    if refused.is_empty() {
        return (None, refused);
    }
    let mut kept = req.clone();
    kept.topics
        .retain(|t| !refused.iter().any(|n| n == t.name.as_str()));
    (Some(kept), refused)
}

/// The answer's last touches: refused topics appended, configs withheld from topics the
/// sender may not DESCRIBE_CONFIGS (Kafka leaves their counts at -1 then).
pub fn finish_create_topics(
    checker: &Checker<'_>,
    mut response: CreateTopicsResponse,
    refused: &[String],
) -> CreateTopicsResponse {
    for t in &mut response.topics {
        if t.error_code != errors::NONE
            || checker.allowed(
                AclOperation::DescribeConfigs,
                ResourceType::Topic,
                &t.name,
                false,
            )
        {
            continue;
        }
        // Kafka leaves the list empty (not null) and the counts at their -1 defaults.
        t.configs = Some(Vec::new());
        t.num_partitions = -1;
        t.replication_factor = -1;
        t.topic_config_error_code = TOPIC_AUTHORIZATION_FAILED;
    }
    for name in refused {
        response.topics.push(
            CreatableTopicResult::default()
                .with_name(kafka_protocol::messages::TopicName(StrBytes::from_string(
                    name.clone(),
                )))
                .with_error_code(TOPIC_AUTHORIZATION_FAILED)
                .with_error_message(Some(StrBytes::from_static_str("Authorization failed."))),
        );
    }
    response
}
