//! The addresses of a controller: its listeners (`listeners`, `advertised.listeners`,
//! `controller.listener.names`, with the TLS and SASL settings of each), the static voters
//! (`controller.quorum.voters`) and the bootstrap servers of a dynamic quorum
//! (`controller.quorum.bootstrap.servers`), in Kafka's syntax.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};

use super::properties::{get, invalid, list, ConfigError, Properties};
use super::{sasl, ssl};
use crate::security::client::SaslClientSettings;

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

/// The listener keys of a controller: `controller.listener.names`, `listeners`,
/// `advertised.listeners`, and the security protocol, TLS and SASL settings of each.
pub(super) struct ListenerSection {
    pub(super) controller_listener_names: Vec<String>,
    pub(super) listeners: Vec<Listener>,
    pub(super) advertised_listeners: Vec<Listener>,
    pub(super) ssl: BTreeMap<String, ssl::SslConfig>,
    pub(super) sasl: BTreeMap<String, sasl::SaslListenerConfig>,
    pub(super) sasl_client: Option<SaslClientSettings>,
}

impl ListenerSection {
    /// Reads and checks the listener keys (Kafka's KRaftConfigs and SocketServerConfigs: a
    /// controller's listeners must all be controller listeners, the first of them among them).
    pub(super) fn parse(props: &Properties) -> Result<Self, ConfigError> {
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
        Ok(Self {
            controller_listener_names,
            listeners,
            advertised_listeners,
            ssl,
            sasl,
            sasl_client,
        })
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
