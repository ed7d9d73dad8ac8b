//! What a manager returns: the records to write and the reply (Kafka's `ControllerResult`).

use crate::metadata::record::MetadataRecord;

/// A record with the version it is written at (Kafka's `ApiMessageAndVersion`).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordOut {
    /// The record.
    pub record: MetadataRecord,
    /// Its version.
    pub version: u16,
}

impl RecordOut {
    /// `record` at `version`.
    pub fn new(record: MetadataRecord, version: u16) -> Self {
        Self { record, version }
    }
}

/// Records to append and the response to give once they commit. A manager builds one from
/// the image alone and changes nothing: the records change the image when they are replayed.
/// Every result is appended as one batch (each fits one; Kafka splits its non-atomic results
/// only past 10,000 records, which CreateTopics' partition limit keeps requests below).
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerResult<T> {
    /// Records, in order; empty for a read or a refused request.
    pub records: Vec<RecordOut>,
    /// The response.
    pub response: T,
}

impl<T> ControllerResult<T> {
    /// A result that writes `records` (Kafka's `ControllerResult.of`).
    pub fn of(records: Vec<RecordOut>, response: T) -> Self {
        Self { records, response }
    }

    /// A result that writes nothing.
    pub fn response_only(response: T) -> Self {
        Self::of(Vec::new(), response)
    }
}

/// Kafka's `MAX_RECORDS_PER_USER_OP` (its `MAX_RECORDS_PER_BATCH`): an atomic write holds at
/// most this many records; a request that would write more is refused whole with
/// POLICY_VIOLATION.
pub const MAX_RECORDS_PER_USER_OP: usize = 10_000;
