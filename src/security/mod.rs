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

pub use crate::common::errors::{
    ILLEGAL_SASL_STATE, SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM,
};
use std::fmt;

use scram::ScramMechanism;

pub use crate::common::principal::Principal;

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
