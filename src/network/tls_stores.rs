//! Reads the key store and trust store an [`SslConfig`] names into DER certificates and a key.
//!
//! ```text
//!   KeyStore  ─PEM (file or inline; an ENCRYPTED PRIVATE KEY decrypted with ssl.key.password)─┐
//!             ─PKCS12 file (ssl.keystore.password)───────────────────────────────────────────┴▶ chain + key
//!   TrustStore ─PEM (file or inline) / PKCS12 (its certificate entries)──▶ trusted certificates
//! ```
//!
//! Every failure is an [`InvalidSetting`] naming the key whose value could not be used (a file
//! missing, a wrong password, no key in the store), so that a bad store stops the node at
//! start-up, as Kafka's DefaultSslEngineFactory does, rather than at the first handshake.

use rustls_pki_types::pem::{PemObject, SectionKind};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use super::tls_settings::{
    jks_refused, InvalidSetting, KeyStore, SslConfig, StoreType, TrustStore,
};
use crate::common::secret::Secret;

/// This node's certificate chain (leaf first) and private key.
#[derive(Debug)]
pub struct Identity {
    /// The chain, leaf first.
    pub chain: Vec<CertificateDer<'static>>,
    /// The private key.
    pub key: PrivateKeyDer<'static>,
}

fn bad(key: &str, value: &str, reason: impl Into<String>) -> InvalidSetting {
    InvalidSetting {
        key: key.to_string(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

fn read_file(key: &str, path: &std::path::Path) -> Result<Vec<u8>, InvalidSetting> {
    std::fs::read(path).map_err(|e| {
        bad(
            key,
            &path.display().to_string(),
            format!("cannot read it: {e}"),
        )
    })
}

/// Every certificate in PEM text.
fn pem_certificates(
    key: &str,
    shown: &str,
    pem: &[u8],
) -> Result<Vec<CertificateDer<'static>>, InvalidSetting> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(key, shown, format!("invalid PEM: {e}")))?;
    if certs.is_empty() {
        return Err(bad(
            key,
            shown,
            "no certificate (-----BEGIN CERTIFICATE-----) found",
        ));
    }
    Ok(certs)
}

/// The one private key in PEM text: PKCS#8 (encrypted or not), or a PKCS#1 / SEC1 key.
fn pem_private_key(
    key: &str,
    shown: &str,
    pem: &[u8],
    password: Option<&str>,
) -> Result<PrivateKeyDer<'static>, InvalidSetting> {
    let mut plain: Vec<PrivateKeyDer<'static>> = Vec::new();
    for section in <(SectionKind, Vec<u8>)>::pem_slice_iter(pem) {
        let (kind, der) = section.map_err(|e| bad(key, shown, format!("invalid PEM: {e}")))?;
        if let Some(k) = PrivateKeyDer::from_pem(kind, der) {
            plain.push(k);
        }
    }
    let encrypted = encrypted_sections(pem);
    match (plain.len(), encrypted.len()) {
        (1, 0) => {
            // Kafka decrypts the key whenever ssl.key.password is set, so it refuses a plain key
            // with a password; so does ferrokraft, rather than start where Kafka would not.
            if password.is_some() {
                return Err(bad(
                    key,
                    shown,
                    "ssl.key.password is set but the private key is not encrypted (expected \
                     -----BEGIN ENCRYPTED PRIVATE KEY-----); unset ssl.key.password or encrypt the key",
                ));
            }
            plain
                .pop()
                .ok_or_else(|| bad(key, shown, "no private key found"))
        }
        (0, 1) => {
            let Some(password) = password else {
                return Err(bad(
                    key,
                    shown,
                    "the private key is encrypted but ssl.key.password is not set",
                ));
            };
            decrypt_pkcs8(key, shown, encrypted[0], password)
        }
        (0, 0) => Err(bad(
            key,
            shown,
            "no private key (-----BEGIN PRIVATE KEY----- or ENCRYPTED PRIVATE KEY) found",
        )),
        (p, e) => Err(bad(
            key,
            shown,
            format!("expected one private key, found {}", p + e),
        )),
    }
}

/// The `-----BEGIN ENCRYPTED PRIVATE KEY-----` sections (markers included) of `pem`.
fn encrypted_sections(pem: &[u8]) -> Vec<&[u8]> {
    const BEGIN: &[u8] = b"-----BEGIN ENCRYPTED PRIVATE KEY-----";
    const END: &[u8] = b"-----END ENCRYPTED PRIVATE KEY-----";
    let mut out = Vec::new();
    let mut rest = pem;
    while let Some(start) = find(rest, BEGIN) {
        let Some(end) = find(&rest[start..], END) else {
            break;
        };
        let stop = start + end + END.len();
        out.push(&rest[start..stop]);
        rest = &rest[stop..];
    }
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn decrypt_pkcs8(
    key: &str,
    shown: &str,
    pem: &[u8],
    password: &str,
) -> Result<PrivateKeyDer<'static>, InvalidSetting> {
    let (_, der) = pkcs8::der::pem::decode_vec(pem).map_err(|e| {
        bad(
            key,
            shown,
            format!("invalid encrypted private key PEM: {e}"),
        )
    })?;
    let info = pkcs8::EncryptedPrivateKeyInfo::try_from(der.as_slice())
        .map_err(|e| bad(key, shown, format!("invalid encrypted private key: {e}")))?;
    let plain = info.decrypt(password).map_err(|e| {
        bad(
            key,
            shown,
            format!("cannot decrypt the private key with ssl.key.password (wrong password, or a scheme other than PBES2): {e}"),
        )
    })?;
    Ok(PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(
        plain.as_bytes().to_vec(),
    )))
}

