//! The keys ferrokraft knows: those it reads, the Kafka keys it accepts without a use for
//! them, and from those (with the `ssl.*`, SASL and per-listener connection keys) the keys
//! given that it does not know, which are warned about as Kafka does.

use super::properties::Properties;
use super::{connections, sasl, ssl};

/// Keys ferrokraft reads.
const KNOWN_KEYS: &[&str] = &[
    "process.roles",
    "node.id",
    "controller.quorum.voters",
    "controller.quorum.bootstrap.servers",
    "listeners",
    "advertised.listeners",
    "controller.listener.names",
    "listener.security.protocol.map",
    "log.dirs",
    "log.dir",
    "metadata.log.dir",
    "metadata.log.segment.bytes",
    "internal.metadata.log.segment.bytes",
    "metadata.log.segment.ms",
    "metadata.max.retention.bytes",
    "metadata.max.retention.ms",
    "metadata.log.max.record.bytes.between.snapshots",
    "metadata.log.max.snapshot.interval.ms",
    "metadata.max.idle.interval.ms",
    "min.insync.replicas",
    "broker.session.timeout.ms",
    "broker.heartbeat.interval.ms",
    "num.partitions",
    "default.replication.factor",
    "delete.topic.enable",
    "auto.leader.rebalance.enable",
    "leader.imbalance.check.interval.seconds",
    "unclean.leader.election.interval.ms",
    "controller.quorum.election.timeout.ms",
    "controller.quorum.fetch.timeout.ms",
    "controller.quorum.election.backoff.max.ms",
    "controller.quorum.append.linger.ms",
    "controller.quorum.request.timeout.ms",
    "controller.quorum.retry.backoff.ms",
    "controller.quorum.auto.join.enable",
    "controller.quorum.fetch.max.bytes",
    "controller.quorum.fetch.snapshot.max.bytes",
    "socket.request.max.bytes",
    "max.connections",
    "max.connections.per.ip",
    "max.connections.per.ip.overrides",
    "connections.max.idle.ms",
    "queued.max.request.bytes",
    "ferrokraft.metrics.listener",
    "ferrokraft.kafka.release",
    "ferrokraft.recovery.accept.data.loss",
    "authorizer.class.name",
    "super.users",
    "allow.everyone.if.no.acl.found",
    "delegation.token.secret.key",
    "delegation.token.max.lifetime.ms",
    "delegation.token.expiry.time.ms",
    "delegation.token.expiry.check.interval.ms",
    "controller.quota.window.num",
    "controller.quota.window.size.seconds",
];

/// Kafka keys that are valid in a controller's file but that ferrokraft has no use for; they
/// are accepted silently rather than warned about.
const IGNORED_KAFKA_KEYS: &[&str] = &[
    "num.network.threads",
    "num.io.threads",
    "socket.send.buffer.bytes",
    "socket.receive.buffer.bytes",
    "num.recovery.threads.per.data.dir",
    "offsets.topic.replication.factor",
    "share.coordinator.state.topic.replication.factor",
    "share.coordinator.state.topic.min.isr",
    "transaction.state.log.replication.factor",
    "transaction.state.log.min.isr",
    "log.retention.hours",
    "log.segment.bytes",
    "log.retention.check.interval.ms",
    "group.initial.rebalance.delay.ms",
    "inter.broker.listener.name",
    "unstable.api.versions.enable",
    "unstable.feature.versions.enable",
    "eligible.leader.replicas.enable",
];

/// Where Kafka reads a class key besides under its own name.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Prefixes {
    /// Nowhere else (a broker-wide key).
    None,
    /// `listener.name.<l>.<key>` too (a key of the listener's channel, which Kafka reads
    /// with `valuesWithPrefixOverride`).
    Listener,
    /// `listener.name.<l>.<key>` and `listener.name.<l>.<mechanism>.<key>` too (the SASL
    /// server callback, which Kafka looks up per mechanism).
    ListenerAndMechanism,
}

/// A Kafka key naming a class whose behaviour ferrokraft cannot run (it loads no Java class).
struct ClassKey {
    name: &'static str,
    /// Kafka's default: the one value accepted besides an empty one.
    default: &'static str,
    /// What ferrokraft offers instead, said in the refusal.
    instead: &'static str,
    prefixes: Prefixes,
}

