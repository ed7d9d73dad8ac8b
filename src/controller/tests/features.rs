//! UpdateFeatures: FeatureControlManagerTest's cases and the messages a Kafka 4.1.2
//! controller gives (its `FeatureControlManager` run on the same updates), on an active
//! controller over an in-memory log.
#![allow(clippy::unwrap_used)]

use bytes::Bytes;
use kafka_protocol::messages::update_features_request::FeatureUpdateKey;
use kafka_protocol::messages::{UpdateFeaturesRequest, UpdateFeaturesResponse};
use kafka_protocol::protocol::StrBytes;

use super::context::{registration, Ctx, CLUSTER_ID};
use crate::codec::{RequestBody, ResponseBody};
use crate::common::release::Release;
use crate::controller::{errors, ControllerConfig};
use crate::records::feature_level::feature_level_record;

pub(super) const UPGRADE: i8 = 1;
pub(super) const SAFE: i8 = 2;
const UNSAFE: i8 = 3;
const PREFIX: &str =
    "The update failed for all features since the following feature had an error: ";

/// Node 1 active at `mv` with `features` finalized, and broker 0 registered (it supports
/// what `registration` lists: metadata.version 7-27 and ELR 0-1).
fn ctx_at(mv: i16, features: &[(&str, i16)]) -> Ctx {
    let mut records = vec![Bytes::from(feature_level_record("metadata.version", mv))];
    for (n, l) in features {
        records.push(Bytes::from(feature_level_record(n, *l)));
    }
    let mut ctx = Ctx::with_bootstrap(ControllerConfig::new(1, CLUSTER_ID), records);
    ctx.register_unfenced(0, None);
    ctx
}

pub(super) fn update(
    ctx: &mut Ctx,
    updates: &[(&str, i16, i8)],
    validate_only: bool,
    version: i16,
) -> UpdateFeaturesResponse {
    let req = UpdateFeaturesRequest::default()
        .with_validate_only(validate_only)
        .with_feature_updates(
            updates
                .iter()
                .map(|(n, l, t)| {
                    FeatureUpdateKey::default()
                        .with_feature(StrBytes::from_string(n.to_string()))
                        .with_max_version_level(*l)
                        .with_upgrade_type(*t)
                })
                .collect(),
        );
    match ctx.call(RequestBody::UpdateFeatures(req), version) {
        ResponseBody::UpdateFeatures(r) => r,
        other => panic!("{other:?}"),
    }
}

pub(super) fn refused(r: &UpdateFeaturesResponse) -> (i16, String) {
    assert!(r.results.is_empty(), "no results on an error");
    (
        r.error_code,
        r.error_message
            .as_deref()
            .unwrap_or_default()
            .strip_prefix(PREFIX)
            .unwrap_or("<no prefix>")
            .to_string(),
    )
}

pub(super) fn invalid(m: &str) -> (i16, String) {
    (errors::INVALID_UPDATE_VERSION, m.to_string())
}

/// FeatureControlManagerTest.testUpdateFeaturesErrorCases and the 4.1.2 probe's refusals.
#[test]
fn test_update_features_error_cases() {
    let mut ctx = ctx_at(27, &[("eligible.leader.replicas.version", 1)]);
    let cases: &[(&str, i16, i8, &str)] = &[
        ("foo.bar", 1, UPGRADE, "Invalid update version 1 for feature foo.bar. Local controller 1 does not support this feature."),
        ("foo.bar", 0, SAFE, "Invalid update version 0 for feature foo.bar. Feature foo.bar not found."),
        ("metadata.version", 28, UPGRADE, "Invalid update version 28 for feature metadata.version. Local controller 1 only supports versions 7-27"),
        ("metadata.version", -1, UPGRADE, "Invalid update version -1 for feature metadata.version. A feature version cannot be less than 0."),
        ("metadata.version", 26, UPGRADE, "Invalid update version 26 for feature metadata.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."),
        ("group.version", 1, 0, "Invalid update version 1 for feature group.version. The controller does not support the given upgrade type."),
        ("group.version", 1, 7, "Invalid update version 1 for feature group.version. The controller does not support the given upgrade type."),
        ("group.version", 2, UPGRADE, "Invalid update version 2 for feature group.version. Local controller 1 only supports versions 0-1"),
        // Broker 0 registered without group.version.
        ("group.version", 1, UPGRADE, "Invalid update version 1 for feature group.version. Broker 0 does not support this feature."),
        ("streams.version", 1, UPGRADE, "Invalid update version 1 for feature streams.version. Local controller 1 does not support this feature."),
    ];
    let before = ctx.log.end();
    for (name, level, t, m) in cases {
        let r = update(&mut ctx, &[(name, *level, *t)], false, 2);
        assert_eq!(refused(&r), invalid(m), "{name}={level} type {t}");
    }
    assert_eq!(ctx.log.end(), before, "nothing written");
}

