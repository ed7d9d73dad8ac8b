//! ControllerApis: the controller's entry point for every request the API table gives it
//! (`codec::apis`, owner Controller), as Kafka's `ControllerApis` + `QuorumController` serve
//! them.
//!
//! ```text
//!   request ─▶ one Checker (authorizer over the committed ACLs)
//!        ─▶ refused? the cluster operation of the API table, the envelope's forwarder,
//!           token requests ─▶ the API's error answer, now
//!        ─▶ Read (API table) or a shortcut Kafka answers without an event ─▶ answered now
//!           from the committed image, on any controller
//!        ─▶ not the active controller ─▶ NOT_CONTROLLER (with the leader's id)
//!        ─▶ one short function per API below: its manager over the speculative image
//!           returns a ControllerResult ─▶ `write.rs` (append, replay, park until commit)
//! ```

use std::collections::VecDeque;

use kafka_protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;
use kafka_protocol::messages::*;

use super::active::ActiveController;
use super::authorization::{self, Allowance, Checker, ResourceAccess};
use super::config::ControllerConfig;
use super::errors::{self, ApiError};
use super::io::{ControllerOutput, MetadataAppender};
use super::mutation_quotas::{MutationQuotas, RequestQuota};
use super::{acls, client_quotas, cluster, configs, delegation_tokens};
use super::{features, not_controller, producer_ids, replication, scram};
use super::{Leadership, QuorumController};
use crate::codec::apis::{self as api_table, Kind};
use crate::codec::error_response::{error_response, update_features_error};
use crate::codec::{RequestBody, ResponseBody};
use crate::common::acl::{AclOperation, ResourceType};
use crate::metadata::image::MetadataImage;
use crate::raft::{InboundRequest, Rng};

impl QuorumController {
    /// The answer refusing `request` because its sender may not make it (Kafka's
    /// ControllerApis checks, over the committed ACLs); `None` when it may go on. The node
    /// asks this of the Raft APIs; the controller's own go through [`Self::handle_request`].
    pub fn authorization_refusal(&self, request: &InboundRequest) -> Option<ResponseBody> {
        let checker = Checker::new(self.cfg.authorizer.as_ref(), &self.committed, request);
        authorization::refusal(checker.as_ref(), request)
    }

    /// A request for the controller (owner Controller in the API table); its answer comes out
    /// of [`Self::poll_output`], at once when refused or read, after commit when it wrote
    /// records.
    pub fn handle_request(
        &mut self,
        now_ms: u64,
        appender: &mut dyn MetadataAppender,
        request: InboundRequest,
    ) {
        let request_id = request.request_id;
        // The one authorization of this request.
        let checker = Checker::new(self.cfg.authorizer.as_ref(), &self.committed, &request);
        let refused = authorization::refusal(checker.as_ref(), &request)
            .or_else(|| token_refusal(checker.as_ref(), &request));
        if let Some(body) = refused {
            self.outputs
                .push_back(ControllerOutput::Respond { request_id, body });
            return;
        }
        let mut broker_loggers = Vec::new();
        let mut now = AnswerNow {
            cfg: &self.cfg,
            committed: &self.committed,
            log_levels: &mut self.log_levels,
            outputs: &mut self.outputs,
        };
        if let Some(body) = now.answer(&request, checker.as_ref(), &mut broker_loggers) {
            self.outputs
                .push_back(ControllerOutput::Respond { request_id, body });
            return;
        }
        let Leadership::Active(a) = &mut self.leadership else {
            let leader = match self.leadership {
                Leadership::Standby { leader_id } => leader_id,
                _ => None,
            };
            let body = error_response(&request.body, request.api_version, &not_controller(leader));
            self.outputs
                .push_back(ControllerOutput::Respond { request_id, body });
            return;
        };
        let mut cx = Cx {
            now_ms,
            cfg: &self.cfg,
            committed: &self.committed,
            checker: checker.as_ref(),
            broker_loggers: &broker_loggers,
            rng: &mut self.rng,
            quotas: &mut self.mutation_quotas,
            appender,
            request: &request,
            outputs: &mut self.outputs,
        };
        a.serve(&mut cx);
        // A reply that waits on nothing uncommitted goes out now, not at the next commit
        // (Kafka completes a write event without records at once when nothing is pending).
        a.release_committed(self.high_watermark, &mut self.outputs);
        // Every controller request is one of Kafka's write events, after which it schedules
        // the balancing.
        a.maybe_schedule_balance(now_ms, &self.cfg);
        a.maybe_schedule_unclean(now_ms, &self.cfg);

        self.after_write(appender);
    }
}

