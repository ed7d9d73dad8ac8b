//! Partition reassignments: ReplicationControlManagerTest's reassignment cases and
//! PartitionReassignmentReplicasTest's completion rules, on an active controller over an
//! in-memory log.
#![allow(clippy::unwrap_used)]

use kafka_protocol::messages::alter_partition_reassignments_request::{
    ReassignablePartition, ReassignableTopic,
};
use kafka_protocol::messages::alter_partition_request::{BrokerState, PartitionData, TopicData};
use kafka_protocol::messages::create_topics_request::CreatableReplicaAssignment;
use kafka_protocol::messages::list_partition_reassignments_request::ListPartitionReassignmentsTopics;
use kafka_protocol::messages::{
    AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse, AlterPartitionRequest,
    AlterPartitionResponse, BrokerId, ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::context::{topic, Ctx};
use crate::codec::{RequestBody, ResponseBody};
use crate::controller::errors;

use crate::common::errors::NO_REASSIGNMENT_IN_PROGRESS;

fn name(n: &str) -> TopicName {
    TopicName(StrBytes::from_string(n.to_string()))
}

/// A topic placed by hand: partition i on `assignments[i]`.
fn create(ctx: &mut Ctx, n: &str, assignments: &[&[i32]]) {
    let t = topic(n, -1, -1).with_assignments(
        assignments
            .iter()
            .enumerate()
            .map(|(i, a)| {
                CreatableReplicaAssignment::default()
                    .with_partition_index(i as i32)
                    .with_broker_ids(a.iter().copied().map(BrokerId).collect())
            })
            .collect(),
    );
    assert_eq!(ctx.create_topics(vec![t], false).topics[0].error_code, 0);
}

/// A topic's partitions and their targets (`None`: cancel).
type Targets<'a> = Vec<(&'a str, Vec<(i32, Option<Vec<i32>>)>)>;

/// (topic, partition, replicas, adding, removing).
type Ongoing = (String, i32, Vec<i32>, Vec<i32>, Vec<i32>);

fn reassign(
    ctx: &mut Ctx,
    topics: Targets<'_>,
    version: i16,
    allow_rf_change: bool,
) -> AlterPartitionReassignmentsResponse {
    let req = AlterPartitionReassignmentsRequest::default()
        .with_allow_replication_factor_change(allow_rf_change)
        .with_topics(
            topics
                .into_iter()
                .map(|(n, parts)| {
                    ReassignableTopic::default()
                        .with_name(name(n))
                        .with_partitions(
                            parts
                                .into_iter()
                                .map(|(i, r)| {
                                    ReassignablePartition::default()
                                        .with_partition_index(i)
                                        .with_replicas(
                                            r.map(|r| r.into_iter().map(BrokerId).collect()),
                                        )
                                })
                                .collect(),
                        )
                })
                .collect(),
        );
    match ctx.call(RequestBody::AlterPartitionReassignments(req), version) {
        ResponseBody::AlterPartitionReassignments(r) => r,
        other => panic!("{other:?}"),
    }
}

/// (topic, partition, code, message) of every result, in answer order.
fn codes(r: &AlterPartitionReassignmentsResponse) -> Vec<(String, i32, i16, Option<String>)> {
    r.responses
        .iter()
        .flat_map(|t| {
            t.partitions.iter().map(|p| {
                (
                    t.name.0.to_string(),
                    p.partition_index,
                    p.error_code,
                    p.error_message.as_ref().map(|m| m.to_string()),
                )
            })
        })
        .collect()
}

fn row(t: &str, p: i32, code: i16, m: Option<&str>) -> (String, i32, i16, Option<String>) {
    (t.to_string(), p, code, m.map(String::from))
}

fn list(
    ctx: &mut Ctx,
    topics: Option<Vec<(&str, Vec<i32>)>>,
) -> ListPartitionReassignmentsResponse {
    let req = ListPartitionReassignmentsRequest::default().with_topics(topics.map(|ts| {
        ts.into_iter()
            .map(|(n, ps)| {
                ListPartitionReassignmentsTopics::default()
                    .with_name(name(n))
                    .with_partition_indexes(ps)
            })
            .collect()
    }));
    match ctx.call(RequestBody::ListPartitionReassignments(req), 0) {
        ResponseBody::ListPartitionReassignments(r) => r,
        other => panic!("{other:?}"),
    }
}