fn pkcs12(
    key: &str,
    path: &std::path::Path,
    password: &str,
) -> Result<p12_keystore::KeyStore, InvalidSetting> {
    let data = read_file(key, path)?;
    p12_keystore::KeyStore::from_pkcs12(&data, password).map_err(|e| {
        bad(
            key,
            &path.display().to_string(),
            format!("cannot read it as PKCS12 with the given password: {e}"),
        )
    })
}

/// A store of type JKS (Kafka's default) is read as PKCS12 when the file is one (a DER
/// SEQUENCE, as the JDK's compatibility mode reads it); a JKS file (magic `FE ED FE ED`) or
/// anything else is refused.
fn not_jks(key: &str, path: &std::path::Path) -> Result<(), InvalidSetting> {
    let data = read_file(key, path)?;
    match data.first() {
        Some(0x30) => Ok(()),
        _ => Err(jks_refused(key, &path.display().to_string())),
    }
}

/// Reads the node's certificate chain and key.
pub fn load_identity(store: &KeyStore) -> Result<Identity, InvalidSetting> {
    let mut identity = read_identity(store)?;
    if let Some(repaired) = with_public_key(&identity) {
        identity.key = repaired;
    }
    Ok(identity)
}

/// Java writes EC keys in PKCS#8 without the optional public key (keytool's key stores, keys
/// exported from them); ring needs it. When the key does not load as it is, the public key is
/// taken from the leaf certificate and put into the key; `None` when the key loads already or
/// cannot be repaired so (then building the TLS configuration reports the key as unusable).
fn with_public_key(identity: &Identity) -> Option<PrivateKeyDer<'static>> {
    use tokio_rustls::rustls::crypto::ring::sign::any_supported_type;
    if any_supported_type(&identity.key).is_ok() {
        return None;
    }
    let PrivateKeyDer::Pkcs8(key) = &identity.key else {
        return None;
    };
    let point = leaf_public_key(identity.chain.first()?.as_ref())?;
    let outer = elements(sequence_body(key.secret_pkcs8_der())?)?;
    // PrivateKeyInfo: version, algorithm, privateKey (OCTET STRING holding an ECPrivateKey).
    let (tag, ec) = *outer.get(2)?;
    if tag != 0x04 {
        return None;
    }
    let ec_elements = elements(sequence_body(value(ec)?)?)?;
    if ec_elements.iter().any(|(t, _)| *t == 0xa1) {
        return None;
    }
    let mut ec_body: Vec<u8> = ec_elements.iter().flat_map(|(_, e)| e.to_vec()).collect();
    let mut bits = vec![0u8];
    bits.extend_from_slice(point);
    ec_body.extend(tlv(0xa1, &tlv(0x03, &bits)));
    let repaired = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(with_ec_key(&outer, &ec_body)));
    any_supported_type(&repaired).ok().map(|_| repaired)
}

