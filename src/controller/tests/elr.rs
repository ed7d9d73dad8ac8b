//! PartitionChangeBuilderTest's eligible leader replicas (KIP-966) cases: what a partition
//! change does to the ELR, the ISR and the last known leader with
//! eligible.leader.replicas.version ≥ 1, as Kafka 4.1's controller writes them (compared
//! end to end by tests/interop_differential.rs).
#![allow(clippy::unwrap_used)]

use uuid::Uuid;

use super::context::{elr_bootstrap, registration, topic, topic_config, Ctx, CLUSTER_ID};
use crate::controller::replication::partition_change::{PartitionChangeBuilder, NO_LEADER};
use crate::controller::ControllerConfig;
use crate::metadata::image::{PartitionParts, PartitionRegistration, NO_LEADER_CHANGE};
use crate::metadata::records::PartitionChangeRecord;

fn partition(
    replicas: &[i32],
    isr: &[i32],
    leader: i32,
    elr: &[i32],
    lkelr: &[i32],
) -> PartitionRegistration {
    PartitionRegistration::from_parts(PartitionParts {
        replicas: replicas.to_vec(),
        directories: vec![Uuid::nil(); replicas.len()],
        isr: isr.to_vec(),
        removing_replicas: Vec::new(),
        adding_replicas: Vec::new(),
        leader,
        leader_recovery_state: 0,
        leader_epoch: 3,
        partition_epoch: 5,
        elr: elr.to_vec(),
        last_known_elr: lkelr.to_vec(),
    })
}

/// The change taking `p` to `target_isr` with only `acceptable` able to lead.
fn change(
    p: &PartitionRegistration,
    acceptable: &[i32],
    target_isr: &[i32],
    elr: bool,
    min_isr: usize,
) -> Option<PartitionChangeRecord> {
    let ok = |r: i32| acceptable.contains(&r);
    PartitionChangeBuilder::new(p, Uuid::nil(), 0, &ok)
        .eligible_leader_replicas(elr, min_isr)
        .target_isr(target_isr.to_vec())
        .build()
}

/// As [`change`] with ELR on and min.insync.replicas 1, as Kafka 4.0 (`guard` false) or
/// 4.1.1 and later (`guard` true, KAFKA-19522) keep the last known leader.
fn change_as(
    guard: bool,
    p: &PartitionRegistration,
    acceptable: &[i32],
    target_isr: &[i32],
) -> Option<PartitionChangeRecord> {
    let ok = |r: i32| acceptable.contains(&r);
    PartitionChangeBuilder::new(p, Uuid::nil(), 0, &ok)
        .eligible_leader_replicas(true, 1)
        .guard_last_known_leader(guard)
        .target_isr(target_isr.to_vec())
        .build()
}

#[test]
fn last_in_sync_replica_leaving_moves_to_elr_and_empties_the_isr() {
    let p = partition(&[101], &[101], 101, &[], &[]);
    let r = change(&p, &[], &[], true, 1).unwrap();
    assert_eq!(r.leader, NO_LEADER);
    assert_eq!(r.isr, Some(vec![]));
    assert_eq!(r.eligible_leader_replicas, Some(vec![101]));
    assert_eq!(
        r.last_known_elr,
        Some(vec![101]),
        "the last leader is remembered"
    );
}

#[test]
fn without_elr_the_last_in_sync_replica_stays() {
    let p = partition(&[101], &[101], 101, &[], &[]);
    let r = change(&p, &[], &[], false, 1).unwrap();
    assert_eq!(r.leader, NO_LEADER);
    assert_eq!(r.isr, None);
    assert_eq!(r.eligible_leader_replicas, None);
    assert_eq!(r.last_known_elr, None);
}

