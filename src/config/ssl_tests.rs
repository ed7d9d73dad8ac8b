//! Tests of the `ssl.*` keys: Kafka's defaults, listener-prefixed precedence, refusals.
use super::*;
use crate::config::ssl::{ClientAuth, KeyStore, StoreType, TlsVersion, TrustStore};

fn ssl_base(extra: &[(&str, &str)]) -> Properties {
    let mut p = base();
    p.insert(
        "listener.security.protocol.map".into(),
        "CONTROLLER:SSL".into(),
    );
    for (k, v) in extra {
        p.insert(k.to_string(), v.to_string());
    }
    p
}

const PEM_KEYSTORE: &[(&str, &str)] = &[
    ("ssl.keystore.type", "PEM"),
    ("ssl.keystore.location", "/etc/k/node.pem"),
];

fn err(p: &Properties) -> String {
    Config::from_properties(p).unwrap_err().to_string()
}

#[test]
fn ssl_controller_listener_gets_kafka_defaults() {
    let c = Config::from_properties(&ssl_base(PEM_KEYSTORE)).unwrap();
    let ssl = &c.ssl["CONTROLLER"];
    assert_eq!(ssl.client_auth, ClientAuth::None);
    assert_eq!(
        ssl.enabled_protocols,
        vec![TlsVersion::Tls12, TlsVersion::Tls13]
    );
    assert_eq!(ssl.client_protocols, ssl.enabled_protocols);
    assert!(ssl.cipher_suites.is_empty());
    assert!(ssl.verify_hostname);
    assert!(ssl.truststore.is_none());
    assert_eq!(
        ssl.keystore,
        Some(KeyStore::File {
            store_type: StoreType::Pem,
            location: "/etc/k/node.pem".into(),
            password: None,
            key_password: None,
        })
    );
    assert!(c.unknown_keys.is_empty(), "{:?}", c.unknown_keys);
}

#[test]
fn plaintext_stays_plaintext() {
    let c = Config::from_properties(&base()).unwrap();
    assert!(c.ssl.is_empty());
    let mut p = base();
    p.insert(
        "listener.security.protocol.map".into(),
        "CONTROLLER:PLAINTEXT".into(),
    );
    assert!(Config::from_properties(&p).unwrap().ssl.is_empty());
}

#[test]
fn a_listener_named_ssl_is_ssl_without_a_map() {
    let mut p = base();
    p.insert("listeners".into(), "SSL://127.0.0.1:19091".into());
    p.insert("controller.listener.names".into(), "SSL".into());
    for (k, v) in PEM_KEYSTORE {
        p.insert(k.to_string(), v.to_string());
    }
    let c = Config::from_properties(&p).unwrap();
    assert!(c.ssl.contains_key("SSL"));
}

/// Kafka's effectiveListenerSecurityProtocolMap: without the map, a controller listener with
/// another name is PLAINTEXT only when no controller listener is named SSL or SASL_*.
#[test]
fn no_plaintext_default_beside_a_listener_named_ssl() {
    let mut p = base();
    p.insert(
        "listeners".into(),
        "CONTROLLER://127.0.0.1:19090,SSL://127.0.0.1:19091".into(),
    );
    p.insert("controller.listener.names".into(), "CONTROLLER,SSL".into());
    for (k, v) in PEM_KEYSTORE {
        p.insert(k.to_string(), v.to_string());
    }
    let e = err(&p);
    assert!(
        e.contains("no security protocol defined for listener CONTROLLER"),
        "{e}"
    );
    // Named PLAINTEXT it is PLAINTEXT; with a map both are what it says.
    p.insert(
        "listeners".into(),
        "PLAINTEXT://127.0.0.1:19090,SSL://127.0.0.1:19091".into(),
    );
    p.insert("controller.listener.names".into(), "PLAINTEXT,SSL".into());
    let c = Config::from_properties(&p).unwrap();
    assert_eq!(c.ssl.keys().collect::<Vec<_>>(), ["SSL"]);
}

