//! Tests of the SASL keys: mechanisms, JAAS options, reauthentication, refusals.
use super::*;
use crate::security::scram::ScramMechanism;
use crate::security::SaslMechanism;

const PLAIN_JAAS: &str = "org.apache.kafka.common.security.plain.PlainLoginModule required \
                          username=\"admin\" password=\"admin-secret\" user_admin=\"admin-secret\" \
                          user_alice=\"alice-secret\";";

fn sasl_base(protocol: &str, extra: &[(&str, &str)]) -> Properties {
    let mut p = base();
    p.insert(
        "listener.security.protocol.map".into(),
        format!("CONTROLLER:{protocol}"),
    );
    for (k, v) in extra {
        p.insert(k.to_string(), v.to_string());
    }
    p
}

fn err(p: &Properties) -> String {
    Config::from_properties(p).unwrap_err().to_string()
}

#[test]
fn sasl_plaintext_with_plain() {
    let p = sasl_base(
        "SASL_PLAINTEXT",
        &[
            ("sasl.enabled.mechanisms", "PLAIN"),
            ("sasl.mechanism.controller.protocol", "PLAIN"),
            (
                "listener.name.controller.plain.sasl.jaas.config",
                PLAIN_JAAS,
            ),
        ],
    );
    let c = Config::from_properties(&p).unwrap();
    assert!(c.ssl.is_empty());
    let s = &c.sasl["CONTROLLER"];
    assert_eq!(s.enabled_mechanisms, [SaslMechanism::Plain]);
    assert_eq!(s.plain_users.len(), 2);
    assert!(s.plain_users["alice"] == *"alice-secret");
    assert_eq!(s.max_reauth_ms[&SaslMechanism::Plain], 0);
    assert_eq!(s.failed_authentication_delay_ms, 100);
    assert_eq!(s.max_receive_size, 524_288);
    let client = c.sasl_client.as_ref().unwrap();
    assert_eq!(
        (client.mechanism, client.username.as_str()),
        (SaslMechanism::Plain, "admin")
    );
    assert!(client.password == *"admin-secret");
    // Passwords never print.
    let printed = format!("{c:?}");
    assert!(!printed.contains("secret"), "{printed}");
    assert!(c.unknown_keys.is_empty(), "{:?}", c.unknown_keys);
}

#[test]
fn sasl_ssl_reads_both_halves_and_listener_overrides() {
    let p = sasl_base(
        "SASL_SSL",
        &[
            ("ssl.keystore.type", "PEM"),
            ("ssl.keystore.location", "/etc/k/node.pem"),
            ("sasl.enabled.mechanisms", "GSSAPI"),
            ("listener.name.controller.sasl.enabled.mechanisms", "SCRAM-SHA-512,PLAIN,PLAIN"),
            ("sasl.mechanism.controller.protocol", "SCRAM-SHA-512"),
            ("listener.name.controller.plain.sasl.jaas.config", PLAIN_JAAS),
            (
                "listener.name.controller.scram-sha-512.sasl.jaas.config",
                "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"ctl\" password=\"pw\";",
            ),
            ("connections.max.reauth.ms", "60000"),
            ("listener.name.controller.plain.connections.max.reauth.ms", "5000"),
            ("connection.failed.authentication.delay.ms", "0"),
        ],
    );
    let c = Config::from_properties(&p).unwrap();
    assert!(c.ssl.contains_key("CONTROLLER"));
    let s = &c.sasl["CONTROLLER"];
    // Deduplicated, in Java's HashSet order.
    assert_eq!(
        s.enabled_mechanisms,
        [
            SaslMechanism::Plain,
            SaslMechanism::Scram(ScramMechanism::Sha512)
        ]
    );
    assert_eq!(s.max_reauth_ms[&SaslMechanism::Plain], 5000);
    assert_eq!(
        s.max_reauth_ms[&SaslMechanism::Scram(ScramMechanism::Sha512)],
        60000
    );
    assert_eq!(s.failed_authentication_delay_ms, 0);
    let client = c.sasl_client.unwrap();
    assert_eq!(
        client.mechanism,
        SaslMechanism::Scram(ScramMechanism::Sha512)
    );
    assert_eq!(client.username, "ctl");
    assert!(c.unknown_keys.is_empty(), "{:?}", c.unknown_keys);
}

