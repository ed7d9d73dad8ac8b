//! The TLS settings of an SSL listener, as the network layer uses them: where the key store
//! and trust store are, which protocol versions and cipher suites are allowed, whether client
//! certificates are asked for. `config::ssl` reads them from the `ssl.*` keys; `tls_stores`
//! loads the stores and `tls` builds rustls's configurations from them.

use std::path::PathBuf;

use crate::common::secret::Secret;

/// A setting whose value cannot be used, naming the key (the same words as a configuration
/// error: it is one, found when the node builds its TLS configuration).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("Invalid value {value} for configuration {key}: {reason}")]
pub struct InvalidSetting {
    /// The key.
    pub key: String,
    /// The value as given.
    pub value: String,
    /// Why it cannot be used.
    pub reason: String,
}

impl InvalidSetting {
    /// The setting `key` = `value` refused for `reason`.
    pub fn new(key: &str, value: &str, reason: impl Into<String>) -> Self {
        Self {
            key: key.to_string(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}

/// The format of a key store or trust store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreType {
    /// PEM text: certificates and (for a key store) one PKCS#8 private key.
    Pem,
    /// A PKCS#12 file.
    Pkcs12,
    /// JKS, Kafka's default type. The JDK's compatibility mode (`keystore.type.compat=true`,
    /// its default) reads a PKCS12 file under this type too, so a Kafka configuration may name
    /// a PKCS12 file so; ferrokraft reads such a file as PKCS12 and refuses a JKS file when it
    /// loads the store (`network::tls_stores`).
    Jks,
}

/// Where this node's certificate and private key come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyStore {
    /// A file (`ssl.keystore.location`): PEM with the key and chain, or PKCS12.
    File {
        /// The format.
        store_type: StoreType,
        /// The file.
        location: PathBuf,
        /// `ssl.keystore.password` (PKCS12 only; Kafka refuses it with PEM).
        password: Option<Secret>,
        /// `ssl.key.password`: decrypts an encrypted PEM key; for PKCS12 Kafka falls back to
        /// the store password.
        key_password: Option<Secret>,
    },
    /// Inline PEM (`ssl.keystore.key` and `ssl.keystore.certificate.chain`).
    InlinePem {
        /// The private key, PEM.
        key: Secret,
        /// The certificate chain, PEM, leaf first (PASSWORD-typed in Kafka too).
        chain: Secret,
        /// `ssl.key.password`, for an encrypted key.
        key_password: Option<Secret>,
    },
}

/// Where the certificates this node trusts come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustStore {
    /// A file (`ssl.truststore.location`).
    File {
        /// The format.
        store_type: StoreType,
        /// The file.
        location: PathBuf,
        /// `ssl.truststore.password` (PKCS12 only).
        password: Option<Secret>,
    },
    /// Inline PEM certificates (`ssl.truststore.certificates`, PASSWORD-typed in Kafka).
    InlinePem(Secret),
}

/// `ssl.client.auth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClientAuth {
    /// No client certificate asked for (Kafka's default).
    None,
    /// Asked for; a client without one is still served.
    Requested,
    /// A client without a certificate the trust store vouches for is refused.
    Required,
}

/// A TLS protocol version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum TlsVersion {
    /// TLSv1.2.
    Tls12,
    /// TLSv1.3.
    Tls13,
}

/// The TLS settings of one SSL listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SslConfig {
    /// The listener (upper case).
    pub listener: String,
    /// This node's certificate and key; a listener cannot serve TLS without it.
    pub keystore: Option<KeyStore>,
    /// The certificates trusted for peers (and clients when they must present one).
    pub truststore: Option<TrustStore>,
    /// `ssl.client.auth` (default none).
    pub client_auth: ClientAuth,
    /// `ssl.enabled.protocols` (default TLSv1.2,TLSv1.3), ascending, no repeats.
    pub enabled_protocols: Vec<TlsVersion>,
    /// The versions this node offers when it dials peers: `enabled_protocols`, less TLSv1.3
    /// when `ssl.protocol=TLSv1.2` (as Kafka documents for clients).
    pub client_protocols: Vec<TlsVersion>,
    /// `ssl.cipher.suites` as rustls names (empty: rustls's defaults for the protocols).
    pub cipher_suites: Vec<String>,
    /// `ssl.endpoint.identification.algorithm`: `https` (default) checks that a peer's
    /// certificate names the host dialled; empty checks only its chain.
    pub verify_hostname: bool,
    /// `ssl.principal.mapping.rules` (default `DEFAULT`): how an SSL client's certificate
    /// subject becomes its principal's name (SSL listeners only; SASL_SSL clients are who
    /// they authenticate as).
    pub principal_mapper: crate::security::ssl_principal::SslPrincipalMapper,
}

/// The refusal of a store file that is really JKS (found when it is loaded).
pub fn jks_refused(key: &str, value: &str) -> InvalidSetting {
    InvalidSetting::new(
        key,
        value,
        "this is a JKS store, which ferrokraft cannot read; convert it to PKCS12 (keytool \
         -importkeystore -deststoretype PKCS12) or use PEM, and set the type accordingly",
    )
}
