use super::*;

fn props(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn find<'a>(
    entries: &'a [DescribeConfigsResourceResult],
    name: &str,
) -> &'a DescribeConfigsResourceResult {
    entries
        .iter()
        .find(|e| e.name.as_str() == name)
        .unwrap_or_else(|| panic!("{name} not listed"))
}

fn value(e: &DescribeConfigsResourceResult) -> Option<&str> {
    e.value.as_ref().map(|v| v.as_str())
}

fn synonyms(e: &DescribeConfigsResourceResult) -> Vec<(String, Option<String>, i8)> {
    e.synonyms
        .iter()
        .map(|s| {
            (
                s.name.to_string(),
                s.value.as_ref().map(|v| v.to_string()),
                s.source,
            )
        })
        .collect()
}

const BASE: &[(&str, &str)] = &[
    ("process.roles", "controller"),
    ("node.id", "1"),
    ("controller.quorum.voters", "1@127.0.0.1:9093"),
    ("listeners", "CONTROLLER://127.0.0.1:9093"),
    ("controller.listener.names", "CONTROLLER"),
    ("log.dirs", " /tmp/a , /tmp/b "),
];

#[test]
fn the_table_is_sorted_and_lists_kafkas_316_public_keys() {
    assert!(KEYS.windows(2).all(|w| w[0].name <= w[1].name));
    // Each release's ConfigDef, read from its jars: one definition per name, and its count
    // of public keys (Kafka 4.0.2: 289 … 4.4.0: 350).
    let mut counts = Vec::new();
    for release in Release::ALL {
        let of_release: Vec<&StaticKey> = KEYS.iter().filter(|k| k.releases.has(release)).collect();
        assert!(
            of_release.windows(2).all(|w| w[0].name < w[1].name),
            "{release:?}"
        );
        counts.push(
            of_release
                .iter()
                .filter(|k| !k.flags.has(Flags::INTERNAL))
                .count(),
        );
    }
    assert_eq!(counts, [289, 316, 321, 341, 350]);
    // broker.id is added from node.id, as Kafka's populateSynonyms does; the other given keys
    // are all ConfigDef keys.
    let p = props(BASE);
    let entries = NodeConfigs::new(Release::Kafka4_1, &p, None, None).describe_node(true);
    assert_eq!(entries.len(), 316);
    let broker_id = find(&entries, "broker.id");
    assert_eq!(value(broker_id), Some("1"));
    assert_eq!(broker_id.config_source, source::STATIC_BROKER_CONFIG);
}

#[test]
fn static_values_are_printed_back_as_parsed_and_synonyms_keep_the_raw_text() {
    let p = props(BASE);
    let entries = NodeConfigs::new(Release::Kafka4_1, &p, None, None).describe_node(true);
    let dirs = find(&entries, "log.dirs");
    // A STRING in Kafka 4.1: trimmed, not split.
    assert_eq!(value(dirs), Some("/tmp/a , /tmp/b"));
    assert_eq!(
        synonyms(dirs),
        vec![(
            "log.dirs".to_string(),
            Some(" /tmp/a , /tmp/b ".to_string()),
            source::STATIC_BROKER_CONFIG
        )]
    );
    assert!(dirs.read_only);
    assert_eq!(dirs.config_type, 2 /* STRING */);
    let ratio = find(&entries, "log.cleaner.min.cleanable.ratio");
    assert_eq!(value(ratio), Some("0.5"));
    assert_eq!(ratio.config_source, source::DEFAULT_CONFIG);
    assert!(!ratio.read_only, "a dynamic config is not read-only");
    let rack = find(&entries, "broker.rack");
    assert_eq!(value(rack), None);
    assert!(synonyms(rack).is_empty(), "a null default has no synonym");
}

#[test]
fn unknown_keys_are_listed_as_sensitive_and_passwords_hidden() {
    let mut p = props(BASE);
    p.insert("ferrokraft.kafka.release".into(), "4.1".into());
    p.insert("ssl.keystore.password".into(), "secret".into());
    p.insert(
        "listener.name.controller.ssl.keystore.location".into(),
        "/k.p12".into(),
    );
    let entries = NodeConfigs::new(Release::Kafka4_1, &p, None, None).describe_node(true);
    let own = find(&entries, "ferrokraft.kafka.release");
    assert!(own.is_sensitive);
    assert_eq!(value(own), None);
    assert_eq!(own.config_type, 0);
    assert_eq!(
        synonyms(own),
        vec![(
            "ferrokraft.kafka.release".to_string(),
            None,
            source::STATIC_BROKER_CONFIG
        )]
    );
    let password = find(&entries, "ssl.keystore.password");
    assert!(password.is_sensitive);
    assert_eq!(value(password), None);
    // A listener-prefixed key has its base's type and the base as a synonym.
    let location = find(&entries, "listener.name.controller.ssl.keystore.location");
    assert!(!location.is_sensitive);
    assert!(location.read_only);
    assert_eq!(value(location), Some("/k.p12"));
    assert_eq!(synonyms(location).len(), 1);
}

