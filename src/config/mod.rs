//! Configuration: a Kafka `server.properties` read unchanged.
//!
//! ```text
//!   file ──java_properties──▶ raw map ──overrides──▶ providers::resolve ──▶ resolved map
//!        ──▶ Config::from_properties ──▶ Config       (Config::from_raw_properties does both)
//!            (one parser per area)
//! ```
//!
//! Key names and defaults are Kafka's (KRaftConfigs, QuorumConfig, SocketServerConfigs,
//! MetadataLogConfig). Keys we do not know only warn, as Kafka does, so one file can serve a
//! Java controller and ferrokraft; invalid or missing required values are errors naming the key
//! and the value. Each area has its file: `properties` (the raw map, the error, the value
//! helpers), `providers` (`${provider:[path:]key}` variables, Kafka's config providers; Strimzi's
//! Kubernetes Secret provider in `kubernetes_secret`), `keys`
//! (the keys known), `listeners` (addresses and listeners), `quorum`,
//! `metadata_log`, `socket_server` and `connections`, `ssl`, `sasl`; `controller` derives the
//! controller's settings from a [`Config`].

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub mod connections;
pub mod controller;
pub mod environment;
mod keys;
mod kubernetes_secret;
pub mod listeners;
mod metadata_log;
pub mod properties;
pub mod providers;
mod quorum;
pub mod sasl;
mod socket_server;
pub mod ssl;

pub use controller::controller_config;
pub use keys::warn_unknown_keys;
pub use listeners::{
    parse_bootstrap_servers, parse_listeners, parse_voters, HostPort, Listener, StaticVoter,
};
pub use properties::{apply_overrides, read_properties, ConfigError, Properties};
use properties::{get, invalid, list, parse_bool, positive};

