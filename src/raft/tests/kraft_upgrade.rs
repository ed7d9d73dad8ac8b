//! The kraft.version upgrade (KIP-853, static → dynamic), after Kafka 4.1's
//! `LeaderState.maybeAppendUpgradedKRaftVersion` and `KafkaRaftClient.upgradeKRaftVersion`
//! (the upgrade cases of LeaderStateTest and KafkaRaftClientReconfigTest): each check, in
//! Kafka's order, with its message; the control batch; AddRaftVoter afterwards.

use kafka_protocol::messages::ApiKey;

use super::context::*;
use super::reconfig_ctx::*;
use crate::raft::errors;
use crate::raft::types::ReplicaKey;
use crate::raft::{LogReader, UpgradeKRaftVersionError};
use crate::records::control::ControlRecord;
use crate::records::view::BatchView;

const LOCAL: i32 = 1;
const FOLLOWER: i32 = 2;

/// A kraft.version 0 leader of static voters 1 and 2, its epoch committed.
fn kraft0_leader() -> Context {
    let mut ctx = kraft0(LOCAL, &[LOCAL, FOLLOWER])
        .with_unknown_leader(3)
        .build();
    ctx.become_leader();
    establish_high_watermark(&mut ctx, key(FOLLOWER));
    ctx
}

/// The follower tells the leader its listeners and kraft.version range (what lets an upgrade
/// write its directory id).
fn update_from(ctx: &mut Context, voter: ReplicaKey, range: (i16, i16)) {
    let epoch = ctx.epoch();
    let id = ctx.deliver_request(
        update_voter_request(
            Some(CLUSTER_ID),
            voter,
            epoch,
            range,
            &listeners(voter.id, &[LISTENER]),
        ),
        0,
    );
    assert_eq!(update_voter_answer(ctx, id).0, errors::NONE);
}

fn upgrade(
    ctx: &mut Context,
    epoch: i32,
    version: i16,
    validate_only: bool,
) -> Result<bool, UpgradeKRaftVersionError> {
    let r = ctx
        .core
        .upgrade_kraft_version(ctx.now_ms, &ctx.log, epoch, version, validate_only);
    ctx.drain();
    r
}

/// The control records of the last batch in the log.
fn last_control_batch(ctx: &Context) -> Vec<ControlRecord> {
    let (_, _, bytes) = ctx.log.batches().pop().unwrap();
    let view = BatchView::new(&bytes).unwrap();
    assert!(view.is_control());
    view.control_records().unwrap()
}

#[test]
fn test_upgrade_kraft_version_appends_kraft_version_and_voters_records() {
    let mut ctx = kraft0_leader();
    update_from(&mut ctx, key(FOLLOWER), (0, 1));
    let epoch = ctx.epoch();
    let end = ctx.log.end_offset().offset;
    assert_eq!(upgrade(&mut ctx, epoch, 1, false), Ok(true));
    assert_eq!(
        ctx.log.end_offset().offset,
        end + 2,
        "one batch of two records"
    );
    let records = last_control_batch(&ctx);
    assert_eq!(records.len(), 2);
    assert_eq!(records[0], ControlRecord::kraft_version(1));
    let ControlRecord::Voters(v) = &records[1] else {
        panic!("{records:?}")
    };
    let keys: Vec<(i32, uuid::Uuid)> = v
        .voters
        .iter()
        .map(|v| (v.voter_id.0, v.voter_directory_id))
        .collect();
    assert_eq!(keys, vec![(LOCAL, dir(LOCAL)), (FOLLOWER, dir(FOLLOWER))]);
    assert!(v
        .voters
        .iter()
        .all(|v| v.k_raft_version_feature.max_supported_version == 1));
    // In effect once appended; the voters now carry their directory ids.
    assert_eq!(ctx.core.kraft_version(), 1);
    assert!(ctx.core.voters().is_voter(&key(FOLLOWER)));
    assert_eq!(ctx.core.voters().get(FOLLOWER).unwrap().key, key(FOLLOWER));
    // Committed by the follower's next fetch; the same upgrade again is a no-op.
    assert_eq!(fetch_at_log_end(&mut ctx, key(FOLLOWER)), 0);
    assert_eq!(ctx.core.high_watermark(), Some(end + 2));
    assert_eq!(upgrade(&mut ctx, epoch, 1, false), Ok(false));
    assert_eq!(ctx.log.end_offset().offset, end + 2);
}

#[test]
fn test_upgrade_kraft_version_validate_only_appends_nothing() {
    let mut ctx = kraft0_leader();
    update_from(&mut ctx, key(FOLLOWER), (0, 1));
    let epoch = ctx.epoch();
    let end = ctx.log.end_offset().offset;
    assert_eq!(upgrade(&mut ctx, epoch, 1, true), Ok(true));
    assert_eq!(ctx.log.end_offset().offset, end);
    assert_eq!(ctx.core.kraft_version(), 0);
    // Still possible for real afterwards.
    assert_eq!(upgrade(&mut ctx, epoch, 1, false), Ok(true));
    assert_eq!(ctx.core.kraft_version(), 1);
}

#[test]
fn test_upgrade_kraft_version_same_version_is_a_no_op() {
    let mut ctx = kraft0_leader();
    let epoch = ctx.epoch();
    let end = ctx.log.end_offset().offset;
    assert_eq!(upgrade(&mut ctx, epoch, 0, false), Ok(false));
    assert_eq!(ctx.log.end_offset().offset, end);
}

