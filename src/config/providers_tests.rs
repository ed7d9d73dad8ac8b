//! Config providers, rule by rule; every expected message is the string in Kafka 4.1.2's
//! kafka-clients jar (`javap -v` of the provider classes, `AllowedPaths`, `AbstractConfig`).

use std::collections::BTreeMap;

use crate::config::providers::{
    is_provider_key, resolve_with_env, AllowedPaths, JavaPath, ProviderClass,
};
use crate::config::{Config, ConfigError, Properties};

const FILE: &str = "org.apache.kafka.common.config.provider.FileConfigProvider";
const DIRECTORY: &str = "org.apache.kafka.common.config.provider.DirectoryConfigProvider";
const ENV: &str = "org.apache.kafka.common.config.provider.EnvVarConfigProvider";
const STRIMZI_ENV: &str = "io.strimzi.kafka.EnvVarConfigProvider";
const STRIMZI_SECRETS: &str = "io.strimzi.kafka.KubernetesSecretConfigProvider";

fn props(pairs: &[(&str, &str)]) -> Properties {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    props(pairs)
}

fn resolved(raw: &Properties, environment: &BTreeMap<String, String>, key: &str) -> String {
    resolve_with_env(raw, environment).unwrap().props[key].clone()
}

fn error(raw: &Properties, environment: &BTreeMap<String, String>) -> String {
    resolve_with_env(raw, environment).unwrap_err().to_string()
}

fn env_provider(extra: &[(&str, &str)]) -> Properties {
    let mut p = props(&[
        ("config.providers", "env"),
        ("config.providers.env.class", ENV),
    ]);
    p.extend(props(extra));
    p
}

#[test]
fn nothing_is_resolved_without_config_providers() {
    let raw = props(&[("listeners", "${env:L}")]);
    let out = resolve_with_env(&raw, &env(&[("L", "x")])).unwrap();
    assert_eq!(out.props, raw);
    assert_eq!(out.resolved_keys().count(), 0);
}

#[test]
fn the_path_ends_at_the_first_colon_and_the_key_takes_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("p.properties");
    std::fs::write(&file, "a\\:b=colon key\nk=v\n").unwrap();
    let raw = props(&[
        ("config.providers", "file"),
        ("config.providers.file.class", FILE),
        ("x", &format!("${{file:{}:a:b}}", file.display())),
        ("y", &format!("<${{file:{}:k}}>", file.display())),
    ]);
    let e = env(&[]);
    assert_eq!(resolved(&raw, &e, "x"), "colon key");
    assert_eq!(resolved(&raw, &e, "y"), "<v>");
}

#[test]
fn unknown_providers_and_missing_keys_stay_as_written() {
    let raw = env_provider(&[
        ("a", "x${nope:A}y${env:A}z${env:MISSING}"),
        ("b", "${env:A"),
    ]);
    let e = env(&[("A", "1")]);
    assert_eq!(resolved(&raw, &e, "a"), "x${nope:A}y1z${env:MISSING}");
    assert_eq!(resolved(&raw, &e, "b"), "${env:A");
}

#[test]
fn a_name_without_a_class_key_is_skipped() {
    let raw = props(&[("config.providers", "env,other"), ("a", "${env:A}")]);
    assert_eq!(resolved(&raw, &env(&[("A", "1")]), "a"), "${env:A}");
    // Names are not trimmed: " env" has no `config.providers. env.class`.
    let raw = props(&[
        ("config.providers", "x, env"),
        ("config.providers.env.class", ENV),
        ("a", "${env:A}"),
    ]);
    assert_eq!(resolved(&raw, &env(&[("A", "1")]), "a"), "${env:A}");
}

