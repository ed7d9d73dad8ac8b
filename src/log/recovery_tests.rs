//! Recovery keeps what Kafka keeps: each kind of damage against the outcome derived from
//! Kafka's source (trunk of Oct 2024, checked against 4.1.2):
//!
//! - `storage/src/main/java/org/apache/kafka/storage/internals/log/LogSegment.java`
//!   (`recover`): per batch `ensureValid` (size, CRC), `ensureOffsetInRange(lastOffset)`, index
//!   entries every 4096 bytes, `cache.assign(ple, baseOffset)` only when `ple >= 0` and above
//!   the latest epoch. No check on offsets following each other or on epochs going down.
//! - `storage/.../log/LogLoader.java` (`recoverLog`): a segment that lost bytes deletes every
//!   later segment; `InvalidOffsetException` (non-increasing index entry) truncates the segment
//!   to its base offset; then `truncateFromEndAsyncFlush(nextOffset)`.
//! - `storage/.../epoch/LeaderEpochFileCache.java` (`assign`, `truncateFromEnd`): a new entry
//!   removes the entries at or above its epoch or start offset.
//! - `server-common/.../common/CheckpointFile.java`: a malformed checkpoint is an error (Kafka
//!   fails the log directory); an empty file has no entries.
//! - `core/src/main/scala/kafka/raft/KafkaMetadataLog.scala`: recovery point 0 and
//!   `lastShutdownClean = false`, so every start recovers every segment.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use super::epoch_cache::LEADER_EPOCH_CHECKPOINT_FILE;
use super::*;
use crate::records::batch::MAX_BATCH_SIZE_BYTES;
use crate::records::{build_data_batch, BatchFramer};

const CONFIG: LogConfig = LogConfig {
    segment_bytes: 12 * 1024,
    segment_ms: 7 * 24 * 60 * 60 * 1000,
};

/// Batches per epoch; epochs 1..=EPOCHS.
const PER_EPOCH: usize = 20;
const EPOCHS: i32 = 5;

/// One batch of 3 records of 100 bytes (about 400 bytes), timestamps growing with `i`.
fn batch(i: usize) -> Vec<u8> {
    let vals: Vec<Vec<u8>> = (0..3).map(|r| vec![(i + r) as u8; 100]).collect();
    let refs: Vec<&[u8]> = vals.iter().map(Vec::as_slice).collect();
    build_data_batch(0, 0, 1_000_000 + i as i64, &refs).unwrap()
}

/// A closed log of 100 batches in epochs 1..=5 over several 12 KiB segments.
fn build(dir: &Path) -> Vec<i64> {
    let (mut log, _) = FileLog::open(dir, CONFIG).unwrap();
    for e in 1..=EPOCHS {
        log.initialize_leader_epoch(e).unwrap();
        for i in 0..PER_EPOCH {
            log.append_as_leader(&batch(e as usize * 100 + i), e)
                .unwrap();
        }
    }
    let bases = log.segment_bases();
    log.close().unwrap();
    assert!(bases.len() >= 3, "{bases:?}");
    bases
}

/// Every segment's (name, bytes) in order, and the checkpoint text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct State {
    segments: Vec<(String, Vec<u8>)>,
    checkpoint: String,
}

fn state(dir: &Path) -> State {
    let mut segments: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    segments.sort();
    let checkpoint =
        std::fs::read_to_string(dir.join(LEADER_EPOCH_CHECKPOINT_FILE)).unwrap_or_default();
    State {
        segments,
        checkpoint,
    }
}

/// (position, base offset, last offset, epoch) of every batch of a segment file.
fn batches(bytes: &[u8]) -> Vec<(usize, i64, i64, i32)> {
    BatchFramer::new(bytes, 0, MAX_BATCH_SIZE_BYTES)
        .map(|(p, v)| {
            (
                p as usize,
                v.base_offset(),
                v.last_offset(),
                v.partition_leader_epoch(),
            )
        })
        .collect()
}

