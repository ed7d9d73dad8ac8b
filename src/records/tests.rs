//! Tests for batches, control records and framing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::batch::*;
use super::*;
use kafka_protocol::messages::leader_change_message::Voter as LcVoter;
use kafka_protocol::messages::voters_record::{Endpoint, KRaftVersionFeature, Voter};
use kafka_protocol::messages::{LeaderChangeMessage, VotersRecord};
use kafka_protocol::protocol::StrBytes;
use proptest::prelude::*;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.split_whitespace().collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Reference §1.5: one SNAPSHOT_HEADER, base 0, PLE 7, T = 1700000000000.
#[test]
fn golden_snapshot_header_batch() {
    let expected = hex(
        "0000000000000000 00000047 00000007 02 c7ac7804 0020 00000000 0000018bcfe56800 0000018bcfe56800
         ffffffffffffffff ffff ffffffff 00000001
         2a 00 00 00 08 00000003 16 0000 0000018bcfe56800 00 00",
    );
    let t = 1_700_000_000_000;
    let got = build_control_batch(0, 7, t, &[ControlRecord::snapshot_header(t)]).unwrap();
    assert_eq!(got, expected);
    let v = BatchView::new_checked(&got).unwrap();
    assert_eq!(v.partition_leader_epoch(), 7);
    assert!(v.is_control());
    assert_eq!(
        v.control_records().unwrap(),
        vec![ControlRecord::snapshot_header(t)]
    );
}

/// Bytes of the footer batch `kafka-storage format` (4.1.2) wrote into bootstrap.checkpoint.
#[test]
fn golden_footer_batch_from_kafka_4_1_2() {
    let expected = hex(
        "0000000000000005 0000003f 00000000 02 caf0f805 0020 00000000 000001a22671366b 000001a22671366b
         ffffffffffffffff ffff ffffffff 00000001 1a 00 00 00 08 00000004 06 0000 00 00",
    );
    let got =
        build_control_batch(5, 0, 0x1a22671366b, &[ControlRecord::snapshot_footer()]).unwrap();
    assert_eq!(got, expected);
}

/// The voters record Kafka 4.1.2 wrote in a `--standalone` 0-0 checkpoint.
#[test]
fn golden_voters_record_value() {
    let dir = uuid::Uuid::from_bytes([
        0x2a, 0x4a, 0x5f, 0xba, 0x56, 0x47, 0x3e, 0x9c, 0x0b, 0x90, 0xd7, 0x10, 0xd5, 0x71, 0xb4,
        0x02,
    ]);
    let rec = ControlRecord::Voters(sample_voters(&[(1, dir, "127.0.0.1", 19093)]));
    let expected = hex(
        "0000 02 00000001 2a4a5fba56473e9c0b90d710d571b402 02 0b 434f4e54524f4c4c4552
         0a 3132372e302e302e31 4a95 00 0000 0001 00 00 00",
    );
    assert_eq!(rec.encode_value().unwrap(), expected);
}

fn sample_voters(v: &[(i32, uuid::Uuid, &str, u16)]) -> VotersRecord {
    VotersRecord::default().with_version(0).with_voters(
        v.iter()
            .map(|(id, dir, host, port)| {
                Voter::default()
                    .with_voter_id((*id).into())
                    .with_voter_directory_id(*dir)
                    .with_endpoints(vec![Endpoint::default()
                        .with_name(StrBytes::from_static_str("CONTROLLER"))
                        .with_host(StrBytes::from_string(host.to_string()))
                        .with_port(*port)])
                    .with_k_raft_version_feature(
                        KRaftVersionFeature::default()
                            .with_min_supported_version(0)
                            .with_max_supported_version(1),
                    )
            })
            .collect(),
    )
}

#[test]
fn control_records_round_trip() {
    let recs = vec![
        ControlRecord::LeaderChange(
            LeaderChangeMessage::default()
                .with_leader_id(2.into())
                .with_voters(vec![LcVoter::default().with_voter_id(1)])
                .with_granting_voters(vec![LcVoter::default().with_voter_id(2)]),
        ),
        ControlRecord::kraft_version(1),
        ControlRecord::Voters(sample_voters(&[(1, uuid::Uuid::from_u128(7), "h", 1)])),
        ControlRecord::snapshot_footer(),
    ];
    let b = build_control_batch(10, 3, 5, &recs).unwrap();
    let v = BatchView::new_checked(&b).unwrap();
    v.validate_kraft().unwrap();
    assert_eq!(v.control_records().unwrap(), recs);
    assert_eq!(v.last_offset(), 13);
}

