//! The node's durable state behind the Raft core: the `__cluster_metadata-0` log, its snapshots
//! and `quorum-state`. It answers the core's reads ([`LogReader`]) and carries out its writes.

use std::path::{Path, PathBuf};

use bytes::Bytes;

use crate::log::{FileLog, LogConfig, LogError, LogReader as _, ReplicatedLog};
use crate::raft::types::OffsetAndEpoch;
use crate::raft::types::ReplicaKey;
use crate::raft::{ElectionState, LogReader, SnapshotChunk};
use crate::records::BatchView;
use crate::snapshot::reader::RawSnapshot;
use crate::snapshot::writer::RawSnapshotWriter;
use crate::snapshot::{self, SnapshotId};
use crate::storage::{QuorumStateData, QuorumStateStore, StorageError};

/// A failure of the durable state; the node stops on it (Kafka's raft thread dies too).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The log failed.
    #[error(transparent)]
    Log(#[from] LogError),
    /// quorum-state failed.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// A snapshot file failed.
    #[error(transparent)]
    Snapshot(#[from] snapshot::SnapshotError),
}

/// Log, snapshots and quorum-state of one node.
#[derive(Debug)]
pub struct RaftStore {
    log: FileLog,
    partition_dir: PathBuf,
    /// Snapshot ids on disk, ascending.
    snapshots: Vec<SnapshotId>,
    quorum_state: QuorumStateStore,
    /// A snapshot being downloaded from the leader.
    download: Option<RawSnapshotWriter>,
    /// kraft.version: 0 writes quorum-state v0 with the voter ids, 1 writes v1.
    kraft_version: i16,
    voter_ids: Vec<i32>,
    /// The bootstrap metadata records (FeatureLevelRecord values from bootstrap.checkpoint or
    /// the 0-0 snapshot), written by a leader that finds the log empty.
    bootstrap_records: Vec<Bytes>,
}

impl RaftStore {
    /// Opens (and recovers) the log in `partition_dir`.
    pub fn open(
        partition_dir: &Path,
        segment_bytes: u64,
        kraft_version: i16,
        voter_ids: Vec<i32>,
    ) -> Result<Self, StoreError> {
        std::fs::create_dir_all(partition_dir)
            .map_err(|e| LogError::io("create", partition_dir, e))?;
        let (log, report) = FileLog::open(partition_dir, LogConfig { segment_bytes })?;
        for (file, position, reason) in &report.cuts {
            tracing::warn!(
                "Recovery cut {} at byte {position}: {reason}",
                file.display()
            );
        }
        let removed = snapshot::dir::clean_leftovers(partition_dir)?;
        for path in removed {
            tracing::info!("Removed snapshot leftover {}", path.display());
        }
        let snapshots = snapshot::dir::list_snapshots(partition_dir)?;
        Ok(Self {
            log,
            partition_dir: partition_dir.to_path_buf(),
            snapshots,
            quorum_state: QuorumStateStore::new(partition_dir),
            download: None,
            kraft_version,
            voter_ids,
            bootstrap_records: Vec::new(),
        })
    }

    /// Sets the bootstrap metadata record values (see [`RaftStore::bootstrap_records_due`]).
    pub fn set_bootstrap_records(&mut self, records: Vec<Bytes>) {
        self.bootstrap_records = records;
    }

    /// The bootstrap records a new leader must append first, if the log holds no metadata
    /// record yet: Kafka's active controller does the same on an empty log
    /// (`ActivationRecordsGenerator.recordsForEmptyLog`), and a Kafka controller replaying a
    /// log without metadata.version stops on a fatal fault. Empty when the log (or a snapshot
    /// past 0-0) already has data records.
    pub fn bootstrap_records_due(&self) -> Vec<Bytes> {
        if self.bootstrap_records.is_empty() || self.has_metadata_records() {
            return Vec::new();
        }
        self.bootstrap_records.clone()
    }

    /// Whether a snapshot past 0-0 or any data (non-control) batch exists.
    fn has_metadata_records(&self) -> bool {
        if self.snapshots.iter().any(|s| s.end_offset > 0) {
            return true;
        }
        let mut offset = self.log.start_offset();
        while offset < self.log.end_offset() {
            let Ok(read) = self.log.read(offset, 1 << 20) else {
                // Unreadable: do not write bootstrap records over unknown contents.
                return true;
            };
            let bytes = &read.bytes;
            let mut pos = 0;
            let mut next = offset;
            while pos + 12 <= bytes.len() {
                let len = i32::from_be_bytes([
                    bytes[pos + 8],
                    bytes[pos + 9],
                    bytes[pos + 10],
                    bytes[pos + 11],
                ]);
                let end = pos + 12 + len.max(0) as usize;
                let Some(batch) = bytes.get(pos..end) else {
                    break;
                };
                match BatchView::new(batch) {
                    Ok(v) if !v.is_control() => return true,
                    Ok(v) => next = v.next_offset(),
                    Err(_) => return true,
                }
                pos = end;
            }
            if next <= offset {
                return true;
            }
            offset = next;
        }
        false
    }

    /// The persisted election state, if any.
    pub fn read_election_state(&self) -> Result<Option<ElectionState>, StoreError> {
        let Some(data) = self.quorum_state.read()? else {
            return Ok(None);
        };
        Ok(Some(ElectionState {
            epoch: data.leader_epoch,
            leader_id: (data.leader_id >= 0).then_some(data.leader_id),
            voted_key: (data.voted_id >= 0)
                .then(|| ReplicaKey::new(data.voted_id, data.voted_directory_id)),
        }))
    }

    /// Writes quorum-state (tmp, fsync, rename, fsync dir).
    pub fn persist_election_state(&mut self, state: &ElectionState) -> Result<(), StoreError> {
        let leader = state.leader_id.unwrap_or(-1);
        let voted = state.voted_key.map_or(-1, |k| k.id);
        let data = if self.kraft_version == 0 {
            QuorumStateData::v0(state.epoch, leader, voted, self.voter_ids.clone())
        } else {
            let dir = state
                .voted_key
                .map_or(uuid::Uuid::nil(), |k| k.directory_id);
            QuorumStateData::v1(state.epoch, leader, voted, dir)
        };
        self.quorum_state.write(&data)?;
        Ok(())
    }

    /// Appends a batch the leader built.
    pub fn append_as_leader(&mut self, batch: &[u8], epoch: i32) -> Result<(), StoreError> {
        self.log.append_as_leader(batch, epoch)?;
        Ok(())
    }

    /// Appends fetched batches verbatim.
    pub fn append_as_follower(&mut self, records: &[u8], epoch: i32) -> Result<(), StoreError> {
        self.log.append_as_follower(records, epoch)?;
        Ok(())
    }

    /// Truncates the log to `offset`.
    pub fn truncate(&mut self, offset: i64) -> Result<(), StoreError> {
        self.log.truncate_to(offset)?;
        Ok(())
    }

    /// fsyncs the log.
    pub fn flush(&mut self) -> Result<(), StoreError> {
        self.log.flush()?;
        Ok(())
    }

    /// Appends downloaded bytes to snapshot `id` at `position` (0 starts a new `.part`).
    pub fn write_snapshot_chunk(
        &mut self,
        id: OffsetAndEpoch,
        position: i64,
        bytes: &[u8],
    ) -> Result<(), StoreError> {
        let sid = SnapshotId {
            end_offset: id.offset,
            epoch: id.epoch,
        };
        let restart = position == 0 || self.download.as_ref().is_none_or(|w| w.id() != sid);
        if restart {
            // Dropping a previous writer removes its `.part`.
            self.download = Some(RawSnapshotWriter::create(&self.partition_dir, sid)?);
        }
        if let Some(w) = self.download.as_mut() {
            w.append(bytes)?;
        }
        Ok(())
    }

    /// Freezes the downloaded snapshot `id` and restarts the log at its end offset.
    pub fn install_snapshot(&mut self, id: OffsetAndEpoch) -> Result<(), StoreError> {
        let sid = SnapshotId {
            end_offset: id.offset,
            epoch: id.epoch,
        };
        let writer = self
            .download
            .take()
            .filter(|w| w.id() == sid)
            .ok_or_else(|| {
                snapshot::SnapshotError::State(format!(
                    "no download of snapshot {} in progress",
                    sid.file_stem()
                ))
            })?;
        writer.freeze()?;
        self.log.truncate_fully_and_start_at(id.offset)?;
        self.log.flush()?;
        // Older snapshots are superseded (Kafka forgets them on truncateToLatestSnapshot).
        for old in std::mem::take(&mut self.snapshots) {
            if old != sid {
                snapshot::dir::delete_snapshot(&self.partition_dir, old)?;
            }
        }
        self.snapshots = vec![sid];
        Ok(())
    }

    /// Drops a partial download.
    pub fn abandon_snapshot(&mut self) {
        self.download = None;
    }

    /// The partition directory.
    pub fn partition_dir(&self) -> &Path {
        &self.partition_dir
    }

    /// Log end offset (for status).
    pub fn log_end_offset(&self) -> i64 {
        self.log.end_offset()
    }
}

fn to_id(s: &SnapshotId) -> OffsetAndEpoch {
    OffsetAndEpoch::new(s.end_offset, s.epoch)
}

impl LogReader for RaftStore {
    fn log_start_offset(&self) -> i64 {
        self.log.start_offset()
    }

    fn end_offset(&self) -> OffsetAndEpoch {
        let epoch = self
            .log
            .last_epoch()
            .or_else(|| self.snapshots.last().map(|s| s.epoch))
            .unwrap_or(0);
        OffsetAndEpoch::new(self.log.end_offset(), epoch)
    }

    fn end_offset_for_epoch(&self, epoch: i32) -> OffsetAndEpoch {
        let found = self.log.end_offset_for_epoch(epoch);
        // KafkaMetadataLog: an epoch ending exactly at the earliest snapshot is that snapshot.
        if let Some(earliest) = self.snapshots.first() {
            if found.offset == earliest.end_offset && found.epoch == epoch {
                return to_id(earliest);
            }
        }
        OffsetAndEpoch::new(found.offset, found.epoch)
    }

    fn read(&self, offset: i64, max_bytes: usize) -> Bytes {
        match self.log.read(offset, max_bytes) {
            Ok(read) => Bytes::from(read.bytes),
            Err(e) => {
                tracing::warn!("log read at {offset} failed: {e}");
                Bytes::new()
            }
        }
    }

    fn latest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
        self.snapshots.last().map(to_id)
    }

    fn earliest_snapshot_id(&self) -> Option<OffsetAndEpoch> {
        self.snapshots.first().map(to_id)
    }

    fn read_snapshot(
        &self,
        id: OffsetAndEpoch,
        position: i64,
        max_bytes: usize,
    ) -> Option<SnapshotChunk> {
        let sid = SnapshotId {
            end_offset: id.offset,
            epoch: id.epoch,
        };
        if !self.snapshots.contains(&sid) {
            return None;
        }
        let raw = RawSnapshot::open(&self.partition_dir, sid).ok()?;
        let size = raw.size_bytes() as i64;
        let bytes = if position >= 0 && position < size {
            raw.read_chunk(position as u64, max_bytes).ok()?
        } else {
            Vec::new()
        };
        Some(SnapshotChunk {
            bytes: Bytes::from(bytes),
            size,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::records::batch::{build_control_batch, build_data_batch};
    use crate::records::ControlRecord;

    /// A Kafka controller following a leader that never wrote metadata.version dies
    /// ("Unknown metadata version for FeaturesImage"); Kafka's own active controller writes
    /// the bootstrap records when its log holds no metadata record, and so must we.
    #[test]
    fn bootstrap_records_are_due_until_the_log_holds_a_data_batch() {
        let dir = tempfile::tempdir().unwrap();
        let mut store = RaftStore::open(dir.path(), 1 << 20, 0, vec![1, 2, 3]).unwrap();
        assert!(
            store.bootstrap_records_due().is_empty(),
            "nothing configured"
        );
        let records = vec![
            Bytes::from_static(&[1, 12, 0, 0]),
            Bytes::from_static(&[1, 12, 0, 1]),
        ];
        store.set_bootstrap_records(records.clone());
        assert_eq!(store.bootstrap_records_due(), records, "empty log");
        // Control batches (LeaderChange, KRaftVersion) do not count as metadata.
        let control = build_control_batch(0, 1, 5, &[ControlRecord::kraft_version(0)]).unwrap();
        store.append_as_leader(&control, 1).unwrap();
        let control = build_control_batch(0, 2, 6, &[ControlRecord::kraft_version(0)]).unwrap();
        store.append_as_leader(&control, 2).unwrap();
        assert_eq!(
            store.bootstrap_records_due(),
            records,
            "only control batches"
        );
        let data = build_data_batch(0, 2, 7, &[&[1, 20, 0, 0]]).unwrap();
        store.append_as_leader(&data, 2).unwrap();
        assert!(
            store.bootstrap_records_due().is_empty(),
            "a data batch exists"
        );
        // Truncating it away makes them due again (a new leader overwrote an uncommitted
        // bootstrap).
        store.truncate(2).unwrap();
        assert_eq!(store.bootstrap_records_due(), records);
    }
}