#[test]
fn listener_prefixed_keys_win_over_global_ones() {
    let p = ssl_base(&[
        ("ssl.keystore.type", "PKCS12"),
        ("ssl.keystore.location", "/global.p12"),
        ("ssl.keystore.password", "g"),
        ("listener.name.controller.ssl.keystore.location", "/ctl.p12"),
        ("listener.name.controller.ssl.keystore.password", "c"),
        ("ssl.client.auth", "requested"),
        ("listener.name.controller.ssl.client.auth", "required"),
        ("ssl.truststore.type", "PEM"),
        ("ssl.truststore.location", "/ca.pem"),
        (
            "listener.name.controller.ssl.endpoint.identification.algorithm",
            "",
        ),
        ("ssl.enabled.protocols", "TLSv1.3"),
        (
            "ssl.cipher.suites",
            "TLS_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
        ),
    ]);
    let c = Config::from_properties(&p).unwrap();
    let ssl = &c.ssl["CONTROLLER"];
    assert_eq!(
        ssl.keystore,
        Some(KeyStore::File {
            store_type: StoreType::Pkcs12,
            location: "/ctl.p12".into(),
            password: Some("c".into()),
            key_password: None,
        })
    );
    assert_eq!(ssl.client_auth, ClientAuth::Required);
    assert_eq!(
        ssl.truststore,
        Some(TrustStore::File {
            store_type: StoreType::Pem,
            location: "/ca.pem".into(),
            password: None,
        })
    );
    assert!(!ssl.verify_hostname, "empty algorithm: no host name check");
    assert_eq!(ssl.enabled_protocols, vec![TlsVersion::Tls13]);
    assert_eq!(
        ssl.cipher_suites,
        vec![
            "TLS13_AES_128_GCM_SHA256".to_string(),
            "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384".to_string()
        ]
    );
    assert!(c.unknown_keys.is_empty(), "{:?}", c.unknown_keys);
}

#[test]
fn inline_pem_stores_are_read() {
    let p = ssl_base(&[
        ("ssl.keystore.type", "PEM"),
        ("ssl.keystore.key", "-----BEGIN PRIVATE KEY-----..."),
        (
            "ssl.keystore.certificate.chain",
            "-----BEGIN CERTIFICATE-----...",
        ),
        ("ssl.key.password", "kp"),
        ("ssl.truststore.type", "PEM"),
        (
            "ssl.truststore.certificates",
            "-----BEGIN CERTIFICATE-----x",
        ),
    ]);
    let c = Config::from_properties(&p).unwrap();
    let ssl = &c.ssl["CONTROLLER"];
    assert!(matches!(
        &ssl.keystore,
        Some(KeyStore::InlinePem { key_password: Some(kp), .. }) if kp == "kp"
    ));
    assert!(matches!(&ssl.truststore, Some(TrustStore::InlinePem(_))));
}

#[test]
fn an_unknown_security_protocol_is_refused() {
    let mut p = base();
    p.insert(
        "listener.security.protocol.map".into(),
        "CONTROLLER:TLS".into(),
    );
    assert!(err(&p).contains("not a security protocol"));
}

#[test]
fn jks_type_is_kafkas_default_and_needs_a_password() {
    // Explicit JKS and the default type are taken (the file decides when it is loaded: a
    // PKCS12 file is read, a JKS one refused; tls_stores_tests).
    for extra in [&[("ssl.keystore.type", "JKS")][..], &[]] {
        let mut keys = vec![
            ("ssl.keystore.location", "/k.p12"),
            ("ssl.keystore.password", "p"),
        ];
        keys.extend_from_slice(extra);
        let c = Config::from_properties(&ssl_base(&keys)).unwrap();
        assert!(matches!(
            c.ssl["CONTROLLER"].keystore,
            Some(KeyStore::File {
                store_type: StoreType::Jks,
                ..
            })
        ));
    }
    // Like PKCS12, a JKS key store needs its password.
    let e = err(&ssl_base(&[("ssl.keystore.location", "/k.p12")]));
    assert!(e.contains("ssl.keystore.password"), "{e}");
    // A key password equal to the store's is fine; a different one is refused, not ignored.
    let store = [
        ("ssl.keystore.type", "PKCS12"),
        ("ssl.keystore.location", "/k.p12"),
        ("ssl.keystore.password", "p"),
    ];
    let same = [&store[..], &[("ssl.key.password", "p")]].concat();
    assert!(Config::from_properties(&ssl_base(&same)).is_ok());
    let other = [&store[..], &[("ssl.key.password", "q")]].concat();
    let e = err(&ssl_base(&other));
    assert!(e.contains("ssl.key.password") && !e.contains("q\""), "{e}");
    // The refusal names the key that was given, listener prefix and all.
    let prefixed = [
        &store[..],
        &[("listener.name.controller.ssl.key.password", "q")],
    ]
    .concat();
    let e = err(&ssl_base(&prefixed));
    assert!(
        e.starts_with(
            "Invalid value [hidden] for configuration listener.name.controller.ssl.key.password:"
        ),
        "{e}"
    );
}

