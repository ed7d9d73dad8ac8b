//! One conformance suite run against `FileLog` and `MemLog` (style guide §18), plus
//! file-only crash tests (every cut position, flipped bits).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::records::batch::MAX_BATCH_SIZE_BYTES;
use crate::records::{
    build_control_batch, build_data_batch, BatchFramer, BatchView, ControlRecord,
};
use proptest::prelude::*;

/// A log under test that can crash (lose unflushed data) and reopen.
trait Harness {
    type L: LocalLog;
    fn log(&mut self) -> &mut Self::L;
    fn crash(&mut self);
}

struct MemHarness(MemLog);
impl Harness for MemHarness {
    type L = MemLog;
    fn log(&mut self) -> &mut MemLog {
        &mut self.0
    }
    fn crash(&mut self) {
        self.0.crash();
    }
}

struct FileHarness {
    dir: tempfile::TempDir,
    log: Option<FileLog>,
    config: LogConfig,
}
impl FileHarness {
    fn new(segment_bytes: u64) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let config = LogConfig {
            segment_bytes,
            ..LogConfig::default()
        };
        let (log, _) = FileLog::open(dir.path(), config).unwrap();
        FileHarness {
            dir,
            log: Some(log),
            config,
        }
    }
}
impl Harness for FileHarness {
    type L = FileLog;
    fn log(&mut self) -> &mut FileLog {
        self.log.as_mut().unwrap()
    }
    fn crash(&mut self) {
        // Dropping without close: the OS keeps written bytes, which is a legal outcome of a
        // crash (unflushed data *may* survive); recovery must cope either way.
        self.log = None;
        let (log, _) = FileLog::open(self.dir.path(), self.config).unwrap();
        self.log = Some(log);
    }
}

fn data(n: usize, tag: u8) -> Vec<u8> {
    let vals: Vec<Vec<u8>> = (0..n).map(|i| vec![tag, i as u8, 7]).collect();
    let refs: Vec<&[u8]> = vals.iter().map(Vec::as_slice).collect();
    build_data_batch(0, 0, 1000 + i64::from(tag), &refs).unwrap()
}

fn all_batches<L: LocalLog>(log: &L) -> Vec<(i64, i64, i32)> {
    let r = log.read(log.start_offset(), usize::MAX).unwrap();
    let mut out = Vec::new();
    let mut off = log.start_offset();
    // read() stays within one segment; keep reading until the end.
    let mut bytes = r.bytes;
    loop {
        let mut f = BatchFramer::new(&bytes, 0, MAX_BATCH_SIZE_BYTES);
        for (_, v) in f.by_ref() {
            out.push((v.base_offset(), v.last_offset(), v.partition_leader_epoch()));
            off = v.next_offset();
        }
        if off >= log.end_offset() {
            break;
        }
        bytes = log.read(off, usize::MAX).unwrap().bytes;
    }
    out
}

