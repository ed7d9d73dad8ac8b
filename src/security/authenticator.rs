//! The server side of SASL on one connection, as Kafka's `SaslServerAuthenticator` and the
//! re-authentication rules of its `KafkaChannel` and `SocketServer`.
//!
//! ```text
//!   HandshakeOrVersions ─ApiVersions (valid)─▶ HandshakeRequest
//!        │                                         │
//!        └──────────SaslHandshake (enabled)────────┴─▶ Authenticate ─token…─▶ Complete
//!   Complete ─SaslHandshake (session expires, ≥ 1 s since the last)─▶ Authenticate (re-auth)
//!   any refusal ─▶ Failed (the connection answers, if there is an answer, then closes)
//! ```
//!
//! A SaslHandshake v0 means raw SASL tokens follow (size-prefixed, without a Kafka header);
//! v1 means SaslAuthenticate requests. The connection asks [`SaslServerAuthenticator::
//! expects_raw_token`] before it decodes a frame.

use std::collections::BTreeMap;

use bytes::Bytes;
use kafka_protocol::messages::{
    ApiKey, SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest,
    SaslHandshakeResponse,
};
use kafka_protocol::protocol::StrBytes;

use super::scram::{ScramCredentials, ScramFailure, ScramServer};
use super::{
    plain, Principal, SaslMechanism, SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM,
};
use crate::codec::api_versions::is_valid_request;
use crate::codec::request::InboundRequest;
use crate::codec::{RequestBody, ResponseBody};
use crate::common::secret::Secret;

/// Kafka's `KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS`: a client may start a
/// re-authentication at most once a second; a sooner SaslHandshake goes to the handler.
pub const MIN_REAUTH_INTERVAL_MS: u64 = 1_000;

/// What a listener's SASL needs (from `config::sasl`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaslServerSettings {
    /// `sasl.enabled.mechanisms`, deduplicated and in the order Kafka lists them.
    pub enabled_mechanisms: Vec<SaslMechanism>,
    /// PLAIN's users: the `user_<name>` options of the PlainLoginModule.
    pub plain_users: BTreeMap<String, Secret>,
    /// `connections.max.reauth.ms` per mechanism (0: sessions do not expire).
    pub max_reauth_ms: BTreeMap<SaslMechanism, u64>,
    /// The highest ApiVersions version the node answers (its release's).
    pub api_versions_max_version: i16,
}

/// A response to write: its body, version and correlation id.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The body.
    pub body: ResponseBody,
    /// The request's version.
    pub version: i16,
    /// The request's correlation id.
    pub correlation_id: i32,
}

/// What the connection does with a frame.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Serve the request as any other (ApiVersions before the handshake, and every request once
    /// authenticated).
    Forward(InboundRequest),
    /// Write this and read on.
    Respond(Reply),
    /// Write this raw token (size-prefixed, no header: SaslHandshake v0) and read on.
    RespondRaw(Bytes),
    /// Write this (if any) and serve the connection as `principal` from now on.
    Authenticated {
        /// The last response of the exchange (`None` after a raw-token exchange that ends
        /// without a token).
        reply: Option<Reply>,
        /// Or its raw token.
        raw: Option<Bytes>,
        /// Who the connection is.
        principal: Principal,
    },
    /// An authentication failure (Kafka's AuthenticationException): logged at INFO with the
    /// peer, answered with `reply` after `connection.failed.authentication.delay.ms`, closed.
    Fail {
        /// The answer, if Kafka sends one.
        reply: Option<Reply>,
        /// Kafka's message.
        reason: String,
    },
    /// Any other failure: closed at once without an answer, logged at debug.
    Close {
        /// Why.
        reason: String,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    HandshakeOrVersions,
    HandshakeRequest,
    Authenticate,
    ReauthBadMechanism,
    Complete,
    Failed,
}

enum Exchange {
    Plain,
    Scram(Box<ScramServer>),
}

