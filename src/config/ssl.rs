//! Security protocols of the controller listeners, and the `ssl.*` keys of those that are SSL.
//!
//! ```text
//!   listener.security.protocol.map ──listener_protocols──▶ SSL and SASL_SSL listeners
//!   Properties ──listener.name.<l>.ssl.<k> else ssl.<k> else Kafka's default──▶ SslConfig
//!   SslConfig ──(network::tls, at start-up)──▶ rustls server and client configs
//! ```
//!
//! Key names, defaults and the combinations refused are Kafka's (SslConfigs,
//! BrokerSecurityConfigs, DefaultSslEngineFactory). Only what the keys say is checked here;
//! reading the stores they point to (PEM or PKCS12 files, passwords) happens when the node
//! builds its TLS configuration, and fails the start with a [`ConfigError`] naming the key.
//! One [`SslConfig`] serves both directions of a listener: what it accepts, and, for the
//! first controller listener, how this node dials its peers (as Kafka's raft client builds its
//! channel from the same listener-prefixed keys).

use std::path::PathBuf;

use std::collections::HashMap;

use super::properties::{get, invalid, list, ConfigError, Properties};
use crate::common::security_protocol::SecurityProtocol;

/// The `ssl.*` keys ferrokraft reads (each may also be given as `listener.name.<l>.<key>`).
pub const SSL_KEYS: &[&str] = &[
    "ssl.keystore.type",
    "ssl.keystore.location",
    "ssl.keystore.password",
    "ssl.key.password",
    "ssl.keystore.certificate.chain",
    "ssl.keystore.key",
    "ssl.truststore.type",
    "ssl.truststore.location",
    "ssl.truststore.password",
    "ssl.truststore.certificates",
    "ssl.client.auth",
    "ssl.enabled.protocols",
    "ssl.protocol",
    "ssl.cipher.suites",
    "ssl.endpoint.identification.algorithm",
    "ssl.principal.mapping.rules",
];

/// Whether `key` is one of [`SSL_KEYS`] with a listener prefix.
pub fn is_listener_ssl_key(key: &str) -> bool {
    key.strip_prefix("listener.name.")
        .and_then(|rest| rest.split_once('.'))
        .is_some_and(|(name, k)| !name.is_empty() && SSL_KEYS.contains(&k))
}

pub use crate::common::secret::Secret;
pub use crate::network::tls_settings::{
    ClientAuth, InvalidSetting, KeyStore, SslConfig, StoreType, TlsVersion, TrustStore,
};

/// Looks `key` up for `listener`: the listener-prefixed key first, then the global one. An
/// empty value counts as set (Kafka's empty endpoint identification algorithm means "off").
fn lookup<'a>(props: &'a Properties, listener: &str, key: &str) -> Option<(String, &'a str)> {
    let prefixed = format!("listener.name.{}.{key}", listener.to_ascii_lowercase());
    if let Some(v) = get(props, &prefixed) {
        return Some((prefixed, v));
    }
    get(props, key).map(|v| (key.to_string(), v))
}

/// `lookup` with empty values treated as unset (Kafka's optional PASSWORD/STRING keys).
fn lookup_set<'a>(props: &'a Properties, listener: &str, key: &str) -> Option<(String, &'a str)> {
    lookup(props, listener, key).filter(|(_, v)| !v.is_empty())
}

/// The store type under `key`, or Kafka's default, JKS (read as PKCS12 when the file is one;
/// see [`StoreType::Jks`]).
fn store_type(props: &Properties, listener: &str, key: &str) -> Result<StoreType, ConfigError> {
    let (name, value) =
        lookup_set(props, listener, key).unwrap_or_else(|| (key.to_string(), "JKS"));
    match value.to_ascii_uppercase().as_str() {
        "PEM" => Ok(StoreType::Pem),
        "PKCS12" => Ok(StoreType::Pkcs12),
        "JKS" => Ok(StoreType::Jks),
        _ => Err(invalid(
            &name,
            value,
            "ferrokraft reads PKCS12 and PEM stores only",
        )),
    }
}