/// FeatureControlManagerTest.testCannotDowngradeToHigherVersion /
/// testCannotUseSafeDowngradeIfMetadataChanged / testCanUseSafeDowngradeIfMetadataDidNotChange.
#[test]
fn test_metadata_version_downgrades() {
    let mut ctx = ctx_at(22, &[]);
    let r = update(&mut ctx, &[("metadata.version", 23, SAFE)], false, 2);
    assert_eq!(
        refused(&r),
        invalid("Invalid update version 23 for feature metadata.version. Can't downgrade to a newer version.")
    );
    // 22 → 21: no level in (21, 22] changed metadata.
    let r = update(&mut ctx, &[("metadata.version", 21, SAFE)], false, 2);
    assert_eq!((r.error_code, r.error_message.as_deref()), (0, None));
    assert_eq!(ctx.image().metadata_version(), Some(21));
    // 21 → 16: 3.7-IV2 (17) added directories.
    for (t, reason) in [
        (SAFE, "Refusing to perform the requested downgrade because it might delete metadata information."),
        (UNSAFE, "Unsafe metadata downgrade is not supported in this version."),
    ] {
        let r = update(&mut ctx, &[("metadata.version", 16, t)], false, 2);
        assert_eq!(refused(&r), invalid(&format!("Invalid metadata.version 16. {reason}")));
    }
    // Upgrade back.
    let r = update(&mut ctx, &[("metadata.version", 27, UPGRADE)], false, 2);
    assert_eq!(r.error_code, 0);
    assert_eq!(ctx.image().metadata_version(), Some(27));
}

/// FeatureControlManagerTest.testUpdateFeatures: levels written, results at v0/v1 only (with
/// Kafka's "NONE" message), validate_only writes nothing, level 0 disables.
#[test]
fn test_update_features() {
    let mut ctx = ctx_at(27, &[]);
    // Broker 0 supports ELR 0-1: enabling it is allowed (it depends on metadata.version 23).
    let before = ctx.log.end();
    let r = update(
        &mut ctx,
        &[("eligible.leader.replicas.version", 1, UPGRADE)],
        true,
        1,
    );
    assert_eq!(r.error_code, 0);
    assert_eq!(r.results.len(), 1);
    assert_eq!(r.results[0].error_message.as_deref(), Some("NONE"));
    assert_eq!(ctx.log.end(), before, "validate_only");
    let r = update(
        &mut ctx,
        &[("eligible.leader.replicas.version", 1, UPGRADE)],
        false,
        2,
    );
    assert_eq!((r.error_code, r.results.len()), (0, 0), "v2 has no results");
    assert_eq!(
        ctx.image().features.get("eligible.leader.replicas.version"),
        Some(&1)
    );
    // ELR on: the cluster gets a min.insync.replicas (the static one) before the feature.
    let cluster = crate::metadata::image::ConfigResource {
        resource_type: 4,
        resource_name: String::new(),
    };
    assert_eq!(
        ctx.image()
            .configs
            .get(&cluster)
            .and_then(|c| c.get("min.insync.replicas"))
            .map(String::as_str),
        Some("1")
    );
    assert_eq!(
        ctx.log.end(),
        before + 2,
        "ConfigRecord, FeatureLevelRecord"
    );
    // The same level again is written again (a no-op record), and level 0 disables.
    let r = update(
        &mut ctx,
        &[("eligible.leader.replicas.version", 0, SAFE)],
        false,
        0,
    );
    assert_eq!(
        refused(&r),
        invalid("Invalid update version 0 for feature eligible.leader.replicas.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade."),
        "v0 is always an upgrade"
    );
    let r = update(
        &mut ctx,
        &[("eligible.leader.replicas.version", 0, SAFE)],
        false,
        1,
    );
    assert_eq!(r.error_code, 0);
    assert!(!ctx
        .image()
        .features
        .contains_key("eligible.leader.replicas.version"));
}

