//! The node's durable state behind the Raft core: the `__cluster_metadata-0` log, its snapshots
//! and `quorum-state`. It answers the core's reads ([`LogReader`]) and carries out its writes.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use bytes::Bytes;

use crate::log::{FileLog, LocalLog, LogConfig, LogError};
use crate::raft::types::OffsetAndEpoch;
use crate::raft::types::ReplicaKey;
use crate::raft::{ElectionState, LogReadError, LogReader, SnapshotChunk};
use crate::snapshot::reader::RawSnapshot;
use crate::snapshot::writer::RawSnapshotWriter;
use crate::snapshot::{self, SnapshotId};
use crate::storage::{QuorumStateData, QuorumStateStore, StorageError};

pub mod lost_data;
pub mod retention;

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
    /// The log is empty or missing while the directory shows the node had data
    /// (see [`lost_data`]).
    #[error(
        "refusing to start: the metadata log in {dir} is empty or missing, but {found}. This \
         voter had data; rejoining with an empty log could elect a leader without committed \
         records. Replace the voter (docs/recovery.md: remove-controller, wipe, format, \
         add-controller), or set ferrokraft.recovery.accept.data.loss=true to start anyway"
    )]
    LostData {
        /// The partition directory.
        dir: PathBuf,
        /// What shows the node had data.
        found: String,
    },
    /// The log and its snapshots do not fit together (Kafka refuses to start too).
    #[error("inconsistent snapshot state in {dir}: {reason}")]
    Inconsistent {
        /// The partition directory.
        dir: PathBuf,
        /// What does not fit.
        reason: String,
    },
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
    /// The snapshot last read (FetchSnapshot reads one in chunks): opening validates the whole
    /// file, so it is opened once, not once per chunk.
    reading: RefCell<Option<RawSnapshot>>,
    /// kraft.version: 0 writes quorum-state v0 with the voter ids, 1 writes v1.
    kraft_version: i16,
    voter_ids: Vec<i32>,
    /// The bootstrap metadata records (FeatureLevelRecord values from bootstrap.checkpoint or
    /// the 0-0 snapshot), written by a leader that finds the log empty.
    bootstrap_records: Vec<Bytes>,
}

impl RaftStore {
    /// [`RaftStore::open`] for voter `node_id`, first refusing (unless `accept_data_loss`) a
    /// log that is missing while the directory shows the node had data
    /// ([`lost_data::check_lost_data`]), before recovery touches anything.
    pub fn open_node(
        partition_dir: &Path,
        log_config: LogConfig,
        kraft_version: i16,
        voter_ids: Vec<i32>,
        node_id: i32,
        accept_data_loss: bool,
    ) -> Result<Self, StoreError> {
        lost_data::check_lost_data(partition_dir, node_id, accept_data_loss)?;
        Self::open(partition_dir, log_config, kraft_version, voter_ids)
    }

    /// Opens (and recovers) the log in `partition_dir`.
    pub fn open(
        partition_dir: &Path,
        log_config: LogConfig,
        kraft_version: i16,
        voter_ids: Vec<i32>,
    ) -> Result<Self, StoreError> {
        std::fs::create_dir_all(partition_dir)
            .map_err(|e| LogError::io("create", partition_dir, e))?;
        let (log, report) = FileLog::open(partition_dir, log_config)?;
        for (file, position, reason) in &report.cuts {
            tracing::warn!(
                "Recovery cut {} at byte {position}: {reason}",
                file.display()
            );
        }
        let snapshots = recover_snapshots(partition_dir, &log)?;
        let mut store = Self {
            log,
            partition_dir: partition_dir.to_path_buf(),
            snapshots,
            quorum_state: QuorumStateStore::new(partition_dir),
            download: None,
            reading: RefCell::new(None),
            kraft_version,
            voter_ids,
            bootstrap_records: Vec::new(),
        };
        store.truncate_to_latest_snapshot()?;
        Ok(store)
    }