/// A PrivateKeyInfo (its `outer` elements) with its privateKey replaced by the ECPrivateKey
/// whose body is `ec_body`.
fn with_ec_key(outer: &[(u8, &[u8])], ec_body: &[u8]) -> Vec<u8> {
    let mut outer_body = Vec::new();
    for (i, (_, e)) in outer.iter().enumerate() {
        if i == 2 {
            outer_body.extend(tlv(0x04, &tlv(0x30, ec_body)));
        } else {
            outer_body.extend_from_slice(e);
        }
    }
    tlv(0x30, &outer_body)
}

/// The subjectPublicKey bits (the EC point) of a DER certificate.
fn leaf_public_key(cert: &[u8]) -> Option<&[u8]> {
    let cert = elements(sequence_body(cert)?)?;
    let tbs = elements(sequence_body(cert.first()?.1)?)?;
    // TBSCertificate: [0] version (optional), serial, signature, issuer, validity, subject,
    // subjectPublicKeyInfo.
    let skip = usize::from(tbs.first()?.0 == 0xa0);
    let spki = elements(sequence_body(tbs.get(skip + 5)?.1)?)?;
    let (tag, bit_string) = *spki.get(1)?;
    if tag != 0x03 {
        return None;
    }
    // The first byte counts unused bits: 0 for a key.
    value(bit_string)?
        .split_first()
        .and_then(|(unused, point)| (*unused == 0).then_some(point))
}

/// One DER element: its tag, its whole encoding, its value.
struct Element<'a> {
    tag: u8,
    whole: &'a [u8],
    value: &'a [u8],
}

/// The DER element at the start of `input`, and the bytes after it.
fn read_element(input: &[u8]) -> Option<(Element<'_>, &[u8])> {
    let tag = *input.first()?;
    let first = *input.get(1)?;
    let (len, header) = if first < 0x80 {
        (usize::from(first), 2)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 {
            return None;
        }
        let mut len = 0usize;
        for b in input.get(2..2 + n)? {
            len = (len << 8) | usize::from(*b);
        }
        (len, 2 + n)
    };
    let end = header.checked_add(len)?;
    let element = Element {
        tag,
        whole: input.get(..end)?,
        value: input.get(header..end)?,
    };
    Some((element, input.get(end..)?))
}

/// The value of the element `element` starts with.
fn value(element: &[u8]) -> Option<&[u8]> {
    read_element(element).map(|(e, _)| e.value)
}

/// The body of the SEQUENCE `input` starts with.
fn sequence_body(input: &[u8]) -> Option<&[u8]> {
    let (e, _) = read_element(input)?;
    (e.tag == 0x30).then_some(e.value)
}

/// The elements of a body: (tag, whole encoding) each.
fn elements(mut body: &[u8]) -> Option<Vec<(u8, &[u8])>> {
    let mut out = Vec::new();
    while !body.is_empty() {
        let (e, rest) = read_element(body)?;
        out.push((e.tag, e.whole));
        body = rest;
    }
    Some(out)
}

