//! Outbound connections to other controllers (Kafka's `KafkaNetworkChannel` + `NetworkClient`).
//!
//! ```text
//!   core Output::Send ─▶ Peers::send ─▶ per-destination task (bounded queue)
//!       task: connect (reconnect backoff 50 ms doubling to 500 ms) ─▶ ApiVersions handshake
//!             ─▶ pick min(our max, their max) per API ─▶ adapt fields ─▶ encode ─▶ await answer
//!   answer / failure ─▶ sink(PeerResponse) ─▶ driver ─▶ core.handle_response
//!       idle: the open connection is watched; the peer closing it drops it at once
//! ```
//!
//! The core keeps at most one request in flight per destination, so each task handles one
//! request at a time. Every request ends in exactly one `PeerResponse`: an answer,
//! `UnsupportedVersion` (no common version, or a field the version cannot carry), or `Failed`
//! (unreachable, disconnected, timed out).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, SaslAuthenticateRequest, SaslHandshakeRequest,
};
use kafka_protocol::protocol::{decode_budget, StrBytes};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;

use super::adapt::adapt_request;
use super::tls::{server_name, PeerTls};
use crate::codec::frame::SIZE_PREFIX_BYTES;
use crate::codec::request::{decode_budget_bytes, encode_request};
use crate::codec::response::decode_response;
use crate::codec::{versions, RequestBody, ResponseBody};
use crate::raft::{Destination, ResponseResult};
use crate::security::client::{SaslClient, SaslClientSettings};
use crate::security::{ILLEGAL_SASL_STATE, UNSUPPORTED_SASL_MECHANISM};

/// Largest response frame accepted from a peer (a Fetch answer carries ≤ 8 MiB of records).
const RESPONSE_MAX_BYTES: usize = 64 * 1024 * 1024;
/// Requests queued per destination before further ones fail at once.
const QUEUE_DEPTH: usize = 16;
const RECONNECT_BACKOFF_MS: u64 = 50;
const RECONNECT_BACKOFF_MAX_MS: u64 = 500;

/// A request for a peer.
#[derive(Debug, Clone)]
pub struct PeerRequest {
    /// The core's correlation id.
    pub correlation_id: u64,
    /// Where.
    pub destination: Destination,
    /// What (built for the newest version; adapted here).
    pub request: RequestBody,
}

/// The outcome of a [`PeerRequest`].
#[derive(Debug, Clone)]
pub struct PeerResponse {
    /// The core's correlation id.
    pub correlation_id: u64,
    /// What happened.
    pub result: ResponseResult,
}

/// Where outcomes go (the driver's queue).
pub type ResponseSink = Arc<dyn Fn(PeerResponse) + Send + Sync>;

/// Settings of outbound connections.
#[derive(Debug, Clone)]
pub struct PeerConfig {
    /// `raft-client-<node id>`, as Kafka names it.
    pub client_id: String,
    /// `controller.quorum.request.timeout.ms`.
    pub request_timeout_ms: u64,
    /// TLS, when the first controller listener's security protocol is SSL or SASL_SSL.
    pub tls: Option<PeerTls>,
    /// SASL, when it is SASL_PLAINTEXT or SASL_SSL.
    pub sasl: Option<SaslClientSettings>,
    /// Counts requests, responses and bytes (the raft channel only; registration's own
    /// connections are not Kafka's raft channel).
    pub channel: Option<std::sync::Arc<super::stats::ChannelCounts>>,
}

/// The set of destination tasks.
pub struct Peers {
    config: PeerConfig,
    sink: ResponseSink,
    tasks: HashMap<Destination, mpsc::Sender<PeerRequest>>,
}

impl std::fmt::Debug for Peers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Peers")
            .field("destinations", &self.tasks.len())
            .finish()
    }
}

impl Peers {
    /// Peers reporting outcomes to `sink`. Must be used inside a tokio runtime.
    pub fn new(config: PeerConfig, sink: ResponseSink) -> Self {
        Self {
            config,
            sink,
            tasks: HashMap::new(),
        }
    }

