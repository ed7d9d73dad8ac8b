//! Mirrors Kafka's StandardAuthorizerTest (decisions over a set of ACLs).

use std::collections::BTreeMap;

use uuid::Uuid;

use super::*;
use crate::metadata::acl::{AclBindingFilter, AclOperation as Op, AclPermissionType as Perm};
use crate::metadata::acl::{PatternType as Pat, ResourceType as Res};

const LOCALHOST: &str = "127.0.0.1";

fn acl(
    resource_type: Res,
    name: &str,
    pattern: Pat,
    principal: &str,
    host: &str,
    op: Op,
    perm: Perm,
) -> AclBinding {
    AclBinding {
        resource_type,
        resource_name: name.to_string(),
        pattern_type: pattern,
        principal: principal.to_string(),
        host: host.to_string(),
        operation: op,
        permission_type: perm,
    }
}

fn image_acls(acls: &[AclBinding]) -> BTreeMap<Uuid, AccessControlEntryRecord> {
    acls.iter()
        .enumerate()
        .map(|(i, a)| {
            let id = Uuid::from_u64_pair(i as u64 + 1, i as u64 + 1);
            (id, a.to_record(id))
        })
        .collect()
}

fn superman() -> AuthorizerConfig {
    AuthorizerConfig::parse(Some("User:superman"), None).expect("valid")
}

/// The results of `user` from `host` doing each action, as booleans.
fn decide(
    cfg: &AuthorizerConfig,
    acls: &BTreeMap<Uuid, AccessControlEntryRecord>,
    user: &str,
    host: &str,
    actions: &[(Op, Res, &str)],
) -> Vec<bool> {
    let principal = format!("User:{user}");
    actions
        .iter()
        .map(|(operation, resource_type, resource_name)| {
            authorize(
                cfg,
                acls,
                Requester {
                    principal: &principal,
                    host,
                },
                Action {
                    operation: *operation,
                    resource_type: *resource_type,
                    resource_name,
                },
            )
            .allowed
        })
        .collect()
}

const ALLOWED: bool = true;
const DENIED: bool = false;

fn foo_acl(op: Op, perm: Perm) -> AclBinding {
    acl(Res::Topic, "foo_", Pat::Prefixed, "User:bob", "*", op, perm)
}

fn bar_acl(op: Op, perm: Perm) -> AclBinding {
    acl(Res::Group, "bar", Pat::Literal, "User:*", "*", op, perm)
}

#[test]
fn test_get_configured_super_users() {
    let users = |v: Option<&str>| AuthorizerConfig::parse(v, None).map(|c| c.super_users);
    assert_eq!(users(None), Ok(BTreeSet::new()));
    assert_eq!(users(Some(" ")), Ok(BTreeSet::new()));
    let bob_alice: BTreeSet<String> = ["User:bob", "User:alice"].map(String::from).into();
    assert_eq!(users(Some("User:bob;User:alice ")), Ok(bob_alice.clone()));
    assert_eq!(users(Some(";  User:bob  ;  User:alice ")), Ok(bob_alice));
    assert_eq!(
        users(Some("bob;:alice")),
        Err("expected a string in format principalType:principalName but got bob".to_string())
    );
}

#[test]
fn test_get_default_result() {
    let default = |v| {
        AuthorizerConfig::parse(None, v)
            .expect("valid")
            .allow_everyone_if_no_acl_found
    };
    assert!(!default(None));
    assert!(default(Some("true")));
    assert!(!default(Some("false")));
}

#[test]
fn test_allow_everyone_if_no_acl_found_config_enabled() {
    let cfg = AuthorizerConfig::parse(Some("User:alice;User:chris"), Some("true")).expect("ok");
    let acls = image_acls(&[acl(
        Res::Topic,
        "topic1",
        Pat::Literal,
        "User:Alice",
        "*",
        Op::Read,
        Perm::Allow,
    )]);
    let actions = [
        (Op::Read, Res::Topic, "topic1"),
        (Op::Read, Res::Topic, "topic2"),
    ];
    assert_eq!(
        decide(&cfg, &acls, "Bob", LOCALHOST, &actions),
        [DENIED, ALLOWED]
    );
}

#[test]
fn test_allow_everyone_if_no_acl_found_config_disabled() {
    let cfg = AuthorizerConfig::parse(Some("User:alice;User:chris"), Some("false")).expect("ok");
    let acls = image_acls(&[acl(
        Res::Topic,
        "topic1",
        Pat::Literal,
        "User:Alice",
        "*",
        Op::Read,
        Perm::Allow,
    )]);
    let actions = [
        (Op::Read, Res::Topic, "topic1"),
        (Op::Read, Res::Topic, "topic2"),
    ];
    assert_eq!(
        decide(&cfg, &acls, "Bob", LOCALHOST, &actions),
        [DENIED, DENIED]
    );
    // A super user passes whatever the ACLs say.
    assert_eq!(
        decide(&cfg, &acls, "alice", LOCALHOST, &actions),
        [ALLOWED, ALLOWED]
    );
}