/// The conformance script every log implementation runs, step by step. Long on purpose: each
/// step reads the state the steps before it left, so it is one sequence, not separate tests.
fn suite<H: Harness>(mut h: H) {
    let log = h.log();
    // Empty log.
    assert_eq!(
        (log.start_offset(), log.end_offset(), log.last_epoch()),
        (0, 0, None)
    );
    assert_eq!(log.read(0, 100).unwrap().bytes, Vec::<u8>::new());
    assert!(matches!(
        log.read(1, 100),
        Err(LogError::OffsetOutOfRange { .. })
    ));
    assert_eq!(log.end_offset_for_epoch(3), None, "no epochs yet");

    // Leader appends: offsets assigned from the LEO, epoch stamped.
    log.initialize_leader_epoch(1).unwrap();
    let lc = build_control_batch(0, 0, 5, &[ControlRecord::kraft_version(1)]).unwrap();
    assert_eq!(
        log.append_as_leader(&lc, 1).unwrap(),
        AppendInfo {
            first_offset: 0,
            last_offset: 0
        }
    );
    assert_eq!(
        log.append_as_leader(&data(3, 1), 1).unwrap(),
        AppendInfo {
            first_offset: 1,
            last_offset: 3
        }
    );
    let mut two = data(2, 2);
    two.extend(data(1, 3));
    assert_eq!(
        log.append_as_leader(&two, 1).unwrap(),
        AppendInfo {
            first_offset: 4,
            last_offset: 6
        }
    );
    assert!(
        log.append_as_leader(&data(1, 1), 0).is_err(),
        "epoch below the log's epoch"
    );
    assert_eq!(log.end_offset(), 7);
    assert_eq!(
        all_batches(log),
        vec![(0, 0, 1), (1, 3, 1), (4, 5, 1), (6, 6, 1)]
    );

    // Reads: whole batches, at least one, from the batch holding the offset.
    let r = log.read(2, 1).unwrap();
    assert_eq!(r.start_offset, 1);
    assert_eq!(
        BatchFramer::new(&r.bytes, 0, MAX_BATCH_SIZE_BYTES).count(),
        1
    );
    let r = log.read(2, 10_000).unwrap();
    // Up to the end of the segment holding offset 2 (one segment per read, as in Kafka).
    let n = BatchFramer::new(&r.bytes, 0, MAX_BATCH_SIZE_BYTES).count();
    assert!((1..=3).contains(&n));
    assert_eq!(log.read(7, 100).unwrap().bytes.len(), 0);

    // Follower appends: verbatim, checked.
    let mut b = data(2, 4);
    crate::records::restamp_base_offset(&mut b, 7).unwrap();
    crate::records::restamp_partition_leader_epoch(&mut b, 3).unwrap();
    assert!(
        matches!(
            log.append_as_follower(&b, 2),
            Err(LogError::InvalidEpoch(_))
        ),
        "PLE above fetch epoch"
    );
    let mut wrong = b.clone();
    crate::records::restamp_base_offset(&mut wrong, 8).unwrap();
    assert!(matches!(
        log.append_as_follower(&wrong, 3),
        Err(LogError::UnexpectedAppendOffset {
            expected: 7,
            found: 8
        })
    ));
    let mut bad_crc = b.clone();
    let last = bad_crc.len() - 2;
    bad_crc[last] ^= 1;
    assert!(log.append_as_follower(&bad_crc, 3).is_err());
    assert!(
        log.append_as_follower(&b[..b.len() - 1], 3).is_err(),
        "torn input"
    );
    assert_eq!(
        log.append_as_follower(&b, 3).unwrap(),
        AppendInfo {
            first_offset: 7,
            last_offset: 8
        }
    );
    let got = log.read(7, 1000).unwrap();
    assert_eq!(got.bytes, b, "follower bytes stored verbatim");
    let mut old = data(1, 5);
    crate::records::restamp_base_offset(&mut old, 9).unwrap();
    crate::records::restamp_partition_leader_epoch(&mut old, 2).unwrap();
    assert!(
        matches!(
            log.append_as_follower(&old, 3),
            Err(LogError::InvalidEpoch(_))
        ),
        "epoch regress"
    );

    // Epoch cache and end offsets (Kafka's endOffsetFor).
    assert_eq!(
        log.epoch_entries(),
        vec![
            EpochEntry {
                epoch: 1,
                start_offset: 0
            },
            EpochEntry {
                epoch: 3,
                start_offset: 7
            }
        ]
    );
    assert_eq!(log.end_offset_for_epoch(3), Some(OffsetAndEpoch::new(9, 3)));
    assert_eq!(log.end_offset_for_epoch(2), Some(OffsetAndEpoch::new(7, 1)));
    assert_eq!(log.end_offset_for_epoch(1), Some(OffsetAndEpoch::new(7, 1)));
    assert_eq!(log.end_offset_for_epoch(0), Some(OffsetAndEpoch::new(0, 0)));
    assert_eq!(log.end_offset_for_epoch(9), None, "above the latest epoch");

    // Flush, then crash: flushed data survives; what survives is a prefix.
    log.flush().unwrap();
    assert_eq!(log.flushed_offset(), 9);
    let before = all_batches(log);
    log.append_as_leader(&data(1, 6), 3).unwrap();
    h.crash();
    let log = h.log();
    assert!(log.end_offset() >= 9);
    let after = all_batches(log);
    assert_eq!(&after[..before.len()], &before[..]);
    log.truncate_to(9).unwrap();
    assert_eq!(all_batches(log), before);

    // Truncation to a batch boundary and to the middle of a batch (cuts the whole batch).
    log.truncate_to(5).unwrap();
    assert_eq!(log.end_offset(), 4);
    assert_eq!(
        log.epoch_entries(),
        vec![EpochEntry {
            epoch: 1,
            start_offset: 0
        }]
    );
    log.initialize_leader_epoch(4).unwrap();
    log.append_as_leader(&data(2, 7), 4).unwrap();
    assert_eq!(log.end_offset(), 6);
    assert_eq!(log.end_offset_for_epoch(3), Some(OffsetAndEpoch::new(4, 1)));
    log.flush().unwrap();
    h.crash();
    let log = h.log();
    assert_eq!(log.end_offset(), 6);
    assert_eq!(log.last_epoch(), Some(4));

    // Log start moves forward; reading below it is out of range.
    assert!(log.increment_start_offset(4).unwrap());
    assert_eq!(log.start_offset(), 4);
    assert!(log.read(3, 10).is_err());
    assert_eq!(log.read(4, 1000).unwrap().start_offset, 4);

    // Installing a snapshot past the log: everything goes, the log restarts there.
    log.truncate_fully_and_start_at(100).unwrap();
    assert_eq!(
        (log.start_offset(), log.end_offset(), log.last_epoch()),
        (100, 100, None)
    );
    log.initialize_leader_epoch(5).unwrap();
    assert_eq!(
        log.append_as_leader(&data(1, 8), 5).unwrap().first_offset,
        100
    );
    log.flush().unwrap();
    h.crash();
    assert_eq!((h.log().start_offset(), h.log().end_offset()), (100, 101));
}

