//! Stores read from files the test writes (rcgen certificates; an encrypted PKCS#8 key and a
//! PKCS12 store written with RustCrypto), and real TLS handshakes between the acceptor and
//! connector built from them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use pkcs8::der::{Decode, EncodePem};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::*;
use crate::network::tls_settings::{ClientAuth, TlsVersion};

struct Material {
    ca_pem: String,
    cert_pem: String,
    cert_der: Vec<u8>,
    key_der: Vec<u8>,
    key_pem: String,
}

/// A CA and a leaf signed by it with `sans`.
fn material(sans: &[&str]) -> Material {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, "unit CA");
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(sans.iter().map(|s| s.to_string()).collect::<Vec<_>>())
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    Material {
        ca_pem: ca_cert.pem(),
        cert_pem: leaf.pem(),
        cert_der: leaf.der().to_vec(),
        key_der: key.serialize_der(),
        key_pem: key.serialize_pem(),
    }
}

fn ssl(keystore: KeyStore, truststore: Option<TrustStore>, verify_hostname: bool) -> SslConfig {
    SslConfig {
        listener: "CONTROLLER".into(),
        keystore: Some(keystore),
        truststore,
        client_auth: ClientAuth::Required,
        enabled_protocols: vec![TlsVersion::Tls12, TlsVersion::Tls13],
        client_protocols: vec![TlsVersion::Tls12, TlsVersion::Tls13],
        cipher_suites: Vec::new(),
        verify_hostname,
        principal_mapper: Default::default(),
    }
}

fn pem_file(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn encrypted_pem(key_der: &[u8], password: &str) -> String {
    let info = pkcs8::PrivateKeyInfo::from_der(key_der).unwrap();
    let params = pkcs8::pkcs5::pbes2::Parameters::pbkdf2_sha256_aes256cbc(
        2048,
        b"saltsaltsaltsalt",
        &[7u8; 16],
    )
    .unwrap();
    let doc = info.encrypt_with_params(params, password).unwrap();
    let enc = pkcs8::EncryptedPrivateKeyInfo::from_der(doc.as_bytes()).unwrap();
    enc.to_pem(pkcs8::LineEnding::LF).unwrap()
}

#[test]
fn pem_file_with_key_and_chain() {
    let m = material(&["127.0.0.1"]);
    let dir = tempfile::tempdir().unwrap();
    let ks = KeyStore::File {
        store_type: StoreType::Pem,
        location: pem_file(dir.path(), "k.pem", &format!("{}{}", m.key_pem, m.cert_pem)),
        password: None,
        key_password: None,
    };
    let id = load_identity(&ks).unwrap();
    assert_eq!(id.chain.len(), 1);
    assert_eq!(id.chain[0].as_ref(), m.cert_der.as_slice());
    // Without a key the file is refused, naming the key.
    let no_key = KeyStore::File {
        store_type: StoreType::Pem,
        location: pem_file(dir.path(), "c.pem", &m.cert_pem),
        password: None,
        key_password: None,
    };
    let e = load_identity(&no_key).unwrap_err().to_string();
    assert!(
        e.contains("ssl.keystore.location") && e.contains("no private key"),
        "{e}"
    );
    let missing = KeyStore::File {
        store_type: StoreType::Pem,
        location: dir.path().join("absent.pem"),
        password: None,
        key_password: None,
    };
    let e = load_identity(&missing).unwrap_err().to_string();
    assert!(e.contains("absent.pem") && e.contains("cannot read"), "{e}");
}

#[test]
fn encrypted_pkcs8_key_needs_the_right_key_password() {
    let m = material(&["127.0.0.1"]);
    let enc = encrypted_pem(&m.key_der, "k3y-pass");
    assert!(
        enc.starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----"),
        "{enc}"
    );
    let inline = |pw: Option<&str>| KeyStore::InlinePem {
        key: enc.as_str().into(),
        chain: m.cert_pem.as_str().into(),
        key_password: pw.map(Into::into),
    };
    let id = load_identity(&inline(Some("k3y-pass"))).unwrap();
    match id.key {
        PrivateKeyDer::Pkcs8(k) => assert_eq!(k.secret_pkcs8_der(), m.key_der.as_slice()),
        other => panic!("expected PKCS#8, got {other:?}"),
    }
    let e = load_identity(&inline(Some("wrong")))
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("ssl.keystore.key") && e.contains("cannot decrypt"),
        "{e}"
    );
    let e = load_identity(&inline(None)).unwrap_err().to_string();
    assert!(e.contains("ssl.key.password is not set"), "{e}");
    // A plain key with a key password: Kafka refuses it (it decrypts whenever one is set).
    let plain = KeyStore::InlinePem {
        key: m.key_pem.as_str().into(),
        chain: m.cert_pem.as_str().into(),
        key_password: Some("k3y-pass".into()),
    };
    let e = load_identity(&plain).unwrap_err().to_string();
    assert!(e.contains("not encrypted"), "{e}");
}

