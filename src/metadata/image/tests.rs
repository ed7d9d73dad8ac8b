//! One test per replay rule that can go wrong, each naming the Kafka 4.1 class whose rule it
//! checks (`org.apache.kafka.image.*`, `org.apache.kafka.metadata.*`).
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use uuid::Uuid;

use super::{ConfigResource, MetadataImage, ReplayError};
use crate::metadata::record::MetadataRecord as R;
use crate::metadata::records::*;

const T1: Uuid = Uuid::from_u128(0x11);
const T2: Uuid = Uuid::from_u128(0x22);
const DIR_A: Uuid = Uuid::from_u128(0xa);

fn image(records: Vec<R>) -> MetadataImage {
    let mut image = MetadataImage::new();
    for r in records {
        image.replay(r).unwrap();
    }
    image
}

fn topic(name: &str, id: Uuid) -> R {
    R::Topic(TopicRecord {
        name: name.into(),
        topic_id: id,
        ..Default::default()
    })
}

fn partition(id: Uuid, p: i32, replicas: Vec<i32>) -> R {
    R::Partition(PartitionRecord {
        partition_id: p,
        topic_id: id,
        isr: replicas.clone(),
        leader: replicas[0],
        replicas,
        leader_epoch: 0,
        partition_epoch: 0,
        ..Default::default()
    })
}

fn change(id: Uuid, p: i32) -> PartitionChangeRecord {
    PartitionChangeRecord {
        partition_id: p,
        topic_id: id,
        ..Default::default()
    }
}

fn config(resource_type: i8, name: &str, key: &str, value: Option<&str>) -> R {
    R::Config(ConfigRecord {
        resource_type,
        resource_name: name.into(),
        name: key.into(),
        value: value.map(String::from),
        ..Default::default()
    })
}

fn broker(id: i32, epoch: i64) -> R {
    R::RegisterBroker(RegisterBrokerRecord {
        broker_id: id,
        broker_epoch: epoch,
        ..Default::default()
    })
}

/// PartitionRegistration.merge: leader -2 keeps leader and leader epoch; -1 is a real change
/// (no leader) and bumps the leader epoch; the partition epoch goes up on every change; null
/// arrays stay.
#[test]
fn partition_change_leader_sentinels_and_epochs() {
    let mut img = image(vec![topic("a", T1), partition(T1, 0, vec![1, 2, 3])]);
    img.replay(R::PartitionChange(PartitionChangeRecord {
        isr: Some(vec![1, 2]),
        ..change(T1, 0)
    }))
    .unwrap();
    let p = &img.topics[&T1].partitions[&0];
    assert_eq!((p.leader, p.leader_epoch, p.partition_epoch), (1, 0, 1));
    assert_eq!(
        (p.isr().to_vec(), p.replicas().to_vec()),
        (vec![1, 2], vec![1, 2, 3])
    );

    img.replay(R::PartitionChange(PartitionChangeRecord {
        leader: -1,
        ..change(T1, 0)
    }))
    .unwrap();
    let p = &img.topics[&T1].partitions[&0];
    assert_eq!((p.leader, p.leader_epoch, p.partition_epoch), (-1, 1, 2));

    // The same leader again still counts as an election.
    img.replay(R::PartitionChange(PartitionChangeRecord {
        leader: -1,
        leader_recovery_state: 1,
        ..change(T1, 0)
    }))
    .unwrap();
    let p = &img.topics[&T1].partitions[&0];
    assert_eq!(
        (p.leader_epoch, p.partition_epoch, p.leader_recovery_state),
        (2, 3, 1)
    );
    // Recovery state -1 means unchanged.
    img.replay(R::PartitionChange(change(T1, 0))).unwrap();
    assert_eq!(img.topics[&T1].partitions[&0].leader_recovery_state, 1);
}

/// TopicDelta.replay(PartitionChangeRecord): the partition must exist.
#[test]
fn partition_change_for_unknown_partition_is_refused() {
    let mut img = image(vec![topic("a", T1), partition(T1, 0, vec![1])]);
    assert_eq!(
        img.replay(R::PartitionChange(change(T1, 7))),
        Err(ReplayError::UnknownPartition {
            topic_id: T1,
            partition_id: 7
        })
    );
    assert_eq!(
        img.replay(R::PartitionChange(change(T2, 0))),
        Err(ReplayError::UnknownTopic(T2))
    );
}

