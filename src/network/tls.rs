//! TLS for SSL listeners (inbound) and connections to peers (outbound), with rustls.
//!
//! ```text
//!   SslConfig ─tls_stores::load─▶ identity + trusted certificates
//!     ─server_config─▶ TlsAcceptor   (listener: handshake within HANDSHAKE_TIMEOUT, then serve)
//!     ─client_config─▶ TlsConnector  (peers: server name = the host dialled)
//! ```
//!
//! Protocol versions and cipher suites are those `ssl.enabled.protocols` / `ssl.cipher.suites`
//! allow, from the ring provider. Client certificates are checked against the trust store as
//! `ssl.client.auth` says; a peer's server certificate is checked against it always, and its
//! host name too unless `ssl.endpoint.identification.algorithm` is empty.

use std::sync::Arc;
use std::time::Duration;

use rustls_pki_types::{CertificateDer, ServerName, UnixTime};
use tokio_rustls::rustls::client::danger::{
    HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier,
};
use tokio_rustls::rustls::client::WebPkiServerVerifier;
use tokio_rustls::rustls::crypto::{ring, CryptoProvider};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{
    self, CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, ServerConfig,
    SignatureScheme, SupportedProtocolVersion,
};
use tokio_rustls::{TlsAcceptor, TlsConnector};

use super::tls_settings::{ClientAuth, InvalidSetting, SslConfig, TlsVersion};
use super::tls_stores;

/// How long an inbound TLS handshake may take before the connection is closed: a peer that
/// opens a connection and sends nothing (or part of a ClientHello) must not hold its slot.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

fn tls_error(ssl: &SslConfig, e: impl std::fmt::Display) -> InvalidSetting {
    InvalidSetting {
        key: format!("listener.name.{}.ssl.*", ssl.listener.to_ascii_lowercase()),
        value: String::new(),
        reason: format!("cannot build the TLS configuration: {e}"),
    }
}

/// The ring provider restricted to `ssl.cipher.suites` (all of its suites when not set).
fn provider(ssl: &SslConfig) -> Arc<CryptoProvider> {
    let mut p = ring::default_provider();
    if !ssl.cipher_suites.is_empty() {
        // In the order given, as Java prefers the configured order.
        p.cipher_suites = ssl
            .cipher_suites
            .iter()
            .filter_map(|name| {
                ring::ALL_CIPHER_SUITES
                    .iter()
                    .find(|s| s.suite().as_str() == Some(name.as_str()))
                    .copied()
            })
            .collect();
    }
    Arc::new(p)
}

fn versions(protocols: &[TlsVersion]) -> Vec<&'static SupportedProtocolVersion> {
    protocols
        .iter()
        .map(|v| match v {
            TlsVersion::Tls12 => &rustls::version::TLS12,
            TlsVersion::Tls13 => &rustls::version::TLS13,
        })
        .collect()
}

fn roots(
    ssl: &SslConfig,
    trusted: Vec<CertificateDer<'static>>,
) -> Result<Arc<RootCertStore>, InvalidSetting> {
    let mut roots = RootCertStore::empty();
    for cert in trusted {
        roots
            .add(cert)
            .map_err(|e| tls_error(ssl, format!("a trusted certificate is unusable: {e}")))?;
    }
    Ok(Arc::new(roots))
}

/// The acceptor of an SSL listener.
pub fn acceptor(ssl: &SslConfig) -> Result<TlsAcceptor, InvalidSetting> {
    let (identity, trusted) = tls_stores::load(ssl)?;
    let Some(identity) = identity else {
        return Err(InvalidSetting {
            key: "ssl.keystore.location".into(),
            value: String::new(),
            reason: format!("listener {} uses SSL and needs a key store", ssl.listener),
        });
    };
    let provider = provider(ssl);
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions(&ssl.enabled_protocols))
        .map_err(|e| tls_error(ssl, e))?;
    let builder = match ssl.client_auth {
        ClientAuth::None => builder.with_no_client_auth(),
        auth => {
            let verifier =
                WebPkiClientVerifier::builder_with_provider(roots(ssl, trusted)?, provider);
            let verifier = if auth == ClientAuth::Requested {
                verifier.allow_unauthenticated()
            } else {
                verifier
            };
            builder.with_client_cert_verifier(verifier.build().map_err(|e| tls_error(ssl, e))?)
        }
    };
    let config = builder
        .with_single_cert(identity.chain, identity.key)
        .map_err(|e| tls_error(ssl, format!("the key store's key and certificate: {e}")))?;
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// The connector for peers when the first controller listener is SSL: it checks the peer
/// against the trust store and presents the key store's certificate, if any.
pub fn connector(ssl: &SslConfig) -> Result<TlsConnector, InvalidSetting> {
    let (identity, trusted) = tls_stores::load(ssl)?;
    if trusted.is_empty() {
        // Java falls back to the JVM's default CA list here; ferrokraft has none of its own.
        return Err(InvalidSetting {
            key: "ssl.truststore.location".into(),
            value: String::new(),
            reason: format!(
                "listener {} uses SSL and this node dials its peers on it: a trust store \
                 (ssl.truststore.location or ssl.truststore.certificates) is needed to check them",
                ssl.listener
            ),
        });
    }
    let provider = provider(ssl);
    let webpki =
        WebPkiServerVerifier::builder_with_provider(roots(ssl, trusted)?, provider.clone())
            .build()
            .map_err(|e| tls_error(ssl, e))?;
    let builder = ClientConfig::builder_with_provider(provider)
        .with_protocol_versions(&versions(&ssl.client_protocols))
        .map_err(|e| tls_error(ssl, e))?;
    let builder = if ssl.verify_hostname {
        builder.with_webpki_verifier(webpki)
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(ChainOnly(webpki)))
    };
    let config = match identity {
        Some(id) => builder
            .with_client_auth_cert(id.chain, id.key)
            .map_err(|e| tls_error(ssl, format!("the key store's key and certificate: {e}")))?,
        None => builder.with_no_client_auth(),
    };
    Ok(TlsConnector::from(Arc::new(config)))
}

/// How peers are dialled when the first controller listener is SSL.
#[derive(Clone)]
pub struct PeerTls(pub TlsConnector);

impl std::fmt::Debug for PeerTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PeerTls")
    }
}

/// The server name to check a peer's certificate for: the host dialled (an IP address checks
/// an IP address SAN).
pub fn server_name(host: &str) -> Result<ServerName<'static>, String> {
    let trimmed = host.trim_start_matches('[').trim_end_matches(']');
    ServerName::try_from(trimmed.to_string())
        .map_err(|e| format!("{host} is not a valid TLS server name: {e}"))
}

/// `ssl.endpoint.identification.algorithm=` (empty): the chain is checked, the name is not.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}
