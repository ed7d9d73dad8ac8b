//! Kafka's StandardAuthorizer decision over the ACLs of a metadata image
//! (`StandardAuthorizerData.authorize`).
//!
//! ```text
//!   (principal, host, operation, resource) ─▶ super user? ─▶ ALLOWED
//!        └─▶ ACLs of the resource type whose pattern covers the name
//!              (LITERAL equal, LITERAL "*", PREFIXED prefix of it)
//!              any DENY for this principal/host/operation ─▶ DENIED
//!              else any ALLOW                              ─▶ ALLOWED
//!              else some ACL covers the resource           ─▶ DENIED
//!              else allow.everyone.if.no.acl.found         ─▶ ALLOWED / DENIED
//! ```
//!
//! An ALLOW for READ, WRITE, DELETE or ALTER implies DESCRIBE, and an ALLOW for ALTER_CONFIGS
//! implies DESCRIBE_CONFIGS; a DENY implies nothing beyond its operation. ALL matches every
//! operation. Principals match exactly or through `User:*`; hosts exactly, through `*`, or
//! (Kafka 4.4, KIP-1274) as a CIDR range holding the client address (`cidr`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use uuid::Uuid;

use super::acl::{
    AclBinding, AclOperation, AclPermissionType, PatternType, ResourceType, WILDCARD,
};
use super::cidr;
use crate::metadata::records::AccessControlEntryRecord;

/// `authorizer.class.name` of the only authorizer a KRaft controller runs.
pub const STANDARD_AUTHORIZER: &str = "org.apache.kafka.metadata.authorizer.StandardAuthorizer";

/// Kafka's `WILDCARD_KAFKA_PRINCIPAL`.
const WILDCARD_PRINCIPAL: &str = "User:*";

/// The authorizer's settings (`super.users`, `allow.everyone.if.no.acl.found`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthorizerConfig {
    /// Principals allowed everything (`super.users`, `;`-separated, trimmed).
    pub super_users: BTreeSet<String>,
    /// The answer for a resource no ACL covers.
    pub allow_everyone_if_no_acl_found: bool,
    /// Whether a host pattern with a `/` is a CIDR range (Kafka 4.4's StandardAuthorizer,
    /// KIP-1274) or, as in Kafka 4.1, compared literally like any other host: set from the
    /// release the node presents, so the controller agrees with that release's brokers.
    pub cidr_host_patterns: bool,
}

impl AuthorizerConfig {
    /// Kafka's `getConfiguredSuperUsers` and `getDefaultResult` over the two raw values; a
    /// super user that is not `Type:name` is refused with Kafka's message.
    pub fn parse(super_users: Option<&str>, allow_everyone: Option<&str>) -> Result<Self, String> {
        let mut users = BTreeSet::new();
        for user in super_users.unwrap_or("").split(';').map(str::trim) {
            if user.is_empty() {
                continue;
            }
            if !user.contains(':') {
                return Err(format!(
                    "expected a string in format principalType:principalName but got {user}"
                ));
            }
            users.insert(user.to_string());
        }
        Ok(Self {
            super_users: users,
            // Java's Boolean.parseBoolean: "true" in any case, anything else false.
            allow_everyone_if_no_acl_found: allow_everyone
                .is_some_and(|v| v.trim().eq_ignore_ascii_case("true")),
            cidr_host_patterns: true,
        })
    }
}

/// What an authorization is asked about (Kafka's `Action` with a LITERAL resource).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Action<'a> {
    /// The operation.
    pub operation: AclOperation,
    /// The resource type.
    pub resource_type: ResourceType,
    /// The resource name (`kafka-cluster` for CLUSTER).
    pub resource_name: &'a str,
}

/// The rule a decision rests on (Kafka's `MatchingRule`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rule {
    /// The principal is a super user.
    SuperUser,
    /// An ACL matched.
    MatchingAcl(AclBinding),
    /// No ACL covers the resource and allow.everyone.if.no.acl.found is true.
    DefaultAllow,
    /// ACLs cover the resource but none matched, or none covers it and the default denies.
    DefaultDeny,
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SuperUser => f.write_str("SuperUser"),
            Self::MatchingAcl(acl) => write!(f, "MatchingAcl(acl={acl})"),
            Self::DefaultAllow => f.write_str("DefaultAllow"),
            Self::DefaultDeny => f.write_str("DefaultDeny"),
        }
    }
}

/// An authorization's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// ALLOWED (true) or DENIED.
    pub allowed: bool,
    /// Why.
    pub rule: Rule,
}

