//! Reading and writing the primitive types of Kafka's flexible (KIP-482) message encoding, as
//! metadata records use them: int16/int32/uint16, bool, uuid, compact strings and arrays, and
//! tagged-field sections.
//!
//! Every read is bounds-checked against the record value: a short or malformed value is a
//! [`MetadataError`], never a panic or an allocation sized by the input.

use bytes::Bytes;
use uuid::Uuid;

use super::MetadataError;
use crate::records::varint::{get_uvarint, put_uvarint};

/// A cursor over one record value.
#[derive(Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Starts at the first byte of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], MetadataError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|end| *end <= self.buf.len())
            .ok_or_else(|| MetadataError::Malformed(format!("{what}: value too short")))?;
        let out = &self.buf[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    /// An unsigned varint.
    pub fn uvarint(&mut self) -> Result<u32, MetadataError> {
        get_uvarint(self.buf, &mut self.pos).map_err(|e| MetadataError::Malformed(e.to_string()))
    }

    /// An int8.
    pub fn i8(&mut self) -> Result<i8, MetadataError> {
        Ok(i8::from_be_bytes([self.take(1, "int8")?[0]]))
    }

    /// A big-endian int64.
    pub fn i64(&mut self) -> Result<i64, MetadataError> {
        let b = self.take(8, "int64")?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(i64::from_be_bytes(a))
    }

    /// A big-endian IEEE 754 float64, bit for bit (NaN payloads included).
    pub fn f64(&mut self) -> Result<f64, MetadataError> {
        let b = self.take(8, "float64")?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(f64::from_bits(u64::from_be_bytes(a)))
    }

    /// `n` raw bytes.
    pub fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8], MetadataError> {
        self.take(n, what)
    }

    /// A big-endian int16.
    pub fn i16(&mut self) -> Result<i16, MetadataError> {
        let b = self.take(2, "int16")?;
        Ok(i16::from_be_bytes([b[0], b[1]]))
    }

    /// A big-endian uint16.
    pub fn u16(&mut self) -> Result<u16, MetadataError> {
        let b = self.take(2, "uint16")?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    /// A big-endian int32.
    pub fn i32(&mut self) -> Result<i32, MetadataError> {
        let b = self.take(4, "int32")?;
        Ok(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A boolean byte (any non-zero is true, as Kafka reads it).
    pub fn bool(&mut self) -> Result<bool, MetadataError> {
        Ok(self.take(1, "bool")?[0] != 0)
    }

    /// A 16-byte uuid.
    pub fn uuid(&mut self) -> Result<Uuid, MetadataError> {
        let b = self.take(16, "uuid")?;
        let mut a = [0u8; 16];
        a.copy_from_slice(b);
        Ok(Uuid::from_bytes(a))
    }

    /// A non-null compact string (length + 1 as a uvarint, then UTF-8).
    pub fn compact_string(&mut self, field: &str) -> Result<String, MetadataError> {
        self.compact_nullable_string(field)?
            .ok_or_else(|| MetadataError::Malformed(format!("{field}: null string")))
    }

    /// A compact string that may be null (length 0).
    pub fn compact_nullable_string(
        &mut self,
        field: &str,
    ) -> Result<Option<String>, MetadataError> {
        let Some(bytes) = self.compact_nullable_bytes(field)? else {
            return Ok(None);
        };
        // Kafka reads strings strictly as UTF-8 here too (a malformed name is corruption).
        std::str::from_utf8(bytes)
            .map(|s| Some(s.to_string()))
            .map_err(|_| MetadataError::Malformed(format!("{field}: invalid UTF-8")))
    }

    /// Compact bytes that may be null (length + 1 as a uvarint, 0 for null).
    pub fn compact_nullable_bytes(
        &mut self,
        field: &str,
    ) -> Result<Option<&'a [u8]>, MetadataError> {
        match self.uvarint()?.checked_sub(1) {
            None => Ok(None),
            Some(len) => self.take(len as usize, field).map(Some),
        }
    }

    /// The element count of a non-null compact array. Each element takes at least one byte,
    /// so a count larger than what is left is refused before anything is allocated.
    pub fn compact_array_len(&mut self, field: &str) -> Result<usize, MetadataError> {
        self.compact_nullable_array_len(field)?
            .ok_or_else(|| MetadataError::Malformed(format!("{field}: null array")))
    }

    /// The element count of a compact array that may be null (`None`), bounded like
    /// [`Reader::compact_array_len`].
    pub fn compact_nullable_array_len(
        &mut self,
        field: &str,
    ) -> Result<Option<usize>, MetadataError> {
        let Some(n) = self.uvarint()?.checked_sub(1) else {
            return Ok(None);
        };
        let n = n as usize;
        if n > self.remaining() {
            return Err(MetadataError::Malformed(format!(
                "{field}: {n} elements in {} bytes",
                self.remaining()
            )));
        }
        Ok(Some(n))
    }

    /// Fails unless every byte was read.
    pub fn finish(&self, what: &str) -> Result<(), MetadataError> {
        if self.remaining() == 0 {
            Ok(())
        } else {
            Err(MetadataError::Malformed(format!(
                "{what}: {} trailing bytes",
                self.remaining()
            )))
        }
    }
}

/// Tagged fields kept as read: (tag, raw value), in wire order (the ones a description does
/// not know; see `describe.rs`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TaggedFields(pub Vec<(u32, Bytes)>);

/// Writes a compact string that may be null.
pub fn put_compact_nullable_string(out: &mut Vec<u8>, s: Option<&str>) {
    put_compact_nullable_bytes(out, s.map(str::as_bytes));
}

/// Writes compact bytes that may be null.
pub fn put_compact_nullable_bytes(out: &mut Vec<u8>, b: Option<&[u8]>) {
    match b {
        None => put_uvarint(out, 0),
        Some(b) => {
            put_uvarint(out, b.len() as u32 + 1);
            out.extend_from_slice(b);
        }
    }
}

/// Writes the length prefix of a compact array that may be null.
pub fn put_compact_nullable_array_len(out: &mut Vec<u8>, n: Option<usize>) {
    put_uvarint(out, n.map_or(0, |n| n as u32 + 1));
}
