//! SASL/SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), as Kafka's `ScramSaslServer`,
//! `ScramSaslClient`, `ScramMessages` and `ScramFormatter` speak them.
//!
//! ```text
//!   client-first  n,[a=authzid],n=<saslname>,r=<client nonce>[,ext=value…]
//!   server-first  r=<client nonce><server nonce>,s=<base64 salt>,i=<iterations>
//!   client-final  c=<base64 gs2 header>,r=<nonce>,p=<base64 proof>
//!   server-final  v=<base64 server signature>
//! ```
//!
//! The server checks the proof against the stored key of the user's credential (from the
//! metadata image's UserScramCredentialRecord) and answers with its signature; the client
//! checks that signature. Nonces are inputs (no RNG here). Failures carry Kafka's split: a
//! [`ScramFailure::Authentication`] message goes to the client as is; a
//! [`ScramFailure::Invalid`] one (Kafka's plain SaslException) only to the debug log, the
//! client getting the generic "invalid credentials" answer.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256, Sha512};

/// A SCRAM mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ScramMechanism {
    /// SCRAM-SHA-256.
    Sha256,
    /// SCRAM-SHA-512.
    Sha512,
}

impl ScramMechanism {
    /// The mechanism of a Kafka name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "SCRAM-SHA-256" => Some(Self::Sha256),
            "SCRAM-SHA-512" => Some(Self::Sha512),
            _ => None,
        }
    }

    /// Kafka's name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Sha256 => "SCRAM-SHA-256",
            Self::Sha512 => "SCRAM-SHA-512",
        }
    }

    /// The id UserScramCredentialRecord carries (Kafka's `ScramMechanism.type()`).
    pub fn type_id(self) -> i8 {
        match self {
            Self::Sha256 => 1,
            Self::Sha512 => 2,
        }
    }

    /// The mechanism of a record's id.
    pub fn from_type_id(id: i8) -> Option<Self> {
        match id {
            1 => Some(Self::Sha256),
            2 => Some(Self::Sha512),
            _ => None,
        }
    }

    /// Kafka's lowest iteration count (4096 for both).
    pub fn min_iterations(self) -> i32 {
        4096
    }

    /// Kafka's highest iteration count (16384 for both; `ScramControlManager.MAX_ITERATIONS`
    /// too).
    pub fn max_iterations(self) -> i32 {
        16_384
    }

    fn hmac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        // HMAC takes keys of any length, so new_from_slice cannot fail.
        match self {
            Self::Sha256 => Hmac::<Sha256>::new_from_slice(key)
                .map(|mut m| {
                    m.update(data);
                    m.finalize().into_bytes().to_vec()
                })
                .unwrap_or_default(),
            Self::Sha512 => Hmac::<Sha512>::new_from_slice(key)
                .map(|mut m| {
                    m.update(data);
                    m.finalize().into_bytes().to_vec()
                })
                .unwrap_or_default(),
        }
    }

    fn hash(self, data: &[u8]) -> Vec<u8> {
        match self {
            Self::Sha256 => Sha256::digest(data).to_vec(),
            Self::Sha512 => Sha512::digest(data).to_vec(),
        }
    }

    /// RFC 5802's Hi(): PBKDF2 with this mechanism's HMAC, one hash length of output.
    fn salted_password(self, password: &str, salt: &[u8], iterations: i32) -> Vec<u8> {
        let rounds = iterations.max(1) as u32;
        match self {
            Self::Sha256 => {
                let mut out = [0u8; 32];
                pbkdf2::pbkdf2_hmac::<Sha256>(password.as_bytes(), salt, rounds, &mut out);
                out.to_vec()
            }
            Self::Sha512 => {
                let mut out = [0u8; 64];
                pbkdf2::pbkdf2_hmac::<Sha512>(password.as_bytes(), salt, rounds, &mut out);
                out.to_vec()
            }
        }
    }
}

/// What the server stores for a user (the fields of UserScramCredentialRecord).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScramCredential {
    /// The salt.
    pub salt: Vec<u8>,
    /// H(ClientKey).
    pub stored_key: Vec<u8>,
    /// HMAC(SaltedPassword, "Server Key").
    pub server_key: Vec<u8>,
    /// The iteration count.
    pub iterations: i32,
}

impl ScramCredential {
    /// Kafka's `ScramFormatter.generateCredential` with a given salt.
    pub fn from_password(
        mechanism: ScramMechanism,
        password: &str,
        salt: &[u8],
        iterations: i32,
    ) -> Self {
        let salted = mechanism.salted_password(password, salt, iterations);
        Self::from_salted_password(mechanism, &salted, salt, iterations)
    }