    /// Queues `request` for its destination, starting the destination's task if needed.
    pub fn send(&mut self, request: PeerRequest) {
        let destination = request.destination.clone();
        let sender = self.tasks.entry(destination.clone()).or_insert_with(|| {
            let (tx, rx) = mpsc::channel(QUEUE_DEPTH);
            tokio::spawn(peer_task(
                destination,
                rx,
                self.sink.clone(),
                self.config.clone(),
            ));
            tx
        });
        if let Err(e) = sender.try_send(request) {
            let request = match e {
                mpsc::error::TrySendError::Full(r) | mpsc::error::TrySendError::Closed(r) => r,
            };
            (self.sink)(PeerResponse {
                correlation_id: request.correlation_id,
                result: ResponseResult::Failed,
            });
        }
    }
}

/// A connection's byte stream: TCP, or TLS over TCP.
trait PeerStream: AsyncRead + AsyncWrite + Unpin + Send {}
impl<S: AsyncRead + AsyncWrite + Unpin + Send> PeerStream for S {}

/// An open connection whose peer's API versions are known.
struct Connection {
    stream: Box<dyn PeerStream>,
    peer_versions: BTreeMap<i16, (i16, i16)>,
    next_correlation_id: i32,
    /// When to re-authenticate (85-95 % of the session lifetime the server gave, Kafka's
    /// client rule); `None`: the session does not expire.
    reauthenticate_at: Option<tokio::time::Instant>,
    /// `host:port`, for messages.
    addr: String,
}

/// Why a connection could not be opened.
#[derive(Debug)]
enum OpenError {
    /// The TLS handshake failed: a configuration problem an operator must see, unlike a peer
    /// that is simply down. `refused` when TLS itself refused (a certificate either way, no
    /// common protocol, an alert), which Kafka reports as an authentication failure; not
    /// when the connection broke mid-handshake (a peer killed or cut off).
    Tls { message: String, refused: bool },
    /// The peer refused this node's SASL authentication (a wrong password, a mechanism it
    /// does not enable): a configuration problem, reported as the TLS refusals are.
    Sasl(String),
    /// Unreachable, refused, or the ApiVersions exchange failed.
    Other(String),
}

#[derive(Debug)]
enum CallError {
    /// No version both sides know, or the body cannot be carried at the negotiated version.
    Unsupported,
    /// The connection is unusable.
    Broken(String),
}

impl Connection {
    async fn open(destination: &Destination, config: &PeerConfig) -> Result<Self, OpenError> {
        let addr = format!(
            "{}:{}",
            destination.endpoint.host, destination.endpoint.port
        );
        let stream = TcpStream::connect(&addr)
            .await
            .map_err(|e| OpenError::Other(format!("connect to {addr}: {e}")))?;
        let _ = stream.set_nodelay(true);
        let stream: Box<dyn PeerStream> = match &config.tls {
            None => Box::new(stream),
            Some(PeerTls(connector)) => {
                let name =
                    server_name(&destination.endpoint.host).map_err(|message| OpenError::Tls {
                        message,
                        refused: false,
                    })?;
                let tls = connector.connect(name, stream).await.map_err(|e| {
                    let refused = e
                        .get_ref()
                        .is_some_and(|inner| inner.is::<tokio_rustls::rustls::Error>());
                    OpenError::Tls {
                        message: format!("TLS handshake with {addr} failed: {e}"),
                        refused,
                    }
                })?;
                Box::new(tls)
            }
        };
        let mut conn = Connection {
            stream,
            peer_versions: BTreeMap::new(),
            next_correlation_id: 0,
            reauthenticate_at: None,
            addr: addr.clone(),
        };
        conn.handshake(config).await.map_err(OpenError::Other)?;
        if let Some(sasl) = &config.sasl {
            conn.authenticate(sasl, config, &addr).await?;
        }
        Ok(conn)
    }