/// PartitionRegistration: no directories (or only "migrating" ones) become one all-zero id
/// per replica; a list of the wrong length is refused.
#[test]
fn directories_default_to_migrating_and_must_match_replicas() {
    let img = image(vec![topic("a", T1), partition(T1, 0, vec![1, 2])]);
    assert_eq!(
        img.topics[&T1].partitions[&0].directories(),
        vec![Uuid::nil(); 2]
    );
    let mut img = img;
    let bad = R::Partition(PartitionRecord {
        directories: vec![DIR_A],
        ..match partition(T1, 1, vec![1, 2]) {
            R::Partition(p) => p,
            _ => unreachable!("partition() builds a PartitionRecord"),
        }
    });
    assert!(matches!(
        img.replay(bad),
        Err(ReplayError::ReplicaDirectories { .. })
    ));
    // A reassignment without new directories resizes the "migrating" list.
    img.replay(R::PartitionChange(PartitionChangeRecord {
        replicas: Some(vec![1, 2, 3]),
        ..change(T1, 0)
    }))
    .unwrap();
    assert_eq!(
        img.topics[&T1].partitions[&0].directories(),
        vec![Uuid::nil(); 3]
    );
}

/// TopicsDelta/ConfigurationsDelta.replay(RemoveTopicRecord): the topic, its partitions, its
/// name and its configs go; other topics' configs stay; an unknown id is refused.
#[test]
fn remove_topic_drops_partitions_name_and_configs() {
    let mut img = image(vec![
        topic("a", T1),
        partition(T1, 0, vec![1]),
        topic("b", T2),
        config(2, "a", "retention.ms", Some("1")),
        config(2, "b", "retention.ms", Some("2")),
    ]);
    img.replay(R::RemoveTopic(RemoveTopicRecord {
        topic_id: T1,
        ..Default::default()
    }))
    .unwrap();
    assert!(!img.topics.contains_key(&T1));
    assert!(img.topic_by_name("a").is_none());
    assert!(img.topic_by_name("b").is_some());
    let topic_config = |name: &str| ConfigResource {
        resource_type: 2,
        resource_name: name.into(),
    };
    assert!(!img.configs.contains_key(&topic_config("a")));
    assert!(img.configs.contains_key(&topic_config("b")));
    assert_eq!(
        img.replay(R::RemoveTopic(RemoveTopicRecord {
            topic_id: T1,
            ..Default::default()
        })),
        Err(ReplayError::UnknownTopic(T1))
    );
}

/// ConfigurationDelta: a null value deletes the key, and a resource without keys is gone.
#[test]
fn config_null_value_deletes_and_empty_resource_goes() {
    let mut img = image(vec![
        config(4, "", "log.retention.bytes", Some("1")),
        config(4, "", "log.cleaner.threads", Some("2")),
    ]);
    img.replay(config(4, "", "log.retention.bytes", None))
        .unwrap();
    assert_eq!(img.configs.len(), 1);
    img.replay(config(4, "", "log.cleaner.threads", None))
        .unwrap();
    assert!(img.configs.is_empty());
    // Deleting what is not there is no error.
    img.replay(config(2, "x", "k", None)).unwrap();
}

/// TopicsDelta.replay(ClearElrRecord): one topic by name, or all with an empty name; only
/// partitions with some ELR change (and get a new partition epoch); an unknown name is refused.
#[test]
fn clear_elr_filters_by_topic() {
    let with_elr = |id: Uuid, p: i32| {
        R::PartitionChange(PartitionChangeRecord {
            eligible_leader_replicas: Some(vec![2]),
            last_known_elr: Some(vec![3]),
            ..change(id, p)
        })
    };
    let mut img = image(vec![
        topic("a", T1),
        partition(T1, 0, vec![1, 2, 3]),
        partition(T1, 1, vec![1, 2, 3]),
        topic("b", T2),
        partition(T2, 0, vec![1, 2, 3]),
        with_elr(T1, 0),
        with_elr(T2, 0),
    ]);
    img.replay(R::ClearElr(ClearElrRecord {
        topic_name: "a".into(),
        ..Default::default()
    }))
    .unwrap();
    let a0 = &img.topics[&T1].partitions[&0];
    assert!(a0.elr().is_empty() && a0.last_known_elr().is_empty());
    assert_eq!(a0.partition_epoch, 2);
    assert_eq!(
        img.topics[&T1].partitions[&1].partition_epoch, 0,
        "nothing to clear"
    );
    assert_eq!(
        img.topics[&T2].partitions[&0].elr(),
        vec![2],
        "other topic kept"
    );
    img.replay(R::ClearElr(ClearElrRecord::default())).unwrap();
    assert!(img.topics[&T2].partitions[&0].elr().is_empty());
    assert_eq!(
        img.replay(R::ClearElr(ClearElrRecord {
            topic_name: "nope".into(),
            ..Default::default()
        })),
        Err(ReplayError::UnknownTopicName("nope".into()))
    );
}