fn keystore(props: &Properties, listener: &str) -> Result<Option<KeyStore>, ConfigError> {
    let location = lookup_set(props, listener, "ssl.keystore.location");
    let password = lookup_set(props, listener, "ssl.keystore.password");
    let key_password_given = lookup_set(props, listener, "ssl.key.password");
    let key_password = key_password_given.as_ref().map(|(_, v)| Secret::from(*v));
    let key = lookup_set(props, listener, "ssl.keystore.key");
    let chain = lookup_set(props, listener, "ssl.keystore.certificate.chain");
    let explicit_type = lookup_set(props, listener, "ssl.keystore.type");
    let is_pem = explicit_type
        .as_ref()
        .is_some_and(|(_, v)| v.eq_ignore_ascii_case("PEM"));
    match (key, chain) {
        (Some((key_name, key)), chain) => {
            if !is_pem {
                let shown = explicit_type.as_ref().map_or("JKS", |(_, v)| v);
                return Err(invalid(
                    &key_name,
                    "[hidden]",
                    format!("a private key can be given inline only with ssl.keystore.type=PEM, but the key store type is {shown}"),
                ));
            }
            let Some((_, chain)) = chain else {
                return Err(invalid(
                    &key_name,
                    "[hidden]",
                    "the private key is given but ssl.keystore.certificate.chain is not",
                ));
            };
            if let Some((loc_name, loc)) = location {
                return Err(invalid(
                    &loc_name,
                    loc,
                    "both a key store location and an inline private key are given",
                ));
            }
            if let Some((pw_name, _)) = password {
                return Err(invalid(
                    &pw_name,
                    "[hidden]",
                    "a key store password cannot be given with PEM; only ssl.key.password may be",
                ));
            }
            Ok(Some(KeyStore::InlinePem {
                key: Secret::from(key),
                chain: Secret::from(chain),
                key_password,
            }))
        }
        (None, Some((chain_name, _))) => Err(invalid(
            &chain_name,
            "[hidden]",
            "the certificate chain is given but ssl.keystore.key is not",
        )),
        (None, None) => {
            let Some((loc_name, loc)) = location else {
                if let Some((pw_name, _)) = password {
                    return Err(invalid(
                        &pw_name,
                        "[hidden]",
                        "a key store password is given but no key store (ssl.keystore.location)",
                    ));
                }
                return Ok(None);
            };
            let store_type = store_type(props, listener, "ssl.keystore.type")?;
            match store_type {
                StoreType::Pem if password.is_some() => return Err(invalid(
                    &loc_name,
                    loc,
                    "a key store password cannot be given with PEM; only ssl.key.password may be",
                )),
                StoreType::Pkcs12 | StoreType::Jks if password.is_none() => {
                    return Err(invalid(
                        &loc_name,
                        loc,
                        "the key store is given but ssl.keystore.password is not",
                    ))
                }
                // Kafka recovers the key with ssl.key.password; the PKCS12 reader here knows one
                // password for store and key, so a different one is refused, not ignored.
                StoreType::Pkcs12 | StoreType::Jks
                    if key_password.as_ref().is_some_and(|k| {
                        Some(k.expose()) != password.as_ref().map(|(_, p)| *p)
                    }) =>
                {
                    // The key as given: listener-prefixed or not.
                    let key_password_name = key_password_given
                        .as_ref()
                        .map_or("ssl.key.password", |(name, _)| name.as_str());
                    return Err(invalid(
                        key_password_name,
                        "[hidden]",
                        "a PKCS12 key password different from ssl.keystore.password is not \
                         supported; store the key under the store password",
                    ));
                }
                _ => {}
            }
            Ok(Some(KeyStore::File {
                store_type,
                location: PathBuf::from(loc),
                password: password.map(|(_, v)| Secret::from(v)),
                key_password,
            }))
        }
    }
}

fn truststore(props: &Properties, listener: &str) -> Result<Option<TrustStore>, ConfigError> {
    let location = lookup_set(props, listener, "ssl.truststore.location");
    let password = lookup_set(props, listener, "ssl.truststore.password");
    let certs = lookup_set(props, listener, "ssl.truststore.certificates");
    let explicit_type = lookup_set(props, listener, "ssl.truststore.type");
    if let Some((certs_name, certs)) = certs {
        if !explicit_type
            .as_ref()
            .is_some_and(|(_, v)| v.eq_ignore_ascii_case("PEM"))
        {
            let shown = explicit_type.as_ref().map_or("JKS", |(_, v)| v);
            return Err(invalid(
                &certs_name,
                "[PEM certificates]",
                format!("trusted certificates can be given inline only with ssl.truststore.type=PEM, but the trust store type is {shown}"),
            ));
        }
        if let Some((loc_name, loc)) = location {
            return Err(invalid(
                &loc_name,
                loc,
                "both a trust store location and inline trusted certificates are given",
            ));
        }
        if let Some((pw_name, _)) = password {
            return Err(invalid(
                &pw_name,
                "[hidden]",
                "a trust store password cannot be given with PEM",
            ));
        }
        return Ok(Some(TrustStore::InlinePem(Secret::from(certs))));
    }
    let Some((loc_name, loc)) = location else {
        if let Some((pw_name, _)) = password {
            return Err(invalid(
                &pw_name,
                "[hidden]",
                "a trust store password is given but no trust store (ssl.truststore.location)",
            ));
        }
        return Ok(None);
    };
    let store_type = store_type(props, listener, "ssl.truststore.type")?;
    if store_type == StoreType::Pem && password.is_some() {
        return Err(invalid(
            &loc_name,
            loc,
            "a trust store password cannot be given with PEM",
        ));
    }
    Ok(Some(TrustStore::File {
        store_type,
        location: PathBuf::from(loc),
        password: password.map(|(_, v)| Secret::from(v)),
    }))
}

