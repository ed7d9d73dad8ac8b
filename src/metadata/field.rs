//! The field types metadata records use, each read, written and shown the same way wherever it
//! appears: the record descriptions (`records/`) name a Rust type per field and these impls do
//! the bytes.
//!
//! | schema type | Rust type | encoding (flexible versions, which every metadata record uses) |
//! |---|---|---|
//! | int8 / int16 / int32 / int64 | `i8` / `i16` / `i32` / `i64` | big-endian |
//! | uint16 | `u16` | big-endian |
//! | float64 | `f64` | big-endian IEEE 754, bit for bit |
//! | bool | `bool` | one byte, non-zero is true |
//! | uuid | `Uuid` | 16 bytes |
//! | string / nullable string | `String` / `Option<String>` | compact (uvarint length + 1, 0 = null) |
//! | bytes | `Vec<u8>` | compact bytes |
//! | `[]T` / nullable `[]T` | `Vec<T>` / `Option<Vec<T>>` | compact array |
//! | a nested struct | the struct `metadata_struct!` made | its fields, then its tagged fields |

use serde_json::{json, Value};
use uuid::Uuid;

use super::wire::{
    put_compact_nullable_array_len, put_compact_nullable_bytes, put_compact_nullable_string, Reader,
};
use super::MetadataError;
use crate::common::uuid::uuid_to_kafka_string;

/// One field value: how it is read, written and shown.
pub trait Field: Sized {
    /// Reads the value; `version` is the record's (nested structs need it), `name` names the
    /// field in errors.
    fn read(r: &mut Reader<'_>, version: u16, name: &'static str) -> Result<Self, MetadataError>;
    /// Writes the value as `read` reads it.
    fn write(&self, out: &mut Vec<u8>, version: u16);
    /// The value in `ferrokraft dump --json` (and the text dump).
    fn to_json(&self, version: u16) -> Value;
    /// The value as Kafka's generated `toString` shows it in log lines: strings in single
    /// quotes, arrays as `[a, b]`, structs as `Name(field=value, …)`.
    fn to_kafka_string(&self, version: u16, out: &mut String) {
        match self.to_json(version) {
            Value::String(s) => {
                out.push('\'');
                out.push_str(&s);
                out.push('\'');
            }
            other => out.push_str(&other.to_string()),
        }
    }
}

macro_rules! fixed_width {
    ($($ty:ty => $read:ident),* $(,)?) => {$(
        impl Field for $ty {
            fn read(r: &mut Reader<'_>, _: u16, _: &'static str) -> Result<Self, MetadataError> {
                r.$read()
            }
            fn write(&self, out: &mut Vec<u8>, _: u16) {
                out.extend_from_slice(&self.to_be_bytes());
            }
            fn to_json(&self, _: u16) -> Value {
                json!(self)
            }
        }
    )*};
}

fixed_width!(i8 => i8, i16 => i16, i32 => i32, i64 => i64, u16 => u16);

impl Field for f64 {
    fn read(r: &mut Reader<'_>, _: u16, _: &'static str) -> Result<Self, MetadataError> {
        r.f64()
    }
    fn write(&self, out: &mut Vec<u8>, _: u16) {
        out.extend_from_slice(&self.to_bits().to_be_bytes());
    }
    fn to_json(&self, _: u16) -> Value {
        // JSON has no NaN or infinity; show those as strings rather than lose them.
        if self.is_finite() {
            json!(self)
        } else {
            json!(self.to_string())
        }
    }
}

impl Field for bool {
    fn read(r: &mut Reader<'_>, _: u16, _: &'static str) -> Result<Self, MetadataError> {
        r.bool()
    }
    fn write(&self, out: &mut Vec<u8>, _: u16) {
        out.push(u8::from(*self));
    }
    fn to_json(&self, _: u16) -> Value {
        json!(self)
    }
}

impl Field for Uuid {
    fn read(r: &mut Reader<'_>, _: u16, _: &'static str) -> Result<Self, MetadataError> {
        r.uuid()
    }
    fn write(&self, out: &mut Vec<u8>, _: u16) {
        out.extend_from_slice(self.as_bytes());
    }
    fn to_json(&self, _: u16) -> Value {
        // Kafka's own string form (URL-safe base64), as its tools print ids.
        json!(uuid_to_kafka_string(self))
    }
    fn to_kafka_string(&self, _: u16, out: &mut String) {
        out.push_str(&uuid_to_kafka_string(self));
    }
}

