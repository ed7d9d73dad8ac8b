//! The socket server's limits on connections and request memory, with Kafka's keys
//! (SocketServerConfigs) and, where Kafka leaves memory unbounded, a bounded default.

use std::collections::BTreeMap;

use super::listeners::Listener;
use super::properties::{get, invalid, parse_num, ConfigError, Properties};

/// Kafka's `max.connections` and `max.connections.per.ip` default (Int.MaxValue).
pub const KAFKA_UNLIMITED_CONNECTIONS: usize = i32::MAX as usize;

/// `connections.max.idle.ms` default (10 minutes, Kafka's).
pub const DEFAULT_CONNECTIONS_MAX_IDLE_MS: u64 = 10 * 60 * 1000;

/// `queued.max.request.bytes` when the key is not set. Kafka's default (-1) leaves request
/// memory unbounded; ours bounds the raw bytes and the decoded memory of every request in
/// flight together (raised to `socket.request.max.bytes` if that is larger, Kafka's rule).
pub const DEFAULT_QUEUED_MAX_REQUEST_BYTES: usize = 256 * 1024 * 1024;

/// The connection and request-memory limits of every listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionConfig {
    /// `max.connections`: connections open at once across all listeners.
    pub max_connections: usize,
    /// `listener.name.<listener>.max.connections`, keyed by upper-case listener name.
    pub listener_max_connections: BTreeMap<String, usize>,
    /// `max.connections.per.ip`.
    pub max_connections_per_ip: usize,
    /// `max.connections.per.ip.overrides`: `host:count` pairs (host names resolved when the
    /// listener starts, as Kafka's ConnectionQuotas does).
    pub max_connections_per_ip_overrides: Vec<(String, usize)>,
    /// `connections.max.idle.ms`: a connection that sends nothing this long is closed; `None`
    /// (a negative value, as Kafka's Selector reads it) never idles out.
    pub connections_max_idle_ms: Option<u64>,
    /// `queued.max.request.bytes`: the budget of raw and decoded request bytes in flight;
    /// `None` is unbounded (a value ≤ 0, Kafka's meaning).
    pub queued_max_request_bytes: Option<usize>,
}

/// Whether `key` is a per-listener connection key (`listener.name.<l>.max.connections`).
pub fn is_listener_key(key: &str) -> bool {
    key.strip_prefix("listener.name.")
        .and_then(|rest| rest.strip_suffix(".max.connections"))
        .is_some_and(|name| !name.is_empty() && !name.contains('.'))
}

/// Reads the keys from `props`, checked as Kafka's KafkaConfig checks them.
pub fn parse(
    props: &Properties,
    listeners: &[Listener],
    socket_request_max_bytes: usize,
) -> Result<ConnectionConfig, ConfigError> {
    let max_connections = parse_num(props, "max.connections", KAFKA_UNLIMITED_CONNECTIONS)?;
    if max_connections == 0 {
        // Kafka accepts 0; a controller that accepts no connection could never reach its
        // quorum, so ferrokraft refuses it (docs/interop.md).
        return Err(invalid("max.connections", "0", "must be at least 1"));
    }
    let mut listener_max_connections = BTreeMap::new();
    for l in listeners {
        let key = format!("listener.name.{}.max.connections", l.name.to_lowercase());
        if let Some(v) = get(props, &key) {
            let n: usize = v
                .parse()
                .map_err(|_| invalid(&key, v, "not a valid number"))?;
            if n == 0 {
                return Err(invalid(&key, v, "must be at least 1"));
            }
            listener_max_connections.insert(l.name.clone(), n);
        }
    }
    let max_connections_per_ip =
        parse_num(props, "max.connections.per.ip", KAFKA_UNLIMITED_CONNECTIONS)?;
    let max_connections_per_ip_overrides = parse_overrides(props)?;
    if max_connections_per_ip == 0 && max_connections_per_ip_overrides.is_empty() {
        return Err(invalid(
            "max.connections.per.ip",
            "0",
            "max.connections.per.ip can be set to zero only if \
             max.connections.per.ip.overrides property is set.",
        ));
    }
    let queued_max_request_bytes = match get(props, "queued.max.request.bytes") {
        None => Some(DEFAULT_QUEUED_MAX_REQUEST_BYTES.max(socket_request_max_bytes)),
        Some(v) => {
            let n: i64 = v
                .parse()
                .map_err(|_| invalid("queued.max.request.bytes", v, "not a valid number"))?;
            if n <= 0 {
                None
            } else if (n as u64) < socket_request_max_bytes as u64 {
                return Err(invalid(
                    "queued.max.request.bytes",
                    v,
                    "queued.max.request.bytes must be larger or equal to socket.request.max.bytes",
                ));
            } else {
                Some(usize::try_from(n).unwrap_or(usize::MAX))
            }
        }
    };
    Ok(ConnectionConfig {
        max_connections,
        listener_max_connections,
        max_connections_per_ip,
        max_connections_per_ip_overrides,
        connections_max_idle_ms: u64::try_from(parse_num::<i64>(
            props,
            "connections.max.idle.ms",
            DEFAULT_CONNECTIONS_MAX_IDLE_MS as i64,
        )?)
        .ok(),
        queued_max_request_bytes,
    })
}