/// (topic, partition, replicas, adding, removing) of every ongoing reassignment listed.
fn ongoing(r: &ListPartitionReassignmentsResponse) -> Vec<Ongoing> {
    let ids = |v: &[BrokerId]| v.iter().map(|b| b.0).collect::<Vec<_>>();
    r.topics
        .iter()
        .flat_map(|t| {
            t.partitions.iter().map(|p| {
                (
                    t.name.0.to_string(),
                    p.partition_index,
                    ids(&p.replicas),
                    ids(&p.adding_replicas),
                    ids(&p.removing_replicas),
                )
            })
        })
        .collect()
}

fn alter_isr(
    ctx: &mut Ctx,
    broker: i32,
    topic_name: &str,
    partition: i32,
    isr: &[i32],
) -> AlterPartitionResponse {
    let part = ctx.partition(topic_name, partition);
    let topic_id = ctx.image().topic_by_name(topic_name).unwrap().id;
    let epoch = ctx.image().brokers[&broker].broker_epoch;
    let req = AlterPartitionRequest::default()
        .with_broker_id(BrokerId(broker))
        .with_broker_epoch(epoch)
        .with_topics(vec![TopicData::default()
            .with_topic_id(topic_id)
            .with_partitions(vec![PartitionData::default()
                .with_partition_index(partition)
                .with_leader_epoch(part.leader_epoch)
                .with_partition_epoch(part.partition_epoch)
                .with_new_isr_with_epochs(
                    isr.iter()
                        .map(|b| {
                            BrokerState::default()
                                .with_broker_id(BrokerId(*b))
                                .with_broker_epoch(-1)
                        })
                        .collect(),
                )])]);
    match ctx.call(RequestBody::AlterPartition(req), 3) {
        ResponseBody::AlterPartition(r) => r,
        other => panic!("{other:?}"),
    }
}

fn with_brokers(ids: &[i32]) -> Ctx {
    let mut ctx = Ctx::active(27);
    for id in ids {
        ctx.register_unfenced(*id, None);
    }
    ctx
}

/// ReplicationControlManagerTest.testReassignPartitions: a rearrangement completes at once, a
/// move starts (replicas = target + removing), an unknown partition is refused; listed; a
/// cancel reverts it (with a leader epoch bump) and answers NO_REASSIGNMENT_IN_PROGRESS where
/// none runs; the leader's ISR expansion completes a new one and moves the leader
/// (NEW_LEADER_ELECTED).
#[test]
fn test_reassign_partitions() {
    let mut ctx = with_brokers(&[0, 1, 2, 3]);
    create(&mut ctx, "foo", &[&[1, 2, 3], &[3, 2, 1]]);
    create(&mut ctx, "bar", &[&[1, 2, 3]]);
    assert!(ongoing(&list(&mut ctx, None)).is_empty());
    let r = reassign(
        &mut ctx,
        vec![
            (
                "foo",
                vec![
                    (0, Some(vec![3, 2, 1])),
                    (1, Some(vec![0, 2, 1])),
                    (2, Some(vec![0, 2, 1])),
                ],
            ),
            ("bar", vec![]),
        ],
        1,
        true,
    );
    assert_eq!(
        codes(&r),
        [
            row("foo", 0, 0, None),
            row("foo", 1, 0, None),
            row(
                "foo",
                2,
                errors::UNKNOWN_TOPIC_OR_PARTITION,
                Some("Unable to find partition foo:2.")
            ),
        ]
    );
    assert_eq!(r.responses.len(), 2, "bar answered with no partitions");
    // Partition 0 only changed order: done at once (every target replica is in sync).
    let p0 = ctx.partition("foo", 0);
    assert_eq!(p0.replicas(), [3, 2, 1]);
    assert!(p0.adding_replicas().is_empty() && p0.removing_replicas().is_empty());
    let expected = vec![("foo".to_string(), 1, vec![0, 2, 1, 3], vec![0], vec![3])];
    assert_eq!(ongoing(&list(&mut ctx, None)), expected);
    assert!(ongoing(&list(&mut ctx, Some(vec![("bar", vec![0, 1, 2])]))).is_empty());
    assert_eq!(
        ongoing(&list(&mut ctx, Some(vec![("foo", vec![0, 1, 2])]))),
        expected
    );
    let p1 = ctx.partition("foo", 1);
    let dirs = |ctx: &Ctx, ids: &[i32]| -> Vec<uuid::Uuid> {
        ids.iter()
            .map(|i| ctx.image().brokers[i].log_dirs[0])
            .collect()
    };
    assert_eq!(
        p1.directories(),
        dirs(&ctx, &[0, 2, 1, 3]),
        "the added replica's dir"
    );

    // Cancel: partition 1 goes back; the others have nothing to cancel.
    let epoch_before = p1.leader_epoch;
    let r = reassign(
        &mut ctx,
        vec![
            ("foo", vec![(0, None), (1, None), (2, None)]),
            ("bar", vec![(0, None)]),
        ],
        1,
        true,
    );
    assert_eq!(
        codes(&r),
        [
            row("foo", 0, NO_REASSIGNMENT_IN_PROGRESS, None),
            row("foo", 1, 0, None),
            row(
                "foo",
                2,
                errors::UNKNOWN_TOPIC_OR_PARTITION,
                Some("Unable to find partition foo:2.")
            ),
            row("bar", 0, NO_REASSIGNMENT_IN_PROGRESS, None),
        ]
    );
    let p1 = ctx.partition("foo", 1);
    assert_eq!(p1.replicas(), [2, 1, 3]);
    assert_eq!(p1.directories(), dirs(&ctx, &[2, 1, 3]));
    assert_eq!(p1.leader, 3);
    assert_eq!(
        p1.leader_epoch,
        epoch_before + 1,
        "replica 0 left: the epoch is bumped"
    );
    assert!(ongoing(&list(&mut ctx, None)).is_empty());

    // Again, then the leader (3) reports the new replica in sync: the reassignment completes,
    // 3 leaves, and it is told a new leader was elected.
    reassign(
        &mut ctx,
        vec![("foo", vec![(1, Some(vec![0, 2, 1]))])],
        1,
        true,
    );
    assert_eq!(ctx.partition("foo", 1).isr(), [3, 2, 1]);
    let r = alter_isr(&mut ctx, 3, "foo", 1, &[3, 0, 2, 1]);
    assert_eq!(
        r.topics[0].partitions[0].error_code,
        errors::NEW_LEADER_ELECTED
    );
    let p1 = ctx.partition("foo", 1);
    assert_eq!(p1.replicas(), [0, 2, 1]);
    assert_eq!(p1.isr(), [0, 2, 1]);
    assert_ne!(p1.leader, 3);
    assert!(p1.adding_replicas().is_empty() && p1.removing_replicas().is_empty());
    assert_eq!(p1.directories(), dirs(&ctx, &[0, 2, 1]));
    assert!(ongoing(&list(&mut ctx, None)).is_empty());
}