#[test]
fn test_find_result_implication() {
    let bob = Requester {
        principal: "User:bob",
        host: LOCALHOST,
    };
    for op in [Op::Describe, Op::Read, Op::Write, Op::Delete, Op::Alter] {
        assert_eq!(
            acl_result(&foo_acl(op, Perm::Allow), bob, Op::Describe, true),
            Some(true),
            "{op}"
        );
    }
    // CREATE does not imply DESCRIBE.
    assert_eq!(
        acl_result(&foo_acl(Op::Create, Perm::Allow), bob, Op::Describe, true),
        None
    );
    // Deny ACLs do no implication.
    for op in [Op::Read, Op::Write, Op::Delete, Op::Alter] {
        assert_eq!(
            acl_result(&foo_acl(op, Perm::Deny), bob, Op::Describe, true),
            None
        );
    }
    assert_eq!(
        acl_result(&foo_acl(Op::Describe, Perm::Deny), bob, Op::Describe, true),
        Some(false)
    );
    for op in [Op::DescribeConfigs, Op::AlterConfigs] {
        assert_eq!(
            acl_result(&foo_acl(op, Perm::Allow), bob, Op::DescribeConfigs, true),
            Some(true)
        );
    }
    assert_eq!(
        acl_result(
            &foo_acl(Op::AlterConfigs, Perm::Deny),
            bob,
            Op::DescribeConfigs,
            true,
        ),
        None
    );
    assert_eq!(
        acl_result(
            &foo_acl(Op::AlterConfigs, Perm::Deny),
            bob,
            Op::AlterConfigs,
            true,
        ),
        Some(false)
    );
}

#[test]
fn test_find_result_principal_matching() {
    let who = |principal| Requester {
        principal,
        host: LOCALHOST,
    };
    assert_eq!(
        acl_result(
            &foo_acl(Op::Read, Perm::Allow),
            who("User:bob"),
            Op::Read,
            true
        ),
        Some(true)
    );
    assert_eq!(
        acl_result(
            &foo_acl(Op::Read, Perm::Allow),
            who("User:alice"),
            Op::Read,
            true
        ),
        None
    );
    // The wildcard principal matches anyone.
    assert_eq!(
        acl_result(
            &bar_acl(Op::Read, Perm::Deny),
            who("User:alice"),
            Op::Read,
            true
        ),
        Some(false)
    );
}

#[test]
fn test_list_acls() {
    let foo = [
        foo_acl(Op::Read, Perm::Allow),
        foo_acl(Op::Write, Perm::Allow),
    ];
    let bar = [
        bar_acl(Op::DescribeConfigs, Perm::Deny),
        bar_acl(Op::AlterConfigs, Perm::Deny),
    ];
    let all: Vec<AclBinding> = foo.iter().chain(&bar).cloned().collect();
    let mut acls = image_acls(&all);
    let listed = |acls: &BTreeMap<Uuid, AccessControlEntryRecord>, filter: &AclBindingFilter| {
        crate::metadata::acl::sorted_acls(acls)
            .into_iter()
            .map(|(_, b)| b)
            .filter(|b| filter.matches(b))
            .collect::<Vec<_>>()
    };
    let any = AclBindingFilter {
        resource_type: Res::Any,
        resource_name: None,
        pattern_type: Pat::Any,
        principal: None,
        host: None,
        operation: Op::Any,
        permission_type: Perm::Any,
    };
    // StandardAcl order: by resource type code (TOPIC 2 before GROUP 3), then by operation.
    assert_eq!(listed(&acls, &any), all);
    let write_id = *acls
        .iter()
        .find(|(_, r)| r.operation == Op::Write.code())
        .map(|(id, _)| id)
        .expect("present");
    acls.remove(&write_id);
    assert_eq!(
        listed(&acls, &any),
        [foo[0].clone(), bar[0].clone(), bar[1].clone()]
    );
    let topics = AclBindingFilter {
        resource_type: Res::Topic,
        ..any
    };
    assert_eq!(listed(&acls, &topics), [foo[0].clone()]);
}

#[test]
fn test_simple_authorizations() {
    let acls = image_acls(&[
        foo_acl(Op::Read, Perm::Allow),
        foo_acl(Op::Write, Perm::Allow),
        bar_acl(Op::DescribeConfigs, Perm::Allow),
        bar_acl(Op::AlterConfigs, Perm::Allow),
    ]);
    let cfg = superman();
    assert_eq!(
        decide(
            &cfg,
            &acls,
            "bob",
            LOCALHOST,
            &[(Op::Read, Res::Topic, "foo_")]
        ),
        [ALLOWED]
    );
    assert_eq!(
        decide(
            &cfg,
            &acls,
            "fred",
            LOCALHOST,
            &[(Op::AlterConfigs, Res::Group, "bar")]
        ),
        [ALLOWED]
    );
}