/// One connection's authenticator.
pub struct SaslServerAuthenticator {
    settings: std::sync::Arc<SaslServerSettings>,
    state: State,
    /// SaslHandshake v1+: SaslAuthenticate requests; v0: raw tokens.
    kafka_headers: bool,
    mechanism: Option<SaslMechanism>,
    exchange: Option<Exchange>,
    /// Set once authenticated; kept through a re-authentication to check it does not change.
    principal: Option<Principal>,
    reauthenticating: bool,
    /// A SaslAuthenticate of v1+ was seen (Kafka's `connectedClientSupportsReauthentication`).
    client_supports_reauth: bool,
    session_expiry_ms: Option<u64>,
    /// The session lifetime told to the client (0: none).
    session_lifetime_ms: u64,
    /// A token-authenticated exchange's time left on its token.
    token_lifetime_ms: Option<i64>,
    last_reauth_start_ms: Option<u64>,
    bad_mechanism_message: String,
}

impl std::fmt::Debug for SaslServerAuthenticator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SaslServerAuthenticator")
            .field("state", &self.state)
            .field("mechanism", &self.mechanism)
            .field("principal", &self.principal)
            .finish_non_exhaustive()
    }
}

fn handshake_reply(error_code: i16, mechanisms: &[SaslMechanism]) -> SaslHandshakeResponse {
    SaslHandshakeResponse::default()
        .with_error_code(error_code)
        .with_mechanisms(
            mechanisms
                .iter()
                .map(|m| StrBytes::from_static_str(m.name()))
                .collect(),
        )
}

fn auth_failure(message: String) -> SaslAuthenticateResponse {
    SaslAuthenticateResponse::default()
        .with_error_code(SASL_AUTHENTICATION_FAILED)
        .with_error_message(Some(StrBytes::from_string(message)))
}

impl SaslServerAuthenticator {
    /// A fresh connection's authenticator.
    pub fn new(settings: std::sync::Arc<SaslServerSettings>) -> Self {
        Self {
            settings,
            state: State::HandshakeOrVersions,
            kafka_headers: false,
            mechanism: None,
            exchange: None,
            principal: None,
            reauthenticating: false,
            client_supports_reauth: false,
            session_expiry_ms: None,
            session_lifetime_ms: 0,
            token_lifetime_ms: None,
            last_reauth_start_ms: None,
            bad_mechanism_message: String::new(),
        }
    }

    /// Whether the connection serves requests as an authenticated principal.
    pub fn is_complete(&self) -> bool {
        self.state == State::Complete
    }

    /// The authenticated principal.
    pub fn principal(&self) -> Option<&Principal> {
        self.principal.as_ref()
    }

    /// Whether the next frame is a raw SASL token (after a SaslHandshake v0).
    pub fn expects_raw_token(&self) -> bool {
        matches!(self.state, State::Authenticate | State::ReauthBadMechanism) && !self.kafka_headers
    }

    /// Whether the session has expired at `now_ms` (Kafka's
    /// `serverAuthenticationSessionExpired`): the connection is then closed on its next request.
    pub fn session_expired(&self, now_ms: u64) -> bool {
        self.state == State::Complete && self.session_expiry_ms.is_some_and(|e| now_ms > e)
    }

    /// When the session expires, if it does.
    pub fn session_expiry_ms(&self) -> Option<u64> {
        self.session_expiry_ms
    }

    /// Whether the client has shown it can re-authenticate (a SaslAuthenticate v1+).
    pub fn client_supports_reauthentication(&self) -> bool {
        self.client_supports_reauth
    }

    /// A decoded request, in any state. `scram` looks up a credential in the committed image.
    pub fn on_request(
        &mut self,
        request: InboundRequest,
        now_ms: u64,
        scram: &dyn ScramCredentials,
    ) -> Step {
        match self.state {
            State::Complete => self.on_authenticated_request(request, now_ms),
            State::HandshakeOrVersions | State::HandshakeRequest => self.on_handshake(request),
            State::Authenticate => self.on_authenticate(request, now_ms, scram),
            State::ReauthBadMechanism => self.fail(None, self.bad_mechanism_message.clone()),
            State::Failed => Step::Close {
                reason: "a request after a failed authentication".into(),
            },
        }
    }

