//! ReplicationControlManagerTest.
#![allow(clippy::unwrap_used)]

use kafka_protocol::messages::alter_partition_request::{BrokerState, PartitionData, TopicData};
use kafka_protocol::messages::create_topics_request::CreatableReplicaAssignment;
use kafka_protocol::messages::{AlterPartitionRequest, AlterPartitionResponse, BrokerId};

use super::context::{topic, topic_config, Ctx};
use crate::codec::{RequestBody, ResponseBody};
use crate::controller::errors;

#[test]
fn test_create_topics() {
    let mut ctx = Ctx::active(27);
    // No broker: placement fails.
    let r = ctx.create_topic("foo", 1, 3);
    assert_eq!(r.topics[0].error_code, errors::INVALID_REPLICATION_FACTOR);
    assert_eq!(
        r.topics[0].error_message.as_deref(),
        Some("Unable to replicate the partition 3 time(s): All brokers are currently fenced.")
    );
    for id in 0..3 {
        ctx.register_unfenced(id, None);
    }
    let r = ctx.create_topic("foo", 3, 3);
    let t = &r.topics[0];
    assert_eq!(t.error_code, 0);
    assert_eq!((t.num_partitions, t.replication_factor), (3, 3));
    assert!(!t.topic_id.is_nil());
    assert_eq!(ctx.image().topic_by_name("foo").unwrap().id, t.topic_id);
    for p in 0..3 {
        let part = ctx.partition("foo", p);
        assert_eq!(part.replicas().len(), 3);
        assert_eq!(
            part.isr(),
            part.replicas(),
            "every replica active: all in sync"
        );
        assert_eq!(part.leader, part.replicas()[0]);
        assert_eq!((part.leader_epoch, part.partition_epoch), (0, 0));
        assert!(
            part.directories().iter().all(|d| !d.is_nil()),
            "the brokers' only dirs"
        );
    }
    let again = ctx.create_topic("foo", 1, 1);
    assert_eq!(again.topics[0].error_code, errors::TOPIC_ALREADY_EXISTS);
    assert_eq!(
        again.topics[0].error_message.as_deref(),
        Some("Topic 'foo' already exists.")
    );
}

#[test]
fn test_create_topics_checks_names_counts_and_duplicates() {
    let mut ctx = Ctx::active(27);
    ctx.register_unfenced(0, None);
    let r = ctx.create_topics(
        vec![
            topic("a b", 1, 1),
            topic("dup", 1, 1),
            topic("dup", 1, 1),
            topic("__cluster_metadata", 1, 1),
            topic("zero", 0, 1),
            topic("rf0", 1, 0),
            topic("ok.1", -1, -1),
        ],
        false,
    );
    let code = |name: &str| {
        r.topics
            .iter()
            .find(|t| t.name.0.as_str() == name)
            .map(|t| t.error_code)
    };
    assert_eq!(code("a b"), Some(errors::INVALID_TOPIC_EXCEPTION));
    assert_eq!(code("dup"), Some(errors::INVALID_REQUEST));
    assert_eq!(
        r.topics
            .iter()
            .filter(|t| t.name.0.as_str() == "dup")
            .count(),
        1
    );
    assert_eq!(code("__cluster_metadata"), Some(errors::INVALID_REQUEST));
    assert_eq!(code("zero"), Some(errors::INVALID_PARTITIONS));
    assert_eq!(code("rf0"), Some(errors::INVALID_REPLICATION_FACTOR));
    assert_eq!(
        code("ok.1"),
        Some(0),
        "-1 takes num.partitions and default.replication.factor"
    );
    assert_eq!(
        ctx.image().topic_by_name("ok.1").unwrap().partitions.len(),
        1
    );
    // '.' and '_' collide.
    let r = ctx.create_topic("ok_1", 1, 1);
    assert_eq!(r.topics[0].error_code, errors::INVALID_TOPIC_EXCEPTION);
    // Too many partitions in one request: refused before anything else.
    let r = ctx.create_topic("huge", 10_001, 1);
    assert_eq!(r.topics[0].error_code, errors::POLICY_VIOLATION);
}

