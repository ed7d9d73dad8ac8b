//! The node: binds the controller listeners, runs the node state machine (`crate::machine`)
//! on its driver thread, answers requests.
//!
//! ```text
//!   Config ─▶ start::open ─▶ RaftStore (log, snapshots, quorum-state) + RaftCore
//!                            + QuorumController + own registration
//!          ─▶ driver::spawn (raft thread: NodeMachine) ◀──Event── handler::Node ◀── listener
//! ```
//!
//! The driver is the only place that reads the clock.
pub mod controller_metrics;
pub mod driver;
mod handler;
pub mod metrics;
mod not_ready;
pub mod start;
pub mod store;

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::Config;
use crate::network::listener::serve as serve_listener;
use crate::network::ConnectionLimits;

pub use handler::Node;
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

/// Serves `bound` with `node` until `shutdown` is cancelled, then waits for every connection.
pub async fn serve(
    node: Arc<Node>,
    config: &Config,
    bound: BoundListeners,
    shutdown: CancellationToken,
) {
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
        tracker.spawn(serve_listener(
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

/// Serves `bound` with no Raft core: ApiVersions answered, Raft APIs "not ready".
pub async fn run(config: &Config, bound: BoundListeners, shutdown: CancellationToken) {
    let node = Arc::new(Node::new(
        config.node_id,
        String::new(),
        Default::default(),
        None,
        config.kafka_release.unwrap_or_default(),
    ));
    serve(node, config, bound, shutdown).await;
}