#[test]
fn test_deny_precedence_with_operation_all() {
    let acls = image_acls(&[
        acl(
            Res::Topic,
            "foo",
            Pat::Literal,
            "User:alice",
            "*",
            Op::All,
            Perm::Deny,
        ),
        acl(
            Res::Topic,
            "foo",
            Pat::Prefixed,
            "User:alice",
            "*",
            Op::Read,
            Perm::Allow,
        ),
        acl(
            Res::Topic,
            "foo",
            Pat::Literal,
            "User:*",
            "*",
            Op::All,
            Perm::Deny,
        ),
        acl(
            Res::Topic,
            "foo",
            Pat::Prefixed,
            "User:*",
            "*",
            Op::Describe,
            Perm::Allow,
        ),
    ]);
    let cfg = superman();
    assert_eq!(
        decide(
            &cfg,
            &acls,
            "alice",
            LOCALHOST,
            &[
                (Op::Write, Res::Topic, "foo"),
                (Op::Read, Res::Topic, "foo"),
                (Op::Describe, Res::Topic, "foo"),
                (Op::Read, Res::Topic, "foobar"),
            ]
        ),
        [DENIED, DENIED, DENIED, ALLOWED]
    );
    assert_eq!(
        decide(
            &cfg,
            &acls,
            "bob",
            LOCALHOST,
            &[
                (Op::Describe, Res::Topic, "foo"),
                (Op::Read, Res::Topic, "foo"),
                (Op::Write, Res::Topic, "foo"),
                (Op::Describe, Res::Topic, "foobaz"),
                (Op::Read, Res::Topic, "foobaz"),
            ]
        ),
        [DENIED, DENIED, DENIED, ALLOWED, DENIED]
    );
}

#[test]
fn test_topic_acl_with_operation_all() {
    let acls = image_acls(&[
        acl(
            Res::Topic,
            "foo",
            Pat::Literal,
            "User:*",
            "*",
            Op::All,
            Perm::Allow,
        ),
        acl(
            Res::Topic,
            "bar",
            Pat::Prefixed,
            "User:alice",
            "*",
            Op::All,
            Perm::Allow,
        ),
        acl(
            Res::Topic,
            "baz",
            Pat::Literal,
            "User:bob",
            "*",
            Op::All,
            Perm::Allow,
        ),
    ]);
    let cfg = superman();
    let check = |user, actions: &[(Op, Res, &str)]| decide(&cfg, &acls, user, LOCALHOST, actions);
    assert_eq!(
        check(
            "alice",
            &[
                (Op::Write, Res::Topic, "foo"),
                (Op::DescribeConfigs, Res::Topic, "bar"),
                (Op::Describe, Res::Topic, "baz"),
            ]
        ),
        [ALLOWED, ALLOWED, DENIED]
    );
    assert_eq!(
        check(
            "bob",
            &[
                (Op::Write, Res::Topic, "foo"),
                (Op::Read, Res::Topic, "bar"),
                (Op::Describe, Res::Topic, "baz"),
            ]
        ),
        [ALLOWED, DENIED, ALLOWED]
    );
    assert_eq!(
        check(
            "malory",
            &[
                (Op::Describe, Res::Topic, "foo"),
                (Op::Write, Res::Topic, "bar"),
                (Op::Read, Res::Topic, "baz"),
            ]
        ),
        [ALLOWED, DENIED, DENIED]
    );
}

#[test]
fn test_host_address_acl_validation() {
    let host1 = "192.168.1.1";
    let host2 = "192.168.1.2";
    let acls = image_acls(&[
        acl(
            Res::Topic,
            "foo",
            Pat::Literal,
            "User:alice",
            host1,
            Op::Read,
            Perm::Deny,
        ),
        acl(
            Res::Topic,
            "foo",
            Pat::Literal,
            "User:alice",
            "*",
            Op::Read,
            Perm::Allow,
        ),
        acl(
            Res::Topic,
            "bar",
            Pat::Literal,
            "User:bob",
            host2,
            Op::Read,
            Perm::Allow,
        ),
        acl(
            Res::Topic,
            "bar",
            Pat::Literal,
            "User:*",
            LOCALHOST,
            Op::Describe,
            Perm::Allow,
        ),
    ]);
    let cfg = superman();
    let actions = [
        (Op::Read, Res::Topic, "foo"),
        (Op::Read, Res::Topic, "bar"),
        (Op::Describe, Res::Topic, "bar"),
    ];
    let check = |user, host| decide(&cfg, &acls, user, host, &actions);
    assert_eq!(check("alice", LOCALHOST), [ALLOWED, DENIED, ALLOWED]);
    assert_eq!(check("alice", host1), [DENIED, DENIED, DENIED]);
    assert_eq!(check("alice", host2), [ALLOWED, DENIED, DENIED]);
    assert_eq!(check("bob", LOCALHOST), [DENIED, DENIED, ALLOWED]);
    assert_eq!(check("bob", host1), [DENIED, DENIED, DENIED]);
    assert_eq!(check("bob", host2), [DENIED, ALLOWED, ALLOWED]);
}

