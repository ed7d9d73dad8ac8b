#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::disallowed_methods,
    missing_docs
)]
//! Certificates made by the tests (rcgen) and a blocking TLS client (rustls) that speaks just
//! enough of Kafka's protocol (ApiVersions v0) to show a listener serves.
//!
//! One CA signs every node's certificate (SANs 127.0.0.1 and localhost, usable as server and
//! client certificate); a second CA and an expired certificate make the refusals.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio_rustls::rustls::{self, ClientConfig, ClientConnection, RootCertStore, StreamOwned};

/// A CA: its certificate (PEM) and what signs with it.
pub struct Ca {
    pub cert_pem: String,
    issuer: Issuer<'static, KeyPair>,
}

/// A leaf certificate and its key, PEM.
pub struct Leaf {
    pub cert_pem: String,
    pub key_pem: String,
}

impl Ca {
    pub fn new(name: &str) -> Ca {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let cert = params.self_signed(&key).unwrap();
        Ca {
            cert_pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// A certificate for 127.0.0.1 and localhost, valid from `from` to `to` (years).
    pub fn leaf_valid(&self, name: &str, from: i32, to: i32) -> Leaf {
        let key = KeyPair::generate().unwrap();
        let mut params =
            CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()]).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.extended_key_usages = vec![
            ExtendedKeyUsagePurpose::ServerAuth,
            ExtendedKeyUsagePurpose::ClientAuth,
        ];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.not_before = rcgen::date_time_ymd(from, 1, 1);
        params.not_after = rcgen::date_time_ymd(to, 1, 1);
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        Leaf {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }

    /// A client certificate valid now whose subject is `O=<org>, CN=<cn>` in DER order, which
    /// Java writes `CN=<cn>,O=<org>` (RFC 2253 lists the last RDN first).
    pub fn client_leaf(&self, cn: &str, org: &str) -> Leaf {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.distinguished_name = rcgen::DistinguishedName::new();
        params
            .distinguished_name
            .push(DnType::OrganizationName, org);
        params.distinguished_name.push(DnType::CommonName, cn);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.not_before = rcgen::date_time_ymd(2020, 1, 1);
        params.not_after = rcgen::date_time_ymd(2090, 1, 1);
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        Leaf {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        }
    }

    /// A certificate valid now (2020..2090).
    pub fn leaf(&self, name: &str) -> Leaf {
        self.leaf_valid(name, 2020, 2090)
    }
}

/// The files a node's SSL keys point to.
pub struct Pki {
    pub dir: tempfile::TempDir,
    pub ca: Ca,
    pub node: Leaf,
    /// PEM key store: the node's key and certificate in one file (Kafka's PEM key store file).
    pub keystore: PathBuf,
    /// PEM trust store: the CA.
    pub truststore: PathBuf,
}

impl Pki {
    pub fn new() -> Pki {
        let dir = tempfile::tempdir().unwrap();
        let ca = Ca::new("ferrokraft test CA");
        let node = ca.leaf("controller");
        let keystore = dir.path().join("node.pem");
        std::fs::write(&keystore, format!("{}{}", node.key_pem, node.cert_pem)).unwrap();
        let truststore = dir.path().join("ca.pem");
        std::fs::write(&truststore, &ca.cert_pem).unwrap();
        Pki {
            dir,
            ca,
            node,
            keystore,
            truststore,
        }
    }

    /// The server.properties lines of an SSL controller listener with required client
    /// certificates (PEM files).
    pub fn server_props(&self) -> Vec<(String, String)> {
        vec![
            (
                "listener.security.protocol.map".into(),
                "CONTROLLER:SSL".into(),
            ),
            ("ssl.keystore.type".into(), "PEM".into()),
            (
                "ssl.keystore.location".into(),
                self.keystore.display().to_string(),
            ),
            ("ssl.truststore.type".into(), "PEM".into()),
            (
                "ssl.truststore.location".into(),
                self.truststore.display().to_string(),
            ),
            // Listener-prefixed, as a deployment would scope it.
            (
                "listener.name.controller.ssl.client.auth".into(),
                "required".into(),
            ),
        ]
    }

    /// [`Pki::server_props`] with the key, chain and CA inline (`ssl.keystore.key`,
    /// `ssl.keystore.certificate.chain`, `ssl.truststore.certificates`), newlines written as
    /// `\n` escapes as a properties file holds them.
    pub fn server_props_inline(&self) -> Vec<(String, String)> {
        let escaped = |pem: &str| pem.trim_end().replace('\n', "\\n");
        vec![
            (
                "listener.security.protocol.map".into(),
                "CONTROLLER:SSL".into(),
            ),
            ("ssl.keystore.type".into(), "PEM".into()),
            ("ssl.keystore.key".into(), escaped(&self.node.key_pem)),
            (
                "ssl.keystore.certificate.chain".into(),
                escaped(&self.node.cert_pem),
            ),
            ("ssl.truststore.type".into(), "PEM".into()),
            (
                "ssl.truststore.certificates".into(),
                escaped(&self.ca.cert_pem),
            ),
            (
                "listener.name.controller.ssl.client.auth".into(),
                "required".into(),
            ),
        ]
    }

