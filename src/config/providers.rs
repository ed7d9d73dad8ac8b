//! Config providers: `${provider:[path:]key}` variables in `server.properties` resolved at
//! start, as Kafka 4.1.2's `AbstractConfig` resolves them for `KafkaConfig`.
//!
//! ```text
//!   raw map ─▶ config.providers = a,b ─▶ config.providers.<a>.class ─▶ ProviderClass
//!              (split on ',', no trim)    config.providers.<a>.param.* ─▶ configure ─▶ Provider
//!   raw map ─▶ every ${name:[path:]key} ─▶ per provider, per path: get(path, keys)
//!          ─▶ each variable replaced where the provider gave its key, else left as written
//!          ─▶ Resolved { props, which keys changed } ─▶ Config::from_properties
//! ```
//!
//! Kafka's rules kept: nothing is resolved unless `config.providers` is set; a name without a
//! `.class` key is skipped; a variable naming a provider that is not configured, or a key the
//! provider does not have, stays in the value word for word; a path outside `allowed.paths`
//! and a directory that is not one only warn (and so leave their variables unresolved); params
//! are read unresolved. Kafka 4.1.2 hands `KafkaConfig`'s own properties to the resolution as
//! the provider configuration, so the system property
//! `org.apache.kafka.automatic.config.providers` does not restrict `server.properties`; ferrokraft
//! has no system properties and offers exactly the classes of [`ProviderClass`]: any other class
//! is refused before anything is written. Resolved values are secrets: the error and log text
//! built here shows placeholders only, and [`Resolved::redact`] puts the placeholders back into
//! the errors of the checks that run on the resolved map.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use regex::Regex;

use super::kubernetes_secret::{self, KubernetesSecretProvider};
use super::properties::{invalid, ConfigError, Properties};

/// `config.providers`: the names of the providers to configure.
pub(super) const CONFIG_PROVIDERS: &str = "config.providers";

/// Kafka's `ConfigTransformer.DEFAULT_PATTERN`: `${provider:[path:]key}`, the path ending at the
/// first `:` after the provider's name and the key taking the rest.
const VARIABLE_PATTERN: &str = r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}";

/// The shortest resolved value searched for in error messages: a shorter one (a port, a node
/// id) would match unrelated text of the message, and is no secret.
const REDACT_MIN_LEN: usize = 4;

/// Whether `key` is one of the provider keys Kafka reads: `config.providers`,
/// `config.providers.<name>.class` and `config.providers.<name>.param.<param>`.
pub(super) fn is_provider_key(key: &str) -> bool {
    key == CONFIG_PROVIDERS
        || key
            .strip_prefix("config.providers.")
            .is_some_and(|rest| rest.ends_with(".class") || rest.contains(".param."))
}

/// The provider classes ferrokraft implements, by Java class name: Kafka's three and Strimzi's
/// two (a provider is a variant here, its class name in [`ProviderClass::class_name`] and its
/// configuration in [`ProviderClass::configure`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderClass {
    /// `org.apache.kafka.common.config.provider.FileConfigProvider`: a properties file at the
    /// path, looked up by key.
    File,
    /// `org.apache.kafka.common.config.provider.DirectoryConfigProvider`: one file per key in
    /// the directory at the path, its whole content the value.
    Directory,
    /// `org.apache.kafka.common.config.provider.EnvVarConfigProvider`: environment variables
    /// matching `allowlist.pattern`, no path.
    EnvVar,
    /// `io.strimzi.kafka.EnvVarConfigProvider` (Strimzi's, before Kafka had its own): every
    /// environment variable, no params, the path ignored.
    StrimziEnvVar,
    /// `io.strimzi.kafka.KubernetesSecretConfigProvider`: a Kubernetes Secret's data, the path
    /// `<namespace>/<secret>` (see [`super::kubernetes_secret`]).
    KubernetesSecret,
}

