#![allow(clippy::unwrap_used)]
//! The description format's rules on hand-made bytes, and round trips of generated records.
//! (Kafka-written bytes of every type and version: protocol-tests/metadata_records.rs.)

use bytes::Bytes;
use proptest::prelude::*;
use uuid::Uuid;

use super::*;
use crate::metadata::record::ApiMessageAndVersion;
use crate::metadata::wire::TaggedFields;
use crate::metadata::MetadataError;
use crate::server::workload::no_op_record;

fn decode(value: &[u8]) -> ApiMessageAndVersion {
    ApiMessageAndVersion::decode(value).unwrap()
}

#[test]
fn a_version_newer_than_described_is_a_clear_error() {
    // TopicRecord v1 (only v0 exists), RegisterBrokerRecord v5 (v0-v4 exist).
    for (value, record, api_key, version, max) in [
        (&[1u8, 2, 1, 0][..], "TopicRecord", 2, 1, 0),
        (&[1, 0, 5, 0][..], "RegisterBrokerRecord", 0, 5, 4),
    ] {
        let err = ApiMessageAndVersion::decode(value).unwrap_err();
        assert_eq!(
            err,
            MetadataError::UnsupportedVersion {
                record,
                api_key,
                version,
                max
            }
        );
        assert!(err.to_string().contains("is not supported"), "{err}");
    }
    let topic = ApiMessageAndVersion::new(MetadataRecord::Topic(TopicRecord::default()), 1);
    assert!(matches!(
        topic.encode(),
        Err(MetadataError::UnsupportedVersion { .. })
    ));
}

#[test]
fn a_value_the_version_cannot_carry_is_refused() {
    let partition = PartitionRecord {
        directories: vec![Uuid::from_u128(1)],
        ..Default::default()
    };
    let record = MetadataRecord::Partition(partition);
    assert_eq!(
        record.encode_at(0),
        Err(MetadataError::FieldNotInVersion {
            record: "PartitionRecord",
            field: "directories",
            version: 0
        })
    );
    assert!(record.encode_at(1).is_ok());
    // Defaults are fine at any version (fenced defaults to true, and v0 has it anyway).
    let broker = MetadataRecord::RegisterBroker(RegisterBrokerRecord::default());
    assert!(broker.encode_at(0).is_ok());
}

#[test]
fn an_unknown_record_type_is_kept_as_bytes() {
    let value = [1u8, 40, 3, 0xde, 0xad, 0x00];
    let record = decode(&value);
    assert_eq!(
        record.message,
        MetadataRecord::Other {
            api_key: 40,
            body: Bytes::from_static(&[0xde, 0xad, 0x00])
        }
    );
    assert_eq!(record.version, 3);
    assert_eq!(record.encode().unwrap(), value);
}

#[test]
fn unknown_tagged_fields_survive_a_round_trip() {
    // The workload's NoOpRecords carry their padding as unknown tag 100.
    let value = no_op_record(300);
    let record = decode(&value);
    let MetadataRecord::NoOp(no_op) = &record.message else {
        panic!("{record:?}");
    };
    assert_eq!(no_op.unknown_tagged.0.len(), 1);
    assert_eq!(no_op.unknown_tagged.0[0].0, 100);
    assert_eq!(record.encode().unwrap(), &value[..]);

    // Known tags are written in tag order, then the unknown ones (as Kafka's writer does).
    let change = PartitionChangeRecord {
        partition_id: 3,
        topic_id: Uuid::from_u128(7),
        leader: 2,
        isr: Some(vec![2, 1]),
        unknown_tagged: TaggedFields(vec![(20, Bytes::from_static(b"xy"))]),
        ..Default::default()
    };
    let value = MetadataRecord::PartitionChange(change.clone())
        .encode_at(0)
        .unwrap();
    let mut want = vec![1, 5, 0, 0, 0, 0, 3];
    want.extend_from_slice(&7u128.to_be_bytes());
    want.extend_from_slice(&[3, 0, 9, 3, 0, 0, 0, 2, 0, 0, 0, 1]); // 3 tags; tag 0 isr [2, 1]
    want.extend_from_slice(&[1, 4, 0, 0, 0, 2]); // tag 1 leader 2
    want.extend_from_slice(&[20, 2, b'x', b'y']); // the unknown tag last
    assert_eq!(value, want);
    assert_eq!(
        decode(&value).message,
        MetadataRecord::PartitionChange(change)
    );
}