#[test]
fn shrink_below_min_isr_keeps_the_leaving_replica_eligible() {
    let p = partition(&[100, 101], &[100, 101], 100, &[], &[]);
    let r = change(&p, &[100], &[100], true, 2).unwrap();
    assert_eq!(r.leader, NO_LEADER_CHANGE);
    assert_eq!(r.isr, Some(vec![100]));
    assert_eq!(r.eligible_leader_replicas, Some(vec![101]));
    assert_eq!(r.last_known_elr, None);
    // At or above min.insync.replicas nothing becomes eligible.
    let r = change(&p, &[100], &[100], true, 1).unwrap();
    assert_eq!(r.eligible_leader_replicas, None);
}

#[test]
fn an_eligible_replica_leads_when_the_isr_is_empty() {
    let p = partition(&[101], &[], NO_LEADER, &[101], &[101]);
    let r = change(&p, &[101], &[], true, 1).unwrap();
    assert_eq!(r.leader, 101);
    assert_eq!(r.isr, Some(vec![101]));
    assert_eq!(r.eligible_leader_replicas, Some(vec![]));
    assert_eq!(r.last_known_elr, Some(vec![]), "a leader again: forgotten");
    // Not acceptable yet: nothing changes.
    assert!(change(&p, &[], &[], true, 1).is_none());
}

#[test]
fn reaching_min_isr_clears_the_elr() {
    let p = partition(&[100, 101], &[100], 100, &[101], &[]);
    let r = change(&p, &[100, 101], &[100, 101], true, 2).unwrap();
    assert_eq!(r.isr, Some(vec![100, 101]));
    assert_eq!(r.eligible_leader_replicas, Some(vec![]));
}

#[test]
fn an_isr_emptied_without_a_leader_change_records_no_last_known_leader_from_4_1() {
    // Leaderless already (its only in-sync replica fenced), the ISR now empties: an unclean
    // shutdown keeps 101 out of the ELR. Found by the differential fuzz (D22, seed
    // 2875614155): Kafka 4.1.2 writes no LastKnownElr, as the leader does not change.
    let p = partition(&[101, 102], &[101], NO_LEADER, &[], &[]);
    let ok = |_: i32| false;
    let as_4_1 = PartitionChangeBuilder::new(&p, Uuid::nil(), 0, &ok)
        .eligible_leader_replicas(true, 1)
        .unclean_shutdown_replicas(vec![101])
        .target_isr(vec![])
        .build()
        .unwrap();
    assert_eq!(as_4_1.isr, Some(vec![]));
    assert_eq!(as_4_1.leader, NO_LEADER_CHANGE);
    assert_eq!(as_4_1.last_known_elr, None);
    // Kafka 4.0 records the leader it had when the ISR emptied: none.
    let as_4_0 = PartitionChangeBuilder::new(&p, Uuid::nil(), 0, &ok)
        .eligible_leader_replicas(true, 1)
        .guard_last_known_leader(false)
        .unclean_shutdown_replicas(vec![101])
        .target_isr(vec![])
        .build()
        .unwrap();
    assert_eq!(as_4_0.last_known_elr, Some(vec![NO_LEADER]));
}

#[test]
fn losing_the_leader_records_it_once_and_a_new_leader_clears_it() {
    let led = partition(&[101, 102], &[101], 101, &[], &[]);
    for guard in [true, false] {
        let r = change_as(guard, &led, &[], &[]).unwrap();
        assert_eq!(r.leader, NO_LEADER);
        assert_eq!(r.last_known_elr, Some(vec![101]), "guard {guard}");
    }
    // Recorded already: 4.1 keeps it while the partition stays leaderless.
    let lost = partition(&[101, 102], &[], NO_LEADER, &[], &[101]);
    assert!(change_as(true, &lost, &[], &[]).is_none());
    // Leader kept with a smaller ISR: 4.0 clears a stale record, 4.1 leaves it.
    let stale = partition(&[101, 102], &[101, 102], 101, &[], &[102]);
    assert_eq!(
        change_as(true, &stale, &[101, 102], &[101])
            .unwrap()
            .last_known_elr,
        None
    );
    assert_eq!(
        change_as(false, &stale, &[101, 102], &[101])
            .unwrap()
            .last_known_elr,
        Some(vec![])
    );
}

