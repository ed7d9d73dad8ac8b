//! Metadata records and the metadata image.
//!
//! ```text
//!   committed batches (log, snapshots) ─▶ record::MetadataRecord::decode ─▶ image::MetadataImage
//!   ControllerRegistration request ─▶ controller::ControllerRegistration ─▶ record value ─▶ leader append
//! ```
//!
//! Records are described here in Rust, field by field, from Kafka's record definitions (facts,
//! not code). Only the records ferrokraft reads or writes today are decoded; every other record
//! is recognised by its key and version and skipped by replay.

pub mod controller;
pub mod image;
pub mod record;
pub mod wire;

#[cfg(test)]
mod tests;

/// Failures decoding a metadata record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MetadataError {
    /// The value does not follow the record's layout.
    #[error("malformed metadata record: {0}")]
    Malformed(String),
}