#[test]
fn restamp_keeps_crc_valid() {
    let mut b = build_data_batch(0, 1, 5, &[b"abc", b"d"]).unwrap();
    restamp_base_offset(&mut b, 1234).unwrap();
    restamp_partition_leader_epoch(&mut b, 9).unwrap();
    let v = BatchView::new_checked(&b).unwrap();
    assert_eq!(
        (v.base_offset(), v.last_offset(), v.partition_leader_epoch()),
        (1234, 1235, 9)
    );
    let offs: Vec<i64> = v.records().map(|r| r.unwrap().offset).collect();
    assert_eq!(offs, vec![1234, 1235]);
}

#[test]
fn builder_rejects_what_kraft_readers_reject() {
    assert_eq!(
        build_data_batch(0, 0, 0, &[]),
        Err(RecordsError::EmptyBatch)
    );
    assert!(build_data_batch(0, 0, 0, &[b""]).is_err());
    let mut b = BatchBuilder::new(0, 0, 0, false);
    assert!(b.append(Some(b"k"), b"v").is_err());
}

/// Rewrites a batch's CRC after editing bytes inside it, to test record-level checks.
fn fix_crc(b: &mut [u8]) {
    let crc = crc32c::crc32c(&b[ATTRIBUTES_OFFSET..]);
    b[CRC_OFFSET..CRC_OFFSET + 4].copy_from_slice(&crc.to_be_bytes());
}

#[test]
fn reader_strictness() {
    // Header count byte must be 0.
    let mut b = build_data_batch(0, 0, 0, &[b"xy"]).unwrap();
    let last = b.len() - 1;
    b[last] = 1;
    fix_crc(&mut b);
    assert!(BatchView::new_checked(&b)
        .unwrap()
        .validate_kraft()
        .is_err());
    // timestampDelta must be 0: record = len, attr, tsDelta...
    let mut b = build_data_batch(0, 0, 0, &[b"xy"]).unwrap();
    b[RECORD_BATCH_OVERHEAD + 2] = 2;
    fix_crc(&mut b);
    assert!(BatchView::new_checked(&b)
        .unwrap()
        .validate_kraft()
        .is_err());
    // Declared count larger than the records present.
    let mut b = build_data_batch(0, 0, 0, &[b"xy"]).unwrap();
    b[RECORDS_COUNT_OFFSET + 3] = 2;
    fix_crc(&mut b);
    assert!(BatchView::new_checked(&b)
        .unwrap()
        .validate_kraft()
        .is_err());
    // Declared count smaller than the records present.
    let mut b = build_data_batch(0, 0, 0, &[b"xy", b"z"]).unwrap();
    b[RECORDS_COUNT_OFFSET + 3] = 1;
    b[LAST_OFFSET_DELTA_OFFSET + 3] = 0;
    fix_crc(&mut b);
    assert!(BatchView::new_checked(&b)
        .unwrap()
        .validate_kraft()
        .is_err());
}

#[test]
fn framer_classifies_ends() {
    let a = build_data_batch(0, 1, 5, &[b"one"]).unwrap();
    let b = build_data_batch(1, 1, 5, &[b"two", b"three"]).unwrap();
    let mut all = a.clone();
    all.extend_from_slice(&b);
    let mut f = BatchFramer::new(&all, 100, MAX_BATCH_SIZE_BYTES);
    assert_eq!(
        f.by_ref().map(|(p, _)| p).collect::<Vec<_>>(),
        vec![100, 100 + a.len() as u64]
    );
    assert_eq!(f.end(), Some(&FrameEnd::Clean));

    for cut in 1..b.len() {
        let buf = &all[..a.len() + cut];
        let mut f = BatchFramer::new(buf, 0, MAX_BATCH_SIZE_BYTES);
        assert_eq!(f.by_ref().count(), 1, "cut {cut}");
        match f.end() {
            Some(FrameEnd::TornTail { position, .. }) => assert_eq!(*position, a.len() as u64),
            other => panic!("cut {cut}: {other:?}"),
        }
    }
    // Impossible length.
    let mut bad = all.clone();
    bad[a.len() + 11] = 3;
    bad[a.len() + 10] = 0;
    let mut f = BatchFramer::new(&bad, 0, MAX_BATCH_SIZE_BYTES);
    assert_eq!(f.by_ref().count(), 1);
    assert!(
        matches!(f.end(), Some(FrameEnd::Corrupt { position, .. }) if *position == a.len() as u64)
    );
}