fn seg_path(dir: &Path, base: i64) -> std::path::PathBuf {
    dir.join(format!("{base:020}.log"))
}

/// Copies the built log into a fresh directory, applies `damage`, opens it.
struct Case {
    dir: tempfile::TempDir,
    original: State,
    bases: Vec<i64>,
}

impl Case {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let bases = build(dir.path());
        let original = state(dir.path());
        Case {
            dir,
            original,
            bases,
        }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    /// Batches of segment `i` as on disk.
    fn seg_batches(&self, i: usize) -> Vec<(usize, i64, i64, i32)> {
        batches(&std::fs::read(seg_path(self.path(), self.bases[i])).unwrap())
    }
    fn flip(&self, seg: usize, byte: usize, mask: u8) {
        let p = seg_path(self.path(), self.bases[seg]);
        let mut b = std::fs::read(&p).unwrap();
        b[byte] ^= mask;
        std::fs::write(&p, b).unwrap();
    }
    fn open(&self) -> (FileLog, file_log::RecoveryReport) {
        FileLog::open(self.path(), CONFIG).unwrap()
    }
}

fn entries(log: &FileLog) -> Vec<(i32, i64)> {
    log.epoch_entries()
        .iter()
        .map(|e| (e.epoch, e.start_offset))
        .collect()
}

fn original_entries() -> Vec<(i32, i64)> {
    (1..=EPOCHS)
        .map(|e| (e, (e as i64 - 1) * PER_EPOCH as i64 * 3))
        .collect()
}

/// A clean reopen keeps every byte and every epoch and rebuilds nothing.
#[test]
fn clean_reopen_keeps_everything_and_rebuilds_nothing() {
    let c = Case::new();
    let (log, report) = c.open();
    assert_eq!(entries(&log), original_entries());
    assert!(
        report.cuts.is_empty() && report.rebuilt.is_empty(),
        "{report:?}"
    );
    drop(log);
    assert_eq!(state(c.path()), c.original);
}

/// The partition leader epoch (bytes 12..16) is outside the CRC: Kafka keeps the batch
/// whatever the value. With the checkpoint present the cache already holds epoch 5, so a
/// value at or below it assigns nothing (LogSegment.recover: `ple > latestEpoch`), a negative
/// one is skipped (`ple >= 0`).
#[test]
fn a_flipped_epoch_keeps_every_batch_and_the_checkpoint() {
    for (mask, what) in [(0x02u8, "lower"), (0x80, "negative")] {
        let c = Case::new();
        let (pos, _, _, ple) = c.seg_batches(1)[3];
        assert_eq!(ple & 0x02, 0x02, "epoch {ple} has the bit to clear");
        let byte = if mask == 0x80 { pos + 12 } else { pos + 15 };
        c.flip(1, byte, mask);
        let damaged = state(c.path());
        let (log, report) = c.open();
        assert!(report.cuts.is_empty(), "{what}: {report:?}");
        assert_eq!(entries(&log), original_entries(), "{what}");
        drop(log);
        assert_eq!(state(c.path()), damaged, "{what}: every byte kept");
    }
}

/// An epoch flipped above the latest one is kept and assigned (LeaderEpochFileCache.assign
/// removes the entries at or after its start offset), with or without the checkpoint: the
/// rebuilt cache is the same.
#[test]
fn an_epoch_flipped_above_the_latest_is_assigned_as_kafka_does() {
    for delete_checkpoint in [false, true] {
        let c = Case::new();
        let (pos, base, _, ple) = c.seg_batches(1)[3];
        c.flip(1, pos + 13, 0x10); // + 2^20
        let flipped = ple ^ (0x10 << 16);
        if delete_checkpoint {
            std::fs::remove_file(c.path().join(LEADER_EPOCH_CHECKPOINT_FILE)).unwrap();
        }
        let damaged_segments = state(c.path()).segments;
        let (log, report) = c.open();
        assert!(report.cuts.is_empty(), "{report:?}");
        let mut want: Vec<_> = original_entries()
            .into_iter()
            .filter(|&(_, s)| s < base)
            .collect();
        want.push((flipped, base));
        assert_eq!(
            entries(&log),
            want,
            "checkpoint deleted: {delete_checkpoint}"
        );
        assert_eq!(log.end_offset(), 300);
        assert!(report
            .rebuilt
            .iter()
            .any(|p| p.ends_with(LEADER_EPOCH_CHECKPOINT_FILE)));
        drop(log);
        let after = state(c.path());
        assert_eq!(after.segments, damaged_segments, "every byte kept");
        let text: String = want.iter().map(|(e, s)| format!("{e} {s}\n")).collect();
        assert_eq!(after.checkpoint, format!("0\n{}\n{text}", want.len()));
    }
}

