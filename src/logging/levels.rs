//! The log levels of this node as Kafka's BROKER_LOGGER config resource shows them: a pure
//! model (no I/O, no global state) that the controller reads and changes, and that
//! [`super::apply`] turns into the process's tracing filter.
//!
//! ```text
//!   RUST_LOG (or "info") ─parse─▶ LogLevels { root, per-target levels, other directives }
//!     controller: describe (every logger, its effective level) / set / unset ─▶ new LogLevels
//!     driver: LogLevels::directives() ─▶ EnvFilter ─▶ reload of the global subscriber
//! ```
//!
//! The mapping to Kafka's log4j loggers: Kafka's loggers are its classes' log4j names plus
//! `root`; ferrokraft's are its tracing targets — the module paths of its source files
//! ([`super::loggers::FERROKRAFT_LOGGERS`]) and every target named in `RUST_LOG` at start —
//! named the log4j way, `.` for `::` (`ferrokraft.raft.fetch` is target
//! `ferrokraft::raft::fetch`; kafka-configs accepts only `[a-zA-Z0-9._-]` in a name), plus
//! `root`, the directive without a target. A logger's level applies to its target and
//! everything under it, as tracing's `EnvFilter` matches directives (the longest target that
//! the event's target starts with wins; `root` applies where none matches), which is log4j's
//! inheritance. Kafka's level names map to tracing's; FATAL keeps ERROR lines (tracing has no
//! FATAL, and ferrokraft logs the failures that stop it at ERROR); OFF shows when `RUST_LOG`
//! says `off`.

use std::collections::BTreeMap;
use std::fmt;

use super::loggers::FERROKRAFT_LOGGERS;

/// The root logger's name (Kafka's `LoggingController.ROOT_LOGGER`).
pub const ROOT_LOGGER: &str = "root";

/// A log level by Kafka's names (`LogLevelConfig`), plus OFF for `RUST_LOG=off`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// Nothing is logged.
    Off,
    /// Kafka's FATAL; in tracing, ERROR lines only.
    Fatal,
    /// Errors.
    Error,
    /// Warnings.
    Warn,
    /// Information (the default).
    Info,
    /// Debugging detail.
    Debug,
    /// Everything.
    Trace,
}

impl LogLevel {
    /// Kafka's name (`Level.toString()`).
    pub fn name(self) -> &'static str {
        match self {
            LogLevel::Off => "OFF",
            LogLevel::Fatal => "FATAL",
            LogLevel::Error => "ERROR",
            LogLevel::Warn => "WARN",
            LogLevel::Info => "INFO",
            LogLevel::Debug => "DEBUG",
            LogLevel::Trace => "TRACE",
        }
    }

    /// One of Kafka's `LogLevelConfig.VALID_LOG_LEVELS`, exactly as written (case matters, OFF
    /// is not one).
    pub fn from_kafka_name(name: &str) -> Option<LogLevel> {
        Some(match name {
            "FATAL" => LogLevel::Fatal,
            "ERROR" => LogLevel::Error,
            "WARN" => LogLevel::Warn,
            "INFO" => LogLevel::Info,
            "DEBUG" => LogLevel::Debug,
            "TRACE" => LogLevel::Trace,
            _ => return None,
        })
    }

    /// A level as tracing's `EnvFilter` reads one (any case, or 0–5).
    fn from_directive(s: &str) -> Option<LogLevel> {
        Some(match s.to_ascii_lowercase().as_str() {
            "off" | "0" => LogLevel::Off,
            "error" | "1" => LogLevel::Error,
            "warn" | "2" => LogLevel::Warn,
            "info" | "3" => LogLevel::Info,
            "debug" | "4" => LogLevel::Debug,
            "trace" | "5" => LogLevel::Trace,
            _ => return None,
        })
    }

    /// The level in an `EnvFilter` directive.
    fn directive(self) -> &'static str {
        match self {
            LogLevel::Off => "off",
            LogLevel::Fatal | LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Info => "info",
            LogLevel::Debug => "debug",
            LogLevel::Trace => "trace",
        }
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// This node's loggers and their levels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogLevels {
    /// The level where no target matches (`RUST_LOG`'s bare level; OFF when it has none, as
    /// `EnvFilter` disables what no directive matches).
    root: LogLevel,
    /// Levels set on targets (from `RUST_LOG` or BROKER_LOGGER changes).
    targets: BTreeMap<String, LogLevel>,
    /// `RUST_LOG` directives this model does not describe (span and field filters), kept as
    /// written.
    other: Vec<String>,
    /// Every logger that exists (besides `root`) by its name, with its target: ferrokraft's
    /// modules and the targets `RUST_LOG` named.
    known: BTreeMap<String, String>,
}

