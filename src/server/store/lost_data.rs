//! A voter whose log is gone must not rejoin as if it never had data.
//!
//! Kafka starts such a voter: an empty or missing `__cluster_metadata-0` log is recovered as an
//! empty log, and the node votes with last offset 0. A voter that had acknowledged committed
//! records and lost them can then help elect a leader without them, and the records are lost
//! for the whole quorum. Before the log is opened (recovery would rewrite the checkpoint and
//! destroy the evidence), this looks for signs that the node had data while its log is missing:
//!
//! - a `leader-epoch-checkpoint` entry (written just before the first batch of its epoch, by a
//!   leader and by a follower alike);
//! - `quorum-state` naming this node as the leader of an epoch (a leader writes its first
//!   batch as soon as it is elected);
//! - a snapshot ending above offset 0 (the bootstrap `0-0` checkpoint does not count), named in
//!   the refusal but not refusing alone: a directory holding only a snapshot is also what a
//!   deliberate restore from a snapshot looks like (the node then starts at its end, as Kafka's
//!   `truncateToLatestSnapshot` does), so that is logged at WARN. For the same reason the two
//!   signs above count only for an epoch beyond the latest snapshot's.
//!
//! A log is missing when no segment file holds a byte and none starts above offset 0 (a log
//! restarted at a snapshot has an empty segment named after the snapshot's end offset).
//! `ferrokraft.recovery.accept.data.loss=true` starts the node anyway; the safe fix is to
//! replace the voter (docs/recovery.md).

use std::fs;
use std::io;
use std::path::Path;

use super::StoreError;
use crate::log::epoch_cache::{EpochCheckpointFile, LEADER_EPOCH_CHECKPOINT_FILE};
use crate::log::LogError;
use crate::records::batch::MAX_BATCH_SIZE_BYTES;
use crate::records::FileFramer;
use crate::snapshot;
use crate::storage::QuorumStateStore;

/// The config key that accepts the loss.
pub const ACCEPT_DATA_LOSS_KEY: &str = "ferrokraft.recovery.accept.data.loss";

/// Whether the log in `dir` is missing: no segment holds a byte, none starts above 0.
fn log_missing(dir: &Path) -> Result<bool, StoreError> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(true),
        Err(e) => return Err(LogError::io("list", dir, e).into()),
    };
    for entry in entries {
        let entry = entry.map_err(|e| LogError::io("list", dir, e))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(stem) = name.strip_suffix(".log") else {
            continue;
        };
        if stem.len() != 20 || !stem.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if stem.bytes().any(|b| b != b'0') || holds_a_batch(&entry.path())? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether the segment at `path` starts with a whole, CRC-valid batch. A segment of zeros or
/// of garbage (what a power loss can leave) is as missing as an empty one: recovery would cut
/// it to nothing and rewrite the checkpoint, destroying the evidence.
fn holds_a_batch(path: &Path) -> Result<bool, StoreError> {
    let file = fs::File::open(path).map_err(|e| LogError::io("open", path, e))?;
    let len = file
        .metadata()
        .map_err(|e| LogError::io("stat", path, e))?
        .len();
    let mut buf = Vec::new();
    let mut framer = FileFramer::new(&file, 0, len, MAX_BATCH_SIZE_BYTES);
    let first = framer
        .next_batch_into(&mut buf)
        .map_err(|e| LogError::io("read", path, e))?;
    Ok(first.is_some())
}

/// What in `dir` shows that a node had data while its log is missing.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Evidence {
    /// Signs that refuse the start: checkpoint entries, leadership in quorum-state.
    pub decisive: Vec<String>,
    /// The latest snapshot past offset 0.
    pub snapshot: Option<String>,
}

/// What in `dir` shows that node `node_id` had data, when its log is missing; empty when the
/// log is there or nothing shows it.
pub fn evidence_of_lost_data(dir: &Path, node_id: i32) -> Result<Evidence, StoreError> {
    let mut found = Evidence::default();
    if !log_missing(dir)? {
        return Ok(found);
    }
    // The latest snapshot past offset 0: what the node can restart from.
    let snapshot = snapshot::dir::list_snapshots(dir)?
        .into_iter()
        .rev()
        .find(|s| s.end_offset > 0);
    // A sign counts when it shows an epoch beyond the snapshot's: the node wrote records in
    // an epoch the snapshot cannot hold. Within the snapshot's epoch it is what restoring a
    // voter from a snapshot looks like (the node restarts at its end, with a WARN).
    let beyond_snapshot = |epoch: i32| snapshot.is_none_or(|s| epoch > s.epoch);
    // A malformed checkpoint fails the log's open right after, with its line.
    if let Ok(cache) = EpochCheckpointFile::new(dir).read() {
        if let Some(e) = cache.latest().filter(|e| beyond_snapshot(e.epoch)) {
            found.decisive.push(format!(
                "{LEADER_EPOCH_CHECKPOINT_FILE} says epoch {} started at offset {}",
                e.epoch, e.start_offset
            ));
        }
    }
    if let Ok(Some(q)) = QuorumStateStore::new(dir).read() {
        if q.leader_id == node_id && q.leader_epoch > 0 && beyond_snapshot(q.leader_epoch) {
            found.decisive.push(format!(
                "quorum-state says this node (id {node_id}) was the leader of epoch {}",
                q.leader_epoch
            ));
        }
    }
    found.snapshot = snapshot.map(|s| {
        format!(
            "snapshot {} holds offsets up to {}",
            s.file_name(),
            s.end_offset - 1
        )
    });
    Ok(found)
}