/// ReplicationControlManagerTest.testCancelReassignPartitions: a reassignment completes once
/// the ISR holds the target; a revert that would need an unclean election (no original replica
/// left in sync) is refused unless the topic allows unclean elections.
#[test]
fn test_cancel_reassign_partitions() {
    let mut ctx = with_brokers(&[0, 1, 2, 3, 4]);
    create(&mut ctx, "foo", &[&[1, 2, 3, 4]]);
    let r = reassign(
        &mut ctx,
        vec![("foo", vec![(0, Some(vec![0, 1]))])],
        1,
        true,
    );
    assert_eq!(codes(&r), [row("foo", 0, 0, None)]);
    let p = ctx.partition("foo", 0);
    assert_eq!(p.replicas(), [0, 1, 2, 3, 4]);
    assert_eq!(
        (p.adding_replicas(), p.removing_replicas()),
        (&[0][..], &[2, 3, 4][..])
    );
    // The leader (1) adds 0 to the ISR: the target [0, 1] is in sync, so it completes.
    let r = alter_isr(&mut ctx, 1, "foo", 0, &[1, 2, 3, 4, 0]);
    assert_eq!(r.topics[0].partitions[0].error_code, 0);
    let p = ctx.partition("foo", 0);
    assert_eq!((p.replicas(), p.isr()), (&[0, 1][..], &[1, 0][..]));

    // bar moves from [1, 2] to [3, 4]; 3 catches up, then 1 and 2 are fenced: only the
    // adding replica 3 is in sync.
    create(&mut ctx, "bar", &[&[1, 2]]);
    reassign(
        &mut ctx,
        vec![("bar", vec![(0, Some(vec![3, 4]))])],
        1,
        true,
    );
    alter_isr(&mut ctx, 1, "bar", 0, &[1, 2, 3]);
    for id in [1, 2] {
        let epoch = ctx.image().brokers[&id].broker_epoch;
        let end = ctx.log.end();
        ctx.heartbeat(id, epoch, end, true, false);
    }
    let p = ctx.partition("bar", 0);
    assert_eq!((p.isr(), p.leader), (&[3][..], 3));
    let r = reassign(&mut ctx, vec![("bar", vec![(0, None)])], 1, true);
    assert_eq!(
        codes(&r),
        [row(
            "bar",
            0,
            errors::INVALID_REPLICA_ASSIGNMENT,
            Some(
                "Unable to revert partition assignment for bar:0 because it would require an \
                 unclean leader election."
            )
        )]
    );
    assert!(super::super::replication::reassignments::is_reassigning(
        &ctx.partition("bar", 0)
    ));
    // With unclean elections allowed for the topic, the revert goes ahead: the first original
    // replica is the ISR.
    use kafka_protocol::messages::incremental_alter_configs_request::{
        AlterConfigsResource, AlterableConfig,
    };
    let req =
        kafka_protocol::messages::IncrementalAlterConfigsRequest::default().with_resources(vec![
            AlterConfigsResource::default()
                .with_resource_type(2)
                .with_resource_name(StrBytes::from_static_str("bar"))
                .with_configs(vec![AlterableConfig::default()
                    .with_name(StrBytes::from_static_str("unclean.leader.election.enable"))
                    .with_value(Some(StrBytes::from_static_str("true")))]),
        ]);
    ctx.call(RequestBody::IncrementalAlterConfigs(req), 1);
    let r = reassign(&mut ctx, vec![("bar", vec![(0, None)])], 1, true);
    assert_eq!(codes(&r), [row("bar", 0, 0, None)]);
    let p = ctx.partition("bar", 0);
    assert_eq!((p.replicas(), p.isr()), (&[1, 2][..], &[1][..]));
    assert!(p.adding_replicas().is_empty() && p.removing_replicas().is_empty());
}

