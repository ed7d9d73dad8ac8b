//! Answering requests: ApiVersions and DescribeCluster here, the Raft APIs (voter changes
//! included) through the raft thread. An Envelope's inner request takes the same path as a
//! direct one, and its answer is wrapped on the way out.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;

use kafka_protocol::messages::describe_cluster_response::DescribeClusterBroker;
use kafka_protocol::messages::{
    BrokerId, DescribeClusterRequest, DescribeClusterResponse, EnvelopeRequest, EnvelopeResponse,
    SaslAuthenticateResponse, SaslHandshakeResponse,
};
use kafka_protocol::protocol::StrBytes;
use tokio::sync::oneshot;

use super::driver::{Event, RaftHandle};
use super::not_ready::not_ready_response;
use crate::codec::api_versions::{
    api_versions_response, invalid_request_response, is_valid_request,
    unsupported_version_response, FinalizedFeature,
};
use crate::codec::envelope::{unwrap_envelope, wrap_response};
use crate::codec::error_counts::{error_counts, mutation_throttle_ms, ErrorCounts};
use crate::codec::request::InboundRequest as WireRequest;
use crate::codec::response::encode_response;
use crate::codec::versions::Release;
use crate::codec::{RequestBody, ResponseBody};
use crate::common::release::mv;
use crate::network::{Answered, PendingResponse, RequestContext, RequestHandler};
use crate::raft::errors;
use crate::raft::types::VoterSet;
use crate::raft::InboundRequest;
use crate::security::scram::{ScramCredential, ScramMechanism};
use crate::security::ILLEGAL_SASL_STATE;

/// Kafka's EndpointType ids.
const ENDPOINT_TYPE_CONTROLLER: i8 = 2;
const ENDPOINT_TYPE_BROKER: i8 = 1;

/// Serves requests for one node.
#[derive(Debug)]
pub struct Handler {
    node_id: i32,
    cluster_id: String,
    voters: VoterSet,
    raft: Option<RaftHandle>,
    release: Release,
    next_request_id: std::sync::atomic::AtomicU64,
    /// Warnings about peers' requests, rate-limited per address.
    warnings: crate::network::warn_limit::PeerWarnings,
}

impl Handler {
    /// A node whose Raft core runs behind `raft` (`None`: answers "not ready").
    pub fn new(
        node_id: i32,
        cluster_id: String,
        voters: VoterSet,
        raft: Option<RaftHandle>,
        release: Release,
    ) -> Self {
        Self {
            node_id,
            cluster_id,
            voters,
            raft,
            release,
            next_request_id: std::sync::atomic::AtomicU64::new(1),
            warnings: Default::default(),
        }
    }

    /// The node id.
    pub fn node_id(&self) -> i32 {
        self.node_id
    }

    /// The newest ApiVersions version the presented release serves.
    pub(crate) fn api_versions_max_version(&self) -> i16 {
        self.release
            .advertised()
            .iter()
            .find(|r| r.api_key == kafka_protocol::messages::ApiKey::ApiVersions)
            .map_or(0, |r| r.max_version)
    }

    /// Kafka's ControllerApis authorizes DescribeCluster with ALTER on the cluster before it
    /// looks at the request; the handler answers it, so it checks it here against the
    /// committed ACLs the raft thread publishes.
    fn describe_cluster_refusal(
        &self,
        ctx: &RequestContext,
    ) -> Option<crate::controller::errors::ApiError> {
        use crate::controller::authorization;
        use crate::metadata::acl::{AclOperation, ResourceType, CLUSTER_NAME};
        let raft = self.raft.as_ref()?;
        let cfg = raft.authorizer.as_deref()?;
        // A poisoned lock still holds the last ACLs published: refusing on them, never
        // serving unchecked.
        let acls = match raft.status.lock() {
            Ok(status) => status.acls.clone(),
            Err(poisoned) => poisoned.into_inner().acls.clone(),
        };
        let principal = ctx.principal.to_string();
        let host = crate::network::java_host_address(ctx.peer.ip());
        let who = crate::metadata::authorizer::Requester {
            principal: &principal,
            host: &host,
        };
        let action = crate::metadata::authorizer::Action {
            operation: AclOperation::Alter,
            resource_type: ResourceType::Cluster,
            resource_name: CLUSTER_NAME,
        };
        let api = kafka_protocol::messages::ApiKey::DescribeCluster;
        if authorization::authorize_logged(cfg, &acls, who, api, action, true) {
            return None;
        }
        Some(authorization::cluster_refusal(
            who,
            &ctx.listener_name,
            api,
            AclOperation::Alter,
        ))
    }

