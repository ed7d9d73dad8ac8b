//! Controller mutation quotas, after Kafka's ControllerMutationQuotaTest (its core request
//! tests: 2 partitions/s, 10 samples of 1 s, so a bucket of 20 partitions) and the quota
//! resolution of ClientQuotaManagerTest, against the whole controller.
#![allow(clippy::unwrap_used)]

use kafka_protocol::messages::alter_client_quotas_request::{EntityData, EntryData, OpData};
use kafka_protocol::messages::create_partitions_request::CreatePartitionsTopic;
use kafka_protocol::messages::{
    AlterClientQuotasRequest, CreatePartitionsRequest, CreateTopicsRequest, DeleteTopicsRequest,
    TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::context::{topic, Ctx, CLUSTER_ID};
use crate::codec::{RequestBody, ResponseBody};
use crate::controller::errors::{self, THROTTLING_QUOTA_EXCEEDED};
use crate::controller::mutation_quotas::MutationQuotaConfig;
use crate::controller::ControllerConfig;
use crate::raft::Sender;

const MV: i16 = crate::common::release::mv::V4_1_IV1;
const RATE: f64 = 2.0;

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

/// Sets (`Some`) or removes a controller_mutation_rate quota of an entity.
fn set_quota(ctx: &mut Ctx, entity: &[(&str, Option<&str>)], rate: Option<f64>) {
    let entry = EntryData::default()
        .with_entity(
            entity
                .iter()
                .map(|(t, n)| {
                    EntityData::default()
                        .with_entity_type(s(t))
                        .with_entity_name(n.map(s))
                })
                .collect(),
        )
        .with_ops(vec![OpData::default()
            .with_key(s("controller_mutation_rate"))
            .with_value(rate.unwrap_or(0.0))
            .with_remove(rate.is_none())]);
    let req = AlterClientQuotasRequest::default().with_entries(vec![entry]);
    match ctx.call(RequestBody::AlterClientQuotas(req), 1) {
        ResponseBody::AlterClientQuotas(r) => assert_eq!(r.entries[0].error_code, 0),
        other => panic!("{other:?}"),
    }
}

fn as_user(ctx: &mut Ctx, user: &str, client_id: &str) {
    ctx.sender = Sender {
        principal: format!("User:{user}"),
        client_id: client_id.to_string(),
        ..Sender::anonymous_local()
    };
}

/// Three brokers, the quota of ControllerMutationQuotaTest on ThrottledPrincipal.
fn setup() -> Ctx {
    let mut cfg = ControllerConfig::new(1, CLUSTER_ID);
    cfg.rng_seed = 42;
    cfg.mutation_quota = MutationQuotaConfig {
        window_num: 10,
        window_size_seconds: 1,
    };
    let mut ctx = Ctx::with_config(cfg, MV);
    for id in 0..3 {
        ctx.register_unfenced(id, None);
    }
    set_quota(
        &mut ctx,
        &[("user", Some("ThrottledPrincipal"))],
        Some(RATE),
    );
    ctx
}

/// (throttle time, [(topic, error)]) of a CreateTopics at `version`.
fn create(ctx: &mut Ctx, topics: &[(&str, i32)], version: i16) -> (i32, Vec<(String, i16)>) {
    let req = CreateTopicsRequest::default()
        .with_topics(topics.iter().map(|(n, p)| topic(n, *p, 1)).collect());
    match ctx.call(RequestBody::CreateTopics(req), version) {
        ResponseBody::CreateTopics(r) => (
            r.throttle_time_ms,
            r.topics
                .iter()
                .map(|t| (t.name.to_string(), t.error_code))
                .collect(),
        ),
        other => panic!("{other:?}"),
    }
}

fn delete(ctx: &mut Ctx, topics: &[&str], version: i16) -> (i32, Vec<(String, i16)>) {
    let req = DeleteTopicsRequest::default()
        .with_topic_names(topics.iter().map(|n| TopicName(s(n))).collect());
    match ctx.call(RequestBody::DeleteTopics(req), version) {
        ResponseBody::DeleteTopics(r) => (
            r.throttle_time_ms,
            r.responses
                .iter()
                .map(|t| (t.name.as_ref().unwrap().to_string(), t.error_code))
                .collect(),
        ),
        other => panic!("{other:?}"),
    }
}

fn grow(ctx: &mut Ctx, topics: &[(&str, i32)], version: i16) -> (i32, Vec<(String, i16)>) {
    let req = CreatePartitionsRequest::default().with_topics(
        topics
            .iter()
            .map(|(n, c)| {
                CreatePartitionsTopic::default()
                    .with_name(TopicName(s(n)))
                    .with_count(*c)
                    .with_assignments(None)
            })
            .collect(),
    );
    match ctx.call(RequestBody::CreatePartitions(req), version) {
        ResponseBody::CreatePartitions(r) => (
            r.throttle_time_ms,
            r.results
                .iter()
                .map(|t| (t.name.to_string(), t.error_code))
                .collect(),
        ),
        other => panic!("{other:?}"),
    }
}

fn codes(results: &[(String, i16)]) -> Vec<i16> {
    let mut c: Vec<i16> = results.iter().map(|r| r.1).collect();
    c.sort();
    c
}

fn rejected(results: &[(String, i16)]) -> String {
    results
        .iter()
        .find(|r| r.1 == THROTTLING_QUOTA_EXCEEDED)
        .unwrap()
        .0
        .clone()
}

const THIRTY: &[(&str, i32)] = &[("topic-1", 30), ("topic-2", 30)];

#[test]
fn test_strict_create_topics_request() {
    let mut ctx = setup();
    as_user(&mut ctx, "ThrottledPrincipal", "client");
    // 20 tokens: the first topic's 30 partitions go through (-10), the second is refused;
    // -(-10) / 2 = 5 s to wait.
    let (throttle, results) = create(&mut ctx, THIRTY, 7);
    assert_eq!(throttle, 5000);
    assert_eq!(
        codes(&results),
        vec![errors::NONE, THROTTLING_QUOTA_EXCEEDED]
    );
    let name = rejected(&results);
    assert!(ctx.image().topic_by_name(&name).is_none());
    // Still throttled 4 s later; at 5 s the bucket is back to zero and the retry passes.
    ctx.advance(4000);
    let (throttle, results) = create(&mut ctx, &[(&name, 30)], 7);
    assert_eq!(throttle, 1000);
    assert_eq!(results[0].1, THROTTLING_QUOTA_EXCEEDED);
    ctx.advance(1000);
    let (throttle, results) = create(&mut ctx, &[(&name, 30)], 7);
    assert_eq!((throttle, results[0].1), (0, errors::NONE));
}

#[test]
fn test_permissive_create_topics_request() {
    let mut ctx = setup();
    as_user(&mut ctx, "ThrottledPrincipal", "client");
    // v5 is permissive: both pass, the bucket goes to -40: 20 s.
    let (throttle, results) = create(&mut ctx, THIRTY, 5);
    assert_eq!(throttle, 20_000);
    assert_eq!(codes(&results), vec![errors::NONE, errors::NONE]);
}

#[test]
fn test_unbounded_create_topics_request() {
    let mut ctx = setup();
    as_user(&mut ctx, "UnboundedPrincipal", "client");
    let (throttle, results) = create(&mut ctx, THIRTY, 7);
    assert_eq!(throttle, 0);
    assert_eq!(codes(&results), vec![errors::NONE, errors::NONE]);
}

#[test]
fn test_strict_delete_topics_request() {
    let mut ctx = setup();
    as_user(&mut ctx, "UnboundedPrincipal", "client");
    create(&mut ctx, THIRTY, 7);
    as_user(&mut ctx, "ThrottledPrincipal", "client");
    let (throttle, results) = delete(&mut ctx, &["topic-1", "topic-2"], 6);
    assert_eq!(throttle, 5000);
    assert_eq!(
        codes(&results),
        vec![errors::NONE, THROTTLING_QUOTA_EXCEEDED]
    );
    let name = rejected(&results);
    assert!(ctx.image().topic_by_name(&name).is_some());
    ctx.advance(5000);
    let (throttle, results) = delete(&mut ctx, &[&name], 6);
    assert_eq!((throttle, results[0].1), (0, errors::NONE));
    assert!(ctx.image().topic_by_name(&name).is_none());
}

#[test]
fn test_permissive_delete_topics_request() {
    let mut ctx = setup();
    as_user(&mut ctx, "UnboundedPrincipal", "client");
    create(&mut ctx, THIRTY, 7);
    as_user(&mut ctx, "ThrottledPrincipal", "client");
    let (throttle, results) = delete(&mut ctx, &["topic-1", "topic-2"], 4);
    assert_eq!(throttle, 20_000);
    assert_eq!(codes(&results), vec![errors::NONE, errors::NONE]);
}

#[test]
fn test_strict_and_permissive_create_partitions_request() {
    let mut ctx = setup();
    as_user(&mut ctx, "UnboundedPrincipal", "client");
    create(&mut ctx, &[("topic-1", 1), ("topic-2", 1)], 7);
    as_user(&mut ctx, "ThrottledPrincipal", "client");
    let (throttle, results) = grow(&mut ctx, &[("topic-1", 31), ("topic-2", 31)], 3);
    assert_eq!(throttle, 5000);
    assert_eq!(
        codes(&results),
        vec![errors::NONE, THROTTLING_QUOTA_EXCEEDED]
    );
    let name = rejected(&results);
    assert_eq!(
        ctx.image().topic_by_name(&name).unwrap().partitions.len(),
        1
    );

    // Permissive (v2) on the same bucket, still 10 tokens short: the partition is added and
    // the debt grows to 11 (5.5 s).
    let (throttle, results) = grow(&mut ctx, &[(&name, 2)], 2);
    assert_eq!(results[0].1, errors::NONE);
    assert_eq!(throttle, 5500);
}

#[test]
fn test_set_unset_quota_and_entity_precedence() {
    let mut ctx = setup();
    // A user-and-client quota takes precedence over the user's own for that client.
    set_quota(
        &mut ctx,
        &[
            ("user", Some("ThrottledPrincipal")),
            ("client-id", Some("fast")),
        ],
        Some(100.0),
    );
    as_user(&mut ctx, "ThrottledPrincipal", "fast");
    let (throttle, results) = create(&mut ctx, THIRTY, 7);
    assert_eq!((throttle, codes(&results)), (0, vec![0, 0]));
    // Another client of the same user falls back to the user quota (2/s, 20 tokens): a
    // strict request within the quota passes whole, the next waits for the debt of 5.
    as_user(&mut ctx, "ThrottledPrincipal", "slow");
    assert_eq!(create(&mut ctx, &[("a", 25)], 7).0, 0);
    let (throttle, results) = create(&mut ctx, &[("a2", 1)], 7);
    assert_eq!((throttle, results[0].1), (2500, THROTTLING_QUOTA_EXCEEDED));
    // The default user's quota covers users without their own (1/s, 10 tokens).
    set_quota(&mut ctx, &[("user", None)], Some(1.0));
    as_user(&mut ctx, "someone", "any");
    assert_eq!(create(&mut ctx, &[("b", 12)], 7).0, 0);
    let (throttle, results) = create(&mut ctx, &[("b2", 1)], 7);
    assert_eq!((throttle, results[0].1), (2000, THROTTLING_QUOTA_EXCEEDED));
    // Removing every controller_mutation_rate quota: unbounded for all.
    set_quota(&mut ctx, &[("user", None)], None);
    set_quota(&mut ctx, &[("user", Some("ThrottledPrincipal"))], None);
    set_quota(
        &mut ctx,
        &[
            ("user", Some("ThrottledPrincipal")),
            ("client-id", Some("fast")),
        ],
        None,
    );
    as_user(&mut ctx, "ThrottledPrincipal", "slow");
    let (throttle, results) = create(&mut ctx, &[("c", 100)], 7);
    assert_eq!((throttle, results[0].1), (0, errors::NONE));
}

#[test]
fn a_client_id_quota_keys_the_bucket_by_client_id() {
    let mut ctx = setup();
    set_quota(&mut ctx, &[("user", Some("ThrottledPrincipal"))], None);
    set_quota(&mut ctx, &[("client-id", Some("shared"))], Some(1.0));
    // Two users of one client id share its bucket of 10.
    as_user(&mut ctx, "u1", "shared");
    assert_eq!(create(&mut ctx, &[("x", 10)], 7).0, 0);
    as_user(&mut ctx, "u2", "shared");
    let (throttle, results) = create(&mut ctx, &[("y", 1)], 7);
    assert_eq!(
        (throttle, results[0].1),
        (0, errors::NONE),
        "tokens at 0 still pass"
    );
    let (throttle, results) = create(&mut ctx, &[("z", 1)], 7);
    assert_eq!((throttle, results[0].1), (1000, THROTTLING_QUOTA_EXCEEDED));
}

#[test]
fn a_quota_on_validate_only_is_spent_too() {
    // Kafka's ReplicationControlManager charges the quota before it drops a validate_only
    // request's records.
    let mut ctx = setup();
    as_user(&mut ctx, "ThrottledPrincipal", "client");
    let req = CreateTopicsRequest::default()
        .with_topics(vec![topic("v", 30, 1)])
        .with_validate_only(true);
    match ctx.call(RequestBody::CreateTopics(req), 7) {
        ResponseBody::CreateTopics(r) => assert_eq!(r.throttle_time_ms, 0),
        other => panic!("{other:?}"),
    }
    let (throttle, results) = create(&mut ctx, &[("w", 1)], 7);
    assert_eq!((throttle, results[0].1), (5000, THROTTLING_QUOTA_EXCEEDED));
}