#[test]
fn a_tag_the_version_does_not_define_is_unknown() {
    // PartitionChangeRecord tag 8 is Directories from v1 on; at v0 it is just a tagged field.
    let mut body = vec![0, 0, 0, 1];
    body.extend_from_slice(&[0; 16]);
    body.extend_from_slice(&[1, 8, 1, 1]); // one tag: 8, one byte, an empty compact array
    for version in [0u8, 1] {
        let mut value = vec![1, 5, version];
        value.extend_from_slice(&body);
        let record = decode(&value);
        let MetadataRecord::PartitionChange(change) = &record.message else {
            panic!("{record:?}");
        };
        if version == 0 {
            assert_eq!(change.directories, None);
            assert_eq!(change.unknown_tagged.0.len(), 1);
        } else {
            assert_eq!(change.directories, Some(vec![]));
            assert!(change.unknown_tagged.0.is_empty());
        }
        assert_eq!(record.encode().unwrap(), value);
    }
}

#[test]
fn malformed_values_are_errors_not_panics() {
    let broker = RegisterBrokerRecord {
        broker_id: 1,
        end_points: vec![BrokerEndpoint {
            name: "PLAINTEXT".into(),
            host: "localhost".into(),
            port: 9092,
            ..Default::default()
        }],
        rack: Some("r1".into()),
        log_dirs: vec![Uuid::from_u128(9)],
        cordoned_log_dirs: Some(vec![]),
        ..Default::default()
    };
    let value = MetadataRecord::RegisterBroker(broker).encode_at(4).unwrap();
    for cut in 0..value.len() {
        assert!(
            ApiMessageAndVersion::decode(&value[..cut]).is_err(),
            "cut {cut}"
        );
    }
    let mut trailing = value.clone();
    trailing.push(0);
    assert!(ApiMessageAndVersion::decode(&trailing).is_err());
    // A known tag (BeginTransactionRecord.Name) whose value is longer than its field is
    // refused; the exact one is fine.
    let long_tag = [1u8, 23, 0, 1, 0, 3, 2, b'a', 0];
    assert!(ApiMessageAndVersion::decode(&long_tag).is_err());
    let exact_tag = [1u8, 23, 0, 1, 0, 2, 2, b'a'];
    assert!(ApiMessageAndVersion::decode(&exact_tag).is_ok());
    // Counts far beyond the value are refused before anything is allocated.
    let huge_array = [1u8, 10, 0, 2, b'o', 2, b'r', 0xff, 0xff, 0xff, 0xff, 0x07];
    assert!(ApiMessageAndVersion::decode(&huge_array).is_err());
    let huge_tags = [1u8, 20, 0, 0xff, 0xff, 0xff, 0xff, 0x07];
    assert!(ApiMessageAndVersion::decode(&huge_tags).is_err());
    // Null where the field is not nullable.
    assert!(ApiMessageAndVersion::decode(&[1, 2, 0, 0]).is_err());
    // Invalid UTF-8 in a string.
    let bad_utf8 = [1u8, 28, 0, 2, 0xff, 0];
    assert!(ApiMessageAndVersion::decode(&bad_utf8).is_err());
}

fn ids() -> impl Strategy<Value = Vec<i32>> {
    prop::collection::vec(-1i32..5000, 0..5)
}

fn uuids() -> impl Strategy<Value = Vec<Uuid>> {
    prop::collection::vec(any::<u128>().prop_map(Uuid::from_u128), 0..4)
}

fn text() -> impl Strategy<Value = String> {
    "[a-zé.\\-]{0,12}"
}

prop_compose! {
    fn partition_change()(
        partition_id in any::<i32>(), topic in any::<u128>(),
        isr in prop::option::of(ids()), leader in -2i32..10,
        replicas in prop::option::of(ids()), removing in prop::option::of(ids()),
        adding in prop::option::of(ids()), recovery in -1i8..2,
        dirs in prop::option::of(uuids()), elr in prop::option::of(ids()),
        last_elr in prop::option::of(ids()),
    ) -> PartitionChangeRecord {
        PartitionChangeRecord {
            partition_id, topic_id: Uuid::from_u128(topic), isr, leader, replicas,
            removing_replicas: removing, adding_replicas: adding,
            leader_recovery_state: recovery, directories: dirs,
            eligible_leader_replicas: elr, last_known_elr: last_elr,
            unknown_tagged: TaggedFields::default(),
        }
    }
}

