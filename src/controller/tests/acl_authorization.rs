//! The ControllerApis authorization checks the ACLs drive, API by API (CreateTopics per topic,
//! DeleteTopics and CreatePartitions per topic, the config APIs per resource, the broker RPCs'
//! CLUSTER_ACTION, a forwarding broker's own permission); the ACL APIs themselves are in
//! `acls.rs`, whose helpers these use.
#![allow(clippy::unwrap_used)]

use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::{
    BrokerHeartbeatRequest, CreateTopicsRequest, DeleteTopicsRequest, TopicName,
};

use crate::codec::{RequestBody, ResponseBody};
use crate::controller::authorization::{CLUSTER_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED};
use crate::metadata::acl::{
    AclOperation as Op, AclPermissionType as Perm, PatternType as Pat, ResourceType as Res,
};
use crate::raft::Sender;

use super::acls::{binding, create, creation, s, with_authorizer};
use super::context::Ctx;

fn topic(name: &str) -> CreatableTopic {
    CreatableTopic::default()
        .with_name(TopicName(s(name)))
        .with_num_partitions(1)
        .with_replication_factor(-1)
}

#[test]
fn create_topics_refuses_the_topics_the_sender_may_not_create() {
    let mut ctx = with_authorizer("User:ANONYMOUS");
    ctx.register_unfenced(0, None);
    create(
        &mut ctx,
        vec![
            creation(&binding(
                Res::Topic,
                "t",
                Pat::Literal,
                "User:alice",
                Op::Create,
                Perm::Allow,
            )),
            creation(&binding(
                Res::Topic,
                "d",
                Pat::Literal,
                "User:alice",
                Op::Create,
                Perm::Allow,
            )),
            creation(&binding(
                Res::Topic,
                "d",
                Pat::Literal,
                "User:alice",
                Op::DescribeConfigs,
                Perm::Allow,
            )),
        ],
    );
    ctx.sender.principal = "User:alice".to_string();
    let req = CreateTopicsRequest::default().with_topics(vec![topic("t"), topic("u"), topic("d")]);
    let r = match ctx.call(RequestBody::CreateTopics(req), 7) {
        ResponseBody::CreateTopics(r) => r,
        other => panic!("{other:?}"),
    };
    let outcome: Vec<(String, i16, i16, Option<usize>)> = r
        .topics
        .iter()
        .map(|t| {
            (
                t.name.to_string(),
                t.error_code,
                t.topic_config_error_code,
                t.configs.as_ref().map(Vec::len),
            )
        })
        .collect();
    // t: created, configs withheld (no DESCRIBE_CONFIGS); d: created with its configs; u:
    // refused, after the others.
    assert_eq!(outcome[0].0, "t");
    assert_eq!(
        (outcome[0].1, outcome[0].2, outcome[0].3),
        (0, TOPIC_AUTHORIZATION_FAILED, Some(0))
    );
    assert_eq!(r.topics[0].num_partitions, -1);
    assert_eq!(outcome[1].0, "d");
    assert_eq!((outcome[1].1, outcome[1].2), (0, 0));
    assert!(outcome[1].3.is_some_and(|n| n > 0));
    assert_eq!(
        outcome[2],
        ("u".to_string(), TOPIC_AUTHORIZATION_FAILED, 0, Some(0))
    );
    assert_eq!(
        r.topics[2].error_message.as_deref(),
        Some("Authorization failed.")
    );
    let names: Vec<String> = ctx
        .image()
        .topics
        .values()
        .map(|t| t.name.clone())
        .collect();
    assert!(names.contains(&"t".to_string()) && names.contains(&"d".to_string()));
    assert!(!names.contains(&"u".to_string()));
}

