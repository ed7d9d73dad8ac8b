//! `meta.properties`: the commit marker of a formatted directory.
//!
//! Kafka writes it with `java.util.Properties.store(writer, "")`, giving
//!
//! ```text
//! #
//! #Sun Nov 29 08:34:43 UTC 2026
//! node.id=1
//! directory.id=fIFoBanoy2NV4I5F4JiG8w
//! version=1
//! cluster.id=MkU3OEVBNTcwNTJENDM2Qk
//! ```
//!
//! The key order is the iteration order of Properties' internal ConcurrentHashMap on JDK 17
//! (checked against Kafka 4.1.2 on JDK 17); Kafka reads the file as Properties, so order and
//! comments do not matter to readers. The date line uses UTC here (Java uses the JVM zone).

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;

use uuid::Uuid;

use super::StorageError;
use crate::common::uuid::{parse_kafka_uuid, uuid_to_kafka_string};
use crate::durable::write_atomic;

/// File name in every formatted log directory.
pub const META_PROPERTIES_FILE: &str = "meta.properties";

/// The KRaft (version 1) contents of meta.properties.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaProperties {
    /// `cluster.id`.
    pub cluster_id: String,
    /// `node.id`.
    pub node_id: i32,
    /// `directory.id` (always written by the formatter; optional on read as in Kafka).
    pub directory_id: Option<Uuid>,
}

impl MetaProperties {
    /// The file text; `now_unix_ms` goes into the date comment line.
    pub fn to_file_text(&self, now_unix_ms: i64) -> String {
        let mut out = String::from("#\n#");
        out.push_str(&java_date_string_utc(now_unix_ms));
        out.push('\n');
        let mut put = |k: &str, v: &str| {
            out.push_str(&escape_property(k, true));
            out.push('=');
            out.push_str(&escape_property(v, false));
            out.push('\n');
        };
        put("node.id", &self.node_id.to_string());
        if let Some(d) = &self.directory_id {
            put("directory.id", &uuid_to_kafka_string(d));
        }
        put("version", "1");
        put("cluster.id", &self.cluster_id);
        out
    }

    /// Parses the properties as Kafka's `MetaProperties` does for version 1.
    pub fn from_properties(props: &BTreeMap<String, String>) -> Result<Self, String> {
        let version = props.get("version").map(String::as_str).unwrap_or("0");
        match version.trim() {
            "1" => {}
            "0" => {
                return Err(
                    "version=0 (ZooKeeper-era meta.properties) is not a KRaft directory".into(),
                )
            }
            other => return Err(format!("unknown meta.properties version {other:?}")),
        }
        let cluster_id = props.get("cluster.id").ok_or("missing cluster.id")?.clone();
        let node_id = props
            .get("node.id")
            .ok_or("missing node.id")?
            .trim()
            .parse::<i32>()
            .map_err(|e| format!("node.id: {e}"))?;
        let directory_id = match props.get("directory.id") {
            None => None,
            Some(s) => Some(parse_kafka_uuid(s).map_err(|e| format!("directory.id: {e}"))?),
        };
        Ok(MetaProperties {
            cluster_id,
            node_id,
            directory_id,
        })
    }

    /// Reads `<dir>/meta.properties`; `Ok(None)` when absent (an unformatted directory).
    pub fn read(dir: &Path) -> Result<Option<Self>, StorageError> {
        let path = dir.join(META_PROPERTIES_FILE);
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StorageError::io(&path, e)),
        };
        Self::from_properties(&parse_properties(&text))
            .map(Some)
            .map_err(|reason| StorageError::Malformed { path, reason })
    }

    /// Durably writes `<dir>/meta.properties` (tmp, fsync, rename, dir fsync).
    pub fn write(&self, dir: &Path, now_unix_ms: i64) -> Result<(), StorageError> {
        let path = dir.join(META_PROPERTIES_FILE);
        write_atomic(&path, self.to_file_text(now_unix_ms).as_bytes(), true)
            .map_err(|e| StorageError::io(&path, e))
    }
}

