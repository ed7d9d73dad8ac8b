//! Metadata records and the metadata image.
//!
//! ```text
//!   committed batches (log, snapshots) ─▶ record::MetadataRecord::decode ─▶ image::MetadataImage
//!   ControllerRegistration request ─▶ controller::ControllerRegistration ─▶ record value ─▶ leader append
//! ```
//!
//! Records are described here in Rust, field by field, from Kafka's record definitions (facts,
//! not code): `describe.rs` is the description format, `records/` the descriptions of every
//! record type Kafka 4.x writes (up to 4.4), `field.rs` the field types, `record.rs` the frame.

pub mod acl;
pub mod authorizer;
pub mod cidr;
pub mod controller;
pub mod credentials;
pub(crate) mod describe;
pub mod field;
pub mod image;
pub mod record;
pub mod records;
pub mod topic_name;
pub mod wire;

#[cfg(test)]
mod tests;

/// Failures decoding a metadata record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    /// The value does not follow the record's layout.
    #[error("malformed metadata record: {0}")]
    Malformed(String),
    /// The frame is not version 1, the only one Kafka writes.
    #[error("metadata record frame version {0}, expected 1")]
    FrameVersion(u32),
    /// A field holds a value the record version to write does not carry.
    #[error("{record} v{version} has no field {field} to hold its value")]
    FieldNotInVersion {
        /// Record type name.
        record: &'static str,
        /// The field (snake case).
        field: &'static str,
        /// The version asked for.
        version: u16,
    },
    /// A known record type at a version newer than the descriptions here.
    #[error("{record} (api key {api_key}) version {version} is not supported (known up to {max})")]
    UnsupportedVersion {
        /// Record type name.
        record: &'static str,
        /// Its api key.
        api_key: u16,
        /// The version found.
        version: u16,
        /// The highest version described.
        max: u16,
    },
}