#[test]
fn test_authorization_with_many_acls() {
    let acls = image_acls(&[
        acl(
            Res::Topic,
            "green2",
            Pat::Literal,
            "User:*",
            "*",
            Op::Read,
            Perm::Allow,
        ),
        acl(
            Res::Topic,
            "green",
            Pat::Prefixed,
            "User:bob",
            "*",
            Op::Read,
            Perm::Allow,
        ),
        acl(
            Res::Topic,
            "betamax4",
            Pat::Literal,
            "User:bob",
            "*",
            Op::Read,
            Perm::Allow,
        ),
        acl(
            Res::Topic,
            "betamax",
            Pat::Literal,
            "User:bob",
            "*",
            Op::Read,
            Perm::Allow,
        ),
        acl(
            Res::Topic,
            "beta",
            Pat::Prefixed,
            "User:*",
            "*",
            Op::Read,
            Perm::Allow,
        ),
        acl(
            Res::Topic,
            "alpha",
            Pat::Prefixed,
            "User:*",
            "*",
            Op::Read,
            Perm::Allow,
        ),
        acl(
            Res::Topic,
            "alp",
            Pat::Prefixed,
            "User:bob",
            "*",
            Op::Read,
            Perm::Deny,
        ),
        acl(
            Res::Group,
            "*",
            Pat::Literal,
            "User:bob",
            "*",
            Op::Write,
            Perm::Allow,
        ),
        acl(
            Res::Group,
            "wheel",
            Pat::Literal,
            "User:*",
            "*",
            Op::Write,
            Perm::Deny,
        ),
    ]);
    let cfg = superman();
    assert_eq!(
        decide(
            &cfg,
            &acls,
            "bob",
            LOCALHOST,
            &[
                (Op::Read, Res::Topic, "green1"),
                (Op::Write, Res::Group, "wheel")
            ]
        ),
        [ALLOWED, DENIED]
    );
    assert_eq!(
        decide(
            &cfg,
            &acls,
            "bob",
            LOCALHOST,
            &[
                (Op::Read, Res::Topic, "alpha"),
                (Op::Write, Res::Group, "arbitrary"),
                (Op::Read, Res::Topic, "ala"),
            ]
        ),
        [DENIED, ALLOWED, DENIED]
    );
}

#[test]
fn test_prefix_acls() {
    let acls = image_acls(&[
        acl(
            Res::Topic,
            "fooa",
            Pat::Prefixed,
            "User:alice",
            "*",
            Op::All,
            Perm::Allow,
        ),
        acl(
            Res::Topic,
            "foobar",
            Pat::Literal,
            "User:bob",
            "*",
            Op::All,
            Perm::Allow,
        ),
        acl(
            Res::Topic,
            "f",
            Pat::Prefixed,
            "User:bob",
            "*",
            Op::All,
            Perm::Allow,
        ),
    ]);
    let cfg = superman();
    assert_eq!(
        decide(
            &cfg,
            &acls,
            "bob",
            LOCALHOST,
            &[
                (Op::Write, Res::Topic, "foobarr"),
                (Op::Read, Res::Topic, "goobar"),
                (Op::Read, Res::Topic, "fooa"),
            ]
        ),
        [ALLOWED, DENIED, ALLOWED]
    );
    assert_eq!(
        decide(
            &cfg,
            &acls,
            "alice",
            LOCALHOST,
            &[
                (Op::Describe, Res::Topic, "fooa"),
                (Op::Write, Res::Topic, "bar"),
                (Op::Read, Res::Topic, "baz"),
            ]
        ),
        [ALLOWED, DENIED, DENIED]
    );
}

#[test]
fn denied_audit_line_reads_as_kafkas() {
    let who = Requester {
        principal: "User:alice",
        host: LOCALHOST,
    };
    let action = Action {
        operation: Op::Create,
        resource_type: Res::Topic,
        resource_name: "u",
    };
    let d = authorize(&superman(), &BTreeMap::new(), who, action);
    assert_eq!(
        audit_message(who, action, "CreateTopics", &d),
        "Principal = User:alice is Denied operation = CREATE from host = 127.0.0.1 on \
         resource = Topic:LITERAL:u for request = CreateTopics with resourceRefCount = 1 \
         based on rule DefaultDeny"
    );
}
