//! Builds the batches of a snapshot (or `bootstrap.checkpoint`) in memory: a control header
//! batch first (SNAPSHOT_HEADER, then KRAFT_VERSION and KRAFT_VOTERS when given), data batches,
//! a SNAPSHOT_FOOTER batch last. Offsets are file-relative from 0 and contiguous; every batch
//! carries the snapshot's epoch as partition leader epoch (Kafka's `RecordsSnapshotWriter`).

use kafka_protocol::messages::VotersRecord;

use super::SnapshotError;
use crate::records::{build_control_batch, build_data_batch, ControlRecord};

/// What goes into the header batch.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotHeaderInfo {
    /// SNAPSHOT_HEADER.LastContainedLogTimestamp: the max timestamp of the last contained log
    /// batch (0 in `bootstrap.checkpoint`, the format time in the 0-0 snapshot).
    pub last_contained_log_timestamp_ms: i64,
    /// kraft.version to record (KRAFT_VERSION is written when this is `Some(level ≥ 1)`).
    pub kraft_version: Option<i16>,
    /// The voter set at the snapshot offset (KRAFT_VOTERS, only with kraft.version ≥ 1).
    pub voters: Option<VotersRecord>,
}

/// Produces snapshot batches with the right offsets and epoch.
#[derive(Debug, Clone)]
pub struct SnapshotEncoder {
    epoch: i32,
    next_offset: i64,
    header_written: bool,
    footer_written: bool,
}

impl SnapshotEncoder {
    /// An encoder for a snapshot of `epoch`.
    pub fn new(epoch: i32) -> Self {
        SnapshotEncoder {
            epoch,
            next_offset: 0,
            header_written: false,
            footer_written: false,
        }
    }

    /// Offset the next record will get.
    pub fn next_offset(&self) -> i64 {
        self.next_offset
    }

    /// The header batch; must come first.
    pub fn header_batch(
        &mut self,
        header: &SnapshotHeaderInfo,
        append_timestamp_ms: i64,
    ) -> Result<Vec<u8>, SnapshotError> {
        if self.header_written {
            return Err(SnapshotError::State("header already written".into()));
        }
        let mut recs = vec![ControlRecord::snapshot_header(
            header.last_contained_log_timestamp_ms,
        )];
        if let Some(level) = header.kraft_version.filter(|&l| l >= 1) {
            recs.push(ControlRecord::kraft_version(level));
            if let Some(v) = &header.voters {
                recs.push(ControlRecord::Voters(v.clone()));
            }
        }
        self.header_written = true;
        self.control(&recs, append_timestamp_ms)
    }

    /// One data batch of serialized metadata records.
    pub fn data_batch(
        &mut self,
        values: &[&[u8]],
        append_timestamp_ms: i64,
    ) -> Result<Vec<u8>, SnapshotError> {
        if !self.header_written || self.footer_written {
            return Err(SnapshotError::State(
                "data batches go between header and footer".into(),
            ));
        }
        let b = build_data_batch(self.next_offset, self.epoch, append_timestamp_ms, values)?;
        self.next_offset += values.len() as i64;
        Ok(b)
    }

    /// The footer batch; must come last.
    pub fn footer_batch(&mut self, append_timestamp_ms: i64) -> Result<Vec<u8>, SnapshotError> {
        if !self.header_written || self.footer_written {
            return Err(SnapshotError::State("footer needs a header, once".into()));
        }
        self.footer_written = true;
        self.control(&[ControlRecord::snapshot_footer()], append_timestamp_ms)
    }

    fn control(&mut self, recs: &[ControlRecord], ts: i64) -> Result<Vec<u8>, SnapshotError> {
        let b = build_control_batch(self.next_offset, self.epoch, ts, recs)?;
        self.next_offset += recs.len() as i64;
        Ok(b)
    }
}
