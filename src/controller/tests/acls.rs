//! AclControlManagerTest (Kafka's tests of the controller's ACL manager) through the
//! controller's Create/Delete/DescribeAcls, and the ControllerApis authorization checks those
//! ACLs drive.
#![allow(clippy::unwrap_used)]

use kafka_protocol::messages::create_acls_request::AclCreation;
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::delete_acls_request::DeleteAclsFilter;
use kafka_protocol::messages::{
    BrokerHeartbeatRequest, CreateAclsRequest, CreateTopicsRequest, DeleteAclsRequest,
    DeleteAclsResponse, DeleteTopicsRequest, DescribeAclsRequest, DescribeAclsResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::context::Ctx;
use crate::codec::{RequestBody, ResponseBody};
use crate::controller::acls::SECURITY_DISABLED;
use crate::controller::authorization::{CLUSTER_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED};
use crate::controller::{errors, ControllerConfig};
use crate::metadata::acl::{
    AclBinding, AclOperation as Op, AclPermissionType as Perm, PatternType as Pat,
    ResourceType as Res,
};
use crate::metadata::authorizer::AuthorizerConfig;
use crate::raft::Sender;

const MV: i16 = crate::common::release::mv::V4_1_IV1;

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

/// An active controller with the StandardAuthorizer on, `super_users` super users.
fn with_authorizer(super_users: &str) -> Ctx {
    let mut cfg = ControllerConfig::new(1, super::context::CLUSTER_ID);
    cfg.rng_seed = 42;
    cfg.authorizer = Some(AuthorizerConfig::parse(Some(super_users), None).unwrap());
    Ctx::with_config(cfg, MV)
}

fn binding(rt: Res, name: &str, pat: Pat, principal: &str, op: Op, perm: Perm) -> AclBinding {
    AclBinding {
        resource_type: rt,
        resource_name: name.to_string(),
        pattern_type: pat,
        principal: principal.to_string(),
        host: "*".to_string(),
        operation: op,
        permission_type: perm,
    }
}

/// Kafka's StandardAclTest.TEST_ACLS.
fn test_acls() -> Vec<AclBinding> {
    vec![
        binding(
            Res::Cluster,
            "kafka-cluster",
            Pat::Literal,
            "User:*",
            Op::Alter,
            Perm::Allow,
        ),
        binding(
            Res::Topic,
            "foo_",
            Pat::Prefixed,
            "User:*",
            Op::Read,
            Perm::Allow,
        ),
        binding(
            Res::Group,
            "mygroup",
            Pat::Literal,
            "User:foo",
            Op::Read,
            Perm::Deny,
        ),
        binding(
            Res::Group,
            "mygroup",
            Pat::Prefixed,
            "User:foo",
            Op::Read,
            Perm::Deny,
        ),
        binding(
            Res::Group,
            "foo",
            Pat::Prefixed,
            "User:foo",
            Op::Read,
            Perm::Deny,
        ),
    ]
}

fn creation(b: &AclBinding) -> AclCreation {
    AclCreation::default()
        .with_resource_type(b.resource_type.code())
        .with_resource_name(s(&b.resource_name))
        .with_resource_pattern_type(b.pattern_type.code())
        .with_principal(s(&b.principal))
        .with_host(s(&b.host))
        .with_operation(b.operation.code())
        .with_permission_type(b.permission_type.code())
}

/// (error code, message) per creation.
fn create(ctx: &mut Ctx, creations: Vec<AclCreation>) -> Vec<(i16, Option<String>)> {
    let req = CreateAclsRequest::default().with_creations(creations);
    match ctx.call(RequestBody::CreateAcls(req), 3) {
        ResponseBody::CreateAcls(r) => r
            .results
            .iter()
            .map(|x| {
                (
                    x.error_code,
                    x.error_message.as_ref().map(|m| m.to_string()),
                )
            })
            .collect(),
        other => panic!("{other:?}"),
    }
}

fn any_filter() -> DeleteAclsFilter {
    DeleteAclsFilter::default()
        .with_resource_name_filter(None)
        .with_principal_filter(None)
        .with_host_filter(None)
        .with_resource_type_filter(Res::Any.code())
        .with_pattern_type_filter(Pat::Any.code())
        .with_operation(Op::Any.code())
        .with_permission_type(Perm::Any.code())
}

fn filter_of(b: &AclBinding) -> DeleteAclsFilter {
    DeleteAclsFilter::default()
        .with_resource_type_filter(b.resource_type.code())
        .with_resource_name_filter(Some(s(&b.resource_name)))
        .with_pattern_type_filter(b.pattern_type.code())
        .with_principal_filter(Some(s(&b.principal)))
        .with_host_filter(Some(s(&b.host)))
        .with_operation(b.operation.code())
        .with_permission_type(b.permission_type.code())
}

fn delete(ctx: &mut Ctx, filters: Vec<DeleteAclsFilter>) -> DeleteAclsResponse {
    match ctx.call(
        RequestBody::DeleteAcls(DeleteAclsRequest::default().with_filters(filters)),
        3,
    ) {
        ResponseBody::DeleteAcls(r) => r,
        other => panic!("{other:?}"),
    }
}

fn describe_all(ctx: &mut Ctx) -> DescribeAclsResponse {
    let req = DescribeAclsRequest::default()
        .with_resource_name_filter(None)
        .with_principal_filter(None)
        .with_host_filter(None)
        .with_resource_type_filter(Res::Any.code())
        .with_pattern_type_filter(Pat::Any.code())
        .with_operation(Op::Any.code())
        .with_permission_type(Perm::Any.code());
    match ctx.call(RequestBody::DescribeAcls(req), 3) {
        ResponseBody::DescribeAcls(r) => r,
        other => panic!("{other:?}"),
    }
}

/// The image's ACLs as bindings, sorted.
fn stored(ctx: &Ctx) -> Vec<AclBinding> {
    let mut out: Vec<AclBinding> = ctx
        .image()
        .acls
        .values()
        .map(AclBinding::from_record)
        .collect();
    out.sort();
    out
}

#[test]
fn test_validate_new_acl() {
    let mut ctx = with_authorizer("User:ANONYMOUS");
    let ok = binding(
        Res::Topic,
        "*",
        Pat::Literal,
        "User:*",
        Op::Alter,
        Perm::Allow,
    );
    // Codes Kafka does not know become UNKNOWN (raw 0 fails the request's parse instead).
    let mut bad_pattern = creation(&ok);
    bad_pattern.resource_pattern_type = 99;
    let mut bad_resource = creation(&ok);
    bad_resource.resource_type = 99;
    let mut bad_operation = creation(&ok);
    bad_operation.operation = 99;
    let mut bad_permission = creation(&ok);
    bad_permission.permission_type = 99;
    let invalid = |m: &str| (errors::INVALID_REQUEST, Some(m.to_string()));
    assert_eq!(
        create(
            &mut ctx,
            vec![
                creation(&ok),
                bad_pattern,
                bad_resource,
                bad_operation,
                bad_permission
            ]
        ),
        vec![
            (errors::NONE, Some(String::new())),
            invalid("Invalid patternType UNKNOWN"),
            invalid("Invalid resourceType UNKNOWN"),
            invalid("Invalid operation UNKNOWN"),
            invalid("Invalid permissionType UNKNOWN"),
        ]
    );
    assert_eq!(stored(&ctx), vec![ok]);
}

/// Kafka 4.1's `validateNewAcl` ends with the principal: without a colon between type and
/// name it is refused (`alice`), with one it is stored whatever the type.
#[test]
fn a_principal_without_a_type_is_refused() {
    let mut ctx = with_authorizer("User:ANONYMOUS");
    let acl = |principal: &str| {
        binding(
            Res::Topic,
            "t",
            Pat::Literal,
            principal,
            Op::Read,
            Perm::Allow,
        )
    };
    assert_eq!(
        create(&mut ctx, vec![creation(&acl("alice")), creation(&acl("Group:ops"))]),
        vec![
            (
                errors::INVALID_REQUEST,
                Some(
                    "Could not parse principal from `alice` (no colon is present separating the principal type from the principal name)"
                        .to_string()
                )
            ),
            (errors::NONE, Some(String::new())),
        ]
    );
    assert_eq!(stored(&ctx), vec![acl("Group:ops")]);
}

#[test]
fn acl_apis_checks_come_before_the_manager() {
    let mut ctx = with_authorizer("User:ANONYMOUS");
    let cluster = binding(
        Res::Cluster,
        "other",
        Pat::Literal,
        "User:*",
        Op::Alter,
        Perm::Allow,
    );
    let empty = binding(
        Res::Topic,
        "",
        Pat::Literal,
        "User:*",
        Op::Alter,
        Perm::Allow,
    );
    assert_eq!(
        create(&mut ctx, vec![creation(&cluster), creation(&empty)]),
        vec![
            (
                errors::INVALID_REQUEST,
                Some("The only valid name for the CLUSTER resource is kafka-cluster".to_string())
            ),
            (
                errors::INVALID_REQUEST,
                Some("Invalid empty resource name".to_string())
            ),
        ]
    );
    // An ANY in a creation makes Kafka's binding constructor throw: the whole request fails.
    let any = binding(Res::Topic, "t", Pat::Any, "User:*", Op::Alter, Perm::Allow);
    let ok = binding(
        Res::Topic,
        "t",
        Pat::Literal,
        "User:*",
        Op::Alter,
        Perm::Allow,
    );
    assert_eq!(
        create(&mut ctx, vec![creation(&ok), creation(&any)]),
        vec![(errors::UNKNOWN_SERVER_ERROR, None); 2]
    );
    assert!(stored(&ctx).is_empty());
}

#[test]
fn test_validate_filter() {
    let mut ctx = with_authorizer("User:ANONYMOUS");
    let mut unknown_pattern = any_filter().with_pattern_type_filter(99);
    unknown_pattern.resource_name_filter = Some(s("*"));
    let unknown_entry = any_filter()
        .with_pattern_type_filter(Pat::Match.code())
        .with_permission_type(99);
    let r = delete(&mut ctx, vec![any_filter(), unknown_pattern, unknown_entry]);
    let outcomes: Vec<(i16, Option<String>)> = r
        .filter_results
        .iter()
        .map(|f| {
            (
                f.error_code,
                f.error_message.as_ref().map(|m| m.to_string()),
            )
        })
        .collect();
    assert_eq!(
        outcomes,
        vec![
            (errors::NONE, None),
            (
                errors::INVALID_REQUEST,
                Some("Unknown patternFilter.".to_string())
            ),
            (
                errors::INVALID_REQUEST,
                Some("Unknown entryFilter.".to_string())
            ),
        ]
    );
}

#[test]
fn test_create_acl_delete_acl() {
    let mut ctx = with_authorizer("User:ANONYMOUS");
    let acls = test_acls();
    let mut creations: Vec<AclCreation> = acls[..3].iter().map(creation).collect();
    let mut unknown = creation(&binding(
        Res::Topic,
        "*",
        Pat::Literal,
        "User:*",
        Op::Alter,
        Perm::Allow,
    ));
    unknown.resource_pattern_type = 99;
    creations.push(unknown);
    let results = create(&mut ctx, creations);
    assert_eq!(
        results[..3],
        vec![(errors::NONE, Some(String::new())); 3][..]
    );
    assert_eq!(
        results[3],
        (
            errors::INVALID_REQUEST,
            Some("Invalid patternType UNKNOWN".to_string())
        )
    );
    assert_eq!(stored(&ctx).len(), 3);

    let literal_any = any_filter().with_pattern_type_filter(Pat::Literal.code());
    let unknown_type = any_filter()
        .with_resource_type_filter(99)
        .with_pattern_type_filter(Pat::Literal.code());
    let r = delete(&mut ctx, vec![literal_any, unknown_type]);
    assert_eq!(r.filter_results.len(), 2);
    let mut deleted: Vec<(i8, String)> = r.filter_results[0]
        .matching_acls
        .iter()
        .map(|m| {
            assert_eq!(m.error_code, errors::NONE);
            (m.resource_type, m.resource_name.to_string())
        })
        .collect();
    deleted.sort();
    assert_eq!(
        deleted,
        vec![
            (Res::Group.code(), "mygroup".to_string()),
            (Res::Cluster.code(), "kafka-cluster".to_string()),
        ]
    );
    assert_eq!(r.filter_results[1].error_code, errors::INVALID_REQUEST);
    assert_eq!(stored(&ctx), vec![acls[1].clone()]);
}

#[test]
fn test_delete_dedupe() {
    let mut ctx = with_authorizer("User:ANONYMOUS");
    let mut acl = binding(
        Res::Topic,
        "topic-1",
        Pat::Literal,
        "User:user",
        Op::All,
        Perm::Allow,
    );
    acl.host = "10.0.0.1".to_string();
    assert_eq!(
        create(&mut ctx, vec![creation(&acl)]),
        vec![(errors::NONE, Some(String::new()))]
    );
    let id = *ctx.image().acls.keys().next().unwrap();
    // Both filters match the one ACL: one removal record, two results.
    let before = ctx.log.end();
    let r = delete(&mut ctx, vec![any_filter(), filter_of(&acl)]);
    assert_eq!(r.filter_results.len(), 2);
    assert!(r.filter_results.iter().all(|f| f.matching_acls.len() == 1));
    assert_eq!(
        ctx.log.end() - before,
        1,
        "one RemoveAccessControlEntryRecord"
    );
    assert!(!ctx.image().acls.contains_key(&id));
}

#[test]
fn creating_an_acl_twice_writes_it_once() {
    let mut ctx = with_authorizer("User:ANONYMOUS");
    let acl = &test_acls()[1];
    assert_eq!(
        create(&mut ctx, vec![creation(acl), creation(acl)]),
        vec![(errors::NONE, Some(String::new())); 2]
    );
    assert_eq!(
        create(&mut ctx, vec![creation(acl)]),
        vec![(errors::NONE, Some(String::new()))]
    );
    assert_eq!(stored(&ctx), vec![acl.clone()]);
}

#[test]
fn describe_acls_groups_the_committed_acls_by_resource() {
    let mut ctx = with_authorizer("User:ANONYMOUS");
    create(&mut ctx, test_acls().iter().map(creation).collect());
    let r = describe_all(&mut ctx);
    assert_eq!(r.error_code, errors::NONE);
    let resources: Vec<(i8, String, i8, usize)> = r
        .resources
        .iter()
        .map(|x| {
            (
                x.resource_type,
                x.resource_name.to_string(),
                x.pattern_type,
                x.acls.len(),
            )
        })
        .collect();
    // StandardAcl order: resource type, then name reversed.
    assert_eq!(
        resources,
        vec![
            (
                Res::Topic.code(),
                "foo_".to_string(),
                Pat::Prefixed.code(),
                1
            ),
            (
                Res::Group.code(),
                "mygroup".to_string(),
                Pat::Literal.code(),
                1
            ),
            (
                Res::Group.code(),
                "mygroup".to_string(),
                Pat::Prefixed.code(),
                1
            ),
            (
                Res::Group.code(),
                "foo".to_string(),
                Pat::Prefixed.code(),
                1
            ),
            (
                Res::Cluster.code(),
                "kafka-cluster".to_string(),
                Pat::Literal.code(),
                1
            ),
        ]
    );
}

#[test]
fn acl_apis_without_an_authorizer_answer_security_disabled() {
    let mut ctx = Ctx::active(MV);
    let acl = &test_acls()[0];
    assert_eq!(
        create(&mut ctx, vec![creation(acl)]),
        vec![(
            SECURITY_DISABLED,
            Some("No Authorizer is configured.".to_string())
        )]
    );
    let r = delete(&mut ctx, vec![any_filter()]);
    assert_eq!(r.filter_results[0].error_code, SECURITY_DISABLED);
    let r = describe_all(&mut ctx);
    assert_eq!(r.error_code, SECURITY_DISABLED);
    assert_eq!(
        r.error_message.as_deref(),
        Some("No Authorizer is configured on the broker")
    );
    assert!(ctx.image().acls.is_empty());
}

#[test]
fn acl_apis_need_alter_and_describe_on_the_cluster() {
    let mut ctx = with_authorizer("User:admin");
    ctx.sender = Sender {
        principal: "User:alice".to_string(),
        ..Sender::anonymous_local()
    };
    let acl = &test_acls()[1];
    let refused = create(&mut ctx, vec![creation(acl)]);
    assert_eq!(refused[0].0, CLUSTER_AUTHORIZATION_FAILED);
    // Kafka's "Request <request> needs <OPERATION> permission."
    let message = refused[0].1.clone().unwrap_or_default();
    assert!(
        message
            .starts_with("Request Request(api=CreateAcls, session=Session(User:alice,/127.0.0.1)")
            && message.ends_with(") needs ALTER permission."),
        "{message}"
    );
    let described = describe_all(&mut ctx);
    assert_eq!(described.error_code, CLUSTER_AUTHORIZATION_FAILED);
    assert!(
        described
            .error_message
            .as_deref()
            .is_some_and(|m| m.ends_with(") needs DESCRIBE permission.")),
        "{:?}",
        described.error_message
    );
    assert!(ctx.image().acls.is_empty());
    // An admin lets alice alter the cluster: now she may create ACLs, but not yet describe
    // them (ALTER does imply DESCRIBE).
    ctx.sender.principal = "User:admin".to_string();
    let alter = binding(
        Res::Cluster,
        "kafka-cluster",
        Pat::Literal,
        "User:alice",
        Op::Alter,
        Perm::Allow,
    );
    assert_eq!(
        create(&mut ctx, vec![creation(&alter)]),
        vec![(errors::NONE, Some(String::new()))]
    );
    ctx.sender.principal = "User:alice".to_string();
    assert_eq!(
        create(&mut ctx, vec![creation(acl)]),
        vec![(errors::NONE, Some(String::new()))]
    );
    assert_eq!(describe_all(&mut ctx).error_code, errors::NONE);
}

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