#[test]
fn broker_rpcs_need_cluster_action() {
    let mut ctx = with_authorizer("User:broker");
    ctx.sender.principal = "User:mallory".to_string();
    let req = BrokerHeartbeatRequest::default()
        .with_broker_id(kafka_protocol::messages::BrokerId(0))
        .with_broker_epoch(1);
    match ctx.call(RequestBody::BrokerHeartbeat(req), 1) {
        ResponseBody::BrokerHeartbeat(r) => assert_eq!(r.error_code, CLUSTER_AUTHORIZATION_FAILED),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_forwarding_broker_needs_cluster_action_itself() {
    let mut ctx = with_authorizer("User:admin");
    ctx.forwarded = true;
    ctx.sender.principal = "User:admin".to_string();
    ctx.forwarded_by = Some(Sender {
        principal: "User:rogue-broker".to_string(),
        host: "10.0.0.9".to_string(),
        ..Sender::anonymous_local()
    });
    let req = DeleteTopicsRequest::default().with_topic_names(vec![TopicName(s("t"))]);
    match ctx.call(RequestBody::DeleteTopics(req), 6) {
        ResponseBody::Envelope(r) => assert_eq!(r.error_code, CLUSTER_AUTHORIZATION_FAILED),
        other => panic!("{other:?}"),
    }
}

/// ACLs for alice, written by the super user ANONYMOUS; topics a and b (one partition each)
/// created by it; then alice sends.
fn alice_with(acls: &[(&str, Op)]) -> Ctx {
    let mut ctx = with_authorizer("User:ANONYMOUS");
    ctx.register_unfenced(0, None);
    let creations = acls
        .iter()
        .map(|(t, op)| {
            creation(&binding(
                Res::Topic,
                t,
                Pat::Literal,
                "User:alice",
                *op,
                Perm::Allow,
            ))
        })
        .collect();
    create(&mut ctx, creations);
    for t in ["a", "b"] {
        assert_eq!(ctx.create_topic(t, 1, 1).topics[0].error_code, 0);
    }
    ctx.sender.principal = "User:alice".to_string();
    ctx
}

#[test]
fn delete_topics_checks_each_topic_as_controller_apis_does() {
    use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
    // alice may delete a, and only see b.
    let mut ctx = alice_with(&[("a", Op::Delete), ("b", Op::Describe)]);
    let b_id = ctx.image().topic_ids["b"];
    let req = DeleteTopicsRequest::default().with_topics(vec![
        DeleteTopicState::default().with_name(Some(TopicName(s("a")))),
        DeleteTopicState::default().with_name(Some(TopicName(s("b")))),
        DeleteTopicState::default().with_name(Some(TopicName(s("nope")))),
    ]);
    let r = match ctx.call(RequestBody::DeleteTopics(req), 6) {
        ResponseBody::DeleteTopics(r) => r,
        other => panic!("{other:?}"),
    };
    let mut outcome: Vec<(String, i16)> = r
        .responses
        .iter()
        .map(|t| (t.name.as_ref().unwrap().to_string(), t.error_code))
        .collect();
    outcome.sort();
    // b is seen but not deletable; an unknown topic is refused as unseen, not as unknown.
    assert_eq!(
        outcome,
        [
            ("a".to_string(), 0),
            ("b".to_string(), TOPIC_AUTHORIZATION_FAILED),
            ("nope".to_string(), TOPIC_AUTHORIZATION_FAILED)
        ]
    );
    assert!(r
        .responses
        .iter()
        .all(|t| t.error_code == 0
            || t.error_message.as_deref() == Some("Topic authorization failed.")));
    assert!(ctx.image().topic_by_name("a").is_none());
    assert!(ctx.image().topic_by_name("b").is_some());

    // By id: b's name is shown (alice may describe it); without DESCRIBE it would not be.
    let by_id = DeleteTopicsRequest::default()
        .with_topics(vec![DeleteTopicState::default().with_topic_id(b_id)]);
    let r = match ctx.call(RequestBody::DeleteTopics(by_id), 6) {
        ResponseBody::DeleteTopics(r) => r,
        other => panic!("{other:?}"),
    };
    assert_eq!(r.responses[0].error_code, TOPIC_AUTHORIZATION_FAILED);
    assert_eq!(
        r.responses[0].name.as_ref().map(|n| n.to_string()),
        Some("b".into())
    );
    let mut ctx = alice_with(&[]);
    let b_id = ctx.image().topic_ids["b"];
    let by_id = DeleteTopicsRequest::default()
        .with_topics(vec![DeleteTopicState::default().with_topic_id(b_id)]);
    let r = match ctx.call(RequestBody::DeleteTopics(by_id), 6) {
        ResponseBody::DeleteTopics(r) => r,
        other => panic!("{other:?}"),
    };
    assert_eq!(r.responses[0].error_code, TOPIC_AUTHORIZATION_FAILED);
    assert_eq!(
        r.responses[0].name, None,
        "an unseen topic's name is not told"
    );
}

#[test]
fn create_partitions_checks_alter_on_each_topic() {
    use kafka_protocol::messages::create_partitions_request::CreatePartitionsTopic;
    use kafka_protocol::messages::CreatePartitionsRequest;
    let mut ctx = alice_with(&[("a", Op::Alter)]);
    let grow = |n: &str| {
        CreatePartitionsTopic::default()
            .with_name(TopicName(s(n)))
            .with_count(2)
            .with_assignments(None)
    };
    let req = CreatePartitionsRequest::default().with_topics(vec![grow("a"), grow("b")]);
    let r = match ctx.call(RequestBody::CreatePartitions(req), 3) {
        ResponseBody::CreatePartitions(r) => r,
        other => panic!("{other:?}"),
    };
    let outcome: Vec<(String, i16, Option<String>)> = r
        .results
        .iter()
        .map(|t| {
            (
                t.name.to_string(),
                t.error_code,
                t.error_message.as_ref().map(|m| m.to_string()),
            )
        })
        .collect();
    // The refused topic first (ControllerApis answers it before the controller), code alone.
    assert_eq!(
        outcome,
        [
            ("b".to_string(), TOPIC_AUTHORIZATION_FAILED, None),
            ("a".to_string(), 0, None)
        ]
    );
    assert_eq!(ctx.image().topic_by_name("a").unwrap().partitions.len(), 2);
    assert_eq!(ctx.image().topic_by_name("b").unwrap().partitions.len(), 1);
}

#[test]
fn config_requests_check_each_resource() {
    use kafka_protocol::messages::describe_configs_request::DescribeConfigsResource;
    use kafka_protocol::messages::incremental_alter_configs_request::{
        AlterConfigsResource, AlterableConfig,
    };
    use kafka_protocol::messages::{DescribeConfigsRequest, IncrementalAlterConfigsRequest};
    let mut ctx = alice_with(&[("a", Op::AlterConfigs)]);
    let alter = |n: &str| {
        AlterConfigsResource::default()
            .with_resource_type(2)
            .with_resource_name(s(n))
            .with_configs(vec![AlterableConfig::default()
                .with_name(s("retention.ms"))
                .with_config_operation(0)
                .with_value(Some(s("1000")))])
    };
    let req =
        IncrementalAlterConfigsRequest::default().with_resources(vec![alter("a"), alter("b")]);
    let r = match ctx.call(RequestBody::IncrementalAlterConfigs(req), 1) {
        ResponseBody::IncrementalAlterConfigs(r) => r,
        other => panic!("{other:?}"),
    };
    let outcome: Vec<(String, i16)> = r
        .responses
        .iter()
        .map(|t| (t.resource_name.to_string(), t.error_code))
        .collect();
    assert_eq!(
        outcome,
        [
            ("b".to_string(), TOPIC_AUTHORIZATION_FAILED),
            ("a".to_string(), 0)
        ]
    );
    assert_eq!(
        r.responses[0].error_message.as_deref(),
        Some("Topic authorization failed.")
    );
    let configs = |n: &str| {
        let key = crate::metadata::image::ConfigResource {
            resource_type: 2,
            resource_name: n.to_string(),
        };
        ctx.image().configs.get(&key).cloned().unwrap_or_default()
    };
    assert_eq!(
        configs("a").get("retention.ms").map(String::as_str),
        Some("1000")
    );
    assert!(configs("b").is_empty());

    // DescribeConfigs: DESCRIBE_CONFIGS is implied by ALTER_CONFIGS on a; b answered last.
    let describe = |n: &str| {
        DescribeConfigsResource::default()
            .with_resource_type(2)
            .with_resource_name(s(n))
            .with_configuration_keys(None)
    };
    let req = DescribeConfigsRequest::default().with_resources(vec![describe("b"), describe("a")]);
    let r = match ctx.call(RequestBody::DescribeConfigs(req), 4) {
        ResponseBody::DescribeConfigs(r) => r,
        other => panic!("{other:?}"),
    };
    let outcome: Vec<(String, i16, usize)> = r
        .results
        .iter()
        .map(|t| (t.resource_name.to_string(), t.error_code, t.configs.len()))
        .collect();
    assert_eq!(outcome[0].0, "a");
    assert_eq!(outcome[0].1, 0);
    assert!(outcome[0].2 > 0);
    assert_eq!(outcome[1], ("b".to_string(), TOPIC_AUTHORIZATION_FAILED, 0));
}
