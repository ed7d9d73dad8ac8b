//! Configuration from the environment, as the apache/kafka container image takes it, so a
//! compose file or manifest written for that image's controllers works by changing the image.
//!
//! ```text
//!   env KAFKA_* ──names──▶ key=value ──appended to──▶ mounted server.properties (if any)
//!                                                      └─▶ Properties (the env wins)
//!   CLUSTER_ID (or the image's default) ──▶ the format of a directory never formatted
//! ```
//!
//! The image's rules (its `configure`, `configureDefaults` scripts and Kafka's
//! `kafka.docker.KafkaDockerWrapper`): every variable starting `KAFKA_` except the JVM and
//! log4j ones becomes a key: every `KAFKA_` removed, lower-cased, then `_` → `.`, and of the
//! dots so made `...` → `-` and `..` → `_` (`KAFKA_CONTROLLER_QUORUM_VOTERS` →
//! `controller.quorum.voters`, `KAFKA_LISTENER_NAME_CONTROLLER_SSL__CLIENT_AUTH`... ).
//! A mounted `server.properties` comes first and the variables are appended to it. The
//! image refuses `KAFKA_ADVERTISED_LISTENERS` on a controller. A missing `CLUSTER_ID` takes
//! the image's default.

use std::path::Path;

use super::properties::{read_properties, ConfigError, Properties};

/// The variable that selects this mode (the image's KRaft check).
pub const PROCESS_ROLES_VAR: &str = "KAFKA_PROCESS_ROLES";

/// Where the image mounts a user's configuration files.
pub const MOUNTED_CONFIGS_DIR: &str = "/mnt/shared/config";

/// The image's `CLUSTER_ID` when none is set (its `configureDefaults`).
pub const DEFAULT_CLUSTER_ID: &str = "5L6g3nShT-eMCtK--X86sw";

/// `KAFKA_*` variables that configure the JVM, JMX or log4j, not the server
/// (KafkaDockerWrapper's `ExcludeServerPropsEnv`).
const NOT_SERVER_PROPERTIES: &[&str] = &[
    "KAFKA_VERSION",
    "KAFKA_HEAP_OPTS",
    "KAFKA_LOG4J_OPTS",
    "KAFKA_OPTS",
    "KAFKA_JMX_OPTS",
    "KAFKA_JVM_PERFORMANCE_OPTS",
    "KAFKA_GC_LOG_OPTS",
    "KAFKA_LOG4J_ROOT_LOGLEVEL",
    "KAFKA_LOG4J_LOGGERS",
    "KAFKA_TOOLS_LOG4J_LOGLEVEL",
    "KAFKA_JMX_HOSTNAME",
];

/// The configuration the environment gives, and the cluster id to format with.
#[derive(Debug, Clone, PartialEq)]
pub struct FromEnvironment {
    /// The properties: the mounted file's, then the variables'.
    pub properties: Properties,
    /// `CLUSTER_ID`, or the image's default.
    pub cluster_id: String,
    /// Whether `CLUSTER_ID` was unset and the default was taken.
    pub default_cluster_id: bool,
    /// Whether a mounted `server.properties` was read.
    pub mounted_file: bool,
}

/// Whether the environment asks for this mode (`KAFKA_PROCESS_ROLES` set and not empty).
pub fn requested(env: &[(String, String)]) -> bool {
    env.iter()
        .any(|(k, v)| k == PROCESS_ROLES_VAR && !v.is_empty())
}

/// The image's name rule: `KAFKA_CONTROLLER_QUORUM_VOTERS` → `controller.quorum.voters`.
pub fn property_name(variable: &str) -> String {
    variable
        .replace("KAFKA_", "")
        .to_lowercase()
        .replace('_', ".")
        .replace("...", "-")
        .replace("..", "_")
}

/// The configuration from `env` (the process's variables, in any order) and the mounted
/// directory `mounted_dir`, refused as the image refuses it.
pub fn from_environment(
    env: &[(String, String)],
    mounted_dir: &Path,
) -> Result<FromEnvironment, ConfigError> {
    let get = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let roles = get(PROCESS_ROLES_VAR).unwrap_or("");
    if roles == "controller" && get("KAFKA_ADVERTISED_LISTENERS").is_some_and(|v| !v.is_empty()) {
        return Err(ConfigError::Message(
            "KAFKA_ADVERTISED_LISTENERS is not supported on a KRaft controller.".to_string(),
        ));
    }
    let mounted = mounted_dir.join("server.properties");
    let mounted_file = mounted.exists();
    let mut properties = if mounted_file {
        read_properties(&mounted)?
    } else {
        Properties::new()
    };
    let mut variables: Vec<&(String, String)> = env
        .iter()
        .filter(|(k, _)| k.starts_with("KAFKA_") && !NOT_SERVER_PROPERTIES.contains(&k.as_str()))
        // An empty advertised listeners variable is unset on a controller (the image's
        // `configure`).
        .filter(|(k, v)| !(k == "KAFKA_ADVERTISED_LISTENERS" && v.is_empty()))
        .collect();
    // Sorted so two variables naming one key resolve the same way on every start.
    variables.sort();
    for (k, v) in variables {
        properties.insert(property_name(k), v.clone());
    }
    let (cluster_id, default_cluster_id) = match get("CLUSTER_ID") {
        Some(id) if !id.is_empty() => (id.to_string(), false),
        _ => (DEFAULT_CLUSTER_ID.to_string(), true),
    };
    Ok(FromEnvironment {
        properties,
        cluster_id,
        default_cluster_id,
        mounted_file,
    })
}

