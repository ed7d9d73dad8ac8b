//! DescribeConfigs of a BROKER resource as the presented release's controller answers it (`ConfigHelper`
//! over the node's `KafkaConfig` and `DynamicBrokerConfig`): this node's whole configuration,
//! or the cluster-wide dynamic defaults.
//!
//! ```text
//!   static properties (the file after --override; broker.id ⇄ node.id filled as Kafka does)
//!   image BROKER "" ─┐ kept as Kafka's fromPersistentProps keeps them (no static-only key,
//!   image BROKER id ─┘ no unprefixed security key, no per-broker key at cluster level)
//!        │ merged: static ◀ cluster default ◀ this node (a key replaces its synonyms)
//!        ▼
//!   keys: every ConfigDef key of the presented release that is not internal
//!         (broker_static_table.rs, generated from the jars of Kafka 4.0.2 … 4.4.0) ∪ every merged key (unknown keys too, as Kafka lists its originals)
//!   each: value (a ConfigDef key's parsed value printed back; others as given), type,
//!         sensitive (PASSWORD or no known type: value null), read-only (not dynamic),
//!         synonyms (this node's dynamic ▸ cluster default ▸ static ▸ default, per name,
//!         from the key's own name on), source (the first synonym's, else DEFAULT_CONFIG)
//! ```
//!
//! The resource `""` lists the kept cluster defaults only, with their synonyms at that level.
//! Not answered: documentation (Kafka's prose is not carried; `include_documentation` gets
//! null). Dynamic values that Kafka's type check would drop are kept.

use std::collections::BTreeMap;

use kafka_protocol::messages::describe_configs_response::{
    DescribeConfigsResourceResult, DescribeConfigsSynonym,
};
use kafka_protocol::protocol::StrBytes;

use super::broker_static_table::{CLUSTER_LEVEL_LISTENER, DYNAMIC_ONLY, KEYS, LISTENER_MECHANISM};
use crate::common::java::java_double_string;
use crate::common::release::Release;

/// A ConfigDef type (`ConfigDef.Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// BOOLEAN.
    Boolean,
    /// STRING.
    String,
    /// INT.
    Int,
    /// SHORT.
    Short,
    /// LONG.
    Long,
    /// DOUBLE.
    Double,
    /// LIST.
    List,
    /// CLASS.
    Class,
    /// PASSWORD.
    Password,
}

impl Kind {
    /// The response's ConfigType id.
    fn id(self) -> i8 {
        match self {
            Kind::Boolean => 1,
            Kind::String => 2,
            Kind::Int => 3,
            Kind::Short => 4,
            Kind::Long => 5,
            Kind::Double => 6,
            Kind::List => 7,
            Kind::Class => 8,
            Kind::Password => 9,
        }
    }
}

/// What Kafka's broker configuration says of a key besides its type and default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flags(u8);

impl Flags {
    /// No flag.
    pub const NONE: Flags = Flags(0);
    /// Internal (`defineInternal`): listed only when given.
    pub const INTERNAL: Flags = Flags(1);
    /// Dynamically updatable (`DynamicBrokerConfig.AllDynamicConfigs`): not read-only.
    pub const DYNAMIC: Flags = Flags(2);
    /// Per broker only: dropped from the cluster default.
    pub const PER_BROKER: Flags = Flags(4);
    /// A security config, dynamic only with a listener prefix.
    pub const SECURITY: Flags = Flags(8);
    /// Static only: a dynamic value of it is dropped.
    pub const NON_DYNAMIC: Flags = Flags(16);

    /// Both.
    pub const fn or(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }

    fn has(self, flag: Flags) -> bool {
        self.0 & flag.0 != 0
    }
}

/// The releases a generated row holds for: bit i is `Release::ALL[i]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Releases(pub u8);

impl Releases {
    /// Whether the row holds for `release`.
    pub const fn has(self, release: Release) -> bool {
        self.0 & (1 << release as u8) != 0
    }
}

