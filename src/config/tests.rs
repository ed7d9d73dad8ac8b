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
}

/// Kafka 4.1.2's MetadataLogConfig: metadata.log.segment.bytes is always at least 8 MiB (its
/// ConfigDef bound), internal.metadata.log.segment.bytes replaces it when set, and 4.0's
/// metadata.log.segment.min.bytes is no longer a key.
#[test]
fn metadata_log_segment_sizes_are_kafkas() {
    let segment_bytes =
        |p: &Properties| Config::from_properties(p).map(|c| c.metadata_log_segment_bytes);
    let mut p = base();
    p.insert("metadata.log.segment.bytes".into(), "1024".into());
    let refused = "Invalid value 1024 for configuration metadata.log.segment.bytes: Value must be at least 8388608";
    assert_eq!(segment_bytes(&p).unwrap_err().to_string(), refused);
    // The internal override does not lift the public key's bound.
    p.insert("internal.metadata.log.segment.bytes".into(), "1024".into());
    assert_eq!(segment_bytes(&p).unwrap_err().to_string(), refused);
    p.remove("metadata.log.segment.bytes");
    assert_eq!(segment_bytes(&p).unwrap(), 1024);

    let mut p = base();
    p.insert("metadata.log.segment.min.bytes".into(), "16384".into());
    let c = Config::from_properties(&p).unwrap();
    assert_eq!(c.metadata_log_segment_bytes, 1 << 30);
    assert_eq!(
        c.unknown_keys,
        vec!["metadata.log.segment.min.bytes".to_string()]
    );
    p.insert("metadata.log.segment.bytes".into(), "1024".into());
    assert_eq!(segment_bytes(&p).unwrap_err().to_string(), refused);
}

/// metadata.log.max.record.bytes.between.snapshots is LONG, atLeast(1): the number is
/// checked, not its spelling.
#[test]
fn snapshot_bytes_bound_checks_the_number() {
    for value in ["0", "00", "-0", "+0"] {
        let mut p = base();
        p.insert(
            "metadata.log.max.record.bytes.between.snapshots".into(),
            value.into(),
        );
        let e = Config::from_properties(&p).unwrap_err().to_string();
        assert_eq!(
            e,
            "Invalid value 0 for configuration metadata.log.max.record.bytes.between.snapshots: Value must be at least 1",
            "{value}"
        );
    }
    let mut p = base();
    p.insert(
        "metadata.log.max.record.bytes.between.snapshots".into(),
        "1".into(),
    );
    assert_eq!(
        Config::from_properties(&p)
            .unwrap()
            .metadata_log_max_record_bytes_between_snapshots,
        1
    );
}

#[test]
fn delete_topic_enable_is_read_and_known() {
    let mut p = base();
    p.insert("delete.topic.enable".into(), "false".into());
    let c = Config::from_properties(&p).unwrap();
    assert!(!c.delete_topic_enable);
    assert!(c.unknown_keys.is_empty(), "{:?}", c.unknown_keys);
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
    // Kafka's ConfigDef trims a PASSWORD value as any other: surrounding blanks are not part
    // of the key, and a blank key disables tokens as an empty one does.
    p.insert("delegation.token.secret.key".into(), " s3cret \t".into());
    let trimmed = Config::from_properties(&p).unwrap().delegation_tokens;
    assert_eq!(trimmed.map(|t| t.secret_key), Some("s3cret".to_string()));
    p.insert("delegation.token.secret.key".into(), "  ".into());
    assert!(Config::from_properties(&p)
        .unwrap()
        .delegation_tokens
        .is_none());
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

/// KIP-1219's keys (Kafka 4.3's QuorumConfig: INT, atLeast(1), default 1 MiB — the default is
/// the presented release's, so unset stays unset here).
#[test]
fn quorum_fetch_max_bytes_keys() {
    let c = Config::from_properties(&base()).unwrap();
    assert_eq!(
        (c.quorum_fetch_max_bytes, c.quorum_fetch_snapshot_max_bytes),
        (None, None)
    );
    let mut p = base();
    p.insert("controller.quorum.fetch.max.bytes".into(), "65536".into());
    p.insert(
        "controller.quorum.fetch.snapshot.max.bytes".into(),
        " 1 ".into(),
    );
    let c = Config::from_properties(&p).unwrap();
    assert_eq!(
        (c.quorum_fetch_max_bytes, c.quorum_fetch_snapshot_max_bytes),
        (Some(65536), Some(1))
    );
    assert!(c.unknown_keys.is_empty());
    for key in [
        "controller.quorum.fetch.max.bytes",
        "controller.quorum.fetch.snapshot.max.bytes",
    ] {
        for value in ["0", "-00", "-5"] {
            let mut p = base();
            p.insert(key.into(), value.into());
            let parsed: i32 = value.parse().unwrap();
            assert_eq!(
                Config::from_properties(&p).unwrap_err().to_string(),
                format!("Invalid value {parsed} for configuration {key}: Value must be at least 1")
            );
        }
        let mut p = base();
        p.insert(key.into(), "2147483648".into());
        let e = Config::from_properties(&p).unwrap_err().to_string();
        assert!(e.contains(key) && e.contains("2147483648"), "{e}");
    }
}
