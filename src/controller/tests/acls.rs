//! AclControlManagerTest (Kafka's tests of the controller's ACL manager) through the
//! controller's Create/Delete/DescribeAcls, and the checks ControllerApis makes on those three
//! APIs; the other APIs' authorization checks are in `acl_authorization.rs`.
#![allow(clippy::unwrap_used)]

use kafka_protocol::messages::create_acls_request::AclCreation;
use kafka_protocol::messages::delete_acls_request::DeleteAclsFilter;
use kafka_protocol::messages::{
    CreateAclsRequest, DeleteAclsRequest, DeleteAclsResponse, DescribeAclsRequest,
    DescribeAclsResponse,
};
use kafka_protocol::protocol::StrBytes;

use super::context::Ctx;
use crate::codec::{RequestBody, ResponseBody};
use crate::controller::acls::SECURITY_DISABLED;
use crate::controller::authorization::CLUSTER_AUTHORIZATION_FAILED;
use crate::controller::{errors, ControllerConfig};
use crate::metadata::acl::{
    AclBinding, AclOperation as Op, AclPermissionType as Perm, PatternType as Pat,
    ResourceType as Res,
};
use crate::metadata::authorizer::AuthorizerConfig;
use crate::raft::Sender;

const MV: i16 = crate::common::release::mv::V4_1_IV1;

pub(super) fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

/// An active controller with the StandardAuthorizer on, `super_users` super users.
pub(super) fn with_authorizer(super_users: &str) -> Ctx {
    let mut cfg = ControllerConfig::new(1, super::context::CLUSTER_ID);
    cfg.rng_seed = 42;
    cfg.authorizer = Some(AuthorizerConfig::parse(Some(super_users), None).unwrap());
    Ctx::with_config(cfg, MV)
}

pub(super) fn binding(
    rt: Res,
    name: &str,
    pat: Pat,
    principal: &str,
    op: Op,
    perm: Perm,
) -> AclBinding {
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

pub(super) fn creation(b: &AclBinding) -> AclCreation {
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
pub(super) fn create(ctx: &mut Ctx, creations: Vec<AclCreation>) -> Vec<(i16, Option<String>)> {
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