    /// A raw token (SaslHandshake v0).
    pub fn on_token(&mut self, token: &[u8], now_ms: u64, scram: &dyn ScramCredentials) -> Step {
        if self.state == State::ReauthBadMechanism {
            return self.fail(None, self.bad_mechanism_message.clone());
        }
        if self.state != State::Authenticate {
            return Step::Close {
                reason: format!("a raw SASL token in state {:?}", self.state),
            };
        }
        match self.evaluate(token, scram) {
            Ok((response, done)) => {
                let raw = Bytes::from(response);
                match done {
                    None => Step::RespondRaw(raw),
                    Some(principal) => match self.complete(principal, now_ms) {
                        Ok(principal) => Step::Authenticated {
                            reply: None,
                            raw: Some(raw),
                            principal,
                        },
                        Err(message) => self.fail(None, message),
                    },
                }
            }
            // Without Kafka headers there is no error response to send.
            Err(failure) => {
                let message = self.failure_message(failure);
                self.fail(None, message)
            }
        }
    }

    fn on_authenticated_request(&mut self, request: InboundRequest, now_ms: u64) -> Step {
        let is_handshake = matches!(
            &request,
            InboundRequest::Request {
                body: RequestBody::SaslHandshake(_),
                ..
            }
        );
        let may_reauth = self.session_expiry_ms.is_some()
            && self
                .last_reauth_start_ms
                .is_none_or(|t| now_ms.saturating_sub(t) >= MIN_REAUTH_INTERVAL_MS);
        if !is_handshake || !may_reauth {
            // The handler answers a handshake out of place with ILLEGAL_SASL_STATE.
            return Step::Forward(request);
        }
        self.last_reauth_start_ms = Some(now_ms);
        self.reauthenticating = true;
        self.exchange = None;
        self.state = State::HandshakeRequest;
        self.on_handshake(request)
    }

    fn on_handshake(&mut self, request: InboundRequest) -> Step {
        let (header, body) = match request {
            InboundRequest::UnsupportedApiVersions { .. } if !self.reauthenticating => {
                return self.api_versions(request, false)
            }
            InboundRequest::UnsupportedApiVersions { header } => {
                let reason = format!(
                    "Unexpected Kafka request of type {} during SASL handshake.",
                    api_name(header.api_key)
                );
                return self.fail(None, reason);
            }
            InboundRequest::Request { header, body } => (header, body),
        };
        match body {
            RequestBody::ApiVersions(req) if !self.reauthenticating => {
                let valid = header.api_version <= self.settings.api_versions_max_version
                    && is_valid_request(&req, header.api_version);
                self.api_versions(
                    InboundRequest::Request {
                        header,
                        body: RequestBody::ApiVersions(req),
                    },
                    valid,
                )
            }
            RequestBody::SaslHandshake(req) => {
                self.handshake(&req, header.api_version, header.correlation_id)
            }
            other => {
                let reason = format!(
                    "Unexpected Kafka request of type {} during SASL handshake.",
                    api_name(other.api_key())
                );
                self.fail(None, reason)
            }
        }
    }

    /// ApiVersions before the handshake: answered by the handler; a valid one moves on to the
    /// handshake, an invalid or unknown version leaves the state as it was (the client retries).
    fn api_versions(&mut self, request: InboundRequest, valid: bool) -> Step {
        if self.state == State::HandshakeRequest {
            self.state = State::Failed;
            return Step::Close {
                reason: "Unexpected ApiVersions request received during SASL authentication state HANDSHAKE_REQUEST".into(),
            };
        }
        if valid {
            self.state = State::HandshakeRequest;
        }
        Step::Forward(request)
    }