/// The class keys: set to anything but the default they are refused at start rather than
/// ignored, as `authorizer.class.name` is.
const CLASS_KEYS: &[ClassKey] = &[
    ClassKey {
        name: "create.topic.policy.class.name",
        default: "",
        instead: "ferrokraft runs no CreateTopicPolicy; restrict topic creation with ACLs (CREATE) and the controller mutation quotas, or keep Java controllers for this cluster",
        prefixes: Prefixes::None,
    },
    ClassKey {
        name: "alter.config.policy.class.name",
        default: "",
        instead: "ferrokraft runs no AlterConfigPolicy; restrict config changes with ACLs (ALTER_CONFIGS), or keep Java controllers for this cluster",
        prefixes: Prefixes::None,
    },
    ClassKey {
        name: "principal.builder.class",
        default: "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder",
        instead: "ferrokraft builds principals as Kafka's DefaultKafkaPrincipalBuilder does (ssl.principal.mapping.rules for SSL)",
        prefixes: Prefixes::Listener,
    },
    ClassKey {
        name: "client.quota.callback.class",
        default: "",
        instead: "ferrokraft applies Kafka's default quota callback to the controller mutation quotas",
        prefixes: Prefixes::None,
    },
    ClassKey {
        name: "sasl.server.callback.handler.class",
        default: "",
        instead: "ferrokraft authenticates PLAIN from the listener's JAAS options and SCRAM and delegation tokens from the metadata",
        prefixes: Prefixes::ListenerAndMechanism,
    },
    ClassKey {
        name: "ssl.engine.factory.class",
        default: "",
        instead: "ferrokraft's TLS (rustls) is configured by the ssl.keystore.*, ssl.truststore.* and ssl.* keys",
        prefixes: Prefixes::Listener,
    },
];

/// The class key `key` sets, if any: its own name, or a prefixed form Kafka reads.
fn class_key(key: &str) -> Option<&'static ClassKey> {
    CLASS_KEYS.iter().find(|c| {
        if key == c.name {
            return true;
        }
        // listener.name.<l>.[<mechanism>.]<name>, each part one non-empty word.
        let Some(prefix) = key
            .strip_suffix(c.name)
            .and_then(|k| k.strip_suffix('.'))
            .and_then(|k| k.strip_prefix("listener.name."))
        else {
            return false;
        };
        let words: Vec<&str> = prefix.split('.').collect();
        if words.iter().any(|w| w.is_empty()) {
            return false;
        }
        match c.prefixes {
            Prefixes::None => false,
            Prefixes::Listener => words.len() == 1,
            Prefixes::ListenerAndMechanism => words.len() <= 2,
        }
    })
}

/// The first class-valued key of `props` set to a class ferrokraft cannot run: its refusal.
pub(super) fn refused_class_key(props: &Properties) -> Result<(), super::ConfigError> {
    let mut keys: Vec<&String> = props.keys().collect();
    keys.sort();
    for key in keys {
        let Some(class) = class_key(key) else {
            continue;
        };
        let value = props.get(key).map_or("", |v| v.trim());
        if !value.is_empty() && value != class.default {
            return Err(super::properties::invalid(key, value, class.instead));
        }
    }
    Ok(())
}

/// Every key of `props` that ferrokraft does not know.
pub(super) fn unknown_keys(props: &Properties) -> Vec<String> {
    props
        .keys()
        .filter(|k| {
            !KNOWN_KEYS.contains(&k.as_str())
                && !IGNORED_KAFKA_KEYS.contains(&k.as_str())
                && !ssl::SSL_KEYS.contains(&k.as_str())
                && !ssl::is_listener_ssl_key(k)
                && !sasl::SASL_KEYS.contains(&k.as_str())
                && !sasl::is_listener_sasl_key(k)
                && !connections::is_listener_key(k)
                && !super::providers::is_provider_key(k)
                && class_key(k).is_none()
        })
        .cloned()
        .collect()
}

