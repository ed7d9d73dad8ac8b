//! Event and span fields as tracing's default formatter writes them (`message` bare, others
//! `name=value`), with its terminal-injection escaping of the message. The message is
//! formatted whole into a reused buffer and escaped in one scan into the line: the default
//! escapes through one `write_char` per character, which made a third of the controller's
//! replay time while it logged a line per replayed PartitionRecord (#41), and escaping each
//! formatted piece on its way cost another part.

use std::fmt::{self, Write};

use tracing::field::{Field, Visit};
use tracing_subscriber::field::{MakeVisitor, VisitFmt, VisitOutput};
use tracing_subscriber::fmt::format::Writer;

/// The fields formatter installed with [`super::KafkaFormat`].
#[derive(Debug, Default, Clone, Copy)]
pub struct KafkaFields;

impl<'a> MakeVisitor<Writer<'a>> for KafkaFields {
    type Visitor = FieldsVisitor<'a>;

    fn make_visitor(&self, target: Writer<'a>) -> Self::Visitor {
        FieldsVisitor {
            writer: target,
            is_empty: true,
            result: Ok(()),
        }
    }
}

/// Writes one event's (or span's) fields.
pub struct FieldsVisitor<'a> {
    writer: Writer<'a>,
    is_empty: bool,
    result: fmt::Result,
}

/// Escapes what is written through it into the writer beneath. A write is whole
/// characters, and each escape is one character, so escaping each write escapes the whole.
struct Escaping<'w, W: Write>(&'w mut W);

impl<W: Write> Write for Escaping<'_, W> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        write_escaped(self.0, s)
    }
}

/// What tracing-subscriber's escaping writes for `c`, if it is escaped: the C0 controls a
/// terminal sequence can start or ring with, DEL, and the C1 controls.
fn escaped(c: char) -> Option<String> {
    match c {
        '\x1b' | '\x07' | '\x08' | '\x0c' | '\x7f' => Some(format!("\\x{:02x}", c as u32)),
        c if ('\u{80}'..='\u{9f}').contains(&c) => Some(format!("\\u{{{:x}}}", c as u32)),
        _ => None,
    }
}

/// `s` with those characters escaped, each run between them written whole. Every one of
/// them starts with a byte that nothing else in a message starts with (the ASCII controls
/// themselves, or 0xC2, the lead byte of U+0080..U+00BF), so the scan is over bytes.
pub fn write_escaped(out: &mut impl Write, s: &str) -> fmt::Result {
    let bytes = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while let Some(at) = first_candidate(&bytes[i..]) {
        i += at;
        // A char boundary: each candidate byte is ASCII or a lead byte.
        let c = s[i..].chars().next().unwrap_or_default();
        if let Some(e) = escaped(c) {
            out.write_str(&s[start..i])?;
            out.write_str(&e)?;
            start = i + c.len_utf8();
        }
        i += c.len_utf8().max(1);
    }
    out.write_str(&s[start..])
}

/// Whether `b` can start an escaped character.
fn is_candidate(b: u8) -> bool {
    matches!(b, 0x07 | 0x08 | 0x0c | 0x1b | 0x7f | 0xc2)
}

/// The position of the first byte that can start an escaped character. Whole chunks are
/// tested without stopping at each byte, which the compiler does many bytes at a time: a
/// byte-by-byte search was most of a log line's cost (#41), and nearly every message
/// holds no such byte.
fn first_candidate(bytes: &[u8]) -> Option<usize> {
    const CHUNK: usize = 32;
    let mut offset = 0;
    for chunk in bytes.chunks(CHUNK) {
        let any = chunk.iter().fold(false, |any, b| any | is_candidate(*b));
        if any {
            return chunk
                .iter()
                .position(|b| is_candidate(*b))
                .map(|at| offset + at);
        }
        offset += chunk.len();
    }
    None
}