#[test]
fn a_fenced_last_known_leader_is_elected_only_by_4_0() {
    // KAFKA-19522: from 4.1.1 the last known leader must be able to lead.
    let p = partition(&[101, 102], &[], NO_LEADER, &[], &[101]);
    assert!(change_as(true, &p, &[102], &[]).is_none());
    let r = change_as(false, &p, &[102], &[]).unwrap();
    assert_eq!(r.leader, 101);
    assert_eq!(r.isr, Some(vec![101]));
    // Acceptable: both elect it, as an unclean election.
    for guard in [true, false] {
        let r = change_as(guard, &p, &[101], &[]).unwrap();
        assert_eq!(
            (r.leader, r.isr.clone()),
            (101, Some(vec![101])),
            "guard {guard}"
        );
        assert_eq!(r.leader_recovery_state, 1, "guard {guard}");
    }
}

#[test]
fn elr_lists_replicas_in_java_hash_set_order() {
    // Buckets of a 16-slot table: 117 and 101 share bucket 5, after 100's 4.
    let p = partition(&[117, 101, 100, 102], &[117, 101, 100, 102], 102, &[], &[]);
    let r = change(&p, &[102], &[102], true, 4).unwrap();
    assert_eq!(r.eligible_leader_replicas, Some(vec![100, 117, 101]));
}

/// Brokers 1 and 2 on metadata.version 4.1-IV1 with ELR on; topic `t` (RF 2,
/// min.insync.replicas 2) has broker 2 in its ELR after 2's controlled shutdown. Returns the
/// context and broker 2's epoch.
fn broker_2_eligible_after_shutdown() -> (Ctx, i64) {
    let mut cfg = ControllerConfig::new(1, CLUSTER_ID);
    cfg.rng_seed = 42;
    let mut ctx = Ctx::with_bootstrap(cfg, elr_bootstrap(27));
    let epoch_1 = ctx.register_unfenced(1, None);
    let epoch = ctx.register_unfenced(2, None);
    let t = topic("t", 1, 2).with_configs(vec![topic_config("min.insync.replicas", Some("2"))]);
    assert_eq!(ctx.create_topics(vec![t], false).topics[0].error_code, 0);
    let offset = ctx.log.end();
    let hb = ctx.heartbeat(2, epoch, offset, false, true);
    assert!(hb.should_shut_down || hb.is_fenced || hb.error_code == 0);
    let offset = ctx.log.end();
    ctx.heartbeat(2, epoch, offset, false, true);
    let p = ctx.partition("t", 0);
    assert_eq!(
        (p.isr().to_vec(), p.elr().to_vec()),
        (vec![1], vec![2]),
        "{p:?}"
    );
    // Broker 2 stops; its session expires (broker 1 keeps heartbeating) before it comes back.
    for _ in 0..2 {
        ctx.advance(5_000);
        let offset = ctx.log.end();
        ctx.heartbeat(1, epoch_1, offset, false, false);
    }
    assert!(ctx.image().brokers[&2].fenced, "broker 2's session expired");
    assert_eq!(
        ctx.partition("t", 0).elr(),
        vec![2],
        "fenced, still eligible"
    );
    (ctx, epoch)
}

/// ReplicationControlManagerTest's testEligibleLeaderReplicas_UncleanShutdown: a broker that
/// comes back without its previous epoch may have lost data and leaves every ELR.
#[test]
fn eligible_leader_replicas_unclean_shutdown() {
    let (mut ctx, _) = broker_2_eligible_after_shutdown();
    let req = registration(2, None)
        .with_incarnation_id(Uuid::from_u128(77))
        .with_previous_broker_epoch(-1);
    assert_eq!(ctx.register(req).error_code, 0);
    let p = ctx.partition("t", 0);
    assert!(p.elr().is_empty(), "out of the ELR: {p:?}");
    assert_eq!(p.isr(), vec![1]);
}