prop_compose! {
    fn register_broker()(
        broker_id in any::<i32>(), zk in any::<bool>(), incarnation in any::<u128>(),
        epoch in any::<i64>(),
        endpoints in prop::collection::vec((text(), text(), any::<u16>(), 0i16..4), 0..3),
        features in prop::collection::vec((text(), any::<i16>(), any::<i16>()), 0..3),
        rack in prop::option::of(text()), fenced in any::<bool>(), shutdown in any::<bool>(),
        log_dirs in uuids(), cordoned in prop::option::of(uuids()),
    ) -> RegisterBrokerRecord {
        RegisterBrokerRecord {
            broker_id, is_migrating_zk_broker: zk, incarnation_id: Uuid::from_u128(incarnation),
            broker_epoch: epoch,
            end_points: endpoints.into_iter().map(|(name, host, port, security_protocol)| {
                BrokerEndpoint { name, host, port, security_protocol, ..Default::default() }
            }).collect(),
            features: features.into_iter().map(|(name, min, max)| BrokerFeature {
                name, min_supported_version: min, max_supported_version: max, ..Default::default()
            }).collect(),
            rack, fenced, in_controlled_shutdown: shutdown, log_dirs, cordoned_log_dirs: cordoned,
            unknown_tagged: TaggedFields::default(),
        }
    }
}

prop_compose! {
    fn client_quota()(
        entity in prop::collection::vec((text(), prop::option::of(text())), 0..3),
        key in text(), bits in any::<u64>(), remove in any::<bool>(),
    ) -> ClientQuotaRecord {
        ClientQuotaRecord {
            entity: entity.into_iter().map(|(entity_type, entity_name)| ClientQuotaEntity {
                entity_type, entity_name, ..Default::default()
            }).collect(),
            key, value: f64::from_bits(bits), remove,
            unknown_tagged: TaggedFields::default(),
        }
    }
}

/// Writes at `version` (fields the version lacks are left out), decodes, and checks the bytes
/// come back; at the highest version (which carries every field) the record itself must come
/// back too, and at a lower one `encode` refuses exactly when a lost field held a value.
fn check_round_trip(record: MetadataRecord, version: u16, max: u16) -> Result<(), TestCaseError> {
    let mut value = vec![1, record.api_key() as u8, version as u8];
    record.write_body(version, &mut value);
    match record.encode_at(version) {
        Ok(encoded) => prop_assert_eq!(&encoded, &value),
        Err(MetadataError::FieldNotInVersion { field, .. }) => {
            prop_assert!(version < max, "{} missing at the highest version", field);
        }
        Err(e) => return Err(TestCaseError::fail(e.to_string())),
    }
    let decoded = ApiMessageAndVersion::decode(&value).unwrap();
    prop_assert_eq!(decoded.version, version);
    prop_assert_eq!(decoded.encode().unwrap(), value);
    if version == max {
        // f64 NaN != NaN: compare through the bytes, which carry the bits.
        prop_assert_eq!(
            format!("{:?}", decoded.message.body_json(version)),
            format!("{:?}", record.body_json(version))
        );
        if !matches!(record, MetadataRecord::ClientQuota(_)) {
            prop_assert_eq!(decoded.message, record);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn partition_changes_round_trip(record in partition_change(), version in 0u16..=2) {
        check_round_trip(MetadataRecord::PartitionChange(record), version, 2)?;
    }

    #[test]
    fn broker_registrations_round_trip(record in register_broker(), version in 0u16..=4) {
        check_round_trip(MetadataRecord::RegisterBroker(record), version, 4)?;
    }

    #[test]
    fn client_quotas_round_trip(record in client_quota()) {
        check_round_trip(MetadataRecord::ClientQuota(record), 0, 0)?;
    }

    /// Arbitrary bytes after a valid frame header never panic, and whatever decodes
    /// re-encodes to the same bytes when no tag is out of order or repeated.
    #[test]
    fn arbitrary_bodies_never_panic(
        key in prop::sample::select(RECORD_TYPES.iter().map(|t| t.0).collect::<Vec<_>>()),
        version in 0u16..6,
        body in prop::collection::vec(any::<u8>(), 0..64),
    ) {
        let mut value = vec![1, key as u8, version as u8];
        value.extend_from_slice(&body);
        if let Ok(record) = ApiMessageAndVersion::decode(&value) {
            prop_assert!(record.encode().is_ok());
        }
    }
}