#[test]
fn pkcs12_key_store_and_trust_store() {
    let m = material(&["127.0.0.1"]);
    let dir = tempfile::tempdir().unwrap();
    let mut store = p12_keystore::KeyStore::new();
    let cert = p12_keystore::Certificate::from_der(&m.cert_der).unwrap();
    store.add_entry(
        "node",
        p12_keystore::KeyStoreEntry::PrivateKeyChain(p12_keystore::PrivateKeyChain::new(
            &m.key_der,
            b"id1",
            vec![cert],
        )),
    );
    let path = dir.path().join("node.p12");
    std::fs::write(&path, store.writer("st0re").write().unwrap()).unwrap();
    let ks = |pw: &str| KeyStore::File {
        store_type: StoreType::Pkcs12,
        location: path.clone(),
        password: Some(pw.into()),
        key_password: None,
    };
    let id = load_identity(&ks("st0re")).unwrap();
    assert_eq!(id.chain[0].as_ref(), m.cert_der.as_slice());
    let e = load_identity(&ks("nope")).unwrap_err().to_string();
    assert!(e.contains("node.p12") && e.contains("PKCS12"), "{e}");
    // A key store holds no trusted-certificate entries.
    let ts = TrustStore::File {
        store_type: StoreType::Pkcs12,
        location: path.clone(),
        password: Some("st0re".into()),
    };
    let e = load_trusted(&ts).unwrap_err().to_string();
    assert!(e.contains("no trusted certificate"), "{e}");
    // Type JKS (Kafka's default): a PKCS12 file is read, as the JDK's compatibility mode
    // reads it; a JKS file (its magic) is refused with the way out.
    let jks_type = KeyStore::File {
        store_type: StoreType::Jks,
        location: path.clone(),
        password: Some("st0re".into()),
        key_password: None,
    };
    let id = load_identity(&jks_type).unwrap();
    assert_eq!(id.chain[0].as_ref(), m.cert_der.as_slice());
    let jks = dir.path().join("node.jks");
    std::fs::write(&jks, [0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2]).unwrap();
    for e in [
        load_identity(&KeyStore::File {
            store_type: StoreType::Jks,
            location: jks.clone(),
            password: Some("st0re".into()),
            key_password: None,
        }),
        load_trusted(&TrustStore::File {
            store_type: StoreType::Jks,
            location: jks.clone(),
            password: None,
        })
        .map(|_| unreachable!()),
    ] {
        let e = e.map(|_| ()).unwrap_err().to_string();
        assert!(
            e.contains("node.jks") && e.contains("JKS") && e.contains("PKCS12"),
            "{e}"
        );
    }
}

/// One handshake and one echoed message between `server` and `client` configs, dialling
/// `host` on 127.0.0.1.
async fn round_trip(server: &SslConfig, client: &SslConfig, host: &str) -> Result<(), String> {
    let acceptor = crate::network::tls::acceptor(server).map_err(|e| e.to_string())?;
    let connector = crate::network::tls::connector(client).map_err(|e| e.to_string())?;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let serve = tokio::spawn(async move {
        let (tcp, _) = listener.accept().await.unwrap();
        let mut tls = acceptor.accept(tcp).await.map_err(|e| e.to_string())?;
        let mut buf = [0u8; 4];
        tls.read_exact(&mut buf).await.map_err(|e| e.to_string())?;
        tls.write_all(&buf).await.map_err(|e| e.to_string())?;
        tls.flush().await.map_err(|e| e.to_string())
    });
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let name = crate::network::tls::server_name(host)?;
    let client_side = async {
        let mut tls = connector
            .connect(name, tcp)
            .await
            .map_err(|e| e.to_string())?;
        tls.write_all(b"ping").await.map_err(|e| e.to_string())?;
        tls.flush().await.map_err(|e| e.to_string())?;
        let mut buf = [0u8; 4];
        tls.read_exact(&mut buf).await.map_err(|e| e.to_string())?;
        Ok::<_, String>(buf)
    };
    let got = client_side.await;
    let served = serve.await.unwrap();
    let got = got?;
    served?;
    assert_eq!(&got, b"ping");
    Ok(())
}