    fn handshake(&mut self, req: &SaslHandshakeRequest, version: i16, correlation_id: i32) -> Step {
        self.kafka_headers = version >= 1;
        let enabled = &self.settings.enabled_mechanisms;
        let chosen =
            SaslMechanism::from_name(req.mechanism.as_str()).filter(|m| enabled.contains(m));
        let Some(mechanism) = chosen else {
            let reply = Reply {
                body: ResponseBody::SaslHandshake(handshake_reply(
                    UNSUPPORTED_SASL_MECHANISM,
                    enabled,
                )),
                version,
                correlation_id,
            };
            return self.fail(
                Some(reply),
                format!("Unsupported SASL mechanism {}", req.mechanism.as_str()),
            );
        };
        let reply = Reply {
            body: ResponseBody::SaslHandshake(handshake_reply(0, enabled)),
            version,
            correlation_id,
        };
        if self.reauthenticating && self.mechanism != Some(mechanism) {
            let previous = self.mechanism.map_or("", SaslMechanism::name);
            self.bad_mechanism_message = format!(
                "SASL mechanism '{}' requested by client is not supported for re-authentication of mechanism '{previous}'",
                mechanism.name()
            );
            self.state = State::ReauthBadMechanism;
            return Step::Respond(reply);
        }
        self.mechanism = Some(mechanism);
        self.exchange = None;
        self.state = State::Authenticate;
        Step::Respond(reply)
    }

    fn on_authenticate(
        &mut self,
        request: InboundRequest,
        now_ms: u64,
        scram: &dyn ScramCredentials,
    ) -> Step {
        let (header, body) = match request {
            InboundRequest::Request { header, body } => (header, body),
            InboundRequest::UnsupportedApiVersions { header } => {
                let reason = format!(
                    "Unexpected Kafka request of type {} during SASL authentication.",
                    api_name(header.api_key)
                );
                return self.fail(None, reason);
            }
        };
        let req: SaslAuthenticateRequest = match body {
            RequestBody::SaslAuthenticate(req) => req,
            other => {
                // Kafka answers with the request's own error response (ILLEGAL_SASL_STATE),
                // then closes.
                let reason = format!(
                    "Unexpected Kafka request of type {} during SASL authentication.",
                    api_name(other.api_key())
                );
                let error =
                    crate::common::errors::ApiError::new(super::ILLEGAL_SASL_STATE, reason.clone());
                let reply = Reply {
                    body: crate::codec::error_response::error_response(
                        &other,
                        header.api_version,
                        &error,
                    ),
                    version: header.api_version,
                    correlation_id: header.correlation_id,
                };
                return self.fail(Some(reply), reason);
            }
        };
        let (version, correlation_id) = (header.api_version, header.correlation_id);
        self.client_supports_reauth |= version > 0;
        let reply = |body: SaslAuthenticateResponse| Reply {
            body: ResponseBody::SaslAuthenticate(body),
            version,
            correlation_id,
        };
        match self.evaluate(&req.auth_bytes, scram) {
            Ok((token, None)) => Step::Respond(reply(
                SaslAuthenticateResponse::default().with_auth_bytes(Bytes::from(token)),
            )),
            Ok((token, Some(principal))) => match self.complete(principal, now_ms) {
                Ok(principal) => {
                    // Kafka's answer: connections.max.reauth.ms, bounded by a delegation
                    // token's time left; 0 when sessions do not expire.
                    let lifetime_ms = self.session_lifetime_ms;
                    Step::Authenticated {
                        reply: Some(reply(
                            SaslAuthenticateResponse::default()
                                .with_auth_bytes(Bytes::from(token))
                                .with_session_lifetime_ms(lifetime_ms as i64),
                        )),
                        raw: None,
                        principal,
                    }
                }
                Err(message) => self.fail(Some(reply(auth_failure(message.clone()))), message),
            },
            Err(failure) => {
                let message = self.failure_message(failure);
                self.fail(Some(reply(auth_failure(message.clone()))), message)
            }
        }
    }

    /// One token through the mechanism: the response token, and the principal once complete.
    fn evaluate(
        &mut self,
        token: &[u8],
        scram: &dyn ScramCredentials,
    ) -> Result<(Vec<u8>, Option<Principal>), ScramFailure> {
        let mechanism = self
            .mechanism
            .ok_or_else(|| ScramFailure::Invalid("no mechanism chosen".into()))?;
        if self.exchange.is_none() {
            match mechanism {
                SaslMechanism::Plain => self.exchange = Some(Exchange::Plain),
                // The connection supplies the nonce first (`needs_scram_nonce`).
                SaslMechanism::Scram(_) => {
                    return Err(ScramFailure::Invalid("no server nonce was supplied".into()))
                }
            }
        }
        let Some(exchange) = self.exchange.as_mut() else {
            return Err(ScramFailure::Invalid("no exchange".into()));
        };
        match exchange {
            Exchange::Plain => {
                let user = plain::evaluate(token, &self.settings.plain_users)
                    .map_err(ScramFailure::Authentication)?;
                Ok((Vec::new(), Some(Principal::user(&user))))
            }
            Exchange::Scram(server) => {
                let SaslMechanism::Scram(_) = mechanism else {
                    return Err(ScramFailure::Invalid("mechanism changed".into()));
                };
                let response = server.evaluate_with(token, scram)?;
                if !server.is_complete() {
                    return Ok((response, None));
                }
                let name = server.authorization_id().unwrap_or_default().to_string();
                let mut principal = Principal::user(&name);
                principal.token_authenticated = server.token_authenticated();
                self.token_lifetime_ms = server.token_lifetime_ms();
                Ok((response, Some(principal)))
            }
        }
    }