/// MetadataBatchLoader: records between Begin and End apply together, at End; an Abort drops
/// them; Begin inside a transaction and End/Abort outside one are refused.
#[test]
fn transactions_apply_at_end_and_abort_discards() {
    let mut img = MetadataImage::new();
    img.replay(R::BeginTransaction(BeginTransactionRecord::default()))
        .unwrap();
    img.replay(topic("a", T1)).unwrap();
    assert!(img.topics.is_empty(), "not visible before the end");
    img.replay(R::EndTransaction(EndTransactionRecord::default()))
        .unwrap();
    assert!(img.topics.contains_key(&T1));

    img.replay(R::BeginTransaction(BeginTransactionRecord::default()))
        .unwrap();
    img.replay(topic("b", T2)).unwrap();
    assert_eq!(
        img.replay(R::BeginTransaction(BeginTransactionRecord::default())),
        Err(ReplayError::Transaction(
            "BeginTransactionRecord inside an open transaction"
        ))
    );
    img.replay(R::AbortTransaction(AbortTransactionRecord::default()))
        .unwrap();
    assert!(!img.topics.contains_key(&T2), "aborted");
    assert!(img.open_transaction.is_none());
    assert!(img
        .replay(R::EndTransaction(EndTransactionRecord::default()))
        .is_err());
    assert!(img
        .replay(R::AbortTransaction(AbortTransactionRecord::default()))
        .is_err());
}

/// FeaturesDelta: level 0 removes a feature; kraft.version is never a finalized feature;
/// metadata.version cannot be removed.
#[test]
fn feature_level_zero_removes_and_kraft_version_is_skipped() {
    let level = |name: &str, feature_level| {
        R::FeatureLevel(FeatureLevelRecord {
            name: name.into(),
            feature_level,
            ..Default::default()
        })
    };
    let mut img = image(vec![
        level("metadata.version", 27),
        level("group.version", 1),
        level("kraft.version", 1),
    ]);
    img.replay(level("group.version", 0)).unwrap();
    assert_eq!(
        img.features,
        BTreeMap::from([("metadata.version".to_string(), 27)])
    );
    assert!(img.replay(level("metadata.version", 0)).is_err());
    assert_eq!(img.metadata_version(), Some(27));
}

/// ClusterDelta: fenced is -1/0/1 (unfence, unchanged, fence), in-controlled-shutdown 0/1, an
/// empty directory list changes nothing; the epoch must match; Fence/UnfenceBrokerRecord too.
#[test]
fn broker_change_tri_states_and_epoch_check() {
    let mut img = image(vec![broker(1, 10)]);
    assert!(img.brokers[&1].fenced, "a registration starts fenced");
    let ch = |fenced: i8, shutdown: i8| {
        R::BrokerRegistrationChange(BrokerRegistrationChangeRecord {
            broker_id: 1,
            broker_epoch: 10,
            fenced,
            in_controlled_shutdown: shutdown,
            ..Default::default()
        })
    };
    img.replay(ch(-1, 0)).unwrap();
    assert!(!img.brokers[&1].fenced);
    img.replay(ch(0, 1)).unwrap();
    assert!(!img.brokers[&1].fenced && img.brokers[&1].in_controlled_shutdown);
    img.replay(ch(1, 0)).unwrap();
    assert!(img.brokers[&1].fenced && img.brokers[&1].in_controlled_shutdown);
    assert!(matches!(
        img.replay(ch(2, 0)),
        Err(ReplayError::BadValue { .. })
    ));
    assert!(matches!(
        img.replay(ch(0, 2)),
        Err(ReplayError::BadValue { .. })
    ));
    assert!(matches!(
        img.replay(R::UnfenceBroker(UnfenceBrokerRecord {
            id: 1,
            epoch: 9,
            ..Default::default()
        })),
        Err(ReplayError::BrokerEpoch { .. })
    ));
    img.replay(R::UnfenceBroker(UnfenceBrokerRecord {
        id: 1,
        epoch: 10,
        ..Default::default()
    }))
    .unwrap();
    assert!(!img.brokers[&1].fenced);
    assert!(matches!(
        img.replay(R::FenceBroker(FenceBrokerRecord {
            id: 2,
            epoch: 10,
            ..Default::default()
        })),
        Err(ReplayError::UnknownBroker { .. })
    ));
    img.replay(R::UnregisterBroker(UnregisterBrokerRecord {
        broker_id: 1,
        broker_epoch: 99,
        ..Default::default()
    }))
    .unwrap();
    assert!(img.brokers.is_empty(), "unregistering ignores the epoch");
}

