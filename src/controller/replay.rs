//! The committed side, on every controller: the committed image follows what the Raft layer
//! has committed (Kafka's `MetadataLoader` feeding the controller's replay), snapshot first
//! when the log no longer holds the next offset; then the active controller's parked replies
//! below the new high watermark are released and its image is checked against the committed
//! one.

use super::errors::ControllerError;
use super::{active, change_log, Leadership, QuorumController};
use crate::metadata::image::MetadataImage;
use crate::raft::types::OffsetAndEpoch;
use crate::raft::{LogReadError, LogReader};

/// What [`QuorumController::replay_committed`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CatchUp {
    /// The image changed (a snapshot loaded or batches replayed).
    pub changed: bool,
    /// The latest snapshot was loaded first.
    pub loaded_snapshot: bool,
    /// Bytes of log batches replayed.
    pub log_bytes: u64,
    /// Committed records remain below the high watermark (the budget of one call was spent,
    /// or a snapshot was loaded): call again, with the time then.
    pub more: bool,
}

/// Bytes read from the log per replay step.
const REPLAY_READ_BYTES: usize = 1 << 20;

/// Log bytes one call replays at most (a few hundred thousand partition records). A node
/// catching up a large log replays it over several rounds, so the requests that arrive
/// meanwhile are served between them and an activation that follows a long catch-up starts
/// its brokers' sessions at the time it really happens (Kafka's MetadataLoader replays batch
/// by batch on its own queue, and its controller activates with the clock of that event).
pub const REPLAY_BYTES_PER_CALL: u64 = 16 << 20;

/// Bytes of a snapshot file read at a time while loading it: twice the largest data batch
/// (8 MiB, Kafka's `MAX_BATCH_SIZE_BYTES`), so each read holds at least one whole batch and
/// the load holds one read, never the whole file (1.3 GiB at 10M partitions).
const SNAPSHOT_READ_BYTES: usize = 16 << 20;

/// Snapshot `id` read part by part into a new image (Kafka's loader builds the new image
/// beside the one it publishes), with the bytes read. `None` when the snapshot cannot be
/// opened (nothing is loaded); an error when it stops being readable part way through.
/// Reads `read_bytes` at a time ([`SNAPSHOT_READ_BYTES`] outside tests).
pub(super) fn load_snapshot(
    log: &dyn LogReader,
    id: OffsetAndEpoch,
    read_bytes: usize,
) -> Result<Option<(MetadataImage, u64)>, LogReadError> {
    let mut read_bytes = read_bytes.max(1);
    let mut image = MetadataImage::new();
    let mut position = 0i64;
    loop {
        let Some(chunk) = log.read_snapshot(id, position, read_bytes) else {
            if position == 0 {
                return Ok(None);
            }
            return Err(LogReadError {
                offset: id.offset,
                reason: format!(
                    "snapshot {}-{} could not be read at position {position}",
                    id.offset, id.epoch
                ),
            });
        };
        if chunk.bytes.is_empty() {
            break;
        }
        let to_end = chunk.bytes.len() as i64 == chunk.size - position;
        let short = !to_end && chunk.bytes.len() < read_bytes;
        let used = image.load_snapshot_part(&chunk.bytes, "snapshot");
        position += used as i64;
        if used == 0 {
            // A tail that frames as no batch at all ends the load, as it ends any reader of
            // the file; a batch larger than the read (not written by Kafka or ferrokraft,
            // but valid) is read again, larger, unless the reader gave less than asked.
            if to_end {
                break;
            }
            if short {
                return Err(LogReadError {
                    offset: id.offset,
                    reason: format!(
                        "snapshot {}-{} gave {} bytes at position {position} where {read_bytes} were asked",
                        id.offset,
                        id.epoch,
                        chunk.bytes.len()
                    ),
                });
            }
            read_bytes = read_bytes.saturating_mul(2);
        }
    }
    image.next_offset = id.offset;
    Ok(Some((image, position.max(0) as u64)))
}

impl QuorumController {
    /// Replays what is committed below `high_watermark` into the committed image (loading
    /// the latest snapshot first when the log no longer holds the next offset), then releases
    /// the replies whose records are now committed.
    pub fn replay_committed(
        &mut self,
        log: &dyn LogReader,
        high_watermark: i64,
    ) -> Result<CatchUp, ControllerError> {
        // Replay logs a line per record (Kafka's words); they are written together when the
        // round ends, before anything it releases goes out.
        crate::logging::batched(|| self.replay_round(log, high_watermark))
    }

    fn replay_round(
        &mut self,
        log: &dyn LogReader,
        high_watermark: i64,
    ) -> Result<CatchUp, ControllerError> {
        let mut done = CatchUp::default();
        let mut spent = 0u64;
        // The active controller never loads a snapshot (Kafka's LeaderNeverLoadSnapshot).
        // Otherwise the latest snapshot is loaded when the log no longer holds the next
        // offset, and also by a new listener (nothing replayed yet) whatever the log holds,
        // once a high watermark is known: KafkaRaftClient.updateListenersProgress hands a
        // listener at STARTING_NEXT_OFFSET the latest snapshot.
        let new_listener = self.committed.next_offset == 0 && high_watermark > 0;
        if !self.is_active() {
            if let Some(id) = log.latest_snapshot_id() {
                if (new_listener || self.committed.next_offset < log.log_start_offset())
                    && id.offset > self.committed.next_offset
                {
                    if let Some((image, size_bytes)) = load_snapshot(log, id, SNAPSHOT_READ_BYTES)?
                    {
                        self.committed = image;
                        // Kafka replays a snapshot's records at its last contained offset.
                        self.registration_offsets = self
                            .committed
                            .brokers
                            .keys()
                            .map(|b| (*b, id.offset - 1))
                            .collect();
                        done.loaded_snapshot = true;
                        self.snapshot_loads += 1;
                        // A large snapshot spends the call's budget as the log would.
                        spent = size_bytes;
                    }
                }
            }
        }
        while self.committed.next_offset < high_watermark {
            if spent >= self.replay_budget_bytes {
                done.more = true;
                break;
            }
            let read_bytes = REPLAY_READ_BYTES
                .min(usize::try_from(self.replay_budget_bytes).unwrap_or(usize::MAX));
            let bytes = log.read(self.committed.next_offset, read_bytes)?;
            let offsets = &mut self.registration_offsets;
            let stats = &mut self.election_stats;
            let (replayed, replayed_bytes) = self.committed.replay_batches_observed(
                &bytes,
                high_watermark,
                "metadata log",
                &mut |image, offset, record| {
                    change_log::replayed(image, record);
                    stats.count(image, record);
                    active::track_registration(offsets, offset, record)
                },
            );
            if replayed == 0 {
                break;
            }
            done.log_bytes += replayed_bytes;
            spent += replayed_bytes;
        }
        // A snapshot that spent the budget by itself: whatever follows (the log, or an
        // activation) comes in the next call, with the time then.
        done.more |= spent >= self.replay_budget_bytes;
        done.changed = done.loaded_snapshot || done.log_bytes > 0;
        self.high_watermark = self.high_watermark.max(high_watermark);
        if let Leadership::Active(a) = &mut self.leadership {
            a.release_committed(self.high_watermark, &mut self.outputs);
            a.check_against_committed(&self.committed);
            a.share_committed(&self.committed);
        }
        Ok(done)
    }
}
