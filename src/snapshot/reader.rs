//! Opening a finished snapshot: every batch must frame and pass its CRC, the first batch must
//! be a control batch whose first record is SNAPSHOT_HEADER (what Kafka's readers require), and
//! the last batch must hold SNAPSHOT_FOOTER. Chunks for FetchSnapshot are read by byte position
//! and are not batch-aligned (Kafka sends `UnalignedRecords`).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use kafka_protocol::messages::VotersRecord;

use super::{SnapshotError, SnapshotId};
use crate::records::batch::MAX_BATCH_SIZE_BYTES;
use crate::records::{BatchView, ControlRecord, FileFramer, FrameEnd};

/// What a valid snapshot's control records say.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SnapshotSummary {
    /// SNAPSHOT_HEADER.LastContainedLogTimestamp.
    pub last_contained_log_timestamp_ms: i64,
    /// KRAFT_VERSION from the header batch, if present.
    pub kraft_version: Option<i16>,
    /// KRAFT_VOTERS from the header batch, if present.
    pub voters: Option<VotersRecord>,
    /// Number of batches.
    pub batch_count: usize,
    /// Number of data (non-control) records.
    pub data_record_count: u64,
}

/// Frames and checks a whole snapshot file.
pub fn validate_snapshot_file(path: &Path, file: &File) -> Result<SnapshotSummary, SnapshotError> {
    let invalid = |reason: String| SnapshotError::Invalid {
        path: path.to_path_buf(),
        reason,
    };
    let len = file
        .metadata()
        .map_err(|e| SnapshotError::io(path, e))?
        .len();
    let mut framer = FileFramer::new(file, 0, len, MAX_BATCH_SIZE_BYTES);
    let mut summary = SnapshotSummary::default();
    let mut last: Option<Vec<u8>> = None;
    let mut expected_offset = 0i64;
    while let Some((pos, bytes)) = framer
        .next_batch()
        .map_err(|e| SnapshotError::io(path, e))?
    {
        let view = BatchView::new(&bytes).map_err(|e| invalid(format!("batch at {pos}: {e}")))?;
        view.validate_kraft()
            .map_err(|e| invalid(format!("batch at {pos}: {e}")))?;
        if view.base_offset() != expected_offset {
            return Err(invalid(format!(
                "batch at {pos} starts at offset {}, expected {expected_offset}",
                view.base_offset()
            )));
        }
        expected_offset = view.next_offset();
        if summary.batch_count == 0 {
            let recs = view
                .control_records()
                .map_err(|e| invalid(format!("first batch is not a control batch: {e}")))?;
            match recs.first() {
                Some(ControlRecord::SnapshotHeader(h)) => {
                    summary.last_contained_log_timestamp_ms = h.last_contained_log_timestamp
                }
                _ => return Err(invalid("first record is not SNAPSHOT_HEADER".into())),
            }
            for r in recs.into_iter().skip(1) {
                match r {
                    ControlRecord::KRaftVersion(k) => {
                        summary.kraft_version = Some(k.k_raft_version)
                    }
                    ControlRecord::Voters(v) => summary.voters = Some(v),
                    _ => {}
                }
            }
        } else if !view.is_control() {
            summary.data_record_count += view.record_count() as u64;
        }
        summary.batch_count += 1;
        last = Some(bytes);
    }
    if let Some(FrameEnd::TornTail { position, .. } | FrameEnd::Corrupt { position, .. }) =
        framer.end()
    {
        return Err(invalid(format!(
            "bad data at byte {position}: {:?}",
            framer.end()
        )));
    }
    let last = last.ok_or_else(|| invalid("empty file".into()))?;
    let footer_ok = BatchView::new(&last)
        .ok()
        .and_then(|v| v.control_records().ok())
        .is_some_and(|r| matches!(r.last(), Some(ControlRecord::SnapshotFooter(_))));
    if summary.batch_count < 2 || !footer_ok {
        return Err(invalid("last batch is not a SNAPSHOT_FOOTER".into()));
    }
    Ok(summary)
}