/// Who asks, from where (Kafka's `AuthorizableRequestContext` as the authorizer reads it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Requester<'a> {
    /// `Type:name` of the session principal (no token flag: Kafka compares type and name).
    pub principal: &'a str,
    /// The client address as Java's `getHostAddress` prints it ([`java_host_address`]).
    pub host: &'a str,
}

/// Kafka's StandardAuthorizer decision for `who` doing `action`, over `acls`.
pub fn authorize(
    cfg: &AuthorizerConfig,
    acls: &BTreeMap<Uuid, AccessControlEntryRecord>,
    who: Requester<'_>,
    action: Action<'_>,
) -> Decision {
    if cfg.super_users.contains(who.principal) {
        return Decision {
            allowed: true,
            rule: Rule::SuperUser,
        };
    }
    let mut covered = false;
    let mut allow: Option<AclBinding> = None;
    for record in acls.values() {
        if record.resource_type != action.resource_type.code() {
            continue;
        }
        let acl = AclBinding::from_record(record);
        if !pattern_covers(&acl, action.resource_name) {
            continue;
        }
        covered = true;
        match acl_result(&acl, who, action.operation, cfg.cidr_host_patterns) {
            Some(false) => {
                return Decision {
                    allowed: false,
                    rule: Rule::MatchingAcl(acl),
                };
            }
            Some(true) if allow.is_none() => allow = Some(acl),
            _ => {}
        }
    }
    match (allow, covered) {
        (Some(acl), _) => Decision {
            allowed: true,
            rule: Rule::MatchingAcl(acl),
        },
        (None, true) => Decision {
            allowed: false,
            rule: Rule::DefaultDeny,
        },
        (None, false) if cfg.allow_everyone_if_no_acl_found => Decision {
            allowed: true,
            rule: Rule::DefaultAllow,
        },
        (None, false) => Decision {
            allowed: false,
            rule: Rule::DefaultDeny,
        },
    }
}

/// Whether a stored pattern applies to the resource `name`.
fn pattern_covers(acl: &AclBinding, name: &str) -> bool {
    match acl.pattern_type {
        PatternType::Literal => acl.resource_name == name || acl.resource_name == WILDCARD,
        PatternType::Prefixed => name.starts_with(acl.resource_name.as_str()),
        _ => false,
    }
}

/// Kafka's `findResult`: `None` when the ACL does not speak about this principal, host and
/// operation; else whether it allows.
fn acl_result(
    acl: &AclBinding,
    who: Requester<'_>,
    operation: AclOperation,
    cidr_host_patterns: bool,
) -> Option<bool> {
    if acl.principal != who.principal && acl.principal != WILDCARD_PRINCIPAL {
        return None;
    }
    if acl.host != WILDCARD
        && acl.host != who.host
        && !(cidr_host_patterns && cidr::is_in_range(who.host, &acl.host))
    {
        return None;
    }
    let allow = acl.permission_type == AclPermissionType::Allow;
    if acl.operation != AclOperation::All {
        let applies = if allow {
            match operation {
                AclOperation::Describe => matches!(
                    acl.operation,
                    AclOperation::Describe
                        | AclOperation::Read
                        | AclOperation::Write
                        | AclOperation::Delete
                        | AclOperation::Alter
                ),
                AclOperation::DescribeConfigs => matches!(
                    acl.operation,
                    AclOperation::DescribeConfigs | AclOperation::AlterConfigs
                ),
                op => op == acl.operation,
            }
        } else {
            operation == acl.operation
        };
        if !applies {
            return None;
        }
    }
    Some(allow)
}

/// Kafka's `SecurityUtils.resourceTypeName` (the audit log's spelling).
pub fn resource_type_name(t: ResourceType) -> &'static str {
    match t {
        ResourceType::Unknown => "Unknown",
        ResourceType::Any => "Any",
        ResourceType::Topic => "Topic",
        ResourceType::Group => "Group",
        ResourceType::Cluster => "Cluster",
        ResourceType::TransactionalId => "TransactionalId",
        ResourceType::DelegationToken => "DelegationToken",
        ResourceType::User => "User",
    }
}

/// Kafka's audit line for a decision (`kafka.authorizer.logger`; denied ones at INFO).
pub fn audit_message(
    who: Requester<'_>,
    action: Action<'_>,
    api_name: &str,
    decision: &Decision,
) -> String {
    format!(
        "Principal = {} is {} operation = {} from host = {} on resource = {}:LITERAL:{} \
         for request = {} with resourceRefCount = 1 based on rule {}",
        who.principal,
        if decision.allowed {
            "Allowed"
        } else {
            "Denied"
        },
        action.operation,
        who.host,
        resource_type_name(action.resource_type),
        action.resource_name,
        api_name,
        decision.rule
    )
}

#[cfg(test)]
#[path = "authorizer_tests.rs"]
mod tests;