impl Default for LogLevels {
    /// ferrokraft's default, `info`.
    fn default() -> Self {
        Self::parse("info")
    }
}

/// The logger name of tracing target `target` (`::` becomes `.`, as in log4j names).
pub fn logger_name(target: &str) -> String {
    target.replace("::", ".")
}

impl LogLevels {
    /// The levels `directives` (tracing's `EnvFilter` syntax, e.g. `RUST_LOG`) set.
    pub fn parse(directives: &str) -> Self {
        let mut levels = LogLevels {
            root: LogLevel::Off,
            targets: BTreeMap::new(),
            other: Vec::new(),
            known: BTreeMap::new(),
        };
        for target in FERROKRAFT_LOGGERS {
            levels.know(target);
        }
        for d in split_directives(directives) {
            let d = d.trim();
            if d.is_empty() {
                continue;
            }
            if d.contains('[') {
                levels.other.push(d.to_string());
                continue;
            }
            match d.split_once('=') {
                Some((target, level)) => match LogLevel::from_directive(level.trim()) {
                    Some(level) if !target.trim().is_empty() => {
                        levels.know(target.trim());
                        levels.targets.insert(target.trim().to_string(), level);
                    }
                    _ => levels.other.push(d.to_string()),
                },
                None => match LogLevel::from_directive(d) {
                    Some(level) => levels.root = level,
                    // A bare target enables everything under it.
                    None => {
                        levels.know(d);
                        levels.targets.insert(d.to_string(), LogLevel::Trace);
                    }
                },
            }
        }
        levels
    }

    fn know(&mut self, target: &str) {
        self.known
            .entry(logger_name(target))
            .or_insert_with(|| target.to_string());
    }

    /// Whether logger `name` exists (Kafka's `LoggingController.loggerExists`).
    pub fn exists(&self, name: &str) -> bool {
        name == ROOT_LOGGER || self.known.contains_key(name)
    }

    /// The level logger `name` (which exists) filters its target's events at.
    pub fn effective(&self, name: &str) -> LogLevel {
        match self.known.get(name) {
            Some(target) if name != ROOT_LOGGER => self.target_level(target),
            _ => self.root,
        }
    }

    /// The level events of `target` are filtered at: the longest target set that `target`
    /// starts with, else the root level.
    pub fn target_level(&self, target: &str) -> LogLevel {
        self.targets
            .iter()
            .filter(|(t, _)| target.starts_with(t.as_str()))
            .max_by_key(|(t, _)| t.len())
            .map_or(self.root, |(_, l)| *l)
    }

    /// Every logger with its effective level, by name (Kafka's `LoggingController.loggers`).
    pub fn loggers(&self) -> Vec<(String, LogLevel)> {
        let mut out: Vec<(String, LogLevel)> = self
            .known
            .iter()
            .map(|(name, target)| (name.clone(), self.target_level(target)))
            .collect();
        out.push((ROOT_LOGGER.to_string(), self.root));
        out.sort();
        out
    }

    /// Sets logger `name` (which exists) to `level`.
    pub fn set(&mut self, name: &str, level: LogLevel) {
        if name == ROOT_LOGGER {
            self.root = level;
        } else if let Some(target) = self.known.get(name) {
            self.targets.insert(target.clone(), level);
        }
    }