/// A DER element: tag, definite length, body.
fn tlv(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let n = body.len();
    if n < 0x80 {
        out.push(n as u8);
    } else {
        let bytes = n.to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(body);
    out
}

fn read_identity(store: &KeyStore) -> Result<Identity, InvalidSetting> {
    match store {
        KeyStore::InlinePem {
            key,
            chain,
            key_password,
        } => Ok(Identity {
            chain: pem_certificates(
                "ssl.keystore.certificate.chain",
                "[PEM]",
                chain.expose().as_bytes(),
            )?,
            key: pem_private_key(
                "ssl.keystore.key",
                "[hidden]",
                key.expose().as_bytes(),
                key_password.as_ref().map(Secret::expose),
            )?,
        }),
        KeyStore::File {
            store_type: StoreType::Pem,
            location,
            key_password,
            ..
        } => {
            const KEY: &str = "ssl.keystore.location";
            let shown = location.display().to_string();
            let pem = read_file(KEY, location)?;
            Ok(Identity {
                chain: pem_certificates(KEY, &shown, &pem)?,
                key: pem_private_key(KEY, &shown, &pem, key_password.as_ref().map(Secret::expose))?,
            })
        }
        KeyStore::File {
            store_type: store_type @ (StoreType::Pkcs12 | StoreType::Jks),
            location,
            password,
            ..
        } => {
            const KEY: &str = "ssl.keystore.location";
            let shown = location.display().to_string();
            if *store_type == StoreType::Jks {
                not_jks(KEY, location)?;
            }
            // The library decrypts the store and its keys with one password; keytool and
            // openssl write PKCS12 keys under the store password. (The config requires a store
            // password for PKCS12; a differing ssl.key.password is not supported.)
            let password = password.as_ref().map_or("", Secret::expose);
            let ks = pkcs12(KEY, location, password)?;
            let mut chains = ks.entries().filter_map(|(_, e)| match e {
                p12_keystore::KeyStoreEntry::PrivateKeyChain(c) => Some(c),
                _ => None,
            });
            let Some(entry) = chains.next() else {
                return Err(bad(KEY, &shown, "the PKCS12 store holds no private key"));
            };
            if chains.next().is_some() {
                return Err(bad(KEY, &shown, "the PKCS12 store holds more than one private key; ferrokraft needs exactly one"));
            }
            let chain: Vec<CertificateDer<'static>> = entry
                .chain()
                .iter()
                .map(|c| CertificateDer::from(c.as_der().to_vec()))
                .collect();
            if chain.is_empty() {
                return Err(bad(KEY, &shown, "the PKCS12 key entry has no certificate"));
            }
            Ok(Identity {
                chain,
                key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(entry.key().to_vec())),
            })
        }
    }
}

/// Reads the trusted certificates.
pub fn load_trusted(store: &TrustStore) -> Result<Vec<CertificateDer<'static>>, InvalidSetting> {
    match store {
        TrustStore::InlinePem(pem) => pem_certificates(
            "ssl.truststore.certificates",
            "[PEM]",
            pem.expose().as_bytes(),
        ),
        TrustStore::File {
            store_type: StoreType::Pem,
            location,
            ..
        } => {
            const KEY: &str = "ssl.truststore.location";
            let pem = read_file(KEY, location)?;
            pem_certificates(KEY, &location.display().to_string(), &pem)
        }
        TrustStore::File {
            store_type: store_type @ (StoreType::Pkcs12 | StoreType::Jks),
            location,
            password,
        } => {
            const KEY: &str = "ssl.truststore.location";
            if *store_type == StoreType::Jks {
                not_jks(KEY, location)?;
            }
            let ks = pkcs12(KEY, location, password.as_ref().map_or("", Secret::expose))?;
            let certs: Vec<CertificateDer<'static>> = ks
                .entries()
                .flat_map(|(_, e)| match e {
                    p12_keystore::KeyStoreEntry::Certificate(c) => {
                        vec![CertificateDer::from(c.as_der().to_vec())]
                    }
                    _ => Vec::new(),
                })
                .collect();
            if certs.is_empty() {
                return Err(bad(
                    KEY,
                    &location.display().to_string(),
                    "the PKCS12 trust store holds no trusted certificate",
                ));
            }
            Ok(certs)
        }
    }
}

/// Both stores of `ssl` read, as [`super::tls`] builds its configurations from them.
pub fn load(
    ssl: &SslConfig,
) -> Result<(Option<Identity>, Vec<CertificateDer<'static>>), InvalidSetting> {
    let identity = ssl.keystore.as_ref().map(load_identity).transpose()?;
    let trusted = match &ssl.truststore {
        Some(t) => load_trusted(t)?,
        None => Vec::new(),
    };
    Ok((identity, trusted))
}

#[cfg(test)]
#[path = "tls_stores_tests.rs"]
mod tests;
