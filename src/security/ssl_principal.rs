//! The principal of an SSL client (Kafka's `DefaultKafkaPrincipalBuilder` for SSL): the
//! subject of the certificate it presented, written as Java's `X500Principal.getName()`
//! writes it (RFC 2253), then mapped by `ssl.principal.mapping.rules` (Kafka's
//! `SslPrincipalMapper`) to `User:<name>`. No certificate: `User:ANONYMOUS`.
//!
//! ```text
//!   client certificate DER ─▶ subject Name ─▶ RFC 2253 string (last RDN first, AVAs in DER
//!       order, known keywords CN/C/L/ST/O/OU/STREET/DC/UID, other attributes as OID=#hex,
//!       ,=+<>#;"\ escaped, leading and trailing spaces escaped)
//!     ─▶ rules in order: DEFAULT (the DN) | RULE:pattern/replacement/[LU] (a whole match,
//!        then Java's replaceAll) ─▶ the first that applies; none ─▶ the connection is refused
//! ```
//!
//! Rules are Java regular expressions run by the `regex` crate: the common syntax (classes,
//! groups, lazy quantifiers, named groups) behaves the same; a pattern it cannot compile
//! (look-around, back-references) is refused at start-up.

use der::{Decode, Encode, Tag};
use regex::Regex;
use x509_cert::name::Name;
use x509_cert::Certificate;

/// Kafka's default `ssl.principal.mapping.rules`.
pub const DEFAULT_RULES: &str = "DEFAULT";

/// The keywords Java's RFC 2253 form uses; any other attribute is written as its OID.
const KEYWORDS: &[(&str, &str)] = &[
    ("2.5.4.3", "CN"),
    ("2.5.4.6", "C"),
    ("2.5.4.7", "L"),
    ("2.5.4.8", "ST"),
    ("2.5.4.10", "O"),
    ("2.5.4.11", "OU"),
    ("2.5.4.9", "STREET"),
    ("0.9.2342.19200300.100.1.25", "DC"),
    ("0.9.2342.19200300.100.1.1", "UID"),
];

/// The characters Java escapes with a backslash anywhere in an RFC 2253 value.
const ESCAPED: &str = ",=+<>#;\"\\";

/// The subject of a DER certificate as Java's `X500Principal.getName()` writes it.
pub fn subject_rfc2253(cert_der: &[u8]) -> Result<String, String> {
    let cert = Certificate::from_der(cert_der).map_err(|e| format!("bad certificate: {e}"))?;
    Ok(name_rfc2253(&cert.tbs_certificate.subject))
}

/// A distinguished name in Java's RFC 2253 form: the RDNs last first, joined by commas; the
/// attributes of a multi-valued RDN in their DER order, joined by plus signs.
pub fn name_rfc2253(name: &Name) -> String {
    name.0
        .iter()
        .rev()
        .map(|rdn| {
            rdn.0
                .iter()
                .map(|ava| {
                    let oid = ava.oid.to_string();
                    match KEYWORDS.iter().find(|(o, _)| *o == oid) {
                        Some((_, keyword)) => match string_value(&ava.value) {
                            Some(text) => format!("{keyword}={}", escape(&text)),
                            None => format!("{keyword}={}", hex_value(&ava.value)),
                        },
                        None => format!("{oid}={}", hex_value(&ava.value)),
                    }
                })
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// The text of a DER string value (the directory string types), `None` for other types.
fn string_value(value: &der::Any) -> Option<String> {
    let bytes = value.value();
    match der::Tagged::tag(value) {
        Tag::Utf8String
        | Tag::PrintableString
        | Tag::Ia5String
        | Tag::TeletexString
        | Tag::VisibleString => String::from_utf8(bytes.to_vec()).ok(),
        Tag::BmpString => {
            let units: Vec<u16> = bytes
                .chunks_exact(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]))
                .collect();
            String::from_utf16(&units).ok()
        }
        _ => None,
    }
}

/// `#` and the value's whole DER encoding in lower-case hex.
fn hex_value(value: &der::Any) -> String {
    let der = value.to_der().unwrap_or_default();
    let hex: String = der.iter().map(|b| format!("{b:02x}")).collect();
    format!("#{hex}")
}

/// Java's RFC 2253 escaping: the special characters everywhere, spaces at either end.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if ESCAPED.contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    let chars: Vec<char> = out.chars().collect();
    let lead = chars
        .iter()
        .take_while(|c| **c == ' ' || **c == '\r')
        .count();
    let trail = chars
        .iter()
        .rev()
        .take_while(|c| **c == ' ' || **c == '\r')
        .count();
    if lead == 0 && trail == 0 {
        return out;
    }
    let mut escaped = String::with_capacity(out.len() + lead + trail);
    for (i, c) in chars.iter().enumerate() {
        if i < lead || i >= chars.len() - trail {
            escaped.push('\\');
        }
        escaped.push(*c);
    }
    escaped
}