impl Field for String {
    fn read(r: &mut Reader<'_>, _: u16, name: &'static str) -> Result<Self, MetadataError> {
        r.compact_string(name)
    }
    fn write(&self, out: &mut Vec<u8>, _: u16) {
        put_compact_nullable_string(out, Some(self));
    }
    fn to_json(&self, _: u16) -> Value {
        json!(self)
    }
}

impl Field for Option<String> {
    fn read(r: &mut Reader<'_>, _: u16, name: &'static str) -> Result<Self, MetadataError> {
        r.compact_nullable_string(name)
    }
    fn write(&self, out: &mut Vec<u8>, _: u16) {
        put_compact_nullable_string(out, self.as_deref());
    }
    fn to_json(&self, _: u16) -> Value {
        json!(self)
    }
}

impl Field for Vec<u8> {
    fn read(r: &mut Reader<'_>, _: u16, name: &'static str) -> Result<Self, MetadataError> {
        r.compact_nullable_bytes(name)?
            .map(<[u8]>::to_vec)
            .ok_or_else(|| MetadataError::Malformed(format!("{name}: null bytes")))
    }
    fn write(&self, out: &mut Vec<u8>, _: u16) {
        put_compact_nullable_bytes(out, Some(self));
    }
    fn to_json(&self, _: u16) -> Value {
        use base64::Engine as _;
        // Base64, as Kafka's JSON converters show bytes fields.
        json!(base64::engine::general_purpose::STANDARD.encode(self))
    }
}

/// Array elements. A separate trait from [`Field`] so `Vec<u8>` can be the bytes type while
/// `Vec<i32>`, `Vec<Uuid>`, `Vec<String>` and `Vec<Struct>` are arrays.
pub trait Element: Field {}
impl Element for i32 {}
impl Element for Uuid {}
impl Element for String {}

fn read_elements<T: Element>(
    r: &mut Reader<'_>,
    version: u16,
    name: &'static str,
    n: usize,
) -> Result<Vec<T>, MetadataError> {
    // `n` is bounded by the bytes left (Reader::compact_nullable_array_len), so this
    // allocation is at most the record's size in elements.
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        out.push(T::read(r, version, name)?);
    }
    Ok(out)
}

impl<T: Element> Field for Vec<T> {
    fn read(r: &mut Reader<'_>, version: u16, name: &'static str) -> Result<Self, MetadataError> {
        let n = r.compact_array_len(name)?;
        read_elements(r, version, name, n)
    }
    fn write(&self, out: &mut Vec<u8>, version: u16) {
        put_compact_nullable_array_len(out, Some(self.len()));
        for e in self {
            e.write(out, version);
        }
    }
    fn to_json(&self, version: u16) -> Value {
        Value::Array(self.iter().map(|e| e.to_json(version)).collect())
    }
    fn to_kafka_string(&self, version: u16, out: &mut String) {
        out.push('[');
        for (i, e) in self.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            e.to_kafka_string(version, out);
        }
        out.push(']');
    }
}

impl<T: Element> Field for Option<Vec<T>> {
    fn read(r: &mut Reader<'_>, version: u16, name: &'static str) -> Result<Self, MetadataError> {
        match r.compact_nullable_array_len(name)? {
            None => Ok(None),
            Some(n) => read_elements(r, version, name, n).map(Some),
        }
    }
    fn write(&self, out: &mut Vec<u8>, version: u16) {
        put_compact_nullable_array_len(out, self.as_ref().map(Vec::len));
        for e in self.iter().flatten() {
            e.write(out, version);
        }
    }
    fn to_json(&self, version: u16) -> Value {
        match self {
            None => Value::Null,
            Some(v) => v.to_json(version),
        }
    }
    fn to_kafka_string(&self, version: u16, out: &mut String) {
        match self {
            None => out.push_str("null"),
            Some(v) => v.to_kafka_string(version, out),
        }
    }
}