#[test]
fn a_class_ferrokraft_does_not_implement_is_refused_naming_the_offered_ones() {
    let raw = props(&[
        ("config.providers", "vault"),
        (
            "config.providers.vault.class",
            "com.example.VaultConfigProvider",
        ),
    ]);
    assert_eq!(
        error(&raw, &env(&[])),
        format!("Invalid value com.example.VaultConfigProvider for configuration config.providers.vault.class: Could not load config provider class or one of its dependencies (ferrokraft offers {FILE}, {DIRECTORY}, {ENV}, {STRIMZI_ENV}, {STRIMZI_SECRETS})")
    );
    // Java's class lookup does not trim.
    let raw = props(&[
        ("config.providers", "env"),
        ("config.providers.env.class", &format!("{ENV} ")),
    ]);
    assert!(error(&raw, &env(&[])).starts_with("Invalid value "));
    assert_eq!(
        ProviderClass::from_class_name(ENV),
        Some(ProviderClass::EnvVar)
    );
}

#[test]
fn strimzis_env_var_provider_gives_every_variable_and_ignores_the_path() {
    // Strimzi's class (kafka-env-var-config-provider 1.1): no allow-list, no params, the path
    // not looked at; a variable that is not set leaves its placeholder.
    let raw = props(&[
        ("config.providers", "senv"),
        ("config.providers.senv.class", STRIMZI_ENV),
        ("broker.rack", "${senv:RACK}"),
        ("node.id", "${senv:any/path:NODE}"),
        ("log.dirs", "${senv:UNSET}"),
    ]);
    let e = env(&[("RACK", "zone-a"), ("NODE", "3")]);
    assert_eq!(resolved(&raw, &e, "broker.rack"), "zone-a");
    assert_eq!(resolved(&raw, &e, "node.id"), "3");
    assert_eq!(resolved(&raw, &e, "log.dirs"), "${senv:UNSET}");
    assert_eq!(
        ProviderClass::from_class_name(STRIMZI_SECRETS),
        Some(ProviderClass::KubernetesSecret)
    );
}

#[test]
fn env_var_provider_keeps_to_its_allow_list_and_refuses_a_path() {
    let e = env(&[("KAFKA_VOTERS", "1@h:1"), ("HOME", "/root")]);
    let raw = env_provider(&[
        ("config.providers.env.param.allowlist.pattern", "KAFKA_.*"),
        ("a", "${env:KAFKA_VOTERS}"),
        ("b", "${env:HOME}"),
    ]);
    assert_eq!(resolved(&raw, &e, "a"), "1@h:1");
    assert_eq!(resolved(&raw, &e, "b"), "${env:HOME}");
    // The whole name must match (Matcher.matches).
    let raw = env_provider(&[
        ("config.providers.env.param.allowlist.pattern", "KAFKA"),
        ("a", "${env:KAFKA_VOTERS}"),
    ]);
    assert_eq!(resolved(&raw, &e, "a"), "${env:KAFKA_VOTERS}");
    // No pattern: every variable.
    let raw = env_provider(&[("b", "${env:HOME}")]);
    assert_eq!(resolved(&raw, &e, "b"), "/root");
    let raw = env_provider(&[("b", "${env:some/path:HOME}")]);
    assert_eq!(
        error(&raw, &e),
        "Path is not supported for EnvVarConfigProvider, invalid value 'some/path'"
    );
    let raw = env_provider(&[("config.providers.env.param.allowlist.pattern", "(")]);
    assert!(error(&raw, &e).starts_with(
        "Invalid value ( for configuration config.providers.env.param.allowlist.pattern: "
    ));
}