#[test]
fn kafka_store_combinations_are_refused() {
    let cases: &[(&[(&str, &str)], &str)] = &[
        // PEM key stores take no store password.
        (
            &[
                ("ssl.keystore.type", "PEM"),
                ("ssl.keystore.location", "/k.pem"),
                ("ssl.keystore.password", "p"),
            ],
            "password cannot be given with PEM",
        ),
        // PKCS12 needs one.
        (
            &[
                ("ssl.keystore.type", "PKCS12"),
                ("ssl.keystore.location", "/k.p12"),
            ],
            "ssl.keystore.password is not",
        ),
        // Inline key only with PEM.
        (
            &[
                ("ssl.keystore.type", "PKCS12"),
                ("ssl.keystore.key", "k"),
                ("ssl.keystore.certificate.chain", "c"),
            ],
            "only with ssl.keystore.type=PEM",
        ),
        // Key without chain and chain without key.
        (
            &[("ssl.keystore.type", "PEM"), ("ssl.keystore.key", "k")],
            "ssl.keystore.certificate.chain is not",
        ),
        (
            &[
                ("ssl.keystore.type", "PEM"),
                ("ssl.keystore.certificate.chain", "c"),
            ],
            "ssl.keystore.key is not",
        ),
        // Both a location and an inline key.
        (
            &[
                ("ssl.keystore.type", "PEM"),
                ("ssl.keystore.key", "k"),
                ("ssl.keystore.certificate.chain", "c"),
                ("ssl.keystore.location", "/k.pem"),
            ],
            "both a key store location and an inline",
        ),
        // Trust store: PEM takes no password; inline only with PEM.
        (
            &[
                ("ssl.keystore.type", "PEM"),
                ("ssl.keystore.location", "/k.pem"),
                ("ssl.truststore.type", "PEM"),
                ("ssl.truststore.location", "/t.pem"),
                ("ssl.truststore.password", "p"),
            ],
            "trust store password cannot be given with PEM",
        ),
        (
            &[
                ("ssl.keystore.type", "PEM"),
                ("ssl.keystore.location", "/k.pem"),
                ("ssl.truststore.certificates", "c"),
            ],
            "only with ssl.truststore.type=PEM",
        ),
        // Client certificates need a trust store.
        (
            &[
                ("ssl.keystore.type", "PEM"),
                ("ssl.keystore.location", "/k.pem"),
                ("ssl.client.auth", "required"),
            ],
            "need a trust store",
        ),
        (
            &[
                ("ssl.keystore.type", "PEM"),
                ("ssl.keystore.location", "/k.pem"),
                ("ssl.client.auth", "always"),
            ],
            "required, requested, none",
        ),
        // Empty is not "none": Kafka's ValidString refuses it (a templated value left unset
        // must not turn client authentication off).
        (
            &[
                ("ssl.keystore.type", "PEM"),
                ("ssl.keystore.location", "/k.pem"),
                ("listener.name.controller.ssl.client.auth", ""),
            ],
            "required, requested, none",
        ),
        // Protocols rustls lacks, unknown ones, none.
        (
            &[
                ("ssl.keystore.type", "PEM"),
                ("ssl.keystore.location", "/k.pem"),
                ("ssl.enabled.protocols", "TLSv1.2,TLSv1.1"),
            ],
            "TLSv1.1 is not supported",
        ),
        (
            &[
                ("ssl.keystore.type", "PEM"),
                ("ssl.keystore.location", "/k.pem"),
                ("ssl.enabled.protocols", ""),
            ],
            "at least one",
        ),
        (
            &[
                ("ssl.keystore.type", "PEM"),
                ("ssl.keystore.location", "/k.pem"),
                ("ssl.protocol", "SSLv3"),
            ],
            "SSLv3 is not supported",
        ),
        // A suite rustls lacks (CBC).
        (
            &[
                ("ssl.keystore.type", "PEM"),
                ("ssl.keystore.location", "/k.pem"),
                ("ssl.cipher.suites", "TLS_RSA_WITH_AES_128_CBC_SHA"),
            ],
            "TLS_RSA_WITH_AES_128_CBC_SHA is not available",
        ),
        (
            &[
                ("ssl.keystore.type", "PEM"),
                ("ssl.keystore.location", "/k.pem"),
                ("ssl.endpoint.identification.algorithm", "ldaps"),
            ],
            "expected https",
        ),
        (
            &[
                ("ssl.keystore.type", "BKS"),
                ("ssl.keystore.location", "/k.bks"),
            ],
            "PKCS12 and PEM stores only",
        ),
    ];
    for (extra, wanted) in cases {
        let e = err(&ssl_base(extra));
        assert!(e.contains(wanted), "{extra:?}: wanted {wanted:?} in {e}");
    }
}

