//! The kraft.version upgrade through the whole node state machine: UpdateFeatures to the
//! controller, handed to the Raft core through the machine's adapter, the control batch in the
//! log, the answer once committed (a lone static voter: kraft.version 0, its own directory id
//! known, so nothing is missing).

use kafka_protocol::messages::update_features_request::FeatureUpdateKey;
use kafka_protocol::messages::UpdateFeaturesRequest;
use kafka_protocol::protocol::StrBytes;

use super::sim::{settings, SimStore};
use crate::codec::{RequestBody, ResponseBody};
use crate::controller::tests::context::{bootstrap, CLUSTER_ID};
use crate::controller::{ControllerConfig, QuorumController};
use crate::node::registration::{registered_features, Registrations};
use crate::node::{NodeMachine, NodeOutput};
use crate::raft::tests::context::{config, LISTENER};
use crate::raft::{InboundRequest, LogReader, RaftCore};
use crate::records::control::ControlRecord;
use crate::records::view::BatchView;

const DIR: uuid::Uuid = uuid::Uuid::from_u128(0x1001);

fn lone_static_voter() -> (NodeMachine, SimStore, u64) {
    let mut store = SimStore::default();
    let mut now_ms = 1_000;
    let mut cfg = config(1, &[1]);
    cfg.directory_id = DIR;
    let core = RaftCore::new(cfg, None, &store.log, now_ms);
    let controller = QuorumController::new(ControllerConfig::new(1, CLUSTER_ID), bootstrap(27));
    let registrations = Registrations::new(
        1,
        uuid::Uuid::from_u128(7),
        vec![(LISTENER.to_string(), "127.0.0.1".to_string(), 9001, 0)],
        &registered_features(Default::default()),
    );
    let mut m = NodeMachine::new(core, controller, registrations, &settings(), now_ms);
    m.start(now_ms, &mut store).unwrap();
    for _ in 0..50 {
        now_ms += 10;
        m.poll(now_ms, &mut store).unwrap();
        while m.poll_output().is_some() {}
        if m.is_active_controller() {
            break;
        }
    }
    assert!(
        m.is_active_controller(),
        "the lone voter leads and is active"
    );
    assert_eq!(m.core().kraft_version(), 0);
    (m, store, now_ms)
}

fn update_features(
    m: &mut NodeMachine,
    store: &mut SimStore,
    now_ms: u64,
    validate_only: bool,
) -> i16 {
    let req = UpdateFeaturesRequest::default()
        .with_validate_only(validate_only)
        .with_feature_updates(vec![FeatureUpdateKey::default()
            .with_feature(StrBytes::from_static_str("kraft.version"))
            .with_max_version_level(1)
            .with_upgrade_type(1)]);
    m.handle_request(
        now_ms,
        store,
        InboundRequest {
            request_id: 77,
            api_version: 1,
            listener_name: LISTENER.into(),
            forwarded: false,
            sender: Some(crate::raft::Sender::anonymous_local()),
            forwarded_by: None,
            body: RequestBody::UpdateFeatures(req),
        },
    )
    .unwrap();
    m.poll(now_ms, store).unwrap();
    let mut answer = None;
    while let Some(out) = m.poll_output() {
        if let NodeOutput::Respond {
            request_id: 77,
            body,
        } = out
        {
            answer = Some(body);
        }
    }
    match answer {
        Some(ResponseBody::UpdateFeatures(r)) => r.error_code,
        other => panic!("no UpdateFeatures answer: {other:?}"),
    }
}

/// The control records of every KRaftVersion-carrying batch in the log.
fn kraft_version_batches(store: &SimStore) -> Vec<Vec<ControlRecord>> {
    store
        .log
        .batches()
        .iter()
        .filter_map(|(_, _, bytes)| {
            let view = BatchView::new(bytes).ok()?;
            let records = view.control_records().ok()?;
            matches!(records.first(), Some(ControlRecord::KRaftVersion(_))).then_some(records)
        })
        .collect()
}

#[test]
fn update_features_upgrades_kraft_version_through_the_raft_core() {
    let (mut m, mut store, now_ms) = lone_static_voter();
    assert_eq!(update_features(&mut m, &mut store, now_ms, true), 0);
    assert!(
        kraft_version_batches(&store).is_empty(),
        "validate only: no upgrade written"
    );
    assert_eq!(m.core().kraft_version(), 0);
    assert_eq!(update_features(&mut m, &mut store, now_ms, false), 0);
    assert_eq!(m.core().kraft_version(), 1);
    assert_eq!(m.core().voters().get(1).unwrap().key.directory_id, DIR);
    // KRaftVersion + Voters as one control batch, committed before the answer.
    let batches = kraft_version_batches(&store);
    assert_eq!(batches.len(), 1);
    assert_eq!(batches[0][0], ControlRecord::kraft_version(1));
    assert!(
        matches!(batches[0][1], ControlRecord::Voters(_)),
        "{batches:?}"
    );
    let end = store.log.end_offset().offset;
    assert_eq!(
        m.core().high_watermark(),
        Some(end),
        "committed, then answered"
    );
}