    fn describe_cluster(
        &self,
        ctx: &RequestContext,
        req: &DescribeClusterRequest,
        version: i16,
    ) -> DescribeClusterResponse {
        if let Some(refusal) = self.describe_cluster_refusal(ctx) {
            return DescribeClusterResponse::default()
                .with_error_code(refusal.code)
                .with_error_message(refusal.message.map(StrBytes::from_string));
        }
        let requested = if version >= 1 {
            req.endpoint_type
        } else {
            ENDPOINT_TYPE_BROKER
        };
        if requested != ENDPOINT_TYPE_CONTROLLER {
            let (code, message) = if requested != ENDPOINT_TYPE_BROKER {
                (
                    if version == 0 {
                        errors::INVALID_REQUEST
                    } else {
                        115
                    },
                    format!("Unsupported endpoint type {requested}"),
                )
            } else {
                (
                    if version == 0 { errors::INVALID_REQUEST } else { 114 },
                    "The request was sent to an endpoint of type CONTROLLER, but we wanted an endpoint of type BROKER".to_string(),
                )
            };
            return DescribeClusterResponse::default()
                .with_error_code(code)
                .with_error_message(Some(StrBytes::from_string(message)));
        }
        let status = self.raft.as_ref().map(|r| r.status());
        let brokers: Vec<DescribeClusterBroker> = match status
            .as_ref()
            .and_then(|s| s.metadata_version.map(|mv| (mv, &s.controllers)))
        {
            // Kafka answers from the controller registrations (KIP-919) and refuses below
            // metadata.version 3.7-IV0.
            Some((mv, _)) if mv < mv::CONTROLLER_REGISTRATION => {
                return DescribeClusterResponse::default()
                    .with_error_code(errors::UNSUPPORTED_VERSION)
                    .with_error_message(Some(StrBytes::from_static_str(
                        "Direct-to-controller communication is not supported with the current \
                         MetadataVersion.",
                    )));
            }
            Some((_, controllers)) => controllers
                .values()
                .filter_map(|r| {
                    let ep = r.endpoint(&ctx.listener_name)?;
                    Some(
                        DescribeClusterBroker::default()
                            .with_broker_id(BrokerId(r.controller_id))
                            .with_host(StrBytes::from_string(ep.host.clone()))
                            .with_port(i32::from(ep.port)),
                    )
                })
                .collect(),
            // Before the committed metadata says anything (a node that has not learned the
            // high watermark yet), ferrokraft answers from the voter set where Kafka refuses.
            None => {
                let current = status
                    .as_ref()
                    .map(|s| s.voters.clone())
                    .filter(|v| !v.is_empty());
                let voters = current.as_ref().unwrap_or(&self.voters);
                voters
                    .nodes()
                    .filter_map(|n| {
                        let ep = n.endpoints.get(&ctx.listener_name)?;
                        Some(
                            DescribeClusterBroker::default()
                                .with_broker_id(BrokerId(n.key.id))
                                .with_host(StrBytes::from_string(ep.host.clone()))
                                .with_port(i32::from(ep.port)),
                        )
                    })
                    .collect()
            }
        };
        let leader = status.and_then(|s| s.leader_id).unwrap_or(-1);
        let controller_id = if brokers.iter().any(|b| b.broker_id.0 == leader) {
            leader
        } else {
            -1
        };
        DescribeClusterResponse::default()
            .with_endpoint_type(ENDPOINT_TYPE_CONTROLLER)
            .with_cluster_id(StrBytes::from_string(self.cluster_id.clone()))
            .with_controller_id(BrokerId(controller_id))
            .with_brokers(brokers)
    }