#[test]
fn file_provider_reads_a_utf8_properties_file_and_names_a_missing_one() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("secrets.properties");
    std::fs::write(
        &file,
        "listeners = CONTROLLER://127.0.0.1:9093\npw=caf\u{e9}\n",
    )
    .unwrap();
    let raw = props(&[
        ("config.providers", "file"),
        ("config.providers.file.class", FILE),
        (
            "listeners",
            &format!("${{file:{}:listeners}}", file.display()),
        ),
        ("p", &format!("${{file:{}:pw}}", file.display())),
        ("q", "${file::pw}"),
    ]);
    let e = env(&[]);
    assert_eq!(
        resolved(&raw, &e, "listeners"),
        "CONTROLLER://127.0.0.1:9093"
    );
    assert_eq!(resolved(&raw, &e, "p"), "caf\u{e9}");
    // No path: no data, the variable stays.
    assert_eq!(resolved(&raw, &e, "q"), "${file::pw}");

    let missing = dir.path().join("absent.properties");
    let raw = props(&[
        ("config.providers", "file"),
        ("config.providers.file.class", FILE),
        ("a", &format!("${{file:{}:k}}", missing.display())),
    ]);
    assert_eq!(
        error(&raw, &e),
        format!("Could not read properties from file {}", missing.display())
    );
    std::fs::write(&missing, b"k=\xff\n").unwrap();
    assert_eq!(
        error(&raw, &e),
        format!("Could not read properties from file {}", missing.display())
    );
}

#[test]
fn directory_provider_reads_one_untrimmed_file_per_key() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("voters"), "1@127.0.0.1:9093\n").unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let raw = props(&[
        ("config.providers", "dir"),
        ("config.providers.dir.class", DIRECTORY),
        ("a", &format!("${{dir:{}:voters}}", dir.path().display())),
        ("b", &format!("${{dir:{}:sub}}", dir.path().display())),
        ("c", &format!("${{dir:{}/voters:x}}", dir.path().display())),
    ]);
    let e = env(&[]);
    assert_eq!(resolved(&raw, &e, "a"), "1@127.0.0.1:9093\n");
    // A directory is not a value; a path that is not a directory gives nothing.
    assert_eq!(
        resolved(&raw, &e, "b"),
        format!("${{dir:{}:sub}}", dir.path().display())
    );
    assert_eq!(
        resolved(&raw, &e, "c"),
        format!("${{dir:{}/voters:x}}", dir.path().display())
    );
    std::fs::write(dir.path().join("bad"), b"\xff").unwrap();
    let raw = props(&[
        ("config.providers", "dir"),
        ("config.providers.dir.class", DIRECTORY),
        ("a", &format!("${{dir:{}:bad}}", dir.path().display())),
    ]);
    assert_eq!(
        error(&raw, &e),
        format!(
            "Could not read file {}/bad for property bad",
            dir.path().display()
        )
    );
}

#[test]
fn allowed_paths_refuse_relative_and_missing_entries_and_hide_paths_outside() {
    assert_eq!(
        AllowedPaths::new(Some("etc/kafka"))
            .err()
            .unwrap()
            .to_string(),
        "Path etc/kafka is not absolute"
    );
    assert_eq!(
        AllowedPaths::new(Some("/no/such/./dir/../path"))
            .err()
            .unwrap()
            .to_string(),
        "Path /no/such/path does not exist"
    );
    // Params are read unresolved: a variable there is a relative path to Kafka.
    let raw = props(&[
        ("config.providers", "dir"),
        ("config.providers.dir.class", DIRECTORY),
        ("config.providers.dir.param.allowed.paths", "${env:X}"),
    ]);
    assert_eq!(error(&raw, &env(&[])), "Path ${env:X} is not absolute");

    let allowed = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(allowed.path().join("k"), "inside").unwrap();
    std::fs::write(outside.path().join("k"), "outside").unwrap();
    let escape = format!(
        "{}/../{}",
        allowed.path().display(),
        outside.path().file_name().unwrap().to_str().unwrap()
    );
    let raw = props(&[
        ("config.providers", "dir"),
        ("config.providers.dir.class", DIRECTORY),
        (
            "config.providers.dir.param.allowed.paths",
            &allowed.path().display().to_string(),
        ),
        ("a", &format!("${{dir:{}:k}}", allowed.path().display())),
        ("b", &format!("${{dir:{}:k}}", outside.path().display())),
        ("c", &format!("${{dir:{escape}:k}}")),
    ]);
    let e = env(&[]);
    assert_eq!(resolved(&raw, &e, "a"), "inside");
    assert_eq!(
        resolved(&raw, &e, "b"),
        format!("${{dir:{}:k}}", outside.path().display())
    );
    assert_eq!(resolved(&raw, &e, "c"), format!("${{dir:{escape}:k}}"));
}