/// What the answers given without a write event are made from.
struct AnswerNow<'a> {
    cfg: &'a ControllerConfig,
    committed: &'a MetadataImage,
    log_levels: &'a mut crate::logging::LogLevels,
    outputs: &'a mut VecDeque<ControllerOutput>,
}

impl AnswerNow<'_> {
    /// The answers given without a write event, on any controller: the reads (Kind Read in
    /// the API table) from the committed image, and what Kafka answers before its event
    /// (empty lists, a disabled authorizer, the node's own BROKER_LOGGER changes). `None`:
    /// the request is a write for the active controller; `broker_loggers` then holds an
    /// IncrementalAlterConfigs' BROKER_LOGGER answers, which go last in its answer.
    fn answer(
        &mut self,
        request: &InboundRequest,
        checker: Option<&Checker<'_>>,
        broker_loggers: &mut Vec<AlterConfigsResourceResponse>,
    ) -> Option<ResponseBody> {
        let version = request.api_version;
        if self.cfg.authorizer.is_none() {
            if let Some(body) = acls::security_disabled(&request.body) {
                return Some(body);
            }
        }
        let alter_ctx = configs::AlterContext {
            node_id: self.cfg.node_id,
            forwarded: request.forwarded,
            release: self.cfg.release,
        };
        let access = ResourceAccess::new(checker);
        Some(match &request.body {
            // A Kafka controller advertises these but has no handler: its ControllerApis
            // throws "Unsupported ApiKey", answered UNKNOWN_SERVER_ERROR (brokers serve them).
            RequestBody::DescribeDelegationToken(_)
            | RequestBody::DescribeUserScramCredentials(_) => {
                let error = ApiError::code(errors::UNKNOWN_SERVER_ERROR);
                error_response(&request.body, version, &error)
            }
            // Kafka's authorizer answers from the ACLs it has loaded (the committed image).
            RequestBody::DescribeAcls(req) => {
                ResponseBody::DescribeAcls(acls::describe_acls(self.committed, req))
            }
            // Kafka's ConfigHelper answers from the controller's metadata cache.
            RequestBody::DescribeConfigs(req) => {
                let ctx = configs::describe::DescribeContext {
                    node_id: self.cfg.node_id,
                    static_min_insync_replicas: self.cfg.min_insync_replicas,
                    static_properties: self.cfg.static_properties.map(),
                    log_levels: self.log_levels,
                    release: self.cfg.release,
                };
                ResponseBody::DescribeConfigs(configs::describe::describe_configs(
                    self.committed,
                    ctx,
                    req,
                    access,
                ))
            }
            // A read at the committed offset (Kafka's read event).
            RequestBody::ListPartitionReassignments(req) => {
                ResponseBody::ListPartitionReassignments(replication::list_partition_reassignments(
                    self.committed,
                    req,
                ))
            }
            RequestBody::IncrementalAlterConfigs(req) => {
                // Kafka's ControllerApis applies BROKER_LOGGER resources on the node that got
                // the request, before (and whatever) the controller answers for the rest.
                let (answers, changes) = configs::broker_logger::incremental_alter(
                    self.log_levels,
                    self.cfg.node_id,
                    req,
                );
                if !changes.is_empty() {
                    self.outputs.push_back(ControllerOutput::SetLogLevels {
                        levels: self.log_levels.clone(),
                        changes,
                    });
                }
                if configs::incremental_needs_controller(req, access) {
                    *broker_loggers = answers;
                    return None;
                }
                let result = configs::incremental_alter_configs(
                    self.committed,
                    alter_ctx,
                    req,
                    &answers,
                    access,
                );
                ResponseBody::IncrementalAlterConfigs(result.response)
            }
            RequestBody::AlterConfigs(req) if !configs::legacy_needs_controller(req, access) => {
                let result = configs::legacy_alter_configs(self.committed, alter_ctx, req, access);
                ResponseBody::AlterConfigs(result.response)
            }
            // Kafka answers an empty list at once, without an event, active or not.
            RequestBody::AlterPartitionReassignments(req) if req.topics.is_empty() => {
                ResponseBody::AlterPartitionReassignments(Default::default())
            }
            RequestBody::AlterClientQuotas(req) if req.entries.is_empty() => {
                ResponseBody::AlterClientQuotas(Default::default())
            }
            // An empty (not null) list.
            RequestBody::ElectLeaders(req)
                if req.topic_partitions.as_ref().is_some_and(Vec::is_empty) =>
            {
                ResponseBody::ElectLeaders(Default::default())
            }
            _ => {
                debug_assert!(
                    api_table::api(request.body.api_key()).is_none_or(|a| a.kind != Kind::Read),
                    "a read without an answer: {:?}",
                    request.body.api_key()
                );
                return None;
            }
        })
    }
}