/// With the checkpoint deleted, the cache is rebuilt from the batches; an epoch flipped lower
/// on the first batch of an epoch moves that epoch's start to the next batch.
#[test]
fn a_deleted_checkpoint_is_rebuilt_from_the_batches() {
    let c = Case::new();
    std::fs::remove_file(c.path().join(LEADER_EPOCH_CHECKPOINT_FILE)).unwrap();
    let (log, report) = c.open();
    assert_eq!(entries(&log), original_entries());
    assert!(report.cuts.is_empty());
    assert_eq!(report.rebuilt.len(), 1, "{report:?}");
    drop(log);
    assert_eq!(state(c.path()), c.original);

    let c = Case::new();
    std::fs::remove_file(c.path().join(LEADER_EPOCH_CHECKPOINT_FILE)).unwrap();
    // The first batch of epoch 2 (offset 60), flipped to epoch 0.
    let (seg, idx) = (0..c.bases.len())
        .flat_map(|s| (0..c.seg_batches(s).len()).map(move |i| (s, i)))
        .find(|&(s, i)| c.seg_batches(s)[i].1 == 60)
        .unwrap();
    let (pos, _, _, ple) = c.seg_batches(seg)[idx];
    assert_eq!(ple, 2);
    c.flip(seg, pos + 15, 0x02);
    let (log, _) = c.open();
    let mut want = original_entries();
    want[1] = (2, 63);
    assert_eq!(entries(&log), want);
}

/// A base offset changed within the segment (bytes 0..8, outside the CRC) is kept: Kafka does
/// not check that offsets follow each other. The log end is the last batch's next offset
/// (LogSegment.readNextOffset), so a changed last batch moves it.
#[test]
fn a_changed_base_offset_inside_the_segment_is_kept() {
    let c = Case::new();
    // A batch before the segment's first index entry whose offset bit 4 is clear.
    let (pos, base, _, _) = *c.seg_batches(1)[1..6]
        .iter()
        .find(|b| b.1 & 0x10 == 0)
        .unwrap();
    assert_eq!(base & 0x10, 0, "{base}");
    c.flip(1, pos + 7, 0x10); // + 16
    let damaged = state(c.path());
    let (log, report) = c.open();
    assert!(report.cuts.is_empty(), "{report:?}");
    assert_eq!(log.end_offset(), 300);
    assert_eq!(entries(&log), original_entries());
    drop(log);
    assert_eq!(state(c.path()), damaged);

    let c = Case::new();
    let last = c.bases.len() - 1;
    let (pos, base, _, _) = *c.seg_batches(last).last().unwrap();
    assert_eq!(base, 297);
    c.flip(last, pos + 7, 0x40); // 297 + 64
    let damaged = state(c.path());
    let (log, report) = c.open();
    assert!(report.cuts.is_empty(), "{report:?}");
    assert_eq!(log.end_offset(), 364);
    drop(log);
    assert_eq!(state(c.path()), damaged);
}

