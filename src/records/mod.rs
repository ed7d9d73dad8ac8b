//! Kafka v2 record batches (magic 2) exactly as KRaft writes and reads them.
//!
//! Data flow:
//!
//! ```text
//!   values / ControlRecord ──batch::BatchBuilder──▶ Vec<u8> (one batch, CRC-32C over [21..end))
//!   raw bytes (file, network) ──framer::BatchFramer──▶ BatchView ──records()──▶ RecordView
//!                                        └──▶ FrameEnd { Clean | TornTail | Corrupt } at a byte position
//! ```
//!
//! Replicated batches are kept as raw bytes: a `BatchView` never copies, and the only edits ever
//! made to received bytes are the base offset and partition leader epoch, which sit outside the
//! CRC (`restamp_base_offset`, `restamp_partition_leader_epoch`).
pub mod batch;
pub mod control;
pub mod feature_level;
pub mod framer;
pub mod varint;
pub mod view;

pub use batch::{
    build_control_batch, build_data_batch, restamp_base_offset, restamp_partition_leader_epoch,
    BatchBuilder,
};
pub use control::{ControlRecord, ControlRecordType};
pub use framer::{BatchFramer, BatchHeader, FileFramer, FrameEnd};
pub use view::{BatchView, RecordView};

/// Errors found while building or reading record batches.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum RecordsError {
    /// Fewer bytes than a field needs.
    #[error("truncated: need {needed} bytes at {at}, have {available}")]
    Truncated {
        /// Position (relative to the batch or record start) of the field.
        at: usize,
        /// Bytes the field needs.
        needed: usize,
        /// Bytes that are there.
        available: usize,
    },
    /// The batch-level structure is impossible (bad magic, size, CRC, count …).
    #[error("corrupt batch: {0}")]
    CorruptBatch(String),
    /// A record inside a valid-looking batch breaks Kafka's KRaft reader rules.
    #[error("invalid record {index}: {reason}")]
    InvalidRecord {
        /// Index of the record inside its batch.
        index: usize,
        /// What is wrong.
        reason: String,
    },
    /// A control record that cannot be decoded or encoded.
    #[error("control record: {0}")]
    Control(String),
    /// A batch would hold no records; Kafka's KRaft code never writes one.
    #[error("a batch needs at least one record")]
    EmptyBatch,
    /// A value too large for a v2 batch (sizes are int32).
    #[error("batch too large: {size_bytes} bytes")]
    TooLarge {
        /// Size the batch would have.
        size_bytes: usize,
    },
}

#[cfg(test)]
mod tests;
