//! SASL on a listener's connections: the I/O around `crate::security`'s authenticator.
//!
//! ```text
//!   frame ─(raw token? on_token : decode → on_request)─▶ Step
//!     Forward ─▶ the handler, as any request      Respond/RespondRaw ─▶ written
//!     Authenticated ─▶ written; the connection's principal is set
//!     Fail ─▶ logged once per address, answered after the failed-authentication delay, closed
//! ```
//!
//! The clock and the SCRAM nonces are read here, not in the authenticator.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::{Bytes, BytesMut};

use crate::codec::response::encode_response;
use crate::security::authenticator::{Reply, SaslServerSettings};

/// A SASL listener's settings, shared by its connections.
#[derive(Debug, Clone)]
pub struct ListenerSasl {
    /// What the authenticator needs.
    pub settings: Arc<SaslServerSettings>,
    /// `connection.failed.authentication.delay.ms`.
    pub failed_authentication_delay_ms: u64,
    /// `sasl.server.max.receive.size`: the largest frame read before authentication.
    pub max_receive_size: usize,
}

impl ListenerSasl {
    /// How long a failed authentication waits before its answer and the close (Kafka delays
    /// them so that a client retrying bad credentials cannot spin).
    pub fn failure_delay(&self) -> Duration {
        Duration::from_millis(self.failed_authentication_delay_ms)
    }
}

/// Milliseconds on a monotonic clock (since its first reading in this process), for session
/// lifetimes.
#[allow(clippy::disallowed_methods)] // session expiry is wall-clock by nature; not a core
pub fn now_ms() -> u64 {
    static BASE: OnceLock<std::time::Instant> = OnceLock::new();
    BASE.get_or_init(std::time::Instant::now)
        .elapsed()
        .as_millis() as u64
}

/// Milliseconds since the Unix epoch, for a delegation token's time left (its expiry is a
/// wall-clock timestamp).
#[allow(clippy::disallowed_methods)] // token expiry is wall-clock by nature; not a core
pub fn epoch_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A fresh SCRAM nonce: two version-4 UUIDs (244 random bits from the OS), as printable characters (RFC 5802 asks
/// for printable ASCII without a comma).
pub fn nonce() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

/// The bytes of an authenticator's reply, size prefix included; `None` if it cannot be
/// encoded (a version the body cannot carry: a bug, logged by the caller).
pub fn encode_reply(reply: &Reply) -> Option<Bytes> {
    encode_response(&reply.body, reply.version, reply.correlation_id).ok()
}

/// A raw SASL token (SaslHandshake v0) framed with its size prefix.
pub fn frame_token(token: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(token.len() + 4);
    out.extend_from_slice(&(token.len() as u32).to_be_bytes());
    out.extend_from_slice(token);
    out.freeze()
}