/// ELR 1 needs metadata.version 23 (4.0-IV1), in the proposed levels.
#[test]
fn test_elr_depends_on_metadata_version() {
    let mut ctx = ctx_at(22, &[]);
    let r = update(
        &mut ctx,
        &[("eligible.leader.replicas.version", 1, UPGRADE)],
        false,
        2,
    );
    assert_eq!(
        refused(&r),
        invalid("Invalid update version 1 for feature eligible.leader.replicas.version. eligible.leader.replicas.version could not be set to 1 because it depends on metadata.version level 23")
    );
    let r = update(
        &mut ctx,
        &[
            ("eligible.leader.replicas.version", 1, UPGRADE),
            ("metadata.version", 23, UPGRADE),
        ],
        false,
        2,
    );
    assert_eq!(r.error_code, 0);
    assert_eq!(ctx.image().metadata_version(), Some(23));
}

/// A broker that supports less blocks an upgrade with its id; a registered controller and an
/// unregistered voter too (from metadata.version 3.7-IV0).
#[test]
fn test_update_features_checks_every_node() {
    let mut cfg = ControllerConfig::new(1, CLUSTER_ID);
    cfg.quorum_node_ids = vec![1, 2];
    let mut ctx = Ctx::with_bootstrap(
        cfg,
        vec![Bytes::from(feature_level_record("metadata.version", 22))],
    );
    let mut old = registration(5, None);
    old.features[0].max_supported_version = 22;
    assert_eq!(ctx.register(old).error_code, 0);
    let r = update(&mut ctx, &[("metadata.version", 23, UPGRADE)], false, 2);
    assert_eq!(
        refused(&r),
        invalid("Invalid update version 23 for feature metadata.version. Broker 5 only supports versions 7-22")
    );
    let r = update(&mut ctx, &[("metadata.version", 22, UPGRADE)], false, 2);
    assert_eq!(
        refused(&r),
        invalid("Invalid update version 22 for feature metadata.version. controller 2 has not registered, and may not support this feature")
    );
}

/// Node 1 active at metadata.version 27, no broker registered (the test brokers do not list
/// kraft.version).
fn ctx_without_brokers() -> Ctx {
    Ctx::with_bootstrap(
        ControllerConfig::new(1, CLUSTER_ID),
        vec![Bytes::from(feature_level_record("metadata.version", 27))],
    )
}

/// kraft.version: the same level is handed to the Raft layer (nothing to do) and a NoOpRecord
/// written; a downgrade type to another level is refused without asking the Raft layer.
#[test]
fn kraft_version_updates() {
    let mut ctx = ctx_at(27, &[]);
    let before = ctx.log.end();
    let r = update(&mut ctx, &[("kraft.version", 0, UPGRADE)], false, 2);
    assert_eq!(r.error_code, 0);
    assert_eq!(ctx.log.end(), before + 1, "a NoOpRecord");
    assert_eq!(ctx.log.kraft_upgrades, vec![(1, 0, false)]);
    let r = update(&mut ctx, &[("kraft.version", 0, SAFE)], false, 2);
    assert_eq!(r.error_code, 0);
    assert_eq!(ctx.log.end(), before + 1, "nothing");
    assert_eq!(
        ctx.log.kraft_upgrades.len(),
        1,
        "the Raft layer is not asked"
    );
    // The checks before the Raft layer: a broker without kraft.version, this controller's
    // range.
    let r = update(&mut ctx, &[("kraft.version", 1, UPGRADE)], false, 2);
    assert_eq!(
        refused(&r),
        invalid("Invalid update version 1 for feature kraft.version. Broker 0 does not support this feature.")
    );
    let r = update(&mut ctx, &[("kraft.version", 2, UPGRADE)], false, 2);
    assert_eq!(
        refused(&r),
        invalid("Invalid update version 2 for feature kraft.version. Local controller 1 only supports versions 0-1")
    );
    assert_eq!(ctx.log.kraft_upgrades.len(), 1);
}