/// Warns about every key of `props` that ferrokraft does not know, with Kafka's words and the
/// known key most likely meant: one function for a file and for `--override`s alone.
pub fn warn_unknown_keys(props: &Properties) {
    for key in unknown_keys(props) {
        match closest_known_key(&key) {
            Some(known) => tracing::warn!(
                "The configuration '{key}' was supplied but isn't a known config; did you mean '{known}'?"
            ),
            None => {
                tracing::warn!("The configuration '{key}' was supplied but isn't a known config.")
            }
        }
    }
}

/// The known key `key` most likely meant: one within an edit distance of 2 (3 for keys of
/// 20 characters or more), the nearest first.
pub(super) fn closest_known_key(key: &str) -> Option<&'static str> {
    let limit = if key.len() >= 20 { 3 } else { 2 };
    KNOWN_KEYS
        .iter()
        .chain(IGNORED_KAFKA_KEYS)
        .chain(ssl::SSL_KEYS)
        .chain(sasl::SASL_KEYS)
        .map(|k| (edit_distance(key, k), *k))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, k)| k)
}

/// Levenshtein distance over bytes (keys are ASCII).
fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitute = prev[j] + usize::from(ca != cb);
            cur[j + 1] = substitute.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::{closest_known_key, refused_class_key, unknown_keys};
    use crate::config::Properties;

    #[test]
    fn class_keys_with_behaviour_are_refused_unless_default() {
        let mut p = Properties::new();
        p.insert(
            "principal.builder.class".into(),
            "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder".into(),
        );
        p.insert("create.topic.policy.class.name".into(), String::new());
        assert!(refused_class_key(&p).is_ok());
        p.insert(
            "create.topic.policy.class.name".into(),
            "com.example.Policy".into(),
        );
        let e = refused_class_key(&p).unwrap_err().to_string();
        assert!(
            e.starts_with("Invalid value com.example.Policy for configuration create.topic.policy.class.name: ferrokraft runs no CreateTopicPolicy"),
            "{e}"
        );
        let mut p = Properties::new();
        p.insert(
            "listener.name.controller.plain.sasl.server.callback.handler.class".into(),
            "com.example.Handler".into(),
        );
        assert!(refused_class_key(&p).is_err());
    }

    /// A class key counts where Kafka reads it: as given, with a `listener.name.<l>.` prefix
    /// for the channel's keys, and with `listener.name.<l>.<mechanism>.` for the SASL server
    /// callback; a key that merely ends with a class key's name is unknown, not refused.
    #[test]
    fn class_keys_are_matched_where_kafka_reads_them() {
        let one = |key: &str| {
            let mut p = Properties::new();
            p.insert(key.to_string(), "com.example.Thing".into());
            (refused_class_key(&p).is_err(), unknown_keys(&p).is_empty())
        };
        let refused = (true, true);
        let unknown = (false, false);
        assert_eq!(one("create.topic.policy.class.name"), refused);
        assert_eq!(one("alter.config.policy.class.name"), refused);
        assert_eq!(one("client.quota.callback.class"), refused);
        assert_eq!(one("principal.builder.class"), refused);
        assert_eq!(
            one("listener.name.controller.principal.builder.class"),
            refused
        );
        assert_eq!(
            one("listener.name.controller.ssl.engine.factory.class"),
            refused
        );
        assert_eq!(one("sasl.server.callback.handler.class"), refused);
        assert_eq!(
            one("listener.name.controller.scram-sha-256.sasl.server.callback.handler.class"),
            refused
        );
        assert_eq!(one("my.create.topic.policy.class.name"), unknown);
        assert_eq!(
            one("listener.name.controller.create.topic.policy.class.name"),
            unknown
        );
        assert_eq!(
            one("listener.name.controller.client.quota.callback.class"),
            unknown
        );
        assert_eq!(one("x.principal.builder.class"), unknown);
        assert_eq!(one("listener.name..principal.builder.class"), unknown);
        assert_eq!(one("plain.sasl.server.callback.handler.class"), unknown);
    }

    #[test]
    fn delete_topic_enable_is_known_and_segment_min_bytes_is_not() {
        let mut p = Properties::new();
        p.insert("delete.topic.enable".into(), "false".into());
        p.insert("metadata.log.segment.min.bytes".into(), "16384".into());
        assert_eq!(unknown_keys(&p), vec!["metadata.log.segment.min.bytes"]);
    }

    /// docs/configuration.md's key tables: the first cell of each row of a table whose first
    /// header cell is `Key`, each key in backticks.
    fn doc_keys(doc: &str) -> Vec<String> {
        let mut keys = Vec::new();
        let mut in_table = false;
        for line in doc.lines() {
            if !line.starts_with('|') {
                in_table = false;
                continue;
            }
            let first_cell = line.split('|').nth(1).unwrap_or("").trim();
            if first_cell == "Key" {
                in_table = true;
                continue;
            }
            if !in_table || first_cell.starts_with("---") {
                continue;
            }
            let parts: Vec<&str> = first_cell.split('`').collect();
            keys.extend(parts.iter().skip(1).step_by(2).map(|k| k.to_string()));
        }
        keys
    }

    /// A documented key with its placeholders filled in: every key it stands for.
    fn expansions(key: &str) -> Vec<String> {
        let mut out = vec![key.replace("<listener>", "controller")];
        for (placeholder, values) in [
            ("<mechanism>", &["plain", "scram-sha-256"][..]),
            ("<ssl key>", super::ssl::SSL_KEYS),
            ("<sasl key>", super::sasl::SASL_KEYS),
        ] {
            out = out
                .into_iter()
                .flat_map(|k| {
                    if k.contains(placeholder) {
                        values.iter().map(|v| k.replace(placeholder, v)).collect()
                    } else {
                        vec![k]
                    }
                })
                .collect();
        }
        out
    }

    /// Every key ferrokraft accepts must be in docs/configuration.md's tables, and every key
    /// there must be one ferrokraft accepts.
    #[test]
    fn the_configuration_doc_names_every_key() {
        use super::{Prefixes, CLASS_KEYS, IGNORED_KAFKA_KEYS, KNOWN_KEYS};
        let documented = doc_keys(include_str!("../../docs/configuration.md"));
        // The per-listener and per-mechanism forms the parsers accept, as the doc writes them.
        let mut accepted: Vec<String> = [
            "listener.name.<listener>.max.connections",
            "listener.name.<listener>.<ssl key>",
            "listener.name.<listener>.<sasl key>",
            "listener.name.<listener>.<mechanism>.sasl.jaas.config",
            "listener.name.<listener>.<mechanism>.connections.max.reauth.ms",
        ]
        .iter()
        .map(|k| k.to_string())
        .collect();
        accepted.extend(
            KNOWN_KEYS
                .iter()
                .chain(IGNORED_KAFKA_KEYS)
                .chain(super::ssl::SSL_KEYS)
                .chain(super::sasl::SASL_KEYS)
                .map(|k| k.to_string()),
        );
        for class in CLASS_KEYS {
            accepted.push(class.name.to_string());
            if class.prefixes != Prefixes::None {
                accepted.push(format!("listener.name.<listener>.{}", class.name));
            }
            if class.prefixes == Prefixes::ListenerAndMechanism {
                accepted.push(format!(
                    "listener.name.<listener>.<mechanism>.{}",
                    class.name
                ));
            }
        }
        let missing: Vec<&String> = accepted
            .iter()
            .filter(|k| !documented.contains(k))
            .collect();
        assert!(
            missing.is_empty(),
            "accepted but not in docs/configuration.md: {missing:?}"
        );
        let not_accepted: Vec<String> = documented
            .iter()
            .flat_map(|k| expansions(k))
            .filter(|k| {
                let mut p = Properties::new();
                p.insert(k.clone(), "x".into());
                !unknown_keys(&p).is_empty()
            })
            .collect();
        assert!(
            not_accepted.is_empty(),
            "in docs/configuration.md but not accepted: {not_accepted:?}"
        );
        assert!(documented.len() >= accepted.len(), "{documented:?}");
    }

    #[test]
    fn a_near_miss_names_the_key_meant() {
        assert_eq!(
            closest_known_key("controller.quorum.voter"),
            Some("controller.quorum.voters")
        );
        assert_eq!(closest_known_key("node.idd"), Some("node.id"));
        assert_eq!(closest_known_key("log.dirss"), Some("log.dirs"));
        assert_eq!(closest_known_key("completely.unrelated.key"), None);
    }
}
