//! `sasl.jaas.config` values, read as Kafka's `JaasConfig` reads them:
//! `<loginModuleClass> <controlFlag> (<optionName>=<optionValue>)*;`, tokenized the way
//! Java's `StreamTokenizer` does with Kafka's settings (words of letters, digits, `.`, `-`,
//! `_`, `$`; single or double quoted strings with escapes; `//` and `/* */` comments). A
//! value that is a bare number (`password=123`) has no string value in Java, so Kafka refuses
//! it, and so do we.

use std::collections::BTreeMap;

/// One login module of a JAAS configuration.
#[derive(Clone, PartialEq, Eq)]
pub struct JaasEntry {
    /// The login module class, e.g. `org.apache.kafka.common.security.plain.PlainLoginModule`.
    pub login_module: String,
    /// `required`, `requisite`, `sufficient` or `optional`, upper case.
    pub control_flag: String,
    /// Its options (passwords among them).
    pub options: BTreeMap<String, String>,
}

impl std::fmt::Debug for JaasEntry {
    // Options hold passwords (`password`, `user_<name>`): only their names are printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("JaasEntry")
            .field("login_module", &self.login_module)
            .field("control_flag", &self.control_flag)
            .field("options", &self.options.keys().collect::<Vec<_>>())
            .finish()
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    /// A word or a quoted string.
    Str(String),
    /// A number token (no string value in Java).
    Number,
    /// Any other single character.
    Char(char),
}

fn is_word_start(c: char) -> bool {
    c.is_ascii_alphabetic() || matches!(c, '_' | '$') || ('\u{a0}'..='\u{ff}').contains(&c)
}

// Inside a word, digits, `.` and `-` (numeric characters to StreamTokenizer) continue it.
fn is_word_part(c: char) -> bool {
    is_word_start(c) || c.is_ascii_digit() || matches!(c, '.' | '-')
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c <= ' ' {
            i += 1;
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' && chars[i] != '\r' {
                i += 1;
            }
        } else if c == '/' && chars.get(i + 1) == Some(&'*') {
            i += 2;
            while i < chars.len() && !(chars[i] == '*' && chars.get(i + 1) == Some(&'/')) {
                i += 1;
            }
            i += 2;
        } else if c == '/' {
            // StreamTokenizer's comment character: the rest of the line is skipped.
            while i < chars.len() && chars[i] != '\n' && chars[i] != '\r' {
                i += 1;
            }
        } else if c == '"' || c == '\'' {
            let (s, next) = quoted(&chars, i + 1, c);
            out.push(Token::Str(s));
            i = next;
        } else if c.is_ascii_digit()
            || c == '.'
            || (c == '-'
                && chars
                    .get(i + 1)
                    .is_some_and(|n| n.is_ascii_digit() || *n == '.'))
        {
            i += 1;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            out.push(Token::Number);
        } else if is_word_start(c) {
            let start = i;
            while i < chars.len() && is_word_part(chars[i]) {
                i += 1;
            }
            out.push(Token::Str(chars[start..i].iter().collect()));
        } else {
            out.push(Token::Char(c));
            i += 1;
        }
    }
    Ok(out)
}

/// A quoted string from `start` (after the quote) to the closing `quote` or the end of the
/// line, with Java's escapes (`\n`, `\t`, octal, and `\<c>` for any other character).
fn quoted(chars: &[char], start: usize, quote: char) -> (String, usize) {
    let mut s = String::new();
    let mut i = start;
    while i < chars.len() && chars[i] != quote && chars[i] != '\n' && chars[i] != '\r' {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            i += 1;
            let e = chars[i];
            match e {
                'a' => s.push('\u{7}'),
                'b' => s.push('\u{8}'),
                'f' => s.push('\u{c}'),
                'n' => s.push('\n'),
                'r' => s.push('\r'),
                't' => s.push('\t'),
                'v' => s.push('\u{b}'),
                '0'..='7' => {
                    let mut v = e.to_digit(8).unwrap_or(0);
                    let max_digits = if e <= '3' { 3 } else { 2 };
                    let mut n = 1;
                    while n < max_digits && i + 1 < chars.len() {
                        match chars[i + 1].to_digit(8) {
                            Some(d) => {
                                v = v * 8 + d;
                                i += 1;
                                n += 1;
                            }
                            None => break,
                        }
                    }
                    s.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                }
                other => s.push(other),
            }
        } else {
            s.push(c);
        }
        i += 1;
    }
    // Past the closing quote (a line end also ends the string in StreamTokenizer).
    (s, i + 1)
}

/// Parses a `sasl.jaas.config` value into its login modules, with Kafka's refusals.
pub fn parse(text: &str) -> Result<Vec<JaasEntry>, String> {
    let tokens = tokenize(text)?;
    let mut entries = Vec::new();
    let mut it = tokens.into_iter().peekable();
    while let Some(first) = it.next() {
        let login_module = match first {
            Token::Str(s) => s,
            // Java reads sval of a non-word token as null; Kafka then fails on the flag.
            _ => String::new(),
        };
        let control_flag = match it.next() {
            None => return Err("Login module control flag not specified in JAAS config".into()),
            Some(Token::Str(flag)) => match flag.to_ascii_uppercase().as_str() {
                f @ ("REQUIRED" | "REQUISITE" | "SUFFICIENT" | "OPTIONAL") => f.to_string(),
                _ => {
                    return Err(format!(
                        "Invalid login module control flag '{flag}' in JAAS config"
                    ))
                }
            },
            Some(_) => {
                return Err("Login module control flag is not available in the JAAS config".into())
            }
        };
        let mut options = BTreeMap::new();
        let mut terminated = false;
        while let Some(t) = it.next() {
            if t == Token::Char(';') {
                terminated = true;
                break;
            }
            let key = match t {
                Token::Str(k) => k,
                _ => "null".to_string(),
            };
            let value_missing = || format!("Value not specified for key '{key}' in JAAS config");
            if it.next() != Some(Token::Char('=')) {
                return Err(value_missing());
            }
            match it.next() {
                Some(Token::Str(v)) => {
                    options.insert(key, v);
                }
                _ => return Err(value_missing()),
            }
        }
        if !terminated {
            return Err("JAAS config entry not terminated by semi-colon".into());
        }
        entries.push(JaasEntry {
            login_module,
            control_flag,
            options,
        });
    }
    if entries.is_empty() {
        return Err("Login module not specified in JAAS config".into());
    }
    Ok(entries)
}

/// The one login module a listener's mechanism config must hold (Kafka's `JaasContext`).
pub fn parse_single(text: &str) -> Result<JaasEntry, String> {
    let mut entries = parse(text)?;
    if entries.len() != 1 {
        return Err(format!(
            "JAAS config property contains {} login modules, should be 1 module",
            entries.len()
        ));
    }
    Ok(entries.remove(0))
}
