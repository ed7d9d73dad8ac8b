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
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerResult<T> {
    /// Records, in order; empty for a read or a refused request.
    pub records: Vec<RecordOut>,
    /// The response.
    pub response: T,
    /// Whether the records must land in one batch (Kafka's atomic results); every result of
    /// ferrokraft's controller fits one batch, so all of them are appended as one.
    pub atomic: bool,
}

impl<T> ControllerResult<T> {
    /// A result that writes `records` in one batch.
    pub fn atomic(records: Vec<RecordOut>, response: T) -> Self {
        Self {
            records,
            response,
            atomic: true,
        }
    }

    /// A result that writes nothing.
    pub fn response_only(response: T) -> Self {
        Self {
            records: Vec::new(),
            response,
            atomic: false,
        }
    }

    /// The same records with the response mapped.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> ControllerResult<U> {
        ControllerResult {
            records: self.records,
            response: f(self.response),
            atomic: self.atomic,
        }
    }
}
