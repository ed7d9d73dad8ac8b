//! ACLs as Kafka's StandardAuthorizer holds them: the four enums of an ACL binding, the
//! binding itself (from an AccessControlEntryRecord) and the filters Describe/DeleteAcls match
//! bindings with.
//!
//! ```text
//!   AccessControlEntryRecord ─▶ image.acls ─▶ AclBinding::from_record ─▶ authorizer / filters
//!   CreateAcls creation      ─▶ AclBinding (codes → enums; unmapped codes are Unknown)
//!   Describe/DeleteAcls      ─▶ AclBindingFilter::matches(binding)
//! ```
//!
//! Codes, names and the order of each enum are Kafka's (`ResourceType`, `PatternType`,
//! `AclOperation`, `AclPermissionType`); a code Kafka does not know becomes `Unknown`, as its
//! `fromCode` does.

use std::cmp::Ordering;
use std::fmt;

use crate::metadata::records::AccessControlEntryRecord;

pub use crate::common::acl::{
    AclOperation, AclPermissionType, PatternType, ResourceType, CLUSTER_NAME, WILDCARD,
};

/// One ACL: a resource pattern and an access control entry (Kafka's `AclBinding`, stored as
/// its `StandardAcl`).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AclBinding {
    /// The resource type.
    pub resource_type: ResourceType,
    /// The resource name or prefix.
    pub resource_name: String,
    /// LITERAL or PREFIXED once stored.
    pub pattern_type: PatternType,
    /// `Type:name`, e.g. `User:alice` (`User:*` for every user).
    pub principal: String,
    /// The client host, `*` for any.
    pub host: String,
    /// The operation.
    pub operation: AclOperation,
    /// ALLOW or DENY once stored.
    pub permission_type: AclPermissionType,
}

impl AclBinding {
    /// The binding a record holds.
    pub fn from_record(r: &AccessControlEntryRecord) -> Self {
        Self {
            resource_type: ResourceType::from_code(r.resource_type),
            resource_name: r.resource_name.clone(),
            pattern_type: PatternType::from_code(r.pattern_type),
            principal: r.principal.clone(),
            host: r.host.clone(),
            operation: AclOperation::from_code(r.operation),
            permission_type: AclPermissionType::from_code(r.permission_type),
        }
    }

    /// The record that stores this binding under `id`.
    pub fn to_record(&self, id: uuid::Uuid) -> AccessControlEntryRecord {
        AccessControlEntryRecord {
            id,
            resource_type: self.resource_type.code(),
            resource_name: self.resource_name.clone(),
            pattern_type: self.pattern_type.code(),
            principal: self.principal.clone(),
            host: self.host.clone(),
            operation: self.operation.code(),
            permission_type: self.permission_type.code(),
            unknown_tagged: Default::default(),
        }
    }

    /// Kafka's `StandardAcl.compareTo`: resource type, resource name REVERSED, pattern type,
    /// operation, principal, host, permission (strings compared as Java does, by UTF-16 unit).
    pub fn standard_order(&self, other: &Self) -> Ordering {
        self.resource_type
            .cmp(&other.resource_type)
            .then_with(|| java_cmp(&other.resource_name, &self.resource_name))
            .then_with(|| self.pattern_type.cmp(&other.pattern_type))
            .then_with(|| self.operation.cmp(&other.operation))
            .then_with(|| java_cmp(&self.principal, &other.principal))
            .then_with(|| java_cmp(&self.host, &other.host))
            .then_with(|| self.permission_type.cmp(&other.permission_type))
    }
}

/// `String.compareTo`: by UTF-16 code unit.
fn java_cmp(a: &str, b: &str) -> Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

impl fmt::Display for AclBinding {
    /// Kafka's `AclBinding.toString`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "(pattern=ResourcePattern(resourceType={}, name={}, patternType={}), \
             entry=(principal={}, host={}, operation={}, permissionType={}))",
            self.resource_type,
            self.resource_name,
            self.pattern_type,
            self.principal,
            self.host,
            self.operation,
            self.permission_type
        )
    }
}

/// What Describe/DeleteAcls select (Kafka's `AclBindingFilter`): `None` strings match any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclBindingFilter {
    /// ANY or one type.
    pub resource_type: ResourceType,
    /// `None`: any name.
    pub resource_name: Option<String>,
    /// ANY, MATCH, LITERAL or PREFIXED.
    pub pattern_type: PatternType,
    /// `None`: any principal.
    pub principal: Option<String>,
    /// `None`: any host.
    pub host: Option<String>,
    /// ANY or one operation.
    pub operation: AclOperation,
    /// ANY or one permission.
    pub permission_type: AclPermissionType,
}

impl AclBindingFilter {
    /// Kafka's `AclBindingFilter.isUnknown`: any of its enums unknown.
    pub fn is_unknown(&self) -> bool {
        self.pattern_is_unknown() || self.entry_is_unknown()
    }

    /// `ResourcePatternFilter.isUnknown`.
    pub fn pattern_is_unknown(&self) -> bool {
        self.resource_type == ResourceType::Unknown || self.pattern_type == PatternType::Unknown
    }

    /// `AccessControlEntryFilter.isUnknown`.
    pub fn entry_is_unknown(&self) -> bool {
        self.operation == AclOperation::Unknown
            || self.permission_type == AclPermissionType::Unknown
    }

    /// Kafka's `AclBindingFilter.matches`: the pattern filter (MATCH selects every stored
    /// pattern that would apply to the named resource) and the entry filter.
    pub fn matches(&self, acl: &AclBinding) -> bool {
        self.pattern_matches(acl) && self.entry_matches(acl)
    }

    fn pattern_matches(&self, acl: &AclBinding) -> bool {
        if self.resource_type != ResourceType::Any && self.resource_type != acl.resource_type {
            return false;
        }
        if !matches!(self.pattern_type, PatternType::Any | PatternType::Match)
            && self.pattern_type != acl.pattern_type
        {
            return false;
        }
        let Some(name) = &self.resource_name else {
            return true;
        };
        if self.pattern_type == PatternType::Any || self.pattern_type == acl.pattern_type {
            return *name == acl.resource_name;
        }
        match acl.pattern_type {
            PatternType::Literal => *name == acl.resource_name || acl.resource_name == WILDCARD,
            PatternType::Prefixed => name.starts_with(acl.resource_name.as_str()),
            // Kafka throws here; a stored ACL is always LITERAL or PREFIXED.
            _ => false,
        }
    }

    fn entry_matches(&self, acl: &AclBinding) -> bool {
        self.principal.as_ref().is_none_or(|p| *p == acl.principal)
            && self.host.as_ref().is_none_or(|h| *h == acl.host)
            && (self.operation == AclOperation::Any || self.operation == acl.operation)
            && (self.permission_type == AclPermissionType::Any
                || self.permission_type == acl.permission_type)
    }
}

/// The image's ACLs in Kafka's `StandardAcl` order (its `AclCache.aclsByResource`), with ids.
pub fn sorted_acls(
    acls: &std::collections::BTreeMap<uuid::Uuid, AccessControlEntryRecord>,
) -> Vec<(uuid::Uuid, AclBinding)> {
    let mut out: Vec<(uuid::Uuid, AclBinding)> = acls
        .iter()
        .map(|(id, r)| (*id, AclBinding::from_record(r)))
        .collect();
    out.sort_by(|a, b| a.1.standard_order(&b.1).then_with(|| a.0.cmp(&b.0)));
    out
}