#[test]
fn every_flipped_bit_inside_crc_range_is_detected() {
    let b = build_data_batch(0, 1, 5, &[b"payload"]).unwrap();
    for byte in ATTRIBUTES_OFFSET..b.len() {
        for bit in 0..8 {
            let mut c = b.clone();
            c[byte] ^= 1 << bit;
            let mut f = BatchFramer::new(&c, 0, MAX_BATCH_SIZE_BYTES);
            assert_eq!(f.by_ref().count(), 0);
            assert!(matches!(
                f.end(),
                Some(FrameEnd::Corrupt { position: 0, .. })
            ));
        }
    }
}

#[test]
fn file_framer_matches_buffer_framer() {
    use std::io::Write;
    let a = build_data_batch(0, 1, 5, &[b"one"]).unwrap();
    let mut tmp = tempfile::tempfile().unwrap();
    tmp.write_all(&a).unwrap();
    tmp.write_all(&a[..30]).unwrap();
    let len = (a.len() + 30) as u64;
    let mut f = FileFramer::new(&tmp, 0, len, MAX_BATCH_SIZE_BYTES);
    assert_eq!(f.next_batch().unwrap().unwrap(), (0, a.clone()));
    assert!(f.next_batch().unwrap().is_none());
    assert!(
        matches!(f.end(), Some(FrameEnd::TornTail { position, available_bytes: 30 }) if *position == a.len() as u64)
    );
}

