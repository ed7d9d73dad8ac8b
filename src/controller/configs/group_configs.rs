//! The GROUP config check of every Kafka release's controller (`GroupConfig.validate`, which
//! `ControllerConfigurationValidator` runs on a GROUP resource's whole config after a change),
//! from one key table and a few per-release rules.
//!
//! ```text
//!   all ─▶ names known to the release? ─▶ tags unique? ─▶ parse each key (definition order:
//!       type, ConfigDef bound) ─▶ broker-level bounds (the release's order and wording)
//!       ─▶ assignor name ─▶ session > heartbeat ─▶ DLQ topic name
//! ```
//!
//! Each key carries the first release that defines it ([`KEYS`] is 4.4.0's definition order;
//! every older release's order is a subsequence of it). The broker-level bounds
//! ([`BROKER_BOUNDS`]) are the defaults of each release's `GroupCoordinatorConfig` and
//! `ShareGroupConfig` (equal in every release that has them); a controller's own `group.*`
//! settings are not read. What changes between releases besides the keys ([`Rules`]): which
//! keys are bounded (4.0–4.3: every key, unset ones with their default; 4.4: only those set),
//! how a bound refusal is worded (4.0–4.3 name the broker config, 4.4 gives the numbers), and
//! 4.0's wording of the `share.auto.offset.reset` refusal. The tag, assignor and DLQ checks
//! exist only for keys 4.4 added. Of several unknown keys, the one named is the first in the
//! order of the Java map the release checks (`group_configs_java_order`). Every refusal is
//! INVALID_CONFIG.
//!
//! The same table gives DescribeConfigs of a GROUP its keys per release ([`described`]).
//!
//! The facts come from each release's jars (`javap`, and `interop/java/GroupConfigOracle.java`
//! run on the cases of `tests/group_configs/`).

use std::collections::BTreeMap;

use super::group_configs_java_order as java_order;
use crate::common::release::Release;
use crate::controller::errors::{self, ApiError};

use Release::{Kafka4_0, Kafka4_1, Kafka4_2, Kafka4_3, Kafka4_4};

/// How a release's GroupConfig ConfigDef parses and checks a key.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// INT, at least the bound.
    Int(i64),
    /// LONG, at least the bound.
    Long(i64),
    Boolean,
    /// Free STRING (trimmed).
    Str,
    /// STRING, one of the values.
    OneOf(&'static [&'static str]),
    /// `share.auto.offset.reset`'s own validator.
    AutoOffsetReset,
    /// LIST whose items must not be empty.
    NonEmptyItems,
}

/// A GROUP config key: its ConfigDef type and lower bound, its default (the value an unset
/// key is bounded with where every key is, and the value DescribeConfigs shows for it), and
/// the first release that defines it.
#[derive(Debug, Clone, Copy)]
struct Key {
    name: &'static str,
    kind: Kind,
    default: &'static str,
    since: Release,
}

const fn key(name: &'static str, kind: Kind, default: &'static str, since: Release) -> Key {
    Key {
        name,
        kind,
        default,
        since,
    }
}

/// The broker config DescribeConfigs names as a key's synonym from 4.3 on (4.3.0's
/// `GroupConfig.ALL_GROUP_CONFIG_SYNONYMS`): `group.` and the key, but for the keys listed
/// here (`None`: no broker synonym).
const BROKER_SYNONYMS: &[(&str, Option<&str>)] = &[
    ("share.auto.offset.reset", None),
    ("share.isolation.level", None),
    ("share.renew.acknowledge.enable", None),
    (ASSIGNOR_NAME, Some("group.streams.assignors")),
    (DLQ_TOPIC_NAME, None),
    ("errors.deadletterqueue.copy.record.enable", None),
];

/// A GROUP key as DescribeConfigs lists it.
#[derive(Debug, Clone)]
pub(super) struct Described {
    pub name: &'static str,
    /// The value shown when the group sets none (the broker's, where a synonym names it).
    pub default: &'static str,
    /// `ConfigEntry.ConfigType` id.
    pub type_id: i8,
    /// The broker config named as its synonym (4.3 on).
    pub broker_synonym: Option<String>,
}