/// kraft.version 0 → 1 (Kafka's `upgradeKRaftVersion`): the Raft layer appends its control
/// batch, the controller a NoOpRecord after it; the answer waits for the NoOpRecord's commit.
#[test]
fn kraft_version_upgrade_is_handed_to_the_raft_layer() {
    let mut ctx = ctx_without_brokers();
    let before = ctx.log.end();
    let req =
        UpdateFeaturesRequest::default().with_feature_updates(vec![FeatureUpdateKey::default()
            .with_feature(StrBytes::from_static_str("kraft.version"))
            .with_max_version_level(1)
            .with_upgrade_type(UPGRADE)]);
    let id = ctx.send(RequestBody::UpdateFeatures(req), 1);
    assert_eq!(ctx.log.kraft_upgrades, vec![(ctx.epoch, 1, false)]);
    assert_eq!(
        ctx.log.end(),
        before + 3,
        "KRaftVersion + Voters, then a NoOpRecord"
    );
    assert!(ctx.answer(id).is_none(), "answered only once committed");
    ctx.commit();
    let Some(ResponseBody::UpdateFeatures(r)) = ctx.answer(id) else {
        panic!("answered after commit")
    };
    assert_eq!((r.error_code, r.error_message.as_deref()), (0, None));
    assert_eq!(r.results.len(), 1);
    assert_eq!(r.results[0].error_message.as_deref(), Some("NONE"));
    // Now at 1: the same level again asks the Raft layer (a no-op there), a downgrade is
    // refused by the controller.
    let r = update(&mut ctx, &[("kraft.version", 1, UPGRADE)], false, 2);
    assert_eq!(r.error_code, 0);
    let r = update(&mut ctx, &[("kraft.version", 0, SAFE)], false, 2);
    assert_eq!(
        refused(&r),
        invalid("Invalid update version 0 for feature kraft.version. Can't downgrade the version of this feature.")
    );
    let r = update(&mut ctx, &[("kraft.version", 0, UPGRADE)], false, 2);
    assert_eq!(
        refused(&r),
        invalid("Invalid update version 0 for feature kraft.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.")
    );
}

/// validateOnly reaches the Raft layer as validate-only and writes nothing at all.
#[test]
fn kraft_version_upgrade_validate_only_writes_nothing() {
    let mut ctx = ctx_without_brokers();
    let before = ctx.log.end();
    let r = update(&mut ctx, &[("kraft.version", 1, UPGRADE)], true, 2);
    assert_eq!((r.error_code, r.error_message.as_deref()), (0, None));
    assert_eq!(ctx.log.kraft_upgrades, vec![(ctx.epoch, 1, true)]);
    assert_eq!(ctx.log.end(), before);
    assert_eq!(ctx.log.kraft_version, 0);
}

/// The Raft layer's refusals: its InvalidUpdateVersionException keeps its own message (no
/// "Invalid update version" prefix); an epoch ahead becomes the reason of one.
#[test]
fn kraft_version_upgrade_refused_by_the_raft_layer() {
    use crate::raft::UpgradeKRaftVersionError as E;
    let mut ctx = ctx_without_brokers();
    let before = ctx.log.end();
    let message =
        "Invalid upgrade of kraft.version to KRAFT_VERSION_1 because not all of the voters support it";
    ctx.log.kraft_upgrade_refusal = Some(E::InvalidUpdateVersion(message.into()));
    let r = update(&mut ctx, &[("kraft.version", 1, UPGRADE)], false, 1);
    assert_eq!(refused(&r), invalid(message));
    ctx.log.kraft_upgrade_refusal = Some(E::IllegalArgument(
        "Attempt to append from epoch 2 which is larger than the current epoch of 1".into(),
    ));
    let r = update(&mut ctx, &[("kraft.version", 1, UPGRADE)], false, 1);
    assert_eq!(
        refused(&r),
        invalid("Invalid update version 1 for feature kraft.version. Attempt to append from epoch 2 which is larger than the current epoch of 1")
    );
    assert_eq!(ctx.log.end(), before, "nothing written");
    assert!(ctx.c.is_active());
}