/// Refuses (unless `accept`) to open a voter whose log is missing while it had data.
pub fn check_lost_data(dir: &Path, node_id: i32, accept: bool) -> Result<(), StoreError> {
    let found = evidence_of_lost_data(dir, node_id)?;
    if found.decisive.is_empty() {
        if let Some(snapshot) = &found.snapshot {
            tracing::warn!(
                "The metadata log in {} is missing and {snapshot}: starting from that \
                 snapshot. If this voter had records after it, stop it and replace it \
                 (docs/recovery.md)",
                dir.display()
            );
        }
        return Ok(());
    }
    let mut all = found.decisive;
    all.extend(found.snapshot);
    let all = all.join("; ");
    if accept {
        tracing::warn!(
            "The metadata log in {} is empty or missing, but {all}; starting anyway because \
             {ACCEPT_DATA_LOSS_KEY}=true: this node rejoins without those records",
            dir.display()
        );
        return Ok(());
    }
    Err(StoreError::LostData {
        dir: dir.to_path_buf(),
        found: all,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        fs::write(dir.join(name), text).unwrap();
    }

    #[test]
    fn a_fresh_or_intact_log_is_fine() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        assert_eq!(evidence_of_lost_data(d, 1).unwrap(), Evidence::default());
        // Freshly formatted: the bootstrap snapshot, an empty segment, an empty checkpoint, a
        // vote in quorum-state.
        write(d, "00000000000000000000-0000000000.checkpoint", "x");
        write(d, "00000000000000000000.log", "");
        write(d, LEADER_EPOCH_CHECKPOINT_FILE, "0\n0\n");
        write(
            d,
            "quorum-state",
            r#"{"leaderId":-1,"leaderEpoch":1,"votedId":1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}"#,
        );
        assert_eq!(evidence_of_lost_data(d, 1).unwrap(), Evidence::default());
        // Even epoch 1 from offset 0 shows a batch was being written.
        write(d, LEADER_EPOCH_CHECKPOINT_FILE, "0\n1\n1 0\n");
        assert_eq!(evidence_of_lost_data(d, 1).unwrap().decisive.len(), 1);
        // Data in the log: whatever the rest says, nothing is missing.
        write(d, LEADER_EPOCH_CHECKPOINT_FILE, "0\n2\n1 0\n2 90\n");
        let mut builder = crate::records::batch::BatchBuilder::new(0, 1, 0, false);
        builder.append(None, b"a record").unwrap();
        let batch = builder.finish().unwrap();
        fs::write(d.join("00000000000000000000.log"), &batch).unwrap();
        assert_eq!(evidence_of_lost_data(d, 1).unwrap(), Evidence::default());
        // Restarted at a snapshot: an empty segment named after its end offset.
        fs::remove_file(d.join("00000000000000000000.log")).unwrap();
        write(d, "00000000000000000120.log", "");
        write(d, "00000000000000000120-0000000002.checkpoint", "x");
        assert_eq!(evidence_of_lost_data(d, 1).unwrap(), Evidence::default());
    }

    #[test]
    fn a_missing_log_with_evidence_is_refused_unless_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        // A snapshot alone is a restore: started from, with a WARN.
        write(d, "00000000000000000120-0000000002.checkpoint", "x");
        let found = evidence_of_lost_data(d, 1).unwrap();
        assert!(found.decisive.is_empty(), "{found:?}");
        assert!(found.snapshot.unwrap().contains("offsets up to 119"));
        check_lost_data(d, 1, false).unwrap();
        // Signs within the snapshot's epoch (2) are a restore too.
        write(d, LEADER_EPOCH_CHECKPOINT_FILE, "0\n2\n1 0\n2 90\n");
        write(
            d,
            "quorum-state",
            r#"{"leaderId":1,"leaderEpoch":2,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}"#,
        );
        assert!(evidence_of_lost_data(d, 1).unwrap().decisive.is_empty());
        check_lost_data(d, 1, false).unwrap();
        // Beyond it, they show records the snapshot cannot hold.
        write(d, LEADER_EPOCH_CHECKPOINT_FILE, "0\n3\n1 0\n2 90\n3 130\n");
        write(
            d,
            "quorum-state",
            r#"{"leaderId":1,"leaderEpoch":3,"votedId":-1,"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}"#,
        );
        let found = evidence_of_lost_data(d, 1).unwrap();
        assert_eq!(found.decisive.len(), 2, "{found:?}");
        assert!(
            found.decisive[0].contains("epoch 3 started at offset 130"),
            "{found:?}"
        );
        assert!(found.decisive[1].contains("leader of epoch 3"), "{found:?}");
        // Another node's leadership is no evidence.
        assert_eq!(evidence_of_lost_data(d, 2).unwrap().decisive.len(), 1);
        let err = check_lost_data(d, 1, false).unwrap_err().to_string();
        assert!(err.contains(ACCEPT_DATA_LOSS_KEY), "{err}");
        assert!(err.contains("offset 130"), "{err}");
        assert!(err.contains("offsets up to 119"), "{err}");
        check_lost_data(d, 1, true).unwrap();
        // An empty segment 0 is as missing as none, and so is one of zeros or garbage.
        write(d, "00000000000000000000.log", "");
        assert!(check_lost_data(d, 1, false).is_err());
        fs::write(d.join("00000000000000000000.log"), vec![0u8; 8192]).unwrap();
        assert!(check_lost_data(d, 1, false).is_err());
        write(
            d,
            "00000000000000000000.log",
            "some bytes that are no batch at all",
        );
        assert!(check_lost_data(d, 1, false).is_err());
    }
}
