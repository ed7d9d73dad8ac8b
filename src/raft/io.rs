//! The core's inputs and outputs.
//!
//! Contract with the driver: outputs are carried out **in order**, and each write output
//! (`PersistElectionState`, `Append*`, `Truncate`, `Flush`) is durable before any later output
//! is carried out. That is how every response and request waits for the write it depends on:
//! a granted vote's `PersistElectionState` precedes its `Respond`, a follower's `Flush`
//! precedes its next `Send(Fetch)`. Before the core is called again, all outputs drained so far
//! must have been carried out, so the [`super::LogReader`] shows them.

use bytes::Bytes;

use crate::codec::{RequestBody, ResponseBody};

use super::types::{Endpoint, ReplicaKey};

/// The persisted election state (`quorum-state`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElectionState {
    /// The epoch.
    pub epoch: i32,
    /// The leader of the epoch, if known.
    pub leader_id: Option<i32>,
    /// The replica we voted for in the epoch, if any.
    pub voted_key: Option<ReplicaKey>,
}

/// A request that arrived, with what the core needs to answer it.
#[derive(Debug, Clone)]
pub struct InboundRequest {
    /// Opaque id the driver uses to route the answer.
    pub request_id: u64,
    /// The request's API version (the answer is encoded at it).
    pub api_version: i16,
    /// The listener it arrived on (leader endpoints in answers are for this listener).
    pub listener_name: String,
    /// Whether a broker forwarded it inside an Envelope (Kafka's `Request.isForwarded`: some
    /// checks apply only to requests sent to the controller directly).
    pub forwarded: bool,
    /// Who sent it (for a forwarded request, the broker's client); `None` for the node's own
    /// request (its controller registration while it leads), which no authorizer checks.
    pub sender: Option<Sender>,
    /// The broker that forwarded it inside an Envelope.
    pub forwarded_by: Option<Sender>,
    /// The body.
    pub body: RequestBody,
}

/// Who sent a request, as the authorizer matches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sender {
    /// `Type:name` of the session principal, e.g. `User:alice`.
    pub principal: String,
    /// The client address as Java's `getHostAddress` prints it.
    pub host: String,
    /// The connection authenticated with a delegation token (SCRAM `tokenauth=true`; for a
    /// forwarded request, as the Envelope's principal says).
    pub token_authenticated: bool,
    /// The security protocol of the connection the request came on (for a forwarded
    /// request, the forwarding broker's connection, as Kafka's forwarded context keeps it).
    pub security_protocol: crate::common::security_protocol::SecurityProtocol,
    /// The request header's client id (for a forwarded request, the inner header's).
    pub client_id: String,
}

impl Sender {
    /// `User:ANONYMOUS` from 127.0.0.1: a PLAINTEXT peer on loopback (tests, simulations).
    pub fn anonymous_local() -> Self {
        Self {
            principal: "User:ANONYMOUS".to_string(),
            host: "127.0.0.1".to_string(),
            token_authenticated: false,
            security_protocol: crate::common::security_protocol::SecurityProtocol::Plaintext,
            client_id: String::new(),
        }
    }
}

/// The outcome of a request the core sent.
#[derive(Debug, Clone)]
pub enum ResponseResult {
    /// The peer answered.
    /// (Boxed: the largest response bodies dwarf the other outcomes.)
    Answered(Box<ResponseBody>),
    /// The peer could not take the request at any version both sides know (a field the
    /// negotiated version cannot carry, e.g. PreVote below Vote v2). Kafka's client turns this
    /// into a synthetic UNSUPPORTED_VERSION.
    UnsupportedVersion,
    /// No answer: disconnected, unreachable or timed out (Kafka: BROKER_NOT_AVAILABLE).
    Failed,
    /// No answer because the connection could not be secured: the TLS handshake failed (a
    /// certificate refused either way, no common protocol). Kafka's network channel turns the
    /// client's AuthenticationException into NETWORK_EXCEPTION.
    AuthenticationFailed,
}

/// Where a request goes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Destination {
    /// Node id (bootstrap servers have negative ids: -2, -3, …).
    pub node_id: i32,
    /// Its controller-listener address.
    pub endpoint: Endpoint,
}

/// What the core asks the driver to do.
#[derive(Debug, Clone)]
pub enum Output {
    /// Write `quorum-state` (tmp, fsync, rename, fsync dir).
    PersistElectionState(ElectionState),
    /// Append a batch built by the leader (offsets assigned, epoch stamped).
    AppendAsLeader {
        /// The batch bytes.
        batch: Bytes,
        /// The leader epoch.
        epoch: i32,
    },
    /// Append batches fetched from the leader, verbatim.
    AppendAsFollower {
        /// Whole batches.
        records: Bytes,
        /// The epoch of the Fetch response they came in.
        epoch: i32,
    },
    /// Remove every record at or after `offset`.
    Truncate {
        /// The new log end offset.
        offset: i64,
    },
    /// fsync the log up to its end.
    Flush,
    /// Append downloaded bytes to the snapshot `id` being fetched (`.checkpoint.part`;
    /// position 0 starts a new file).
    SnapshotChunk {
        /// The snapshot.
        id: super::types::OffsetAndEpoch,
        /// Where the bytes go.
        position: i64,
        /// The bytes.
        bytes: Bytes,
    },
    /// The download of `id` is complete: freeze it (fsync, rename), then empty the log and
    /// restart it at the snapshot's end offset (Kafka's `truncateToLatestSnapshot`).
    InstallSnapshot {
        /// The snapshot.
        id: super::types::OffsetAndEpoch,
    },
    /// Forget a partial download of `id`.
    AbandonSnapshot {
        /// The snapshot.
        id: super::types::OffsetAndEpoch,
    },
    /// Send a request; the answer comes back through `handle_response(correlation_id, …)`.
    Send {
        /// Matches the response to the request.
        correlation_id: u64,
        /// Where to.
        destination: Destination,
        /// What.
        request: RequestBody,
    },
    /// Answer an inbound request.
    Respond {
        /// The request being answered.
        request_id: u64,
        /// Its API version.
        api_version: i16,
        /// The answer.
        body: ResponseBody,
    },
    /// The high watermark moved: records below it are committed.
    HighWatermark(i64),
    /// The role changed (for logs, metrics and the controller on top).
    RoleChanged {
        /// New epoch.
        epoch: i32,
        /// Leader, if known.
        leader_id: Option<i32>,
        /// Name of the role (Kafka's `current-state` metric value).
        state: &'static str,
    },
    /// A graceful shutdown finished; the driver may stop.
    ShutdownComplete,
}