#[test]
fn test_validate_bad_topic_configs_and_validate_only() {
    let mut ctx = Ctx::active(27);
    ctx.register_unfenced(0, None);
    let bad = |k: &str, v: Option<&str>| topic("t", 1, 1).with_configs(vec![topic_config(k, v)]);
    let r = ctx.create_topics(vec![bad("no.such.config", Some("1"))], false);
    assert_eq!(r.topics[0].error_code, errors::INVALID_CONFIG);
    assert_eq!(
        r.topics[0].error_message.as_deref(),
        Some("Unknown topic config name: no.such.config")
    );
    let r = ctx.create_topics(vec![bad("retention.ms", None)], false);
    assert_eq!(
        r.topics[0].error_message.as_deref(),
        Some("Null value not supported for topic configs: retention.ms")
    );
    let r = ctx.create_topics(vec![bad("retention.ms", Some("abc"))], false);
    assert_eq!(r.topics[0].error_code, errors::INVALID_CONFIG);
    // validate_only answers as a creation would and writes nothing.
    let end = ctx.log.end();
    let r = ctx.create_topics(vec![bad("retention.ms", Some("1000"))], true);
    assert_eq!(r.topics[0].error_code, 0);
    assert_eq!(ctx.log.end(), end);
    assert!(ctx.image().topic_by_name("t").is_none());
    // A good config is written and reported as the topic's.
    let r = ctx.create_topics(vec![bad("retention.ms", Some("1000"))], false);
    let configs = r.topics[0].configs.as_ref().unwrap();
    let retention = configs
        .iter()
        .find(|c| c.name.as_str() == "retention.ms")
        .unwrap();
    assert_eq!(
        (retention.value.as_deref(), retention.config_source),
        (Some("1000"), 1)
    );
    let names: Vec<&str> = configs.iter().map(|c| c.name.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "sorted by name");
}

#[test]
fn test_manual_partition_assignment_on_all_fenced_brokers() {
    let mut ctx = Ctx::active(27);
    ctx.register_unfenced(0, None);
    ctx.register(super::context::registration(1, None));
    let manual = |ids: &[i32]| {
        topic("m", -1, -1).with_assignments(vec![CreatableReplicaAssignment::default()
            .with_partition_index(0)
            .with_broker_ids(ids.iter().map(|i| BrokerId(*i)).collect())])
    };
    let r = ctx.create_topics(vec![manual(&[1])], false);
    assert_eq!(r.topics[0].error_code, errors::INVALID_REPLICA_ASSIGNMENT);
    let r = ctx.create_topics(vec![manual(&[5])], false);
    assert_eq!(
        r.topics[0].error_code,
        errors::INVALID_REPLICA_ASSIGNMENT,
        "unregistered"
    );
    let r = ctx.create_topics(vec![manual(&[1, 0])], false);
    assert_eq!(r.topics[0].error_code, 0);
    let p = ctx.partition("m", 0);
    assert_eq!(
        (p.replicas().to_vec(), p.isr().to_vec(), p.leader),
        (vec![1, 0], vec![0], 0)
    );
}

fn alter(
    ctx: &mut Ctx,
    broker: i32,
    epoch: i64,
    name: &str,
    leader_epoch: i32,
    partition_epoch: i32,
    isr: &[(i32, i64)],
) -> AlterPartitionResponse {
    let topic_id = ctx.image().topic_by_name(name).unwrap().id;
    let req = AlterPartitionRequest::default()
        .with_broker_id(BrokerId(broker))
        .with_broker_epoch(epoch)
        .with_topics(vec![TopicData::default()
            .with_topic_id(topic_id)
            .with_partitions(vec![PartitionData::default()
                .with_partition_index(0)
                .with_leader_epoch(leader_epoch)
                .with_partition_epoch(partition_epoch)
                .with_new_isr_with_epochs(
                    isr.iter()
                        .map(|(b, e)| {
                            BrokerState::default()
                                .with_broker_id(BrokerId(*b))
                                .with_broker_epoch(*e)
                        })
                        .collect(),
                )])]);
    match ctx.call(RequestBody::AlterPartition(req), 3) {
        ResponseBody::AlterPartition(r) => r,
        other => panic!("{other:?}"),
    }
}