#[test]
fn dynamic_values_win_and_synonyms_run_from_the_name_on() {
    let mut p = props(BASE);
    p.insert("log.roll.hours".into(), "24".into());
    let node = props(&[("log.cleaner.threads", "2"), ("num.partitions", "3")]);
    let cluster = props(&[
        ("log.cleaner.threads", "4"),
        ("log.roll.ms", "1000"),
        ("ssl.protocol", "TLSv1.2"),
        ("unknown.key", "x"),
    ]);
    let configs = NodeConfigs::new(Release::Kafka4_1, &p, Some(&node), Some(&cluster));
    let entries = configs.describe_node(true);
    let threads = find(&entries, "log.cleaner.threads");
    assert_eq!(value(threads), Some("2"));
    assert_eq!(threads.config_source, source::DYNAMIC_BROKER_CONFIG);
    assert_eq!(
        synonyms(threads).iter().map(|s| s.2).collect::<Vec<_>>(),
        vec![
            source::DYNAMIC_BROKER_CONFIG,
            source::DYNAMIC_DEFAULT_BROKER_CONFIG,
            source::DEFAULT_CONFIG
        ]
    );
    // num.partitions is static only: its dynamic value is dropped, as Kafka drops it.
    assert_eq!(
        find(&entries, "num.partitions").config_source,
        source::DEFAULT_CONFIG
    );
    // log.roll.ms set at the cluster level replaces the static log.roll.hours in the
    // merged originals; log.roll.hours's synonyms start at its own name.
    let ms = find(&entries, "log.roll.ms");
    assert_eq!(value(ms), Some("1000"));
    assert_eq!(ms.config_source, source::DYNAMIC_DEFAULT_BROKER_CONFIG);
    let hours = find(&entries, "log.roll.hours");
    assert_eq!(
        synonyms(hours),
        vec![
            (
                "log.roll.hours".to_string(),
                Some("24".to_string()),
                source::STATIC_BROKER_CONFIG
            ),
            (
                "log.roll.hours".to_string(),
                Some("168".to_string()),
                source::DEFAULT_CONFIG
            ),
        ]
    );
    // The cluster default resource: per-broker (ssl.protocol) and static-only keys dropped.
    let defaults = configs.describe_cluster_default(true);
    let names: Vec<&str> = defaults.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["log.cleaner.threads", "log.roll.ms", "unknown.key"]);
    let roll = find(&defaults, "log.roll.ms");
    assert_eq!(
        synonyms(roll),
        vec![(
            "log.roll.ms".to_string(),
            Some("1000".to_string()),
            source::DYNAMIC_DEFAULT_BROKER_CONFIG
        )]
    );
    assert!(find(&defaults, "unknown.key").is_sensitive);
}

#[test]
fn values_print_as_kafka_parses_them() {
    assert_eq!(printed(Kind::Boolean, " TRUE "), "true");
    assert_eq!(printed(Kind::Int, "+7"), "7");
    assert_eq!(printed(Kind::Long, "x"), "x");
    assert_eq!(printed(Kind::Double, "1e-4"), "1.0E-4");
    assert_eq!(printed(Kind::List, "a , b,,"), "a,b,,");
    assert_eq!(printed(Kind::List, "  "), "");
    assert_eq!(printed(Kind::String, " v "), "v");
}

/// Each release describes its own ConfigDef: Kafka 4.3 added `cordoned.log.dirs`, and
/// `advertised.listeners` is a STRING up to 4.1 and a LIST from 4.2.
#[test]
fn each_release_describes_its_own_keys() {
    let p = props(BASE);
    let describe = |release| NodeConfigs::new(release, &p, None, None).describe_node(false);
    let names = |entries: &[DescribeConfigsResourceResult]| -> Vec<String> {
        entries.iter().map(|e| e.name.to_string()).collect()
    };
    let type_of =
        |entries: &[DescribeConfigsResourceResult], name: &str| find(entries, name).config_type;
    let (r40, r42, r43) = (
        describe(Release::Kafka4_0),
        describe(Release::Kafka4_2),
        describe(Release::Kafka4_3),
    );
    assert!(!names(&r42).contains(&"cordoned.log.dirs".to_string()));
    assert!(names(&r43).contains(&"cordoned.log.dirs".to_string()));
    assert_eq!(type_of(&r40, "advertised.listeners"), Kind::String.id());
    assert_eq!(type_of(&r42, "advertised.listeners"), Kind::List.id());
}