/// 4.4.0's internal GROUP keys (`ConfigDef.defineInternal`): checked, never described.
const INTERNAL: &[&str] = &[
    "consumer.assignor.offload.enable",
    "share.assignor.offload.enable",
    "streams.assignor.offload.enable",
    "streams.task.offset.interval.ms",
    "streams.num.warmup.replicas",
    "streams.acceptable.recovery.lag",
];

/// `release`'s GROUP keys by name, as its DescribeConfigs lists them.
pub(super) fn described(release: Release) -> Vec<Described> {
    let mut keys: Vec<Described> = KEYS
        .iter()
        .filter(|k| k.since <= release && !INTERNAL.contains(&k.name))
        .map(|k| Described {
            name: k.name,
            default: k.default,
            type_id: match k.kind {
                Kind::Boolean => 1,
                Kind::Str | Kind::OneOf(_) | Kind::AutoOffsetReset => 2,
                Kind::Int(_) => 3,
                Kind::Long(_) => 5,
                Kind::NonEmptyItems => 7,
            },
            broker_synonym: (release >= Kafka4_3)
                .then(
                    || match BROKER_SYNONYMS.iter().find(|(n, _)| *n == k.name) {
                        Some((_, named)) => named.map(str::to_string),
                        None => Some(format!("group.{}", k.name)),
                    },
                )
                .flatten(),
        })
        .collect();
    keys.sort_by_key(|k| k.name);
    keys
}

const RACK_AWARE_TAGS: &str = "streams.rack.aware.assignment.tags";
const ASSIGNOR_NAME: &str = "streams.assignor.name";
const DLQ_TOPIC_NAME: &str = "errors.deadletterqueue.topic.name";

/// Every GROUP key of 4.0.2 … 4.4.0 in 4.4.0's definition order: 6 in 4.0, 10 in 4.1, 11 in
/// 4.2, 17 in 4.3, 27 in 4.4. No key was removed in between.
const KEYS: &[Key] = &[
    key(
        "consumer.session.timeout.ms",
        Kind::Int(1),
        "45000",
        Kafka4_0,
    ),
    key(
        "consumer.heartbeat.interval.ms",
        Kind::Int(1),
        "5000",
        Kafka4_0,
    ),
    key(
        "consumer.assignment.interval.ms",
        Kind::Int(0),
        "1000",
        Kafka4_3,
    ),
    key(
        "consumer.assignor.offload.enable",
        Kind::Boolean,
        "true",
        Kafka4_4,
    ),
    key("share.session.timeout.ms", Kind::Int(1), "45000", Kafka4_0),
    key(
        "share.heartbeat.interval.ms",
        Kind::Int(1),
        "5000",
        Kafka4_0,
    ),
    key(
        "share.record.lock.duration.ms",
        Kind::Int(1_000),
        "30000",
        Kafka4_0,
    ),
    key("share.delivery.count.limit", Kind::Int(2), "5", Kafka4_3),
    key(
        "share.partition.max.record.locks",
        Kind::Int(100),
        "2000",
        Kafka4_3,
    ),
    key(
        "share.auto.offset.reset",
        Kind::AutoOffsetReset,
        "latest",
        Kafka4_0,
    ),
    key(
        "share.isolation.level",
        Kind::OneOf(&["read_committed", "read_uncommitted"]),
        "read_uncommitted",
        Kafka4_1,
    ),
    key(
        "share.renew.acknowledge.enable",
        Kind::Boolean,
        "true",
        Kafka4_3,
    ),
    key(
        "share.assignment.interval.ms",
        Kind::Int(0),
        "1000",
        Kafka4_3,
    ),
    key(
        "share.assignor.offload.enable",
        Kind::Boolean,
        "true",
        Kafka4_4,
    ),
    key(
        "streams.session.timeout.ms",
        Kind::Int(1),
        "45000",
        Kafka4_1,
    ),
    key(
        "streams.heartbeat.interval.ms",
        Kind::Int(1),
        "5000",
        Kafka4_1,
    ),
    key("streams.num.standby.replicas", Kind::Int(0), "0", Kafka4_1),
    key(
        "streams.initial.rebalance.delay.ms",
        Kind::Int(0),
        "3000",
        Kafka4_2,
    ),
    key(
        "streams.assignment.interval.ms",
        Kind::Int(0),
        "1000",
        Kafka4_3,
    ),
    key(
        "streams.assignor.offload.enable",
        Kind::Boolean,
        "true",
        Kafka4_4,
    ),
    key(
        "streams.task.offset.interval.ms",
        Kind::Int(1),
        "60000",
        Kafka4_4,
    ),
    key("streams.num.warmup.replicas", Kind::Int(0), "2", Kafka4_4),
    key(RACK_AWARE_TAGS, Kind::NonEmptyItems, "", Kafka4_4),
    key(
        "streams.acceptable.recovery.lag",
        Kind::Long(0),
        "10000",
        Kafka4_4,
    ),
    // ConfigDef default null; DescribeConfigs shows the broker's `group.streams.assignors`.
    key(ASSIGNOR_NAME, Kind::Str, "sticky", Kafka4_4),
    key(DLQ_TOPIC_NAME, Kind::Str, "", Kafka4_4),
    key(
        "errors.deadletterqueue.copy.record.enable",
        Kind::Boolean,
        "false",
        Kafka4_4,
    ),
];