/// The typed configuration of a controller node.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// `node.id`.
    pub node_id: i32,
    /// `controller.quorum.voters` (static quorum, kraft.version 0).
    pub quorum_voters: Vec<StaticVoter>,
    /// `controller.quorum.bootstrap.servers` (dynamic quorum, KIP-853).
    pub quorum_bootstrap_servers: Vec<HostPort>,
    /// `listeners`, restricted to the controller listeners.
    pub listeners: Vec<Listener>,
    /// `advertised.listeners` (defaults to `listeners`).
    pub advertised_listeners: Vec<Listener>,
    /// `controller.listener.names`; the first is the one peers use.
    pub controller_listener_names: Vec<String>,
    /// `log.dirs` (or `log.dir`).
    pub log_dirs: Vec<PathBuf>,
    /// `metadata.log.dir`, else the first of `log.dirs`.
    pub metadata_log_dir: PathBuf,
    /// `metadata.log.segment.bytes`.
    pub metadata_log_segment_bytes: u64,
    /// `metadata.log.segment.ms`.
    pub metadata_log_segment_ms: u64,
    /// `metadata.max.retention.bytes`.
    pub metadata_max_retention_bytes: i64,
    /// `metadata.max.retention.ms`.
    pub metadata_max_retention_ms: i64,
    /// `metadata.log.max.record.bytes.between.snapshots`.
    pub metadata_log_max_record_bytes_between_snapshots: u64,
    /// `metadata.log.max.snapshot.interval.ms`.
    pub metadata_log_max_snapshot_interval_ms: u64,
    /// `metadata.max.idle.interval.ms` (NoOpRecord cadence of an active controller).
    pub metadata_max_idle_interval_ms: u64,
    /// `min.insync.replicas`: the cluster-level value a leader writes with the bootstrap
    /// records when eligible leader replicas are on.
    pub min_insync_replicas: i32,
    /// `broker.session.timeout.ms`: a broker without a heartbeat for this long is fenced.
    pub broker_session_timeout_ms: u64,
    /// `broker.heartbeat.interval.ms`: how often brokers heartbeat. Parsed, not yet used
    /// (docs/configuration.md).
    pub broker_heartbeat_interval_ms: u64,
    /// `num.partitions`: partitions of a topic created with -1.
    pub num_partitions: i32,
    /// `default.replication.factor`: replication factor of a topic created with -1.
    pub default_replication_factor: i16,
    /// `delete.topic.enable`: whether DeleteTopics may remove topics.
    pub delete_topic_enable: bool,
    /// `auto.leader.rebalance.enable`: the active controller moves leaders back to preferred
    /// replicas.
    pub auto_leader_rebalance_enable: bool,
    /// `leader.imbalance.check.interval.seconds`: the delay of that balancing check.
    pub leader_imbalance_check_interval_seconds: u64,
    /// `unclean.leader.election.interval.ms` (Kafka's internal key, 5 minutes): how often the
    /// active controller retries unclean elections of leaderless partitions.
    pub unclean_leader_election_interval_ms: u64,
    /// `controller.quorum.election.timeout.ms`.
    pub quorum_election_timeout_ms: u64,
    /// `controller.quorum.fetch.timeout.ms`.
    pub quorum_fetch_timeout_ms: u64,
    /// `controller.quorum.election.backoff.max.ms`.
    pub quorum_election_backoff_max_ms: u64,
    /// `controller.quorum.append.linger.ms`.
    pub quorum_append_linger_ms: u64,
    /// `controller.quorum.request.timeout.ms`.
    pub quorum_request_timeout_ms: u64,
    /// `controller.quorum.retry.backoff.ms`.
    pub quorum_retry_backoff_ms: u64,
    /// `controller.quorum.auto.join.enable` (Kafka 4.2's): an observer adds itself as a voter.
    pub quorum_auto_join_enable: bool,
    /// `controller.quorum.fetch.max.bytes` (Kafka 4.3's, KIP-1219) when given; unset, the
    /// presented release's default.
    pub quorum_fetch_max_bytes: Option<i32>,
    /// `controller.quorum.fetch.snapshot.max.bytes` (Kafka 4.3's, KIP-1219) when given.
    pub quorum_fetch_snapshot_max_bytes: Option<i32>,
    /// `socket.request.max.bytes`.
    pub socket_request_max_bytes: usize,
    /// Connection and request-memory limits (`max.connections`, `max.connections.per.ip`,
    /// `connections.max.idle.ms`, `queued.max.request.bytes`, …).
    pub connections: connections::ConnectionConfig,
    /// `ferrokraft.metrics.listener` (host:port): where `GET /metrics` and `GET /ready` are
    /// served. Not set by default (no endpoint), since one default port would clash between
    /// nodes sharing a machine.
    pub metrics_listener: Option<std::net::SocketAddr>,
    /// `ferrokraft.kafka.release` (`4.1` or `4.4`): the Kafka release whose controller this
    /// node presents itself as (advertised APIs and feature ranges, the default
    /// metadata.version of `ferrokraft format`). Unset: `format` uses 4.1, and `start` picks
    /// 4.4 when the bootstrap metadata.version is beyond 4.1's, else 4.1
    /// (`crate::launch::start::effective_release`).
    pub kafka_release: Option<crate::codec::versions::Release>,
    /// `ferrokraft.recovery.accept.data.loss` (default false): start a voter whose log is
    /// empty or missing although its directory shows it had data
    /// (`crate::server::store::lost_data`).
    pub recovery_accept_data_loss: bool,
    /// The TLS settings of each controller listener whose security protocol is SSL or
    /// SASL_SSL, by listener name (upper case).
    pub ssl: BTreeMap<String, ssl::SslConfig>,
    /// The SASL settings of each SASL_PLAINTEXT or SASL_SSL controller listener.
    pub sasl: BTreeMap<String, sasl::SaslListenerConfig>,
    /// What this node authenticates to its peers with, when the first controller listener is
    /// SASL.
    pub sasl_client: Option<crate::security::client::SaslClientSettings>,
    /// `authorizer.class.name` = StandardAuthorizer with `super.users` and
    /// `allow.everyone.if.no.acl.found`; `None` when unset.
    pub authorizer: Option<crate::metadata::authorizer::AuthorizerConfig>,
    /// `delegation.token.secret.key` and the token lifetimes; `None` when the key is unset or
    /// empty (Kafka's `tokenAuthEnabled` false).
    pub delegation_tokens: Option<crate::controller::delegation_tokens::DelegationTokenConfig>,
    /// `controller.quota.window.num` (11) and `controller.quota.window.size.seconds` (1).
    pub mutation_quota: crate::controller::mutation_quotas::MutationQuotaConfig,
    /// Every key given that ferrokraft does not know (warned about once at start-up).
    pub unknown_keys: Vec<String>,
    /// Every key given, as given (Kafka's originals: what DescribeConfigs of this node's
    /// BROKER resource lists besides the defaults).
    pub properties: crate::common::static_properties::StaticProperties,
}

