//! The client side of SASL, for this node's connections to its peers (Kafka's
//! `SaslClientAuthenticator` with the mechanism of `sasl.mechanism.controller.protocol` and the
//! `username`/`password` options of that mechanism's login module on the first controller
//! listener). The network layer sends [`SaslClient::first_token`] in a SaslAuthenticate, then
//! each token [`SaslClient::on_server_token`] returns, until it returns `None`.

use super::plain;
use super::scram::ScramClient;
use super::SaslMechanism;
use crate::common::secret::Secret;

/// What this node authenticates to its peers with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaslClientSettings {
    /// `sasl.mechanism.controller.protocol`.
    pub mechanism: SaslMechanism,
    /// The login module's `username`.
    pub username: String,
    /// Its `password`.
    pub password: Secret,
}

/// One exchange.
pub enum SaslClient {
    /// PLAIN: one message, answered with an empty token.
    Plain {
        /// The message, until sent.
        message: Vec<u8>,
        /// Sent.
        sent: bool,
    },
    /// SCRAM: client-first, client-final, then the server's signature checked.
    Scram(Box<ScramClient>),
}

impl std::fmt::Debug for SaslClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Plain { .. } => "SaslClient::Plain",
            Self::Scram(_) => "SaslClient::Scram",
        })
    }
}

impl SaslClient {
    /// A new exchange; `nonce` is the client nonce of a SCRAM one (randomness is an input).
    pub fn new(settings: &SaslClientSettings, nonce: String) -> Self {
        match settings.mechanism {
            SaslMechanism::Plain => Self::Plain {
                message: plain::client_message(&settings.username, settings.password.expose()),
                sent: false,
            },
            SaslMechanism::Scram(m) => Self::Scram(Box::new(ScramClient::new(
                m,
                &settings.username,
                settings.password.expose(),
                nonce,
            ))),
        }
    }

    /// The first token to send.
    pub fn first_token(&mut self) -> Vec<u8> {
        match self {
            Self::Plain { message, sent } => {
                *sent = true;
                std::mem::take(message)
            }
            Self::Scram(c) => c.first_message(),
        }
    }

    /// The server's answer to the last token: the next token to send, or `None` once the
    /// exchange is complete; `Err` when the server's token is refused (a bad signature).
    pub fn on_server_token(&mut self, token: &[u8]) -> Result<Option<Vec<u8>>, String> {
        match self {
            // PLAIN is complete once its message is sent; the server's (empty) answer is not
            // looked at, as in Kafka.
            Self::Plain { sent: true, .. } => Ok(None),
            Self::Plain { sent: false, .. } => Err("PLAIN answer before the message".into()),
            Self::Scram(c) => c.evaluate(token).map_err(|e| e.to_string()),
        }
    }
}