#[test]
fn test_shrink_and_expand_isr() {
    let mut ctx = Ctx::active(27);
    let e: Vec<i64> = (0..3).map(|id| ctx.register_unfenced(id, None)).collect();
    let topic = topic("t", 1, 3)
        .with_num_partitions(-1)
        .with_replication_factor(-1);
    let _ = topic;
    ctx.create_topics(
        vec![super::context::topic("t", -1, -1).with_assignments(vec![
            CreatableReplicaAssignment::default()
                .with_partition_index(0)
                .with_broker_ids(vec![BrokerId(0), BrokerId(1), BrokerId(2)]),
        ])],
        false,
    );
    // Shrink to [0, 1]: partition epoch +1, leader epoch unchanged (MV ≥ 3.6-IV0).
    let r = alter(&mut ctx, 0, e[0], "t", 0, 0, &[(0, e[0]), (1, e[1])]);
    let p = &r.topics[0].partitions[0];
    assert_eq!(p.error_code, 0);
    assert_eq!((p.leader_epoch, p.partition_epoch), (0, 1));
    assert_eq!(ctx.partition("t", 0).isr(), vec![0, 1]);
    // The same again changes nothing and writes nothing.
    let end = ctx.log.end();
    let r = alter(&mut ctx, 0, e[0], "t", 0, 1, &[(0, e[0]), (1, e[1])]);
    assert_eq!(r.topics[0].partitions[0].partition_epoch, 1);
    assert_eq!(ctx.log.end(), end);
    // Expand back.
    let r = alter(
        &mut ctx,
        0,
        e[0],
        "t",
        0,
        1,
        &[(0, e[0]), (1, e[1]), (2, e[2])],
    );
    assert_eq!(r.topics[0].partitions[0].partition_epoch, 2);
    assert_eq!(ctx.partition("t", 0).isr(), vec![0, 1, 2]);
}

#[test]
fn test_invalid_alter_partition_requests() {
    let mut ctx = Ctx::active(27);
    let e: Vec<i64> = (0..3).map(|id| ctx.register_unfenced(id, None)).collect();
    ctx.create_topics(
        vec![
            topic("t", -1, -1).with_assignments(vec![CreatableReplicaAssignment::default()
                .with_partition_index(0)
                .with_broker_ids(vec![BrokerId(0), BrokerId(1), BrokerId(2)])]),
        ],
        false,
    );
    let code = |r: AlterPartitionResponse| r.topics[0].partitions[0].error_code;
    let all = [(0, e[0]), (1, e[1]), (2, e[2])];
    assert_eq!(
        alter(&mut ctx, 0, e[0] + 1, "t", 0, 0, &all).error_code,
        errors::STALE_BROKER_EPOCH
    );
    assert_eq!(
        code(alter(&mut ctx, 0, e[0], "t", 1, 0, &all)),
        errors::NOT_CONTROLLER
    );
    assert_eq!(
        code(alter(&mut ctx, 1, e[1], "t", 0, 0, &all)),
        errors::INVALID_REQUEST,
        "not the leader"
    );
    assert_eq!(
        code(alter(&mut ctx, 0, e[0], "t", 0, 0, &[(1, e[1])])),
        errors::INVALID_REQUEST,
        "without the leader"
    );
    assert_eq!(
        code(alter(&mut ctx, 0, e[0], "t", 0, 0, &[(0, e[0]), (7, 1)])),
        errors::INVALID_REQUEST,
        "not a replica"
    );
    assert_eq!(
        code(alter(
            &mut ctx,
            0,
            e[0],
            "t",
            0,
            0,
            &[(0, e[0]), (1, e[1] + 1)]
        )),
        errors::INELIGIBLE_REPLICA,
        "broker epoch mismatch"
    );
    // A fenced broker cannot join the ISR.
    alter(&mut ctx, 0, e[0], "t", 0, 0, &[(0, e[0]), (1, e[1])]);
    ctx.heartbeat(2, e[2], ctx.log.end(), true, false);
    assert!(ctx.image().brokers[&2].fenced);
    assert_eq!(
        code(alter(&mut ctx, 0, e[0], "t", 0, 1, &all)),
        errors::INELIGIBLE_REPLICA
    );
    // A stale leader epoch after a leader change.
    ctx.heartbeat(0, e[0], ctx.log.end(), true, false);
    let p = ctx.partition("t", 0);
    assert_eq!((p.leader, p.leader_epoch), (1, 1));
    assert_eq!(
        code(alter(&mut ctx, 0, e[0], "t", 0, p.partition_epoch, &all)),
        errors::FENCED_LEADER_EPOCH
    );
}