#[tokio::test]
async fn handshakes_check_chain_client_certificate_and_host_name() {
    let m = material(&["127.0.0.1", "localhost"]);
    let inline = |m: &Material| KeyStore::InlinePem {
        key: m.key_pem.as_str().into(),
        chain: m.cert_pem.as_str().into(),
        key_password: None,
    };
    let trust = |m: &Material| Some(TrustStore::InlinePem(m.ca_pem.as_str().into()));
    let server = ssl(inline(&m), trust(&m), true);
    // An IP address SAN matches the address dialled; a DNS SAN the name.
    round_trip(&server, &server, "127.0.0.1").await.unwrap();
    round_trip(&server, &server, "localhost").await.unwrap();
    // A certificate naming another host: refused with host name checks, served without.
    let other = material(&["controller.example"]);
    let server_other = ssl(inline(&other), trust(&other), true);
    let e = round_trip(&server_other, &server_other, "127.0.0.1")
        .await
        .unwrap_err();
    assert!(
        e.contains("not valid for name") || e.contains("NotValidForName"),
        "{e}"
    );
    let lax = ssl(inline(&other), trust(&other), false);
    round_trip(&server_other, &lax, "127.0.0.1").await.unwrap();
    // A client whose certificate another CA signed is refused by the server.
    let foreign = ssl(inline(&other), trust(&m), true);
    assert!(round_trip(&server, &foreign, "127.0.0.1").await.is_err());
    // TLS 1.2 only on both sides still works, with a configured suite.
    let mut v12 = ssl(inline(&m), trust(&m), true);
    v12.enabled_protocols = vec![TlsVersion::Tls12];
    v12.client_protocols = vec![TlsVersion::Tls12];
    v12.cipher_suites = vec!["TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256".into()];
    round_trip(&v12, &v12, "127.0.0.1").await.unwrap();
    // ssl.client.auth: requested serves a client without a certificate, required does not,
    // none asks for none (and needs no trust store).
    let mut anonymous = ssl(inline(&m), trust(&m), true);
    anonymous.keystore = None;
    let mut requested = server.clone();
    requested.client_auth = ClientAuth::Requested;
    round_trip(&requested, &anonymous, "127.0.0.1")
        .await
        .unwrap();
    assert!(round_trip(&server, &anonymous, "127.0.0.1").await.is_err());
    assert!(round_trip(&requested, &foreign, "127.0.0.1").await.is_err());
    let mut no_auth = server.clone();
    no_auth.client_auth = ClientAuth::None;
    no_auth.truststore = None;
    round_trip(&no_auth, &anonymous, "127.0.0.1").await.unwrap();
    // Cipher suites with nothing in common: no handshake.
    let mut aes256 = server.clone();
    aes256.cipher_suites = vec!["TLS13_AES_256_GCM_SHA384".into()];
    let mut aes128 = server.clone();
    aes128.cipher_suites = vec!["TLS13_AES_128_GCM_SHA256".into()];
    round_trip(&aes256, &aes256, "127.0.0.1").await.unwrap();
    assert!(round_trip(&aes256, &aes128, "127.0.0.1").await.is_err());
    // A server that accepts TLSv1.3 only refuses a TLSv1.2-only client.
    let mut v13 = ssl(inline(&m), trust(&m), true);
    v13.enabled_protocols = vec![TlsVersion::Tls13];
    assert!(round_trip(&v13, &v12, "127.0.0.1").await.is_err());
}

#[test]
fn an_ec_key_without_its_public_key_is_completed_from_the_certificate() {
    use tokio_rustls::rustls::crypto::ring::sign::any_supported_type;
    let m = material(&["127.0.0.1"]);
    // ring's PKCS#8 for P-256 carries the public key ([1] in the ECPrivateKey); drop it, as
    // Java writes such keys.
    let outer = elements(sequence_body(&m.key_der).unwrap()).unwrap();
    let ec = elements(sequence_body(value(outer[2].1).unwrap()).unwrap()).unwrap();
    assert!(
        ec.iter().any(|(t, _)| *t == 0xa1),
        "rcgen's key has a public key"
    );
    let ec_body: Vec<u8> = ec
        .iter()
        .filter(|(t, _)| *t != 0xa1)
        .flat_map(|(_, e)| e.to_vec())
        .collect();
    let stripped = with_ec_key(&outer, &ec_body);
    let as_key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(stripped.clone()));
    assert!(
        any_supported_type(&as_key).is_err(),
        "ring refuses it as it is"
    );
    let pem =
        pkcs8::der::pem::encode_string("PRIVATE KEY", pkcs8::LineEnding::LF, &stripped).unwrap();
    let id = load_identity(&KeyStore::InlinePem {
        key: pem.into(),
        chain: m.cert_pem.as_str().into(),
        key_password: None,
    })
    .unwrap();
    any_supported_type(&id.key).unwrap();
    // With another key's certificate, the repaired key does not load and the key is left as
    // it was (building the TLS configuration then reports it).
    let other = material(&["127.0.0.1"]);
    let mismatched = Identity {
        chain: vec![CertificateDer::from(other.cert_der.clone())],
        key: as_key,
    };
    assert!(with_public_key(&mismatched).is_none());
}