    /// SaslHandshake then SaslAuthenticate until the mechanism completes (Kafka's
    /// SaslClientAuthenticator after its ApiVersions exchange), at the newest versions both
    /// sides know. Also how a session is renewed on the same connection.
    async fn authenticate(
        &mut self,
        sasl: &SaslClientSettings,
        config: &PeerConfig,
        addr: &str,
    ) -> Result<(), OpenError> {
        let mechanism = sasl.mechanism.name();
        let broken = |e: CallError| OpenError::Other(format!("SASL with {addr}: {e:?}"));
        let handshake = RequestBody::SaslHandshake(
            SaslHandshakeRequest::default().with_mechanism(StrBytes::from_static_str(mechanism)),
        );
        let version = self
            .negotiate(ApiKey::SaslHandshake)
            .ok_or_else(|| OpenError::Sasl(format!("{addr} does not serve SaslHandshake v1")))?;
        if version < 1 {
            return Err(OpenError::Sasl(format!(
                "{addr} does not serve SaslHandshake v1"
            )));
        }
        let ResponseBody::SaslHandshake(r) = self
            .round_trip(&handshake, version, config)
            .await
            .map_err(broken)?
        else {
            return Err(OpenError::Other(
                "SaslHandshake answered with another API".into(),
            ));
        };
        let enabled: Vec<&str> = r.mechanisms.iter().map(|m| m.as_str()).collect();
        match r.error_code {
            0 => {}
            UNSUPPORTED_SASL_MECHANISM => {
                return Err(OpenError::Sasl(format!(
                    "Client SASL mechanism '{mechanism}' not enabled in the server, enabled \
                     mechanisms are {enabled:?} ({addr})"
                )))
            }
            ILLEGAL_SASL_STATE => {
                return Err(OpenError::Sasl(format!(
                    "Unexpected handshake request with client mechanism {mechanism}, enabled \
                     mechanisms are {enabled:?} ({addr})"
                )))
            }
            code => {
                return Err(OpenError::Sasl(format!(
                    "SaslHandshake error {code} from {addr}"
                )))
            }
        }
        let version = self
            .negotiate(ApiKey::SaslAuthenticate)
            .ok_or_else(|| OpenError::Sasl(format!("{addr} does not serve SaslAuthenticate")))?;
        let mut client = SaslClient::new(sasl, super::sasl::nonce());
        let mut token = client.first_token();
        loop {
            let request = RequestBody::SaslAuthenticate(
                SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from(token)),
            );
            let ResponseBody::SaslAuthenticate(r) = self
                .round_trip(&request, version, config)
                .await
                .map_err(broken)?
            else {
                return Err(OpenError::Other(
                    "SaslAuthenticate answered with another API".into(),
                ));
            };
            if r.error_code != 0 {
                let message = r.error_message.as_ref().map_or("", |m| m.as_str());
                return Err(OpenError::Sasl(format!(
                    "SASL authentication with {addr} failed (error {}): {message}",
                    r.error_code
                )));
            }
            match client
                .on_server_token(&r.auth_bytes)
                .map_err(OpenError::Sasl)?
            {
                Some(next) => token = next,
                None => {
                    self.reauthenticate_at = (r.session_lifetime_ms > 0).then(|| {
                        // 85 % plus up to 10 % of jitter, so that peers do not renew together.
                        let jitter = (uuid::Uuid::new_v4().as_u128() % 1000) as u64;
                        let ms = r.session_lifetime_ms as u64 * (850 + jitter / 10) / 1000;
                        now() + Duration::from_millis(ms)
                    });
                    return Ok(());
                }
            }
        }
    }

    /// ApiVersions at our newest version; on UNSUPPORTED_VERSION retry at the peer's newest.
    async fn handshake(&mut self, config: &PeerConfig) -> Result<(), String> {
        // Kafka 4.1's newest (v4), which every 4.x peer reads; v5 adds only fields a
        // controller-to-controller handshake leaves unset.
        let mut version = versions::ADVERTISED
            .iter()
            .find(|r| r.api_key == ApiKey::ApiVersions)
            .map_or(0, |r| r.max_version);
        for _ in 0..2 {
            let request = RequestBody::ApiVersions(
                ApiVersionsRequest::default()
                    .with_client_software_name(StrBytes::from_static_str("ferrokraft"))
                    .with_client_software_version(StrBytes::from_static_str(env!(
                        "CARGO_PKG_VERSION"
                    ))),
            );
            let body = self
                .round_trip(&request, version, config)
                .await
                .map_err(|e| format!("{e:?}"))?;
            let ResponseBody::ApiVersions(r) = body else {
                return Err("ApiVersions answered with another API".into());
            };
            if r.error_code == 35 {
                version = r
                    .api_keys
                    .iter()
                    .find(|k| k.api_key == ApiKey::ApiVersions as i16)
                    .map_or(0, |k| k.max_version.min(version));
                continue;
            }
            if r.error_code != 0 {
                return Err(format!("ApiVersions error {}", r.error_code));
            }
            self.peer_versions = r
                .api_keys
                .iter()
                .map(|k| (k.api_key, (k.min_version, k.max_version)))
                .collect();
            return Ok(());
        }
        Err("ApiVersions version negotiation failed".into())
    }

    fn negotiate(&self, api_key: ApiKey) -> Option<i16> {
        let ours = versions::advertised(api_key)?;
        let (their_min, their_max) = *self.peer_versions.get(&(api_key as i16))?;
        let version = ours.max_version.min(their_max);
        (version >= ours.min_version.max(their_min)).then_some(version)
    }

    /// Resolves when the peer closes an idle connection, or sends what nobody asked for
    /// (either way it is unusable). Cancel-safe: dropped before resolving, it consumed
    /// nothing.
    async fn closed_by_peer(&mut self) -> String {
        let mut byte = [0u8; 1];
        match self.stream.read(&mut byte).await {
            Ok(0) => "closed by the peer".to_string(),
            Ok(_) => "unsolicited bytes from the peer".to_string(),
            Err(e) => e.to_string(),
        }
    }

    async fn call(
        &mut self,
        request: RequestBody,
        config: &PeerConfig,
    ) -> Result<ResponseBody, CallError> {
        if let (Some(at), Some(sasl)) = (self.reauthenticate_at, &config.sasl) {
            if now() >= at {
                let addr = self.addr.clone();
                self.authenticate(sasl, config, &addr)
                    .await
                    .map_err(|e| CallError::Broken(format!("re-authentication failed: {e:?}")))?;
            }
        }
        let version = self
            .negotiate(request.api_key())
            .ok_or(CallError::Unsupported)?;
        let request = adapt_request(request, version);
        self.round_trip(&request, version, config).await
    }

    async fn round_trip(
        &mut self,
        request: &RequestBody,
        version: i16,
        config: &PeerConfig,
    ) -> Result<ResponseBody, CallError> {
        self.next_correlation_id = self.next_correlation_id.wrapping_add(1);
        let correlation_id = self.next_correlation_id;
        let frame = encode_request(request, version, correlation_id, &config.client_id)
            .map_err(|_| CallError::Unsupported)?;
        if let Some(c) = &config.channel {
            c.sent(frame.len());
        }
        self.stream
            .write_all(&frame)
            .await
            .map_err(|e| CallError::Broken(e.to_string()))?;
        // A TLS stream may hold the last record until flushed.
        self.stream
            .flush()
            .await
            .map_err(|e| CallError::Broken(e.to_string()))?;
        let body = read_frame(&mut self.stream)
            .await
            .map_err(CallError::Broken)?;
        if let Some(c) = &config.channel {
            c.received(body.len() + SIZE_PREFIX_BYTES);
        }
        // A response gets the decode budget a request of its size would.
        let budget_bytes = decode_budget_bytes(body.len());
        let (decoded, _) = decode_budget::with_budget(budget_bytes, || {
            decode_response(body, request.api_key(), version)
        });
        let (got, response) = decoded.map_err(|e| CallError::Broken(e.to_string()))?;
        if got != correlation_id {
            return Err(CallError::Broken(format!(
                "correlation id {got}, expected {correlation_id}"
            )));
        }
        Ok(response)
    }
}

