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
    "metadata.log.segment.min.bytes",
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
    "auto.leader.rebalance.enable",
    "leader.imbalance.check.interval.seconds",
    "controller.quorum.election.timeout.ms",
    "controller.quorum.fetch.timeout.ms",
    "controller.quorum.election.backoff.max.ms",
    "controller.quorum.append.linger.ms",
    "controller.quorum.request.timeout.ms",
    "controller.quorum.retry.backoff.ms",
    "controller.quorum.auto.join.enable",
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

/// Kafka keys naming a class whose behaviour ferrokraft cannot run (it loads no Java class):
/// (key, Kafka's default, what ferrokraft offers instead). Set to anything but the default
/// they are refused at start rather than ignored, as `authorizer.class.name` is.
const CLASS_KEYS: &[(&str, &str, &str)] = &[
    (
        "create.topic.policy.class.name",
        "",
        "ferrokraft runs no CreateTopicPolicy; restrict topic creation with ACLs (CREATE) and the controller mutation quotas, or keep Java controllers for this cluster",
    ),
    (
        "alter.config.policy.class.name",
        "",
        "ferrokraft runs no AlterConfigPolicy; restrict config changes with ACLs (ALTER_CONFIGS), or keep Java controllers for this cluster",
    ),
    (
        "principal.builder.class",
        "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder",
        "ferrokraft builds principals as Kafka's DefaultKafkaPrincipalBuilder does (ssl.principal.mapping.rules for SSL)",
    ),
    (
        "client.quota.callback.class",
        "",
        "ferrokraft applies Kafka's default quota callback to the controller mutation quotas",
    ),
    (
        "sasl.server.callback.handler.class",
        "",
        "ferrokraft authenticates PLAIN from the listener's JAAS options and SCRAM and delegation tokens from the metadata",
    ),
    (
        "ssl.engine.factory.class",
        "",
        "ferrokraft's TLS (rustls) is configured by the ssl.keystore.*, ssl.truststore.* and ssl.* keys",
    ),
];

/// The first class-valued key of `props` set to a class ferrokraft cannot run (a
/// `listener.name.<l>.` and a `<mechanism>.` prefix count too): its refusal.
pub(super) fn refused_class_key(props: &Properties) -> Result<(), super::ConfigError> {
    let mut keys: Vec<&String> = props.keys().collect();
    keys.sort();
    for key in keys {
        for (name, default, instead) in CLASS_KEYS {
            let matches = key == name || key.ends_with(&format!(".{name}"));
            let value = props.get(key).map_or("", |v| v.trim());
            if matches && !value.is_empty() && value != *default {
                return Err(super::properties::invalid(key, value, *instead));
            }
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
                && !CLASS_KEYS
                    .iter()
                    .any(|(name, _, _)| k == name || k.ends_with(&format!(".{name}")))
        })
        .cloned()
        .collect()
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
    use super::{closest_known_key, refused_class_key};
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
