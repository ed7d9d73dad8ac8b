#![allow(clippy::unwrap_used)]

use uuid::Uuid;

use super::controller::{ControllerEndpoint, ControllerFeature, ControllerRegistration};
use super::image::MetadataImage;
use super::record::MetadataRecord;
use super::records::FeatureLevelRecord;
use super::wire::TaggedFields;
use super::MetadataError;
use crate::records::batch::build_data_batch;
use crate::records::feature_level::feature_level_record;

fn registration(id: i32) -> ControllerRegistration {
    ControllerRegistration {
        controller_id: id,
        incarnation_id: Uuid::from_u128(0x0123_4567_89ab_cdef_0011_2233_4455_6677),
        zk_migration_ready: false,
        end_points: vec![ControllerEndpoint {
            name: "CONTROLLER".into(),
            host: "localhost".into(),
            port: 9093,
            security_protocol: 0,
            unknown_tagged: TaggedFields::default(),
        }],
        features: vec![ControllerFeature {
            name: "kraft.version".into(),
            min_supported_version: 0,
            max_supported_version: 1,
            unknown_tagged: TaggedFields::default(),
        }],
        unknown_tagged: TaggedFields::default(),
    }
}

#[test]
fn register_controller_record_layout() {
    let value = MetadataRecord::RegisterController(registration(3))
        .encode_at(0)
        .unwrap();
    let mut want = vec![0x01, 27, 0x00, 0, 0, 0, 3];
    want.extend_from_slice(&0x0123_4567_89ab_cdef_0011_2233_4455_6677u128.to_be_bytes());
    want.push(0); // ZkMigrationReady
    want.push(2); // one endpoint
    want.push(11);
    want.extend_from_slice(b"CONTROLLER");
    want.push(10);
    want.extend_from_slice(b"localhost");
    want.extend_from_slice(&9093u16.to_be_bytes());
    want.extend_from_slice(&[0, 0, 0]); // PLAINTEXT, no tags
    want.push(2); // one feature
    want.push(14);
    want.extend_from_slice(b"kraft.version");
    want.extend_from_slice(&[0, 0, 0, 1, 0]);
    want.push(0); // no tags
    assert_eq!(value, want);
    assert_eq!(
        MetadataRecord::decode(&value).unwrap(),
        MetadataRecord::RegisterController(registration(3))
    );
}

#[test]
fn feature_level_records_agree_with_the_bootstrap_writer() {
    let value = feature_level_record("metadata.version", 27);
    let decoded = MetadataRecord::decode(&value).unwrap();
    assert_eq!(
        decoded,
        MetadataRecord::FeatureLevel(FeatureLevelRecord {
            name: "metadata.version".into(),
            feature_level: 27,
            unknown_tagged: TaggedFields::default()
        })
    );
    assert_eq!(decoded.encode_at(0).unwrap(), value);
}

#[test]
fn malformed_values_are_errors_not_panics() {
    let value = MetadataRecord::RegisterController(registration(1))
        .encode_at(0)
        .unwrap();
    for cut in 0..value.len() {
        assert!(MetadataRecord::decode(&value[..cut]).is_err(), "cut {cut}");
    }
    let mut trailing = value.clone();
    trailing.push(0);
    assert!(MetadataRecord::decode(&trailing).is_err());
    // An array count far beyond the value is refused before allocating.
    let mut huge = value[..24].to_vec();
    huge.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x07]);
    assert!(MetadataRecord::decode(&huge).is_err());
    assert_eq!(
        MetadataRecord::decode(&[2, 12, 0]),
        Err(MetadataError::FrameVersion(2))
    );
    // PartitionRecord v0 needs far more than one byte.
    assert!(MetadataRecord::decode(&[1, 3, 0, 9]).is_err());
}

#[test]
fn image_replays_committed_batches_only() {
    let first = build_data_batch(
        0,
        1,
        1_700_000_000_000,
        &[
            &feature_level_record("metadata.version", 27),
            &feature_level_record("group.version", 1),
        ],
    )
    .unwrap();
    let register = MetadataRecord::RegisterController(registration(2))
        .encode_at(0)
        .unwrap();
    let second = build_data_batch(
        2,
        1,
        1_700_000_000_000,
        &[&register, &feature_level_record("group.version", 0)],
    )
    .unwrap();
    let mut log = first;
    log.extend_from_slice(&second);

    let mut image = MetadataImage::default();
    // High watermark 3: the second batch (offsets 2-3) is not committed yet.
    assert_eq!(image.replay_batches(&log, 3, "test").0, 1);
    assert_eq!(image.metadata_version(), Some(27));
    assert!(image.controller_registration_supported());
    assert!(image.controllers.is_empty());
    assert_eq!(image.features.get("group.version"), Some(&1));
    // Replaying again from the start skips what was applied.
    assert_eq!(image.replay_batches(&log, 4, "test").0, 1);
    assert_eq!(image.next_offset, 4);
    assert_eq!(image.controllers.get(&2), Some(&registration(2)));
    assert_eq!(image.features.get("group.version"), None, "level 0 removes");
    assert_eq!(image.replay_batches(&log, 4, "test").0, 0);
}
