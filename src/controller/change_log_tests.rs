//! Unit tests of change_log: the lines as Kafka's managers word them.
use super::*;
use crate::metadata::image::PartitionParts;

fn config(resource_type: i8, name: &str) -> ConfigRecord {
    ConfigRecord {
        resource_type,
        resource_name: String::new(),
        name: name.to_string(),
        value: Some("v".to_string()),
        ..Default::default()
    }
}

#[test]
fn secrets_and_unknown_keys_are_hidden_as_kafka_hides_them() {
    assert!(!is_sensitive(&config(TOPIC, "retention.ms")));
    assert!(is_sensitive(&config(TOPIC, "no.such.key")));
    assert!(!is_sensitive(&config(BROKER, "log.retention.ms")));
    assert!(is_sensitive(&config(BROKER, "ssl.keystore.password")));
    assert!(is_sensitive(&config(
        BROKER,
        "listener.name.internal.ssl.key.password"
    )));
    assert!(is_sensitive(&config(
        BROKER,
        "listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config"
    )));
    assert!(is_sensitive(&config(
        crate::metadata::image::resource::GROUP,
        "consumer.session.timeout.ms"
    )));
}

#[test]
fn registrations_read_as_kafka_prints_them() {
    let p = PartitionRegistration::from_parts(PartitionParts {
        replicas: vec![1, 2],
        directories: vec![uuid::Uuid::nil(); 2],
        isr: vec![1, 2],
        removing_replicas: vec![],
        adding_replicas: vec![],
        leader: 1,
        leader_recovery_state: 0,
        leader_epoch: 0,
        partition_epoch: 0,
        elr: vec![],
        last_known_elr: vec![],
    });
    assert_eq!(
        registration_text(&p),
        "PartitionRegistration(replicas=[1, 2], directories=[AAAAAAAAAAAAAAAAAAAAAA, \
         AAAAAAAAAAAAAAAAAAAAAA], isr=[1, 2], removingReplicas=[], addingReplicas=[], \
         elr=[], lastKnownElr=[], leader=1, leaderRecoveryState=RECOVERED, leaderEpoch=0, \
         partitionEpoch=0)"
    );
}

/// The line written for each replayed PartitionRecord formats the record as the
/// registration it makes prints, for every shape of record, and names what is wrong
/// with one the registration refuses.
#[test]
fn a_record_reads_as_the_registration_it_makes() {
    let dir = uuid::Uuid::from_u128(0x7c81_6805_a9e8_cb63_55e0_8e45_e098_86f3);
    let base = PartitionRecord {
        partition_id: 3,
        topic_id: uuid::Uuid::from_u128(7),
        replicas: vec![1, 2, 3],
        isr: vec![1, 3],
        removing_replicas: vec![3],
        adding_replicas: vec![2],
        leader: 1,
        leader_recovery_state: 1,
        leader_epoch: 4,
        partition_epoch: 9,
        ..Default::default()
    };
    let shapes = [
        base.clone(),
        PartitionRecord {
            directories: vec![dir, uuid::Uuid::nil(), dir],
            eligible_leader_replicas: Some(vec![2]),
            last_known_elr: Some(vec![]),
            ..base.clone()
        },
        PartitionRecord {
            directories: vec![uuid::Uuid::nil(); 3],
            eligible_leader_replicas: Some(vec![]),
            last_known_elr: Some(vec![5, 6]),
            leader_recovery_state: 0,
            ..base.clone()
        },
        PartitionRecord {
            replicas: vec![],
            isr: vec![],
            removing_replicas: vec![],
            adding_replicas: vec![],
            leader: -1,
            ..base.clone()
        },
    ];
    for r in shapes {
        let made = PartitionRegistration::from_record(&r).unwrap();
        assert_eq!(RecordRegistration(&r).to_string(), registration_text(&made));
    }
    assert!(RecordRegistration(&PartitionRecord {
        directories: vec![dir],
        ..base.clone()
    })
    .to_string()
    .starts_with("<invalid: "));
    assert!(RecordRegistration(&PartitionRecord {
        leader_recovery_state: 2,
        ..base
    })
    .to_string()
    .starts_with("<invalid: "));
    assert!(registration_text(
        &PartitionRegistration::from_record(&PartitionRecord {
            replicas: vec![4],
            directories: vec![dir],
            ..Default::default()
        })
        .unwrap()
    )
    .contains("directories=[fIFoBanoy2NV4I5F4JiG8w]"));
}