/// One rule of `ssl.principal.mapping.rules`.
#[derive(Debug, Clone)]
enum Rule {
    /// `DEFAULT`: the DN itself.
    Default,
    /// `RULE:pattern/replacement/[LU]`.
    Replace {
        /// The pattern as written (Java's `replaceAll` finds every match of it).
        pattern: Regex,
        /// The pattern anchored at both ends (Java's `matches`).
        whole: Regex,
        replacement: String,
        lower: bool,
        upper: bool,
    },
}

/// Kafka's `SslPrincipalMapper`.
#[derive(Debug, Clone)]
pub struct SslPrincipalMapper {
    rules: Vec<Rule>,
}

/// Two mappers are equal when their rules read the same (patterns compare as written).
impl PartialEq for SslPrincipalMapper {
    fn eq(&self, other: &Self) -> bool {
        self.to_string() == other.to_string()
    }
}

impl Eq for SslPrincipalMapper {}

impl Default for SslPrincipalMapper {
    fn default() -> Self {
        Self {
            rules: vec![Rule::Default],
        }
    }
}

/// Kafka's rule grammar: `DEFAULT`, `RULE:pattern/replacement/[LU]…`, or anything (which
/// must then be empty).
const RULE_PATTERN: &str = r"(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)";

impl SslPrincipalMapper {
    /// Parses the rules as Kafka does: split on commas between rules, each rule matched whole;
    /// empty rules ignored.
    pub fn parse(rules: &str) -> Result<Self, String> {
        let splitter =
            Regex::new(&format!(r"\s*({RULE_PATTERN})\s*(,\s*|$)")).map_err(|e| e.to_string())?;
        let parser = Regex::new(&format!("^(?:{RULE_PATTERN})")).map_err(|e| e.to_string())?;
        let mut parsed = Vec::new();
        for found in splitter.captures_iter(rules.trim()) {
            let rule = found.get(1).map_or("", |m| m.as_str());
            let Some(m) = parser.captures(rule) else {
                return Err(format!("Invalid rule: {rule}"));
            };
            let end = m.get(0).map_or(0, |g| g.end());
            if end != rule.len() {
                return Err(format!(
                    "Invalid rule: `{rule}`, unmatched substring: `{}`",
                    &rule[end..]
                ));
            }
            if m.get(1).is_some() {
                parsed.push(Rule::Default);
            } else if let (Some(pattern), Some(replacement)) = (m.get(2), m.get(4)) {
                let flag = m.get(6).map_or("", |f| f.as_str());
                let compile = |p: &str| {
                    Regex::new(p).map_err(|e| {
                        format!("Invalid rule: {rule}: the pattern does not compile: {e}")
                    })
                };
                parsed.push(Rule::Replace {
                    pattern: compile(pattern.as_str())?,
                    whole: compile(&format!("^(?:{})$", pattern.as_str()))?,
                    replacement: replacement.as_str().to_string(),
                    lower: flag == "L",
                    upper: flag == "U",
                });
            }
        }
        Ok(Self { rules: parsed })
    }