#[test]
fn conformance_mem_log() {
    suite(MemHarness(MemLog::new()));
}

#[test]
fn conformance_file_log() {
    suite(FileHarness::new(1024 * 1024));
}

#[test]
fn conformance_file_log_tiny_segments() {
    // Rolls on nearly every append.
    suite(FileHarness::new(100));
}

#[test]
fn file_log_segments_indexes_and_small_files() {
    let mut h = FileHarness::new(20_000);
    let log = h.log();
    log.initialize_leader_epoch(2).unwrap();
    let big: Vec<u8> = vec![9; 1000];
    for _ in 0..60 {
        log.append_as_leader(&build_data_batch(0, 0, 5, &[&big]).unwrap(), 2)
            .unwrap();
    }
    log.flush().unwrap();
    let bases = log.segment_bases();
    assert!(bases.len() >= 3, "{bases:?}");
    assert_eq!(bases[0], 0);
    let dir = h.dir.path().to_path_buf();
    assert_eq!(
        std::fs::read_to_string(dir.join("partition.metadata")).unwrap(),
        "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAQ"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("leader-epoch-checkpoint")).unwrap(),
        "0\n1\n2 0\n"
    );
    // Each batch is ~1070 bytes: the first index entry comes at the 5th append (after > 4096 bytes).
    let idx = std::fs::read(dir.join("00000000000000000000.index")).unwrap();
    assert!(idx.len() >= 8 && idx.len().is_multiple_of(8));
    assert_eq!(&idx[..4], &4i32.to_be_bytes());
    let pos = u32::from_be_bytes(idx[4..8].try_into().unwrap()) as usize;
    let log_bytes = std::fs::read(dir.join("00000000000000000000.log")).unwrap();
    let v = BatchView::new(&log_bytes[pos..pos + 1000 + 70])
        .ok()
        .or_else(|| {
            let mut f = BatchFramer::new(&log_bytes[pos..], 0, MAX_BATCH_SIZE_BYTES);
            f.next().map(|(_, v)| v)
        })
        .unwrap();
    assert_eq!(v.base_offset(), 4);
    // Reading across segments works.
    let last = *bases.last().unwrap();
    assert_eq!(h.log().read(last, 10).unwrap().start_offset, last);
    assert_eq!(all_batches(h.log()).len(), 60);
}

/// For every byte position at which the last batch can be cut, reopening keeps exactly the
/// complete batches before it.
#[test]
fn every_cut_of_the_last_batch_recovers_the_complete_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = FileLog::open(dir.path(), LogConfig::default()).unwrap();
    log.initialize_leader_epoch(1).unwrap();
    log.append_as_leader(&data(2, 1), 1).unwrap();
    log.append_as_leader(&data(3, 2), 1).unwrap();
    log.close().unwrap();
    let seg = dir.path().join("00000000000000000000.log");
    let full = std::fs::read(&seg).unwrap();
    let first_len = BatchFramer::new(&full, 0, MAX_BATCH_SIZE_BYTES)
        .next()
        .unwrap()
        .1
        .size_bytes();
    for cut in first_len..full.len() {
        std::fs::write(&seg, &full[..cut]).unwrap();
        let (log, report) = FileLog::open(dir.path(), LogConfig::default()).unwrap();
        assert_eq!(log.end_offset(), 2, "cut at {cut}");
        assert_eq!(std::fs::metadata(&seg).unwrap().len(), first_len as u64);
        if cut > first_len {
            assert_eq!(report.cuts.len(), 1, "cut at {cut}");
            assert_eq!(report.cuts[0].1, first_len as u64);
        }
        drop(log);
    }
}

