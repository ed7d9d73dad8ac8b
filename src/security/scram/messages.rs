//! The SCRAM message grammar (Kafka's `ScramMessages`, RFC 5802 section 7): the client's
//! first and final messages parsed strictly, and the server's first message.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;

use super::ScramFailure;

pub(super) fn invalid(message: String) -> ScramFailure {
    ScramFailure::Invalid(message)
}

/// `[\x01-\x7F]` without `excluded`, at least one character.
pub(super) fn all_in(s: &str, low: u8, excluded: &[u8]) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| (low..=0x7f).contains(&b) && !excluded.contains(&b))
}

/// RFC 5802's saslname: `=2C` and `=3D` are the only `=` allowed.
pub(super) fn is_sasl_name(s: &str) -> bool {
    let mut rest = s.as_bytes();
    if rest.is_empty() {
        return false;
    }
    while let Some((&b, tail)) = rest.split_first() {
        if b == b'=' {
            if !(tail.starts_with(b"2C") || tail.starts_with(b"3D")) {
                return false;
            }
            rest = &tail[2..];
        } else if (0x01..=0x7f).contains(&b) && b != b',' {
            rest = tail;
        } else {
            return false;
        }
    }
    true
}

pub(super) fn is_printable(s: &str) -> bool {
    all_in(s, 0x21, b",") && s.bytes().all(|b| b <= 0x7e)
}

/// Strict base64 with padding (the messages' BASE64), decoded.
pub(super) fn base64(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(4) {
        return None;
    }
    BASE64.decode(s).ok()
}

pub(super) fn is_extension(field: &str) -> bool {
    field.split_once('=').is_some_and(|(k, v)| {
        !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphabetic()) && all_in(v, 0x01, b",")
    })
}

/// A parsed client-first message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientFirst {
    /// `a=`, or empty.
    pub authorization_id: String,
    /// `n=`, escaped.
    pub sasl_name: String,
    /// `r=`.
    pub nonce: String,
    /// Extensions (`tokenauth=true`, …), in order.
    pub extensions: Vec<(String, String)>,
    /// The message without its gs2 header (for the auth message).
    pub bare: String,
}

impl ClientFirst {
    /// Parses with Kafka's pattern; an invalid one is a SaslException naming the message.
    pub fn parse(bytes: &[u8]) -> Result<Self, ScramFailure> {
        let message = String::from_utf8_lossy(bytes);
        let bad = || {
            invalid(format!(
                "Invalid SCRAM client first message format: {message}"
            ))
        };
        let mut fields = message.split(',');
        if fields.next() != Some("n") {
            return Err(bad());
        }
        let authorization_id = match fields.next() {
            Some("") => String::new(),
            Some(a) => match a.strip_prefix("a=") {
                Some(id) if is_sasl_name(id) => id.to_string(),
                _ => return Err(bad()),
            },
            None => return Err(bad()),
        };
        let rest: Vec<&str> = fields.collect();
        // An optional reserved `m=` field before the name.
        let rest = match rest.first() {
            Some(m) if m.starts_with("m=") && all_in(&m[2..], 0x01, b",") => &rest[1..],
            _ => &rest[..],
        };
        let (Some(n), Some(r)) = (rest.first(), rest.get(1)) else {
            return Err(bad());
        };
        let sasl_name = n
            .strip_prefix("n=")
            .filter(|s| is_sasl_name(s))
            .ok_or_else(bad)?;
        let nonce = r
            .strip_prefix("r=")
            .filter(|s| is_printable(s))
            .ok_or_else(bad)?;
        let mut extensions = Vec::new();
        for field in &rest[2..] {
            if !is_extension(field) {
                return Err(bad());
            }
            let (k, v) = field.split_once('=').unwrap_or_default();
            extensions.push((k.to_string(), v.to_string()));
        }
        Ok(Self {
            authorization_id,
            sasl_name: sasl_name.to_string(),
            nonce: nonce.to_string(),
            extensions,
            bare: rest.join(","),
        })
    }

    pub(super) fn token_authenticated(&self) -> bool {
        self.extensions
            .iter()
            .any(|(k, v)| k == "tokenauth" && v.eq_ignore_ascii_case("true"))
    }
}

/// A parsed client-final message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientFinal {
    /// `c=`, decoded.
    pub channel_binding: Vec<u8>,
    /// `r=`.
    pub nonce: String,
    /// `p=`, decoded.
    pub proof: Vec<u8>,
}

impl ClientFinal {
    /// Parses with Kafka's pattern.
    pub fn parse(bytes: &[u8]) -> Result<Self, ScramFailure> {
        let message = String::from_utf8_lossy(bytes);
        let bad = || {
            invalid(format!(
                "Invalid SCRAM client final message format: {message}"
            ))
        };
        let fields: Vec<&str> = message.split(',').collect();
        if fields.len() < 3 {
            return Err(bad());
        }
        let channel_binding = fields[0]
            .strip_prefix("c=")
            .and_then(base64)
            .ok_or_else(bad)?;
        let nonce = fields[1]
            .strip_prefix("r=")
            .filter(|s| is_printable(s))
            .ok_or_else(bad)?;
        let last = fields.len() - 1;
        if !fields[2..last].iter().all(|f| is_extension(f)) {
            return Err(bad());
        }
        let proof = fields[last]
            .strip_prefix("p=")
            .and_then(base64)
            .ok_or_else(bad)?;
        Ok(Self {
            channel_binding,
            nonce: nonce.to_string(),
            proof,
        })
    }

    /// What the auth message holds of it (Kafka's: `c=…,r=…`, extensions left out).
    pub(super) fn without_proof(&self) -> String {
        format!(
            "c={},r={}",
            BASE64.encode(&self.channel_binding),
            self.nonce
        )
    }
}

pub(super) fn server_first(nonce: &str, salt: &[u8], iterations: i32) -> String {
    format!("r={nonce},s={},i={iterations}", BASE64.encode(salt))
}
