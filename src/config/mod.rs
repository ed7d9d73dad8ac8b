//! Configuration: a Kafka `server.properties` read unchanged.
//!
//! ```text
//!   file ──java_properties──▶ raw map ──overrides──▶ Config::from_properties ──▶ Config
//! ```
//!
//! Key names and defaults are Kafka's (KRaftConfigs, QuorumConfig, SocketServerConfigs,
//! MetadataLogConfig). Keys we do not know only warn, as Kafka does, so one file can serve a
//! Java controller and ferrokraft; invalid or missing required values are errors naming the key
//! and the value.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, Ipv4Addr};
use std::path::{Path, PathBuf};

pub mod connections;
pub mod sasl;
pub mod ssl;

/// A configuration problem, naming the key and the value.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not a valid properties file.
    #[error("cannot parse config file {path}: {reason}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// A required key is absent.
    #[error("Missing required configuration \"{key}\" which has no default value.")]
    Missing {
        /// The key.
        key: &'static str,
    },
    /// A value is not valid for its key.
    #[error("Invalid value {value} for configuration {key}: {reason}")]
    Invalid {
        /// The key.
        key: String,
        /// The value as given.
        value: String,
        /// Why it is refused.
        reason: String,
    },
}

fn invalid(key: &str, value: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key: key.to_string(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

/// A voter in `controller.quorum.voters`: `id@host:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticVoter {
    /// The voter's node id.
    pub id: i32,
    /// Host of its controller listener.
    pub host: String,
    /// Port of its controller listener.
    pub port: u16,
}

/// A host and port, as in `controller.quorum.bootstrap.servers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostPort {
    /// Host name or address.
    pub host: String,
    /// Port.
    pub port: u16,
}

/// One entry of `listeners` / `advertised.listeners`: `NAME://host:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listener {
    /// Listener name, upper-cased as Kafka normalises it.
    pub name: String,
    /// Host ("" binds every interface, as in Kafka).
    pub host: String,
    /// Port (0 = any free port).
    pub port: u16,
}

impl Listener {
    /// The address to bind: an empty host binds every interface.
    pub fn bind_ip(&self) -> Result<IpAddr, ConfigError> {
        if self.host.is_empty() {
            return Ok(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
        }
        if self.host == "localhost" {
            return Ok(IpAddr::V4(Ipv4Addr::LOCALHOST));
        }
        let trimmed = self.host.trim_start_matches('[').trim_end_matches(']');
        trimmed.parse().map_err(|_| {
            invalid(
                "listeners",
                &self.host,
                "ferrokraft binds listeners to IP addresses (or localhost or an empty host)",
            )
        })
    }
}

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
    /// `broker.heartbeat.interval.ms`: how often brokers heartbeat (half of it bounds how long
    /// a heartbeat may wait in the controller's queue).
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
    /// `controller.quorum.auto.join.enable`.
    pub quorum_auto_join_enable: bool,
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
    /// (`crate::node::start::effective_release`).
    pub kafka_release: Option<crate::codec::versions::Release>,
    /// `ferrokraft.recovery.accept.data.loss` (default false): start a voter whose log is
    /// empty or missing although its directory shows it had data
    /// (`crate::node::store::lost_data`).
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
}

const MIB: u64 = 1024 * 1024;
const WEEK_MS: u64 = 7 * 24 * 60 * 60 * 1000;

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

/// The raw properties: key → value, last occurrence wins (as `java.util.Properties`).
pub type Properties = BTreeMap<String, String>;

/// Reads a properties file with Java's rules.
pub fn read_properties(path: &Path) -> Result<Properties, ConfigError> {
    let file = std::fs::File::open(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let map: HashMap<String, String> = java_properties::read(std::io::BufReader::new(file))
        .map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
    Ok(map.into_iter().collect())
}

/// Applies `--override key=value` pairs after the file, as `kafka.Kafka` does.
pub fn apply_overrides(props: &mut Properties, overrides: &[String]) -> Result<(), ConfigError> {
    for o in overrides {
        let Some((k, v)) = o.split_once('=') else {
            return Err(invalid("--override", o, "expected key=value"));
        };
        props.insert(k.trim().to_string(), v.to_string());
    }
    Ok(())
}

/// Kafka's list syntax: comma-separated, whitespace around entries trimmed, empties dropped.
fn list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

fn get<'a>(props: &'a Properties, key: &str) -> Option<&'a str> {
    props.get(key).map(|v| v.trim())
}