/// ClientQuotaDelta: remove deletes a key; an entity without quotas is gone; the default
/// entity (null name) is its own entity.
#[test]
fn client_quota_remove_and_default_entity() {
    let q = |name: Option<&str>, key: &str, value: f64, remove: bool| {
        R::ClientQuota(ClientQuotaRecord {
            entity: vec![ClientQuotaEntity {
                entity_type: "client-id".into(),
                entity_name: name.map(String::from),
                ..Default::default()
            }],
            key: key.into(),
            value,
            remove,
            ..Default::default()
        })
    };
    let mut img = image(vec![
        q(None, "request_percentage", 50.0, false),
        q(Some("c"), "request_percentage", 10.0, false),
    ]);
    assert_eq!(img.client_quotas.len(), 2);
    img.replay(q(Some("c"), "request_percentage", 0.0, true))
        .unwrap();
    assert_eq!(img.client_quotas.len(), 1);
    let default = img.client_quotas.values().next().unwrap();
    assert_eq!(default.get("request_percentage"), Some(&50.0));
}

/// AclsDelta: removing an unknown ACL is refused; ScramDelta and DelegationTokenDelta: removals
/// of unknown entries are not.
#[test]
fn security_removals() {
    let acl = Uuid::from_u128(0xac1);
    let mut img = image(vec![R::AccessControlEntry(AccessControlEntryRecord {
        id: acl,
        ..Default::default()
    })]);
    let remove = R::RemoveAccessControlEntry(RemoveAccessControlEntryRecord {
        id: acl,
        ..Default::default()
    });
    img.replay(remove.clone()).unwrap();
    assert_eq!(img.replay(remove), Err(ReplayError::UnknownAcl(acl)));
    img.replay(R::RemoveUserScramCredential(
        RemoveUserScramCredentialRecord {
            name: "x".into(),
            mechanism: 1,
            ..Default::default()
        },
    ))
    .unwrap();
    img.replay(R::RemoveDelegationToken(RemoveDelegationTokenRecord {
        token_id: "t".into(),
        ..Default::default()
    }))
    .unwrap();
}

/// An unknown record type is refused (Kafka's replay fails on it), not silently applied.
#[test]
fn unknown_record_type_is_refused() {
    let mut img = MetadataImage::new();
    assert_eq!(
        img.replay(R::Other {
            api_key: 99,
            body: bytes::Bytes::new()
        }),
        Err(ReplayError::UnknownType(99))
    );
    assert_eq!(img.next_producer_id, -1, "empty image: no producer id yet");
}

/// BrokerRegistration / ControllerRegistration keep listeners and supported features as maps
/// by name: a snapshot (hash order) and the log (request order) must give the same image.
#[test]
fn registration_order_of_listeners_and_features_does_not_matter() {
    let feature = |name: &str| BrokerFeature {
        name: name.into(),
        ..Default::default()
    };
    let endpoint = |name: &str| BrokerEndpoint {
        name: name.into(),
        ..Default::default()
    };
    let reg = |features: Vec<BrokerFeature>, end_points: Vec<BrokerEndpoint>| {
        image(vec![R::RegisterBroker(RegisterBrokerRecord {
            broker_id: 1,
            features,
            end_points,
            log_dirs: vec![Uuid::from_u128(2), DIR_A, Uuid::from_u128(u128::MAX)],
            ..Default::default()
        })])
    };
    let a = reg(
        vec![feature("metadata.version"), feature("group.version")],
        vec![endpoint("SASL"), endpoint("PLAIN")],
    );
    let b = reg(
        vec![feature("group.version"), feature("metadata.version")],
        vec![endpoint("PLAIN"), endpoint("SASL")],
    );
    assert_eq!(a, b);
    // Kafka orders directory ids as signed halves: all-ones (-1, -1) comes first.
    assert_eq!(a.brokers[&1].log_dirs[0], Uuid::from_u128(u128::MAX));
}