/// `host:count,host:count` split as Kafka's `Csv.parseCsvMap` (at the last `:`, so IPv6
/// addresses work), each host checked as Kafka's `Utils.validHostPattern`.
fn parse_overrides(props: &Properties) -> Result<Vec<(String, usize)>, ConfigError> {
    const KEY: &str = "max.connections.per.ip.overrides";
    let Some(value) = get(props, KEY).filter(|v| !v.is_empty()) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let mut bad_hosts = Vec::new();
    for pair in value.split(',').map(str::trim) {
        let Some((host, count)) = pair.rsplit_once(':') else {
            return Err(invalid(
                KEY,
                value,
                format!("Error parsing configuration property '{KEY}': no ':' in \"{pair}\""),
            ));
        };
        let host = host.trim();
        let count: usize = count.trim().parse().map_err(|_| {
            invalid(
                KEY,
                value,
                format!("For input string: \"{}\"", count.trim()),
            )
        })?;
        if !valid_host_pattern(host) {
            bad_hosts.push(host.to_string());
        }
        out.push((host.to_string(), count));
    }
    if !bad_hosts.is_empty() {
        return Err(invalid(
            KEY,
            value,
            format!("{KEY} contains invalid addresses : {}", bad_hosts.join(",")),
        ));
    }
    Ok(out)
}

/// An IP address or a host name made of letters, digits, `-` and `.` (what Kafka's
/// `Utils.validHostPattern` accepts, less its corner cases).
fn valid_host_pattern(host: &str) -> bool {
    host.parse::<std::net::IpAddr>().is_ok()
        || (!host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn props(pairs: &[(&str, &str)]) -> Properties {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn listener() -> Vec<Listener> {
        vec![Listener {
            name: "CONTROLLER".into(),
            host: "127.0.0.1".into(),
            port: 9093,
        }]
    }

    #[test]
    fn defaults_are_kafkas_except_the_memory_budget() {
        let c = parse(&props(&[]), &listener(), 100 << 20).unwrap();
        assert_eq!(c.max_connections, i32::MAX as usize);
        assert_eq!(c.max_connections_per_ip, i32::MAX as usize);
        assert_eq!(c.connections_max_idle_ms, Some(600_000));
        let never = parse(
            &props(&[("connections.max.idle.ms", "-1")]),
            &listener(),
            100,
        )
        .unwrap();
        assert_eq!(never.connections_max_idle_ms, None);
        assert_eq!(c.queued_max_request_bytes, Some(256 << 20));
        let big = parse(&props(&[]), &listener(), 300 << 20).unwrap();
        assert_eq!(big.queued_max_request_bytes, Some(300 << 20));
        let unbounded = parse(
            &props(&[("queued.max.request.bytes", "-1")]),
            &listener(),
            100,
        )
        .unwrap();
        assert_eq!(unbounded.queued_max_request_bytes, None);
    }

    #[test]
    fn listener_keys_and_overrides() {
        let c = parse(
            &props(&[
                ("listener.name.controller.max.connections", "7"),
                ("max.connections.per.ip", "0"),
                (
                    "max.connections.per.ip.overrides",
                    "127.0.0.2:3, localhost : 4,::1:5",
                ),
            ]),
            &listener(),
            100,
        )
        .unwrap();
        assert_eq!(c.listener_max_connections.get("CONTROLLER"), Some(&7));
        assert_eq!(
            c.max_connections_per_ip_overrides,
            vec![
                ("127.0.0.2".into(), 3),
                ("localhost".into(), 4),
                ("::1".into(), 5)
            ]
        );
        assert!(is_listener_key("listener.name.controller.max.connections"));
        assert!(!is_listener_key("listener.name..max.connections"));
    }

    #[test]
    fn kafkas_refusals() {
        let err = |pairs: &[(&str, &str)]| {
            parse(&props(pairs), &listener(), 100 << 20)
                .unwrap_err()
                .to_string()
        };
        assert!(err(&[("max.connections.per.ip", "0")])
            .contains("max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set."));
        assert!(err(&[("queued.max.request.bytes", "1000")]).contains(
            "queued.max.request.bytes must be larger or equal to socket.request.max.bytes"
        ));
        assert!(err(&[("max.connections.per.ip.overrides", "bad_host!:3")])
            .contains("contains invalid addresses : bad_host!"));
        assert!(err(&[("max.connections", "x")]).contains("max.connections"));
    }
}