/// The key `name` as `release` defines it.
fn known(release: Release, name: &str) -> Option<&'static Key> {
    KEYS.iter().find(|k| k.name == name && k.since <= release)
}

/// A bound the broker-level group config puts on a key.
#[derive(Debug, Clone, Copy)]
enum Bound {
    /// A minimum and a maximum, inclusive.
    Range(i64, i64),
    /// A maximum only.
    Max(i64),
    /// A minimum only.
    Min(i64),
}

/// A broker-level bound: the key, its bound, and the broker config that sets it with `%`
/// standing for `min`/`max` (how 4.0–4.3 word a refusal; `None` for keys only 4.4 has).
struct BrokerBound {
    key: &'static str,
    bound: Bound,
    broker: Option<&'static str>,
}

const fn bound(key: &'static str, bound: Bound, broker: Option<&'static str>) -> BrokerBound {
    BrokerBound { key, bound, broker }
}

/// `GroupConfig.validateValues`' bounds in the order every release checks them (a release
/// checks those of its keys), with the broker defaults.
const BROKER_BOUNDS: &[BrokerBound] = &[
    bound(
        "consumer.heartbeat.interval.ms",
        Bound::Range(5_000, 15_000),
        Some("group.consumer.%.heartbeat.interval.ms"),
    ),
    bound(
        "consumer.session.timeout.ms",
        Bound::Range(45_000, 60_000),
        Some("group.consumer.%.session.timeout.ms"),
    ),
    bound(
        "consumer.assignment.interval.ms",
        Bound::Range(0, 15_000),
        Some("group.consumer.%.assignment.interval.ms"),
    ),
    bound(
        "share.heartbeat.interval.ms",
        Bound::Range(5_000, 15_000),
        Some("group.share.%.heartbeat.interval.ms"),
    ),
    bound(
        "share.session.timeout.ms",
        Bound::Range(45_000, 60_000),
        Some("group.share.%.session.timeout.ms"),
    ),
    bound(
        "share.record.lock.duration.ms",
        Bound::Range(15_000, 60_000),
        Some("group.share.%.record.lock.duration.ms"),
    ),
    bound(
        "share.delivery.count.limit",
        Bound::Range(2, 10),
        Some("group.share.%.delivery.count.limit"),
    ),
    bound(
        "share.partition.max.record.locks",
        Bound::Range(100, 4_000),
        Some("group.share.%.partition.max.record.locks"),
    ),
    bound(
        "share.assignment.interval.ms",
        Bound::Range(0, 15_000),
        Some("group.share.%.assignment.interval.ms"),
    ),
    bound(
        "streams.heartbeat.interval.ms",
        Bound::Range(5_000, 15_000),
        Some("group.streams.%.heartbeat.interval.ms"),
    ),
    bound(
        "streams.session.timeout.ms",
        Bound::Range(45_000, 60_000),
        Some("group.streams.%.session.timeout.ms"),
    ),
    bound(
        "streams.num.standby.replicas",
        Bound::Max(2),
        Some("group.streams.%.standby.replicas"),
    ),
    bound(
        "streams.assignment.interval.ms",
        Bound::Range(0, 15_000),
        Some("group.streams.%.assignment.interval.ms"),
    ),
    bound("streams.task.offset.interval.ms", Bound::Min(15_000), None),
    bound("streams.num.warmup.replicas", Bound::Max(20), None),
];

