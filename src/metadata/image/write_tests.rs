//! The image written as snapshot records: Kafka's section order, record versions by
//! metadata.version (`MetadataVersion.registerBrokerRecordVersion` / `partitionRecordVersion`),
//! loss checks, and a snapshot file that reloads to the same image.
#![allow(clippy::unwrap_used)]

use uuid::Uuid;

use super::{ImageWriteError, MetadataImage};
use crate::metadata::record::{ApiMessageAndVersion, MetadataRecord as R};
use crate::metadata::records::*;

const T1: Uuid = Uuid::from_u128(0x11);
const DIR_A: Uuid = Uuid::from_u128(0xa);

fn feature(name: &str, level: i16) -> R {
    R::FeatureLevel(FeatureLevelRecord {
        name: name.into(),
        feature_level: level,
        ..Default::default()
    })
}

/// An image with something in every section, at metadata.version `mv` (ELR on from 4.0-IV1).
pub(crate) fn rich_records(mv: i16) -> Vec<R> {
    vec![
        feature("group.version", 1),
        feature("metadata.version", mv),
        feature("eligible.leader.replicas.version", i16::from(mv >= 23)),
        R::RegisterBroker(RegisterBrokerRecord {
            broker_id: 4,
            broker_epoch: 10,
            incarnation_id: Uuid::from_u128(4),
            end_points: vec![BrokerEndpoint {
                name: "PLAINTEXT".into(),
                host: "localhost".into(),
                port: 9092,
                ..Default::default()
            }],
            rack: Some("r1".into()),
            fenced: false,
            log_dirs: vec![DIR_A],
            ..Default::default()
        }),
        R::RegisterController(RegisterControllerRecord {
            controller_id: 1,
            incarnation_id: Uuid::from_u128(1),
            ..Default::default()
        }),
        R::Topic(TopicRecord {
            name: "orders".into(),
            topic_id: T1,
            ..Default::default()
        }),
        R::Partition(PartitionRecord {
            partition_id: 1,
            topic_id: T1,
            replicas: vec![4, 5],
            isr: vec![4],
            leader: 4,
            leader_epoch: 3,
            partition_epoch: 7,
            directories: vec![DIR_A, Uuid::nil()],
            eligible_leader_replicas: Some(vec![5]),
            ..Default::default()
        }),
        R::Partition(PartitionRecord {
            partition_id: 0,
            topic_id: T1,
            replicas: vec![4],
            isr: vec![4],
            leader: 4,
            leader_epoch: 0,
            partition_epoch: 0,
            ..Default::default()
        }),
        R::Config(ConfigRecord {
            resource_type: 2,
            resource_name: "orders".into(),
            name: "retention.ms".into(),
            value: Some("1000".into()),
            ..Default::default()
        }),
        R::ClientQuota(ClientQuotaRecord {
            entity: vec![ClientQuotaEntity {
                entity_type: "user".into(),
                entity_name: None,
                ..Default::default()
            }],
            key: "producer_byte_rate".into(),
            value: 1024.0,
            ..Default::default()
        }),
        R::ProducerIds(ProducerIdsRecord {
            broker_id: 4,
            broker_epoch: 10,
            next_producer_id: 2000,
            ..Default::default()
        }),
        R::AccessControlEntry(AccessControlEntryRecord {
            id: Uuid::from_u128(0xac1),
            resource_type: 2,
            resource_name: "orders".into(),
            pattern_type: 3,
            principal: "User:alice".into(),
            host: "*".into(),
            operation: 3,
            permission_type: 3,
            ..Default::default()
        }),
        R::UserScramCredential(UserScramCredentialRecord {
            name: "alice".into(),
            mechanism: 1,
            salt: vec![1, 2],
            stored_key: vec![3],
            server_key: vec![4],
            iterations: 4096,
            ..Default::default()
        }),
        R::DelegationToken(DelegationTokenRecord {
            owner: "User:alice".into(),
            token_id: "tok".into(),
            ..Default::default()
        }),
    ]
}

pub(crate) fn image_of(records: Vec<R>) -> MetadataImage {
    let mut image = MetadataImage::new();
    for r in records {
        image.replay(r).unwrap();
    }
    image
}

fn decoded(values: &[Vec<u8>]) -> Vec<ApiMessageAndVersion> {
    values
        .iter()
        .map(|v| ApiMessageAndVersion::decode(v).unwrap())
        .collect()
}

/// Replaying the written records gives the same image back (every section round-trips).
#[test]
fn snapshot_records_replay_to_the_same_image() {
    let image = image_of(rich_records(27));
    let reloaded = image_of(
        decoded(&image.snapshot_records().unwrap())
            .into_iter()
            .map(|r| r.message)
            .collect(),
    );
    assert_eq!(reloaded.to_json(), image.to_json());
    assert_eq!(reloaded, image);
}