fn protocol_version(key: &str, value: &str, entry: &str) -> Result<TlsVersion, ConfigError> {
    match entry {
        "TLSv1.2" => Ok(TlsVersion::Tls12),
        "TLSv1.3" => Ok(TlsVersion::Tls13),
        "TLSv1" | "TLSv1.1" | "SSLv3" | "SSLv2Hello" => Err(invalid(
            key,
            value,
            format!("{entry} is not supported by ferrokraft's TLS library (rustls); use TLSv1.2 or TLSv1.3"),
        )),
        _ => Err(invalid(
            key,
            value,
            format!("unknown protocol {entry}; expected TLSv1.2 or TLSv1.3"),
        )),
    }
}

/// Java's (IANA's) name for a cipher suite → rustls's. Java names the TLS 1.3 suites without
/// the `13`; the TLS 1.2 ECDHE suites have the same names in both.
pub fn rustls_suite_name(java: &str) -> String {
    match java.strip_prefix("TLS_") {
        Some(rest)
            if !rest.starts_with("ECDHE_")
                && !rest.starts_with("DHE_")
                && !rest.starts_with("RSA_") =>
        {
            format!("TLS13_{rest}")
        }
        _ => java.to_string(),
    }
}

/// Parses the TLS settings of `listener` (whose security protocol is SSL).
pub fn parse(props: &Properties, listener: &str) -> Result<SslConfig, ConfigError> {
    let keystore = keystore(props, listener)?;
    if keystore.is_none() {
        return Err(invalid(
            &format!(
                "listener.name.{}.ssl.keystore.location",
                listener.to_ascii_lowercase()
            ),
            "",
            format!(
                "listener {listener} uses SSL and needs a key store: set ssl.keystore.location \
                 (with ssl.keystore.type=PKCS12 or PEM), or ssl.keystore.type=PEM with \
                 ssl.keystore.key and ssl.keystore.certificate.chain"
            ),
        ));
    }
    let truststore = truststore(props, listener)?;
    let client_auth_given = lookup(props, listener, "ssl.client.auth");
    let client_auth = match client_auth_given.clone() {
        None => ClientAuth::None,
        Some((name, v)) => match v.to_ascii_lowercase().as_str() {
            "none" => ClientAuth::None,
            "requested" => ClientAuth::Requested,
            "required" => ClientAuth::Required,
            _ => {
                return Err(invalid(
                    &name,
                    v,
                    "String must be one of: required, requested, none",
                ))
            }
        },
    };
    if client_auth != ClientAuth::None && truststore.is_none() {
        // Only a given value can ask for client certificates (the default is none).
        let (name, v) = client_auth_given.unwrap_or(("ssl.client.auth".to_string(), ""));
        return Err(invalid(
            &name,
            v,
            "client certificates need a trust store (ssl.truststore.location or \
             ssl.truststore.certificates) to check them against",
        ));
    }
    let (protocols_key, protocols_raw) = lookup(props, listener, "ssl.enabled.protocols")
        .map_or_else(
            || {
                (
                    "ssl.enabled.protocols".to_string(),
                    "TLSv1.2,TLSv1.3".to_string(),
                )
            },
            |(k, v)| (k, v.to_string()),
        );
    let mut enabled_protocols = Vec::new();
    for entry in list(&protocols_raw) {
        enabled_protocols.push(protocol_version(&protocols_key, &protocols_raw, &entry)?);
    }
    enabled_protocols.sort();
    enabled_protocols.dedup();
    if enabled_protocols.is_empty() {
        return Err(invalid(
            &protocols_key,
            &protocols_raw,
            "at least one of TLSv1.2 or TLSv1.3 must be enabled",
        ));
    }
    // `ssl.protocol` names the SSLContext Java makes (default TLSv1.3); the versions a server
    // accepts are `ssl.enabled.protocols`. Kafka documents that a client whose ssl.protocol is
    // TLSv1.2 does not use TLSv1.3 even when it is enabled: so the versions this node dials
    // peers with. Anything rustls cannot speak is refused.
    let mut client_protocols = enabled_protocols.clone();
    if let Some((name, v)) = lookup_set(props, listener, "ssl.protocol") {
        match v {
            "TLS" | "TLSv1.3" => {}
            "TLSv1.2" => {
                client_protocols.retain(|p| *p == TlsVersion::Tls12);
                if client_protocols.is_empty() {
                    return Err(invalid(
                        &name,
                        v,
                        format!("TLSv1.2 is not among {protocols_key}={protocols_raw}"),
                    ));
                }
            }
            _ => {
                protocol_version(&name, v, v)?;
            }
        }
    }
    let mut cipher_suites = Vec::new();
    if let Some((name, raw)) = lookup_set(props, listener, "ssl.cipher.suites") {
        let known: Vec<String> = tokio_rustls::rustls::crypto::ring::ALL_CIPHER_SUITES
            .iter()
            .filter_map(|s| s.suite().as_str().map(str::to_string))
            .collect();
        for java in list(raw) {
            let ours = rustls_suite_name(&java);
            if !known.contains(&ours) {
                return Err(invalid(
                    &name,
                    raw,
                    format!(
                        "cipher suite {java} is not available in ferrokraft's TLS library \
                         (rustls); available: {}",
                        known.join(",")
                    ),
                ));
            }
            cipher_suites.push(ours);
        }
    }
    let verify_hostname = match lookup(props, listener, "ssl.endpoint.identification.algorithm") {
        None => true,
        Some((_, "")) => false,
        Some((_, v)) if v.eq_ignore_ascii_case("https") => true,
        Some((name, v)) => {
            return Err(invalid(
                &name,
                v,
                "expected https (check the peer's host name) or an empty value (do not)",
            ))
        }
    };
    let principal_mapper = match lookup(props, listener, "ssl.principal.mapping.rules") {
        None => Default::default(),
        Some((name, v)) => crate::security::ssl_principal::SslPrincipalMapper::parse(v)
            .map_err(|reason| invalid(&name, v, reason))?,
    };
    Ok(SslConfig {
        principal_mapper,
        listener: listener.to_string(),
        keystore,
        truststore,
        client_auth,
        enabled_protocols,
        client_protocols,
        cipher_suites,
        verify_hostname,
    })
}