/// The answer ControllerApis gives a delegation-token request before the controller sees it
/// (not allowed on this connection; CREATE_TOKENS missing for another owner).
fn token_refusal(checker: Option<&Checker<'_>>, request: &InboundRequest) -> Option<ResponseBody> {
    let may_create_for = |owner: &str| {
        checker
            .is_none_or(|c| c.allowed(AclOperation::CreateTokens, ResourceType::User, owner, true))
    };
    delegation_tokens::refusal(
        &request.body,
        request.api_version,
        request.sender.as_ref(),
        request.forwarded,
        &may_create_for,
    )
}

/// What a write is served with: the time, the settings, the committed image (Kafka resolves
/// some names at the last committed offset), the request and its one authorization, and
/// where its records and answer go.
pub(super) struct Cx<'a> {
    now_ms: u64,
    cfg: &'a ControllerConfig,
    committed: &'a MetadataImage,
    checker: Option<&'a Checker<'a>>,
    /// The answers to an IncrementalAlterConfigs' BROKER_LOGGER resources (applied already).
    broker_loggers: &'a [AlterConfigsResourceResponse],
    rng: &'a mut Rng,
    quotas: &'a mut MutationQuotas,
    appender: &'a mut dyn MetadataAppender,
    request: &'a InboundRequest,
    outputs: &'a mut VecDeque<ControllerOutput>,
}

impl Cx<'_> {
    fn version(&self) -> i16 {
        self.request.api_version
    }

    fn access(&self) -> ResourceAccess<'_> {
        ResourceAccess::new(self.checker)
    }

    fn alter_ctx(&self) -> configs::AlterContext {
        configs::AlterContext {
            node_id: self.cfg.node_id,
            forwarded: self.request.forwarded,
            release: self.cfg.release,
        }
    }

    /// What a token request is served with: the settings, its sender, the wall-clock time.
    fn token_context(&self) -> delegation_tokens::TokenContext<'_> {
        delegation_tokens::TokenContext {
            cfg: self.cfg.delegation_tokens.as_ref(),
            // The node's own requests are never token requests; refused before this otherwise.
            requester: self
                .request
                .sender
                .as_ref()
                .map_or("User:ANONYMOUS", |s| s.principal.as_str()),
            now_ms: i64::try_from(self.now_ms).unwrap_or(i64::MAX),
        }
    }

    /// Answers now with the request's error answer carrying `error`.
    fn refuse(&mut self, error: &ApiError) {
        self.outputs.push_back(ControllerOutput::Respond {
            request_id: self.request.request_id,
            body: error_response(&self.request.body, self.request.api_version, error),
        });
    }
}

/// Writes a manager's `result` and parks its answer as `ResponseBody::$variant`; the last
/// offset written, if any.
macro_rules! write {
    ($a:expr, $cx:expr, $result:expr, $variant:ident) => {
        $a.complete(
            $cx.appender,
            $cx.request,
            $result,
            ResponseBody::$variant,
            $cx.outputs,
        )
    };
}