#[test]
fn test_fence_multiple_brokers() {
    let mut ctx = Ctx::active(27);
    let e: Vec<i64> = (0..3).map(|id| ctx.register_unfenced(id, None)).collect();
    ctx.create_topic("t", 6, 2);
    // Broker 0 and 1 stop heartbeating; 2 keeps going.
    for _ in 0..5 {
        ctx.advance(2_000);
        let end = ctx.log.end();
        ctx.heartbeat(2, e[2], end, false, false);
    }
    let image = ctx.image();
    assert!(image.brokers[&0].fenced && image.brokers[&1].fenced && !image.brokers[&2].fenced);
    for p in 0..6 {
        let part = ctx.partition("t", p);
        if part.replicas().contains(&2) {
            assert_eq!(part.leader, 2, "partition {p}: {part:?}");
            assert_eq!(part.isr(), vec![2]);
        } else {
            assert_eq!(part.leader, -1, "no live replica: leaderless {part:?}");
            assert_eq!(part.isr().len(), 1, "the last ISR member stays without ELR");
        }
    }
    // Broker 0 comes back: unfenced, and it leads the partitions it was the last ISR member of.
    let end = ctx.log.end();
    assert!(!ctx.heartbeat(0, e[0], end, false, false).is_fenced);
    for p in 0..6 {
        let part = ctx.partition("t", p);
        if part.isr() == vec![0] {
            assert_eq!(part.leader, 0);
        }
    }
}

#[test]
fn test_controlled_shutdown_moves_leaders_first() {
    let mut ctx = Ctx::active(27);
    let e: Vec<i64> = (0..3).map(|id| ctx.register_unfenced(id, None)).collect();
    ctx.create_topic("t", 6, 3);
    let end = ctx.log.end();
    for id in 0..3 {
        ctx.heartbeat(id, e[id as usize], end, false, false);
    }
    let hb = ctx.heartbeat(0, e[0], end, false, true);
    assert!(!hb.is_fenced && !hb.should_shut_down, "leaders move first");
    assert!(ctx.image().brokers[&0].in_controlled_shutdown);
    for p in 0..6 {
        let part = ctx.partition("t", p);
        assert_ne!(part.leader, 0);
        assert!(!part.isr().contains(&0));
    }
    // The others have not caught up with the shutdown offset yet.
    let hb = ctx.heartbeat(0, e[0], end, false, true);
    assert!(!hb.should_shut_down);
    let now = ctx.log.end();
    ctx.heartbeat(1, e[1], now, false, false);
    ctx.heartbeat(2, e[2], now, false, false);
    let hb = ctx.heartbeat(0, e[0], now, false, true);
    assert!(hb.should_shut_down && hb.is_fenced);
    assert!(ctx.image().brokers[&0].fenced);
}