/// The partition counts replay keeps (Kafka's ReplicationControlManager keeps its imbalanced
/// partitions the same way) equal a count afresh after every kind of change: partitions
/// created, a leader moved off the preferred replica and to none, a partition record replacing
/// one, a topic removed.
#[test]
fn partition_stats_follow_every_change() {
    use super::PartitionStats;
    let check = |img: &MetadataImage| {
        assert_eq!(
            img.partition_stats,
            PartitionStats::count(img.topics.values())
        );
        for t in img.topics.values() {
            assert_eq!(
                t.isr_members,
                super::IsrMembers::count(t.partitions.values())
            );
        }
    };
    let mut img = image(vec![
        topic("a", T1),
        partition(T1, 0, vec![1, 2, 3]),
        partition(T1, 1, vec![2, 3, 1]),
        topic("b", T2),
        partition(T2, 0, vec![3, 1, 2]),
    ]);
    check(&img);
    assert_eq!(img.partition_stats.partitions, 3);
    assert_eq!(img.partition_stats.imbalanced, 0);
    assert_eq!(img.partition_stats.leaders.get(&1), Some(&1));
    img.replay(R::PartitionChange(PartitionChangeRecord {
        leader: 2,
        ..change(T1, 0)
    }))
    .unwrap();
    check(&img);
    assert_eq!(img.partition_stats.imbalanced, 1);
    assert_eq!(img.partition_stats.leaders.get(&1), None);
    assert_eq!(img.partition_stats.leaders.get(&2), Some(&2));
    img.replay(R::PartitionChange(PartitionChangeRecord {
        leader: -1,
        isr: Some(vec![]),
        ..change(T2, 0)
    }))
    .unwrap();
    check(&img);
    assert_eq!(
        (img.partition_stats.offline, img.partition_stats.imbalanced),
        (1, 2)
    );
    assert!(!img.topics[&T2].isr_holds(3), "b's only ISR emptied");
    assert!(img.topics[&T1].isr_holds(3));
    img.replay(partition(T1, 1, vec![1, 2, 3])).unwrap();
    check(&img);
    img.replay(R::RemoveTopic(RemoveTopicRecord {
        topic_id: T1,
        ..Default::default()
    }))
    .unwrap();
    check(&img);
    assert_eq!(img.partition_stats.partitions, 1);
}

/// The active controller's speculative image starts as a copy of the committed one (Kafka's
/// timeline snapshots share the same way): the copy shares every topic, a change to one image
/// copies only the topic it touches, and never shows in the other.
#[test]
fn a_copied_image_shares_topics_until_one_changes() {
    use std::sync::Arc;
    let with_elr = R::PartitionChange(PartitionChangeRecord {
        eligible_leader_replicas: Some(vec![2]),
        ..change(T2, 0)
    });
    let committed = image(vec![
        topic("a", T1),
        partition(T1, 0, vec![1, 2, 3]),
        topic("b", T2),
        partition(T2, 0, vec![1, 2, 3]),
        with_elr,
    ]);
    let mut speculative = committed.clone();
    assert!(Arc::ptr_eq(
        &committed.topics[&T1],
        &speculative.topics[&T1]
    ));
    speculative
        .replay(R::PartitionChange(PartitionChangeRecord {
            leader: 2,
            ..change(T1, 0)
        }))
        .unwrap();
    assert_eq!(speculative.topics[&T1].partitions[&0].leader, 2);
    assert_eq!(committed.topics[&T1].partitions[&0].leader, 1, "unchanged");
    assert!(Arc::ptr_eq(
        &committed.topics[&T2],
        &speculative.topics[&T2]
    ));
    // A ClearElrRecord of every topic copies only the topics it changes.
    let mut cleared = committed.clone();
    cleared
        .replay(R::ClearElr(ClearElrRecord::default()))
        .unwrap();
    assert!(Arc::ptr_eq(&committed.topics[&T1], &cleared.topics[&T1]));
    assert!(cleared.topics[&T2].partitions[&0].elr().is_empty());
    assert_eq!(committed.topics[&T2].partitions[&0].elr(), vec![2]);
    // The statistics of each image follow its own topics.
    let stats_of = |img: &MetadataImage| {
        super::PartitionStats::count(img.topics.values()) == img.partition_stats
    };
    assert!(stats_of(&committed) && stats_of(&speculative) && stats_of(&cleared));
    // Removing a shared topic leaves the other image's copy whole.
    let mut removed = committed.clone();
    removed
        .replay(R::RemoveTopic(RemoveTopicRecord {
            topic_id: T1,
            ..Default::default()
        }))
        .unwrap();
    assert!(!removed.topics.contains_key(&T1));
    assert_eq!(committed.topics[&T1].partitions.len(), 1);
}

