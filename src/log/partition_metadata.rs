//! `partition.metadata`: `version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ` (no trailing newline),
//! written atomically before any log data, as Kafka's `PartitionMetadataFile` does.

use std::path::Path;

use super::LogError;
use crate::common::uuid::{uuid_to_kafka_string, METADATA_TOPIC_ID};
use crate::durable::write_atomic;

/// File name.
pub const PARTITION_METADATA_FILE: &str = "partition.metadata";

/// The file contents for `__cluster_metadata`.
pub fn partition_metadata_text() -> String {
    format!(
        "version: 0\ntopic_id: {}",
        uuid_to_kafka_string(&METADATA_TOPIC_ID)
    )
}

/// Writes the file unless it already has the right contents.
pub fn ensure_partition_metadata(dir: &Path) -> Result<(), LogError> {
    let path = dir.join(PARTITION_METADATA_FILE);
    let want = partition_metadata_text();
    if std::fs::read_to_string(&path).is_ok_and(|t| t == want) {
        return Ok(());
    }
    write_atomic(&path, want.as_bytes(), true).map_err(|e| LogError::io("write", &path, e))
}