impl Config {
    /// Builds and validates the configuration from raw properties, area by area (in the
    /// order Kafka's checks name the first invalid key).
    pub fn from_properties(props: &Properties) -> Result<Self, ConfigError> {
        let node_id = node_id(props)?;
        keys::refused_class_key(props)?;
        let quorum_voters = parse_voters(get(props, "controller.quorum.voters").unwrap_or(""))?;
        let quorum_bootstrap_servers = parse_bootstrap_servers(
            get(props, "controller.quorum.bootstrap.servers").unwrap_or(""),
        )?;
        let listeners::ListenerSection {
            controller_listener_names,
            listeners,
            advertised_listeners,
            ssl,
            sasl,
            sasl_client,
        } = listeners::ListenerSection::parse(props)?;
        if quorum_voters.is_empty() && quorum_bootstrap_servers.is_empty() {
            // Kafka 4.1.2's QuorumConfig check, word for word.
            return Err(ConfigError::Message(
                "If using process.roles, either controller.quorum.bootstrap.servers must contain the set of bootstrap controllers or controller.quorum.voters must contain a parseable set of controllers.".to_string(),
            ));
        }
        voters_include_node(node_id, &quorum_voters)?;
        let dirs = metadata_log::log_dirs(props)?;
        let (socket_request_max_bytes, connections) = socket_server::parse(props, &listeners)?;
        let min_insync_replicas = min_insync_replicas(props)?;
        metadata_log::check_snapshot_bytes(props)?;
        let authorizer = authorizer(props)?;
        let delegation_tokens = delegation_tokens(props)?;
        let mutation_quota = mutation_quota(props)?;
        let log = metadata_log::limits(props)?;
        let brokers = broker_defaults(props)?;
        let quorum = quorum::timeouts(props)?;
        let own = ferrokraft_keys(props)?;
        Ok(Config {
            authorizer,
            delegation_tokens,
            mutation_quota,
            node_id,
            quorum_voters,
            quorum_bootstrap_servers,
            listeners,
            advertised_listeners,
            controller_listener_names,
            log_dirs: dirs.log_dirs,
            metadata_log_dir: dirs.metadata_log_dir,
            metadata_log_segment_bytes: dirs.segment_bytes,
            metadata_log_segment_ms: log.segment_ms,
            metadata_max_retention_bytes: log.max_retention_bytes,
            metadata_max_retention_ms: log.max_retention_ms,
            metadata_log_max_record_bytes_between_snapshots: log.max_record_bytes_between_snapshots,
            metadata_log_max_snapshot_interval_ms: log.max_snapshot_interval_ms,
            metadata_max_idle_interval_ms: log.max_idle_interval_ms,
            min_insync_replicas,
            broker_session_timeout_ms: brokers.session_timeout_ms,
            broker_heartbeat_interval_ms: brokers.heartbeat_interval_ms,
            num_partitions: brokers.num_partitions,
            default_replication_factor: brokers.default_replication_factor,
            delete_topic_enable: brokers.delete_topic_enable,
            auto_leader_rebalance_enable: brokers.auto_leader_rebalance_enable,
            leader_imbalance_check_interval_seconds: brokers
                .leader_imbalance_check_interval_seconds,
            unclean_leader_election_interval_ms: brokers.unclean_leader_election_interval_ms,
            quorum_election_timeout_ms: quorum.election_timeout_ms,
            quorum_fetch_timeout_ms: quorum.fetch_timeout_ms,
            quorum_election_backoff_max_ms: quorum.election_backoff_max_ms,
            quorum_append_linger_ms: quorum.append_linger_ms,
            quorum_request_timeout_ms: quorum.request_timeout_ms,
            quorum_retry_backoff_ms: quorum.retry_backoff_ms,
            quorum_auto_join_enable: quorum.auto_join_enable,
            quorum_fetch_max_bytes: quorum.fetch_max_bytes,
            quorum_fetch_snapshot_max_bytes: quorum.fetch_snapshot_max_bytes,
            socket_request_max_bytes,
            connections,
            metrics_listener: own.metrics_listener,
            kafka_release: own.kafka_release,
            recovery_accept_data_loss: own.recovery_accept_data_loss,
            ssl,
            sasl,
            sasl_client,
            unknown_keys: keys::unknown_keys(props),
            properties: crate::common::static_properties::StaticProperties::new(props.clone()),
        })
    }

    /// Reads a file, applies overrides, then [`Config::from_raw_properties`].
    pub fn load(path: &Path, overrides: &[String]) -> Result<Self, ConfigError> {
        let mut props = read_properties(path)?;
        apply_overrides(&mut props, overrides)?;
        Self::from_raw_properties(&props)
    }

