//! Snapshot writer/reader/dir tests (KIP-630 file layout).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::records::{BatchView, ControlRecord};
use std::fs;
use std::os::unix::fs::PermissionsExt;

fn header() -> SnapshotHeaderInfo {
    SnapshotHeaderInfo {
        last_contained_log_timestamp_ms: 42,
        kraft_version: Some(1),
        voters: None,
    }
}

fn write_sample(dir: &Path, id: SnapshotId) -> PathBuf {
    let mut w = SnapshotWriter::create(dir, id, &header(), 100).unwrap();
    w.append(&[b"a", b"bb"], 101).unwrap();
    w.append(&[b"ccc"], 102).unwrap();
    w.finish(103).unwrap()
}

#[test]
fn write_then_open() {
    let d = tempfile::tempdir().unwrap();
    let id = SnapshotId {
        end_offset: 1234,
        epoch: 5,
    };
    let path = write_sample(d.path(), id);
    assert_eq!(
        path.file_name().unwrap(),
        "00000000000000001234-0000000005.checkpoint"
    );
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o400
    );
    let snap = RawSnapshot::open(d.path(), id).unwrap();
    assert_eq!(snap.summary().last_contained_log_timestamp_ms, 42);
    assert_eq!(snap.summary().kraft_version, Some(1));
    assert_eq!(snap.summary().data_record_count, 3);
    let batches = snap.batches().unwrap();
    let offsets: Vec<(i64, i64, i32)> = batches
        .iter()
        .map(|b| {
            let v = BatchView::new(b).unwrap();
            (v.base_offset(), v.last_offset(), v.partition_leader_epoch())
        })
        .collect();
    // Header batch holds SNAPSHOT_HEADER + KRAFT_VERSION at 0..1; data 2..3 and 4; footer 5.
    assert_eq!(offsets, vec![(0, 1, 5), (2, 3, 5), (4, 4, 5), (5, 5, 5)]);
    let footer = BatchView::new(&batches[3])
        .unwrap()
        .control_records()
        .unwrap();
    assert_eq!(footer, vec![ControlRecord::snapshot_footer()]);
    assert_eq!(list_snapshots(d.path()).unwrap(), vec![id]);
}

#[test]
fn chunked_download_reproduces_the_file() {
    let src = tempfile::tempdir().unwrap();
    let dst = tempfile::tempdir().unwrap();
    let id = SnapshotId {
        end_offset: 10,
        epoch: 2,
    };
    let path = write_sample(src.path(), id);
    let snap = RawSnapshot::open(src.path(), id).unwrap();
    let mut w = RawSnapshotWriter::create(dst.path(), id).unwrap();
    while w.size_bytes() < snap.size_bytes() {
        let chunk = snap.read_chunk(w.size_bytes(), 7).unwrap();
        assert!(!chunk.is_empty());
        w.append(&chunk).unwrap();
    }
    assert!(snap.read_chunk(snap.size_bytes(), 7).unwrap().is_empty());
    // Before freeze, only a .part exists and it is not a snapshot.
    assert_eq!(list_snapshots(dst.path()).unwrap(), vec![]);
    let out = w.freeze().unwrap();
    assert_eq!(fs::read(out).unwrap(), fs::read(path).unwrap());
    assert_eq!(list_snapshots(dst.path()).unwrap(), vec![id]);
}

#[test]
fn part_files_are_never_snapshots_and_are_cleaned() {
    let d = tempfile::tempdir().unwrap();
    let id = SnapshotId {
        end_offset: 10,
        epoch: 2,
    };
    let good = write_sample(d.path(), id);
    // A crash mid-write: the .part holds a complete-looking prefix.
    let bytes = fs::read(&good).unwrap();
    let part = d
        .path()
        .join("00000000000000000020-0000000002-77.checkpoint.part");
    fs::write(&part, &bytes).unwrap();
    fs::write(
        d.path()
            .join("00000000000000000005-0000000001.checkpoint.deleted"),
        b"x",
    )
    .unwrap();
    fs::write(d.path().join("leader-epoch-checkpoint"), b"0\n0\n").unwrap();
    assert_eq!(list_snapshots(d.path()).unwrap(), vec![id]);
    assert_eq!(clean_leftovers(d.path()).unwrap().len(), 2);
    assert!(!part.exists());
    assert_eq!(latest_snapshot(d.path()).unwrap(), Some(id));
}

#[test]
fn dropping_an_unfrozen_writer_leaves_nothing() {
    let d = tempfile::tempdir().unwrap();
    let id = SnapshotId {
        end_offset: 3,
        epoch: 1,
    };
    let mut w = SnapshotWriter::create(d.path(), id, &header(), 1).unwrap();
    w.append(&[b"x"], 1).unwrap();
    drop(w);
    assert_eq!(fs::read_dir(d.path()).unwrap().count(), 0);
}