/// The security protocol of each controller listener. Without the map Kafka gives a listener
/// named after a security protocol that protocol, and any other controller listener
/// PLAINTEXT.
pub(super) fn listener_protocols(
    props: &Properties,
    controller_names: &[String],
) -> Result<Vec<(String, SecurityProtocol)>, ConfigError> {
    const KEY: &str = "listener.security.protocol.map";
    let explicit = get(props, KEY);
    let mut protocols = HashMap::new();
    for entry in list(explicit.unwrap_or("")) {
        let (name, proto) = entry
            .split_once(':')
            .ok_or_else(|| invalid(KEY, &entry, "expected NAME:PROTOCOL"))?;
        protocols.insert(
            name.trim().to_ascii_uppercase(),
            proto.trim().to_ascii_uppercase(),
        );
    }
    let map = explicit.unwrap_or("");
    // Kafka's effectiveListenerSecurityProtocolMap: without the map, the other controller
    // listeners are PLAINTEXT only when none is named SSL or SASL_* (`listeners` holds only
    // controller listeners here, so their names are all there is to look at).
    let secure_name = |n: &str| matches!(n, "SSL" | "SASL_PLAINTEXT" | "SASL_SSL");
    let secure_in_use = controller_names.iter().any(|n| secure_name(n));
    let mut out = Vec::new();
    for name in controller_names {
        let protocol = match (protocols.get(name), explicit) {
            (Some(p), _) => p.clone(),
            (None, None) if secure_name(name) || name == "PLAINTEXT" => name.clone(),
            (None, None) if secure_in_use => {
                return Err(invalid(
                    KEY,
                    map,
                    format!(
                        "no security protocol defined for listener {name} (without {KEY}, \
                         controller listeners are PLAINTEXT only when none is named SSL, \
                         SASL_PLAINTEXT or SASL_SSL)"
                    ),
                ))
            }
            (None, None) => "PLAINTEXT".to_string(),
            (None, Some(_)) => {
                return Err(invalid(
                    KEY,
                    map,
                    format!("no security protocol defined for listener {name}"),
                ))
            }
        };
        let Some(p) = SecurityProtocol::from_name(&protocol) else {
            return Err(invalid(
                KEY,
                map,
                format!(
                    "listener {name} uses {protocol}, which is not a security protocol \
                     (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)"
                ),
            ));
        };
        out.push((name.clone(), p));
    }
    Ok(out)
}

impl From<InvalidSetting> for ConfigError {
    fn from(e: InvalidSetting) -> Self {
        ConfigError::Invalid {
            key: e.key,
            value: e.value,
            reason: e.reason,
        }
    }
}