/// One key of Kafka's broker ConfigDef.
#[derive(Debug)]
pub struct StaticKey {
    /// Its name.
    pub name: &'static str,
    /// Its type.
    pub kind: Kind,
    /// Its default as Kafka prints it; `None` for a null or required default.
    pub default: Option<&'static str>,
    /// What else Kafka says of it.
    pub flags: Flags,
    /// The releases whose ConfigDef defines it so.
    pub releases: Releases,
}

/// ConfigSource ids.
mod source {
    pub const DYNAMIC_BROKER_CONFIG: i8 = 2;
    pub const DYNAMIC_DEFAULT_BROKER_CONFIG: i8 = 3;
    pub const STATIC_BROKER_CONFIG: i8 = 4;
    pub const DEFAULT_CONFIG: i8 = 5;
}

/// `release`'s ConfigDef keys.
fn keys(release: Release) -> impl Iterator<Item = &'static StaticKey> {
    KEYS.iter().filter(move |k| k.releases.has(release))
}

/// `name`'s definition in `release`'s ConfigDef.
fn key(release: Release, name: &str) -> Option<&'static StaticKey> {
    // The rows of one name are adjacent (sorted by name): find the first, then the release's.
    let first = KEYS.partition_point(|k| k.name < name);
    KEYS.get(first..)?
        .iter()
        .take_while(|k| k.name == name)
        .find(|k| k.releases.has(release))
}

/// Whether `name` is in one of the generated name lists for `release`.
fn listed(list: &[(&str, Releases)], release: Release, name: &str) -> bool {
    list.iter().any(|(n, r)| *n == name && r.has(release))
}

/// `listener.name.<listener>.<base>` → base (Kafka's `ListenerConfigRegex`).
fn listener_base(name: &str) -> Option<&str> {
    let rest = name.strip_prefix("listener.name.")?;
    let (_, base) = rest.split_once('.')?;
    Some(base)
}

/// The names whose values stand for `name` (Kafka's `brokerConfigSynonyms`), most specific
/// first.
fn synonyms_of(release: Release, name: &str, match_listener_override: bool) -> Vec<String> {
    const ROLL: [&str; 2] = ["log.roll.ms", "log.roll.hours"];
    const JITTER: [&str; 2] = ["log.roll.jitter.ms", "log.roll.jitter.hours"];
    const RETENTION: [&str; 3] = [
        "log.retention.ms",
        "log.retention.minutes",
        "log.retention.hours",
    ];
    let group: Option<&[&str]> = if ROLL.contains(&name) {
        Some(&ROLL)
    } else if JITTER.contains(&name) {
        Some(&JITTER)
    } else if RETENTION.contains(&name) {
        Some(&RETENTION)
    } else if name == "log.flush.interval.ms" {
        Some(&["log.flush.interval.ms", "log.flush.scheduler.interval.ms"])
    } else {
        None
    };
    if let Some(group) = group {
        return group.iter().map(|s| s.to_string()).collect();
    }
    if match_listener_override {
        if let Some(base) = listener_base(name) {
            let base = LISTENER_MECHANISM
                .iter()
                .find(|(m, r)| r.has(release) && base.ends_with(*m))
                .map_or(base, |(m, _)| *m);
            return vec![name.to_string(), base.to_string()];
        }
    }
    vec![name.to_string()]
}

/// Kafka's `KafkaConfig.configType`: the key's type, a dynamic-only key's, else its
/// synonyms' (a listener-prefixed key has its base's).
fn kind_of(release: Release, name: &str) -> Option<Kind> {
    let exact = |n: &str| {
        key(release, n).map(|k| k.kind).or_else(|| {
            DYNAMIC_ONLY
                .iter()
                .find(|(d, _, r)| *d == n && r.has(release))
                .map(|(_, kind, _)| *kind)
        })
    };
    exact(name).or_else(|| {
        synonyms_of(release, name, true)
            .iter()
            .find_map(|n| key(release, n).map(|k| k.kind))
    })
}