    /// The principal name of `dn`: the first rule that applies; an error naming the DN when
    /// none does (Kafka's `NoMatchingRule`, which fails the connection).
    pub fn name(&self, dn: &str) -> Result<String, String> {
        for rule in &self.rules {
            match rule {
                Rule::Default => return Ok(dn.to_string()),
                Rule::Replace {
                    pattern,
                    whole,
                    replacement,
                    lower,
                    upper,
                } => {
                    if !whole.is_match(dn) {
                        continue;
                    }
                    let name = replace_all(pattern, dn, replacement)?;
                    return Ok(if *lower {
                        name.to_lowercase()
                    } else if *upper {
                        name.to_uppercase()
                    } else {
                        name
                    });
                }
            }
        }
        Err(format!("No rules apply to {dn}"))
    }
}

impl std::fmt::Display for SslPrincipalMapper {
    /// Kafka's `toString`: `SslPrincipalMapper(rules = [RULE:pattern/replacement/L, DEFAULT])`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rules: Vec<String> = self
            .rules
            .iter()
            .map(|r| match r {
                Rule::Default => "DEFAULT".to_string(),
                Rule::Replace {
                    pattern,
                    replacement,
                    lower,
                    upper,
                    ..
                } => {
                    let flag = if *lower {
                        "/L"
                    } else if *upper {
                        "/U"
                    } else {
                        ""
                    };
                    format!("RULE:{}/{replacement}{flag}", pattern.as_str())
                }
            })
            .collect();
        write!(f, "SslPrincipalMapper(rules = [{}])", rules.join(", "))
    }
}

/// Java's `String.replaceAll` with Kafka's treatment of back-references beyond the groups
/// (`$4` with three groups is the literal `$4`; `$12` with one group is group 1 then `2`).
fn replace_all(pattern: &Regex, text: &str, replacement: &str) -> Result<String, String> {
    let groups = pattern.captures_len() - 1;
    let mut out = String::new();
    let mut last = 0;
    for caps in pattern.captures_iter(text) {
        let Some(m) = caps.get(0) else { continue };
        out.push_str(&text[last..m.start()]);
        expand(&caps, groups, replacement, &mut out)?;
        last = m.end();
    }
    out.push_str(&text[last..]);
    Ok(out)
}

/// Java's `Matcher.appendReplacement` for one match.
fn expand(
    caps: &regex::Captures<'_>,
    groups: usize,
    replacement: &str,
    out: &mut String,
) -> Result<(), String> {
    let chars: Vec<char> = replacement.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' => {
                let Some(c) = chars.get(i + 1) else {
                    return Err("character to be escaped is missing".into());
                };
                out.push(*c);
                i += 2;
            }
            '$' => {
                i += 1;
                match chars.get(i) {
                    Some('{') => {
                        let close = chars[i..]
                            .iter()
                            .position(|c| *c == '}')
                            .ok_or("named capturing group is missing trailing '}'")?;
                        let name: String = chars[i + 1..i + close].iter().collect();
                        if let Some(g) = caps.name(&name) {
                            out.push_str(g.as_str());
                        }
                        i += close + 1;
                    }
                    Some(d) if d.is_ascii_digit() => {
                        let first = d.to_digit(10).unwrap_or(0) as usize;
                        // Kafka escapes a reference beyond the groups (after dropping trailing
                        // digits down to one that exists, or to a single digit).
                        if groups > 0 && first > groups {
                            out.push('$');
                            continue;
                        }
                        let mut number = first;
                        i += 1;
                        while let Some(next) = chars.get(i).and_then(|c| c.to_digit(10)) {
                            let longer = number * 10 + next as usize;
                            if longer > groups {
                                break;
                            }
                            number = longer;
                            i += 1;
                        }
                        if number > groups {
                            return Err(format!("No group {number}"));
                        }
                        if let Some(g) = caps.get(number) {
                            out.push_str(g.as_str());
                        }
                    }
                    _ => return Err("Illegal group reference".into()),
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
#[path = "ssl_principal_tests.rs"]
mod tests;