    /// An admin client's properties authenticating with `leaf` (its key and certificate in a
    /// PEM key store file under the PKI's directory).
    pub fn client_props(&self, name: &str, leaf: &Leaf) -> String {
        let keystore = self.dir.path().join(format!("{name}.pem"));
        std::fs::write(&keystore, format!("{}{}", leaf.key_pem, leaf.cert_pem)).unwrap();
        format!(
            "default.api.timeout.ms=8000\nrequest.timeout.ms=4000\nmetadata.max.age.ms=1000\n\
             security.protocol=SSL\nssl.keystore.type=PEM\nssl.keystore.location={}\n\
             ssl.truststore.type=PEM\nssl.truststore.location={}\n",
            keystore.display(),
            self.truststore.display()
        )
    }

    /// An admin client's properties for `kafka-metadata-quorum --command-config`.
    pub fn admin_props(&self) -> String {
        format!(
            "default.api.timeout.ms=8000\nrequest.timeout.ms=4000\nmetadata.max.age.ms=1000\n\
             security.protocol=SSL\nssl.keystore.type=PEM\nssl.keystore.location={}\n\
             ssl.truststore.type=PEM\nssl.truststore.location={}\n",
            self.keystore.display(),
            self.truststore.display()
        )
    }
}

impl Default for Pki {
    fn default() -> Self {
        Self::new()
    }
}

fn certs(pem: &str) -> Vec<CertificateDer<'static>> {
    CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .unwrap()
}

/// A client config trusting `ca_pem`, presenting `client` (if any).
pub fn client_config(ca_pem: &str, client: Option<&Leaf>) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    for c in certs(ca_pem) {
        roots.add(c).unwrap();
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots);
    let config = match client {
        Some(leaf) => builder
            .with_client_auth_cert(
                certs(&leaf.cert_pem),
                PrivateKeyDer::from_pem_slice(leaf.key_pem.as_bytes()).unwrap(),
            )
            .unwrap(),
        None => builder.with_no_client_auth(),
    };
    Arc::new(config)
}

/// A TCP connection to `server` from the loopback address `from` (127.0.0.x), so that each
/// refusal comes from an address of its own and is logged on its own.
pub fn connect_from(from: std::net::Ipv4Addr, server: SocketAddr) -> TcpStream {
    try_connect_from(from, server).unwrap()
}

/// [`connect_from`], or the error (the listener is not up yet).
pub fn try_connect_from(
    from: std::net::Ipv4Addr,
    server: SocketAddr,
) -> std::io::Result<TcpStream> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let stream = rt.block_on(async {
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(SocketAddr::new(from.into(), 0))?;
        socket.connect(server).await
    })?;
    let std = stream.into_std()?;
    std.set_nonblocking(false)?;
    std.set_read_timeout(Some(Duration::from_secs(15)))?;
    Ok(std)
}

/// ApiVersions v0 with correlation id `correlation_id`, framed.
pub fn api_versions_request(correlation_id: i32) -> Vec<u8> {
    let client_id = b"tls-test";
    let mut body = Vec::new();
    body.extend_from_slice(&18i16.to_be_bytes());
    body.extend_from_slice(&0i16.to_be_bytes());
    body.extend_from_slice(&correlation_id.to_be_bytes());
    body.extend_from_slice(&(client_id.len() as i16).to_be_bytes());
    body.extend_from_slice(client_id);
    let mut frame = (body.len() as i32).to_be_bytes().to_vec();
    frame.extend(body);
    frame
}

/// Sends ApiVersions on `stream` and reads the answer: `Ok(correlation id, error code)`, or
/// the I/O error that ended the connection.
pub fn api_versions<S: Read + Write>(
    stream: &mut S,
    correlation_id: i32,
) -> std::io::Result<(i32, i16)> {
    stream.write_all(&api_versions_request(correlation_id))?;
    stream.flush()?;
    let mut size = [0u8; 4];
    stream.read_exact(&mut size)?;
    let len = i32::from_be_bytes(size) as usize;
    let mut body = vec![0u8; len];
    stream.read_exact(&mut body)?;
    let cid = i32::from_be_bytes(body[0..4].try_into().unwrap());
    let error = i16::from_be_bytes(body[4..6].try_into().unwrap());
    Ok((cid, error))
}

/// A TLS session over `tcp` to 127.0.0.1.
pub fn tls_over(
    tcp: TcpStream,
    config: Arc<ClientConfig>,
) -> StreamOwned<ClientConnection, TcpStream> {
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let conn = ClientConnection::new(config, name).unwrap();
    StreamOwned::new(conn, tcp)
}

/// The first flight a TLS client sends (its ClientHello records), to cut at chosen bytes.
pub fn client_hello(config: Arc<ClientConfig>) -> Vec<u8> {
    let name = ServerName::try_from("127.0.0.1").unwrap();
    let mut conn = ClientConnection::new(config, name).unwrap();
    let mut out = Vec::new();
    while conn.wants_write() {
        conn.write_tls(&mut out).unwrap();
    }
    out
}

/// Reads until the peer closes or fails: whether the connection ended (EOF or error) within the
/// read timeout, rather than staying open.
pub fn closed_by_peer<S: Read>(stream: &mut S) -> bool {
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => continue,
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                return false
            }
            Err(_) => return true,
        }
    }
}

/// Writes `name` into `dir` with `text`.
pub fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}