impl ActiveController {
    /// Serves one write on the active controller: one function per API.
    pub(super) fn serve(&mut self, cx: &mut Cx<'_>) {
        let request = cx.request;
        match &request.body {
            RequestBody::BrokerRegistration(req) => self.broker_registration(cx, req),
            RequestBody::BrokerHeartbeat(req) => self.broker_heartbeat(cx, req),
            RequestBody::UnregisterBroker(req) => self.unregister_broker(cx, req),
            RequestBody::UnregisterController(req) => {
                let result = cluster::unregister_controller(&self.image, cx.cfg, req.controller_id);
                write!(self, cx, result, UnregisterController);
            }
            RequestBody::ControllerRegistration(req) => {
                let result = cluster::register_controller(&self.image, req);
                write!(self, cx, result, ControllerRegistration);
            }
            RequestBody::AllocateProducerIds(req) => {
                let result = producer_ids::allocate(&self.image, req);
                write!(self, cx, result, AllocateProducerIds);
            }
            RequestBody::CreateTopics(req) => self.create_topics(cx, req),
            RequestBody::DeleteTopics(req) => self.delete_topics(cx, req),
            RequestBody::CreatePartitions(req) => self.create_partitions(cx, req),
            RequestBody::UpdateFeatures(req) => self.update_features(cx, req),
            RequestBody::AlterPartitionReassignments(req) => {
                let result = replication::alter_partition_reassignments(
                    &self.image,
                    cx.cfg,
                    req,
                    cx.version(),
                );
                write!(self, cx, result, AlterPartitionReassignments);
            }
            RequestBody::IncrementalAlterConfigs(req) => {
                let result = configs::incremental_alter_configs(
                    &self.image,
                    cx.alter_ctx(),
                    req,
                    cx.broker_loggers,
                    cx.access(),
                );
                write!(self, cx, result, IncrementalAlterConfigs);
            }
            RequestBody::AlterConfigs(req) => {
                let result =
                    configs::legacy_alter_configs(&self.image, cx.alter_ctx(), req, cx.access());
                write!(self, cx, result, AlterConfigs);
            }
            RequestBody::AlterPartition(req) => {
                let result = replication::alter_partition(&self.image, cx.cfg, req, cx.version());
                write!(self, cx, result, AlterPartition);
            }
            RequestBody::ElectLeaders(req) => {
                match replication::elect_leaders(&self.image, cx.cfg, req) {
                    Ok(result) => {
                        write!(self, cx, result, ElectLeaders);
                    }
                    // Kafka's event fails: the error on every partition asked for, at once.
                    Err(e) => cx.refuse(&e),
                }
            }
            RequestBody::AssignReplicasToDirs(req) => {
                let result = replication::assign_replicas_to_dirs(&self.image, cx.cfg, req);
                write!(self, cx, result, AssignReplicasToDirs);
            }
            RequestBody::CreateAcls(req) => {
                let result = acls::create_acls(&self.image, cx.cfg.release, cx.rng, req);
                write!(self, cx, result, CreateAcls);
            }
            RequestBody::DeleteAcls(req) => {
                let result = acls::delete_acls(&self.image, req);
                write!(self, cx, result, DeleteAcls);
            }
            RequestBody::AlterClientQuotas(req) => {
                let result = client_quotas::alter_client_quotas(&self.image, req);
                write!(self, cx, result, AlterClientQuotas);
            }
            RequestBody::CreateDelegationToken(req) => {
                let token_id = crate::common::uuid::uuid_to_kafka_string(&cx.rng.uuid());
                let result = delegation_tokens::create(
                    &self.image,
                    cx.token_context(),
                    cx.version(),
                    req,
                    token_id,
                );
                write!(self, cx, result, CreateDelegationToken);
            }
            RequestBody::RenewDelegationToken(req) => {
                let result =
                    delegation_tokens::renew(&self.image, cx.committed, cx.token_context(), req);
                write!(self, cx, result, RenewDelegationToken);
            }
            RequestBody::ExpireDelegationToken(req) => {
                let result =
                    delegation_tokens::expire(&self.image, cx.committed, cx.token_context(), req);
                write!(self, cx, result, ExpireDelegationToken);
            }
            RequestBody::AlterUserScramCredentials(req) => {
                let result = scram::alter_credentials(&self.image, req);
                write!(self, cx, result, AlterUserScramCredentials);
            }
            other => cx.refuse(&ApiError::new(
                errors::UNSUPPORTED_VERSION,
                format!("{:?} is not served by the controller", other.api_key()),
            )),
        }
    }

    fn broker_registration(&mut self, cx: &mut Cx<'_>, req: &BrokerRegistrationRequest) {
        let next_offset = cx.appender.next_write_offset().unwrap_or(-1);
        let result = cluster::register_broker(
            &self.image,
            cx.cfg,
            &self.heartbeats,
            cx.now_ms,
            req,
            cx.version(),
            next_offset,
        );
        let registered = result.registered;
        let written = write!(self, cx, result.result, BrokerRegistration).is_some();
        if let (true, Some((broker_id, fenced))) = (written, registered) {
            self.heartbeats.register(broker_id, fenced);
        }
    }

