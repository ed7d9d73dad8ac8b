//! The controller listener: tokio accept loops and one task per connection.
//!
//! ```text
//!   TcpListener ─accept─▶ ConnectionQuotas::admit (per-IP refusal, or room made) ─▶ task
//!   connection task (SSL listener): TLS handshake within 10 s (`tls`), else warned + closed
//!   connection task (SASL listener): frames through the authenticator (`sasl`) until the
//!                    client authenticates; only ApiVersions reaches the handler before
//!   connection task: size prefix ─RequestMemory::reserve (large frames)─▶ body
//!                    ─decode_request (decode budget)─▶ RequestHandler ─▶ response bytes
//! ```
//!
//! Requests on one connection are read ahead (pipelined) and answered strictly in order, one at
//! a time, as Kafka's socket server does (it mutes a channel until its response is sent). What a
//! request means is the handler's business; this module only moves frames and enforces limits:
//! connections ([`quotas`]), request memory ([`memory`], and the codec's decode budget), idle
//! time, and warnings about bad peers rate-limited per address ([`warn_limit`]); what it sees
//! (connections, requests and their times, raft channel traffic) is counted in [`stats`].
pub mod adapt;
pub mod connection;
pub mod fd_limit;
pub mod http;
pub mod listener;
pub mod memory;
pub mod peers;
pub mod quotas;
pub mod sasl;
pub mod stats;
pub mod tls;
pub mod tls_settings;
pub mod tls_stores;
pub mod warn_limit;

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;

use bytes::Bytes;

use crate::codec::request::InboundRequest;

/// Who sent a request and on which listener it arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestContext {
    /// The listener name (upper case), e.g. `CONTROLLER`.
    pub listener_name: String,
    /// The peer's address.
    pub peer: SocketAddr,
    /// Whether the request came inside an Envelope from a broker.
    pub forwarded: bool,
    /// Who sent it: the SASL principal, the forwarding broker's client, or `User:ANONYMOUS`.
    pub principal: crate::common::principal::Principal,
    /// The broker that forwarded the request in an Envelope (its principal and address).
    pub forwarded_by: Option<crate::raft::Sender>,
    /// The listener's security protocol (for a forwarded request, the Envelope's connection).
    pub security_protocol: crate::common::security_protocol::SecurityProtocol,
}

impl RequestContext {
    /// Who sent a request with `client_id` in its header, as the controller sees it.
    pub fn sender(&self, client_id: &str) -> crate::raft::Sender {
        crate::raft::Sender {
            principal: self.principal.to_string(),
            host: java_host_address(self.peer.ip()),
            token_authenticated: self.principal.token_authenticated,
            security_protocol: self.security_protocol,
            client_id: client_id.to_string(),
        }
    }
}

/// A pending answer: the encoded response frame and what the request metrics count of it, or
/// `None` to close the connection.
pub type PendingResponse = Pin<Box<dyn Future<Output = Option<Answered>> + Send>>;

/// An encoded response and the facts Kafka's RequestMetrics keep of it, which only the handler
/// knows (the socket sees bytes).
#[derive(Debug, Clone)]
pub struct Answered {
    /// The size-prefixed response frame.
    pub bytes: Bytes,
    /// The API and version the metrics count the request under: a forwarded request's inner
    /// one (Kafka's forwarded request carries the inner header), else the request's own.
    pub api: kafka_protocol::messages::ApiKey,
    /// See `api`.
    pub version: i16,
    /// A Fetch from a replica (Kafka also counts it as `FetchFollower`).
    pub follower_fetch: bool,
    /// The error codes of the response, as Kafka's `errorCounts()` counts them.
    pub errors: crate::codec::error_counts::ErrorCounts,
    /// The throttle applied to the request (Kafka's `apiThrottleTimeMs`), ms.
    pub throttle_ms: i32,
}

/// Serves decoded requests. Implemented by the node.
pub trait RequestHandler: Send + Sync + 'static {
    /// Starts serving `request`; the connection writes whatever the future yields, in order.
    fn handle(&self, ctx: &RequestContext, request: InboundRequest) -> PendingResponse;

    /// A user's SCRAM credential in the committed metadata, for SASL/SCRAM listeners.
    fn scram_credential(
        &self,
        _mechanism: crate::security::scram::ScramMechanism,
        _user: &str,
    ) -> Option<crate::security::scram::ScramCredential> {
        None
    }

    /// A delegation token in the committed metadata as a SCRAM credential, for token
    /// authentication (`tokenauth=true`) on SASL/SCRAM listeners.
    fn token_credential(
        &self,
        _mechanism: crate::security::scram::ScramMechanism,
        _token_id: &str,
    ) -> Option<crate::security::scram::TokenCredential> {
        None
    }
}

/// A handler's users and delegation tokens, for the SCRAM exchanges of its connections.
pub struct HandlerCredentials<'a, H>(pub &'a H);

impl<H: RequestHandler> crate::security::scram::ScramCredentials for HandlerCredentials<'_, H> {
    fn user(
        &self,
        mechanism: crate::security::scram::ScramMechanism,
        user: &str,
    ) -> Option<crate::security::scram::ScramCredential> {
        self.0.scram_credential(mechanism, user)
    }

    fn token(
        &self,
        mechanism: crate::security::scram::ScramMechanism,
        token_id: &str,
    ) -> Option<crate::security::scram::TokenCredential> {
        self.0.token_credential(mechanism, token_id)
    }
}

/// Limits every connection obeys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// `socket.request.max.bytes`: the largest frame body accepted.
    pub request_max_bytes: usize,
    /// `connections.max.idle.ms`: a connection that sends nothing this long is closed (`None`:
    /// never).
    pub idle_timeout_ms: Option<u64>,
}

/// What every listener and connection of a node shares.
#[derive(Debug)]
pub struct SocketServer {
    /// Per-connection limits.
    pub limits: ConnectionLimits,
    /// Who may hold a connection.
    pub quotas: std::sync::Arc<quotas::ConnectionQuotas>,
    /// `queued.max.request.bytes`.
    pub memory: memory::RequestMemory,
    /// Warnings about peers, rate-limited per address.
    pub warnings: warn_limit::PeerWarnings,
    /// Connection and request counts, read by `/metrics`.
    pub stats: std::sync::Arc<stats::NetStats>,
}

pub use crate::common::java::java_host_address;