    /// Unsets logger `name`: it inherits again. The root logger keeps its level (Kafka refuses
    /// to unset it before this is reached).
    pub fn unset(&mut self, name: &str) {
        if let Some(target) = self.known.get(name) {
            self.targets.remove(target);
        }
    }

    /// The `EnvFilter` directives for these levels: the root level, each target's, the rest
    /// as written.
    pub fn directives(&self) -> String {
        let mut parts = vec![self.root.directive().to_string()];
        parts.extend(
            self.targets
                .iter()
                .map(|(t, l)| format!("{t}={}", l.directive())),
        );
        parts.extend(self.other.iter().cloned());
        parts.join(",")
    }
}

/// `directives` split at the commas outside `[...]` and `{...}` (span field filters may hold
/// commas).
fn split_directives(directives: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in directives.char_indices() {
        match c {
            '[' | '{' => depth += 1,
            ']' | '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&directives[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&directives[start..]);
    out
}

/// One logger changed: set to a level, or unset (`None`: it inherits again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoggerChange {
    /// The logger.
    pub name: String,
    /// Its new level.
    pub level: Option<LogLevel>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_log_directives_become_levels() {
        let l =
            LogLevels::parse("warn,ferrokraft::raft=debug,kafka_protocol,x[span{a=1,b=2}]=trace");
        assert_eq!(l.effective(ROOT_LOGGER), LogLevel::Warn);
        assert_eq!(l.effective("ferrokraft.raft.fetch"), LogLevel::Debug);
        assert_eq!(l.target_level("ferrokraft::raft::fetch"), LogLevel::Debug);
        assert_eq!(l.effective("ferrokraft.controller"), LogLevel::Warn);
        assert_eq!(l.target_level("kafka_protocol::messages"), LogLevel::Trace);
        assert!(l.exists("kafka_protocol"));
        assert!(l.exists("ferrokraft.raft"));
        assert!(
            !l.exists("ferrokraft::raft"),
            "loggers are named the log4j way"
        );
        assert!(!l.exists("kafka_protocol.messages"));
        assert_eq!(
            l.directives(),
            "warn,ferrokraft::raft=debug,kafka_protocol=trace,x[span{a=1,b=2}]=trace"
        );
        // No bare level: what no directive matches is off, as EnvFilter has it.
        assert_eq!(
            LogLevels::parse("ferrokraft=info").effective("root"),
            LogLevel::Off
        );
        assert_eq!(LogLevels::parse("").effective("ferrokraft"), LogLevel::Off);
        assert_eq!(
            LogLevels::default().effective("ferrokraft.node"),
            LogLevel::Info
        );
    }

    #[test]
    fn set_and_unset_follow_the_target_hierarchy() {
        let mut l = LogLevels::default();
        l.set("ferrokraft.raft", LogLevel::Debug);
        l.set("ferrokraft.raft.fetch", LogLevel::Error);
        assert_eq!(l.effective("ferrokraft.raft.election"), LogLevel::Debug);
        assert_eq!(l.effective("ferrokraft.raft.fetch"), LogLevel::Error);
        l.unset("ferrokraft.raft.fetch");
        assert_eq!(l.effective("ferrokraft.raft.fetch"), LogLevel::Debug);
        l.set(ROOT_LOGGER, LogLevel::Fatal);
        assert_eq!(l.effective("ferrokraft.node"), LogLevel::Fatal);
        assert_eq!(l.directives(), "error,ferrokraft::raft=debug");
        let names: Vec<String> = l.loggers().into_iter().map(|(n, _)| n).collect();
        assert!(names.windows(2).all(|w| w[0] < w[1]), "sorted, once each");
        assert_eq!(names.last().map(String::as_str), Some(ROOT_LOGGER));
        assert!(names.iter().all(|n| n
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))));
    }

    #[test]
    fn kafka_level_names_are_exact() {
        assert_eq!(LogLevel::from_kafka_name("DEBUG"), Some(LogLevel::Debug));
        assert_eq!(LogLevel::from_kafka_name("debug"), None);
        assert_eq!(LogLevel::from_kafka_name("OFF"), None);
        assert_eq!(LogLevel::Fatal.name(), "FATAL");
    }
}