#[test]
fn test_upgrade_kraft_version_refused_until_all_voters_support_it() {
    // Static voters support 0 only until their UpdateRaftVoter says otherwise.
    let mut ctx = kraft0_leader();
    let epoch = ctx.epoch();
    let end = ctx.log.end_offset().offset;
    let refused = Err(UpgradeKRaftVersionError::InvalidUpdateVersion(
        "Invalid upgrade of kraft.version to KRAFT_VERSION_1 because not all of the voters support it"
            .into(),
    ));
    assert_eq!(upgrade(&mut ctx, epoch, 1, false), refused);
    update_from(&mut ctx, key(FOLLOWER), (0, 0));
    assert_eq!(upgrade(&mut ctx, epoch, 1, false), refused);
    assert_eq!(
        upgrade(&mut ctx, epoch, 1, true),
        refused,
        "validate only too"
    );
    assert_eq!(ctx.log.end_offset().offset, end, "nothing appended");
    update_from(&mut ctx, key(FOLLOWER), (0, 1));
    assert_eq!(upgrade(&mut ctx, epoch, 1, false), Ok(true));
}

#[test]
fn test_upgrade_kraft_version_needs_every_directory_id() {
    let mut ctx = kraft0_leader();
    // A voter that supports 1 but sent no directory id (Kafka's leader state could hold one
    // learnt otherwise; ours only from UpdateRaftVoter, which refuses a nil id).
    if let crate::raft::Role::Leader(l) = &mut ctx.core.role {
        let voters = l.kraft_upgrade.voters().unwrap().clone();
        let mut node = voters.get(FOLLOWER).unwrap().clone();
        node.kraft_version_max = 1;
        l.kraft_upgrade = crate::raft::KRaftVersionUpgrade::Voters(
            voters.update_voter_ignoring_directory_id(node).unwrap(),
        );
    }
    let epoch = ctx.epoch();
    match upgrade(&mut ctx, epoch, 1, false) {
        Err(UpgradeKRaftVersionError::IllegalState(m)) => assert!(
            m.starts_with("Directory id must be known for all of the voters: "),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(ctx.core.kraft_version(), 0);
}

#[test]
fn test_upgrade_kraft_version_checks_leadership_and_epoch() {
    let mut ctx = kraft0_leader();
    update_from(&mut ctx, key(FOLLOWER), (0, 1));
    let epoch = ctx.epoch();
    assert_eq!(
        upgrade(&mut ctx, epoch - 1, 1, false),
        Err(UpgradeKRaftVersionError::NotLeader(format!(
            "Upgrade kraft version failed because the given epoch {} is stale. Current leader epoch is {epoch}",
            epoch - 1
        )))
    );
    assert_eq!(
        upgrade(&mut ctx, epoch + 1, 1, false),
        Err(UpgradeKRaftVersionError::IllegalArgument(format!(
            "Attempt to append from epoch {} which is larger than the current epoch of {epoch}",
            epoch + 1
        )))
    );
    // A follower is refused as not the leader.
    let mut follower = kraft0(FOLLOWER, &[LOCAL, FOLLOWER])
        .with_elected_leader(3, LOCAL)
        .build();
    assert_eq!(
        upgrade(&mut follower, 3, 1, false),
        Err(UpgradeKRaftVersionError::NotLeader(
            "Upgrade kraft version failed because the replica is not the current leader".into()
        ))
    );
}

#[test]
fn test_upgrade_kraft_version_refuses_a_downgrade() {
    let mut ctx = kraft1_leader(&[LOCAL, FOLLOWER]);
    let epoch = ctx.epoch();
    assert_eq!(
        upgrade(&mut ctx, epoch, 0, false),
        Err(UpgradeKRaftVersionError::InvalidUpdateVersion(
            "Invalid upgrade of kraft.version from version KRAFT_VERSION_1 to KRAFT_VERSION_0 because the new version is a downgrade".into()
        ))
    );
    assert_eq!(upgrade(&mut ctx, epoch, 1, false), Ok(false));
}

#[test]
fn test_upgrade_kraft_version_then_add_voter() {
    // Before the upgrade AddRaftVoter is refused (kraft.version 0); after it commits a new
    // voter joins with a VotersRecord.
    let mut ctx = kraft0_leader();
    update_from(&mut ctx, key(FOLLOWER), (0, 1));
    let new = key(3);
    let id = ctx.deliver_request(
        add_voter_request(Some(CLUSTER_ID), new, &listeners(3, &[LISTENER])),
        0,
    );
    assert_eq!(add_voter_error(&ctx, id), errors::UNSUPPORTED_VERSION);
    let epoch = ctx.epoch();
    assert_eq!(upgrade(&mut ctx, epoch, 1, false), Ok(true));
    assert_eq!(fetch_at_log_end(&mut ctx, key(FOLLOWER)), 0);
    // The new replica catches up as an observer, then is added.
    assert_eq!(fetch_at_log_end(&mut ctx, new), 0);
    let id = ctx.deliver_request(
        add_voter_request(Some(CLUSTER_ID), new, &listeners(3, &[LISTENER])),
        0,
    );
    let sent = take_api_versions(&mut ctx);
    ctx.deliver_response(
        sent.correlation_id,
        api_versions_response(errors::NONE, Some((0, 1))),
    );
    assert!(ctx.core.voters().is_voter(&new), "added once appended");
    assert_eq!(fetch_at_log_end(&mut ctx, key(FOLLOWER)), 0);
    assert_eq!(add_voter_error(&ctx, id), errors::NONE);
    assert!(ctx.take_sent(ApiKey::ApiVersions).is_empty());
}

#[test]
fn test_resign_steps_down_only_in_its_epoch() {
    let mut ctx = kraft0_leader();
    let epoch = ctx.epoch();
    ctx.core.resign(ctx.now_ms, &ctx.log, epoch - 1);
    ctx.drain();
    ctx.assert_leader(epoch);
    ctx.core.resign(ctx.now_ms, &ctx.log, epoch);
    ctx.drain();
    ctx.assert_resigned(epoch);
}