/// ReplicationControlManagerTest.testReassignPartitionsHandlesNewReassignmentThatRemovesPreviouslyAddingReplicas:
/// a new target while one runs is computed against the current (merged) replicas.
#[test]
fn test_reassign_partitions_handles_new_reassignment_that_removes_previously_adding_replicas() {
    let mut ctx = with_brokers(&[0, 1, 2, 3, 4, 5]);
    create(&mut ctx, "foo", &[&[0, 1, 2]]);
    reassign(
        &mut ctx,
        vec![("foo", vec![(0, Some(vec![3, 4, 5]))])],
        1,
        true,
    );
    let p = ctx.partition("foo", 0);
    assert_eq!(p.replicas(), [3, 4, 5, 0, 1, 2]);
    assert_eq!(
        (p.adding_replicas(), p.removing_replicas()),
        (&[3, 4, 5][..], &[0, 1, 2][..])
    );
    reassign(
        &mut ctx,
        vec![("foo", vec![(0, Some(vec![0, 1, 2]))])],
        1,
        true,
    );
    let p = ctx.partition("foo", 0);
    assert_eq!(
        p.replicas(),
        [0, 1, 2],
        "the adding replicas are dropped, none in sync"
    );
    assert!(p.adding_replicas().is_empty() && p.removing_replicas().is_empty());
}

/// KIP-860 (AlterPartitionReassignments v1): with AllowReplicationFactorChange false, a target
/// of another size is refused; v0 always allows it.
#[test]
fn a_replication_factor_change_can_be_refused() {
    let mut ctx = with_brokers(&[0, 1, 2]);
    create(&mut ctx, "foo", &[&[0, 1]]);
    let r = reassign(
        &mut ctx,
        vec![("foo", vec![(0, Some(vec![0, 1, 2]))])],
        1,
        false,
    );
    assert_eq!(
        codes(&r),
        [row(
            "foo",
            0,
            errors::INVALID_REPLICATION_FACTOR,
            Some("The replication factor is changed from 2 to 3")
        )]
    );
    assert!(!r.allow_replication_factor_change);
    let r = reassign(
        &mut ctx,
        vec![("foo", vec![(0, Some(vec![0, 1, 2]))])],
        0,
        false,
    );
    assert_eq!(codes(&r), [row("foo", 0, 0, None)]);
    // Bad targets get CreateTopics' assignment messages.
    let r = reassign(
        &mut ctx,
        vec![("foo", vec![(0, Some(vec![0, 0]))])],
        1,
        true,
    );
    assert_eq!(
        codes(&r),
        [row(
            "foo",
            0,
            errors::INVALID_REPLICA_ASSIGNMENT,
            Some("The manual partition assignment includes the broker 0 more than once.")
        )]
    );
    let r = reassign(&mut ctx, vec![("nope", vec![(0, Some(vec![0]))])], 1, true);
    assert_eq!(
        codes(&r),
        [row(
            "nope",
            0,
            errors::UNKNOWN_TOPIC_OR_PARTITION,
            Some("Unable to find a topic named nope.")
        )]
    );
}