    /// Resolves the config providers' variables, warns about the keys it does not know
    /// (before any refusal, so a misspelt key is named next to the error it causes),
    /// validates. An error shows a resolved value as it was written (its placeholder).
    pub fn from_raw_properties(raw: &Properties) -> Result<Self, ConfigError> {
        let resolved = providers::resolve(raw)?;
        warn_unknown_keys(&resolved.props);
        Self::from_properties(&resolved.props).map_err(|e| resolved.redact(e))
    }

    /// The listeners we accept connections on: those named in `controller.listener.names`.
    pub fn controller_listeners(&self) -> impl Iterator<Item = &Listener> {
        self.listeners
            .iter()
            .filter(|l| self.controller_listener_names.contains(&l.name))
    }

    /// A controller listener's security protocol (from the TLS and SASL settings it has).
    pub fn security_protocol(&self, listener: &str) -> sasl::SecurityProtocol {
        use sasl::SecurityProtocol as P;
        match (
            self.ssl.contains_key(listener),
            self.sasl.contains_key(listener),
        ) {
            (false, false) => P::Plaintext,
            (true, false) => P::Ssl,
            (false, true) => P::SaslPlaintext,
            (true, true) => P::SaslSsl,
        }
    }
}

/// Kafka's `validateControllerQuorumVotersMustContainNodeIdForKRaftController`: a controller
/// of a static quorum is one of its voters (else it would run as an observer on another
/// voter's address). The voters print as Scala prints the set Kafka builds of them.
fn voters_include_node(node_id: i32, voters: &[listeners::StaticVoter]) -> Result<(), ConfigError> {
    if voters.is_empty() || voters.iter().any(|v| v.id == node_id) {
        return Ok(());
    }
    let ids: Vec<i32> = voters.iter().map(|v| v.id).collect();
    Err(ConfigError::Requirement(format!(
        "If process.roles contains the 'controller' role, the node id {node_id} must be included in the set of voters controller.quorum.voters={}",
        crate::common::java::scala_int_set_string(&ids)
    )))
}

/// `process.roles` (controller only) and `node.id` (Kafka's KRaftConfigs).
fn node_id(props: &Properties) -> Result<i32, ConfigError> {
    let roles = get(props, "process.roles").ok_or(ConfigError::Missing {
        key: "process.roles",
    })?;
    let roles = list(roles);
    if roles != ["controller"] {
        return Err(invalid(
            "process.roles",
            &roles.join(","),
            "ferrokraft runs dedicated controllers only: set process.roles=controller",
        ));
    }
    let node_id_raw = get(props, "node.id").ok_or(ConfigError::Missing { key: "node.id" })?;
    node_id_raw
        .parse()
        .ok()
        .filter(|id: &i32| *id >= 0)
        .ok_or_else(|| invalid("node.id", node_id_raw, "must be a non-negative integer"))
}

/// `min.insync.replicas`, with Kafka's ConfigDef bound atLeast(1).
fn min_insync_replicas(props: &Properties) -> Result<i32, ConfigError> {
    let min_insync_replicas: i32 = properties::parse_num(props, "min.insync.replicas", 1)?;
    if min_insync_replicas < 1 {
        return Err(invalid(
            "min.insync.replicas",
            &min_insync_replicas.to_string(),
            "must be at least 1",
        ));
    }
    Ok(min_insync_replicas)
}

/// `authorizer.class.name`: the StandardAuthorizer with `super.users` and
/// `allow.everyone.if.no.acl.found`, or none.
fn authorizer(
    props: &Properties,
) -> Result<Option<crate::metadata::authorizer::AuthorizerConfig>, ConfigError> {
    Ok(match get(props, "authorizer.class.name").map(str::trim) {
        None | Some("") => None,
        Some(crate::metadata::authorizer::STANDARD_AUTHORIZER) => Some(
            crate::metadata::authorizer::AuthorizerConfig::parse(
                get(props, "super.users"),
                get(props, "allow.everyone.if.no.acl.found"),
            )
            .map_err(|reason| {
                invalid(
                    "super.users",
                    get(props, "super.users").unwrap_or(""),
                    &reason,
                )
            })?,
        ),
        Some(other) => {
            return Err(invalid(
                "authorizer.class.name",
                other,
                "ferrokraft runs org.apache.kafka.metadata.authorizer.StandardAuthorizer only",
            ))
        }
    })
}

