//! Unclean leader elections: by request with eligible leader replicas on (the ELR cleared),
//! as Kafka logs them, on the timer once a topic allows them, and on broker events under the
//! static `unclean.leader.election.enable` (helpers shared with `elect_leaders.rs`).

#![allow(clippy::unwrap_used)]

use kafka_protocol::messages::create_topics_request::CreatableReplicaAssignment;
use kafka_protocol::messages::BrokerId;

use super::context::{elr_bootstrap, topic, topic_config, Ctx, CLUSTER_ID};
use super::elect_leaders::{
    changes_since, elect, foo_with_brokers_1_2_3_fenced, heartbeat, leader_and_isr, outcome,
    preferred_not_available, request, row, PREFERRED, UNCLEAN,
};
use crate::controller::ControllerConfig;
use crate::metadata::image::NO_LEADER_CHANGE;

/// With eligible leader replicas on (KIP-966): a leaderless partition whose ISR is empty and
/// whose ELR members are all offline has no clean leader; UNCLEAN elects the first live
/// replica, which alone is in sync and recovers, and the ELR and last known leader are
/// cleared (Kafka's `maybeUpdateRecordElr` on an unclean election).
#[test]
fn unclean_election_with_elr_clears_the_elr() {
    let mut cfg = ControllerConfig::new(1, CLUSTER_ID);
    cfg.rng_seed = 42;
    let mut ctx = Ctx::with_bootstrap(cfg, elr_bootstrap(27));
    let epochs: Vec<i64> = (0..4).map(|id| ctx.register_unfenced(id, None)).collect();
    let t = topic("foo", -1, -1)
        .with_assignments(vec![CreatableReplicaAssignment::default()
            .with_partition_index(0)
            .with_broker_ids(vec![BrokerId(1), BrokerId(2), BrokerId(3)])])
        .with_configs(vec![topic_config("min.insync.replicas", Some("2"))]);
    assert_eq!(ctx.create_topics(vec![t], false).topics[0].error_code, 0);
    heartbeat(&mut ctx, 3, epochs[3], true);
    heartbeat(&mut ctx, 2, epochs[2], true);
    heartbeat(&mut ctx, 1, epochs[1], true);
    let p = ctx.partition("foo", 0);
    assert_eq!((p.leader, p.isr().is_empty()), (-1, true), "{p:?}");
    assert!(!p.elr().is_empty(), "{p:?}");
    assert!(!p.elr().contains(&3), "{p:?}");
    // Broker 3 is back: not eligible, so no clean election.
    heartbeat(&mut ctx, 3, epochs[3], false);
    assert_eq!(ctx.partition("foo", 0).leader, -1);
    let partitions: &[(&str, &[i32])] = &[("foo", &[0])];
    let r = elect(&mut ctx, request(PREFERRED, Some(partitions)), 2);
    assert_eq!(outcome(&r), vec![preferred_not_available("foo", 0)]);
    let end = ctx.log.end();
    let r = elect(&mut ctx, request(UNCLEAN, Some(partitions)), 2);
    assert_eq!(outcome(&r), vec![row("foo", 0, 0, None)]);
    let changes = changes_since(&ctx, end);
    assert_eq!(changes.len(), 1);
    let c = &changes[0];
    assert_eq!((c.leader, c.isr.clone()), (3, Some(vec![3])));
    assert_eq!(c.leader_recovery_state, 1, "RECOVERING");
    assert_eq!(c.eligible_leader_replicas, Some(vec![]));
    assert_eq!(c.last_known_elr, Some(vec![]));
    let p = ctx.partition("foo", 0);
    assert_eq!(
        (
            p.leader,
            p.isr().to_vec(),
            p.elr().to_vec(),
            p.last_known_elr().to_vec()
        ),
        (3, vec![3], vec![], vec![])
    );
    assert_ne!(c.leader, NO_LEADER_CHANGE);
}

/// What the tracing events of `f` print at INFO, as the node's log would hold them.
fn info_lines(f: impl FnOnce()) -> String {
    crate::logging::captured(tracing::Level::INFO, f)
}