/// A base offset that makes the next offset index entry not increase is Kafka's
/// `InvalidOffsetException` (OffsetIndex.append): LogLoader.recoverLog truncates that segment
/// to its base offset and deletes every later one.
#[test]
fn a_base_offset_breaking_the_index_order_empties_the_segment() {
    let c = Case::new();
    // The batch that gets the segment's first index entry (the first after 4096 bytes).
    let b = c.seg_batches(1);
    let first_entry = b.iter().position(|&(p, ..)| p > 4096).unwrap();
    let (pos, base, _, _) = b[first_entry];
    assert_eq!(base & (1 << 10), 0);
    c.flip(1, pos + 6, 0x04); // + 1024: the next entry's offset is below it
    let (log, report) = c.open();
    assert_eq!(log.segment_bases(), vec![c.bases[0], c.bases[1]]);
    assert_eq!(log.end_offset(), c.bases[1]);
    assert_eq!(report.cuts.len(), 1, "{report:?}");
    assert_eq!(report.cuts[0].1, 0);
    let want: Vec<_> = original_entries()
        .into_iter()
        .filter(|&(_, s)| s < c.bases[1])
        .collect();
    assert_eq!(entries(&log), want);
    drop(log);
    let after = state(c.path());
    assert_eq!(after.segments[0], c.original.segments[0]);
    assert!(after.segments[1].1.is_empty());
}

/// Damage the CRC catches, a changed length or magic, and a base offset that overflows the
/// segment cut the log at that batch and delete the later segments. (Kafka splits a segment
/// whose offsets overflow; ferrokraft cuts there, see docs/interop.md.)
#[test]
fn damage_the_checks_catch_cuts_at_that_batch() {
    // (byte in the batch, mask, what)
    let cases: &[(usize, u8, &str)] = &[
        (0, 0x01, "base offset overflow"),
        (8, 0x01, "length grown past the file"),
        (11, 0x04, "length changed"),
        (16, 0x10, "magic"),
        (17, 0x01, "crc"),
        (21, 0x01, "attributes"),
        (23, 0x01, "lastOffsetDelta"),
        (30, 0x01, "base timestamp"),
        (40, 0x01, "max timestamp"),
        (45, 0x01, "producer id"),
        (52, 0x01, "producer epoch"),
        (55, 0x01, "base sequence"),
        (60, 0x01, "record count"),
        (100, 0x01, "record body"),
    ];
    for &(byte, mask, what) in cases {
        let c = Case::new();
        let (pos, base, _, _) = c.seg_batches(1)[4];
        c.flip(1, pos + byte, mask);
        let (log, report) = c.open();
        assert_eq!(log.end_offset(), base, "{what}: {report:?}");
        assert_eq!(log.segment_bases(), vec![c.bases[0], c.bases[1]], "{what}");
        assert_eq!(report.cuts.len(), 1, "{what}");
        assert_eq!(report.cuts[0].1, pos as u64, "{what}");
        let want: Vec<_> = original_entries()
            .into_iter()
            .filter(|&(_, s)| s < base)
            .collect();
        assert_eq!(entries(&log), want, "{what}");
        drop(log);
        let after = state(c.path());
        assert_eq!(after.segments[0], c.original.segments[0], "{what}");
        assert_eq!(
            after.segments[1].1,
            c.original.segments[1].1[..pos],
            "{what}"
        );
    }
}

/// A torn tail at any point of the last batch (and inside its header) cuts just that batch.
#[test]
fn a_torn_tail_cuts_the_incomplete_batch() {
    let c = Case::new();
    let last = c.bases.len() - 1;
    let p = seg_path(c.path(), c.bases[last]);
    let full = std::fs::read(&p).unwrap();
    let (pos, base, _, _) = *c.seg_batches(last).last().unwrap();
    for cut in [pos + 1, pos + 11, pos + 12, pos + 61, full.len() - 1] {
        std::fs::write(&p, &full[..cut]).unwrap();
        let (log, report) = c.open();
        assert_eq!(log.end_offset(), base, "cut at {cut}");
        assert_eq!(report.cuts.len(), 1);
        assert_eq!(entries(&log), original_entries());
        drop(log);
        assert_eq!(std::fs::read(&p).unwrap(), full[..pos]);
        std::fs::write(&p, &full).unwrap();
    }
}