    fn broker_heartbeat(&mut self, cx: &mut Cx<'_>, req: &BrokerHeartbeatRequest) {
        let broker_id = req.broker_id.0;
        self.heartbeats
            .track_contact(broker_id, req.broker_epoch, cx.now_ms);
        let outcome = replication::process_broker_heartbeat(
            &self.image,
            cx.cfg,
            &self.registration_offsets,
            &self.heartbeats,
            req,
        );
        match outcome {
            // A stale heartbeat still counts as contact (Kafka touches the broker before it
            // answers with the error only for timeouts).
            Err(e) => cx.refuse(&e),
            Ok(hb) => {
                let next = hb.next;
                self.heartbeats
                    .touch(broker_id, next.fenced(), req.current_metadata_offset);
                let offset = write!(self, cx, hb.result, BrokerHeartbeat);
                if next.in_controlled_shutdown() {
                    let end = offset.unwrap_or(self.last_write_offset);
                    self.heartbeats.enter_controlled_shutdown(broker_id, end);
                }
            }
        }
    }

    fn unregister_broker(&mut self, cx: &mut Cx<'_>, req: &UnregisterBrokerRequest) {
        let result = cluster::unregister_broker(&self.image, cx.cfg, req.broker_id.0);
        if write!(self, cx, result, UnregisterBroker).is_some() {
            self.heartbeats.remove(req.broker_id.0);
        }
    }

    fn create_topics(&mut self, cx: &mut Cx<'_>, req: &CreateTopicsRequest) {
        let (kept, refused) = match cx.checker {
            Some(c) => authorization::create_topics_access(c, req),
            None => (None, Vec::new()),
        };
        let mut quota = mutation_quota(cx.quotas, cx.committed, cx.request, 6, cx.now_ms);
        let brokers = self.usable_brokers();
        let mut result = replication::create_topics(
            &self.image,
            cx.cfg,
            &brokers,
            cx.rng,
            kept.as_ref().unwrap_or(req),
            &mut quota,
        );
        result.response.throttle_time_ms = quota.throttle_time_ms();
        if let Some(c) = cx.checker {
            result.response = authorization::finish_create_topics(c, result.response, &refused);
        }
        write!(self, cx, result, CreateTopics);
    }

    fn delete_topics(&mut self, cx: &mut Cx<'_>, req: &DeleteTopicsRequest) {
        let mut quota = mutation_quota(cx.quotas, cx.committed, cx.request, 5, cx.now_ms);
        let mut result = replication::delete_topics(
            cx.committed,
            &self.image,
            cx.cfg,
            cx.rng,
            Allowance {
                quota: &mut quota,
                access: ResourceAccess::new(cx.checker),
            },
            req,
            cx.request.api_version,
        );
        result.response.throttle_time_ms = quota.throttle_time_ms();
        write!(self, cx, result, DeleteTopics);
    }

    fn create_partitions(&mut self, cx: &mut Cx<'_>, req: &CreatePartitionsRequest) {
        let mut quota = mutation_quota(cx.quotas, cx.committed, cx.request, 3, cx.now_ms);
        let brokers = self.usable_brokers();
        let mut result = replication::create_partitions(
            &self.image,
            cx.cfg.release,
            &brokers,
            cx.rng,
            req,
            Allowance {
                quota: &mut quota,
                access: ResourceAccess::new(cx.checker),
            },
        );
        result.response.throttle_time_ms = quota.throttle_time_ms();
        write!(self, cx, result, CreatePartitions);
    }

    fn update_features(&mut self, cx: &mut Cx<'_>, req: &UpdateFeaturesRequest) {
        let update = features::update_features(
            &self.image,
            cx.cfg,
            cx.appender,
            self.epoch,
            req,
            cx.request.api_version,
        );
        match update {
            Ok(result) => {
                write!(self, cx, result, UpdateFeatures);
            }
            Err(error) => {
                // Kafka's handleEventException: the answer is the error alone, and the
                // controller renounces, resigning the Raft leadership.
                cx.outputs.push_back(ControllerOutput::Respond {
                    request_id: cx.request.request_id,
                    body: ResponseBody::UpdateFeatures(update_features_error(&error)),
                });
                self.lost_leadership = true;
                cx.appender.resign(self.epoch);
            }
        }
    }
}

/// The mutation quota of `request`, strict from `strict_since` (Kafka's ControllerApis:
/// CreateTopics 6, DeleteTopics 5, CreatePartitions 3).
fn mutation_quota<'q>(
    quotas: &'q mut MutationQuotas,
    committed: &MetadataImage,
    request: &InboundRequest,
    strict_since: i16,
    now_ms: u64,
) -> RequestQuota<'q> {
    let (principal, client_id) = request.sender.as_ref().map_or(("User:ANONYMOUS", ""), |s| {
        (s.principal.as_str(), s.client_id.as_str())
    });
    quotas.quota_for(
        committed,
        principal,
        client_id,
        request.api_version,
        strict_since,
        now_ms,
    )
}