async fn read_frame(stream: &mut Box<dyn PeerStream>) -> Result<Bytes, String> {
    let mut size = [0u8; SIZE_PREFIX_BYTES];
    stream
        .read_exact(&mut size)
        .await
        .map_err(|e| e.to_string())?;
    let len = i32::from_be_bytes(size);
    if len < 0 || len as usize > RESPONSE_MAX_BYTES {
        return Err(format!("invalid response size {len}"));
    }
    // Grown as the bytes arrive, not sized by what the prefix announces.
    let mut body = Vec::new();
    (&mut *stream)
        .take(len as u64)
        .read_to_end(&mut body)
        .await
        .map_err(|e| e.to_string())?;
    if body.len() != len as usize {
        return Err(format!(
            "connection closed after {} of {len} response bytes",
            body.len()
        ));
    }
    Ok(Bytes::from(body))
}

#[allow(clippy::disallowed_methods)] // reconnect backoff is wall-clock by nature; not the core
fn now() -> tokio::time::Instant {
    tokio::time::Instant::now()
}

async fn peer_task(
    destination: Destination,
    mut rx: mpsc::Receiver<PeerRequest>,
    sink: ResponseSink,
    config: PeerConfig,
) {
    let mut connection: Option<Connection> = None;
    let mut backoff_ms = RECONNECT_BACKOFF_MS;
    let mut next_connect = now();
    // A failing TLS handshake is warned about once until a connection opens again; the
    // reconnect attempts in between (every 500 ms at most) are logged at DEBUG.
    let mut tls_warned = false;
    // While backing off after a refused handshake, requests keep failing as it did (Kafka's
    // client keeps the authentication failure until it connects again).
    let mut last_refused = false;
    let timeout = Duration::from_millis(config.request_timeout_ms);
    loop {
        let request = match connection.as_mut() {
            None => rx.recv().await,
            // While idle, the connection is watched as Kafka's NetworkClient polls its
            // sockets: a peer that closes it (killed, restarted on the same address) is
            // noticed now, not by the next request failing on the dead socket. Biased: a
            // closing seen together with a request drops the connection before the request
            // is sent.
            Some(conn) => tokio::select! {
                biased;
                closed = conn.closed_by_peer() => {
                    tracing::debug!("node {}: connection closed: {closed}", destination.node_id);
                    connection = None;
                    continue;
                }
                request = rx.recv() => request,
            },
        };
        let Some(request) = request else {
            break;
        };
        let correlation_id = request.correlation_id;
        let was_connected = connection.is_some();
        let outcome = tokio::time::timeout(timeout, async {
            if connection.is_none() {
                if now() < next_connect {
                    return if last_refused {
                        ResponseResult::AuthenticationFailed
                    } else {
                        ResponseResult::Failed
                    };
                }
                match Connection::open(&destination, &config).await {
                    Ok(c) => {
                        backoff_ms = RECONNECT_BACKOFF_MS;
                        tls_warned = false;
                        last_refused = false;
                        connection = Some(c);
                    }
                    Err(e) => {
                        last_refused =
                            matches!(e, OpenError::Tls { refused: true, .. } | OpenError::Sasl(_));
                        let result = if last_refused {
                            ResponseResult::AuthenticationFailed
                        } else {
                            ResponseResult::Failed
                        };
                        match e {
                            OpenError::Tls { message, .. } | OpenError::Sasl(message)
                                if !tls_warned =>
                            {
                                tls_warned = true;
                                tracing::warn!("node {}: {message}", destination.node_id);
                            }
                            OpenError::Tls { message: e, .. }
                            | OpenError::Sasl(e)
                            | OpenError::Other(e) => {
                                tracing::debug!("node {}: {e}", destination.node_id);
                            }
                        }
                        next_connect = now() + Duration::from_millis(backoff_ms);
                        backoff_ms = (backoff_ms * 2).min(RECONNECT_BACKOFF_MAX_MS);
                        return result;
                    }
                }
            }
            let Some(conn) = connection.as_mut() else {
                return ResponseResult::Failed;
            };
            match conn.call(request.request, &config).await {
                Ok(body) => ResponseResult::Answered(Box::new(body)),
                Err(CallError::Unsupported) => ResponseResult::UnsupportedVersion,
                Err(CallError::Broken(e)) => {
                    tracing::debug!("node {}: connection lost: {e}", destination.node_id);
                    connection = None;
                    ResponseResult::Failed
                }
            }
        })
        .await;
        let result = outcome.unwrap_or_else(|_| {
            // A timed-out connection may still deliver the late answer: drop it.
            connection = None;
            if !was_connected {
                // Opening it timed out (a peer that takes the TCP connection but never
                // answers its TLS or ApiVersions handshake): back off as for a refused one.
                if config.tls.is_some() && !tls_warned {
                    tls_warned = true;
                    tracing::warn!(
                        "node {}: opening a connection (TCP, TLS handshake, ApiVersions) did not \
                         complete within {} ms",
                        destination.node_id,
                        config.request_timeout_ms
                    );
                }
                next_connect = now() + Duration::from_millis(backoff_ms);
                backoff_ms = (backoff_ms * 2).min(RECONNECT_BACKOFF_MAX_MS);
            }
            ResponseResult::Failed
        });
        sink(PeerResponse {
            correlation_id,
            result,
        });
    }
}

#[cfg(test)]
#[path = "peers_tests.rs"]
mod tests;