/// Indexes are derived data: deleted or garbage ones are rebuilt (and reported), the log and
/// checkpoint untouched. (Kafka does not log a rebuilt index of the metadata log above INFO:
/// LogLoader.loadSegmentFiles logs a missing offset index only below the recovery point,
/// which is 0, and skips the index sanity checks; ferrokraft logs it at WARN.)
#[test]
fn deleted_or_garbage_indexes_are_rebuilt() {
    let c = Case::new();
    let stem = format!("{:020}", c.bases[1]);
    let index = c.path().join(format!("{stem}.index"));
    let time_index = c.path().join(format!("{stem}.timeindex"));
    let good = (
        std::fs::read(&index).unwrap(),
        std::fs::read(&time_index).unwrap(),
    );
    assert!(!good.0.is_empty() && !good.1.is_empty());
    std::fs::remove_file(&index).unwrap();
    std::fs::write(&time_index, b"garbage garbage").unwrap();
    let (log, report) = c.open();
    assert!(report.cuts.is_empty());
    assert_eq!(report.rebuilt, vec![index.clone(), time_index.clone()]);
    drop(log);
    assert_eq!(state(c.path()), c.original);
    assert_eq!(std::fs::read(&index).unwrap(), good.0);
    // The final time entry of a sealed segment comes back with the next roll or close
    // (Segment::finish_recovery).
    let time = std::fs::read(&time_index).unwrap();
    assert!(!time.is_empty() && good.1.starts_with(&time), "{time:?}");
}

/// A malformed checkpoint fails the open, as Kafka fails the log directory, naming the line.
#[test]
fn a_garbage_checkpoint_is_reported_with_its_line() {
    for (text, line) in [
        ("0\n5\n1 0\n2 60\nthree 120\n4 180\n5 240\n", 5),
        ("1\n0\n", 1),
        ("0\nfive\n", 2),
        ("0\n3\n1 0\n2 60\n", 4),
        ("0\n1\n 1 0\n", 3),
    ] {
        let c = Case::new();
        std::fs::write(c.path().join(LEADER_EPOCH_CHECKPOINT_FILE), text).unwrap();
        let err = FileLog::open(c.path(), CONFIG).unwrap_err();
        let msg = err.to_string();
        assert!(
            matches!(err, LogError::CorruptCheckpoint { line: l, .. } if l == line),
            "{text:?}: {msg}"
        );
        assert!(msg.contains(&format!("line {line}")), "{msg}");
    }
    // An empty file, or only the version line, has no entries (CheckpointFile): rebuilt.
    for text in ["", "0\n"] {
        let c = Case::new();
        std::fs::write(c.path().join(LEADER_EPOCH_CHECKPOINT_FILE), text).unwrap();
        let (log, _) = c.open();
        assert_eq!(entries(&log), original_entries(), "{text:?}");
    }
}

/// A follower appends many batches at once, so its index (one entry per append) differs from
/// the one recovery rebuilds (one per batch): that is not a corrupt index and is not reported.
#[test]
fn a_sound_index_built_per_append_is_not_reported() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = FileLog::open(dir.path(), CONFIG).unwrap();
    let mut offset = 0;
    for round in 0..3 {
        let mut bytes = Vec::new();
        for i in 0..12 {
            let vals: Vec<Vec<u8>> = (0..3).map(|r| vec![(i + r) as u8; 100]).collect();
            let refs: Vec<&[u8]> = vals.iter().map(Vec::as_slice).collect();
            bytes.extend(build_data_batch(offset, 1, 1_000 + round * 100 + i, &refs).unwrap());
            offset += 3;
        }
        log.append_as_follower(&bytes, 1).unwrap();
    }
    let before = log.segments_index_entries();
    log.close().unwrap();
    let (log, report) = FileLog::open(dir.path(), CONFIG).unwrap();
    assert_ne!(
        before,
        log.segments_index_entries(),
        "the test needs differing indexes"
    );
    assert!(report.rebuilt.is_empty(), "{report:?}");
}
