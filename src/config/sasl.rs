//! The SASL keys of SASL_PLAINTEXT and SASL_SSL controller listeners, and what this node
//! authenticates to its peers with.
//!
//! ```text
//!   listener.name.<l>.sasl.enabled.mechanisms else sasl.enabled.mechanisms ─▶ mechanisms
//!   listener.name.<l>.<mechanism>.sasl.jaas.config (one login module each) ─▶
//!       PLAIN: user_<name> options = the users this listener accepts
//!       sasl.mechanism.controller.protocol's module on the first listener: username/password
//!         this node sends its peers
//!   [listener.name.<l>.<mechanism>.]connections.max.reauth.ms ─▶ session lifetime
//! ```
//!
//! Key names and defaults are Kafka's (BrokerSecurityConfigs, SaslConfigs, KRaftConfigs).
//! GSSAPI and OAUTHBEARER are refused at start-up: ferrokraft serves PLAIN, SCRAM-SHA-256
//! and SCRAM-SHA-512. A JAAS file (`java.security.auth.login.config`) is a JVM system property
//! and is not read; give each mechanism its listener-prefixed `sasl.jaas.config`.

use std::collections::BTreeMap;

use super::properties::{get, invalid, list, ConfigError, Properties};
use crate::common::java::{java_hash_map_order, Built};
use crate::common::secret::Secret;
use crate::security::authenticator::SaslServerSettings;
use crate::security::client::SaslClientSettings;
use crate::security::jaas::{parse_single, JaasEntry};
use crate::security::SaslMechanism;

/// Kafka's PLAIN login module, whose `user_<name>` options PLAIN's server checks (Kafka's
/// callback handler reads the options of this class only).
pub const PLAIN_LOGIN_MODULE: &str = "org.apache.kafka.common.security.plain.PlainLoginModule";

/// `connection.failed.authentication.delay.ms`'s default.
pub const DEFAULT_FAILED_AUTHENTICATION_DELAY_MS: u64 = 100;

/// `sasl.server.max.receive.size`'s default (Kafka's `DEFAULT_SASL_SERVER_MAX_RECEIVE_SIZE`).
pub const DEFAULT_SASL_SERVER_MAX_RECEIVE_SIZE: usize = 524_288;

/// The global keys read here (each may also carry a listener prefix).
pub const SASL_KEYS: &[&str] = &[
    "sasl.enabled.mechanisms",
    "sasl.mechanism.controller.protocol",
    "connections.max.reauth.ms",
    "connection.failed.authentication.delay.ms",
    "sasl.server.max.receive.size",
];

/// Whether `key` is a listener- (and mechanism-) prefixed SASL key read here.
pub fn is_listener_sasl_key(key: &str) -> bool {
    let Some(rest) = key.strip_prefix("listener.name.") else {
        return false;
    };
    let Some((_, k)) = rest.split_once('.') else {
        return false;
    };
    if SASL_KEYS.contains(&k) {
        return true;
    }
    // <mechanism>.sasl.jaas.config and <mechanism>.connections.max.reauth.ms.
    k.split_once('.')
        .is_some_and(|(_, k)| k == "sasl.jaas.config" || k == "connections.max.reauth.ms")
}

pub use crate::common::security_protocol::SecurityProtocol;

/// One SASL listener's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaslListenerConfig {
    /// The listener (upper case).
    pub listener: String,
    /// The enabled mechanisms, in the order Kafka lists them in a SaslHandshake answer.
    pub enabled_mechanisms: Vec<SaslMechanism>,
    /// PLAIN's users.
    pub plain_users: BTreeMap<String, Secret>,
    /// `connections.max.reauth.ms` per mechanism.
    pub max_reauth_ms: BTreeMap<SaslMechanism, u64>,
    /// `connection.failed.authentication.delay.ms`.
    pub failed_authentication_delay_ms: u64,
    /// `sasl.server.max.receive.size`: the largest frame read before authentication.
    pub max_receive_size: usize,
}

impl SaslListenerConfig {
    /// What the connection authenticator needs.
    pub fn server_settings(&self, api_versions_max_version: i16) -> SaslServerSettings {
        SaslServerSettings {
            enabled_mechanisms: self.enabled_mechanisms.clone(),
            plain_users: self.plain_users.clone(),
            max_reauth_ms: self.max_reauth_ms.clone(),
            api_versions_max_version,
        }
    }
}

/// `listener.name.<l>.<key>`, else `<key>`.
fn listener_value<'a>(
    props: &'a Properties,
    listener: &str,
    key: &str,
) -> Option<(String, &'a str)> {
    let prefixed = format!("listener.name.{}.{key}", listener.to_ascii_lowercase());
    if let Some(v) = get(props, &prefixed) {
        return Some((prefixed, v));
    }
    get(props, key).map(|v| (key.to_string(), v))
}

fn jaas_key(listener: &str, mechanism: SaslMechanism) -> String {
    format!(
        "listener.name.{}.{}.sasl.jaas.config",
        listener.to_ascii_lowercase(),
        mechanism.name().to_ascii_lowercase()
    )
}

/// A mechanism name from a key's value, refused unless ferrokraft serves it.
fn mechanism(key: &str, value: &str, name: &str) -> Result<SaslMechanism, ConfigError> {
    SaslMechanism::from_name(name).ok_or_else(|| {
        invalid(
            key,
            value,
            format!(
                "SASL mechanism {name} is not supported by ferrokraft (PLAIN, SCRAM-SHA-256 and \
                 SCRAM-SHA-512 are; GSSAPI and OAUTHBEARER are not)"
            ),
        )
    })
}