/// An unclean election is logged at INFO with Kafka's words, the previous partition and the
/// change record (#37), and the committed records with ReplicationControlManager's lines.
#[test]
fn an_unclean_election_is_logged_as_kafka_logs_it() {
    let mut ctx = Ctx::active(27);
    let epochs = foo_with_brokers_1_2_3_fenced(&mut ctx);
    heartbeat(&mut ctx, 2, epochs[2], false);
    let partitions: &[(&str, &[i32])] = &[("foo", &[0])];
    let log = info_lines(|| {
        elect(&mut ctx, request(UNCLEAN, Some(partitions)), 2);
    });
    let id = ctx
        .image()
        .topic_by_name("foo")
        .map(|t| t.id)
        .unwrap_or_default();
    let topic_id = crate::common::uuid::uuid_to_kafka_string(&id);
    let expected = format!(
        "Setting new leader for topicId {topic_id}, partition 0 to 2 using an unclean \
         election. Previous partition: PartitionRegistration(replicas=[1, 2, 3], "
    );
    assert!(log.contains(&expected), "{log}");
    assert!(
        log.contains("change record: PartitionChangeRecord(partitionId=0, "),
        "{log}"
    );
}

/// Kafka's periodic `maybeElectUncleanLeaders`: a leaderless partition whose topic does not
/// allow unclean elections stays leaderless at every run; once the operator enables them on
/// the topic, the next run (`unclean.leader.election.interval.ms` after a write) elects its
/// live out-of-sync replica, which leads alone and recovers; with no partition leaderless
/// nothing more is scheduled.
#[test]
fn leaderless_partitions_are_elected_unclean_on_the_timer_once_the_topic_allows_it() {
    let mut cfg = ControllerConfig::new(1, CLUSTER_ID);
    cfg.unclean_leader_election_interval_ms = 1_000;
    let mut ctx = Ctx::with_config(cfg, 27);
    let epochs = foo_with_brokers_1_2_3_fenced(&mut ctx);
    heartbeat(&mut ctx, 2, epochs[2], false);
    assert_eq!(leader_and_isr(&ctx, 0), (-1, vec![1]));
    let due = ctx.now_ms + 1_000;
    assert!(ctx.c.poll_timeout().is_some_and(|t| t <= due));
    ctx.advance(1_000);
    assert_eq!(leader_and_isr(&ctx, 0), (-1, vec![1]), "not allowed yet");

    let end = ctx.log.end();
    let answer = super::configuration::alter(
        &mut ctx,
        vec![super::configuration::res(
            2,
            "foo",
            &[("unclean.leader.election.enable", 0, Some("true"))],
        )],
        false,
    );
    assert_eq!(answer.responses[0].error_code, 0);
    assert!(
        changes_since(&ctx, end).is_empty(),
        "no election on the write"
    );
    ctx.advance(1_000);
    let changes = changes_since(&ctx, end);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(
        (
            changes[0].partition_id,
            changes[0].leader,
            changes[0].isr.clone()
        ),
        (0, 2, Some(vec![2]))
    );
    assert_eq!(changes[0].leader_recovery_state, 1, "RECOVERING");
    assert_eq!(ctx.image().partition_stats.offline, 0);
    // Counted once committed, as Kafka's UncleanLeaderElectionsPerSec.
    assert_eq!(ctx.c.election_stats().unclean, 1);
    assert_eq!(ctx.c.election_stats().from_elr, 0);
    let expiry = ctx.c.heartbeats().unwrap().next_expiry_ms(9_000);
    assert_eq!(
        ctx.c.poll_timeout(),
        expiry,
        "nothing leaderless: no run due"
    );
}

/// `unclean.leader.election.enable=true` in the controller's own properties file is the
/// topic config's static value (Kafka's resolveEffectiveTopicConfig falls back to the node's
/// static config): a broker coming back unfenced is elected leader of the leaderless
/// partition it does not hold in-sync, at once; with the default, it is not.
#[test]
fn the_static_unclean_setting_allows_unclean_elections_on_broker_events() {
    for (static_enabled, expected) in [(false, -1), (true, 2)] {
        let mut cfg = ControllerConfig::new(1, CLUSTER_ID);
        if static_enabled {
            cfg.static_properties = crate::common::static_properties::StaticProperties::new(
                [(
                    "unclean.leader.election.enable".to_string(),
                    " true".to_string(),
                )]
                .into_iter()
                .collect(),
            );
        }
        let mut ctx = Ctx::with_config(cfg, 27);
        let epochs = foo_with_brokers_1_2_3_fenced(&mut ctx);
        heartbeat(&mut ctx, 2, epochs[2], false);
        assert_eq!(
            leader_and_isr(&ctx, 0).0,
            expected,
            "static unclean.leader.election.enable={static_enabled}"
        );
    }
}