/// The log filter the image's variables ask for, as tracing directives:
/// `KAFKA_LOG4J_ROOT_LOGLEVEL` (the root level) and `KAFKA_LOG4J_LOGGERS` (`name=LEVEL,…`;
/// ferrokraft's loggers are its module paths, so Kafka's logger names match nothing).
/// Log4j's FATAL is ERROR here, as ferrokraft logs what stops it at ERROR. `None` when neither
/// is set.
pub fn log_directives(var: impl Fn(&str) -> Option<String>) -> Option<String> {
    let level = |l: &str| {
        let l = l.trim().to_lowercase();
        if l == "fatal" {
            "error".to_string()
        } else {
            l
        }
    };
    let mut directives = Vec::new();
    if let Some(root) = var("KAFKA_LOG4J_ROOT_LOGLEVEL").filter(|v| !v.trim().is_empty()) {
        directives.push(level(&root));
    }
    if let Some(loggers) = var("KAFKA_LOG4J_LOGGERS") {
        for logger in loggers.split(',').filter(|l| !l.trim().is_empty()) {
            match logger.split_once('=') {
                Some((name, l)) => directives.push(format!("{}={}", name.trim(), level(l))),
                None => directives.push(logger.trim().to_string()),
            }
        }
    }
    if directives.is_empty() {
        return None;
    }
    if var("KAFKA_LOG4J_ROOT_LOGLEVEL").is_none_or(|v| v.trim().is_empty()) {
        // The image's default root level.
        directives.insert(0, "info".to_string());
    }
    Some(directives.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> Vec<(String, String)> {
        vars.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn names_follow_the_image_rule() {
        for (variable, key) in [
            ("KAFKA_NODE_ID", "node.id"),
            ("KAFKA_CONTROLLER_QUORUM_VOTERS", "controller.quorum.voters"),
            (
                "KAFKA_LISTENER_SECURITY_PROTOCOL_MAP",
                "listener.security.protocol.map",
            ),
            (
                "KAFKA_LISTENER_NAME_CONTROLLER_PLAIN_SASL___JAAS___CONFIG",
                "listener.name.controller.plain.sasl-jaas-config",
            ),
            ("KAFKA_LOG_DIRS", "log.dirs"),
            (
                "KAFKA_FERROKRAFT_METRICS_LISTENER",
                "ferrokraft.metrics.listener",
            ),
            ("KAFKA_SOME__UNDERSCORED", "some_underscored"),
            ("KAFKA_A___DASH", "a-dash"),
        ] {
            assert_eq!(property_name(variable), key, "{variable}");
        }
    }

    #[test]
    fn variables_become_properties_after_the_mounted_file() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mounted = dir.path().join("server.properties");
        std::fs::write(&mounted, "node.id=7\nnum.partitions=3\n").unwrap_or_else(|e| panic!("{e}"));
        let got = from_environment(
            &env(&[
                ("KAFKA_PROCESS_ROLES", "controller"),
                ("KAFKA_NODE_ID", "1"),
                ("KAFKA_HEAP_OPTS", "-Xmx1G"),
                ("KAFKA_ADVERTISED_LISTENERS", ""),
                ("PATH", "/usr/bin"),
                ("CLUSTER_ID", "MkU3OEVBNTcwNTJENDM2Qg"),
            ]),
            dir.path(),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let expected: Properties = [
            ("node.id", "1"),
            ("num.partitions", "3"),
            ("process.roles", "controller"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(got.properties, expected);
        assert_eq!(got.cluster_id, "MkU3OEVBNTcwNTJENDM2Qg");
        assert!(got.mounted_file && !got.default_cluster_id);
    }

    #[test]
    fn refused_and_defaulted_as_the_image_does() {
        let nowhere = Path::new("/nonexistent-ferrokraft-mount");
        let e = from_environment(
            &env(&[
                ("KAFKA_PROCESS_ROLES", "controller"),
                ("KAFKA_ADVERTISED_LISTENERS", "CONTROLLER://c1:9093"),
            ]),
            nowhere,
        )
        .err()
        .map(|e| e.to_string());
        assert_eq!(
            e.as_deref(),
            Some("KAFKA_ADVERTISED_LISTENERS is not supported on a KRaft controller.")
        );
        let got = from_environment(&env(&[("KAFKA_PROCESS_ROLES", "controller")]), nowhere)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got.cluster_id, DEFAULT_CLUSTER_ID);
        assert!(got.default_cluster_id && !got.mounted_file);
        assert!(!requested(&env(&[("KAFKA_PROCESS_ROLES", "")])));
        assert!(requested(&env(&[("KAFKA_PROCESS_ROLES", "controller")])));
    }

    #[test]
    fn log_levels_come_from_the_image_variables() {
        let vars = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(log_directives(vars(&[])), None);
        assert_eq!(
            log_directives(vars(&[("KAFKA_LOG4J_ROOT_LOGLEVEL", "WARN")])).as_deref(),
            Some("warn")
        );
        assert_eq!(
            log_directives(vars(&[(
                "KAFKA_LOG4J_LOGGERS",
                "ferrokraft::raft=DEBUG, kafka.controller=FATAL"
            ),]))
            .as_deref(),
            Some("info,ferrokraft::raft=debug,kafka.controller=error")
        );
    }
}
