//! The composition root (Kafka's `KafkaRaftServer` / `ControllerServer.startup`): a parsed
//! `Config` becomes a running node. It opens the directory and builds the Raft core, the
//! controller and the store (`start::open`), binds the controller listeners with their TLS and
//! SASL settings, and serves them with the I/O shell's handler (`crate::server`).
//!
//! ```text
//!   Config ─▶ start::open ─▶ RaftStore (log, snapshots, quorum-state) + RaftCore
//!                            + QuorumController + own registration
//!          ─▶ bind ─▶ serve ─▶ network listeners ─▶ server::Handler ──Event──▶ driver
//! ```
pub mod start;
pub mod systemd;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::connections::KAFKA_UNLIMITED_CONNECTIONS;
use crate::config::Config;
use crate::network::fd_limit;
use crate::network::listener::serve as serve_listener;
use crate::network::memory::RequestMemory;
use crate::network::quotas::{ConnectionQuotas, QuotaLimits};
use crate::network::sasl::ListenerSasl;
use crate::network::warn_limit::PeerWarnings;
use crate::network::{ConnectionLimits, SocketServer};

use crate::server::Handler;

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
pub struct BoundListeners {
    /// (listener name, socket) pairs.
    pub listeners: Vec<(String, TcpListener)>,
    /// The TLS acceptor of each SSL listener, by name (built before binding, so that an
    /// unreadable key store stops the start).
    pub tls: HashMap<String, tokio_rustls::TlsAcceptor>,
}

impl std::fmt::Debug for BoundListeners {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundListeners")
            .field("listeners", &self.listeners)
            .field("tls", &self.tls.keys().collect::<Vec<_>>())
            .finish()
    }
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
    let mut tls = HashMap::new();
    for (name, ssl) in &config.ssl {
        tls.insert(
            name.clone(),
            crate::network::tls::acceptor(ssl).map_err(crate::config::ConfigError::from)?,
        );
    }
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
    Ok(BoundListeners { listeners, tls })
}

/// How this node dials its peers: with TLS when the first controller listener (the one Kafka's
/// raft client uses) is SSL, from that listener's keys.
pub fn peer_tls(config: &Config) -> Result<Option<crate::network::tls::PeerTls>, NodeError> {
    let Some(first) = config.controller_listener_names.first() else {
        return Ok(None);
    };
    match config.ssl.get(first) {
        None => Ok(None),
        Some(ssl) => Ok(Some(crate::network::tls::PeerTls(
            crate::network::tls::connector(ssl).map_err(crate::config::ConfigError::from)?,
        ))),
    }
}

/// Serves `bound` with `node` until `shutdown` is cancelled, then waits for every connection.
pub async fn serve(
    node: Arc<Handler>,
    config: &Config,
    bound: BoundListeners,
    stats: Arc<crate::network::stats::NetStats>,
    shutdown: CancellationToken,
) {
    let server = Arc::new(socket_server(config, stats));
    let tracker = TaskTracker::new();
    for (name, listener) in bound.listeners {
        let tls = bound.tls.get(&name).cloned();
        let sasl = config.sasl.get(&name).map(|s| ListenerSasl {
            settings: Arc::new(s.server_settings(node.api_versions_max_version())),
            failed_authentication_delay_ms: s.failed_authentication_delay_ms,
            max_receive_size: s.max_receive_size,
        });
        if let Ok(addr) = listener.local_addr() {
            let protocol = config.security_protocol(&name).name();
            tracing::info!(
                "Awaiting socket connections on {addr} for listener {name} ({protocol})"
            );
        }
        // An SSL client's principal comes from its certificate (SASL_SSL: from SASL).
        let ssl_principal = match config.security_protocol(&name) {
            crate::common::security_protocol::SecurityProtocol::Ssl => config
                .ssl
                .get(&name)
                .map(|s| Arc::new(s.principal_mapper.clone())),
            _ => None,
        };
        tracker.spawn(serve_listener(
            listener,
            name,
            tls,
            sasl,
            ssl_principal,
            node.clone(),
            server.clone(),
            shutdown.clone(),
            tracker.clone(),
        ));
    }
    tracker.close();
    tracker.wait().await;
}

/// The limits every listener shares, from `config` and the file-descriptor limit (raised to
/// its maximum first, as the JVM does).
fn socket_server(config: &Config, stats: Arc<crate::network::stats::NetStats>) -> SocketServer {
    let c = &config.connections;
    let open_files = fd_limit::raise_open_files_limit();
    let max_connections = fd_limit::connection_ceiling(c.max_connections, open_files);
    if max_connections < c.max_connections && c.max_connections != KAFKA_UNLIMITED_CONNECTIONS {
        tracing::warn!(
            "max.connections={} is more than {} open files allow; serving at most {max_connections}",
            c.max_connections,
            open_files.unwrap_or(0)
        );
    }
    let mut per_ip_overrides = HashMap::new();
    for (host, n) in &c.max_connections_per_ip_overrides {
        match resolve_host(host) {
            Ok(ips) => per_ip_overrides.extend(ips.into_iter().map(|ip| (ip, *n))),
            Err(e) => {
                tracing::warn!("max.connections.per.ip.overrides: cannot resolve {host}: {e}")
            }
        }
    }
    SocketServer {
        limits: ConnectionLimits {
            request_max_bytes: config.socket_request_max_bytes,
            idle_timeout_ms: c.connections_max_idle_ms,
        },
        quotas: ConnectionQuotas::new(QuotaLimits {
            max_connections,
            listener_max_connections: c.listener_max_connections.clone(),
            max_connections_per_ip: c.max_connections_per_ip,
            per_ip_overrides,
        }),
        memory: RequestMemory::new(c.queued_max_request_bytes),
        warnings: PeerWarnings::default(),
        stats,
    }
}

/// The addresses of `host` (an address literal, or a name looked up as Kafka's
/// `InetAddress.getByName` would).
fn resolve_host(host: &str) -> std::io::Result<Vec<IpAddr>> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(vec![ip]);
    }
    use std::net::ToSocketAddrs;
    Ok((host, 0).to_socket_addrs()?.map(|a| a.ip()).collect())
}

/// Serves `bound` with no Raft core: ApiVersions answered, Raft APIs "not ready".
pub async fn run(config: &Config, bound: BoundListeners, shutdown: CancellationToken) {
    let node = Arc::new(Handler::new(
        config.node_id,
        String::new(),
        Default::default(),
        None,
        config.kafka_release.unwrap_or_default(),
    ));
    serve(node, config, bound, Default::default(), shutdown).await;
}