    fn answer(&self, ctx: &RequestContext, request: WireRequest) -> Answer {
        match request {
            WireRequest::UnsupportedApiVersions { header } => Answer::Now(
                ResponseBody::ApiVersions(unsupported_version_response(self.release)),
                0,
                header.correlation_id,
            ),
            WireRequest::Request { header, body } => {
                let version = header.api_version;
                let corr = header.correlation_id;
                let response = match body {
                    RequestBody::ApiVersions(_) if version > self.api_versions_max_version() => {
                        // A version the release presented does not know, although the codec
                        // reads it: answered as Kafka answers an unknown version, at v0.
                        return Answer::Now(
                            ResponseBody::ApiVersions(unsupported_version_response(self.release)),
                            0,
                            corr,
                        );
                    }
                    RequestBody::ApiVersions(req) if !is_valid_request(&req, version) => {
                        tracing::debug!(
                            peer = %ctx.peer,
                            "invalid ApiVersions v{version} (client software name or version, \
                             or a cluster id without a node id)"
                        );
                        ResponseBody::ApiVersions(invalid_request_response())
                    }
                    RequestBody::ApiVersions(_) => {
                        // Finalized features as the committed metadata holds them (Kafka's
                        // controller answers from its published image).
                        let status = self.raft.as_ref().map(|r| r.status()).unwrap_or_default();
                        // kraft.version is the Raft layer's, as Kafka's ControllerServer sets
                        // it on the published features (left out at level 0, like any).
                        let mut finalized: Vec<FinalizedFeature> = status
                            .finalized_features
                            .iter()
                            .map(|(name, level)| FinalizedFeature {
                                name: name.clone(),
                                level: *level,
                            })
                            .collect();
                        finalized.push(FinalizedFeature {
                            name: crate::common::release::KRAFT_VERSION_FEATURE.to_string(),
                            level: status.kraft_version,
                        });
                        let epoch = if status.finalized_features.is_empty() {
                            -1
                        } else {
                            status.finalized_features_epoch
                        };
                        ResponseBody::ApiVersions(api_versions_response(
                            self.release,
                            version,
                            &finalized,
                            epoch,
                        ))
                    }
                    RequestBody::DescribeCluster(req) => {
                        ResponseBody::DescribeCluster(self.describe_cluster(ctx, &req, version))
                    }
                    RequestBody::Envelope(req) => {
                        return self.envelope(ctx, &req, &header.client_id, version, corr)
                    }
                    // What reaches the handler is on an authenticated connection or one that
                    // needs none: a handshake here is out of place (a SASL listener's
                    // re-authentication is the connection's, `network::connection`). Kafka's
                    // ControllerApis answers these two so.
                    RequestBody::SaslHandshake(_) => ResponseBody::SaslHandshake(
                        SaslHandshakeResponse::default().with_error_code(ILLEGAL_SASL_STATE),
                    ),
                    RequestBody::SaslAuthenticate(_) => ResponseBody::SaslAuthenticate(
                        SaslAuthenticateResponse::default()
                            .with_error_code(ILLEGAL_SASL_STATE)
                            .with_error_message(Some(StrBytes::from_static_str(
                                "SaslAuthenticate request received after successful authentication",
                            ))),
                    ),
                    raft_body => {
                        if let Err(reason) = crate::codec::request::parse_check(&raft_body) {
                            // Kafka's request parse fails on these, and its socket server
                            // closes the connection.
                            self.warnings.warn(
                                ctx.peer,
                                &ctx.listener_name,
                                &format_args!(
                                    "closing the connection: invalid {:?} request: {reason}",
                                    raft_body.api_key()
                                ),
                            );
                            return Answer::Close;
                        }
                        let Some(raft) = &self.raft else {
                            return match not_ready_response(&raft_body, version) {
                                Some(r) => Answer::Now(r, version, corr),
                                None => Answer::Close,
                            };
                        };
                        let request_id = self
                            .next_request_id
                            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let (tx, rx) = oneshot::channel();
                        let fallback = not_ready_response(&raft_body, version);
                        let event = Event::Request {
                            request: Box::new(InboundRequest {
                                request_id,
                                api_version: version,
                                listener_name: ctx.listener_name.clone(),
                                forwarded: ctx.forwarded,
                                sender: Some(ctx.sender(&header.client_id)),
                                forwarded_by: ctx.forwarded_by.clone(),
                                body: raft_body,
                            }),
                            reply: tx,
                            queued_at: queued_now(),
                        };
                        let heartbeat = matches!(
                            header.api_key,
                            kafka_protocol::messages::ApiKey::BrokerHeartbeat
                        );
                        if !raft.try_send(event) {
                            if heartbeat {
                                // Kafka counts a heartbeat that expired in its queue; here one
                                // refused by a full queue is the same lost heartbeat.
                                if let Ok(mut m) = raft.metrics.lock() {
                                    m.timed_out_heartbeats += 1;
                                }
                            }
                            return match fallback {
                                Some(r) => Answer::Now(r, version, corr),
                                None => Answer::Close,
                            };
                        }
                        return Answer::Later {
                            rx,
                            version,
                            correlation_id: corr,
                            fallback,
                        };
                    }
                };
                Answer::Now(response, version, corr)
            }
        }
    }
}