    /// The stored and server keys of a salted password, as Kafka's `ScramControlManager`
    /// derives them from an AlterUserScramCredentials upsertion (the client salts).
    pub fn from_salted_password(
        mechanism: ScramMechanism,
        salted_password: &[u8],
        salt: &[u8],
        iterations: i32,
    ) -> Self {
        let client_key = mechanism.hmac(salted_password, b"Client Key");
        Self {
            salt: salt.to_vec(),
            stored_key: mechanism.hash(&client_key),
            server_key: mechanism.hmac(salted_password, b"Server Key"),
            iterations,
        }
    }
}

/// Why an exchange failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScramFailure {
    /// Kafka's SaslAuthenticationException: the message goes to the client.
    #[error("{0}")]
    Authentication(String),
    /// Kafka's SaslException: the client gets only the generic answer; this is for the log.
    #[error("{0}")]
    Invalid(String),
}

fn invalid(message: String) -> ScramFailure {
    ScramFailure::Invalid(message)
}

/// `[\x01-\x7F]` without `excluded`, at least one character.
fn all_in(s: &str, low: u8, excluded: &[u8]) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| (low..=0x7f).contains(&b) && !excluded.contains(&b))
}

/// RFC 5802's saslname: `=2C` and `=3D` are the only `=` allowed.
fn is_sasl_name(s: &str) -> bool {
    let mut rest = s.as_bytes();
    if rest.is_empty() {
        return false;
    }
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'=' {
            if !(tail.starts_with(b"2C") || tail.starts_with(b"3D")) {
                return false;
            }
            rest = &tail[2..];
        } else if (0x01..=0x7f).contains(&b) && b != b',' {
            rest = tail;
        } else {
            return false;
        }
    }
    true
}

fn is_printable(s: &str) -> bool {
    all_in(s, 0x21, b",") && s.bytes().all(|b| b <= 0x7e)
}

/// Strict base64 with padding (the messages' BASE64), decoded.
fn base64(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(4) {
        return None;
    }
    BASE64.decode(s).ok()
}

fn is_extension(field: &str) -> bool {
    field.split_once('=').is_some_and(|(k, v)| {
        !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphabetic()) && all_in(v, 0x01, b",")
    })
}

/// `saslname` → user name (Kafka's `ScramFormatter.username`).
pub fn username(sasl_name: &str) -> String {
    sasl_name.replace("=2C", ",").replace("=3D", "=")
}

/// User name → `saslname` (Kafka's `ScramFormatter.saslName`).
pub fn sasl_name(username: &str) -> String {
    username.replace('=', "=3D").replace(',', "=2C")
}

/// A parsed client-first message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientFirst {
    /// `a=`, or empty.
    pub authorization_id: String,
    /// `n=`, escaped.
    pub sasl_name: String,
    /// `r=`.
    pub nonce: String,
    /// Extensions (`tokenauth=true`, …), in order.
    pub extensions: Vec<(String, String)>,
    /// The message without its gs2 header (for the auth message).
    pub bare: String,
}

impl ClientFirst {
    /// Parses with Kafka's pattern; an invalid one is a SaslException naming the message.
    pub fn parse(bytes: &[u8]) -> Result<Self, ScramFailure> {
        let message = String::from_utf8_lossy(bytes);
        let bad = || {
            invalid(format!(
                "Invalid SCRAM client first message format: {message}"
            ))
        };
        let mut fields = message.split(',');
        if fields.next() != Some("n") {
            return Err(bad());
        }
        let authorization_id = match fields.next() {
            Some("") => String::new(),
            Some(a) => match a.strip_prefix("a=") {
                Some(id) if is_sasl_name(id) => id.to_string(),
                _ => return Err(bad()),
            },
            None => return Err(bad()),
        };
        let rest: Vec<&str> = fields.collect();
        // An optional reserved `m=` field before the name.
        let rest = match rest.first() {
            Some(m) if m.starts_with("m=") && all_in(&m[2..], 0x01, b",") => &rest[1..],
            _ => &rest[..],
        };
        let (Some(n), Some(r)) = (rest.first(), rest.get(1)) else {
            return Err(bad());
        };
        let sasl_name = n
            .strip_prefix("n=")
            .filter(|s| is_sasl_name(s))
            .ok_or_else(bad)?;
        let nonce = r
            .strip_prefix("r=")
            .filter(|s| is_printable(s))
            .ok_or_else(bad)?;
        let mut extensions = Vec::new();
        for field in &rest[2..] {
            if !is_extension(field) {
                return Err(bad());
            }
            let (k, v) = field.split_once('=').unwrap_or_default();
            extensions.push((k.to_string(), v.to_string()));
        }
        Ok(Self {
            authorization_id,
            sasl_name: sasl_name.to_string(),
            nonce: nonce.to_string(),
            extensions,
            bare: rest.join(","),
        })
    }