/// `group.streams.assignors`' default: the task assignors a streams group may name.
const STREAMS_ASSIGNORS: &[&str] = &["sticky"];

/// What a release does differently besides its keys.
#[derive(Debug, Clone, Copy)]
struct Rules {
    /// Only the keys set are bounded (4.4); before, every key is, an unset one with its
    /// default (the broker's value of it in 4.3, equal by default).
    bounds_set_only: bool,
    /// A bound refusal gives the numbers (4.4) rather than naming the broker config.
    numeric_bound_messages: bool,
    /// How `share.auto.offset.reset`'s refusal writes the duration format (4.0's has a stray
    /// dot).
    duration_format: &'static str,
}

impl Rules {
    fn of(release: Release) -> Self {
        Self {
            bounds_set_only: release >= Kafka4_4,
            numeric_bound_messages: release >= Kafka4_4,
            duration_format: if release == Kafka4_0 {
                "<PnDTnHnMn.nS.>"
            } else {
                "<PnDTnHnMn.nS>"
            },
        }
    }
}

fn invalid(message: String) -> ApiError {
    ApiError::new(errors::INVALID_CONFIG, message)
}

/// Java's `trim().split("\\s*,\\s*", -1)`, empty for a blank value.
fn split_list(value: &str) -> Vec<&str> {
    let t = value.trim();
    if t.is_empty() {
        Vec::new()
    } else {
        t.split(',').map(str::trim).collect()
    }
}

/// Java's `Duration.parse` (ISO-8601 `PnDTnHnMn.nS`, letters in either case, each number
/// signed, a `,` or `.` before the fraction): the duration in nanoseconds, or `None` where
/// Java throws (including a sum past `long` seconds).
fn java_duration_nanos(text: &str) -> Option<i128> {
    let upper = text.to_ascii_uppercase();
    let (negate, rest) = match upper.as_bytes().first() {
        Some(b'-') => (true, &upper[1..]),
        Some(b'+') => (false, &upper[1..]),
        _ => (false, upper.as_str()),
    };
    let rest = rest.strip_prefix('P')?;
    let (date, time) = match rest.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (rest, None),
    };
    // A signed run of digits (Java's `[-+]?[0-9]+`), then the rest.
    fn number(s: &str) -> Option<(&str, &str)> {
        let sign = usize::from(s.starts_with(['+', '-']));
        let digits = s[sign..].bytes().take_while(u8::is_ascii_digit).count();
        (digits > 0).then(|| s.split_at(sign + digits))
    }
    let mut seen = false;
    let mut nanos: i128 = 0;
    let mut date = date;
    if !date.is_empty() {
        let (n, after) = number(date)?;
        date = after.strip_prefix('D')?;
        nanos += i128::from(n.parse::<i64>().ok()?) * 86_400 * 1_000_000_000;
        seen = true;
    }
    if !date.is_empty() {
        return None;
    }
    if let Some(mut time) = time {
        let mut time_seen = false;
        for (unit, seconds) in [('H', 3_600), ('M', 60)] {
            if let Some((n, after)) = number(time) {
                if let Some(after) = after.strip_prefix(unit) {
                    nanos += i128::from(n.parse::<i64>().ok()?) * seconds * 1_000_000_000;
                    time = after;
                    time_seen = true;
                }
            }
        }
        if !time.is_empty() {
            let (n, after) = number(time)?;
            let whole = n.parse::<i64>().ok()?;
            let (fraction, after) = match after.strip_prefix(['.', ',']) {
                Some(f) => {
                    let digits = f.bytes().take_while(u8::is_ascii_digit).count();
                    if digits > 9 {
                        return None;
                    }
                    f.split_at(digits)
                }
                None => ("", after),
            };
            if after != "S" {
                return None;
            }
            let mut frac: i128 = 0;
            for (i, d) in fraction.bytes().enumerate() {
                frac += i128::from(d - b'0') * 10_i128.pow(8 - u32::try_from(i).ok()?);
            }
            // The fraction takes the sign written on the seconds ("-0.5" is negative).
            if n.starts_with('-') {
                frac = -frac;
            }
            nanos += i128::from(whole) * 1_000_000_000 + frac;
            time_seen = true;
        }
        if !time_seen {
            return None;
        }
        seen = true;
    }
    if !seen {
        return None;
    }
    let nanos = if negate { -nanos } else { nanos };
    let seconds = nanos.div_euclid(1_000_000_000);
    i64::try_from(seconds).ok()?;
    Some(nanos)
}