#[test]
fn refusals_name_the_key_and_hide_the_jaas_text() {
    // Kafka's default mechanism is GSSAPI, which ferrokraft does not serve.
    let e = err(&sasl_base("SASL_PLAINTEXT", &[]));
    assert!(
        e.contains("sasl.enabled.mechanisms") && e.contains("GSSAPI"),
        "{e}"
    );
    // An enabled mechanism without its JAAS configuration.
    let e = err(&sasl_base(
        "SASL_PLAINTEXT",
        &[("sasl.enabled.mechanisms", "PLAIN")],
    ));
    assert!(
        e.contains("listener.name.controller.plain.sasl.jaas.config"),
        "{e}"
    );
    // A JAAS value that does not parse: Kafka's reason, and the value hidden.
    let bad = "org.apache.kafka.common.security.plain.PlainLoginModule required user_a=\"s3cret\"";
    let e = err(&sasl_base(
        "SASL_PLAINTEXT",
        &[
            ("sasl.enabled.mechanisms", "PLAIN"),
            ("sasl.mechanism.controller.protocol", "PLAIN"),
            ("listener.name.controller.plain.sasl.jaas.config", bad),
        ],
    ));
    assert!(
        e.contains("not terminated by semi-colon") && !e.contains("s3cret"),
        "{e}"
    );
    // The peer mechanism (default GSSAPI) must be one ferrokraft can send.
    let e = err(&sasl_base(
        "SASL_PLAINTEXT",
        &[
            ("sasl.enabled.mechanisms", "PLAIN"),
            (
                "listener.name.controller.plain.sasl.jaas.config",
                PLAIN_JAAS,
            ),
        ],
    ));
    assert!(e.contains("sasl.mechanism.controller.protocol"), "{e}");
    // The peer mechanism's login module needs username and password.
    let e = err(&sasl_base(
        "SASL_PLAINTEXT",
        &[
            ("sasl.enabled.mechanisms", "PLAIN"),
            ("sasl.mechanism.controller.protocol", "PLAIN"),
            (
                "listener.name.controller.plain.sasl.jaas.config",
                "org.apache.kafka.common.security.plain.PlainLoginModule required user_a=\"b\";",
            ),
        ],
    ));
    assert!(e.contains("'username'"), "{e}");
    let e = err(&sasl_base(
        "SASL_PLAINTEXT",
        &[("sasl.enabled.mechanisms", "OAUTHBEARER")],
    ));
    assert!(e.contains("OAUTHBEARER"), "{e}");
}

#[test]
fn users_come_only_from_kafkas_plain_login_module() {
    let p = sasl_base(
        "SASL_PLAINTEXT",
        &[
            ("sasl.enabled.mechanisms", "PLAIN"),
            ("sasl.mechanism.controller.protocol", "PLAIN"),
            (
                "listener.name.controller.plain.sasl.jaas.config",
                "com.example.OtherLoginModule required username=\"a\" password=\"b\" user_a=\"b\";",
            ),
        ],
    );
    let c = Config::from_properties(&p).unwrap();
    assert!(c.sasl["CONTROLLER"].plain_users.is_empty());
}

/// Kafka reads `sasl.server.max.receive.size` from the listener's channel configs, so the
/// listener-prefixed key wins over the global one.
#[test]
fn max_receive_size_takes_the_listener_prefix() {
    let plain = [
        ("sasl.enabled.mechanisms", "PLAIN"),
        ("sasl.mechanism.controller.protocol", "PLAIN"),
        (
            "listener.name.controller.plain.sasl.jaas.config",
            PLAIN_JAAS,
        ),
        ("sasl.server.max.receive.size", "2000"),
    ];
    let size =
        |p: &Properties| Config::from_properties(p).unwrap().sasl["CONTROLLER"].max_receive_size;
    assert_eq!(size(&sasl_base("SASL_PLAINTEXT", &plain)), 2000);
    let prefixed = [
        &plain[..],
        &[(
            "listener.name.controller.sasl.server.max.receive.size",
            "1000",
        )],
    ]
    .concat();
    assert_eq!(size(&sasl_base("SASL_PLAINTEXT", &prefixed)), 1000);
}
