//! Event and span fields as tracing's default formatter writes them (`message` bare, others
//! `name=value`), with its terminal-injection escaping of the message, but written a run at
//! a time and straight into the line: the default escapes through one `write_char` per
//! character, which made a third of the controller's replay time while it logged a line per
//! replayed PartitionRecord (#41), and a copy of each message cost another part.

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
    while let Some(at) = bytes[i..]
        .iter()
        .position(|b| matches!(b, 0x07 | 0x08 | 0x0c | 0x1b | 0x7f | 0xc2))
    {
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
            // Formatted straight into the line: no copy of the message is built first.
            write!(Escaping(&mut self.writer), "{value:?}")
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
        let mut plain = String::new();
        write_escaped(&mut plain, "Replayed PartitionRecord for new partition t-0").unwrap();
        assert_eq!(plain, "Replayed PartitionRecord for new partition t-0");
    }
}