/// `ShareGroupAutoOffsetResetStrategy.fromString`: `earliest`, `latest` or
/// `by_duration:<non-negative ISO-8601 duration>`, case-sensitive but for the duration.
fn auto_offset_reset_ok(value: &str) -> bool {
    match value {
        "earliest" | "latest" => true,
        _ => value
            .strip_prefix("by_duration:")
            .and_then(java_duration_nanos)
            .is_some_and(|n| n >= 0),
    }
}

/// A parsed value: the integers the bounds need, nothing for the other types. As in Kafka, a
/// value that does not parse is quoted as given, one a validator refuses as parsed.
fn parse(key: &str, kind: Kind, value: &str, rules: Rules) -> Result<Option<i64>, ApiError> {
    let refuse_as = |shown: &str, reason: &str| {
        invalid(format!(
            "Invalid value {shown} for configuration {key}: {reason}"
        ))
    };
    let refuse = |reason: &str| refuse_as(value, reason);
    let t = value.trim();
    let number = |n: Option<i64>, type_name: &str, min: i64| match n {
        None => Err(refuse(&format!("Not a number of type {type_name}"))),
        Some(n) if n < min => Err(refuse_as(
            &n.to_string(),
            &format!("Value must be at least {min}"),
        )),
        Some(n) => Ok(Some(n)),
    };
    match kind {
        Kind::Int(min) => number(t.parse::<i32>().ok().map(i64::from), "INT", min),
        Kind::Long(min) => number(t.parse::<i64>().ok(), "LONG", min),
        Kind::Boolean => {
            if t.eq_ignore_ascii_case("true") || t.eq_ignore_ascii_case("false") {
                Ok(None)
            } else {
                Err(refuse("Expected value to be either true or false"))
            }
        }
        Kind::Str => Ok(None),
        Kind::OneOf(values) => {
            if values.contains(&t) {
                Ok(None)
            } else {
                Err(refuse_as(
                    t,
                    &format!("String must be one of: {}", values.join(", ")),
                ))
            }
        }
        Kind::AutoOffsetReset => {
            if auto_offset_reset_ok(t) {
                Ok(None)
            } else {
                Err(refuse_as(
                    t,
                    &format!(
                        "Invalid value `{t}` for configuration {key}. The value must be either \
                         'earliest', 'latest' or of the format 'by_duration:{}'.",
                        rules.duration_format
                    ),
                ))
            }
        }
        Kind::NonEmptyItems => {
            if split_list(value).iter().any(|item| item.is_empty()) {
                Err(invalid(format!(
                    "Configuration '{key}' values must not be empty."
                )))
            } else {
                Ok(None)
            }
        }
    }
}

