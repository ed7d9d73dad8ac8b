//! The raw `server.properties` map, the error naming a key and its value, and the helpers
//! every area's parser reads values with (Kafka's list syntax, numbers, booleans).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

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
    /// Kafka's `ConfigException` with a message of its own (no key/value form).
    #[error("{0}")]
    Message(String),
    /// A rule between keys that Kafka's `KafkaConfig` enforces with Scala's `require` (its
    /// message: `requirement failed: …`).
    #[error("requirement failed: {0}")]
    Requirement(String),
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

pub(super) fn invalid(key: &str, value: &str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        key: key.to_string(),
        value: value.to_string(),
        reason: reason.into(),
    }
}

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
pub(super) fn list(value: &str) -> Vec<String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect()
}

pub(super) fn get<'a>(props: &'a Properties, key: &str) -> Option<&'a str> {
    props.get(key).map(|v| v.trim())
}

pub(super) fn parse_num<T: std::str::FromStr>(
    props: &Properties,
    key: &str,
    default: T,
) -> Result<T, ConfigError> {
    match get(props, key) {
        None => Ok(default),
        Some(v) => v.parse().map_err(|_| invalid(key, v, "not a valid number")),
    }
}

/// A number with Kafka's `atLeast(1)` bound.
pub(super) fn positive<T: std::str::FromStr + PartialOrd + From<u8>>(
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

pub(super) fn parse_bool(
    props: &Properties,
    key: &str,
    default: bool,
) -> Result<bool, ConfigError> {
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