    /// Kafka's `truncateToLatestSnapshot` on open: a snapshot past the log (a follower that
    /// crashed between downloading it and truncating) restarts the log at its end offset, and
    /// the snapshots before it are deleted.
    fn truncate_to_latest_snapshot(&mut self) -> Result<(), StoreError> {
        let Some(latest) = self.snapshots.last().copied() else {
            return Ok(());
        };
        let log_epoch = self.log.last_epoch().unwrap_or(0);
        let past_log = latest.epoch > log_epoch
            || (latest.epoch == log_epoch && latest.end_offset > self.log.end_offset());
        if !past_log {
            return Ok(());
        }
        tracing::info!(
            "Truncating the log fully to start at {} after snapshot {}",
            latest.end_offset,
            latest.file_stem()
        );
        self.log.truncate_fully_and_start_at(latest.end_offset)?;
        self.log.flush()?;
        for old in std::mem::take(&mut self.snapshots) {
            if old != latest {
                tracing::info!("Deleting snapshot {} below the log start", old.file_stem());
                snapshot::dir::delete_snapshot(&self.partition_dir, old)?;
            }
        }
        self.snapshots = vec![latest];
        Ok(())
    }

    /// Sets the bootstrap metadata record values (see [`RaftStore::bootstrap_records`]).
    pub fn set_bootstrap_records(&mut self, records: Vec<Bytes>) {
        self.bootstrap_records = records;
    }