/// ListPartitionReassignments is a read at the committed offset: a standby answers it too.
#[test]
fn a_standby_lists_reassignments() {
    let mut ctx = with_brokers(&[0, 1, 2]);
    create(&mut ctx, "foo", &[&[0, 1]]);
    reassign(
        &mut ctx,
        vec![("foo", vec![(0, Some(vec![1, 2]))])],
        1,
        true,
    );
    ctx.lose_leadership(2);
    let r = list(&mut ctx, None);
    assert_eq!(r.error_code, 0);
    assert_eq!(
        ongoing(&r),
        [("foo".to_string(), 0, vec![1, 2, 0], vec![2], vec![0])]
    );
    let r = reassign(&mut ctx, vec![("foo", vec![(0, None)])], 1, true);
    assert_eq!(r.error_code, errors::NOT_CONTROLLER);
    assert_eq!(codes(&r)[0].2, errors::NOT_CONTROLLER);
}

/// Differential fuzz (issue #36, seeds 1107 and 1722 of base 1000): CreatePartitions takes
/// the replication factor of the first partition Kafka's `parts` table iterates (partition 2
/// of three: slots 0 → [0, 2], popped from the end), not of partition 0, which a
/// reassignment shrank here.
#[test]
fn new_partitions_take_the_replication_factor_of_kafkas_first_partition() {
    use kafka_protocol::messages::create_partitions_request::CreatePartitionsTopic;
    use kafka_protocol::messages::CreatePartitionsRequest;
    let mut ctx = Ctx::active(27);
    for id in 1..=3 {
        ctx.register_unfenced(id, None);
    }
    create(&mut ctx, "t", &[&[1, 2], &[2, 3], &[3, 1]]);
    let resp = reassign(&mut ctx, vec![("t", vec![(0, Some(vec![1]))])], 1, true);
    assert_eq!(
        resp.responses[0].partitions[0].error_code, 0,
        "{:?}",
        resp.responses[0].partitions[0].error_message
    );
    assert_eq!(
        ctx.partition("t", 0).replicas(),
        vec![1],
        "completed at once"
    );
    let req =
        CreatePartitionsRequest::default().with_topics(vec![CreatePartitionsTopic::default()
            .with_name(name("t"))
            .with_count(4)
            .with_assignments(None)]);
    match ctx.call(RequestBody::CreatePartitions(req), 3) {
        ResponseBody::CreatePartitions(r) => assert_eq!(r.results[0].error_code, 0, "{r:?}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        ctx.partition("t", 3).replicas().len(),
        2,
        "partition 2's factor"
    );
}

/// Differential fuzz (issue #36, seed 3245 of base 1000): ListPartitionReassignments of every
/// partition lists a topic's partitions in the order their reassignments started (Kafka's
/// `reassigningTopics` entry: appended when one starts, kept in order when one ends), not by
/// partition id.
#[test]
fn every_reassignment_is_listed_in_the_order_it_started() {
    let mut ctx = with_brokers(&[1, 2, 3, 4]);
    create(&mut ctx, "t", &[&[1, 2], &[2, 3], &[3, 1]]);
    let order =
        |ctx: &mut Ctx| -> Vec<i32> { ongoing(&list(ctx, None)).iter().map(|o| o.1).collect() };
    reassign(&mut ctx, vec![("t", vec![(1, Some(vec![4, 3]))])], 1, true);
    reassign(&mut ctx, vec![("t", vec![(0, Some(vec![4, 2]))])], 1, true);
    reassign(&mut ctx, vec![("t", vec![(2, Some(vec![4, 1]))])], 1, true);
    assert_eq!(order(&mut ctx), vec![1, 0, 2]);
    // Partition 0's cancelled, then started again: it comes last.
    reassign(&mut ctx, vec![("t", vec![(0, None)])], 1, true);
    assert_eq!(order(&mut ctx), vec![1, 2]);
    reassign(&mut ctx, vec![("t", vec![(0, Some(vec![4, 2]))])], 1, true);
    assert_eq!(order(&mut ctx), vec![1, 2, 0]);
    // Naming the partitions lists them in the request's order.
    let named = list(&mut ctx, Some(vec![("t", vec![0, 2, 1])]));
    assert_eq!(
        ongoing(&named).iter().map(|o| o.1).collect::<Vec<_>>(),
        vec![0, 2, 1]
    );
}