#[test]
fn java_paths_normalise_as_java_does() {
    let n = |s: &str| JavaPath::parse(s).normalize().to_string();
    assert_eq!(n("/a/./b/../c/"), "/a/c");
    assert_eq!(n("//a//b"), "/a/b");
    assert_eq!(n("/../x"), "/x");
    assert_eq!(n("a/../../b"), "../b");
    assert_eq!(n(""), "");
}

#[test]
fn provider_keys_are_known_and_others_under_the_prefix_are_not() {
    assert!(is_provider_key("config.providers"));
    assert!(is_provider_key("config.providers.file.class"));
    assert!(is_provider_key("config.providers.dir.param.allowed.paths"));
    assert!(!is_provider_key("config.providers.file.clas"));
    let raw = env_provider(&[("config.providers.env.param.allowlist.pattern", "X")]);
    assert!(crate::config::keys::unknown_keys(&raw).is_empty());
}

/// A node's listener and voters from a file and a directory, through `Config`.
#[test]
fn a_config_takes_its_listener_and_voters_from_providers() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("listeners.properties");
    std::fs::write(&file, "listeners=CONTROLLER://127.0.0.1:19093\n").unwrap();
    std::fs::write(dir.path().join("voters"), "1@127.0.0.1:19093\n").unwrap();
    let mut raw = props(&[
        ("process.roles", "controller"),
        ("node.id", "1"),
        ("controller.listener.names", "CONTROLLER"),
        ("config.providers", "file,dir"),
        ("config.providers.file.class", FILE),
        ("config.providers.dir.class", DIRECTORY),
        (
            "listeners",
            &format!("${{file:{}:listeners}}", file.display()),
        ),
        (
            "controller.quorum.voters",
            &format!("${{dir:{}:voters}}", dir.path().display()),
        ),
    ]);
    let c = Config::from_raw_properties(&raw).unwrap();
    assert_eq!(c.listeners[0].port, 19093);
    assert_eq!(c.quorum_voters[0].id, 1);
    assert!(c.unknown_keys.is_empty(), "{:?}", c.unknown_keys);

    // An invalid resolved value is shown as written, never as resolved.
    std::fs::write(&file, "listeners=CONTROLLER://127.0.0.1:notaport\n").unwrap();
    let e = Config::from_raw_properties(&raw).unwrap_err().to_string();
    assert!(!e.contains("notaport"), "{e}");
    assert!(
        e.contains(&format!("${{file:{}:listeners}}", file.display())),
        "{e}"
    );

    raw.insert("node.id".into(), "2".into());
    std::fs::write(&file, "listeners=CONTROLLER://127.0.0.1:19093\n").unwrap();
    assert!(matches!(
        Config::from_raw_properties(&raw),
        Err(ConfigError::Requirement(_))
    ));
}

#[test]
fn redaction_puts_placeholders_back_into_messages() {
    let raw = env_provider(&[("a", "pre-${env:TOKEN}")]);
    let r = resolve_with_env(&raw, &env(&[("TOKEN", "s3cr3t-value")])).unwrap();
    assert_eq!(r.props["a"], "pre-s3cr3t-value");
    let e = r.redact(ConfigError::Message("bad: pre-s3cr3t-value".into()));
    assert_eq!(e.to_string(), "bad: pre-${env:TOKEN}");
    let e = r.redact(crate::config::properties::invalid(
        "a",
        "pre-s3cr3t-value",
        "because s3cr3t-value",
    ));
    assert_eq!(
        e.to_string(),
        "Invalid value pre-${env:TOKEN} for configuration a: because ${env:TOKEN}"
    );
    assert!(!format!("{r:?}").contains("s3cr3t"));
}
