//! The node: binds the controller listeners and answers requests.
//!
//! ```text
//!   Config ─▶ run() ─bind─▶ network::listener::serve (one per controller listener)
//!                                   │
//!            Node::handle ◀─────────┘  ApiVersions from the advertised table;
//!                                      everything else "not ready" until the Raft core lands
//! ```
//!
//! The node is the only place that will own the Raft core and read the clock.
mod not_ready;

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::codec::api_versions::{api_versions_response, unsupported_version_response};
use crate::codec::request::InboundRequest;
use crate::codec::response::encode_response;
use crate::codec::{RequestBody, ResponseBody};
use crate::config::Config;
use crate::network::listener::serve;
use crate::network::{ConnectionLimits, PendingResponse, RequestContext, RequestHandler};

pub use not_ready::{not_ready_response, BROKER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER};

/// Failures that stop the node from starting or running.
#[derive(Debug, thiserror::Error)]
pub enum NodeError {
    /// A listener could not be bound.
    #[error("cannot bind listener {name} on {addr}: {source}")]
    Bind {
        /// Listener name.
        name: String,
        /// Address tried.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// The configuration cannot be served.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
}

/// Serves requests for one node.
#[derive(Debug)]
pub struct Node {
    node_id: i32,
}

impl Node {
    /// A node with id `node_id`.
    pub fn new(node_id: i32) -> Self {
        Self { node_id }
    }

    /// The node id.
    pub fn node_id(&self) -> i32 {
        self.node_id
    }

    fn answer(&self, ctx: &RequestContext, request: InboundRequest) -> Option<bytes::Bytes> {
        let (body, version, correlation_id) = match request {
            InboundRequest::UnsupportedApiVersions { header } => {
                tracing::debug!(peer = %ctx.peer, "ApiVersions v{} unknown; answering v0 UNSUPPORTED_VERSION", header.api_version);
                (
                    ResponseBody::ApiVersions(unsupported_version_response()),
                    0,
                    header.correlation_id,
                )
            }
            InboundRequest::Request { header, body } => {
                let version = header.api_version;
                let response = match &body {
                    RequestBody::ApiVersions(_) => {
                        ResponseBody::ApiVersions(api_versions_response(version, &[], -1))
                    }
                    other => not_ready_response(other, version)?,
                };
                (response, version, header.correlation_id)
            }
        };
        match encode_response(&body, version, correlation_id) {
            Ok(bytes) => Some(bytes),
            Err(e) => {
                // Our own response failed to encode: a bug, logged; the connection closes.
                tracing::error!(peer = %ctx.peer, "failed to encode response: {e}");
                None
            }
        }
    }
}

impl RequestHandler for Node {
    fn handle(&self, ctx: &RequestContext, request: InboundRequest) -> PendingResponse {
        let answer = self.answer(ctx, request);
        Box::pin(async move { answer })
    }
}

/// Listeners bound and ready to serve.
#[derive(Debug)]
pub struct BoundListeners {
    /// (listener name, socket) pairs.
    pub listeners: Vec<(String, TcpListener)>,
}

impl BoundListeners {
    /// The local addresses, in configuration order.
    pub fn local_addrs(&self) -> Vec<(String, SocketAddr)> {
        self.listeners
            .iter()
            .filter_map(|(n, l)| l.local_addr().ok().map(|a| (n.clone(), a)))
            .collect()
    }
}

/// Binds every controller listener of `config`.
pub async fn bind(config: &Config) -> Result<BoundListeners, NodeError> {
    let mut listeners = Vec::new();
    for l in config.controller_listeners() {
        let addr = SocketAddr::new(l.bind_ip()?, l.port);
        let socket = TcpListener::bind(addr)
            .await
            .map_err(|source| NodeError::Bind {
                name: l.name.clone(),
                addr,
                source,
            })?;
        listeners.push((l.name.clone(), socket));
    }
    Ok(BoundListeners { listeners })
}

/// Serves `bound` until `shutdown` is cancelled, then waits for every connection to finish.
pub async fn run(config: &Config, bound: BoundListeners, shutdown: CancellationToken) {
    let node = Arc::new(Node::new(config.node_id));
    let limits = ConnectionLimits {
        request_max_bytes: config.socket_request_max_bytes,
        max_connections: config.max_connections,
        idle_timeout_ms: config.connections_max_idle_ms,
    };
    let tracker = TaskTracker::new();
    for (name, listener) in bound.listeners {
        if let Ok(addr) = listener.local_addr() {
            tracing::info!("Awaiting socket connections on {addr} for listener {name}");
        }
        tracker.spawn(serve(
            listener,
            name,
            node.clone(),
            limits,
            shutdown.clone(),
            tracker.clone(),
        ));
    }
    tracker.close();
    tracker.wait().await;
}