/// MetadataImage.write: features (metadata.version first, v0), cluster, topics (TopicRecord
/// before its partitions, by partition id), configs, quotas, producer ids, ACLs, SCRAM, tokens.
#[test]
fn sections_in_kafka_order_with_metadata_version_first() {
    let records = decoded(&image_of(rich_records(27)).snapshot_records().unwrap());
    let names: Vec<&str> = records.iter().map(|r| r.message.name()).collect();
    assert_eq!(
        names,
        [
            "FeatureLevelRecord",
            "FeatureLevelRecord",
            "FeatureLevelRecord",
            "RegisterBrokerRecord",
            "RegisterControllerRecord",
            "TopicRecord",
            "PartitionRecord",
            "PartitionRecord",
            "ConfigRecord",
            "ClientQuotaRecord",
            "ProducerIdsRecord",
            "AccessControlEntryRecord",
            "UserScramCredentialRecord",
            "DelegationTokenRecord"
        ]
    );
    let R::FeatureLevel(first) = &records[0].message else {
        panic!("not a feature");
    };
    assert_eq!(
        (first.name.as_str(), records[0].version),
        ("metadata.version", 0)
    );
    let partitions: Vec<i32> = records
        .iter()
        .filter_map(|r| match &r.message {
            R::Partition(p) => Some(p.partition_id),
            _ => None,
        })
        .collect();
    assert_eq!(partitions, [0, 1]);
    // ProducerIdsImage.write: the broker fields are not kept.
    let pid = records
        .iter()
        .find_map(|r| match &r.message {
            R::ProducerIds(p) => Some(p.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        (pid.broker_id, pid.broker_epoch, pid.next_producer_id),
        (-1, -1, 2000)
    );
}

fn versions(records: Vec<R>) -> Result<(u16, u16), ImageWriteError> {
    let written = decoded(&image_of(records).snapshot_records()?);
    let version_of = |name: &str| {
        written
            .iter()
            .find(|r| r.message.name() == name)
            .map(|r| r.version)
            .unwrap()
    };
    Ok((
        version_of("RegisterBrokerRecord"),
        version_of("PartitionRecord"),
    ))
}

/// RegisterBrokerRecord v1/v2/v3/v4 and PartitionRecord v0/v1/v2 by metadata.version; data a
/// version cannot carry fails the snapshot (Kafka's default loss handler throws).
#[test]
fn record_versions_follow_metadata_version() {
    let plain = |mv: i16| -> Vec<R> {
        rich_records(mv)
            .into_iter()
            .filter(|r| {
                !matches!(
                    r,
                    R::RegisterController(_) | R::DelegationToken(_) | R::UserScramCredential(_)
                )
            })
            .map(|r| match r {
                R::RegisterBroker(mut b) => {
                    b.log_dirs.clear();
                    R::RegisterBroker(b)
                }
                R::Partition(mut p) => {
                    p.directories.clear();
                    R::Partition(p)
                }
                other => other,
            })
            .collect()
    };
    assert_eq!(versions(plain(7)).unwrap(), (1, 0));
    assert_eq!(versions(plain(14)).unwrap(), (2, 0));
    assert_eq!(versions(rich_records(17)).unwrap(), (3, 1));
    assert_eq!(versions(rich_records(27)).unwrap(), (3, 2));
    assert_eq!(versions(rich_records(30)).unwrap(), (4, 2));
    for (mv, what) in [
        (14, "controller registration"),
        (13, "delegation tokens"),
        (10, "SCRAM"),
    ] {
        let mut records = plain(mv);
        records.extend(rich_records(mv).into_iter().filter(|r| match r {
            R::RegisterController(_) => what.starts_with("controller"),
            R::DelegationToken(_) => what.starts_with("delegation"),
            R::UserScramCredential(_) => what == "SCRAM",
            _ => false,
        }));
        match image_of(records).snapshot_records() {
            Err(ImageWriteError::Loss { level, what: lost }) => {
                assert_eq!(level, mv);
                assert!(lost.contains(what), "{lost}");
            }
            other => panic!("mv {mv}: expected a loss of {what}, got {other:?}"),
        }
    }
    // A replica directory below 3.7-IV2 cannot be written.
    let mut records = plain(14);
    records.push(R::Partition(PartitionRecord {
        partition_id: 2,
        topic_id: T1,
        replicas: vec![4],
        directories: vec![DIR_A],
        ..Default::default()
    }));
    assert!(matches!(
        image_of(records).snapshot_records(),
        Err(ImageWriteError::Loss { .. })
    ));
    assert!(matches!(
        MetadataImage::new().snapshot_records(),
        Err(ImageWriteError::NoMetadataVersion)
    ));
}

/// PartitionRegistration.toRecord: ELR lists only with eligible.leader.replicas.version ≥ 1
/// and only when not empty (tagged fields).
#[test]
fn elr_written_only_when_enabled_and_not_empty() {
    let elr_of = |records: Vec<R>| -> Vec<Option<Vec<i32>>> {
        decoded(&image_of(records).snapshot_records().unwrap())
            .into_iter()
            .filter_map(|r| match r.message {
                R::Partition(p) => Some(p.eligible_leader_replicas),
                _ => None,
            })
            .collect()
    };
    assert_eq!(elr_of(rich_records(27)), [None, Some(vec![5])]);
    let mut off = rich_records(27);
    off.push(feature("eligible.leader.replicas.version", 0));
    assert_eq!(elr_of(off), [None, None]);
}
