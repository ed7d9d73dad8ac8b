//! Checks shared by the file and memory logs for appended bytes.

use super::{LogError, OffsetAndEpoch};
use crate::records::batch::MAX_BATCH_SIZE_BYTES;
use crate::records::{
    restamp_base_offset, restamp_partition_leader_epoch, BatchFramer, BatchView, FrameEnd,
};

/// Frames `bytes` into batches, requiring a clean end and at least one batch.
pub(crate) fn frame_all(bytes: &[u8]) -> Result<Vec<BatchView<'_>>, LogError> {
    if bytes.is_empty() {
        return Err(LogError::InvalidAppend("no batches".into()));
    }
    let mut f = BatchFramer::new(bytes, 0, MAX_BATCH_SIZE_BYTES);
    let views: Vec<BatchView<'_>> = f.by_ref().map(|(_, v)| v).collect();
    match f.end() {
        Some(FrameEnd::Clean) => Ok(views),
        Some(FrameEnd::TornTail { position, .. }) => Err(LogError::InvalidAppend(format!(
            "incomplete batch at byte {position}"
        ))),
        Some(FrameEnd::Corrupt { position, reason }) => Err(LogError::InvalidAppend(format!(
            "corrupt batch at byte {position}: {reason}"
        ))),
        None => Err(LogError::InvalidAppend("framing did not finish".into())),
    }
}

/// Checks batches a follower received (KRaft header rules, offsets from `leo`, epochs); the
/// CRCs were checked by `frame_all`. Records are not walked: Kafka's follower append
/// (`analyzeAndValidateRecords` for replication) checks each batch's CRC and header only.
pub(crate) fn check_follower(
    views: &[BatchView<'_>],
    leo: i64,
    last_epoch: Option<i32>,
    fetch_epoch: i32,
) -> Result<(), LogError> {
    let mut expected = leo;
    let mut epoch_floor = last_epoch.unwrap_or(0);
    let mut position = 0usize;
    for v in views {
        v.check_kraft_header()
            .map_err(|source| LogError::InvalidBatch { position, source })?;
        if v.base_offset() != expected {
            return Err(LogError::UnexpectedAppendOffset {
                expected,
                found: v.base_offset(),
            });
        }
        let ple = v.partition_leader_epoch();
        if ple > fetch_epoch {
            return Err(LogError::InvalidEpoch(format!(
                "batch at offset {} has epoch {ple}, above the fetch epoch {fetch_epoch}",
                v.base_offset()
            )));
        }
        if ple < epoch_floor {
            return Err(LogError::InvalidEpoch(format!(
                "batch at offset {} has epoch {ple}, below the log's epoch {epoch_floor}",
                v.base_offset()
            )));
        }
        epoch_floor = ple;
        expected = v.next_offset();
        position += v.size_bytes();
    }
    Ok(())
}

/// Copies leader batches with offsets from `leo` and the epoch stamped; checks CRC, header and
/// records.
pub(crate) fn stamp_leader(
    bytes: &[u8],
    leo: i64,
    epoch: i32,
    last_epoch: Option<i32>,
) -> Result<Vec<u8>, LogError> {
    if epoch < 0 || last_epoch.is_some_and(|l| epoch < l) {
        return Err(LogError::InvalidEpoch(format!(
            "leader epoch {epoch} is below the log's epoch {last_epoch:?}"
        )));
    }
    let views = frame_all(bytes)?;
    let mut out = Vec::with_capacity(bytes.len());
    let mut next = leo;
    let mut position = 0usize;
    for v in &views {
        // `frame_all` checked the CRC.
        v.check_kraft_header()
            .and_then(|()| v.check_records())
            .map_err(|source| LogError::InvalidBatch { position, source })?;
        let start = out.len();
        out.extend_from_slice(v.as_bytes());
        let b = &mut out[start..];
        restamp_base_offset(b, next)
            .map_err(|source| LogError::InvalidBatch { position, source })?;
        restamp_partition_leader_epoch(b, epoch)
            .map_err(|source| LogError::InvalidBatch { position, source })?;
        next += i64::from(v.last_offset_delta()) + 1;
        position += v.size_bytes();
    }
    Ok(out)
}

/// `UnifiedLog.endOffsetForEpoch` from an epoch cache: `None` when undefined.
pub(crate) fn end_offset_for_epoch(
    cache: &super::EpochCache,
    epoch: i32,
    leo: i64,
) -> Option<OffsetAndEpoch> {
    cache
        .end_offset_for(epoch, leo)
        .map(|(e, offset)| OffsetAndEpoch::new(offset, e))
}