impl ProviderClass {
    /// Every class offered, in the order error messages list them.
    pub const ALL: &'static [ProviderClass] = &[
        Self::File,
        Self::Directory,
        Self::EnvVar,
        Self::StrimziEnvVar,
        Self::KubernetesSecret,
    ];

    /// The Java class name `config.providers.<name>.class` gives.
    pub fn class_name(self) -> &'static str {
        match self {
            Self::File => "org.apache.kafka.common.config.provider.FileConfigProvider",
            Self::Directory => "org.apache.kafka.common.config.provider.DirectoryConfigProvider",
            Self::EnvVar => "org.apache.kafka.common.config.provider.EnvVarConfigProvider",
            Self::StrimziEnvVar => "io.strimzi.kafka.EnvVarConfigProvider",
            Self::KubernetesSecret => kubernetes_secret::CLASS_NAME,
        }
    }

    /// The class of that exact name (Java's class lookup trims nothing either).
    pub fn from_class_name(name: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.class_name() == name)
    }

    /// The provider configured with its `param.*` values, as each class's `configure` does.
    fn configure(
        self,
        param_prefix: &str,
        params: &BTreeMap<String, String>,
        env: &BTreeMap<String, String>,
    ) -> Result<Provider, ConfigError> {
        Ok(match self {
            Self::File => Provider::File(AllowedPaths::new(
                params.get("allowed.paths").map(String::as_str),
            )?),
            Self::Directory => Provider::Directory(AllowedPaths::new(
                params.get("allowed.paths").map(String::as_str),
            )?),
            Self::EnvVar => {
                let pattern = match params.get("allowlist.pattern") {
                    Some(p) => p.as_str(),
                    None => {
                        tracing::info!("No pattern for environment variables provided. Using default pattern '(.*)'.");
                        ".*"
                    }
                };
                // Java's Matcher.matches(): the whole name must match.
                let re = Regex::new(&format!("^(?:{pattern})$")).map_err(|e| {
                    invalid(
                        &format!("{param_prefix}allowlist.pattern"),
                        pattern,
                        format!("not a valid regular expression: {e}"),
                    )
                })?;
                Provider::EnvVar(
                    env.iter()
                        .filter(|(k, _)| re.is_match(k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                )
            }
            Self::StrimziEnvVar => {
                tracing::info!("Configuring EnvVar config provider: {params:?}");
                Provider::StrimziEnvVar(env.clone())
            }
            Self::KubernetesSecret => {
                Provider::KubernetesSecret(KubernetesSecretProvider::configure(params, env))
            }
        })
    }
}

/// A configured provider.
enum Provider {
    File(AllowedPaths),
    Directory(AllowedPaths),
    /// The environment variables the allow-list lets through.
    EnvVar(BTreeMap<String, String>),
    /// The whole environment.
    StrimziEnvVar(BTreeMap<String, String>),
    KubernetesSecret(KubernetesSecretProvider),
}

impl Provider {
    /// The values of `keys` at `path` (those it has), as each class's `get(path, keys)`.
    fn get(
        &self,
        path: &str,
        keys: &BTreeSet<String>,
    ) -> Result<BTreeMap<String, String>, ConfigError> {
        match self {
            Self::File(allowed) => file_get(allowed, path, keys),
            Self::Directory(allowed) => directory_get(allowed, path, keys),
            Self::EnvVar(vars) => {
                if !path.is_empty() {
                    let message = format!(
                        "Path is not supported for EnvVarConfigProvider, invalid value '{path}'"
                    );
                    tracing::error!("{message}");
                    return Err(ConfigError::Message(message));
                }
                Ok(vars
                    .iter()
                    .filter(|(k, _)| keys.contains(*k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect())
            }
            Self::StrimziEnvVar(vars) => Ok(vars
                .iter()
                .filter(|(k, _)| keys.contains(*k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()),
            Self::KubernetesSecret(provider) => provider.get(path, keys),
        }
    }
}

/// FileConfigProvider: the file at `path` read as a UTF-8 properties file.
fn file_get(
    allowed: &AllowedPaths,
    path: &str,
    keys: &BTreeSet<String>,
) -> Result<BTreeMap<String, String>, ConfigError> {
    if path.is_empty() {
        return Ok(BTreeMap::new());
    }
    let Some(file) = allowed.parse_untrusted_path(path) else {
        tracing::warn!("The path {path} is not allowed to be accessed");
        return Ok(BTreeMap::new());
    };
    let failed = |reason: String| {
        // Kafka logs the cause and throws the bare message; the cause stays in the log.
        tracing::error!("Could not read properties from file {path}: {reason}");
        ConfigError::Message(format!("Could not read properties from file {path}"))
    };
    let bytes = std::fs::read(file.to_path_buf()).map_err(|e| failed(e.to_string()))?;
    // Kafka reads the file with a strict UTF-8 reader: a malformed byte fails the read.
    if std::str::from_utf8(&bytes).is_err() {
        return Err(failed("the file is not valid UTF-8".to_string()));
    }
    let mut all = BTreeMap::new();
    java_properties::PropertiesIter::new_with_encoding(bytes.as_slice(), encoding_rs::UTF_8)
        .read_into(|k, v| {
            all.insert(k, v);
        })
        .map_err(|e| failed(e.to_string()))?;
    Ok(all.into_iter().filter(|(k, _)| keys.contains(k)).collect())
}

/// DirectoryConfigProvider: each regular file (symbolic links followed) of the directory at
/// `path` named by a key; its whole content, untrimmed, is the value.
fn directory_get(
    allowed: &AllowedPaths,
    path: &str,
    keys: &BTreeSet<String>,
) -> Result<BTreeMap<String, String>, ConfigError> {
    let mut out = BTreeMap::new();
    if path.is_empty() {
        return Ok(out);
    }
    let Some(dir) = allowed.parse_untrusted_path(path) else {
        tracing::warn!("The path {path} is not allowed to be accessed");
        return Ok(out);
    };
    let dir_path = dir.to_path_buf();
    if !dir_path.is_dir() {
        tracing::warn!("The path {path} is not a directory");
        return Ok(out);
    }
    let list_failed = |e: std::io::Error| {
        tracing::error!("Could not list directory {dir}: {e}");
        ConfigError::Message(format!("Could not list directory {dir}"))
    };
    for entry in std::fs::read_dir(&dir_path).map_err(list_failed)? {
        let entry = entry.map_err(list_failed)?;
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        let file = entry.path();
        if !keys.contains(&name) || !file.is_file() {
            continue;
        }
        let shown = dir.to_path_buf().join(&name).display().to_string();
        let read = std::fs::read(&file)
            .map_err(|e| e.to_string())
            .and_then(|b| String::from_utf8(b).map_err(|_| "not valid UTF-8".to_string()));
        match read {
            Ok(value) => {
                out.insert(name, value);
            }
            Err(reason) => {
                tracing::error!("Could not read file {shown} for property {name}: {reason}");
                return Err(ConfigError::Message(format!(
                    "Could not read file {shown} for property {name}"
                )));
            }
        }
    }
    Ok(out)
}

/// A path as Java's `java.nio.file.Path` (Unix) sees it: absolute or not, its names (empty
/// names from repeated or trailing slashes dropped, as `Paths.get` does).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct JavaPath {
    absolute: bool,
    names: Vec<String>,
}

impl JavaPath {
    pub(super) fn parse(s: &str) -> Self {
        JavaPath {
            absolute: s.starts_with('/'),
            names: s
                .split('/')
                .filter(|n| !n.is_empty())
                .map(str::to_string)
                .collect(),
        }
    }

    /// `Path.normalize()`: `.` dropped, `name/..` removed, `..` at the root of an absolute
    /// path dropped. Lexical: symbolic links are not followed (nor are they by Kafka).
    pub(super) fn normalize(&self) -> Self {
        let mut names: Vec<String> = Vec::new();
        for n in &self.names {
            match n.as_str() {
                "." => {}
                ".." => match names.last().map(String::as_str) {
                    Some(last) if last != ".." => {
                        names.pop();
                    }
                    None if self.absolute => {}
                    _ => names.push(n.clone()),
                },
                _ => names.push(n.clone()),
            }
        }
        JavaPath {
            absolute: self.absolute,
            names,
        }
    }

    /// `Path.startsWith(Path)`: name by name.
    fn starts_with(&self, other: &JavaPath) -> bool {
        self.absolute == other.absolute
            && self.names.len() >= other.names.len()
            && self.names.iter().zip(&other.names).all(|(a, b)| a == b)
    }

    fn to_path_buf(&self) -> PathBuf {
        PathBuf::from(self.to_string())
    }
}

impl std::fmt::Display for JavaPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.absolute {
            f.write_str("/")?;
        }
        f.write_str(&self.names.join("/"))
    }
}

/// Kafka's `AllowedPaths`: the `allowed.paths` param of the file and directory providers.
pub(super) struct AllowedPaths(Option<Vec<JavaPath>>);

impl AllowedPaths {
    /// Unset or empty: every path. Else each comma-separated entry (untrimmed) normalised, and
    /// refused unless absolute and existing, with Kafka's messages.
    pub(super) fn new(value: Option<&str>) -> Result<Self, ConfigError> {
        let Some(value) = value.filter(|v| !v.is_empty()) else {
            return Ok(AllowedPaths(None));
        };
        let mut paths = Vec::new();
        for entry in java_split(value) {
            let normalised = JavaPath::parse(entry).normalize();
            if !normalised.absolute {
                return Err(ConfigError::Message(format!(
                    "Path {normalised} is not absolute"
                )));
            }
            if !Path::new(&normalised.to_string()).exists() {
                return Err(ConfigError::Message(format!(
                    "Path {normalised} does not exist"
                )));
            }
            paths.push(normalised);
        }
        Ok(AllowedPaths(Some(paths)))
    }

    /// `parseUntrustedPath`: the path (normalised when a list is set), or `None` when it lies
    /// outside every allowed path.
    pub(super) fn parse_untrusted_path(&self, path: &str) -> Option<JavaPath> {
        let parsed = JavaPath::parse(path);
        match &self.0 {
            None => Some(parsed),
            Some(allowed) => {
                let normalised = parsed.normalize();
                allowed
                    .iter()
                    .any(|a| normalised.starts_with(a))
                    .then_some(normalised)
            }
        }
    }
}

/// Java's `String.split(",")`: trailing empty strings removed (a leading one kept).
fn java_split(value: &str) -> Vec<&str> {
    let mut parts: Vec<&str> = value.split(',').collect();
    while parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    parts
}

/// The properties with their variables resolved, and what is needed to keep the resolved
/// values out of messages.
#[derive(Clone, PartialEq)]
pub struct Resolved {
    /// Every key, its value resolved where a provider gave one.
    pub props: Properties,
    /// The keys whose value changed, with the value as written.
    written: BTreeMap<String, String>,
    /// Every value a provider substituted, with its placeholder (longest value first).
    secrets: Vec<(String, String)>,
}

// Hand-written so that a `{:?}` never shows a resolved value.
impl std::fmt::Debug for Resolved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolved")
            .field("keys", &self.props.keys().collect::<Vec<_>>())
            .field("resolved", &self.written.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Resolved {
    /// The keys whose value came (in part) from a provider.
    pub fn resolved_keys(&self) -> impl Iterator<Item = &str> {
        self.written.keys().map(String::as_str)
    }

    /// `error` with every resolved value put back as written: an invalid value of a resolved
    /// key shows the value as written, any substituted value found in the text is replaced by
    /// its placeholder, and in the reason given for a resolved key each word of 4 letters or
    /// digits or more of its resolved value (a parser quotes the piece it refuses) is
    /// `[hidden]`.
    pub fn redact(&self, error: ConfigError) -> ConfigError {
        match error {
            ConfigError::Invalid { key, value, reason } => {
                let mut reason = self.redact_text(&reason);
                let value = match self.written.get(&key) {
                    Some(written) => {
                        if let Some(resolved) = self.props.get(&key) {
                            for word in resolved
                                .split(|c: char| !c.is_alphanumeric())
                                .filter(|w| w.chars().count() >= REDACT_MIN_LEN)
                            {
                                reason = reason.replace(word, "[hidden]");
                            }
                        }
                        written.clone()
                    }
                    None => value,
                };
                ConfigError::Invalid { key, value, reason }
            }
            ConfigError::Message(m) => ConfigError::Message(self.redact_text(&m)),
            ConfigError::Requirement(m) => ConfigError::Requirement(self.redact_text(&m)),
            other => other,
        }
    }

    fn redact_text(&self, text: &str) -> String {
        let mut text = text.to_string();
        for (secret, placeholder) in &self.secrets {
            text = text.replace(secret.as_str(), placeholder);
        }
        text
    }
}

/// One `${provider:[path:]key}` found in a value.
struct Variable<'a> {
    provider: &'a str,
    path: &'a str,
    key: &'a str,
}

fn variable<'a>(caps: &regex::Captures<'a>) -> Variable<'a> {
    let group = |i| caps.get(i).map_or("", |m| m.as_str());
    Variable {
        provider: group(1),
        path: group(3),
        key: group(4),
    }
}