/// Escapes as `Properties.saveConvert` does (without unicode escapes: `store(Writer)`).
fn escape_property(s: &str, is_key: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.chars().enumerate() {
        match c {
            ' ' if i == 0 || is_key => out.push_str("\\ "),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\x0c' => out.push_str("\\f"),
            '\\' | '=' | ':' | '#' | '!' => {
                out.push('\\');
                out.push(c);
            }
            _ => out.push(c),
        }
    }
    out
}

/// Parses Java properties text: comments (`#`, `!`), `=`/`:`/whitespace separators, backslash
/// escapes and line continuations.
pub fn parse_properties(text: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    let mut lines = text.lines();
    while let Some(first) = lines.next() {
        let trimmed = first.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with('!') {
            continue;
        }
        // Join continuation lines (an odd number of trailing backslashes).
        let mut logical = trimmed.to_string();
        while logical.chars().rev().take_while(|&c| c == '\\').count() % 2 == 1 {
            logical.pop();
            match lines.next() {
                Some(next) => logical.push_str(next.trim_start()),
                None => break,
            }
        }
        let chars: Vec<char> = logical.chars().collect();
        let mut i = 0;
        let mut key = String::new();
        while i < chars.len() {
            let c = chars[i];
            if c == '\\' && i + 1 < chars.len() {
                key.push(unescape(chars[i + 1]));
                i += 2;
                continue;
            }
            if c == '=' || c == ':' || c.is_whitespace() {
                break;
            }
            key.push(c);
            i += 1;
        }
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        if i < chars.len() && (chars[i] == '=' || chars[i] == ':') {
            i += 1;
        }
        while i < chars.len() && chars[i].is_whitespace() {
            i += 1;
        }
        let mut value = String::new();
        while i < chars.len() {
            if chars[i] == '\\' && i + 1 < chars.len() {
                if chars[i + 1] == 'u' && i + 6 <= chars.len() {
                    let hex: String = chars[i + 2..i + 6].iter().collect();
                    if let Some(ch) = u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                        value.push(ch);
                        i += 6;
                        continue;
                    }
                }
                value.push(unescape(chars[i + 1]));
                i += 2;
            } else {
                value.push(chars[i]);
                i += 1;
            }
        }
        map.insert(key, value);
    }
    map
}

fn unescape(c: char) -> char {
    match c {
        't' => '\t',
        'n' => '\n',
        'r' => '\r',
        'f' => '\x0c',
        other => other,
    }
}

/// `java.util.Date.toString()` in UTC: `EEE MMM dd HH:mm:ss zzz yyyy`.
pub fn java_date_string_utc(unix_ms: i64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = unix_ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    // Civil-from-days (proleptic Gregorian), after H. Hinnant.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} UTC {}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(m - 1) as usize],
        d,
        sod / 3600,
        sod % 3600 / 60,
        sod % 60,
        y
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn java_date_format() {
        // Time stamps of the Kafka 4.1.2 format run used for these tests.
        assert_eq!(
            java_date_string_utc(1_795_941_283_000),
            "Sun Nov 29 08:34:43 UTC 2026"
        );
        assert_eq!(java_date_string_utc(0), "Thu Jan 01 00:00:00 UTC 1970");
        assert_eq!(
            java_date_string_utc(951_782_400_000),
            "Tue Feb 29 00:00:00 UTC 2000"
        );
    }

    #[test]
    fn same_bytes_as_kafka_4_1_2() {
        let kafka = "#\n#Sun Nov 29 08:34:43 UTC 2026\nnode.id=1\ndirectory.id=fIFoBanoy2NV4I5F4JiG8w\nversion=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qk\n";
        let mp = MetaProperties::from_properties(&parse_properties(kafka)).unwrap();
        assert_eq!(mp.node_id, 1);
        assert_eq!(mp.to_file_text(1_795_941_283_000), kafka);
    }

    #[test]
    fn properties_parser() {
        let p = parse_properties("! c\n a = b\\\n   c\nk\\:x:v\\=w\nsp value\n");
        assert_eq!(p.get("a").unwrap(), "bc");
        assert_eq!(p.get("k:x").unwrap(), "v=w");
        assert_eq!(p.get("sp").unwrap(), "value");
        assert!(MetaProperties::from_properties(&parse_properties("broker.id=1\n")).is_err());
    }
}