impl Handler {
    /// Unwraps an envelope and answers its inner request as if it had come directly, from the
    /// forwarded client's address on the same listener; a refused envelope is answered with
    /// its error code and logged (once per address and interval).
    fn envelope(
        &self,
        ctx: &RequestContext,
        req: &EnvelopeRequest,
        client_id: &str,
        version: i16,
        correlation_id: i32,
    ) -> Answer {
        let forwarded = match unwrap_envelope(req) {
            Ok(f) => f,
            Err(rejected) => {
                self.warnings.warn(
                    ctx.peer,
                    &ctx.listener_name,
                    &format_args!(
                        "rejecting envelope with error code {}: {}",
                        rejected.error_code, rejected.reason
                    ),
                );
                let body = EnvelopeResponse::default().with_error_code(rejected.error_code);
                return Answer::Now(ResponseBody::Envelope(body), version, correlation_id);
            }
        };
        tracing::debug!(
            peer = %ctx.peer,
            principal = %forwarded.principal,
            client = %forwarded.client_address,
            "serving forwarded {:?} v{}",
            forwarded.header.api_key,
            forwarded.header.api_version
        );
        // The client's principal and address are what the authorizer checks (the broker's,
        // kept beside them, must hold CLUSTER_ACTION); the address stands in for the peer (Kafka keeps no client port for forwarded requests either).
        let inner_ctx = RequestContext {
            listener_name: ctx.listener_name.clone(),
            peer: SocketAddr::new(forwarded.client_address, 0),
            forwarded: true,
            principal: forwarded.principal.clone(),
            forwarded_by: Some(ctx.sender(client_id)),
            security_protocol: ctx.security_protocol,
        };
        // No recursion beyond this level: Envelope is not forwardable, so an envelope inside
        // an envelope was refused by unwrap_envelope.
        let inner = self.answer(
            &inner_ctx,
            WireRequest::Request {
                header: forwarded.header,
                body: forwarded.body,
            },
        );
        Answer::Forwarded {
            inner: Box::new(inner),
            version,
            correlation_id,
        }
    }
}

/// How a request is answered.
enum Answer {
    /// Right away.
    Now(ResponseBody, i16, i32),
    /// By the raft thread.
    Later {
        rx: oneshot::Receiver<ResponseBody>,
        version: i16,
        correlation_id: i32,
        fallback: Option<ResponseBody>,
    },
    Close,
    /// As the envelope's inner request is answered, then wrapped into the envelope's response.
    Forwarded {
        inner: Box<Answer>,
        version: i16,
        correlation_id: i32,
    },
}

/// A response body with the version and correlation id to encode it at, and what the request
/// metrics count of it; `None` closes.
type Resolved = Option<(ResponseBody, i16, i32, Counted)>;

/// What Kafka's RequestMetrics count of one answer, besides its timing.
struct Counted {
    /// A forwarded request's inner API and version, which the metrics count it under.
    inner: Option<(kafka_protocol::messages::ApiKey, i16)>,
    errors: ErrorCounts,
    throttle_ms: i32,
}

impl Counted {
    /// An answer to a request that came on this connection.
    fn direct(body: &ResponseBody) -> Self {
        Self {
            inner: None,
            errors: error_counts(body),
            throttle_ms: mutation_throttle_ms(body),
        }
    }
}

/// Waits for an answer's body (the raft thread's, for Later); `peer` is for the log.
fn resolve(answer: Answer, peer: SocketAddr) -> Pin<Box<dyn Future<Output = Resolved> + Send>> {
    match answer {
        Answer::Now(body, version, corr) => Box::pin(async move {
            let counted = Counted::direct(&body);
            Some((body, version, corr, counted))
        }),
        Answer::Close => Box::pin(async { None }),
        Answer::Later {
            rx,
            version,
            correlation_id,
            fallback,
        } => Box::pin(async move {
            let body = match rx.await {
                Ok(body) => body,
                // The raft thread stopped (shutting down): answer as a node that is not ready.
                Err(_) => fallback?,
            };
            let counted = Counted::direct(&body);
            Some((body, version, correlation_id, counted))
        }),
        Answer::Forwarded {
            inner,
            version,
            correlation_id,
        } => Box::pin(async move {
            // An inner Close (no answer possible) closes the connection, as it would directly.
            let (body, inner_version, inner_corr, counted) = resolve(*inner, peer).await?;
            if let ResponseBody::Envelope(refused) = body {
                // The controller refused the envelope itself (its sender lacks
                // CLUSTER_ACTION): answered as an Envelope error, with no inner response.
                return Some((
                    ResponseBody::Envelope(refused),
                    version,
                    correlation_id,
                    counted,
                ));
            }
            // Counted under the inner API, as Kafka's forwarded request carries the inner
            // header; Kafka sets no throttle time on a forwarded request.
            let counted = Counted {
                inner: Some((body.api_key(), inner_version)),
                throttle_ms: 0,
                ..counted
            };
            match wrap_response(&body, inner_version, inner_corr) {
                Ok(envelope) => Some((
                    ResponseBody::Envelope(envelope),
                    version,
                    correlation_id,
                    counted,
                )),
                Err(e) => {
                    // Our own inner response failed to encode: a bug, logged; the connection
                    // closes as it would for a direct request.
                    tracing::error!(peer = %peer, "failed to encode forwarded response: {e}");
                    None
                }
            }
        }),
    }
}