    /// The bootstrap metadata records (what an activating leader appends to an empty log).
    pub fn bootstrap_records(&self) -> &[Bytes] {
        &self.bootstrap_records
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

    /// Sets the quorum-state format: kraft.version 0 writes v0 with the voter ids, 1 writes v1.
    pub fn set_quorum_state_format(&mut self, kraft_version: i16, voter_ids: Vec<i32>) {
        self.kraft_version = kraft_version;
        self.voter_ids = voter_ids;
    }

    /// The voters and kraft.version of the latest snapshot on disk, if it carries any.
    pub fn latest_snapshot_voters(&self) -> Option<(Option<crate::raft::types::VoterSet>, i16)> {
        let latest = self.snapshots.last()?;
        let raw = RawSnapshot::open(&self.partition_dir, *latest).ok()?;
        let bytes = raw.read_chunk(0, raw.size_bytes() as usize).ok()?;
        crate::raft::voters::snapshot_voters(&bytes)
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

    /// Everything below this log offset is fsynced.
    pub fn flushed_offset(&self) -> i64 {
        self.log.flushed_offset()
    }

    /// Log end offset (for status).
    pub fn log_end_offset(&self) -> i64 {
        self.log.end_offset()
    }
}

/// Kafka's snapshot recovery on open: a log that starts above 0 needs a snapshot at or above
/// its start (else refuse to start, before deleting anything); then `.part`/`.deleted`
/// leftovers and snapshots ending below the log start are deleted. Returns the rest, oldest
/// first.
fn recover_snapshots(dir: &Path, log: &FileLog) -> Result<Vec<SnapshotId>, StoreError> {
    let start = log.start_offset();
    let mut snapshots = snapshot::dir::list_snapshots(dir)?;
    if start > 0 && snapshots.last().is_none_or(|s| s.end_offset < start) {
        return Err(StoreError::Inconsistent {
            dir: dir.to_path_buf(),
            reason: format!(
                "the log starts at offset {start}, so there must be a snapshot ending at or above it, but the latest snapshot is {}",
                snapshots.last().map_or("none".to_string(), SnapshotId::file_name)
            ),
        });
    }
    for path in snapshot::dir::clean_leftovers(dir)? {
        tracing::info!("Deleted unneeded snapshot file {}", path.display());
    }
    for old in snapshots.iter().filter(|s| s.end_offset < start) {
        snapshot::dir::delete_snapshot(dir, *old)?;
        tracing::info!(
            "Deleted unneeded snapshot file {}",
            old.path_in(dir).display()
        );
    }
    snapshots.retain(|s| s.end_offset >= start);
    Ok(snapshots)
}

fn to_id(s: &SnapshotId) -> OffsetAndEpoch {
    OffsetAndEpoch::new(s.end_offset, s.epoch)
}

/// A failed read of the log, logged once with the directory (the node then stops).
fn read_error(dir: &Path, offset: i64, e: &crate::log::LogError) -> LogReadError {
    tracing::error!("cannot read {} at offset {offset}: {e}", dir.display());
    LogReadError {
        offset,
        reason: format!("{}: {e}", dir.display()),
    }
}

impl LogReader for RaftStore {
    fn log_start_offset(&self) -> i64 {
        self.log.start_offset()
    }

    fn end_offset(&self) -> OffsetAndEpoch {
        crate::log::metadata_end_offset(&self.log, self.latest_snapshot_id())
    }

    fn end_offset_for_epoch(&self, epoch: i32) -> OffsetAndEpoch {
        crate::log::metadata_end_offset_for_epoch(
            &self.log,
            epoch,
            self.earliest_snapshot_id(),
            self.latest_snapshot_id(),
        )
    }

    fn read(&self, offset: i64, max_bytes: usize) -> Result<Bytes, LogReadError> {
        self.log
            .read(offset, max_bytes)
            .map(|read| Bytes::from(read.bytes))
            .map_err(|e| read_error(&self.partition_dir, offset, &e))
    }

    fn read_control_batches(
        &self,
        offset: i64,
        max_bytes: usize,
    ) -> Result<(Bytes, i64), LogReadError> {
        self.log
            .read_control_batches(offset, max_bytes)
            .map(|(bytes, next)| (Bytes::from(bytes), next))
            .map_err(|e| read_error(&self.partition_dir, offset, &e))
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
        let mut reading = self.reading.borrow_mut();
        if reading.as_ref().is_none_or(|r| r.id() != sid) {
            *reading = Some(RawSnapshot::open(&self.partition_dir, sid).ok()?);
        }
        let raw = reading.as_ref()?;
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

/// The node state machine writes through the store; every write is complete (fsynced where
/// Kafka fsyncs) when it returns.
impl crate::node::NodeStore for RaftStore {
    type Error = StoreError;

    fn persist_election_state(
        &mut self,
        state: &ElectionState,
        kraft_version: i16,
        voter_ids: Vec<i32>,
    ) -> Result<(), StoreError> {
        self.set_quorum_state_format(kraft_version, voter_ids);
        RaftStore::persist_election_state(self, state)
    }

    fn append_as_leader(&mut self, batch: &[u8], epoch: i32) -> Result<(), StoreError> {
        RaftStore::append_as_leader(self, batch, epoch)
    }

    fn append_as_follower(&mut self, records: &[u8], epoch: i32) -> Result<(), StoreError> {
        RaftStore::append_as_follower(self, records, epoch)
    }

    fn truncate(&mut self, offset: i64) -> Result<(), StoreError> {
        RaftStore::truncate(self, offset)
    }

    fn flush(&mut self) -> Result<(), StoreError> {
        RaftStore::flush(self)
    }

    fn write_snapshot_chunk(
        &mut self,
        id: OffsetAndEpoch,
        position: i64,
        bytes: &[u8],
    ) -> Result<(), StoreError> {
        RaftStore::write_snapshot_chunk(self, id, position, bytes)
    }

    fn install_snapshot(&mut self, id: OffsetAndEpoch) -> Result<(), StoreError> {
        RaftStore::install_snapshot(self, id)
    }

    fn abandon_snapshot(&mut self) {
        RaftStore::abandon_snapshot(self)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    //! Start-up snapshot rules of Kafka 4.1's `KafkaMetadataLog.apply` (`recoverSnapshots`,
    //! `truncateToLatestSnapshot`).
    use super::*;
    use crate::records::build_data_batch;

    const SEGMENT_BYTES: u64 = 1024 * 1024;

    /// A log with `records` one-record batches in `epoch`, truncated to start at `start`.
    fn make_log(dir: &Path, epoch: i32, records: i64, start: Option<i64>) {
        let (mut log, _) = FileLog::open(
            dir,
            LogConfig {
                segment_bytes: SEGMENT_BYTES,
                ..LogConfig::default()
            },
        )
        .unwrap();
        if let Some(start) = start {
            log.truncate_fully_and_start_at(start).unwrap();
        }
        log.initialize_leader_epoch(epoch).unwrap();
        for _ in 0..records {
            let b = build_data_batch(0, epoch, 0, &[b"v".as_slice()]).unwrap();
            log.append_as_leader(&b, epoch).unwrap();
        }
        log.close().unwrap();
    }

    fn put_snapshot(dir: &Path, end_offset: i64, epoch: i32) -> SnapshotId {
        let id = SnapshotId { end_offset, epoch };
        std::fs::write(id.path_in(dir), b"snapshot").unwrap();
        id
    }

    fn open(dir: &Path) -> Result<RaftStore, StoreError> {
        RaftStore::open(
            dir,
            LogConfig {
                segment_bytes: SEGMENT_BYTES,
                ..LogConfig::default()
            },
            0,
            vec![1],
        )
    }

    #[test]
    fn snapshots_below_the_log_start_and_leftovers_are_deleted_on_open() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        make_log(dir, 2, 5, Some(10));
        let below = put_snapshot(dir, 5, 1);
        let at = put_snapshot(dir, 10, 1);
        let part = dir.join(format!(
            "{}.checkpoint.part",
            SnapshotId {
                end_offset: 12,
                epoch: 2
            }
            .file_stem()
        ));
        std::fs::write(&part, b"partial").unwrap();
        let store = open(dir).unwrap();
        assert_eq!(store.snapshots, vec![at]);
        assert!(!below.path_in(dir).exists());
        assert!(!part.exists());
        assert!(at.path_in(dir).exists());
        assert_eq!(store.log_start_offset(), 10);
        assert_eq!(store.log_end_offset(), 15);
        assert_eq!(
            store.earliest_snapshot_id(),
            Some(OffsetAndEpoch::new(10, 1))
        );
    }

    #[test]
    fn a_log_starting_above_every_snapshot_refuses_to_open_and_deletes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        make_log(dir, 2, 5, Some(10));
        let old = put_snapshot(dir, 5, 1);
        let err = open(dir).unwrap_err();
        assert!(matches!(err, StoreError::Inconsistent { .. }), "{err:?}");
        let text = err.to_string();
        assert!(
            text.contains("log starts at offset 10") && text.contains(&old.file_name()),
            "{text}"
        );
        assert!(old.path_in(dir).exists());

        // No snapshot at all is just as inconsistent.
        std::fs::remove_file(old.path_in(dir)).unwrap();
        assert!(matches!(open(dir), Err(StoreError::Inconsistent { .. })));
    }

    #[test]
    fn a_snapshot_past_the_log_end_restarts_the_log_at_it_and_older_snapshots_go() {
        // A follower that crashed after downloading a snapshot, before truncating its log.
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        make_log(dir, 3, 20, None);
        let older = put_snapshot(dir, 8, 3);
        let latest = put_snapshot(dir, 50, 3);
        let store = open(dir).unwrap();
        assert_eq!(store.snapshots, vec![latest]);
        assert!(!older.path_in(dir).exists());
        assert_eq!(store.log_start_offset(), 50);
        assert_eq!(store.log_end_offset(), 50);
        assert_eq!(store.end_offset(), OffsetAndEpoch::new(50, 3));
        drop(store);
        // And it stays that way: the next open changes nothing.
        let store = open(dir).unwrap();
        assert_eq!(store.snapshots, vec![latest]);
        assert_eq!(store.log_start_offset(), 50);
    }

    #[test]
    fn a_snapshot_of_a_later_epoch_restarts_the_log_even_below_its_end() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        make_log(dir, 3, 20, None);
        let latest = put_snapshot(dir, 10, 4);
        let store = open(dir).unwrap();
        assert_eq!(store.log_start_offset(), 10);
        assert_eq!(store.log_end_offset(), 10);
        assert_eq!(store.snapshots, vec![latest]);
    }

    #[test]
    fn snapshots_inside_the_log_leave_it_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        make_log(dir, 3, 20, None);
        let a = put_snapshot(dir, 0, 0);
        let b = put_snapshot(dir, 20, 3);
        let c = put_snapshot(dir, 12, 2);
        let store = open(dir).unwrap();
        assert_eq!(store.snapshots, vec![a, c, b]);
        assert_eq!(store.log_start_offset(), 0);
        assert_eq!(store.log_end_offset(), 20);
    }
}