/// The login module of `mechanism` on `listener` (Kafka requires one per enabled mechanism).
fn login_module(
    props: &Properties,
    listener: &str,
    mechanism: SaslMechanism,
) -> Result<JaasEntry, ConfigError> {
    let key = jaas_key(listener, mechanism);
    let Some(text) = get(props, &key) else {
        return Err(invalid(
            &key,
            "",
            format!(
                "listener {listener} enables SASL mechanism {mechanism} but no JAAS configuration \
                 is given for it (Kafka would look for a 'KafkaServer' entry of a JAAS file; \
                 ferrokraft reads only {key})"
            ),
        ));
    };
    // A PASSWORD-typed value: never echoed.
    parse_single(text).map_err(|reason| invalid(&key, "[hidden]", reason))
}

/// Parses a SASL listener's keys.
pub fn parse(props: &Properties, listener: &str) -> Result<SaslListenerConfig, ConfigError> {
    let (mech_key, mech_value) = listener_value(props, listener, "sasl.enabled.mechanisms").map_or(
        ("sasl.enabled.mechanisms".to_string(), "GSSAPI".to_string()),
        |(k, v)| (k, v.to_string()),
    );
    let mut names = list(&mech_value);
    if names.is_empty() {
        return Err(invalid(
            &mech_key,
            &mech_value,
            "No SASL mechanisms are enabled",
        ));
    }
    // Kafka lists `new ArrayList<>(new HashSet<>(enabledMechanisms))`: deduplicated, in the
    // set's iteration order (a table of 16 for up to 12 names).
    names.sort();
    names.dedup();
    java_hash_map_order(&mut names, Built::Default, |n| n.as_str());
    let mut enabled_mechanisms = Vec::new();
    let mut jaas = BTreeMap::new();
    let mut max_reauth_ms = BTreeMap::new();
    for name in &names {
        let m = mechanism(&mech_key, &mech_value, name)?;
        enabled_mechanisms.push(m);
        jaas.insert(m, login_module(props, listener, m)?);
        let mech_prefixed = format!(
            "{}.connections.max.reauth.ms",
            m.name().to_ascii_lowercase()
        );
        let reauth = match listener_value(props, listener, &mech_prefixed) {
            Some((k, v)) => v
                .parse::<i64>()
                .map_err(|_| invalid(&k, v, "not a valid number"))?,
            None => match listener_value(props, listener, "connections.max.reauth.ms") {
                Some((k, v)) => v
                    .parse::<i64>()
                    .map_err(|_| invalid(&k, v, "not a valid number"))?,
                None => 0,
            },
        };
        max_reauth_ms.insert(m, reauth.max(0) as u64);
    }
    let plain_users = jaas
        .get(&SaslMechanism::Plain)
        .filter(|e| e.login_module == PLAIN_LOGIN_MODULE)
        .map(|e| {
            e.options
                .iter()
                .filter_map(|(k, v)| {
                    Some((
                        k.strip_prefix("user_")?.to_string(),
                        Secret::from(v.as_str()),
                    ))
                })
                .collect()
        })
        .unwrap_or_default();
    let delay_key = "connection.failed.authentication.delay.ms";
    let failed_authentication_delay_ms = match listener_value(props, listener, delay_key) {
        Some((k, v)) => v
            .parse::<u64>()
            .map_err(|_| invalid(&k, v, "must be at least 0"))?,
        None => DEFAULT_FAILED_AUTHENTICATION_DELAY_MS,
    };
    // Kafka reads it from the listener's channel configs: the listener prefix wins.
    let max_receive_size = match listener_value(props, listener, "sasl.server.max.receive.size") {
        Some((k, v)) => v
            .parse::<usize>()
            .map_err(|_| invalid(&k, v, "not a valid number"))?,
        None => DEFAULT_SASL_SERVER_MAX_RECEIVE_SIZE,
    };
    Ok(SaslListenerConfig {
        listener: listener.to_string(),
        enabled_mechanisms,
        plain_users,
        max_reauth_ms,
        failed_authentication_delay_ms,
        max_receive_size,
    })
}

/// What this node sends its peers when the first controller listener is SASL:
/// `sasl.mechanism.controller.protocol` (default GSSAPI, refused) and that mechanism's login
/// module on the listener (Kafka's raft client uses the listener's server JAAS context).
pub fn parse_client(props: &Properties, listener: &str) -> Result<SaslClientSettings, ConfigError> {
    const KEY: &str = "sasl.mechanism.controller.protocol";
    let name = get(props, KEY).unwrap_or("GSSAPI");
    let m = mechanism(KEY, name, name)?;
    let entry = login_module(props, listener, m)?;
    let key = jaas_key(listener, m);
    let option = |o: &str| {
        entry.options.get(o).cloned().ok_or_else(|| {
            invalid(
                &key,
                "[hidden]",
                format!(
                    "the controller listener {listener} uses {m} to reach the other controllers \
                     ({KEY}), so its login module needs the '{o}' option"
                ),
            )
        })
    };
    Ok(SaslClientSettings {
        mechanism: m,
        username: option("username")?,
        password: Secret::from(option("password")?),
    })
}
