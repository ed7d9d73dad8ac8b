//! The metadata record frame: Kafka's `ApiMessageAndVersion` as `MetadataRecordSerde` writes it
//! into a record value, around a body described in `records/`.
//!
//! ```text
//!   value = uvarint frame version (1) | uvarint apiKey | uvarint record version | body
//! ```
//!
//! A known type at a version newer than described is an error (Kafka fails the same way); an
//! unknown type decodes to [`MetadataRecord::Other`] with its bytes, so a dump still shows it
//! and replay skips it.

use super::records::max_version;
pub use super::records::MetadataRecord;
use super::wire::Reader;
use super::MetadataError;
use crate::records::varint::put_uvarint;

/// Bytes reserved for a record value before it is encoded.
const ENCODED_CAPACITY: usize = 128;

/// The only frame version Kafka writes (and accepts).
pub const FRAME_VERSION: u32 = 1;

/// A record body with the version it was read at or is written at.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiMessageAndVersion {
    /// The record.
    pub message: MetadataRecord,
    /// Its schema version.
    pub version: u16,
}

impl ApiMessageAndVersion {
    /// Pairs a record with the version to write it at.
    pub fn new(message: MetadataRecord, version: u16) -> Self {
        Self { message, version }
    }

    /// Decodes one record value (frame and body); every byte must belong to the record.
    pub fn decode(value: &[u8]) -> Result<Self, MetadataError> {
        let mut r = Reader::new(value);
        let frame = r.uvarint()?;
        if frame != FRAME_VERSION {
            return Err(MetadataError::FrameVersion(frame));
        }
        // Kafka reads both as unsigned varints and requires them to fit an int16.
        let api_key = u16::try_from(r.uvarint()?)
            .ok()
            .filter(|k| *k <= i16::MAX as u16)
            .ok_or_else(|| MetadataError::Malformed("api key out of range".into()))?;
        let version = u16::try_from(r.uvarint()?)
            .ok()
            .filter(|v| *v <= i16::MAX as u16)
            .ok_or_else(|| MetadataError::Malformed("record version out of range".into()))?;
        let message = MetadataRecord::read_body(api_key, version, &mut r)?;
        Ok(Self { message, version })
    }

    /// Encodes the record value. Fails for a known type at a version newer than described
    /// (nothing to write it with), and when a field set to a non-default value does not exist
    /// at the version (it would be lost; Kafka's writer refuses too).
    pub fn encode(&self) -> Result<Vec<u8>, MetadataError> {
        self.message.encode_at(self.version)
    }
}

impl MetadataRecord {
    /// Decodes a record value, dropping its version (what replay needs).
    pub fn decode(value: &[u8]) -> Result<Self, MetadataError> {
        ApiMessageAndVersion::decode(value).map(|r| r.message)
    }

    /// Encodes the record value at `version` (see [`ApiMessageAndVersion::encode`]).
    pub fn encode_at(&self, version: u16) -> Result<Vec<u8>, MetadataError> {
        let api_key = self.api_key();
        if let Some(max) = max_version(api_key) {
            if version > max {
                return Err(MetadataError::UnsupportedVersion {
                    record: self.name(),
                    api_key,
                    version,
                    max,
                });
            }
        }
        if let Some(field) = self.field_missing_at(version) {
            return Err(MetadataError::FieldNotInVersion {
                record: self.name(),
                field,
                version,
            });
        }
        // Room for a PartitionRecord with three replicas and their directories (~115 bytes):
        // growing from empty took five reallocations a record on CreateTopics' path (#41).
        let mut out = Vec::with_capacity(ENCODED_CAPACITY);
        put_uvarint(&mut out, FRAME_VERSION);
        put_uvarint(&mut out, u32::from(api_key));
        put_uvarint(&mut out, u32::from(version));
        self.write_body(version, &mut out);
        Ok(out)
    }
}