    fn token_authenticated(&self) -> bool {
        self.extensions
            .iter()
            .any(|(k, v)| k == "tokenauth" && v.eq_ignore_ascii_case("true"))
    }
}

/// A parsed client-final message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientFinal {
    /// `c=`, decoded.
    pub channel_binding: Vec<u8>,
    /// `r=`.
    pub nonce: String,
    /// `p=`, decoded.
    pub proof: Vec<u8>,
}

impl ClientFinal {
    /// Parses with Kafka's pattern.
    pub fn parse(bytes: &[u8]) -> Result<Self, ScramFailure> {
        let message = String::from_utf8_lossy(bytes);
        let bad = || {
            invalid(format!(
                "Invalid SCRAM client final message format: {message}"
            ))
        };
        let fields: Vec<&str> = message.split(',').collect();
        if fields.len() < 3 {
            return Err(bad());
        }
        let channel_binding = fields[0]
            .strip_prefix("c=")
            .and_then(base64)
            .ok_or_else(bad)?;
        let nonce = fields[1]
            .strip_prefix("r=")
            .filter(|s| is_printable(s))
            .ok_or_else(bad)?;
        let last = fields.len() - 1;
        if !fields[2..last].iter().all(|f| is_extension(f)) {
            return Err(bad());
        }
        let proof = fields[last]
            .strip_prefix("p=")
            .and_then(base64)
            .ok_or_else(bad)?;
        Ok(Self {
            channel_binding,
            nonce: nonce.to_string(),
            proof,
        })
    }

    /// What the auth message holds of it (Kafka's: `c=…,r=…`, extensions left out).
    fn without_proof(&self) -> String {
        format!(
            "c={},r={}",
            BASE64.encode(&self.channel_binding),
            self.nonce
        )
    }
}

fn server_first(nonce: &str, salt: &[u8], iterations: i32) -> String {
    format!("r={nonce},s={},i={iterations}", BASE64.encode(salt))
}

fn xor(a: &[u8], b: &[u8]) -> Vec<u8> {
    a.iter().zip(b).map(|(x, y)| x ^ y).collect()
}

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

/// A delegation token as a SCRAM exchange with `tokenauth=true` authenticates against it
/// (Kafka's DelegationTokenCache): the credential made from its HMAC (the client's password is
/// the HMAC in base64, its user name the token id), the owner's name (the principal), and the
/// time it has left, which bounds the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TokenCredential {
    /// The credential of the token's HMAC.
    pub credential: ScramCredential,
    /// The owner's principal name.
    pub owner: String,
    /// Milliseconds until the token expires (negative once past).
    pub lifetime_ms: i64,
}

impl TokenCredential {
    /// The credential of the token `token_id` whose HMAC, in base64, is `hmac_base64` (the
    /// client's password), at the mechanism's minimum iterations as Kafka's
    /// DelegationTokenManager makes it. Kafka salts it at random when it caches the token; the
    /// password is an unguessable HMAC, so a salt derived from the token id serves as well.
    pub fn new(
        mechanism: ScramMechanism,
        token_id: &str,
        hmac_base64: &str,
        owner: String,
        lifetime_ms: i64,
    ) -> Self {
        let digest = mechanism.hash(token_id.as_bytes());
        let salt = &digest[..16.min(digest.len())];
        Self {
            credential: ScramCredential::from_password(
                mechanism,
                hmac_base64,
                salt,
                mechanism.min_iterations(),
            ),
            owner,
            lifetime_ms,
        }
    }
}

/// Where a SCRAM exchange finds what it checks: users' credentials (the metadata image's) and
/// delegation tokens.
pub trait ScramCredentials {
    /// The credential of `user` for `mechanism`.
    fn user(&self, mechanism: ScramMechanism, user: &str) -> Option<ScramCredential>;
    /// The delegation token `token_id`, made into a credential for `mechanism`.
    fn token(&self, mechanism: ScramMechanism, token_id: &str) -> Option<TokenCredential>;
}

/// A user lookup alone (no delegation tokens), as tests and token-less callers give it.
impl<F> ScramCredentials for F
where
    F: Fn(ScramMechanism, &str) -> Option<ScramCredential>,
{
    fn user(&self, mechanism: ScramMechanism, user: &str) -> Option<ScramCredential> {
        self(mechanism, user)
    }

    fn token(&self, _mechanism: ScramMechanism, _token_id: &str) -> Option<TokenCredential> {
        None
    }
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
        if !super::plain::constant_time_eq(&computed, &credential.stored_key) {
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
        if !super::plain::constant_time_eq(&signature, expected) {
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

#[cfg(test)]
#[path = "scram_tests.rs"]
mod tests;