/// ReplicationControlManagerTest's testEligibleLeaderReplicas_CleanShutdown: with its
/// previous epoch the broker shut down cleanly and stays eligible.
#[test]
fn eligible_leader_replicas_clean_shutdown() {
    let (mut ctx, epoch) = broker_2_eligible_after_shutdown();
    let req = registration(2, None)
        .with_incarnation_id(Uuid::from_u128(77))
        .with_previous_broker_epoch(epoch);
    assert_eq!(ctx.register(req).error_code, 0);
    assert_eq!(ctx.partition("t", 0).elr(), vec![2]);
}

/// Kafka 4.1's `ElectionFromEligibleLeaderReplicasPerSec`: broker 2 came back cleanly and is
/// eligible; when broker 1, the last in-sync replica, is fenced, broker 2 leads from the ELR,
/// and the committed log counts one election from the ELR and no unclean one.
#[test]
fn an_election_from_the_elr_is_counted() {
    let (mut ctx, epoch) = broker_2_eligible_after_shutdown();
    let req = registration(2, None)
        .with_incarnation_id(Uuid::from_u128(77))
        .with_previous_broker_epoch(epoch);
    let registered = ctx.register(req);
    assert_eq!(registered.error_code, 0);
    let offset = ctx.log.end();
    ctx.heartbeat(2, registered.broker_epoch, offset, false, false);
    assert_eq!(ctx.c.election_stats().from_elr, 0);
    let epoch_1 = ctx.image().brokers[&1].broker_epoch;
    let offset = ctx.log.end();
    ctx.heartbeat(1, epoch_1, offset, true, false);
    let p = ctx.partition("t", 0);
    assert_eq!(p.leader, 2, "{p:?}");
    assert_eq!(ctx.c.election_stats().from_elr, 1);
    assert_eq!(ctx.c.election_stats().unclean, 0);
}

/// Kafka 4.1's `maybeFenceOneStaleBroker` fences every broker whose heartbeat session expired
/// at its current epoch, one already fenced too: a registered broker that heartbeated while
/// still fenced (behind the metadata log) and then went quiet gets a BrokerRegistrationChange
/// record fencing it once its session times out, as the differential fuzz against Kafka's
/// QuorumController showed (#36).
#[test]
fn a_fenced_broker_whose_session_expires_is_fenced_again() {
    use crate::metadata::record::MetadataRecord;
    let mut ctx = Ctx::active(27);
    let r = ctx.register(registration(1, None));
    assert_eq!(r.error_code, 0);
    // Behind the log: stays fenced.
    let hb = ctx.heartbeat(1, r.broker_epoch, -1, false, false);
    assert!(hb.is_fenced);
    let end = ctx.log.end();
    ctx.advance(10_000);
    use crate::raft::LogReader;
    let bytes = ctx.log.read(end, usize::MAX).unwrap();
    let mut image = crate::metadata::image::MetadataImage::new();
    let mut fenced = Vec::new();
    image.replay_batches_observed(&bytes, i64::MAX, "test", &mut |_, _, r| {
        if let MetadataRecord::BrokerRegistrationChange(c) = r {
            fenced.push((c.broker_id, c.broker_epoch, c.fenced));
        }
    });
    assert_eq!(fenced, vec![(1, r.broker_epoch, 1)]);
}