/// Resolves `raw` with the process's environment for `EnvVarConfigProvider`.
pub fn resolve(raw: &Properties) -> Result<Resolved, ConfigError> {
    // Java's System.getenv() on Linux: names and values not valid UTF-8 are skipped here.
    let env: BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    resolve_with_env(raw, &env)
}

/// Resolves `raw`, `env` standing for the environment.
pub fn resolve_with_env(
    raw: &Properties,
    env: &BTreeMap<String, String>,
) -> Result<Resolved, ConfigError> {
    let unchanged = || Resolved {
        props: raw.clone(),
        written: BTreeMap::new(),
        secrets: Vec::new(),
    };
    let providers = instantiate(raw, env)?;
    if providers.is_empty() {
        return Ok(unchanged());
    }
    let pattern = Regex::new(VARIABLE_PATTERN)
        .map_err(|e| ConfigError::Message(format!("config variable pattern: {e}")))?;
    // Every (provider, path) → keys asked for, over all values (Kafka's keysByProvider).
    let mut wanted: BTreeMap<&str, BTreeMap<&str, BTreeSet<String>>> = BTreeMap::new();
    for value in raw.values() {
        for caps in pattern.captures_iter(value) {
            let v = variable(&caps);
            wanted
                .entry(v.provider)
                .or_default()
                .entry(v.path)
                .or_default()
                .insert(v.key.to_string());
        }
    }
    let mut lookups: BTreeMap<&str, BTreeMap<&str, BTreeMap<String, String>>> = BTreeMap::new();
    for (name, by_path) in &wanted {
        let Some(provider) = providers.get(*name) else {
            continue;
        };
        for (path, keys) in by_path {
            let data = provider.get(path, keys)?;
            lookups.entry(name).or_default().insert(path, data);
        }
    }
    let mut resolved = unchanged();
    let mut secrets: BTreeMap<String, String> = BTreeMap::new();
    for (key, value) in raw {
        let mut out = String::with_capacity(value.len());
        let mut at = 0;
        let mut changed = false;
        for caps in pattern.captures_iter(value) {
            let Some(whole) = caps.get(0) else { continue };
            let v = variable(&caps);
            // A provider not configured: its variable is left in the text after it.
            let Some(by_path) = lookups.get(v.provider) else {
                continue;
            };
            out.push_str(&value[at..whole.start()]);
            match by_path.get(v.path).and_then(|data| data.get(v.key)) {
                Some(replacement) => {
                    out.push_str(replacement);
                    changed = true;
                    if replacement.len() >= REDACT_MIN_LEN {
                        secrets
                            .entry(replacement.clone())
                            .or_insert_with(|| whole.as_str().to_string());
                    }
                }
                None => {
                    tracing::warn!(
                        "The configuration '{key}' keeps the variable {} unresolved: config provider '{}' has no key '{}' at path '{}'",
                        whole.as_str(),
                        v.provider,
                        v.key,
                        v.path
                    );
                    out.push_str(whole.as_str());
                }
            }
            at = whole.end();
        }
        out.push_str(&value[at..]);
        if changed {
            resolved.written.insert(key.clone(), value.clone());
            resolved.props.insert(key.clone(), out);
        }
    }
    let mut secrets: Vec<(String, String)> = secrets.into_iter().collect();
    secrets.sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
    resolved.secrets = secrets;
    Ok(resolved)
}