fn parse_num<T: std::str::FromStr>(
    props: &Properties,
    key: &str,
    default: T,
) -> Result<T, ConfigError> {
    match get(props, key) {
        None => Ok(default),
        Some(v) => v.parse().map_err(|_| invalid(key, v, "not a valid number")),
    }
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
    // A PASSWORD value is not trimmed by Kafka; only an absent or empty key disables tokens.
    Ok(match props.get("delegation.token.secret.key") {
        Some(key) if !key.is_empty() => Some(DelegationTokenConfig {
            secret_key: key.clone(),
            max_lifetime_ms,
            expiry_time_ms,
            expiry_check_interval_ms,
        }),
        _ => None,
    })
}

/// A number with Kafka's `atLeast(1)` bound.
fn positive<T: std::str::FromStr + PartialOrd + From<u8>>(
    props: &Properties,
    key: &str,
    default: T,
) -> Result<T, ConfigError> {
    let v: T = parse_num(props, key, default)?;
    if v < T::from(1) {
        return Err(invalid(
            key,
            get(props, key).unwrap_or(""),
            "must be at least 1",
        ));
    }
    Ok(v)
}

fn parse_bool(props: &Properties, key: &str, default: bool) -> Result<bool, ConfigError> {
    match get(props, key).map(str::to_ascii_lowercase).as_deref() {
        None => Ok(default),
        Some("true") => Ok(true),
        Some("false") => Ok(false),
        Some(_) => Err(invalid(
            key,
            get(props, key).unwrap_or(""),
            "expected true or false",
        )),
    }
}

fn parse_port(key: &str, entry: &str, port: &str) -> Result<u16, ConfigError> {
    port.parse().map_err(|_| {
        invalid(
            key,
            entry,
            format!("port '{port}' is not a number in 0..65535"),
        )
    })
}

/// Splits `host:port`, allowing `[v6]:port`.
fn split_host_port<'a>(key: &str, entry: &'a str) -> Result<(&'a str, &'a str), ConfigError> {
    entry
        .rsplit_once(':')
        .ok_or_else(|| invalid(key, entry, "expected host:port"))
}

/// Parses `controller.quorum.voters`: `1@host:9093,2@host:9093`.
pub fn parse_voters(value: &str) -> Result<Vec<StaticVoter>, ConfigError> {
    const KEY: &str = "controller.quorum.voters";
    let mut voters: Vec<StaticVoter> = Vec::new();
    for entry in list(value) {
        let (id, addr) = entry
            .split_once('@')
            .ok_or_else(|| invalid(KEY, &entry, "expected {id}@{host}:{port}"))?;
        let id: i32 = id
            .parse()
            .ok()
            .filter(|id: &i32| *id >= 0)
            .ok_or_else(|| invalid(KEY, &entry, "voter id must be a non-negative integer"))?;
        let (host, port) = addr
            .rsplit_once(':')
            .ok_or_else(|| invalid(KEY, &entry, "expected {id}@{host}:{port}"))?;
        let port = parse_port(KEY, &entry, port)?;
        if voters.iter().any(|v| v.id == id) {
            return Err(invalid(KEY, value, format!("duplicate voter id {id}")));
        }
        voters.push(StaticVoter {
            id,
            host: host.to_string(),
            port,
        });
    }
    Ok(voters)
}

/// Parses `controller.quorum.bootstrap.servers`: `host:port,host:port`.
pub fn parse_bootstrap_servers(value: &str) -> Result<Vec<HostPort>, ConfigError> {
    const KEY: &str = "controller.quorum.bootstrap.servers";
    list(value)
        .iter()
        .map(|entry| {
            let (host, port) = split_host_port(KEY, entry)?;
            Ok(HostPort {
                host: host.to_string(),
                port: parse_port(KEY, entry, port)?,
            })
        })
        .collect()
}

/// Parses `listeners`-style values: `NAME://host:port,...`.
pub fn parse_listeners(key: &str, value: &str) -> Result<Vec<Listener>, ConfigError> {
    let mut out: Vec<Listener> = Vec::new();
    for entry in list(value) {
        let (name, addr) = entry
            .split_once("://")
            .ok_or_else(|| invalid(key, &entry, "expected NAME://host:port"))?;
        let (host, port) = split_host_port(key, addr)?;
        let name = name.to_ascii_uppercase();
        if out.iter().any(|l| l.name == name) {
            return Err(invalid(
                key,
                value,
                format!("each listener must have a different name; {name} repeats"),
            ));
        }
        out.push(Listener {
            name,
            host: host.to_string(),
            port: parse_port(key, &entry, port)?,
        });
    }
    Ok(out)
}