/// A value as Kafka prints it back after parsing it as `kind` (`ConfigDef.parseType` then
/// `convertToString`); one that does not parse is shown as given.
fn printed(kind: Kind, raw: &str) -> String {
    let trimmed = raw.trim_matches(|c: char| c <= ' ');
    match kind {
        Kind::Boolean if trimmed.eq_ignore_ascii_case("true") => "true".to_string(),
        Kind::Boolean if trimmed.eq_ignore_ascii_case("false") => "false".to_string(),
        Kind::Int => trimmed
            .parse::<i32>()
            .map_or_else(|_| raw.to_string(), |v| v.to_string()),
        Kind::Short => trimmed
            .parse::<i16>()
            .map_or_else(|_| raw.to_string(), |v| v.to_string()),
        Kind::Long => trimmed
            .parse::<i64>()
            .map_or_else(|_| raw.to_string(), |v| v.to_string()),
        Kind::Double => trimmed
            .parse::<f64>()
            .map_or_else(|_| raw.to_string(), java_double_string),
        Kind::String | Kind::Class => trimmed.to_string(),
        Kind::List => {
            // Kafka splits on `\s*,\s*` keeping empty items (a split with limit -1).
            let java_space = |c: char| matches!(c, ' ' | '\t' | '\n' | '\x0B' | '\x0C' | '\r');
            trimmed
                .split(',')
                .map(|s| s.trim_matches(java_space))
                .collect::<Vec<_>>()
                .join(",")
        }
        _ => raw.to_string(),
    }
}

