//! The server side of a SCRAM exchange (Kafka's `ScramSaslServer`): it checks the client's
//! proof against the stored key of the user's (or delegation token's) credential and answers
//! with its signature.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;

use super::messages::{invalid, server_first, ClientFinal, ClientFirst};
use super::{username, xor, ScramCredential, ScramCredentials, ScramFailure, ScramMechanism};

enum ServerState {
    ClientFirst,
    ClientFinal(Box<PendingFinal>),
    Complete,
    Failed,
}

/// What the server keeps between its first message and the client's final one.
struct PendingFinal {
    client_first: ClientFirst,
    server_first: String,
    nonce: String,
    credential: ScramCredential,
}

/// The server side of one exchange (Kafka's `ScramSaslServer`).
pub struct ScramServer {
    mechanism: ScramMechanism,
    server_nonce: String,
    state: ServerState,
    authorization_id: Option<String>,
    token_authenticated: bool,
    /// A token-authenticated exchange's time left on its token (Kafka's
    /// CREDENTIAL_LIFETIME_MS negotiated property).
    token_lifetime_ms: Option<i64>,
}

impl ScramServer {
    /// A new exchange; `server_nonce` is fresh randomness from the caller.
    pub fn new(mechanism: ScramMechanism, server_nonce: String) -> Self {
        Self {
            mechanism,
            server_nonce,
            state: ServerState::ClientFirst,
            authorization_id: None,
            token_authenticated: false,
            token_lifetime_ms: None,
        }
    }

    /// One client token in, the server's token out. `credential` looks a user up by name (no
    /// delegation tokens).
    pub fn evaluate(
        &mut self,
        client_token: &[u8],
        credential: &dyn Fn(&str) -> Option<ScramCredential>,
    ) -> Result<Vec<u8>, ScramFailure> {
        let mechanism = self.mechanism;
        self.evaluate_with(client_token, &|m: ScramMechanism, user: &str| {
            (m == mechanism).then(|| credential(user)).flatten()
        })
    }

    /// [`Self::evaluate`] with users and delegation tokens from `credentials`.
    pub fn evaluate_with(
        &mut self,
        client_token: &[u8],
        credentials: &dyn ScramCredentials,
    ) -> Result<Vec<u8>, ScramFailure> {
        let state = std::mem::replace(&mut self.state, ServerState::Failed);
        let result = match state {
            ServerState::ClientFirst => self.client_first(client_token, credentials),
            ServerState::ClientFinal(p) => self.client_final(
                client_token,
                &p.client_first,
                &p.server_first,
                &p.nonce,
                &p.credential,
            ),
            ServerState::Complete | ServerState::Failed => Err(invalid(format!(
                "Unexpected challenge in Sasl server state {}",
                if matches!(state, ServerState::Complete) {
                    "COMPLETE"
                } else {
                    "FAILED"
                }
            ))),
        };
        if result.is_err() {
            self.state = ServerState::Failed;
        }
        result
    }

    fn client_first(
        &mut self,
        token: &[u8],
        credentials: &dyn ScramCredentials,
    ) -> Result<Vec<u8>, ScramFailure> {
        let client_first = ClientFirst::parse(token)?;
        let user = username(&client_first.sasl_name);
        let found = if client_first.token_authenticated() {
            // The user name is a token id; the principal is the token's owner (Kafka's
            // DelegationTokenCredentialCallback).
            let Some(token) = credentials.token(self.mechanism, &user) else {
                return Err(invalid(format!(
                    "Token Authentication failed: Invalid tokenId : {user}"
                )));
            };
            self.token_lifetime_ms = Some(token.lifetime_ms);
            self.authorization_id = Some(token.owner);
            token.credential
        } else {
            let Some(found) = credentials.user(self.mechanism, &user) else {
                return Err(invalid(
                    "Authentication failed: Invalid user credentials".into(),
                ));
            };
            found
        };
        if !client_first.authorization_id.is_empty() && client_first.authorization_id != user {
            return Err(ScramFailure::Authentication(
                "Authentication failed: Client requested an authorization id that is different from username"
                    .into(),
            ));
        }
        let min = self.mechanism.min_iterations();
        if found.iterations < min {
            return Err(invalid(format!(
                "Iterations {} is less than the minimum {min} for {}",
                found.iterations,
                self.mechanism.name()
            )));
        }
        let nonce = format!("{}{}", client_first.nonce, self.server_nonce);
        let first = server_first(&nonce, &found.salt, found.iterations);
        if self.authorization_id.is_none() {
            self.authorization_id = Some(user);
        }
        let out = first.clone().into_bytes();
        self.state = ServerState::ClientFinal(Box::new(PendingFinal {
            client_first,
            server_first: first,
            nonce,
            credential: found,
        }));
        Ok(out)
    }

    fn client_final(
        &mut self,
        token: &[u8],
        client_first: &ClientFirst,
        server_first: &str,
        nonce: &str,
        credential: &ScramCredential,
    ) -> Result<Vec<u8>, ScramFailure> {
        let client_final = ClientFinal::parse(token)?;
        if !client_final.nonce.ends_with(nonce) {
            return Err(invalid(
                "Invalid client nonce in the final client message.".into(),
            ));
        }
        let auth_message = format!(
            "{},{server_first},{}",
            client_first.bare,
            client_final.without_proof()
        );
        let m = self.mechanism;
        let client_signature = m.hmac(&credential.stored_key, auth_message.as_bytes());
        if client_final.proof.len() != client_signature.len() {
            return Err(invalid("Invalid client credentials".into()));
        }
        let computed = m.hash(&xor(&client_final.proof, &client_signature));
        if !crate::security::plain::constant_time_eq(&computed, &credential.stored_key) {
            return Err(invalid("Invalid client credentials".into()));
        }
        let signature = m.hmac(&credential.server_key, auth_message.as_bytes());
        self.token_authenticated = client_first.token_authenticated();
        self.state = ServerState::Complete;
        Ok(format!("v={}", BASE64.encode(signature)).into_bytes())
    }

    /// A token-authenticated exchange's time left on its token.
    pub fn token_lifetime_ms(&self) -> Option<i64> {
        self.token_lifetime_ms
    }

    /// Whether the exchange completed.
    pub fn is_complete(&self) -> bool {
        matches!(self.state, ServerState::Complete)
    }

    /// The authenticated user once complete.
    pub fn authorization_id(&self) -> Option<&str> {
        self.is_complete()
            .then_some(self.authorization_id.as_deref())
            .flatten()
    }

    /// Whether the client authenticated with a delegation token.
    pub fn token_authenticated(&self) -> bool {
        self.token_authenticated
    }
}