/// Two images that replayed the same records hold equal but separate topics; sharing makes
/// them one, and a topic that differs is left as it is.
#[test]
fn an_equal_topic_is_shared_and_a_different_one_is_not() {
    use std::sync::Arc;
    let records = vec![
        topic("a", T1),
        partition(T1, 0, vec![1, 2, 3]),
        topic("b", T2),
        partition(T2, 0, vec![1, 2, 3]),
    ];
    let committed = image(records.clone());
    let mut speculative = image(records);
    speculative
        .replay(R::PartitionChange(PartitionChangeRecord {
            leader: 2,
            ..change(T2, 0)
        }))
        .unwrap();
    assert!(!Arc::ptr_eq(
        &committed.topics[&T1],
        &speculative.topics[&T1]
    ));
    assert!(speculative.share_topic_with(&committed, T1));
    assert!(Arc::ptr_eq(
        &committed.topics[&T1],
        &speculative.topics[&T1]
    ));
    assert!(!speculative.share_topic_with(&committed, T2), "differs");
    assert_eq!(
        speculative.topics[&T2].partitions[&0].leader, 2,
        "left as it was"
    );
    assert!(
        !speculative.share_topic_with(&committed, Uuid::from_u128(0x33)),
        "in neither image"
    );
    // A change after sharing copies the topic and the one partition it changes.
    let before = Arc::clone(&speculative.topics[&T1].partitions[&0]);
    speculative
        .replay(R::PartitionChange(PartitionChangeRecord {
            leader: 3,
            ..change(T1, 0)
        }))
        .unwrap();
    assert_eq!(committed.topics[&T1].partitions[&0].leader, 1);
    assert!(Arc::ptr_eq(&before, &committed.topics[&T1].partitions[&0]));
    assert_eq!(speculative.topics[&T1].partitions[&0].leader, 3);
}

/// ReplicationControlManager.topicsWithCollisionChars: names holding '.' or '_' are kept by
/// their collision form while their topic exists, so a new name is checked in O(log topics).
#[test]
fn topics_with_collision_chars_follow_creation_and_removal() {
    let mut img = image(vec![
        topic("a.b", T1),
        topic("plain", T2),
        partition(T1, 0, vec![1]),
    ]);
    assert_eq!(img.colliding_topic("a_b"), Some("a.b"));
    assert_eq!(
        img.colliding_topic("a.b"),
        None,
        "a name never collides with itself"
    );
    assert_eq!(img.colliding_topic("plain"), None, "no '.' or '_'");
    assert_eq!(img.colliding_topic("a.c"), None);
    assert_eq!(img.topics_by_collision_form.len(), 1);
    img.replay(R::RemoveTopic(RemoveTopicRecord {
        topic_id: T1,
        ..Default::default()
    }))
    .unwrap();
    assert_eq!(img.colliding_topic("a_b"), None);
    assert!(img.topics_by_collision_form.is_empty(), "emptied forms go");
}

/// A PartitionChangeRecord is applied in place, but only once it is checked whole: a refused
/// one (a bad recovery state, directories that do not match the replicas) leaves the
/// partition, its epochs and the statistics as they were.
#[test]
fn a_refused_partition_change_changes_nothing() {
    let mut img = image(vec![topic("a", T1), partition(T1, 0, vec![1, 2, 3])]);
    let before = img.clone();
    for bad in [
        PartitionChangeRecord {
            leader: 2,
            isr: Some(vec![2]),
            leader_recovery_state: 7,
            ..change(T1, 0)
        },
        PartitionChangeRecord {
            leader: 2,
            replicas: Some(vec![1, 2]),
            directories: Some(vec![DIR_A]),
            ..change(T1, 0)
        },
    ] {
        assert!(img.replay(R::PartitionChange(bad)).is_err());
        assert_eq!(img.topics, before.topics);
        assert_eq!(img.partition_stats, before.partition_stats);
    }
}