/// The dynamic configs Kafka keeps of one stored resource (`fromPersistentProps`).
fn kept(
    release: Release,
    stored: Option<&BTreeMap<String, String>>,
    per_broker: bool,
) -> BTreeMap<String, String> {
    stored
        .into_iter()
        .flatten()
        .filter(|(k, _)| {
            let flags = key(release, k).map_or(Flags::NONE, |d| d.flags);
            if flags.has(Flags::NON_DYNAMIC) || flags.has(Flags::SECURITY) {
                return false;
            }
            if per_broker {
                return true;
            }
            let listener_per_broker =
                listener_base(k).is_some_and(|b| !listed(CLUSTER_LEVEL_LISTENER, release, b));
            !flags.has(Flags::PER_BROKER) && !listener_per_broker
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// This node's configuration as Kafka's `DynamicBrokerConfig` holds it.
pub struct NodeConfigs<'a> {
    /// The release whose ConfigDef describes the keys.
    release: Release,
    /// The static properties (Kafka's originals).
    statics: BTreeMap<&'a str, &'a str>,
    /// This node's dynamic configs, kept.
    node: BTreeMap<String, String>,
    /// The cluster defaults, kept.
    cluster: BTreeMap<String, String>,
}

impl<'a> NodeConfigs<'a> {
    /// From the node's static properties and its and the cluster's stored dynamic configs, as
    /// `release`'s controller describes them.
    pub fn new(
        release: Release,
        properties: &'a BTreeMap<String, String>,
        node: Option<&BTreeMap<String, String>>,
        cluster: Option<&BTreeMap<String, String>>,
    ) -> Self {
        let mut statics: BTreeMap<&str, &str> = properties
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        // Kafka's `populateSynonyms`: broker.id and node.id stand for each other.
        match (statics.get("broker.id"), statics.get("node.id")) {
            (None, Some(id)) => {
                let id = *id;
                statics.insert("broker.id", id);
            }
            (Some(id), None) => {
                let id = *id;
                statics.insert("node.id", id);
            }
            _ => {}
        }
        NodeConfigs {
            release,
            statics,
            node: kept(release, node, true),
            cluster: kept(release, cluster, false),
        }
    }

    /// The merged originals: static, then the cluster defaults, then this node's, each key
    /// replacing its synonyms (Kafka's `overrideProps`).
    fn merged(&self) -> BTreeMap<String, String> {
        let mut out: BTreeMap<String, String> = self
            .statics
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        for layer in [&self.cluster, &self.node] {
            for (k, v) in layer {
                for s in synonyms_of(self.release, k, false) {
                    out.remove(&s);
                }
                out.insert(k.clone(), v.clone());
            }
        }
        out
    }

    /// Kafka's `configSynonyms`: per source, per synonym name, from `name` itself on.
    fn synonyms(
        &self,
        name: &str,
        sensitive: bool,
        per_broker: bool,
    ) -> Vec<(String, Option<String>, i8)> {
        let names = synonyms_of(self.release, name, true);
        let mut out = Vec::new();
        let lookup = |map: &dyn Fn(&str) -> Option<String>, src: i8, out: &mut Vec<_>| {
            for n in &names {
                if let Some(v) = map(n) {
                    out.push((n.clone(), (!sensitive).then_some(v), src));
                }
            }
        };
        lookup(
            &|n| self.node.get(n).cloned(),
            source::DYNAMIC_BROKER_CONFIG,
            &mut out,
        );
        lookup(
            &|n| self.cluster.get(n).cloned(),
            source::DYNAMIC_DEFAULT_BROKER_CONFIG,
            &mut out,
        );
        lookup(
            &|n| self.statics.get(n).map(|v| v.to_string()),
            source::STATIC_BROKER_CONFIG,
            &mut out,
        );
        lookup(
            &|n| {
                key(self.release, n)
                    .and_then(|k| k.default)
                    .map(str::to_string)
            },
            source::DEFAULT_CONFIG,
            &mut out,
        );
        let from = out
            .iter()
            .position(|(n, _, _)| n == name)
            .unwrap_or(out.len());
        out.drain(..from);
        if !per_broker {
            out.retain(|(_, _, src)| *src == source::DYNAMIC_DEFAULT_BROKER_CONFIG);
        }
        out
    }

    fn entry(
        &self,
        name: &str,
        value: Option<String>,
        per_broker: bool,
        include_synonyms: bool,
    ) -> DescribeConfigsResourceResult {
        let kind = kind_of(self.release, name);
        let sensitive = matches!(kind, None | Some(Kind::Password));
        let synonyms = self.synonyms(name, sensitive, per_broker);
        let config_source = synonyms
            .first()
            .map_or(source::DEFAULT_CONFIG, |(_, _, src)| *src);
        let read_only = !key(self.release, name).is_some_and(|k| k.flags.has(Flags::DYNAMIC));
        let synonyms = if include_synonyms {
            synonyms
                .into_iter()
                .map(|(n, v, src)| {
                    DescribeConfigsSynonym::default()
                        .with_name(StrBytes::from_string(n))
                        .with_value(v.map(StrBytes::from_string))
                        .with_source(src)
                })
                .collect()
        } else {
            Vec::new()
        };
        DescribeConfigsResourceResult::default()
            .with_name(StrBytes::from_string(name.to_string()))
            .with_value(if sensitive {
                None
            } else {
                value.map(StrBytes::from_string)
            })
            .with_read_only(read_only)
            .with_config_source(config_source)
            .with_is_sensitive(sensitive)
            .with_synonyms(synonyms)
            .with_config_type(kind.map_or(0, Kind::id))
            .with_documentation(None)
    }

    /// The node's own BROKER resource: every key Kafka's `allConfigs` lists, by name.
    pub fn describe_node(&self, include_synonyms: bool) -> Vec<DescribeConfigsResourceResult> {
        let merged = self.merged();
        let mut values: BTreeMap<&str, Option<String>> = BTreeMap::new();
        // The originals as given; then every ConfigDef key not internal, parsed.
        for (k, v) in &merged {
            values.insert(k.as_str(), Some(v.clone()));
        }
        for k in keys(self.release).filter(|k| !k.flags.has(Flags::INTERNAL)) {
            let value = match merged.get(k.name) {
                Some(raw) => Some(printed(k.kind, raw)),
                None => k.default.map(str::to_string),
            };
            values.insert(k.name, value);
        }
        values
            .into_iter()
            .map(|(k, v)| self.entry(k, v, true, include_synonyms))
            .collect()
    }

    /// The cluster-default BROKER resource (`""`): the kept cluster defaults, as stored.
    pub fn describe_cluster_default(
        &self,
        include_synonyms: bool,
    ) -> Vec<DescribeConfigsResourceResult> {
        self.cluster
            .iter()
            .map(|(k, v)| self.entry(k, Some(v.clone()), false, include_synonyms))
            .collect()
    }
}

#[cfg(test)]
#[path = "broker_static_tests.rs"]
mod tests;