/// A flipped bit inside a batch is detected and the log is cut there; later segments go too.
#[test]
fn flipped_bit_cuts_the_log_there() {
    let dir = tempfile::tempdir().unwrap();
    let (mut log, _) = FileLog::open(
        dir.path(),
        LogConfig {
            segment_bytes: 150,
            ..LogConfig::default()
        },
    )
    .unwrap();
    log.initialize_leader_epoch(1).unwrap();
    for i in 0..4 {
        log.append_as_leader(&data(2, i), 1).unwrap();
    }
    let bases = log.segment_bases();
    log.close().unwrap();
    assert!(bases.len() >= 3, "{bases:?}");
    let seg = dir.path().join(format!("{:020}.log", bases[1]));
    let good = std::fs::read(&seg).unwrap();
    for byte in [0usize, 9, 16, 25, 40, 61, good.len() - 1] {
        let mut bad = good.clone();
        bad[byte] ^= 0x10;
        std::fs::write(&seg, &bad).unwrap();
        let (log, report) = FileLog::open(
            dir.path(),
            LogConfig {
                segment_bytes: 150,
                ..LogConfig::default()
            },
        )
        .unwrap();
        // byte 12..16 is the epoch (outside the CRC): flipping it makes it decrease or jump, both
        // caught by the epoch rules only if it decreases; skip positions the CRC cannot see.
        assert_eq!(
            log.end_offset(),
            bases[1],
            "flip at byte {byte}: {report:?}"
        );
        assert!(!report.cuts.is_empty());
        assert_eq!(log.segment_bases(), vec![bases[0], bases[1]]);
        drop(log);
        // Restore the full log for the next round.
        std::fs::write(&seg, &good).unwrap();
        let dir2 = dir.path();
        let (mut l, _) = FileLog::open(
            dir2,
            LogConfig {
                segment_bytes: 150,
                ..LogConfig::default()
            },
        )
        .unwrap();
        if l.end_offset() < 8 {
            for i in (l.end_offset() / 2)..4 {
                l.append_as_leader(&data(2, i as u8), 1).unwrap();
            }
        }
        l.close().unwrap();
    }
}

#[derive(Debug, Clone)]
enum Op {
    Append(u8, bool),
    Truncate(u8),
    Flush,
    Crash,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1u8..4, any::<bool>()).prop_map(|(n, e)| Op::Append(n, e)),
        1 => any::<u8>().prop_map(Op::Truncate),
        2 => Just(Op::Flush),
        1 => Just(Op::Crash),
    ]
}

fn run_model<H: Harness>(h: &mut H, ops: &[Op]) -> Vec<(i64, i64, i32)> {
    let mut epoch = 1;
    h.log().initialize_leader_epoch(epoch).unwrap();
    for o in ops {
        match o {
            Op::Append(n, bump) => {
                if *bump {
                    epoch += 1;
                    h.log().initialize_leader_epoch(epoch).unwrap();
                }
                h.log()
                    .append_as_leader(&data(*n as usize, *n), epoch)
                    .unwrap();
            }
            Op::Truncate(t) => {
                let leo = h.log().end_offset();
                let to = (leo - i64::from(*t % 4)).max(0);
                h.log().truncate_to(to).unwrap();
            }
            Op::Flush => h.log().flush().unwrap(),
            Op::Crash => {
                let durable = h.log().flushed_offset();
                h.crash();
                let flushed_ok = h.log().end_offset() >= h.log().flushed_offset();
                assert!(flushed_ok);
                assert!(h.log().end_offset() >= durable);
                h.log().truncate_to(durable).unwrap();
                epoch = epoch.max(h.log().last_epoch().unwrap_or(0));
            }
        }
    }
    h.log().flush().unwrap();
    all_batches(h.log())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// File and memory logs agree on every sequence of appends, truncations, flushes and
    /// crashes (with unflushed data cut after a crash, so both see the same state).
    #[test]
    fn file_and_mem_logs_agree(ops in prop::collection::vec(op(), 1..25)) {
        let mut m = MemHarness(MemLog::new());
        let mut f = FileHarness::new(300);
        let a = run_model(&mut m, &ops);
        let b = run_model(&mut f, &ops);
        prop_assert_eq!(a, b);
        prop_assert_eq!(m.log().epoch_entries(), f.log().epoch_entries());
    }
}