impl Config {
    /// Builds and validates the configuration from raw properties.
    pub fn from_properties(props: &Properties) -> Result<Self, ConfigError> {
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
        let node_id: i32 = node_id_raw
            .parse()
            .ok()
            .filter(|id: &i32| *id >= 0)
            .ok_or_else(|| invalid("node.id", node_id_raw, "must be a non-negative integer"))?;

        let quorum_voters = parse_voters(get(props, "controller.quorum.voters").unwrap_or(""))?;
        let quorum_bootstrap_servers = parse_bootstrap_servers(
            get(props, "controller.quorum.bootstrap.servers").unwrap_or(""),
        )?;

        let controller_listener_names: Vec<String> = list(
            get(props, "controller.listener.names").ok_or(ConfigError::Missing {
                key: "controller.listener.names",
            })?,
        )
        .into_iter()
        .map(|n| n.to_ascii_uppercase())
        .collect();
        if controller_listener_names.is_empty() {
            return Err(invalid(
                "controller.listener.names",
                "",
                "must name at least one listener",
            ));
        }
        let listeners_raw =
            get(props, "listeners").ok_or(ConfigError::Missing { key: "listeners" })?;
        let listeners = parse_listeners("listeners", listeners_raw)?;
        for l in &listeners {
            if !controller_listener_names.contains(&l.name) {
                return Err(invalid(
                    "listeners",
                    listeners_raw,
                    format!(
                        "the listeners config must only contain KRaft controller listeners from controller.listener.names when process.roles=controller; {} is not one",
                        l.name
                    ),
                ));
            }
        }
        let first = &controller_listener_names[0];
        if !listeners.iter().any(|l| &l.name == first) {
            return Err(invalid(
                "controller.listener.names",
                &controller_listener_names.join(","),
                format!("the first controller listener {first} must appear in listeners"),
            ));
        }
        let advertised_listeners = match get(props, "advertised.listeners") {
            Some(v) if !v.is_empty() => parse_listeners("advertised.listeners", v)?,
            _ => listeners.clone(),
        };
        let protocols = ssl::listener_protocols(props, &controller_listener_names)?;
        let mut ssl = BTreeMap::new();
        let mut sasl = BTreeMap::new();
        for (name, protocol) in &protocols {
            if protocol.uses_tls() {
                ssl.insert(name.clone(), ssl::parse(props, name)?);
            }
            if protocol.uses_sasl() {
                sasl.insert(name.clone(), sasl::parse(props, name)?);
            }
        }
        // The raft client dials peers on the first controller listener, with its protocol.
        let sasl_client = match protocols.first() {
            Some((name, p)) if p.uses_sasl() => Some(sasl::parse_client(props, name)?),
            _ => None,
        };

        if quorum_voters.is_empty() && quorum_bootstrap_servers.is_empty() {
            return Err(invalid(
                "controller.quorum.voters",
                "",
                "one of controller.quorum.voters or controller.quorum.bootstrap.servers must be set",
            ));
        }

        let log_dirs: Vec<PathBuf> = list(
            get(props, "log.dirs")
                .or_else(|| get(props, "log.dir"))
                .unwrap_or("/tmp/kafka-logs"),
        )
        .into_iter()
        .map(PathBuf::from)
        .collect();
        if log_dirs.is_empty() {
            return Err(invalid(
                "log.dirs",
                "",
                "at least one directory is required",
            ));
        }
        let metadata_log_dir = match get(props, "metadata.log.dir") {
            Some(d) if !d.is_empty() => PathBuf::from(d),
            _ => log_dirs[0].clone(),
        };

        // Kafka refuses segments under 8 MiB unless the internal test override is set; the
        // override's name changed in 4.1 (KAFKA-19080), so both are accepted.
        let internal_segment_bytes = get(props, "internal.metadata.log.segment.bytes")
            .or_else(|| get(props, "metadata.log.segment.min.bytes"));
        let metadata_log_segment_bytes: u64 = match internal_segment_bytes {
            Some(v) => v.parse().map_err(|_| {
                invalid(
                    "internal.metadata.log.segment.bytes",
                    v,
                    "not a valid number",
                )
            })?,
            None => {
                let bytes = parse_num(props, "metadata.log.segment.bytes", 1024 * MIB)?;
                if bytes < 8 * MIB {
                    return Err(invalid(
                        "metadata.log.segment.bytes",
                        &bytes.to_string(),
                        "Value must be at least 8388608",
                    ));
                }
                bytes
            }
        };

        let socket_request_max_bytes: usize = parse_num(
            props,
            "socket.request.max.bytes",
            crate::codec::frame::DEFAULT_REQUEST_MAX_BYTES,
        )?;
        if socket_request_max_bytes == 0 || socket_request_max_bytes > i32::MAX as usize {
            return Err(invalid(
                "socket.request.max.bytes",
                &socket_request_max_bytes.to_string(),
                "must be between 1 and 2147483647",
            ));
        }
        let connections = connections::parse(props, &listeners, socket_request_max_bytes)?;

        // Kafka's ConfigDef bounds: atLeast(1) for both.
        let min_insync_replicas: i32 = parse_num(props, "min.insync.replicas", 1)?;
        if min_insync_replicas < 1 {
            return Err(invalid(
                "min.insync.replicas",
                &min_insync_replicas.to_string(),
                "must be at least 1",
            ));
        }
        if get(props, "metadata.log.max.record.bytes.between.snapshots") == Some("0") {
            return Err(invalid(
                "metadata.log.max.record.bytes.between.snapshots",
                "0",
                "must be at least 1",
            ));
        }
        let authorizer =
            match get(props, "authorizer.class.name").map(str::trim) {
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
                Some(other) => return Err(invalid(
                    "authorizer.class.name",
                    other,
                    "ferrokraft runs org.apache.kafka.metadata.authorizer.StandardAuthorizer only",
                )),
            };
        let delegation_tokens = delegation_tokens(props)?;
        // Kafka's QuotaConfig: INT, atLeast(1), both.
        let mutation_quota = crate::controller::mutation_quotas::MutationQuotaConfig {
            window_num: positive(props, "controller.quota.window.num", 11)?,
            window_size_seconds: positive(props, "controller.quota.window.size.seconds", 1)?,
        };
        let config = Config {
            authorizer,
            delegation_tokens,
            mutation_quota,
            node_id,
            quorum_voters,
            quorum_bootstrap_servers,
            listeners,
            advertised_listeners,
            controller_listener_names,
            log_dirs,
            metadata_log_dir,
            metadata_log_segment_bytes,
            metadata_log_segment_ms: parse_num(props, "metadata.log.segment.ms", WEEK_MS)?,
            metadata_max_retention_bytes: parse_num(
                props,
                "metadata.max.retention.bytes",
                100 * MIB as i64,
            )?,
            metadata_max_retention_ms: parse_num(
                props,
                "metadata.max.retention.ms",
                WEEK_MS as i64,
            )?,
            metadata_log_max_record_bytes_between_snapshots: parse_num(
                props,
                "metadata.log.max.record.bytes.between.snapshots",
                20 * MIB,
            )?,
            metadata_log_max_snapshot_interval_ms: parse_num(
                props,
                "metadata.log.max.snapshot.interval.ms",
                3_600_000,
            )?,
            metadata_max_idle_interval_ms: parse_num(props, "metadata.max.idle.interval.ms", 500)?,
            min_insync_replicas,
            broker_session_timeout_ms: parse_num(props, "broker.session.timeout.ms", 9000)?,
            broker_heartbeat_interval_ms: parse_num(props, "broker.heartbeat.interval.ms", 2000)?,
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
            quorum_election_timeout_ms: parse_num(
                props,
                "controller.quorum.election.timeout.ms",
                1000,
            )?,
            quorum_fetch_timeout_ms: parse_num(props, "controller.quorum.fetch.timeout.ms", 2000)?,
            quorum_election_backoff_max_ms: parse_num(
                props,
                "controller.quorum.election.backoff.max.ms",
                1000,
            )?,
            quorum_append_linger_ms: parse_num(props, "controller.quorum.append.linger.ms", 25)?,
            quorum_request_timeout_ms: parse_num(
                props,
                "controller.quorum.request.timeout.ms",
                2000,
            )?,
            quorum_retry_backoff_ms: parse_num(props, "controller.quorum.retry.backoff.ms", 20)?,
            quorum_auto_join_enable: parse_bool(
                props,
                "controller.quorum.auto.join.enable",
                false,
            )?,
            socket_request_max_bytes,
            connections,
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
                    invalid("ferrokraft.kafka.release", v, "expected 4.1 or 4.4")
                })?),
            },
            recovery_accept_data_loss: parse_bool(
                props,
                "ferrokraft.recovery.accept.data.loss",
                false,
            )?,
            ssl,
            sasl,
            sasl_client,
            unknown_keys: props
                .keys()
                .filter(|k| {
                    !KNOWN_KEYS.contains(&k.as_str())
                        && !IGNORED_KAFKA_KEYS.contains(&k.as_str())
                        && !ssl::SSL_KEYS.contains(&k.as_str())
                        && !ssl::is_listener_ssl_key(k)
                        && !sasl::SASL_KEYS.contains(&k.as_str())
                        && !sasl::is_listener_sasl_key(k)
                        && !connections::is_listener_key(k)
                })
                .cloned()
                .collect(),
        };
        Ok(config)
    }

    /// Reads a file, applies overrides, validates.
    pub fn load(path: &Path, overrides: &[String]) -> Result<Self, ConfigError> {
        let mut props = read_properties(path)?;
        apply_overrides(&mut props, overrides)?;
        Self::from_properties(&props)
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

    /// Logs, once, the keys we do not know (Kafka's wording).
    pub fn warn_unknown_keys(&self) {
        for key in &self.unknown_keys {
            tracing::warn!("The configuration '{key}' was supplied but isn't a known config.");
        }
    }
}

#[cfg(test)]
mod tests;