#[test]
fn freeze_refuses_a_snapshot_without_footer_or_header() {
    let d = tempfile::tempdir().unwrap();
    let id = SnapshotId {
        end_offset: 3,
        epoch: 1,
    };
    let mut enc = SnapshotEncoder::new(1);
    let mut w = RawSnapshotWriter::create(d.path(), id).unwrap();
    w.append(&enc.header_batch(&header(), 1).unwrap()).unwrap();
    w.append(&enc.data_batch(&[b"x"], 1).unwrap()).unwrap();
    assert!(matches!(w.freeze(), Err(SnapshotError::Invalid { .. })));
    assert_eq!(fs::read_dir(d.path()).unwrap().count(), 0);
    let mut w = RawSnapshotWriter::create(d.path(), id).unwrap();
    w.append(&crate::records::build_data_batch(0, 1, 1, &[b"x"]).unwrap())
        .unwrap();
    w.append(
        &crate::records::build_control_batch(1, 1, 1, &[ControlRecord::snapshot_footer()]).unwrap(),
    )
    .unwrap();
    assert!(w.freeze().is_err());
}

#[test]
fn every_truncation_of_a_snapshot_is_rejected() {
    let d = tempfile::tempdir().unwrap();
    let id = SnapshotId {
        end_offset: 10,
        epoch: 2,
    };
    let bytes = fs::read(write_sample(d.path(), id)).unwrap();
    let t = tempfile::tempdir().unwrap();
    for cut in 0..bytes.len() {
        let p = t.path().join(id.file_name());
        let _ = fs::remove_file(&p);
        fs::write(&p, &bytes[..cut]).unwrap();
        assert!(
            RawSnapshot::open(t.path(), id).is_err(),
            "cut at {cut} accepted"
        );
    }
}

#[test]
fn delete_and_order() {
    let d = tempfile::tempdir().unwrap();
    let a = SnapshotId {
        end_offset: 10,
        epoch: 2,
    };
    let b = SnapshotId {
        end_offset: 20,
        epoch: 3,
    };
    write_sample(d.path(), b);
    write_sample(d.path(), a);
    assert_eq!(earliest_snapshot(d.path()).unwrap(), Some(a));
    assert_eq!(latest_snapshot(d.path()).unwrap(), Some(b));
    delete_snapshot(d.path(), a).unwrap();
    assert_eq!(list_snapshots(d.path()).unwrap(), vec![b]);
}

#[test]
fn name_parsing_matches_kafka_fixed_positions() {
    assert_eq!(
        SnapshotId::parse_file_name("00000000000000000000-0000000000.checkpoint"),
        Some(SnapshotId::BOOTSTRAP)
    );
    assert_eq!(
        SnapshotId::parse_file_name("0000000000000000000-0000000000.checkpoint"),
        None
    );
    assert_eq!(
        SnapshotId::parse_file_name("00000000000000000000-0000000000.checkpoint.part"),
        None
    );
    assert_eq!(SnapshotId::parse_file_name("leader-epoch-checkpoint"), None);
    assert_eq!(SnapshotId::parse_file_name("bootstrap.checkpoint"), None);
}

/// A snapshot file of a big image: data batches of at most 1024 records, the header's
/// timestamp and voters, and loading it gives the image back.
#[test]
fn snapshot_file_batches_and_reloads() {
    use crate::metadata::image::write_tests::{image_of, rich_records};
    use crate::metadata::image::MetadataImage;
    use crate::metadata::record::MetadataRecord as R;
    use crate::metadata::records::ConfigRecord;
    let mut records = rich_records(27);
    for i in 0..2500 {
        records.push(R::Config(ConfigRecord {
            resource_type: 4,
            resource_name: String::new(),
            name: format!("key.{i:04}"),
            value: Some("v".into()),
            ..Default::default()
        }));
    }
    let mut image = image_of(records);
    image.next_offset = 5000;
    image.last_epoch = 3;
    image.last_contained_log_time_ms = 1_700_000_000_000;
    let dir = tempfile::tempdir().unwrap();
    let id = SnapshotId {
        end_offset: image.next_offset,
        epoch: image.last_epoch,
    };
    let header = SnapshotHeaderInfo {
        last_contained_log_timestamp_ms: image.last_contained_log_time_ms,
        kraft_version: Some(0),
        voters: None,
    };
    let values = image.snapshot_records().unwrap();
    write_snapshot(dir.path(), id, &header, &values, 42).unwrap();
    let raw = RawSnapshot::open(dir.path(), id).unwrap();
    assert_eq!(raw.summary().data_record_count, values.len() as u64);
    // header + ceil(2514 / 1024) data batches + footer
    assert_eq!(raw.summary().batch_count, 1 + 3 + 1);
    assert_eq!(
        raw.summary().last_contained_log_timestamp_ms,
        1_700_000_000_000
    );
    assert_eq!(
        crate::snapshot::reader::last_contained_timestamp(dir.path(), id).unwrap(),
        1_700_000_000_000
    );
    let bytes = std::fs::read(id.path_in(dir.path())).unwrap();
    let mut loaded = MetadataImage::new();
    loaded.load_snapshot(&bytes, id.end_offset, "test");
    assert_eq!(loaded, image);
}