/// Differential fuzz D8: Kafka places replicas on the brokers its heartbeat sessions call
/// usable, and a session forgets the controlled shutdown once a heartbeat fences the broker,
/// while the registration keeps `in_controlled_shutdown`. So a broker that finished its
/// controlled shutdown counts as registered again and may hold a (fenced) replica.
#[test]
fn a_broker_fenced_after_its_controlled_shutdown_is_usable_for_placement() {
    let mut ctx = Ctx::active(27);
    let e: Vec<i64> = (0..3).map(|id| ctx.register_unfenced(id, None)).collect();
    ctx.create_topic("t", 3, 3);
    let end = ctx.log.end();
    ctx.heartbeat(0, e[0], end, false, true);
    let now = ctx.log.end();
    ctx.heartbeat(1, e[1], now, false, false);
    ctx.heartbeat(2, e[2], now, false, false);
    let hb = ctx.heartbeat(0, e[0], now, false, true);
    assert!(hb.should_shut_down && hb.is_fenced);
    let broker0 = &ctx.image().brokers[&0];
    assert!(broker0.fenced && broker0.in_controlled_shutdown);
    let r = ctx.create_topic("u", 1, 3);
    assert_eq!(
        (
            r.topics[0].error_code,
            r.topics[0].error_message.as_deref().map(|m| m.to_string())
        ),
        (0, None),
        "three registered, usable brokers: no 'only 2 broker(s) are registered'"
    );
    let p = ctx.partition("u", 0);
    assert!(
        p.replicas().contains(&0),
        "the fenced broker holds a replica: {p:?}"
    );
    assert!(!p.isr().contains(&0) && p.leader != 0, "{p:?}");
}

/// Kafka replays every BrokerRegistrationChangeRecord into its heartbeat manager
/// (`replayRegistrationChange` calls `BrokerHeartbeatManager.register`, whose `touch` with
/// fenced=true drops the controlled-shutdown offset): a broker fenced by session expiry in
/// the middle of its controlled shutdown is usable for placement again (differential fuzz
/// D8, seed 52).
#[test]
fn a_broker_fenced_by_session_expiry_during_its_controlled_shutdown_is_usable_for_placement() {
    let mut ctx = Ctx::active(27);
    let e0 = ctx.register_unfenced(0, None);
    let e1 = ctx.register_unfenced(1, None);
    let led_by_1 = topic("t", -1, -1).with_assignments(vec![CreatableReplicaAssignment::default()
        .with_partition_index(0)
        .with_broker_ids(vec![BrokerId(1), BrokerId(0)])]);
    assert_eq!(
        ctx.create_topics(vec![led_by_1], false).topics[0].error_code,
        0
    );
    let end = ctx.log.end();
    let hb = ctx.heartbeat(1, e1, end, false, true);
    assert!(
        !hb.should_shut_down && !hb.is_fenced,
        "in controlled shutdown: {hb:?}"
    );
    ctx.advance(5_000);
    let end = ctx.log.end();
    ctx.heartbeat(0, e0, end, false, false);
    ctx.advance(5_000);
    let broker1 = &ctx.image().brokers[&1];
    assert!(broker1.fenced, "fenced by session expiry");
    let r = ctx.create_topic("u", 1, 2);
    assert_eq!(
        (
            r.topics[0].error_code,
            r.topics[0].error_message.as_deref().map(|m| m.to_string())
        ),
        (0, None),
        "the fencing record's replay ended broker 1's controlled shutdown in its session"
    );
    let p = ctx.partition("u", 0);
    assert!(p.replicas().contains(&1) && p.leader == 0, "{p:?}");
}

