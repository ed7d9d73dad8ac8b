//! Authentication of controller-listener connections: SASL as Kafka's
//! `SaslServerAuthenticator` serves it, and the client side ferrokraft uses towards its peers.
//!
//! ```text
//!   config::sasl (JAAS options, mechanisms) ─▶ SaslServerSettings
//!   connection frame ─▶ SaslServerAuthenticator::on_request / on_token ─▶ Step
//!       Step::Forward (ApiVersions) ─▶ the node's handler
//!       Step::Respond / Authenticated ─▶ written; Authenticated gives the Principal
//!       Step::Fail ─▶ answer after connection.failed.authentication.delay.ms, then close
//!   mechanisms: plain (users from the JAAS options), scram (credentials from the image)
//! ```
//!
//! Everything here is sans-IO: time (`now_ms`) and randomness (nonces) are inputs, and the
//! network layer (`crate::network::connection`, `crate::network::peers`) moves the bytes.

pub mod authenticator;
pub mod client;
pub mod jaas;
pub mod plain;
pub mod scram;
pub mod ssl_principal;

#[cfg(test)]
mod authenticator_tests;
#[cfg(test)]
mod jaas_tests;

pub use crate::common::errors::{UNSUPPORTED_SASL_MECHANISM, ILLEGAL_SASL_STATE, SASL_AUTHENTICATION_FAILED};
use std::fmt;

use scram::ScramMechanism;

/// A SASL mechanism ferrokraft serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SaslMechanism {
    /// PLAIN (RFC 4616): users and passwords from the listener's JAAS options.
    Plain,
    /// SCRAM-SHA-256 or SCRAM-SHA-512 (RFC 5802): credentials from the metadata image.
    Scram(ScramMechanism),
}

impl SaslMechanism {
    /// The mechanism of a Kafka name (`PLAIN`, `SCRAM-SHA-256`, `SCRAM-SHA-512`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "PLAIN" => Some(Self::Plain),
            other => ScramMechanism::from_name(other).map(Self::Scram),
        }
    }

    /// Kafka's name of the mechanism.
    pub fn name(self) -> &'static str {
        match self {
            Self::Plain => "PLAIN",
            Self::Scram(m) => m.name(),
        }
    }
}

impl fmt::Display for SaslMechanism {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Who a connection authenticated as (Kafka's `KafkaPrincipal`): `User:alice`, or
/// `User:ANONYMOUS` on a listener without authentication.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Principal {
    /// The principal type (`User`).
    pub principal_type: String,
    /// The name.
    pub name: String,
    /// Authenticated with a delegation token (SCRAM `tokenauth=true`).
    pub token_authenticated: bool,
}

impl Principal {
    /// `User:<name>`, as Kafka's DefaultKafkaPrincipalBuilder builds it for SASL.
    pub fn user(name: &str) -> Self {
        Self {
            principal_type: "User".to_string(),
            name: name.to_string(),
            token_authenticated: false,
        }
    }

    /// `User:ANONYMOUS`, Kafka's principal of an unauthenticated PLAINTEXT connection.
    pub fn anonymous() -> Self {
        Self::user("ANONYMOUS")
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.principal_type, self.name)
    }
}
