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
//!
//! The mechanisms, credentials and Kafka's `ScramFormatter` are here; `messages` is the
//! message grammar, `server` and `client` the two sides of an exchange.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256, Sha512};

mod client;
mod messages;
mod server;

pub use client::ScramClient;
pub use messages::{ClientFinal, ClientFirst};
pub use server::ScramServer;

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

/// Bytewise XOR (RFC 5802's ClientProof and its inverse).
fn xor(a: &[u8], b: &[u8]) -> Vec<u8> {
    a.iter().zip(b).map(|(x, y)| x ^ y).collect()
}

/// `saslname` → user name (Kafka's `ScramFormatter.username`).
pub fn username(sasl_name: &str) -> String {
    sasl_name.replace("=2C", ",").replace("=3D", "=")
}

/// User name → `saslname` (Kafka's `ScramFormatter.saslName`).
pub fn sasl_name(username: &str) -> String {
    username.replace('=', "=3D").replace(',', "=2C")
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

#[cfg(test)]
mod tests;