/// The `delegation.token.*` keys (Kafka's DelegationTokenManagerConfigs: the lifetimes are
/// LONG, atLeast(1), and validated whether or not a secret key is set).
fn delegation_tokens(
    props: &Properties,
) -> Result<Option<crate::controller::delegation_tokens::DelegationTokenConfig>, ConfigError> {
    use crate::controller::delegation_tokens::DelegationTokenConfig;
    let defaults = DelegationTokenConfig::with_secret("");
    let max_lifetime_ms = positive(
        props,
        "delegation.token.max.lifetime.ms",
        defaults.max_lifetime_ms,
    )?;
    let expiry_time_ms = positive(
        props,
        "delegation.token.expiry.time.ms",
        defaults.expiry_time_ms,
    )?;
    let expiry_check_interval_ms = positive(
        props,
        "delegation.token.expiry.check.interval.ms",
        defaults.expiry_check_interval_ms,
    )?;
    // Kafka's ConfigDef trims a PASSWORD value as any other (`parseType`); an absent, empty
    // or blank key disables tokens (`tokenAuthEnabled`).
    Ok(match get(props, "delegation.token.secret.key") {
        Some(key) if !key.is_empty() => Some(DelegationTokenConfig {
            secret_key: key.to_string(),
            max_lifetime_ms,
            expiry_time_ms,
            expiry_check_interval_ms,
        }),
        _ => None,
    })
}

/// The controller mutation quotas (Kafka's QuotaConfig: INT, atLeast(1), both).
fn mutation_quota(
    props: &Properties,
) -> Result<crate::controller::mutation_quotas::MutationQuotaConfig, ConfigError> {
    Ok(crate::controller::mutation_quotas::MutationQuotaConfig {
        window_num: positive(props, "controller.quota.window.num", 11)?,
        window_size_seconds: positive(props, "controller.quota.window.size.seconds", 1)?,
    })
}

/// What the controller does with brokers and topics by default.
struct BrokerDefaults {
    session_timeout_ms: u64,
    heartbeat_interval_ms: u64,
    num_partitions: i32,
    default_replication_factor: i16,
    delete_topic_enable: bool,
    auto_leader_rebalance_enable: bool,
    leader_imbalance_check_interval_seconds: u64,
    unclean_leader_election_interval_ms: u64,
}

/// The broker and topic keys, with Kafka's defaults and bounds.
fn broker_defaults(props: &Properties) -> Result<BrokerDefaults, ConfigError> {
    Ok(BrokerDefaults {
        session_timeout_ms: properties::parse_num(props, "broker.session.timeout.ms", 9000)?,
        heartbeat_interval_ms: properties::parse_num(props, "broker.heartbeat.interval.ms", 2000)?,
        num_partitions: positive(props, "num.partitions", 1)?,
        default_replication_factor: positive(props, "default.replication.factor", 1)?,
        delete_topic_enable: parse_bool(props, "delete.topic.enable", true)?,
        auto_leader_rebalance_enable: parse_bool(props, "auto.leader.rebalance.enable", true)?,
        // Kafka's ConfigDef: LONG, atLeast(1).
        leader_imbalance_check_interval_seconds: positive(
            props,
            "leader.imbalance.check.interval.seconds",
            300,
        )?,
        // Kafka's ReplicationConfigs: an internal LONG, atLeast(1), 5 minutes.
        unclean_leader_election_interval_ms: positive(
            props,
            "unclean.leader.election.interval.ms",
            300_000,
        )?,
    })
}

/// The `ferrokraft.*` keys.
struct FerrokraftKeys {
    metrics_listener: Option<std::net::SocketAddr>,
    kafka_release: Option<crate::codec::versions::Release>,
    recovery_accept_data_loss: bool,
}

fn ferrokraft_keys(props: &Properties) -> Result<FerrokraftKeys, ConfigError> {
    Ok(FerrokraftKeys {
        metrics_listener: match get(props, "ferrokraft.metrics.listener") {
            None | Some("") => None,
            Some(v) => Some(v.parse().map_err(|_| {
                invalid(
                    "ferrokraft.metrics.listener",
                    v,
                    "expected an IP address and port, e.g. 127.0.0.1:9404",
                )
            })?),
        },
        kafka_release: match get(props, "ferrokraft.kafka.release") {
            None | Some("") => None,
            Some(v) => Some(crate::codec::versions::Release::parse(v).ok_or_else(|| {
                invalid(
                    "ferrokraft.kafka.release",
                    v,
                    "expected 4.0, 4.1, 4.2, 4.3 or 4.4",
                )
            })?),
        },
        recovery_accept_data_loss: parse_bool(
            props,
            "ferrokraft.recovery.accept.data.loss",
            false,
        )?,
    })
}

#[cfg(test)]
mod tests;