/// The refusal of `n` for `b`, worded as `rules` say, if `n` is outside the bound.
fn check_bound(b: &BrokerBound, n: i64, rules: Rules) -> Option<String> {
    let key = b.key;
    let (below, above) = match b.bound {
        Bound::Range(min, max) => (n < min, n > max),
        Bound::Max(max) => (false, n > max),
        Bound::Min(min) => (n < min, false),
    };
    if !below && !above {
        return None;
    }
    if rules.numeric_bound_messages || b.broker.is_none() {
        return Some(match b.bound {
            Bound::Range(min, max) => {
                format!("{key} must be in the range {min} to {max} inclusive.")
            }
            Bound::Max(max) => format!("{key} must be less than or equal to {max}"),
            Bound::Min(min) => format!("{key} must be greater than or equal to {min}"),
        });
    }
    let broker = b.broker.unwrap_or_default();
    Some(if below {
        format!(
            "{key} must be greater than or equal to {}",
            broker.replace('%', "min")
        )
    } else {
        format!(
            "{key} must be less than or equal to {}",
            broker.replace('%', "max")
        )
    })
}

/// `release`'s `GroupConfig.validate(all, groupCoordinatorConfig, shareGroupConfig)` with
/// Kafka's default broker-level group configs.
pub(super) fn validate(release: Release, all: &BTreeMap<String, String>) -> Result<(), ApiError> {
    let rules = Rules::of(release);
    if let Some(k) = java_order::first(release, all, |k| known(release, k).is_none()) {
        return Err(invalid(format!("Unknown group config name: {k}")));
    }
    // Before the values are parsed, on the raw text (so `a,,a` is a duplicate, not an empty
    // item).
    if let Some(tags) = all.get(RACK_AWARE_TAGS) {
        let items = split_list(tags);
        let mut unique = items.clone();
        unique.sort_unstable();
        unique.dedup();
        if unique.len() != items.len() {
            return Err(invalid(format!(
                "{RACK_AWARE_TAGS} must not contain duplicate tag keys."
            )));
        }
    }
    // ConfigDef.parse: every key of the release in definition order, an unset one with its
    // default (which always parses).
    let mut ints: BTreeMap<&str, i64> = BTreeMap::new();
    let mut set: BTreeMap<&str, bool> = BTreeMap::new();
    for k in KEYS.iter().filter(|k| k.since <= release) {
        let given = all.get(k.name);
        if let Some(n) = parse(
            k.name,
            k.kind,
            given.map_or(k.default, String::as_str),
            rules,
        )? {
            ints.insert(k.name, n);
        }
        set.insert(k.name, given.is_some());
    }
    for b in BROKER_BOUNDS {
        let Some(&n) = ints.get(b.key) else {
            continue;
        };
        if rules.bounds_set_only && !set.get(b.key).copied().unwrap_or(false) {
            continue;
        }
        if let Some(message) = check_bound(b, n, rules) {
            return Err(invalid(message));
        }
    }
    if let Some(name) = all.get(ASSIGNOR_NAME) {
        let name = name.trim();
        if !STREAMS_ASSIGNORS.contains(&name) {
            return Err(invalid(format!(
                "{ASSIGNOR_NAME} '{name}' is not a registered task assignor. Registered \
                 assignors are: [{}].",
                STREAMS_ASSIGNORS.join(", ")
            )));
        }
    }
    for kind in ["consumer", "share", "streams"] {
        let session_key = format!("{kind}.session.timeout.ms");
        let heartbeat_key = format!("{kind}.heartbeat.interval.ms");
        let (Some(&session), Some(&heartbeat)) = (
            ints.get(session_key.as_str()),
            ints.get(heartbeat_key.as_str()),
        ) else {
            // The group type is not in this release.
            continue;
        };
        let either_set = set.get(session_key.as_str()).copied().unwrap_or(false)
            || set.get(heartbeat_key.as_str()).copied().unwrap_or(false);
        if rules.bounds_set_only && !either_set {
            continue;
        }
        // With the default bounds a pair inside them always passes; a controller with wider
        // bounds would reach this.
        if session <= heartbeat {
            return Err(invalid(format!(
                "{session_key} must be greater than {heartbeat_key}"
            )));
        }
    }
    if let Some(name) = all.get(DLQ_TOPIC_NAME) {
        let name = name.trim();
        if name.starts_with("__") {
            return Err(invalid(format!(
                "{DLQ_TOPIC_NAME}: DLQ topic name must not start with '__'"
            )));
        }
    }
    Ok(())
}