thread_local! {
    /// A message formatted whole before it is escaped into the line (its capacity is kept).
    static MESSAGE: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Writes `value` escaped: formatted into this thread's message buffer and scanned once
/// there, as escaping each piece as it was formatted (a message is dozens of pieces, each
/// number and name one) cost more than the copy (#41). A message whose formatting logs
/// (the buffer is in use) is escaped piece by piece instead.
fn write_message(out: &mut impl Write, value: &dyn fmt::Debug) -> fmt::Result {
    let whole = MESSAGE.try_with(|m| {
        let mut m = m.try_borrow_mut().ok()?;
        m.clear();
        let written = write!(m, "{value:?}").and_then(|()| write_escaped(out, &m));
        // A long message's buffer is not kept for every later one.
        if m.capacity() > 64 << 10 {
            *m = String::new();
        }
        Some(written)
    });
    match whole.ok().flatten() {
        Some(written) => written,
        None => write!(Escaping(out), "{value:?}"),
    }
}

impl FieldsVisitor<'_> {
    fn pad(&mut self) {
        if self.is_empty {
            self.is_empty = false;
        } else {
            self.result = self.writer.write_char(' ');
        }
    }
}

impl Visit for FieldsVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.record_debug(field, &format_args!("{value}"))
        } else {
            self.record_debug(field, &value)
        }
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.record_debug(field, &format_args!("{value}"))
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        if self.result.is_err() {
            return;
        }
        let name = field.name();
        if name.starts_with("log.") {
            return;
        }
        self.pad();
        if self.result.is_err() {
            return;
        }
        self.result = if name == "message" {
            write_message(&mut self.writer, value)
        } else {
            let name = name.strip_prefix("r#").unwrap_or(name);
            write!(self.writer, "{name}={value:?}")
        };
    }
}

impl VisitOutput<fmt::Result> for FieldsVisitor<'_> {
    fn finish(self) -> fmt::Result {
        self.result
    }
}

impl VisitFmt for FieldsVisitor<'_> {
    fn writer(&mut self) -> &mut dyn Write {
        &mut self.writer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_as_tracing_does_and_keeps_the_rest() {
        let mut out = String::new();
        write_escaped(&mut out, "a\x1b[31mb\x07c\u{85}d\x7f é\u{a0}\x0c\x08").unwrap();
        assert_eq!(out, "a\\x1b[31mb\\x07c\\u{85}d\\x7f é\u{a0}\\x0c\\x08");
        let mut through = String::new();
        for piece in ["a\x1b[31mb", "\x07c\u{85}", "d\x7f é\u{a0}", "\x0c\x08"] {
            Escaping(&mut through).write_str(piece).unwrap();
        }
        assert_eq!(through, out);
        // A message whose formatting logs another finds the buffer in use, and both come
        // out whole and escaped.
        struct Nested;
        impl fmt::Debug for Nested {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                let mut inner = String::new();
                write_message(&mut inner, &format_args!("in\x07ner"))?;
                write!(f, "out\x1b[{inner}]")
            }
        }
        let mut nested = String::new();
        write_message(&mut nested, &Nested).unwrap();
        assert_eq!(nested, "out\\x1b[in\\x07ner]");
        write_message(&mut nested, &format_args!(" then\x7f")).unwrap();
        assert_eq!(nested, "out\\x1b[in\\x07ner] then\\x7f");
        // Found in any chunk and at either edge of one (the scan goes 32 bytes at a time).
        for at in [0, 1, 31, 32, 33, 63, 64, 65, 100] {
            let s = format!("{}\x1b{}\u{85}", "a".repeat(at), "b".repeat(40));
            let mut out = String::new();
            write_escaped(&mut out, &s).unwrap();
            assert_eq!(
                out,
                format!("{}\\x1b{}\\u{{85}}", "a".repeat(at), "b".repeat(40)),
                "{at}"
            );
            assert_eq!(first_candidate(s.as_bytes()), Some(at));
        }
        let mut plain = String::new();
        write_escaped(&mut plain, "Replayed PartitionRecord for new partition t-0").unwrap();
        assert_eq!(plain, "Replayed PartitionRecord for new partition t-0");
    }
}
