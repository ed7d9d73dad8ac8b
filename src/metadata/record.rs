//! The metadata record frame (Kafka's `ApiMessageAndVersion` as `MetadataRecordSerde` writes it
//! into a record value) and the records ferrokraft reads and writes today.
//!
//! ```text
//!   value = uvarint frame version (1) | uvarint apiKey | uvarint record version | body
//! ```
//!
//! Records we do not know are kept as [`MetadataRecord::Other`] with their key and version, so
//! replay skips them and a later record table can take them over one by one.

use super::controller::ControllerRegistration;
use super::wire::{put_compact_string, Reader, TaggedFields};
use super::MetadataError;
use crate::records::varint::put_uvarint;

/// The only frame version Kafka writes.
pub const FRAME_VERSION: u32 = 1;

/// Metadata record api keys used here (`MetadataRecordType` in Kafka).
pub mod api_key {
    /// FeatureLevelRecord.
    pub const FEATURE_LEVEL: u16 = 12;
    /// NoOpRecord.
    pub const NO_OP: u16 = 20;
    /// RegisterControllerRecord.
    pub const REGISTER_CONTROLLER: u16 = 27;
}

/// A decoded metadata record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetadataRecord {
    /// FeatureLevelRecord v0: a finalized feature level (0 removes the feature).
    FeatureLevel {
        /// Feature name.
        name: String,
        /// Finalized level.
        level: i16,
        /// Tagged fields as read.
        tagged: TaggedFields,
    },
    /// NoOpRecord v0 (what an idle active controller writes); its body is not interpreted.
    NoOp,
    /// RegisterControllerRecord v0.
    RegisterController(ControllerRegistration),
    /// Any other record, not interpreted yet.
    Other {
        /// Its api key.
        api_key: u16,
        /// Its version.
        version: u16,
    },
}

impl MetadataRecord {
    /// Decodes one record value.
    pub fn decode(value: &[u8]) -> Result<Self, MetadataError> {
        let mut r = Reader::new(value);
        let frame = r.uvarint()?;
        if frame != FRAME_VERSION {
            return Err(MetadataError::Malformed(format!(
                "frame version {frame}, expected {FRAME_VERSION}"
            )));
        }
        let key = u16::try_from(r.uvarint()?)
            .map_err(|_| MetadataError::Malformed("api key out of range".into()))?;
        let version = u16::try_from(r.uvarint()?)
            .map_err(|_| MetadataError::Malformed("record version out of range".into()))?;
        match (key, version) {
            (api_key::FEATURE_LEVEL, 0) => {
                let name = r.compact_string("FeatureLevelRecord.Name")?;
                let level = r.i16()?;
                let tagged = r.tagged_fields()?;
                r.finish("FeatureLevelRecord")?;
                Ok(Self::FeatureLevel {
                    name,
                    level,
                    tagged,
                })
            }
            (api_key::NO_OP, 0) => Ok(Self::NoOp),
            (api_key::REGISTER_CONTROLLER, 0) => {
                let registration = ControllerRegistration::read(&mut r)?;
                r.finish("RegisterControllerRecord")?;
                Ok(Self::RegisterController(registration))
            }
            (api_key, version) => Ok(Self::Other { api_key, version }),
        }
    }

    /// Encodes the record value; `None` for records only read here (`NoOp`, `Other`).
    pub fn encode(&self) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        put_uvarint(&mut out, FRAME_VERSION);
        match self {
            Self::FeatureLevel {
                name,
                level,
                tagged,
            } => {
                put_uvarint(&mut out, u32::from(api_key::FEATURE_LEVEL));
                put_uvarint(&mut out, 0);
                put_compact_string(&mut out, name);
                out.extend_from_slice(&level.to_be_bytes());
                tagged.write(&mut out);
            }
            Self::RegisterController(registration) => {
                put_uvarint(&mut out, u32::from(api_key::REGISTER_CONTROLLER));
                put_uvarint(&mut out, 0);
                registration.write(&mut out);
            }
            Self::NoOp | Self::Other { .. } => return None,
        }
        Some(out)
    }
}
