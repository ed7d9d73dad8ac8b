//! CIDR host patterns in ACLs (KIP-1274, Kafka 4.4): CreateAcls' host checks of 4.4's
//! `AclControlManager.validateHostPattern` (after its other checks; the range only from
//! metadata.version 4.4-IV1, the image's), none on 4.1; and the StandardAuthorizer matching a
//! client address against a range. Messages from the 4.4.0 jar.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;

use kafka_protocol::messages::create_acls_request::AclCreation;
use kafka_protocol::messages::CreateAclsRequest;
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::context::{Ctx, CLUSTER_ID};
use crate::codec::versions::Release;
use crate::codec::{RequestBody, ResponseBody};
use crate::common::release::mv;
use crate::controller::{errors, ControllerConfig};
use crate::metadata::acl::{
    AclBinding, AclOperation, AclPermissionType, PatternType, ResourceType,
};
use crate::metadata::authorizer::{authorize, Action, AuthorizerConfig, Requester};

fn ctx(release: Release, level: i16) -> Ctx {
    let mut cfg = ControllerConfig::new(1, CLUSTER_ID);
    cfg.rng_seed = 42;
    cfg.release = release;
    cfg.authorizer = Some(AuthorizerConfig::parse(Some("User:ANONYMOUS"), None).unwrap());
    Ctx::with_config(cfg, level)
}

fn creation(host: &str, principal: &str) -> AclCreation {
    AclCreation::default()
        .with_resource_type(2)
        .with_resource_name(StrBytes::from_static_str("t"))
        .with_resource_pattern_type(3)
        .with_principal(StrBytes::from_string(principal.to_string()))
        .with_host(StrBytes::from_string(host.to_string()))
        .with_operation(3)
        .with_permission_type(3)
}

/// (code, message) of creating one ACL with `host`.
fn create(ctx: &mut Ctx, host: &str, principal: &str) -> (i16, Option<String>) {
    let req = CreateAclsRequest::default().with_creations(vec![creation(host, principal)]);
    match ctx.call(RequestBody::CreateAcls(req), 3) {
        ResponseBody::CreateAcls(r) => (
            r.results[0].error_code,
            r.results[0].error_message.as_ref().map(|m| m.to_string()),
        ),
        other => panic!("{other:?}"),
    }
}

const NEEDS_4_4_IV1: &str =
    "CIDR-based ACL host patterns require metadata version 4.4-IV1 or higher.";

#[test]
fn create_acls_checks_host_patterns_as_kafka_4_4() {
    let mut c = ctx(Release::Kafka4_4, mv::V4_4_IV1);
    let ok = (0, Some(String::new()));
    for host in [
        "*",
        "10.0.0.1",
        "myhost",
        "10.0.0.0/8",
        "2001:db8::/32",
        "::1/128",
    ] {
        assert_eq!(create(&mut c, host, "User:alice"), ok, "{host}");
    }
    let bad = |m: &str| (errors::INVALID_REQUEST, Some(m.to_string()));
    assert_eq!(
        create(&mut c, "", "User:alice"),
        bad("Host pattern cannot be null or empty")
    );
    assert_eq!(
        create(&mut c, "10.0.0.0/33", "User:alice"),
        bad("Invalid CIDR notation '10.0.0.0/33': Value [33] not in range [0,32]")
    );
    assert_eq!(
        create(&mut c, "2001:db8::/129", "User:alice"),
        bad(
            "Invalid CIDR notation '2001:db8::/129': Could not parse [2001:db8::/129] - prefix \
             length must be between 0 and 128"
        )
    );
    // The principal is checked before the host.
    assert_eq!(
        create(&mut c, "", "alice"),
        bad(
            "Could not parse principal from `alice` (no colon is present separating the \
             principal type from the principal name)"
        )
    );
    // Below 4.4-IV1 a range is refused whatever its syntax; the other checks stay.
    let mut c = ctx(Release::Kafka4_4, mv::V4_4_IV0);
    for host in ["10.0.0.0/8", "10.0.0.0/33"] {
        assert_eq!(
            create(&mut c, host, "User:alice"),
            (errors::UNSUPPORTED_VERSION, Some(NEEDS_4_4_IV1.to_string())),
            "{host}"
        );
    }
    assert_eq!(
        create(&mut c, "", "User:alice"),
        bad("Host pattern cannot be null or empty")
    );
    assert_eq!(create(&mut c, "10.0.0.1", "User:alice"), ok);
    // Kafka 4.1 checks no host.
    let mut c = ctx(Release::Kafka4_1, mv::V4_1_IV1);
    for host in ["", "10.0.0.0/33", "10.0.0.0/8"] {
        assert_eq!(create(&mut c, host, "User:alice"), ok, "{host}");
    }
}

fn allow_read(id: u128, host: &str) -> (Uuid, crate::metadata::records::AccessControlEntryRecord) {
    let id = Uuid::from_u128(id);
    let acl = AclBinding {
        resource_type: ResourceType::Topic,
        resource_name: "t".to_string(),
        pattern_type: PatternType::Literal,
        principal: "User:alice".to_string(),
        host: host.to_string(),
        operation: AclOperation::Read,
        permission_type: AclPermissionType::Allow,
    };
    (id, acl.to_record(id))
}

/// StandardAuthorizerData.findResult of 4.4: a host matches as `*`, literally, or as a range
/// holding the client address (IPv4 and IPv6; a literal is never a range).
#[test]
fn authorizer_matches_cidr_host_patterns() {
    let cfg = AuthorizerConfig::parse(None, None).unwrap();
    let acls: BTreeMap<_, _> = [allow_read(1, "10.0.0.0/8"), allow_read(2, "2001:db8::/32")]
        .into_iter()
        .collect();
    let read = Action {
        resource_type: ResourceType::Topic,
        resource_name: "t",
        operation: AclOperation::Read,
    };
    let allowed = |host: &str| {
        authorize(
            &cfg,
            &acls,
            Requester {
                principal: "User:alice",
                host,
            },
            read,
        )
        .allowed
    };
    assert!(allowed("10.1.2.3"));
    assert!(allowed("10.255.255.255"));
    assert!(!allowed("11.0.0.1"));
    assert!(allowed("2001:db8:0:0:0:0:0:1"));
    assert!(!allowed("2001:db9:0:0:0:0:0:1"));
    let literal: BTreeMap<_, _> = [allow_read(3, "10.0.0.1")].into_iter().collect();
    let who = |host| Requester {
        principal: "User:alice",
        host,
    };
    assert!(authorize(&cfg, &literal, who("10.0.0.1"), read).allowed);
    assert!(!authorize(&cfg, &literal, who("10.0.0.2"), read).allowed);
    // Presenting 4.1, whose brokers compare hosts literally, a `/` host is no range.
    let v41 = AuthorizerConfig {
        cidr_host_patterns: false,
        ..cfg.clone()
    };
    assert!(!authorize(&v41, &acls, who("10.1.2.3"), read).allowed);
    let as_written: BTreeMap<_, _> = [allow_read(4, "10.0.0.0/8")].into_iter().collect();
    assert!(authorize(&v41, &as_written, who("10.0.0.0/8"), read).allowed);
}