/// LogSegment.shouldRoll with `segment.ms` (no jitter on the metadata log): a batch whose max
/// timestamp is more than `segment_ms` past the active segment's first batch rolls a new
/// segment; within it, or on an empty segment, it does not. Recovery keeps the first batch's
/// timestamp, so the rule holds across a restart.
#[test]
fn segment_ms_rolls_on_the_first_batch_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    let config = LogConfig {
        segment_ms: 1_000,
        ..LogConfig::default()
    };
    let (mut log, _) = FileLog::open(dir.path(), config).unwrap();
    log.initialize_leader_epoch(1).unwrap();
    let at = |ts: i64| crate::records::build_data_batch(0, 1, ts, &[b"v".as_slice()]).unwrap();
    log.append_as_leader(&at(10_000), 1).unwrap();
    log.append_as_leader(&at(11_000), 1).unwrap();
    assert_eq!(
        log.segment_bases(),
        vec![0],
        "exactly segment.ms later: no roll"
    );
    log.append_as_leader(&at(11_001), 1).unwrap();
    assert_eq!(log.segment_bases(), vec![0, 2]);
    log.close().unwrap();
    let (mut log, _) = FileLog::open(dir.path(), config).unwrap();
    log.append_as_leader(&at(11_500), 1).unwrap();
    assert_eq!(
        log.segment_bases(),
        vec![0, 2],
        "the new segment counts from 11 001"
    );
    log.append_as_leader(&at(12_002), 1).unwrap();
    assert_eq!(log.segment_bases(), vec![0, 2, 4]);
}

/// `read_control_batches` walks the log by batch headers and hands out exactly the control
/// batches a full read shows, segment after segment, with the offset to go on from.
#[test]
fn control_batches_read_by_headers_match_a_full_read() {
    let mut h = FileHarness::new(3_000);
    let log = h.log();
    log.initialize_leader_epoch(1).unwrap();
    let big: Vec<u8> = vec![3; 700];
    for i in 0..30u8 {
        let batch = if i % 4 == 1 {
            build_control_batch(0, 0, 5, &[ControlRecord::kraft_version(i16::from(i % 2))])
        } else {
            build_data_batch(0, 0, 5, &[&big, &[i]])
        };
        log.append_as_leader(&batch.unwrap(), 1).unwrap();
    }
    log.flush().unwrap();
    assert!(log.segment_bases().len() >= 3, "{:?}", log.segment_bases());
    let mut want = Vec::new();
    let mut off = 0;
    while off < log.end_offset() {
        let bytes = log.read(off, usize::MAX).unwrap().bytes;
        for (_, v) in BatchFramer::new(&bytes, 0, MAX_BATCH_SIZE_BYTES) {
            if v.is_control() {
                want.push(v.as_bytes().to_vec());
            }
            off = v.next_offset();
        }
    }
    assert_eq!(want.len(), 8);
    // In small steps (a few control bytes each) and in one go per segment.
    for max_bytes in [1, MAX_BATCH_SIZE_BYTES] {
        let mut got = Vec::new();
        let mut off = 0;
        while off < log.end_offset() {
            let (bytes, next) = log.read_control_batches(off, max_bytes).unwrap();
            assert!(next > off, "stuck at {off}");
            for (_, v) in BatchFramer::new(&bytes, 0, MAX_BATCH_SIZE_BYTES) {
                got.push(v.as_bytes().to_vec());
            }
            off = next;
        }
        assert_eq!(off, log.end_offset());
        assert_eq!(got, want, "max_bytes {max_bytes}");
    }
    // From the middle of the log, and at its end.
    let (bytes, _) = log.read_control_batches(14, MAX_BATCH_SIZE_BYTES).unwrap();
    let first = BatchFramer::new(&bytes, 0, MAX_BATCH_SIZE_BYTES)
        .next()
        .unwrap()
        .1;
    assert_eq!(first.base_offset(), 16); // batch i = 9: data batches hold 2 records, control ones 1
    let end = log.end_offset();
    assert_eq!(
        log.read_control_batches(end, 10).unwrap(),
        (Vec::new(), end)
    );
}