/// A finished, validated snapshot file opened for reading.
#[derive(Debug)]
pub struct RawSnapshot {
    id: SnapshotId,
    path: PathBuf,
    file: File,
    size_bytes: u64,
    summary: SnapshotSummary,
}

impl RawSnapshot {
    /// Opens `<dir>/<id>.checkpoint` and validates it.
    pub fn open(dir: &Path, id: SnapshotId) -> Result<Self, SnapshotError> {
        Self::open_path(&id.path_in(dir), id)
    }

    /// Opens a snapshot at an explicit path (e.g. `bootstrap.checkpoint`) and validates it.
    pub fn open_path(path: &Path, id: SnapshotId) -> Result<Self, SnapshotError> {
        let file = File::open(path).map_err(|e| SnapshotError::io(path, e))?;
        let summary = validate_snapshot_file(path, &file)?;
        let size_bytes = file
            .metadata()
            .map_err(|e| SnapshotError::io(path, e))?
            .len();
        Ok(RawSnapshot {
            id,
            path: path.to_path_buf(),
            file,
            size_bytes,
            summary,
        })
    }

    /// The id.
    pub fn id(&self) -> SnapshotId {
        self.id
    }
    /// The path.
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// File size.
    pub fn size_bytes(&self) -> u64 {
        self.size_bytes
    }
    /// Header facts.
    pub fn summary(&self) -> &SnapshotSummary {
        &self.summary
    }

    /// Up to `max_bytes` starting at `position` (fewer at the end of the file; empty past it).
    pub fn read_chunk(&self, position: u64, max_bytes: usize) -> Result<Vec<u8>, SnapshotError> {
        let n = self
            .size_bytes
            .saturating_sub(position)
            .min(max_bytes as u64) as usize;
        let mut buf = vec![0u8; n];
        self.file
            .read_exact_at(&mut buf, position)
            .map_err(|e| SnapshotError::io(&self.path, e))?;
        Ok(buf)
    }

    /// All batches, in order, as owned bytes.
    pub fn batches(&self) -> Result<Vec<Vec<u8>>, SnapshotError> {
        let mut f = FileFramer::new(&self.file, 0, self.size_bytes, MAX_BATCH_SIZE_BYTES);
        let mut out = Vec::new();
        while let Some((_, b)) = f
            .next_batch()
            .map_err(|e| SnapshotError::io(&self.path, e))?
        {
            out.push(b);
        }
        Ok(out)
    }
}

/// SNAPSHOT_HEADER.LastContainedLogTimestamp of snapshot `id` in `dir`, reading only its first
/// batch (Kafka's `Snapshots.lastContainedLogTimestamp`, used by time-based retention).
pub fn last_contained_timestamp(dir: &Path, id: SnapshotId) -> Result<i64, SnapshotError> {
    use std::io::Read;
    let path = id.path_in(dir);
    let invalid = |reason: &str| SnapshotError::Invalid {
        path: path.clone(),
        reason: reason.to_string(),
    };
    let mut file = File::open(&path).map_err(|e| SnapshotError::io(&path, e))?;
    let mut head = [0u8; 12];
    file.read_exact(&mut head)
        .map_err(|e| SnapshotError::io(&path, e))?;
    let len = i32::from_be_bytes([head[8], head[9], head[10], head[11]]);
    let len = usize::try_from(len)
        .ok()
        .filter(|l| *l <= MAX_BATCH_SIZE_BYTES)
        .ok_or_else(|| invalid("bad length in the first batch"))?;
    let mut batch = head.to_vec();
    batch.resize(12 + len, 0);
    file.read_exact(&mut batch[12..])
        .map_err(|e| SnapshotError::io(&path, e))?;
    let view = BatchView::new(&batch)?;
    match view.control_records()?.first() {
        Some(ControlRecord::SnapshotHeader(h)) => Ok(h.last_contained_log_timestamp),
        _ => Err(invalid("the first batch holds no SNAPSHOT_HEADER")),
    }
}
