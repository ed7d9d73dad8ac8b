//! The simulated state machine's snapshots, as Kafka's simulation (`ReplicatedCounter`) takes
//! them: every node now and then snapshots its committed state at a batch boundary at or below
//! its high watermark, and now and then deletes older snapshots and advances its log start to
//! the latest one (Kafka's log cleaning). A follower whose fetch offset falls below its
//! leader's log start must then download a snapshot with FetchSnapshot.
//!
//! The state is the committed data itself, so a snapshot is its fingerprint: 8 bytes of end
//! offset and 8 bytes of an FNV-1a hash over every committed batch below it, chained from the
//! previous snapshot. `ConsistentCommittedData` recomputes it from the batches it saw committed.
//! (The core treats snapshot bytes as opaque; only kraft.version 1 voter sets are read from
//! them, and the voter-change simulation does not take snapshots.)

use bytes::Bytes;

use super::node::SimNode;
use crate::raft::types::OffsetAndEpoch;
use crate::raft::LogReader;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// Continues an FNV-1a hash over `bytes`.
pub fn hash_continue(mut hash: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(FNV_PRIME);
    }
    hash
}

/// The hash of an empty state (no committed batch).
pub fn empty_hash() -> u64 {
    FNV_OFFSET
}

/// The bytes of a snapshot ending at `end_offset` whose committed batches hash to `hash`.
pub fn encode(end_offset: i64, hash: u64) -> Bytes {
    let mut out = Vec::with_capacity(16);
    out.extend_from_slice(&end_offset.to_be_bytes());
    out.extend_from_slice(&hash.to_be_bytes());
    Bytes::from(out)
}

/// (end offset, hash) of snapshot bytes; `None` if they are not 16 bytes.
pub fn decode(bytes: &[u8]) -> Option<(i64, u64)> {
    let offset = i64::from_be_bytes(bytes.get(..8)?.try_into().ok()?);
    let hash = u64::from_be_bytes(bytes.get(8..16)?.try_into().ok()?);
    (bytes.len() == 16).then_some((offset, hash))
}

/// Takes a snapshot at the largest batch boundary at or below the node's high watermark and
/// its flushed end, if that is past its latest snapshot. Returns the id taken.
pub fn take(node: &mut SimNode) -> Option<OffsetAndEpoch> {
    let hw = node.core()?.high_watermark()?;
    let log = &node.disk.log;
    let limit = hw.min(log.flushed_end_offset());
    let (from, base_hash) = match log.latest_snapshot_id() {
        Some(id) => {
            let bytes = log.snapshots.get(&(id.offset, id.epoch))?;
            let (offset, hash) = decode(bytes)?;
            (offset, hash)
        }
        None => (log.log_start_offset(), empty_hash()),
    };
    let batches = log.batches_between(from, limit);
    let mut hash = base_hash;
    let mut end = None;
    for (base, next, bytes) in &batches {
        if *next > limit {
            break;
        }
        hash = hash_continue(hash, bytes);
        end = Some((*base, *next));
    }
    let (last_base, end_offset) = end?;
    let epoch = log.batch_epoch(last_base)?;
    let id = OffsetAndEpoch::new(end_offset, epoch);
    node.disk.log.add_snapshot(id, encode(end_offset, hash));
    Some(id)
}

/// Deletes every snapshot but the latest and moves the log start to it (Kafka deletes log
/// segments below its oldest retained snapshot). Returns the new log start, if it moved.
pub fn clean(node: &mut SimNode) -> Option<i64> {
    let log = &mut node.disk.log;
    let latest = log.latest_snapshot_id()?;
    if latest.offset <= log.log_start_offset() {
        return None;
    }
    log.snapshots
        .retain(|(offset, epoch), _| (*offset, *epoch) == (latest.offset, latest.epoch));
    log.set_start_offset(latest.offset);
    Some(latest.offset)
}