/// Kafka 4.1.2's `LeaderAcceptor` (given to every PartitionChangeBuilder) accepts a leader
/// only if the partition's directory for it is online on its broker
/// (`ClusterControlManager.hasOnlineDir`): a broker that re-registered with other log
/// directories does not lead, once unfenced, the leaderless partitions placed in its old one
/// (differential fuzz D7, seed 46).
#[test]
fn an_unfenced_broker_does_not_lead_partitions_in_a_directory_it_no_longer_has() {
    let mut ctx = Ctx::active(27);
    ctx.register_unfenced(0, None);
    let e1 = ctx.register_unfenced(1, None);
    let on_1 = topic("t", -1, -1).with_assignments(vec![CreatableReplicaAssignment::default()
        .with_partition_index(0)
        .with_broker_ids(vec![BrokerId(1)])]);
    assert_eq!(ctx.create_topics(vec![on_1], false).topics[0].error_code, 0);
    let old_dir = ctx.partition("t", 0).directories()[0];
    // Broker 1 comes back as another incarnation with another directory, after a clean
    // shutdown: it is fenced, the partition loses its leader and keeps broker 1 in its ISR.
    ctx.advance(10_000);
    let new_dir = uuid::Uuid::from_u128(0x77 << 64 | 9);
    let again = super::context::registration(1, None)
        .with_incarnation_id(uuid::Uuid::from_u128(5_001))
        .with_log_dirs(vec![new_dir])
        .with_previous_broker_epoch(e1);
    let r = ctx.register(again);
    assert_eq!(r.error_code, 0, "{r:?}");
    let p = ctx.partition("t", 0);
    assert_eq!((p.leader, p.isr().to_vec()), (-1, vec![1]), "{p:?}");
    assert_eq!(p.directories(), vec![old_dir]);
    let end = ctx.log.end();
    let before = ctx.log.end();
    let hb = ctx.heartbeat(1, r.broker_epoch, end, false, false);
    assert!(!hb.is_fenced, "unfenced: {hb:?}");
    let written = ctx.log.records_from(before);
    assert_eq!(written.len(), 1, "only the unfencing record: {written:?}");
    assert_eq!(ctx.partition("t", 0).leader, -1);
}

/// Kafka's `parts` map of a topic grows when a partition change replaces an entry of a full
/// table (`BaseHashTable.baseAddOrReplace` checks the load first): after its partitions lost
/// their leader, an election over every partition answers a topic's five partitions in the
/// order 0,2,4,1,3, not 2,0,4,1,3 (differential fuzz against 4.1.2, seed 191 of base 1).
#[test]
fn an_election_over_every_partition_follows_kafkas_grown_partition_map() {
    use kafka_protocol::messages::ElectLeadersRequest;
    let mut ctx = Ctx::active(27);
    ctx.register_unfenced(1, None);
    assert_eq!(ctx.create_topic("gamma", 5, 1).topics[0].error_code, 0);
    ctx.advance(10_000);
    assert_eq!(
        ctx.partition("gamma", 0).leader,
        -1,
        "fenced by session expiry"
    );
    let req = ElectLeadersRequest::default()
        .with_election_type(1)
        .with_topic_partitions(None)
        .with_timeout_ms(60_000);
    let r = match ctx.call(RequestBody::ElectLeaders(req), 2) {
        ResponseBody::ElectLeaders(r) => r,
        other => panic!("{other:?}"),
    };
    let order: Vec<i32> = r.replica_election_results[0]
        .partition_result
        .iter()
        .map(|p| p.partition_id)
        .collect();
    assert_eq!(order, [0, 2, 4, 1, 3]);
}

