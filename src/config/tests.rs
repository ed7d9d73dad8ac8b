//! Tests of server.properties parsing.
use super::*;

fn props(pairs: &[(&str, &str)]) -> Properties {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn base() -> Properties {
    props(&[
        ("process.roles", "controller"),
        ("node.id", "1"),
        (
            "controller.quorum.voters",
            "1@127.0.0.1:19091, 2@127.0.0.1:19092",
        ),
        ("listeners", "CONTROLLER://127.0.0.1:19091"),
        ("controller.listener.names", "CONTROLLER"),
        ("log.dirs", "/tmp/a,/tmp/b"),
    ])
}

#[test]
fn kafka_defaults_apply() {
    let c = Config::from_properties(&base()).unwrap();
    assert_eq!(c.node_id, 1);
    assert_eq!(c.quorum_voters.len(), 2);
    assert_eq!(c.quorum_voters[1].port, 19092);
    assert_eq!(c.metadata_log_dir, PathBuf::from("/tmp/a"));
    assert_eq!(c.quorum_election_timeout_ms, 1000);
    assert_eq!(c.quorum_fetch_timeout_ms, 2000);
    assert_eq!(c.quorum_append_linger_ms, 25);
    assert_eq!(c.quorum_retry_backoff_ms, 20);
    assert_eq!(c.socket_request_max_bytes, 104_857_600);
    assert_eq!(c.metadata_log_segment_bytes, 1 << 30);
    assert_eq!(c.advertised_listeners, c.listeners);
    assert!(c.unknown_keys.is_empty());
}

#[test]
fn unknown_keys_are_collected_not_refused() {
    let mut p = base();
    p.insert("ferrokraft.something".into(), "x".into());
    p.insert("num.io.threads".into(), "1".into());
    let c = Config::from_properties(&p).unwrap();
    assert_eq!(c.unknown_keys, vec!["ferrokraft.something".to_string()]);
}

#[test]
fn invalid_values_name_key_and_value() {
    let mut p = base();
    p.insert("node.id".into(), "-3".into());
    let e = Config::from_properties(&p).unwrap_err().to_string();
    assert!(e.contains("node.id") && e.contains("-3"), "{e}");

    let mut p = base();
    p.insert("controller.quorum.voters".into(), "1@host".into());
    let e = Config::from_properties(&p).unwrap_err().to_string();
    assert!(
        e.contains("controller.quorum.voters") && e.contains("1@host"),
        "{e}"
    );

    // SSL without a key store cannot serve.
    let mut p = base();
    p.insert(
        "listener.security.protocol.map".into(),
        "CONTROLLER:SSL".into(),
    );
    let e = Config::from_properties(&p).unwrap_err().to_string();
    assert!(e.contains("SSL") && e.contains("key store"), "{e}");

    let mut p = base();
    p.insert("metadata.log.segment.bytes".into(), "1024".into());
    assert!(Config::from_properties(&p).is_err());
    p.insert("internal.metadata.log.segment.bytes".into(), "1024".into());
    assert_eq!(
        Config::from_properties(&p)
            .unwrap()
            .metadata_log_segment_bytes,
        1024
    );
}

#[test]
fn missing_required_keys_are_named() {
    for key in [
        "process.roles",
        "node.id",
        "controller.listener.names",
        "listeners",
    ] {
        let mut p = base();
        p.remove(key);
        let e = Config::from_properties(&p).unwrap_err().to_string();
        assert!(e.contains(key), "{key}: {e}");
    }
}

#[test]
fn broker_role_is_refused_clearly() {
    let mut p = base();
    p.insert("process.roles".into(), "broker,controller".into());
    let e = Config::from_properties(&p).unwrap_err().to_string();
    assert!(e.contains("process.roles"), "{e}");
}

#[test]
fn overrides_apply_after_the_file() {
    let mut p = base();
    apply_overrides(&mut p, &["node.id=2".to_string()]).unwrap();
    assert_eq!(Config::from_properties(&p).unwrap().node_id, 2);
    assert!(apply_overrides(&mut p, &["nonsense".to_string()]).is_err());
}

#[test]
fn java_properties_syntax_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.properties");
    std::fs::write(
        &path,
        "# comment\nprocess.roles = controller\nnode.id:7\ncontroller.quorum.voters=7@127.0.0.1:1,\\\n   8@127.0.0.1:2\nlisteners=CONTROLLER://:9093\ncontroller.listener.names=CONTROLLER\n",
    )
    .unwrap();
    let c = Config::load(&path, &[]).unwrap();
    assert_eq!(c.node_id, 7);
    assert_eq!(c.quorum_voters.len(), 2);
    assert_eq!(c.listeners[0].host, "");
    assert_eq!(c.metadata_log_dir, PathBuf::from("/tmp/kafka-logs"));
}

#[path = "providers_tests.rs"]
mod providers_tests;
#[path = "sasl_tests.rs"]
mod sasl_tests;
#[path = "ssl_tests.rs"]
mod ssl_tests;

#[test]
fn delegation_tokens_are_on_only_with_a_secret_key() {
    let c = Config::from_properties(&base()).unwrap();
    assert!(c.delegation_tokens.is_none());
    let mut p = base();
    p.insert("delegation.token.secret.key".into(), String::new());
    assert!(Config::from_properties(&p)
        .unwrap()
        .delegation_tokens
        .is_none());

    p.insert("delegation.token.secret.key".into(), "s3cret".into());
    p.insert(
        "delegation.token.expiry.check.interval.ms".into(),
        "5000".into(),
    );
    let t = Config::from_properties(&p)
        .unwrap()
        .delegation_tokens
        .unwrap();
    assert_eq!(t.secret_key, "s3cret");
    assert_eq!(t.max_lifetime_ms, 7 * 24 * 3_600_000);
    assert_eq!(t.expiry_time_ms, 24 * 3_600_000);
    assert_eq!(t.expiry_check_interval_ms, 5000);
    // The key never shows in a debug print (Kafka's PASSWORD type prints [hidden]).
    assert!(!format!("{t:?}").contains("s3cret"));

    // Kafka's atLeast(1) on the lifetimes, checked with or without a key.
    let mut p = base();
    p.insert("delegation.token.max.lifetime.ms".into(), "0".into());
    let e = Config::from_properties(&p).unwrap_err().to_string();
    assert!(e.contains("delegation.token.max.lifetime.ms"), "{e}");
}