/// Kafka's `instantiateConfigProviders`: each name of `config.providers` with a `.class` key,
/// configured with its `.param.` keys. A class ferrokraft does not implement is refused with
/// Kafka's words for a class it cannot load, and the classes offered.
fn instantiate(
    raw: &Properties,
    env: &BTreeMap<String, String>,
) -> Result<BTreeMap<String, Provider>, ConfigError> {
    let mut providers = BTreeMap::new();
    let Some(names) = raw.get(CONFIG_PROVIDERS).filter(|v| !v.is_empty()) else {
        return Ok(providers);
    };
    for name in java_split(names) {
        if providers.contains_key(name) {
            continue;
        }
        let class_key = format!("{CONFIG_PROVIDERS}.{name}.class");
        let Some(class) = raw.get(&class_key) else {
            continue;
        };
        let Some(class) = ProviderClass::from_class_name(class) else {
            let offered: Vec<&str> = ProviderClass::ALL.iter().map(|c| c.class_name()).collect();
            return Err(invalid(
                &class_key,
                class,
                format!(
                    "Could not load config provider class or one of its dependencies (ferrokraft offers {})",
                    offered.join(", ")
                ),
            ));
        };
        let prefix = format!("{CONFIG_PROVIDERS}.{name}.param.");
        let params: BTreeMap<String, String> = raw
            .iter()
            .filter_map(|(k, v)| {
                let param = k.strip_prefix(&prefix)?;
                (!param.is_empty()).then(|| (param.to_string(), v.clone()))
            })
            .collect();
        providers.insert(name.to_string(), class.configure(&prefix, &params, env)?);
    }
    Ok(providers)
}
