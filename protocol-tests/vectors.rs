//! The vector file: `LABEL... HEX` per line, `-` for no bytes, `#` comments.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use super::DEFAULT_KAFKA_VERSION;

pub(crate) fn kafka_version() -> String {
    std::env::var("KAFKA_VERSION")
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| DEFAULT_KAFKA_VERSION.to_string())
}

pub(crate) fn tests_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol-tests")
}

pub(crate) fn golden_path() -> PathBuf {
    tests_dir()
        .join("golden")
        .join(format!("kafka-{}.vectors", kafka_version()))
}

// ------------------------------------------------------------------------------------------
// The vector file: `LABEL... HEX` per line, `-` for no bytes, `#` comments.

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Label {
    /// `API_KEY VERSION request|response [null]`: every field non-default, or (`null`) every
    /// nullable field null, records empty, arrays of one element and tagged fields absent.
    Body {
        api_key: i16,
        version: i16,
        request: bool,
        nulls: bool,
    },
    RequestHeader {
        api_key: i16,
        version: i16,
        header_version: i16,
    },
    ResponseHeader {
        api_key: i16,
        version: i16,
        header_version: i16,
    },
    /// `control_record NAME TYPE VERSION [as_written]`: a KRaft control record value, every field
    /// non-default, or (`as_written`) with its `Version` field equal to the schema version.
    ControlRecord {
        name: String,
        type_id: i16,
        version: i16,
        as_written: bool,
    },
    Batch {
        name: String,
    },
    /// `metadata_record NAME API_KEY VERSION`: a metadata record value in its frame
    /// (`MetadataRecordSerde`), every field non-default.
    MetadataRecord {
        name: String,
        api_key: i16,
        version: i16,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct Vector {
    /// The label as written, e.g. `52 2 request`.
    pub(crate) text: String,
    pub(crate) label: Label,
    pub(crate) bytes: Vec<u8>,
}

pub(crate) fn parse_label(tokens: &[&str]) -> Result<Label, String> {
    let num = |i: usize| -> Result<i16, String> {
        tokens
            .get(i)
            .ok_or_else(|| format!("missing field {i}"))?
            .parse::<i16>()
            .map_err(|e| format!("field {i}: {e}"))
    };
    let label = match tokens.first().copied() {
        Some("request_header") if tokens.len() == 4 => Label::RequestHeader {
            api_key: num(1)?,
            version: num(2)?,
            header_version: num(3)?,
        },
        Some("response_header") if tokens.len() == 4 => Label::ResponseHeader {
            api_key: num(1)?,
            version: num(2)?,
            header_version: num(3)?,
        },
        Some("control_record") if tokens.len() == 4 || tokens.len() == 5 => Label::ControlRecord {
            name: tokens[1].to_string(),
            type_id: num(2)?,
            version: num(3)?,
            as_written: match tokens.get(4).copied() {
                None => false,
                Some("as_written") => true,
                Some(other) => return Err(format!("unknown control record variant {other}")),
            },
        },
        Some("metadata_record") if tokens.len() == 4 => Label::MetadataRecord {
            name: tokens[1].to_string(),
            api_key: num(2)?,
            version: num(3)?,
        },
        Some("batch") if tokens.len() == 2 => Label::Batch {
            name: tokens[1].to_string(),
        },
        Some(_) if tokens.len() == 3 || tokens.len() == 4 => Label::Body {
            api_key: num(0)?,
            version: num(1)?,
            request: match tokens[2] {
                "request" => true,
                "response" => false,
                other => return Err(format!("neither request nor response: {other}")),
            },
            nulls: match tokens.get(3).copied() {
                None => false,
                Some("null") => true,
                Some(other) => return Err(format!("unknown body variant {other}")),
            },
        },
        _ => return Err("unknown label".to_string()),
    };
    Ok(label)
}

pub(crate) fn parse_vectors(text: &str) -> Vec<Vector> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let (hex, label_tokens) = tokens.split_last().expect("non-empty line");
        let label = parse_label(label_tokens)
            .unwrap_or_else(|e| panic!("vector line {}: {e}: {line}", n + 1));
        let bytes = if *hex == "-" {
            Vec::new()
        } else {
            unhex(hex).unwrap_or_else(|e| panic!("vector line {}: {e}", n + 1))
        };
        out.push(Vector {
            text: label_tokens.join(" "),
            label,
            bytes,
        });
    }
    out
}

pub(crate) fn golden_vectors() -> Vec<Vector> {
    let path = golden_path();
    let text = fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e} (generate it: UPDATE_GOLDEN=1 cargo test --test protocol \
             oracle_generate_matches_golden)",
            path.display()
        )
    });
    let vectors = parse_vectors(&text);
    assert!(!vectors.is_empty(), "{} holds no vectors", path.display());
    vectors
}

pub(crate) fn unhex(s: &str) -> Result<Vec<u8>, String> {
    if !s.len().is_multiple_of(2) {
        return Err("odd number of hex digits".to_string());
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).map_err(|e| format!("bad hex: {e}")))
        .collect()
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "-".to_string();
    }
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Where two byte strings first differ, with a little context, for failure messages.
pub(crate) fn byte_diff(expected: &[u8], actual: &[u8]) -> String {
    let at = expected
        .iter()
        .zip(actual)
        .position(|(a, b)| a != b)
        .unwrap_or(expected.len().min(actual.len()));
    let from = at.saturating_sub(8);
    format!(
        "lengths {} vs {}, first difference at byte {at}: Kafka ..{}.. ours ..{}..",
        expected.len(),
        actual.len(),
        hex(&expected[from..(at + 16).min(expected.len())]),
        hex(&actual[from.min(actual.len())..(at + 16).min(actual.len())]),
    )
}