    /// Sets the server nonce of a SCRAM exchange before its first token (randomness is the
    /// caller's input).
    pub fn set_scram_nonce(&mut self, nonce: String) {
        if let Some(SaslMechanism::Scram(m)) = self.mechanism {
            if self.exchange.is_none() {
                self.exchange = Some(Exchange::Scram(Box::new(ScramServer::new(m, nonce))));
            }
        }
    }

    /// Whether the next token starts a SCRAM exchange (the connection then supplies a nonce).
    pub fn needs_scram_nonce(&self) -> bool {
        self.state == State::Authenticate
            && self.exchange.is_none()
            && matches!(self.mechanism, Some(SaslMechanism::Scram(_)))
    }

    fn complete(&mut self, principal: Principal, now_ms: u64) -> Result<Principal, String> {
        if self.reauthenticating {
            if let Some(previous) = &self.principal {
                if previous != &principal {
                    return Err(format!(
                        "Cannot change principals during re-authentication from {}.{}: {}.{}",
                        previous.principal_type,
                        previous.name,
                        principal.principal_type,
                        principal.name
                    ));
                }
            }
        }
        // Kafka's SaslServerAuthenticator: the session ends at connections.max.reauth.ms or
        // when the credential (a delegation token) expires, whichever comes first.
        let max_reauth_ms = self.max_reauth_ms();
        let lifetime_ms = match self.token_lifetime_ms.take() {
            None if max_reauth_ms == 0 => None,
            None => Some(max_reauth_ms),
            Some(token_ms) => {
                let token_ms = u64::try_from(token_ms).unwrap_or(0);
                Some(if max_reauth_ms == 0 {
                    token_ms
                } else {
                    token_ms.min(max_reauth_ms)
                })
            }
        };
        self.session_lifetime_ms = lifetime_ms.unwrap_or(0);
        self.session_expiry_ms = lifetime_ms.map(|l| now_ms + l);
        self.principal = Some(principal.clone());
        self.reauthenticating = false;
        self.exchange = None;
        self.state = State::Complete;
        Ok(principal)
    }

    fn max_reauth_ms(&self) -> u64 {
        self.mechanism
            .and_then(|m| self.settings.max_reauth_ms.get(&m).copied())
            .unwrap_or(0)
    }

    fn failure_message(&self, failure: ScramFailure) -> String {
        match failure {
            ScramFailure::Authentication(message) => message,
            // Kafka keeps a SaslException's own text from the client: it may tell whether a
            // user exists.
            ScramFailure::Invalid(detail) => {
                tracing::debug!("SASL exchange failed: {detail}");
                format!(
                    "Authentication failed during {} due to invalid credentials with SASL mechanism {}",
                    if self.reauthenticating { "re-authentication" } else { "authentication" },
                    self.mechanism.map_or("", SaslMechanism::name)
                )
            }
        }
    }

    fn fail(&mut self, reply: Option<Reply>, reason: String) -> Step {
        self.state = State::Failed;
        Step::Fail { reply, reason }
    }
}

/// Kafka's `ApiKeys` enum name of an API (`METADATA`, `FETCH`), as its messages print it.
pub(crate) fn api_name(key: ApiKey) -> String {
    let debug = format!("{key:?}");
    let mut out = String::with_capacity(debug.len() + 4);
    for (i, c) in debug.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}
