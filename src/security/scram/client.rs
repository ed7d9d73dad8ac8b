//! The client side of a SCRAM exchange (Kafka's `ScramSaslClient`): it proves it knows the
//! password and checks the server's signature.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;

use super::messages::{base64, invalid, is_extension, is_printable};
use super::{sasl_name, xor, ScramFailure, ScramMechanism};

enum ClientState {
    Start,
    ServerFirst { bare: String },
    ServerFinal { expected_signature: Vec<u8> },
    Complete,
    Failed,
}

/// The client side (Kafka's `ScramSaslClient`).
pub struct ScramClient {
    mechanism: ScramMechanism,
    username: String,
    password: String,
    nonce: String,
    state: ClientState,
    /// Authenticate with a delegation token (`tokenauth=true`): the user name is the token
    /// id, the password its HMAC in base64.
    token_auth: bool,
}

impl ScramClient {
    /// A new exchange; `client_nonce` is fresh randomness from the caller.
    pub fn new(
        mechanism: ScramMechanism,
        username: &str,
        password: &str,
        client_nonce: String,
    ) -> Self {
        Self {
            mechanism,
            username: username.to_string(),
            password: password.to_string(),
            nonce: client_nonce,
            state: ClientState::Start,
            token_auth: false,
        }
    }

    /// This exchange authenticates with a delegation token (Kafka's `tokenauth=true`
    /// extension).
    pub fn with_token_auth(mut self) -> Self {
        self.token_auth = true;
        self
    }

    /// The client-first message.
    pub fn first_message(&mut self) -> Vec<u8> {
        let extension = if self.token_auth {
            ",tokenauth=true"
        } else {
            ""
        };
        let bare = format!(
            "n={},r={}{extension}",
            sasl_name(&self.username),
            self.nonce
        );
        let message = format!("n,,{bare}");
        self.state = ClientState::ServerFirst { bare };
        message.into_bytes()
    }

    /// The server's token in: the next token, or `None` once its signature is verified.
    pub fn evaluate(&mut self, server_token: &[u8]) -> Result<Option<Vec<u8>>, ScramFailure> {
        let state = std::mem::replace(&mut self.state, ClientState::Failed);
        match state {
            ClientState::ServerFirst { bare } => self.server_first(server_token, &bare).map(Some),
            ClientState::ServerFinal { expected_signature } => {
                self.server_final(server_token, &expected_signature)?;
                self.state = ClientState::Complete;
                Ok(None)
            }
            ClientState::Start | ClientState::Complete | ClientState::Failed => Err(invalid(
                "Unexpected challenge in the SCRAM client state".into(),
            )),
        }
    }

    fn server_first(&mut self, token: &[u8], bare: &str) -> Result<Vec<u8>, ScramFailure> {
        let message = String::from_utf8_lossy(token).into_owned();
        let bad = || {
            invalid(format!(
                "Invalid SCRAM server first message format: {message}"
            ))
        };
        let fields: Vec<&str> = message.split(',').collect();
        let fields = match fields.first() {
            Some(m) if m.starts_with("m=") => &fields[1..],
            _ => &fields[..],
        };
        if fields.len() < 3 || !fields[3..].iter().all(|f| is_extension(f)) {
            return Err(bad());
        }
        let nonce = fields[0]
            .strip_prefix("r=")
            .filter(|s| is_printable(s))
            .ok_or_else(bad)?;
        let salt = fields[1]
            .strip_prefix("s=")
            .and_then(base64)
            .ok_or_else(bad)?;
        let iterations: i32 = fields[2]
            .strip_prefix("i=")
            .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|s| s.parse().ok())
            .filter(|i| *i > 0)
            .ok_or_else(bad)?;
        if !nonce.starts_with(&self.nonce) {
            return Err(invalid(
                "Invalid server nonce: does not start with client nonce".into(),
            ));
        }
        let m = self.mechanism;
        if iterations < m.min_iterations() {
            return Err(invalid(format!(
                "Requested iterations {iterations} is less than the minimum {} for {}",
                m.min_iterations(),
                m.name()
            )));
        }
        let salted = m.salted_password(&self.password, &salt, iterations);
        let without_proof = format!("c={},r={nonce}", BASE64.encode(b"n,,"));
        let auth_message = format!("{bare},{message},{without_proof}");
        let client_key = m.hmac(&salted, b"Client Key");
        let stored_key = m.hash(&client_key);
        let proof = xor(&client_key, &m.hmac(&stored_key, auth_message.as_bytes()));
        let server_key = m.hmac(&salted, b"Server Key");
        self.state = ClientState::ServerFinal {
            expected_signature: m.hmac(&server_key, auth_message.as_bytes()),
        };
        Ok(format!("{without_proof},p={}", BASE64.encode(proof)).into_bytes())
    }

    fn server_final(&self, token: &[u8], expected: &[u8]) -> Result<(), ScramFailure> {
        let message = String::from_utf8_lossy(token);
        if let Some(error) = message.strip_prefix("e=") {
            return Err(invalid(format!(
                "Sasl authentication using {} failed with error: {error}",
                self.mechanism.name()
            )));
        }
        let signature = message
            .split(',')
            .next()
            .and_then(|v| v.strip_prefix("v="))
            .and_then(base64)
            .ok_or_else(|| {
                invalid(format!(
                    "Invalid SCRAM server final message format: {message}"
                ))
            })?;
        if !crate::security::plain::constant_time_eq(&signature, expected) {
            return Err(invalid(
                "Invalid server signature in server final message".into(),
            ));
        }
        Ok(())
    }

    /// Whether the server's signature was verified.
    pub fn is_complete(&self) -> bool {
        matches!(self.state, ClientState::Complete)
    }
}