#[test]
fn passwords_are_not_echoed_in_errors() {
    let e = err(&ssl_base(&[
        ("ssl.keystore.type", "PEM"),
        ("ssl.keystore.location", "/k.pem"),
        ("ssl.keystore.password", "s3cret-value"),
    ]));
    assert!(!e.contains("s3cret-value"), "{e}");
}

#[test]
fn a_printed_config_hides_passwords_and_inline_keys() {
    let p = ssl_base(&[
        ("ssl.keystore.type", "PKCS12"),
        ("ssl.keystore.location", "/k.p12"),
        ("ssl.keystore.password", "st0re-s3cret"),
        ("ssl.truststore.type", "PKCS12"),
        ("ssl.truststore.location", "/t.p12"),
        ("ssl.truststore.password", "tru5t-s3cret"),
    ]);
    let c = Config::from_properties(&p).unwrap();
    let shown = format!("{:?}", c.ssl["CONTROLLER"]);
    assert!(shown.contains("[hidden]"), "{shown}");
    for secret in ["st0re-s3cret", "tru5t-s3cret"] {
        assert!(!shown.contains(secret), "{shown}");
    }
    let inline = KeyStore::InlinePem {
        key: "-----BEGIN PRIVATE KEY-----s3cret-key".into(),
        chain: "-----BEGIN CERTIFICATE-----x".into(),
        key_password: Some("kp-s3cret".into()),
    };
    let shown = format!("{inline:?}");
    assert!(!shown.contains("s3cret"), "{shown}");
    assert!(!shown.contains("BEGIN CERTIFICATE"), "{shown}");
    let trust = TrustStore::InlinePem("-----BEGIN CERTIFICATE-----ca".into());
    assert!(!format!("{trust:?}").contains("BEGIN"), "{trust:?}");
}

#[test]
fn ssl_protocol_tls12_keeps_outbound_connections_on_tls12() {
    let mut extra = PEM_KEYSTORE.to_vec();
    extra.push(("ssl.protocol", "TLSv1.2"));
    let c = Config::from_properties(&ssl_base(&extra)).unwrap();
    let ssl = &c.ssl["CONTROLLER"];
    assert_eq!(
        ssl.enabled_protocols,
        vec![TlsVersion::Tls12, TlsVersion::Tls13]
    );
    assert_eq!(ssl.client_protocols, vec![TlsVersion::Tls12]);
    extra.push(("ssl.enabled.protocols", "TLSv1.3"));
    assert!(err(&ssl_base(&extra)).contains("TLSv1.2 is not among"));
}