fn encode(
    peer: &SocketAddr,
    body: &ResponseBody,
    version: i16,
    correlation_id: i32,
) -> Option<bytes::Bytes> {
    match encode_response(body, version, correlation_id) {
        Ok(bytes) => Some(bytes),
        Err(e) => {
            // Our own response failed to encode: a bug, logged; the connection closes.
            tracing::error!(peer = %peer, "failed to encode response: {e}");
            None
        }
    }
}

impl RequestHandler for Handler {
    fn scram_credential(&self, mechanism: ScramMechanism, user: &str) -> Option<ScramCredential> {
        // The committed image's credentials, as Kafka's controller authenticates from its
        // published image (ScramPublisher → CredentialProvider).
        let status = self.raft.as_ref()?.status.lock().ok()?;
        let r = status.scram.get(&(mechanism.type_id(), user.to_string()))?;
        Some(ScramCredential {
            salt: r.salt.clone(),
            stored_key: r.stored_key.clone(),
            server_key: r.server_key.clone(),
            iterations: r.iterations,
        })
    }

    fn token_credential(
        &self,
        mechanism: ScramMechanism,
        token_id: &str,
    ) -> Option<crate::security::scram::TokenCredential> {
        // Kafka's controller authenticates tokens from its published image (the
        // DelegationTokenPublisher fills its DelegationTokenCache).
        let raft = self.raft.as_ref()?;
        let cfg = raft.delegation_tokens.as_deref()?;
        let token = raft
            .status
            .lock()
            .ok()?
            .delegation_tokens
            .get(token_id)?
            .clone();
        use base64::Engine;
        let hmac = base64::engine::general_purpose::STANDARD.encode(cfg.hmac(&token.token_id));
        let owner = token
            .owner
            .split_once(':')
            .map_or(token.owner.as_str(), |(_, name)| name)
            .to_string();
        let lifetime_ms = token
            .expiration_timestamp
            .saturating_sub(crate::network::sasl::epoch_ms());
        Some(crate::security::scram::TokenCredential::new(
            mechanism,
            &token.token_id,
            &hmac,
            owner,
            lifetime_ms,
        ))
    }

    fn handle(&self, ctx: &RequestContext, request: WireRequest) -> PendingResponse {
        let peer = ctx.peer;
        let header = request.header();
        let (api_key, client_id) = (header.api_key, header.client_id.clone());
        let request_version = header.api_version;
        let follower_fetch = is_follower_fetch(&request);
        let answer = self.answer(ctx, request);
        Box::pin(async move {
            let (body, version, corr, counted) = resolve(answer, peer).await?;
            // Kafka's request logger (`kafka.request.logger`) at DEBUG: one line per answer.
            tracing::debug!(
                "Completed request: {api_key:?} v{version} (correlation id {corr}, client \
                 {client_id:?}) from {peer}"
            );
            let bytes = encode(&peer, &body, version, corr)?;
            let (api, version) = counted.inner.unwrap_or((api_key, request_version));
            Some(Answered {
                bytes,
                api,
                version,
                follower_fetch,
                errors: counted.errors,
                throttle_ms: counted.throttle_ms,
            })
        })
    }
}

/// Whether `request` is a Fetch from a replica (Kafka's `FetchRequest.isFromFollower`: a
/// replica id of 0 or more, in the replica state from version 15 on).
fn is_follower_fetch(request: &WireRequest) -> bool {
    let WireRequest::Request {
        header,
        body: RequestBody::Fetch(fetch),
    } = request
    else {
        return false;
    };
    let replica = if header.api_version >= 15 {
        fetch.replica_state.replica_id.0
    } else {
        fetch.replica_id.0
    };
    replica >= 0
}

#[allow(clippy::disallowed_methods)] // the queue time of a request is wall-clock by nature
fn queued_now() -> std::time::Instant {
    std::time::Instant::now()
}

#[cfg(test)]
#[path = "handler_tests.rs"]
mod tests;
