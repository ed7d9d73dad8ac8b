//! DeleteTopics and CreatePartitions: ReplicationControlManagerTest's and ControllerApisTest's
//! cases, on an active controller over an in-memory log.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;

use kafka_protocol::messages::create_partitions_request::{
    CreatePartitionsAssignment, CreatePartitionsTopic,
};
use kafka_protocol::messages::create_topics_request::CreatableReplicaAssignment;
use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
use kafka_protocol::messages::{
    BrokerId, CreatePartitionsRequest, CreatePartitionsResponse, DeleteTopicsRequest,
    DeleteTopicsResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::context::{registration, topic, topic_config, Ctx, CLUSTER_ID};
use crate::codec::{RequestBody, ResponseBody};
use crate::controller::errors;
use crate::controller::ControllerConfig;
use crate::metadata::image::ConfigResource;

fn name(n: &str) -> TopicName {
    TopicName(StrBytes::from_string(n.to_string()))
}

fn delete(ctx: &mut Ctx, req: DeleteTopicsRequest, version: i16) -> DeleteTopicsResponse {
    match ctx.call(RequestBody::DeleteTopics(req), version) {
        ResponseBody::DeleteTopics(r) => r,
        other => panic!("{other:?}"),
    }
}

fn by_name(names: &[&str]) -> DeleteTopicsRequest {
    DeleteTopicsRequest::default().with_topic_names(names.iter().map(|n| name(n)).collect())
}

fn state(n: Option<&str>, id: Uuid) -> DeleteTopicState {
    DeleteTopicState::default()
        .with_name(n.map(name))
        .with_topic_id(id)
}

/// (name, id, code, message) of each result, as a set: Kafka shuffles them.
fn results(r: &DeleteTopicsResponse) -> BTreeSet<(Option<String>, Uuid, i16, Option<String>)> {
    r.responses
        .iter()
        .map(|t| {
            (
                t.name.as_ref().map(|n| n.0.to_string()),
                t.topic_id,
                t.error_code,
                t.error_message.as_ref().map(|m| m.to_string()),
            )
        })
        .collect()
}

fn row(
    n: Option<&str>,
    id: Uuid,
    code: i16,
    message: Option<&str>,
) -> (Option<String>, Uuid, i16, Option<String>) {
    (n.map(String::from), id, code, message.map(String::from))
}

fn with_brokers(ids: &[i32]) -> Ctx {
    let mut ctx = Ctx::active(27);
    for id in ids {
        ctx.register_unfenced(*id, None);
    }
    ctx
}

fn topic_id(ctx: &Ctx, n: &str) -> Uuid {
    ctx.image().topic_by_name(n).unwrap().id
}

/// ReplicationControlManagerTest.testDeleteTopics: an unknown id is refused, the topic goes
/// with its partitions and configs in one RemoveTopicRecord.
#[test]
fn test_delete_topics() {
    let mut ctx = with_brokers(&[0, 1]);
    let r = ctx.create_topics(
        vec![topic("foo", 3, 2).with_configs(vec![
            topic_config("cleanup.policy", Some("compact")),
            topic_config("min.cleanable.dirty.ratio", Some("0.1")),
        ])],
        false,
    );
    assert_eq!(r.topics[0].error_code, 0);
    let id = topic_id(&ctx, "foo");
    let foo = ConfigResource {
        resource_type: 2,
        resource_name: "foo".into(),
    };
    assert_eq!(ctx.image().configs[&foo].len(), 2);
    let invalid = Uuid::from_u64_pair(id.as_u64_pair().0.wrapping_add(1), id.as_u64_pair().1);
    let before = ctx.log.end();
    let r = delete(
        &mut ctx,
        DeleteTopicsRequest::default().with_topics(vec![state(None, invalid)]),
        6,
    );
    assert_eq!(
        results(&r),
        [row(
            None,
            invalid,
            errors::UNKNOWN_TOPIC_ID,
            Some("This server does not host this topic ID.")
        )]
        .into()
    );
    assert_eq!(ctx.log.end(), before, "nothing written for an unknown id");
    let r = delete(
        &mut ctx,
        DeleteTopicsRequest::default().with_topics(vec![state(None, id)]),
        6,
    );
    assert_eq!(results(&r), [row(Some("foo"), id, 0, None)].into());
    assert_eq!(ctx.log.end(), before + 1, "one RemoveTopicRecord");
    assert!(ctx.image().topic_by_name("foo").is_none());
    assert!(!ctx.image().topics.contains_key(&id));
    assert!(!ctx.image().configs.contains_key(&foo), "configs go too");
    // Gone: by name it is unknown now.
    let r = delete(&mut ctx, by_name(&["foo"]), 5);
    assert_eq!(
        results(&r),
        [row(
            Some("foo"),
            Uuid::nil(),
            errors::UNKNOWN_TOPIC_OR_PARTITION,
            Some("This server does not host this topic-partition.")
        )]
        .into()
    );
}

/// ControllerApisTest.testDeleteTopicsByName.
#[test]
fn test_delete_topics_by_name() {
    let mut ctx = with_brokers(&[0]);
    ctx.create_topic("foo", 1, 1);
    let foo = topic_id(&ctx, "foo");
    let r = delete(&mut ctx, by_name(&["foo", "bar", "quux", "quux"]), 5);
    assert_eq!(
        results(&r),
        [
            row(
                Some("quux"),
                Uuid::nil(),
                errors::INVALID_REQUEST,
                Some("Duplicate topic name.")
            ),
            row(
                Some("bar"),
                Uuid::nil(),
                errors::UNKNOWN_TOPIC_OR_PARTITION,
                Some("This server does not host this topic-partition.")
            ),
            row(Some("foo"), foo, 0, None),
        ]
        .into()
    );
    assert!(ctx.image().topic_by_name("foo").is_none());
}

/// ControllerApisTest.testDeleteTopicsById.
#[test]
fn test_delete_topics_by_id() {
    let mut ctx = with_brokers(&[0]);
    ctx.create_topic("foo", 1, 1);
    let foo = topic_id(&ctx, "foo");
    let bar = Uuid::from_u128(0xbab);
    let quux = Uuid::from_u128(0x9999);
    let req = DeleteTopicsRequest::default().with_topics(vec![
        state(None, foo),
        state(None, bar),
        state(None, quux),
        state(None, quux),
    ]);
    let r = delete(&mut ctx, req, 6);
    assert_eq!(
        results(&r),
        [
            row(
                None,
                quux,
                errors::INVALID_REQUEST,
                Some("Duplicate topic id.")
            ),
            row(
                None,
                bar,
                errors::UNKNOWN_TOPIC_ID,
                Some("This server does not host this topic ID.")
            ),
            row(Some("foo"), foo, 0, None),
        ]
        .into()
    );
}

/// ControllerApisTest.testInvalidDeleteTopicsRequest: neither or both of name and id, a
/// name that maps to an id also given, duplicates of each; nothing is deleted.
#[test]
fn test_invalid_delete_topics_request() {
    let mut ctx = with_brokers(&[0]);
    ctx.create_topic("foo", 1, 1);
    ctx.create_topic("bar", 1, 1);
    let (foo, bar) = (topic_id(&ctx, "foo"), topic_id(&ctx, "bar"));
    let baz = Uuid::from_u128(0xba2);
    let req = DeleteTopicsRequest::default().with_topics(vec![
        state(None, Uuid::nil()),
        state(Some("foo"), foo),
        state(Some("bar"), Uuid::nil()),
        state(None, bar),
        state(Some("quux"), Uuid::nil()),
        state(Some("quux"), Uuid::nil()),
        state(Some("quux"), Uuid::nil()),
        state(None, baz),
        state(None, baz),
        state(None, baz),
    ]);
    let before = ctx.log.end();
    let r = delete(&mut ctx, req, 6);
    assert_eq!(
        results(&r),
        [
            row(
                None,
                Uuid::nil(),
                errors::INVALID_REQUEST,
                Some("Neither topic name nor id were specified.")
            ),
            row(
                Some("foo"),
                foo,
                errors::INVALID_REQUEST,
                Some("You may not specify both topic name and topic id.")
            ),
            row(
                Some("bar"),
                bar,
                errors::INVALID_REQUEST,
                Some("The provided topic name maps to an ID that was already supplied.")
            ),
            row(
                Some("quux"),
                Uuid::nil(),
                errors::INVALID_REQUEST,
                Some("Duplicate topic name.")
            ),
            row(
                None,
                baz,
                errors::INVALID_REQUEST,
                Some("Duplicate topic id.")
            ),
        ]
        .into()
    );
    assert_eq!(ctx.log.end(), before, "nothing deleted");
    assert!(ctx.image().topic_by_name("foo").is_some());
    assert!(ctx.image().topic_by_name("bar").is_some());
}

/// ControllerApisTest.testDeleteTopicsDisabled: TOPIC_DELETION_DISABLED from v3, INVALID_REQUEST
/// before, on every topic, without a message.
#[test]
fn test_delete_topics_disabled() {
    let mut cfg = ControllerConfig::new(1, CLUSTER_ID);
    cfg.delete_topic_enable = false;
    let mut ctx = Ctx::with_config(cfg, 27);
    ctx.register_unfenced(0, None);
    ctx.create_topic("foo", 1, 1);
    let foo = topic_id(&ctx, "foo");
    let r = delete(
        &mut ctx,
        DeleteTopicsRequest::default().with_topics(vec![state(Some("foo"), Uuid::nil())]),
        6,
    );
    assert_eq!(
        results(&r),
        [row(Some("foo"), Uuid::nil(), 73, None)].into()
    );
    let r = delete(&mut ctx, by_name(&["foo"]), 1);
    assert_eq!(
        results(&r),
        [row(Some("foo"), Uuid::nil(), errors::INVALID_REQUEST, None)].into()
    );
    assert_eq!(topic_id(&ctx, "foo"), foo, "still there");
}

/// ControllerApisTest.testNotControllerErrorPreventsDeletingTopics.
#[test]
fn test_not_controller_error_prevents_deleting_topics() {
    let mut ctx = with_brokers(&[0]);
    ctx.create_topic("foo", 1, 1);
    ctx.lose_leadership(2);
    let r = delete(&mut ctx, by_name(&["foo"]), 5);
    assert_eq!(r.responses.len(), 1);
    assert_eq!(r.responses[0].error_code, errors::NOT_CONTROLLER);
    assert!(ctx.image().topic_by_name("foo").is_some());
}

/// A removal not committed yet: the name still resolves at the committed offset, and the
/// topic is already gone from the speculative image (Kafka answers UNKNOWN_TOPIC_ID then).
#[test]
fn a_second_delete_before_the_first_commits_is_unknown_topic_id() {
    let mut ctx = with_brokers(&[0]);
    ctx.create_topic("foo", 1, 1);
    let foo = topic_id(&ctx, "foo");
    let first = ctx.send(RequestBody::DeleteTopics(by_name(&["foo"])), 6);
    let second = ctx.send(RequestBody::DeleteTopics(by_name(&["foo"])), 6);
    ctx.commit();
    let ResponseBody::DeleteTopics(first) = ctx.answer(first).unwrap() else {
        panic!()
    };
    let ResponseBody::DeleteTopics(second) = ctx.answer(second).unwrap() else {
        panic!()
    };
    assert_eq!(results(&first), [row(Some("foo"), foo, 0, None)].into());
    assert_eq!(
        results(&second),
        [row(Some("foo"), foo, errors::UNKNOWN_TOPIC_ID, None)].into()
    );
}

/// A topic deleted and created again gets a new id; its old partitions are gone.
#[test]
fn a_deleted_topic_can_be_created_again() {
    let mut ctx = with_brokers(&[0, 1]);
    ctx.create_topic("foo", 2, 2);
    let old = topic_id(&ctx, "foo");
    delete(&mut ctx, by_name(&["foo"]), 6);
    let r = ctx.create_topic("foo", 1, 1);
    assert_eq!(r.topics[0].error_code, 0);
    let new = topic_id(&ctx, "foo");
    assert_ne!(new, old);
    assert_eq!(
        ctx.image().topic_by_name("foo").unwrap().partitions.len(),
        1
    );
}

pub(super) fn grow(
    n: &str,
    count: i32,
    assignments: Option<Vec<Vec<i32>>>,
) -> CreatePartitionsTopic {
    CreatePartitionsTopic::default()
        .with_name(name(n))
        .with_count(count)
        .with_assignments(assignments.map(|a| {
            a.into_iter()
                .map(|ids| {
                    CreatePartitionsAssignment::default()
                        .with_broker_ids(ids.into_iter().map(BrokerId).collect())
                })
                .collect()
        }))
}

pub(super) fn create_partitions(
    ctx: &mut Ctx,
    topics: Vec<CreatePartitionsTopic>,
    validate_only: bool,
) -> CreatePartitionsResponse {
    let req = CreatePartitionsRequest::default()
        .with_topics(topics)
        .with_validate_only(validate_only);
    match ctx.call(RequestBody::CreatePartitions(req), 3) {
        ResponseBody::CreatePartitions(r) => r,
        other => panic!("{other:?}"),
    }
}

pub(super) fn partition_results(
    r: &CreatePartitionsResponse,
) -> Vec<(String, i16, Option<String>)> {
    let mut v: Vec<_> = r
        .results
        .iter()
        .map(|t| {
            (
                t.name.0.to_string(),
                t.error_code,
                t.error_message.as_ref().map(|m| m.to_string()),
            )
        })
        .collect();
    v.sort();
    v
}

fn prow(n: &str, code: i16, message: Option<&str>) -> (String, i16, Option<String>) {
    (n.to_string(), code, message.map(String::from))
}

/// ReplicationControlManagerTest.testCreatePartitions: growth by placement and by manual
/// assignment, and each refusal with Kafka's message.
#[test]
fn test_create_partitions() {
    let mut ctx = with_brokers(&[0, 1, 3]);
    ctx.create_topics(
        vec![
            topic("foo", 3, 2),
            topic("bar", 4, 2),
            topic("quux", 2, 2),
            topic("foo2", 2, 2),
        ],
        false,
    );
    let r = create_partitions(
        &mut ctx,
        vec![
            grow("foo", 5, None),
            grow("bar", 3, None),
            grow("baz", 3, None),
            grow("quux", 2, None),
        ],
        false,
    );
    let mut expected = vec![
        prow("foo", 0, None),
        prow(
            "bar",
            errors::INVALID_PARTITIONS,
            Some("The topic bar currently has 4 partition(s); 3 would not be an increase."),
        ),
        prow("baz", errors::UNKNOWN_TOPIC_OR_PARTITION, None),
        prow(
            "quux",
            errors::INVALID_PARTITIONS,
            Some("Topic already has 2 partition(s)."),
        ),
    ];
    expected.sort();
    assert_eq!(partition_results(&r), expected);
    let foo = ctx.image().topic_by_name("foo").unwrap();
    assert_eq!(foo.partitions.len(), 5);
    for p in foo.partitions.values() {
        assert_eq!(p.replicas().len(), 2, "the topic's replication factor");
        assert_eq!(p.isr(), p.replicas());
        assert_eq!(p.leader, p.replicas()[0]);
    }
    let r = create_partitions(
        &mut ctx,
        vec![
            grow("foo", 6, Some(vec![vec![1, 3]])),
            grow("bar", 5, Some(vec![vec![1]])),
            grow("quux", 4, Some(vec![vec![1, 0]])),
            grow("foo2", 3, Some(vec![vec![2, 0]])),
        ],
        false,
    );
    let mut expected = vec![
        prow("foo", 0, None),
        prow(
            "bar",
            errors::INVALID_REPLICA_ASSIGNMENT,
            Some(
                "The manual partition assignment includes a partition with 1 replica(s), but \
                 this is not consistent with previous partitions, which have 2 replica(s).",
            ),
        ),
        prow(
            "quux",
            errors::INVALID_REPLICA_ASSIGNMENT,
            Some("Attempted to add 2 additional partition(s), but only 1 assignment(s) were specified."),
        ),
        prow(
            "foo2",
            errors::INVALID_REPLICA_ASSIGNMENT,
            Some("The manual partition assignment includes broker 2, but no such broker is registered."),
        ),
    ];
    expected.sort();
    assert_eq!(partition_results(&r), expected);
    let p5 = ctx.partition("foo", 5);
    assert_eq!(p5.replicas(), [1, 3]);
    assert_eq!((p5.leader, p5.leader_epoch, p5.partition_epoch), (1, 0, 0));
    let dirs = [
        ctx.image().brokers[&1].log_dirs[0],
        ctx.image().brokers[&3].log_dirs[0],
    ];
    assert_eq!(
        p5.directories(),
        dirs,
        "each replica in its broker's only dir"
    );
    assert_eq!(
        ctx.image().topic_by_name("bar").unwrap().partitions.len(),
        4
    );
}

/// ControllerApisTest.testCreatePartitionsRequest: a name given twice is refused whole;
/// validate_only answers without writing.
#[test]
fn test_create_partitions_request() {
    for validate_only in [true, false] {
        let mut ctx = with_brokers(&[0]);
        ctx.create_topic("foo", 1, 1);
        ctx.create_topic("bar", 1, 1);
        let before = ctx.log.end();
        let r = create_partitions(
            &mut ctx,
            vec![
                grow("foo", 5, None),
                grow("bar", 5, None),
                grow("bar", 5, None),
                grow("bar", 5, None),
            ],
            validate_only,
        );
        assert_eq!(
            partition_results(&r),
            [
                prow(
                    "bar",
                    errors::INVALID_REQUEST,
                    Some("Duplicate topic name.")
                ),
                prow("foo", 0, None),
            ]
        );
        let grown = ctx.image().topic_by_name("foo").unwrap().partitions.len();
        if validate_only {
            assert_eq!(ctx.log.end(), before, "validate_only writes nothing");
            assert_eq!(grown, 1);
        } else {
            assert_eq!(grown, 5);
        }
        assert_eq!(
            ctx.image().topic_by_name("bar").unwrap().partitions.len(),
            1
        );
    }
}

/// ReplicationControlManagerTest.testCreatePartitionsFailsWhenAllBrokersAreFencedOrInControlledShutdown.
/// Kafka's test puts broker 0 in controlled shutdown by a record alone, so its heartbeat
/// manager still offers broker 0 to the placer and the ISR check refuses ("Unable to
/// replicate ..."); after a real shutdown heartbeat, as here, the placer itself refuses with
/// its own message, as Kafka's does then.
#[test]
fn test_create_partitions_fails_when_all_brokers_are_fenced_or_in_controlled_shutdown() {
    let mut ctx = with_brokers(&[0, 1]);
    ctx.create_topic("foo", 1, 2);
    // Broker 1 asks to be fenced; broker 0 goes into controlled shutdown.
    let epoch1 = ctx.image().brokers[&1].broker_epoch;
    let end = ctx.log.end();
    ctx.heartbeat(1, epoch1, end, true, false);
    assert!(ctx.image().brokers[&1].fenced);
    let epoch0 = ctx.image().brokers[&0].broker_epoch;
    let end = ctx.log.end();
    ctx.heartbeat(0, epoch0, end, false, true);
    assert!(ctx.image().brokers[&0].in_controlled_shutdown);
    let r = create_partitions(&mut ctx, vec![grow("foo", 2, None)], false);
    assert_eq!(
        partition_results(&r),
        [prow(
            "foo",
            errors::INVALID_REPLICATION_FACTOR,
            Some("All brokers are currently fenced."),
        )]
    );
}

/// ReplicationControlManagerTest.testCreatePartitionsISRInvariants: fenced brokers may be
/// replicas of the new partition but are not in its ISR. (Kafka's test marks broker 1 shutting
/// down by a record alone; here its heartbeat does, and a broker leading nothing is fenced at
/// once, so broker 3 is added to leave an ISR.)
#[test]
fn test_create_partitions_isr_invariants() {
    let mut ctx = with_brokers(&[0, 1, 3]);
    let r = ctx.register(registration(2, None));
    assert_eq!(r.error_code, 0, "broker 2 registered, fenced");
    let epoch1 = ctx.image().brokers[&1].broker_epoch;
    let end = ctx.log.end();
    ctx.heartbeat(1, epoch1, end, false, true);
    let t = topic("foo", -1, -1).with_assignments(vec![CreatableReplicaAssignment::default()
        .with_partition_index(0)
        .with_broker_ids(vec![BrokerId(0), BrokerId(1), BrokerId(2)])]);
    assert_eq!(ctx.create_topics(vec![t], false).topics[0].error_code, 0);
    assert_eq!(ctx.partition("foo", 0).isr(), [0], "1 shut down, 2 fenced");
    assert!(ctx.image().brokers[&1].fenced && ctx.image().brokers[&2].fenced);
    let r = create_partitions(&mut ctx, vec![grow("foo", 2, None)], false);
    assert_eq!(partition_results(&r), [prow("foo", 0, None)]);
    let p1 = ctx.partition("foo", 1);
    assert_eq!(p1.replicas().len(), 3);
    assert!(
        p1.replicas().iter().any(|r| *r == 1 || *r == 2),
        "three of four brokers: a fenced one among them"
    );
    let active: Vec<i32> = p1
        .replicas()
        .iter()
        .copied()
        .filter(|r| *r == 0 || *r == 3)
        .collect();
    assert_eq!(p1.isr(), active, "fenced brokers are not in the ISR");
    assert_eq!(
        (p1.leader, p1.leader_epoch, p1.partition_epoch),
        (p1.isr()[0], 0, 0)
    );
}

/// ReplicationControlManagerTest.testCreatePartitionsFailsWithManualAssignmentWithAllFenced.
#[test]
fn test_create_partitions_fails_with_manual_assignment_with_all_fenced() {
    let mut ctx = with_brokers(&[0, 1, 2]);
    for id in 3..6 {
        assert_eq!(ctx.register(registration(id, None)).error_code, 0);
    }
    let t = topic("foo", -1, -1).with_assignments(vec![CreatableReplicaAssignment::default()
        .with_partition_index(0)
        .with_broker_ids(vec![BrokerId(0), BrokerId(1), BrokerId(2)])]);
    assert_eq!(ctx.create_topics(vec![t], false).topics[0].error_code, 0);
    let r = create_partitions(
        &mut ctx,
        vec![grow("foo", 2, Some(vec![vec![3, 4, 5]]))],
        false,
    );
    assert_eq!(
        partition_results(&r),
        [prow(
            "foo",
            errors::INVALID_REPLICA_ASSIGNMENT,
            Some(
                "All brokers specified in the manual partition assignment for partition 1 are \
                 fenced or in controlled shutdown."
            ),
        )]
    );
    let r = create_partitions(
        &mut ctx,
        vec![grow("foo", 2, Some(vec![vec![2, 4, 5]]))],
        false,
    );
    assert_eq!(partition_results(&r), [prow("foo", 0, None)]);
    let p1 = ctx.partition("foo", 1);
    assert_eq!(p1.replicas(), [2, 4, 5]);
    assert_eq!((p1.isr(), p1.leader), (&[2][..], 2));
}

/// ReplicationControlManagerTest.testValidateBadManualPartitionAssignments, through
/// CreatePartitions: an empty list, a broker not registered, a broker twice.
#[test]
fn test_validate_bad_manual_partition_assignments() {
    let mut ctx = with_brokers(&[1, 2]);
    ctx.create_topic("foo", 1, 2);
    let cases = [
        (
            vec![],
            "The manual partition assignment includes an empty replica list.",
        ),
        (
            vec![1, 2, 3],
            "The manual partition assignment includes broker 3, but no such broker is registered.",
        ),
        (
            vec![1, 2, 2],
            "The manual partition assignment includes the broker 2 more than once.",
        ),
        (
            vec![1],
            "The manual partition assignment includes a partition with 1 replica(s), but this \
             is not consistent with previous partitions, which have 2 replica(s).",
        ),
    ];
    for (replicas, message) in cases {
        let r = create_partitions(&mut ctx, vec![grow("foo", 2, Some(vec![replicas]))], false);
        assert_eq!(
            partition_results(&r),
            [prow(
                "foo",
                errors::INVALID_REPLICA_ASSIGNMENT,
                Some(message)
            )]
        );
    }
    assert_eq!(
        ctx.image().topic_by_name("foo").unwrap().partitions.len(),
        1
    );
}

/// A leadership lost before the records commit answers NOT_CONTROLLER on every topic (the
/// parked answer is rewritten), so the broker retries on the new controller.
#[test]
fn create_partitions_parked_when_leadership_is_lost_answers_not_controller() {
    let mut ctx = with_brokers(&[0]);
    ctx.create_topic("foo", 1, 1);
    let req = CreatePartitionsRequest::default().with_topics(vec![grow("foo", 3, None)]);
    let id = ctx.send(RequestBody::CreatePartitions(req), 3);
    assert!(ctx.answer(id).is_none(), "parked until commit");
    ctx.lose_leadership(2);
    let ResponseBody::CreatePartitions(r) = ctx.answer(id).unwrap() else {
        panic!()
    };
    assert_eq!(r.results[0].error_code, errors::NOT_CONTROLLER);
}

/// QuorumControllerTest.testAppendRecords (Kafka's `appendRecords`): a non-atomic write of more
/// than 10,000 records (fencing a broker that leads 12,000 partitions) goes out in batches of
/// at most 10,000; an atomic one that large is refused up front (POLICY_VIOLATION).
#[test]
fn large_writes_are_split_into_batches_of_at_most_ten_thousand_records() {
    let mut ctx = with_brokers(&[0]);
    for t in ["a", "b"] {
        let r = ctx.create_topic(t, 6_000, 1);
        assert_eq!(r.topics[0].error_code, 0, "{t}");
    }
    let one = ctx.create_topics(vec![topic("c", 10_000, 1)], true);
    assert_eq!(
        (
            one.topics[0].error_code,
            one.topics[0].error_message.as_deref()
        ),
        (
            errors::POLICY_VIOLATION,
            Some("Unable to perform excessively large batch operation.")
        ),
        "10,000 partitions and the TopicRecord are over the bound, validate_only too"
    );
    let from = ctx.log.end();
    let epoch = ctx.image().brokers[&0].broker_epoch;
    let end = ctx.log.end();
    ctx.heartbeat(0, epoch, end, true, false);
    assert!(ctx.image().brokers[&0].fenced);
    let sizes: Vec<i64> = ctx
        .log
        .log
        .batch_bounds(from)
        .into_iter()
        .map(|(base, next)| next - base)
        .collect();
    assert!(sizes.iter().all(|n| *n <= 10_000), "{sizes:?}");
    assert_eq!(
        sizes.iter().sum::<i64>(),
        12_001,
        "12,000 partition changes and the fencing"
    );
    assert!(sizes.len() >= 2);
    let led = ctx
        .image()
        .topics
        .values()
        .flat_map(|t| t.partitions.values())
        .filter(|p| p.leader == 0)
        .count();
    assert_eq!(led, 0, "every partition lost its leader");
}