/// As Kafka's `ReplicationControlManager.replay(PartitionRecord)`: a new partition is
/// logged, a record that changes an existing one is logged as such, and one equal to the
/// partition it replaces is not logged at all.
#[test]
fn an_existing_partition_is_logged_only_when_the_record_changes_it() {
    use crate::metadata::records::TopicRecord;
    let topic_id = uuid::Uuid::from_u128(7);
    let mut image = MetadataImage::new();
    image
        .replay(MetadataRecord::Topic(TopicRecord {
            name: "t".into(),
            topic_id,
            ..Default::default()
        }))
        .unwrap();
    let record = PartitionRecord {
        partition_id: 0,
        topic_id,
        replicas: vec![1],
        isr: vec![1],
        leader: 1,
        ..Default::default()
    };
    let mut replay = |r: &PartitionRecord| {
        let r = MetadataRecord::Partition(r.clone());
        let log = crate::logging::captured(tracing::Level::INFO, || replayed(&image, &r));
        image.replay(r).unwrap();
        log
    };
    assert!(replay(&record).contains("Replayed PartitionRecord for new partition t-0 "));
    assert_eq!(replay(&record), "");
    let changed = PartitionRecord {
        leader_epoch: 1,
        ..record
    };
    assert!(replay(&changed).contains("for existing partition t-0 with topic ID "));
    // A record that leaves the partition recovering is also an unclean change to Kafka.
    let unclean = PartitionRecord {
        leader_recovery_state: 1,
        leader_epoch: 2,
        ..changed
    };
    assert!(replay(&unclean).contains(&format!(
        "UNCLEAN partition change for t-0 with topic ID {}: leaderRecoveryState: \
         RECOVERED -> RECOVERING, leaderEpoch: 1 -> 2",
        KafkaUuid(&topic_id)
    )));
}

/// As Kafka 4.1's `replay(PartitionChangeRecord)`: the change is logged as
/// `maybeLogPartitionChange` words it (INFO after an unclean election, else DEBUG), and
/// the record itself at INFO only when it touches a reassignment (else DEBUG).
#[test]
fn partition_changes_are_logged_as_kafka_logs_them() {
    use crate::metadata::records::{PartitionChangeRecord, TopicRecord};
    let topic_id = uuid::Uuid::from_u128(7);
    let id = KafkaUuid(&topic_id).to_string();
    let mut image = MetadataImage::new();
    for r in [
        MetadataRecord::Topic(TopicRecord {
            name: "t".into(),
            topic_id,
            ..Default::default()
        }),
        MetadataRecord::Partition(PartitionRecord {
            partition_id: 0,
            topic_id,
            replicas: vec![1, 2],
            isr: vec![1, 2],
            leader: 1,
            leader_epoch: 0,
            partition_epoch: 0,
            ..Default::default()
        }),
    ] {
        image.replay(r).unwrap();
    }
    let change = PartitionChangeRecord {
        partition_id: 0,
        topic_id,
        ..Default::default()
    };
    let logged = |image: &MetadataImage, level, r: &PartitionChangeRecord| {
        let r = MetadataRecord::PartitionChange(r.clone());
        crate::logging::captured(level, || replayed(image, &r))
    };
    // A clean ISR shrink: nothing at INFO; its diff and the record at DEBUG.
    let shrink = PartitionChangeRecord {
        isr: Some(vec![1]),
        ..change.clone()
    };
    assert_eq!(logged(&image, tracing::Level::INFO, &shrink), "");
    let debug = logged(&image, tracing::Level::DEBUG, &shrink);
    assert!(
        debug.contains(&format!(
            "partition change for t-0 with topic ID {id}: isr: [1, 2] -> [1], \
             partitionEpoch: 0 -> 1"
        )),
        "{debug}"
    );
    assert!(debug.contains("Replayed partition change PartitionChangeRecord("));
    // An unclean election: INFO, Kafka's diff in Kafka's order.
    let unclean = PartitionChangeRecord {
        isr: Some(vec![2]),
        leader: 2,
        leader_recovery_state: 1,
        ..change.clone()
    };
    let info = logged(&image, tracing::Level::INFO, &unclean);
    assert!(
        info.contains(&format!(
            "UNCLEAN partition change for t-0 with topic ID {id}: isr: [1, 2] -> [2], \
             leader: 1 -> 2, leaderRecoveryState: RECOVERED -> RECOVERING, \
             leaderEpoch: 0 -> 1, partitionEpoch: 0 -> 1"
        )),
        "{info}"
    );
    assert!(!info.contains("Replayed partition"), "{info}");
    // Replicas alone are no reassignment to Kafka 4.1's line; adding replicas is.
    let replicas = PartitionChangeRecord {
        replicas: Some(vec![2, 1]),
        ..change.clone()
    };
    assert_eq!(logged(&image, tracing::Level::INFO, &replicas), "");
    let adding = PartitionChangeRecord {
        replicas: Some(vec![1, 2, 3]),
        adding_replicas: Some(vec![3]),
        ..change
    };
    assert!(logged(&image, tracing::Level::INFO, &adding)
        .contains("Replayed partition assignment change PartitionChangeRecord("));
}