/// The partition changes that came before partitions were added do not grow Kafka's `parts`
/// table beyond what the later insertions need: after gamma-0..2 lost their leader and
/// gamma-3..4 were added, an election over every partition answers 2,0,1 (differential fuzz
/// against 4.1.2, seed 2431069434).
#[test]
fn partition_changes_before_partitions_were_added_do_not_grow_the_order() {
    use kafka_protocol::messages::create_partitions_request::CreatePartitionsTopic;
    use kafka_protocol::messages::{CreatePartitionsRequest, ElectLeadersRequest, TopicName};
    let mut ctx = Ctx::active(27);
    ctx.register_unfenced(1, None);
    assert_eq!(ctx.create_topic("gamma", 3, 1).topics[0].error_code, 0);
    ctx.advance(10_000);
    assert_eq!(
        ctx.partition("gamma", 0).leader,
        -1,
        "fenced by session expiry"
    );
    ctx.register_unfenced(2, None);
    let add =
        CreatePartitionsRequest::default().with_topics(vec![CreatePartitionsTopic::default()
            .with_name(TopicName("gamma".to_string().into()))
            .with_count(5)
            .with_assignments(None)]);
    match ctx.call(RequestBody::CreatePartitions(add), 3) {
        ResponseBody::CreatePartitions(r) => assert_eq!(r.results[0].error_code, 0, "{r:?}"),
        other => panic!("{other:?}"),
    }
    let req = ElectLeadersRequest::default()
        .with_election_type(0)
        .with_topic_partitions(None)
        .with_timeout_ms(60_000);
    let r = match ctx.call(RequestBody::ElectLeaders(req), 2) {
        ResponseBody::ElectLeaders(r) => r,
        other => panic!("{other:?}"),
    };
    let order: Vec<i32> = r.replica_election_results[0]
        .partition_result
        .iter()
        .map(|p| p.partition_id)
        .collect();
    assert_eq!(order, [2, 0, 1]);
}

/// A change of some older partitions after the last one was added grows the table as well:
/// epsilon-0..4 on brokers 1-3, two of them fenced, then a preferred election over every
/// partition answers in the grown order (differential fuzz against 4.1.2, seed 2431040618).
#[test]
fn a_change_of_older_partitions_after_the_last_was_added_grows_the_order() {
    use kafka_protocol::messages::ElectLeadersRequest;
    let mut ctx = Ctx::active(27);
    for id in 1..=3 {
        ctx.register_unfenced(id, None);
    }
    let assign = |rs: &[i32]| {
        rs.iter()
            .enumerate()
            .map(|(i, b)| {
                CreatableReplicaAssignment::default()
                    .with_partition_index(i as i32)
                    .with_broker_ids(vec![BrokerId(*b)])
            })
            .collect::<Vec<_>>()
    };
    let t = topic("epsilon", -1, -1).with_assignments(assign(&[1, 2, 1, 1, 3]));
    assert_eq!(ctx.create_topics(vec![t], false).topics[0].error_code, 0);
    // Brokers 1 and 2 go quiet; 3 keeps its session.
    ctx.advance(5_000);
    let e3 = ctx.image().brokers[&3].broker_epoch;
    let end = ctx.log.end();
    ctx.heartbeat(3, e3, end, false, false);
    ctx.advance(5_000);
    ctx.advance(20);
    assert_eq!(ctx.partition("epsilon", 4).leader, 3);
    assert_eq!(
        ctx.partition("epsilon", 1).leader,
        -1,
        "{:?}",
        ctx.partition("epsilon", 1)
    );
    let req = ElectLeadersRequest::default()
        .with_election_type(0)
        .with_topic_partitions(None)
        .with_timeout_ms(60_000);
    let r = match ctx.call(RequestBody::ElectLeaders(req), 2) {
        ResponseBody::ElectLeaders(r) => r,
        other => panic!("{other:?}"),
    };
    let order: Vec<i32> = r.replica_election_results[0]
        .partition_result
        .iter()
        .map(|p| p.partition_id)
        .collect();
    // Kafka's grown table iterates 0,2,4,1,3; epsilon-4 needs no election.
    assert_eq!(order, [0, 2, 1, 3]);
}