proptest! {
    #[test]
    fn data_batch_round_trip(
        base in 0i64..i64::MAX / 2,
        epoch in 0i32..i32::MAX,
        ts in any::<i64>(),
        values in prop::collection::vec(prop::collection::vec(any::<u8>(), 1..300), 1..40),
    ) {
        let refs: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
        let b = build_data_batch(base, epoch, ts, &refs).unwrap();
        let v = BatchView::new_checked(&b).unwrap();
        v.validate_kraft().unwrap();
        prop_assert_eq!(v.base_offset(), base);
        prop_assert_eq!(v.partition_leader_epoch(), epoch);
        prop_assert_eq!(v.base_timestamp(), ts);
        prop_assert_eq!(v.max_timestamp(), ts);
        prop_assert_eq!(v.record_count() as usize, values.len());
        prop_assert_eq!(v.last_offset(), base + values.len() as i64 - 1);
        prop_assert_eq!((v.producer_id(), v.producer_epoch(), v.base_sequence()), (-1, -1, -1));
        let got: Vec<(i64, Vec<u8>)> = v.records().map(|r| { let r = r.unwrap(); assert!(r.key.is_none()); (r.offset, r.value.to_vec()) }).collect();
        let want: Vec<(i64, Vec<u8>)> = values.iter().enumerate().map(|(i, x)| (base + i as i64, x.clone())).collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn crate_encoder_agrees_on_single_record(value in prop::collection::vec(any::<u8>(), 1..100), ts in 0i64..i64::MAX/2) {
        // kafka-protocol's encoder, with the sequence rule from reference §1.6, must produce our bytes.
        use kafka_protocol::records::{Record, RecordBatchEncoder, RecordEncodeOptions, Compression, TimestampType};
        let ours = build_data_batch(3, 4, ts, &[&value]).unwrap();
        let rec = Record {
            transactional: false, control: false, partition_leader_epoch: 4, producer_id: -1,
            producer_epoch: -1, timestamp_type: TimestampType::Creation, offset: 3, sequence: -1,
            timestamp: ts, delete_horizon: false, key: None, value: Some(bytes::Bytes::from(value.clone())), headers: Default::default(),
        };
        let mut out = bytes::BytesMut::new();
        RecordBatchEncoder::encode(&mut out, [&rec], &RecordEncodeOptions { version: 2, compression: Compression::None }).unwrap();
        prop_assert_eq!(out.to_vec(), ours);
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in prop::collection::vec(any::<u8>(), 0..400)) {
        let mut f = BatchFramer::new(&data, 0, MAX_BATCH_SIZE_BYTES);
        for (_, v) in f.by_ref() { let _ = v.validate_kraft(); }
        prop_assert!(f.end().is_some());
        if let Ok(v) = BatchView::new(&data) { for r in v.records() { let _ = r.map(|r| r.control_record()); } }
    }
}

#[test]
fn file_framer_reuses_one_buffer_across_batches_of_any_size() {
    use std::io::Write;
    let big = build_data_batch(0, 1, 5, &[&[7u8; 5000][..], b"x"]).unwrap();
    let small = build_data_batch(2, 1, 5, &[b"one"]).unwrap();
    let mut tmp = tempfile::tempfile().unwrap();
    tmp.write_all(&big).unwrap();
    tmp.write_all(&small).unwrap();
    let len = (big.len() + small.len()) as u64;
    let mut f = FileFramer::new(&tmp, 0, len, MAX_BATCH_SIZE_BYTES);
    let mut buf = Vec::new();
    let (at, size) = f.next_batch_into(&mut buf).unwrap().unwrap();
    assert_eq!((at, &buf[..size]), (0, &big[..]));
    // The smaller batch after the larger one: the buffer keeps its length, the slice is exact.
    let (at, size) = f.next_batch_into(&mut buf).unwrap().unwrap();
    assert_eq!((at, &buf[..size]), (big.len() as u64, &small[..]));
    assert!(buf.len() >= big.len());
    assert!(f.next_batch_into(&mut buf).unwrap().is_none());
    assert!(matches!(f.end(), Some(FrameEnd::Clean)), "{:?}", f.end());
}

#[test]
fn file_framer_headers_locate_batches_without_reading_bodies() {
    use std::io::Write;
    let a = build_data_batch(0, 1, 5, &[b"one", b"two", b"three"]).unwrap();
    let b = build_data_batch(3, 2, 5, &[b"four"]).unwrap();
    // A body bit flipped: headers still locate the batch (the CRC is not computed).
    let mut b_flipped = b.clone();
    let last = b_flipped.len() - 1;
    b_flipped[last] ^= 1;
    let mut tmp = tempfile::tempfile().unwrap();
    tmp.write_all(&a).unwrap();
    tmp.write_all(&b_flipped).unwrap();
    tmp.write_all(&a[..20]).unwrap();
    let len = (a.len() + b.len() + 20) as u64;
    let mut f = FileFramer::new(&tmp, 0, len, MAX_BATCH_SIZE_BYTES);
    let first = f.next_header().unwrap().unwrap();
    assert_eq!(
        first,
        BatchHeader {
            position: 0,
            size_bytes: a.len(),
            base_offset: 0,
            last_offset: 2,
            is_control: false,
        }
    );
    let second = f.next_header().unwrap().unwrap();
    assert_eq!(
        (
            second.position,
            second.size_bytes,
            second.base_offset,
            second.last_offset
        ),
        (a.len() as u64, b.len(), 3, 3)
    );
    assert!(!second.is_control);
    assert!(f.next_header().unwrap().is_none());
    assert!(
        matches!(f.end(), Some(FrameEnd::TornTail { position, available_bytes: 20 }) if *position == (a.len() + b.len()) as u64),
        "{:?}",
        f.end()
    );
    // A control batch is told by its header.
    let c = build_control_batch(4, 2, 5, &[ControlRecord::kraft_version(1)]).unwrap();
    let mut tmp = tempfile::tempfile().unwrap();
    tmp.write_all(&c).unwrap();
    let mut f = FileFramer::new(&tmp, 0, c.len() as u64, MAX_BATCH_SIZE_BYTES);
    let h = f.next_header().unwrap().unwrap();
    assert!(
        h.is_control && h.base_offset == 4 && h.last_offset == 4,
        "{h:?}"
    );
    // A wrong magic ends the walk as corruption.
    let mut bad = a.clone();
    bad[MAGIC_OFFSET] = 1;
    let mut tmp = tempfile::tempfile().unwrap();
    tmp.write_all(&bad).unwrap();
    let mut f = FileFramer::new(&tmp, 0, bad.len() as u64, MAX_BATCH_SIZE_BYTES);
    assert!(f.next_header().unwrap().is_none());
    assert!(matches!(
        f.end(),
        Some(FrameEnd::Corrupt { position: 0, .. })
    ));
}

#[test]
fn trusted_framer_skips_only_the_crc() {
    let a = build_data_batch(0, 1, 5, &[b"one"]).unwrap();
    let mut flipped = a.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    assert_eq!(BatchFramer::new(&flipped, 0, usize::MAX).count(), 0);
    assert_eq!(BatchFramer::trusted(&flipped).count(), 1);
    let mut bad_magic = a.clone();
    bad_magic[MAGIC_OFFSET] = 1;
    let mut f = BatchFramer::trusted(&bad_magic);
    assert_eq!(f.by_ref().count(), 0);
    assert!(matches!(
        f.end(),
        Some(FrameEnd::Corrupt { position: 0, .. })
    ));
}