/// What Kafka's event does not catch (IllegalStateException: a voter without a directory id)
/// is UNKNOWN_SERVER_ERROR with no message and no results, and the controller fails over: it
/// renounces and the Raft leader resigns.
#[test]
fn kraft_version_upgrade_unexpected_error_fails_over() {
    use crate::raft::UpgradeKRaftVersionError as E;
    let mut ctx = ctx_without_brokers();
    ctx.log.kraft_upgrade_refusal = Some(E::IllegalState(
        "Directory id must be known for all of the voters: ...".into(),
    ));
    let r = update(&mut ctx, &[("kraft.version", 1, UPGRADE)], false, 1);
    assert_eq!(
        (r.error_code, r.error_message.as_deref(), r.results.len()),
        (errors::UNKNOWN_SERVER_ERROR, None, 0)
    );
    assert_eq!(ctx.log.resigned, vec![ctx.epoch]);
    assert!(!ctx.c.is_active(), "renounced");
}

/// Kafka's raft NotLeaderException: NOT_CONTROLLER, and the controller fails over.
#[test]
fn kraft_version_upgrade_on_a_replica_that_no_longer_leads() {
    use crate::raft::UpgradeKRaftVersionError as E;
    let mut ctx = ctx_without_brokers();
    ctx.log.kraft_upgrade_refusal = Some(E::NotLeader(
        "Upgrade kraft version failed because the replica is not the current leader".into(),
    ));
    let r = update(&mut ctx, &[("kraft.version", 1, UPGRADE)], false, 2);
    assert_eq!(
        (r.error_code, r.error_message.as_deref(), r.results.len()),
        (
            errors::NOT_CONTROLLER,
            Some("No controller appears to be active."),
            0
        )
    );
    assert!(!ctx.c.is_active());
}

/// Disabling a feature the presented release's `Feature` enum does not know is refused as
/// "not found" (Kafka 4.0.2 knows neither share.version nor streams.version; 4.1.2 knows both,
/// so disabling one at level 0 is accepted and writes nothing new).
#[test]
fn disabling_a_feature_the_release_does_not_know() {
    let mut cfg = ControllerConfig::new(1, CLUSTER_ID);
    cfg.release = Release::Kafka4_0;
    let records = vec![Bytes::from(feature_level_record("metadata.version", 25))];
    let mut ctx = Ctx::with_bootstrap(cfg, records);
    ctx.register_unfenced(0, None);
    let r = update(&mut ctx, &[("share.version", 0, SAFE)], false, 2);
    assert_eq!(
        refused(&r),
        invalid(
            "Invalid update version 0 for feature share.version. Feature share.version not found."
        )
    );
    let mut ctx = ctx_at(27, &[]);
    let r = update(&mut ctx, &[("share.version", 0, SAFE)], false, 2);
    assert_eq!(r.error_code, 0, "{r:?}");
}

/// Differential fuzz (issue #36, seed 2653 of base 1000): Kafka's `Feature.validateVersion`
/// refuses any feature above level 0 while the proposed metadata.version is below 3.3-IV3,
/// before that feature's own dependencies; group.version comes before metadata.version in
/// the request's HashMap, so its refusal is the answer.
#[test]
fn a_feature_above_0_needs_the_proposed_metadata_version_at_its_minimum() {
    let mut ctx = ctx_without_brokers();
    let r = update(
        &mut ctx,
        &[
            ("metadata.version", 0, UPGRADE),
            ("group.version", 1, UPGRADE),
        ],
        false,
        2,
    );
    assert_eq!(
        refused(&r),
        invalid("Invalid update version 1 for feature group.version. group.version could not be set to 1 because it depends on metadata.version=7 (3.3-IV3)")
    );
}