/// Kafka 4.1's fencing task takes one expired tracker entry per run and, having found one,
/// runs again only 10 ms later, even when the entry was dropped (a heartbeat of a broker that
/// never registered, tracked before it was refused). Broker 1's entry comes first in Kafka's
/// map (hash bin 0 against bin 3), so registered broker 2, silent as long, is fenced 10 ms
/// after its session expired, not at once (differential fuzz D5, #36).
#[test]
fn a_dropped_stale_entry_delays_the_next_fencing_by_10_ms() {
    use crate::metadata::record::MetadataRecord;
    use crate::raft::LogReader;
    let mut ctx = Ctx::active(27);
    let r = ctx.register(registration(2, None));
    assert_eq!(r.error_code, 0);
    let unknown = ctx.heartbeat(1, -1, 0, false, false);
    assert_ne!(unknown.error_code, 0, "broker 1 never registered");
    let hb = ctx.heartbeat(2, r.broker_epoch, i64::MAX, false, false);
    assert!(!hb.is_fenced);
    let fenced_since = |ctx: &Ctx, end: i64| {
        let bytes = ctx.log.read(end, usize::MAX).unwrap();
        let mut image = crate::metadata::image::MetadataImage::new();
        let mut fenced = Vec::new();
        image.replay_batches_observed(&bytes, i64::MAX, "test", &mut |_, _, r| {
            if let MetadataRecord::BrokerRegistrationChange(c) = r {
                fenced.push((c.broker_id, c.fenced));
            }
        });
        fenced
    };
    let end = ctx.log.end();
    // To the sessions' expiry, the first run that finds them expired.
    let expiry = ctx.c.poll_timeout().unwrap();
    ctx.advance(expiry - ctx.now_ms);
    assert_eq!(
        fenced_since(&ctx, end),
        vec![],
        "broker 1's entry took the run"
    );
    ctx.advance(9);
    assert_eq!(fenced_since(&ctx, end), vec![], "the next run is 10 ms on");
    ctx.advance(1);
    assert_eq!(fenced_since(&ctx, end), vec![(2, 1)]);
}

/// The presented release reaches the partition changes (KAFKA-19522 end to end): broker 1,
/// the only replica of `t-0`, leads until its session expires (leaderless, in the ELR, the
/// last known leader), then registers again without its previous epoch (an unclean
/// shutdown, so it leaves the ELR) and stays fenced. Kafka 4.0's controller makes the fenced
/// last known leader the leader again; 4.1.1 and later leave the partition leaderless.
#[test]
fn the_presented_release_decides_whether_a_fenced_last_known_leader_is_elected() {
    use crate::codec::versions::Release;
    use crate::common::release::mv;
    let leader_after_unclean_return = |release: Release| {
        let mut cfg = ControllerConfig::new(1, CLUSTER_ID);
        cfg.rng_seed = 42;
        cfg.release = release;
        let mut ctx = Ctx::with_bootstrap(cfg, elr_bootstrap(mv::V4_0_IV3));
        ctx.register_unfenced(1, None);
        assert_eq!(
            ctx.create_topics(vec![topic("t", 1, 1)], false).topics[0].error_code,
            0
        );
        assert_eq!(ctx.partition("t", 0).leader, 1);
        ctx.advance(10_000);
        assert!(ctx.image().brokers[&1].fenced, "session expired");
        let p = ctx.partition("t", 0);
        assert_eq!(
            (p.leader, p.elr().to_vec(), p.last_known_elr().to_vec()),
            (NO_LEADER, vec![1], vec![1]),
            "{release:?}: {p:?}"
        );
        let again = registration(1, None)
            .with_incarnation_id(Uuid::from_u128(77))
            .with_previous_broker_epoch(-1);
        assert_eq!(ctx.register(again).error_code, 0);
        assert!(
            ctx.image().brokers[&1].fenced,
            "registered, not yet unfenced"
        );
        let p = ctx.partition("t", 0);
        assert!(p.elr().is_empty(), "{release:?}: out of the ELR: {p:?}");
        p.leader
    };
    assert_eq!(leader_after_unclean_return(Release::Kafka4_0), 1);
    assert_eq!(leader_after_unclean_return(Release::default()), NO_LEADER);
    assert_eq!(leader_after_unclean_return(Release::Kafka4_4), NO_LEADER);
}
