//! ACLs (Kafka's `AclControlManager`, with the checks its `AclApis` makes first): CreateAcls
//! turns each new binding into an AccessControlEntryRecord with a fresh id, DeleteAcls each
//! stored binding a filter matches into a RemoveAccessControlEntryRecord, DescribeAcls reads
//! the committed image.
//!
//! ```text
//!   CreateAcls ─ any ANY/MATCH enum? ─▶ every result UNKNOWN_SERVER_ERROR (Kafka's binding throws)
//!              ─ per creation: CLUSTER name, empty name, validateNewAcl ─▶ INVALID_REQUEST
//!                (4.4: host pattern not empty; a CIDR range needs metadata.version 4.4-IV1,
//!                else UNSUPPORTED_VERSION, and valid syntax)
//!              ─ already stored (or earlier in the request)? ─▶ success, no record
//!              ─▶ AccessControlEntryRecord(new id)                      one atomic batch
//!   DeleteAcls ─ per filter: unknown enums ─▶ INVALID_REQUEST
//!              ─ matching stored bindings ─▶ RemoveAccessControlEntryRecord each, deduplicated
//!   DescribeAcls ─ committed ACLs the filter matches, grouped by resource pattern
//! ```
//!
//! Without an authorizer (`authorizer.class.name` unset) Kafka answers all three with
//! SECURITY_DISABLED on any controller, before the quorum controller sees them.

use crate::codec::error_response::{acl_creation_result, create_acls_error, delete_acls_error};
pub use crate::common::errors::SECURITY_DISABLED;
use std::collections::BTreeSet;

use kafka_protocol::messages::delete_acls_request::DeleteAclsFilter;
use kafka_protocol::messages::delete_acls_response::{
    DeleteAclsFilterResult, DeleteAclsMatchingAcl,
};
use kafka_protocol::messages::describe_acls_response::{AclDescription, DescribeAclsResource};
use kafka_protocol::messages::{
    CreateAclsRequest, CreateAclsResponse, DeleteAclsRequest, DeleteAclsResponse,
    DescribeAclsRequest, DescribeAclsResponse,
};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::errors::{self, ApiError};
use super::result::MAX_RECORDS_PER_USER_OP;
use super::result::{ControllerResult, RecordOut};
use crate::codec::{RequestBody, ResponseBody};
use crate::common::release::{mv, Release};
use crate::metadata::acl::{
    sorted_acls, AclBinding, AclBindingFilter, AclOperation, AclPermissionType, PatternType,
    ResourceType, CLUSTER_NAME, WILDCARD,
};
use crate::metadata::cidr;
use crate::metadata::image::MetadataImage;
use crate::metadata::record::MetadataRecord;
use crate::metadata::records::RemoveAccessControlEntryRecord;
use crate::raft::Rng;

fn str_bytes(s: &str) -> StrBytes {
    StrBytes::from_string(s.to_string())
}

/// Kafka's answer to an ACL API on a controller without an authorizer; `None` for any other
/// request.
pub fn security_disabled(body: &RequestBody) -> Option<ResponseBody> {
    match body {
        RequestBody::DescribeAcls(_) => Some(ResponseBody::DescribeAcls(
            DescribeAclsResponse::default()
                .with_error_code(SECURITY_DISABLED)
                .with_error_message(Some(StrBytes::from_static_str(
                    "No Authorizer is configured on the broker",
                ))),
        )),
        RequestBody::CreateAcls(req) => Some(ResponseBody::CreateAcls(create_acls_error(
            req,
            &ApiError::new(SECURITY_DISABLED, "No Authorizer is configured."),
        ))),
        RequestBody::DeleteAcls(req) => Some(ResponseBody::DeleteAcls(delete_acls_error(
            req,
            &ApiError::new(SECURITY_DISABLED, "No Authorizer is configured."),
        ))),
        _ => None,
    }
}

fn invalid(message: String) -> ApiError {
    ApiError::new(errors::INVALID_REQUEST, message)
}

/// Kafka's `AclControlManager.validateNewAcl` of `release` at metadata.version `level`.
fn validate_new_acl(acl: &AclBinding, release: Release, level: i16) -> Result<(), ApiError> {
    if matches!(acl.resource_type, ResourceType::Unknown | ResourceType::Any) {
        return Err(invalid(format!(
            "Invalid resourceType {}",
            acl.resource_type
        )));
    }
    if !matches!(
        acl.pattern_type,
        PatternType::Literal | PatternType::Prefixed
    ) {
        return Err(invalid(format!("Invalid patternType {}", acl.pattern_type)));
    }
    if matches!(acl.operation, AclOperation::Unknown | AclOperation::Any) {
        return Err(invalid(format!("Invalid operation {}", acl.operation)));
    }
    if !matches!(
        acl.permission_type,
        AclPermissionType::Deny | AclPermissionType::Allow
    ) {
        return Err(invalid(format!(
            "Invalid permissionType {}",
            acl.permission_type
        )));
    }
    if acl.resource_name.is_empty() {
        return Err(invalid("Resource name should not be empty".to_string()));
    }
    // Kafka 4.1's last check: the principal must be `Type:name`.
    if !acl.principal.contains(':') {
        return Err(invalid(format!(
            "Could not parse principal from `{}` (no colon is present separating the principal type from the principal name)",
            acl.principal
        )));
    }
    if release.checks_acl_host_patterns() {
        validate_host_pattern(&acl.host, level)?;
    }
    Ok(())
}

/// Kafka 4.4's `validateHostPattern`: `*` and literal hosts pass unchecked; a range (any `/`)
/// needs metadata.version 4.4-IV1 (the image's) and valid CIDR syntax.
fn validate_host_pattern(host: &str, level: i16) -> Result<(), ApiError> {
    if host.is_empty() {
        return Err(invalid("Host pattern cannot be null or empty".to_string()));
    }
    if host == WILDCARD || !cidr::is_cidr(host) {
        return Ok(());
    }
    if level < mv::CIDR_ACLS {
        return Err(ApiError::new(
            errors::UNSUPPORTED_VERSION,
            "CIDR-based ACL host patterns require metadata version 4.4-IV1 or higher.",
        ));
    }
    cidr::validate(host).map_err(|why| invalid(format!("Invalid CIDR notation '{host}': {why}")))
}

/// AclApis' checks before the authorizer: the CLUSTER resource's one name, a non-empty name.
fn validate_in_api(acl: &AclBinding) -> Result<(), ApiError> {
    if acl.resource_type == ResourceType::Cluster && acl.resource_name != CLUSTER_NAME {
        return Err(invalid(format!(
            "The only valid name for the CLUSTER resource is {CLUSTER_NAME}"
        )));
    }
    if acl.resource_name.is_empty() {
        return Err(invalid("Invalid empty resource name".to_string()));
    }
    Ok(())
}

/// Kafka's `ResourcePattern` and `AccessControlEntry` constructors throw on these, so its
/// AclApis fails the whole request.
fn binding_throws(acl: &AclBinding) -> bool {
    acl.resource_type == ResourceType::Any
        || matches!(acl.pattern_type, PatternType::Any | PatternType::Match)
        || acl.operation == AclOperation::Any
        || acl.permission_type == AclPermissionType::Any
}

/// Kafka's `createAcls` (AclApis' checks, then AclControlManager's).
pub fn create_acls(
    image: &MetadataImage,
    release: Release,
    rng: &mut Rng,
    req: &CreateAclsRequest,
) -> ControllerResult<CreateAclsResponse> {
    let bindings: Vec<AclBinding> = req
        .creations
        .iter()
        .map(|c| AclBinding {
            resource_type: ResourceType::from_code(c.resource_type),
            resource_name: c.resource_name.to_string(),
            pattern_type: PatternType::from_code(c.resource_pattern_type),
            principal: c.principal.to_string(),
            host: c.host.to_string(),
            operation: AclOperation::from_code(c.operation),
            permission_type: AclPermissionType::from_code(c.permission_type),
        })
        .collect();
    if bindings.iter().any(binding_throws) {
        return ControllerResult::response_only(create_acls_error(
            req,
            &ApiError::code(errors::UNKNOWN_SERVER_ERROR),
        ));
    }
    let mut existing: BTreeSet<AclBinding> =
        image.acls.values().map(AclBinding::from_record).collect();
    let mut taken: BTreeSet<Uuid> = image.acls.keys().copied().collect();
    let mut records = Vec::new();
    let mut results = Vec::with_capacity(bindings.len());
    let level = image.metadata_version().unwrap_or(0);
    for acl in bindings {
        if let Err(e) = validate_in_api(&acl).and_then(|()| validate_new_acl(&acl, release, level))
        {
            results.push(acl_creation_result(Some(&e)));
            continue;
        }
        if !existing.contains(&acl) {
            let id = loop {
                let id = rng.uuid();
                if taken.insert(id) {
                    break id;
                }
            };
            records.push(RecordOut::new(
                MetadataRecord::AccessControlEntry(acl.to_record(id)),
                0,
            ));
            existing.insert(acl);
        }
        results.push(acl_creation_result(None));
    }
    if records.len() > MAX_RECORDS_PER_USER_OP {
        // Kafka's bounded record list throws; nothing is written.
        return ControllerResult::response_only(create_acls_error(
            req,
            &ApiError::code(errors::UNKNOWN_SERVER_ERROR),
        ));
    }
    ControllerResult::of(records, CreateAclsResponse::default().with_results(results))
}

fn filter_of(f: &DeleteAclsFilter) -> AclBindingFilter {
    AclBindingFilter {
        resource_type: ResourceType::from_code(f.resource_type_filter),
        resource_name: f.resource_name_filter.as_ref().map(|s| s.to_string()),
        pattern_type: PatternType::from_code(f.pattern_type_filter),
        principal: f.principal_filter.as_ref().map(|s| s.to_string()),
        host: f.host_filter.as_ref().map(|s| s.to_string()),
        operation: AclOperation::from_code(f.operation),
        permission_type: AclPermissionType::from_code(f.permission_type),
    }
}

/// Kafka's `Uuid.hashCode` (the key hash of its `idToAcl` timeline map).
fn uuid_hash(id: &Uuid) -> i32 {
    let (hi, lo) = id.as_u64_pair();
    let h = hi ^ lo;
    ((h >> 32) as i32) ^ (h as i32)
}

/// Kafka's `deleteAcls`: each filter's matches, the removals deduplicated across filters.
pub fn delete_acls(
    image: &MetadataImage,
    req: &DeleteAclsRequest,
) -> ControllerResult<DeleteAclsResponse> {
    // Kafka walks its id → ACL timeline map, so matches come in that map's order.
    let mut stored: Vec<(Uuid, AclBinding)> = image
        .acls
        .iter()
        .map(|(id, r)| (*id, AclBinding::from_record(r)))
        .collect();
    crate::common::java::timeline_hash_order(&mut stored, |(id, _)| uuid_hash(id));
    let mut removed: BTreeSet<Uuid> = BTreeSet::new();
    let mut results = Vec::with_capacity(req.filters.len());
    for f in &req.filters {
        let filter = filter_of(f);
        if filter.pattern_is_unknown() {
            results.push(filter_error(invalid("Unknown patternFilter.".to_string())));
            continue;
        }
        if filter.entry_is_unknown() {
            results.push(filter_error(invalid("Unknown entryFilter.".to_string())));
            continue;
        }
        let matched: Vec<&(Uuid, AclBinding)> =
            stored.iter().filter(|(_, b)| filter.matches(b)).collect();
        let new_ids = matched
            .iter()
            .filter(|(id, _)| !removed.contains(id))
            .count();
        if removed.len() + new_ids > MAX_RECORDS_PER_USER_OP {
            results.push(filter_error(ApiError::code(errors::UNKNOWN_SERVER_ERROR)));
            continue;
        }
        removed.extend(matched.iter().map(|(id, _)| *id));
        results.push(
            DeleteAclsFilterResult::default()
                .with_error_message(None)
                .with_matching_acls(matched.iter().map(|(_, b)| matching_acl(b)).collect()),
        );
    }
    let records = removed
        .into_iter()
        .map(|id| {
            RecordOut::new(
                MetadataRecord::RemoveAccessControlEntry(RemoveAccessControlEntryRecord {
                    id,
                    ..Default::default()
                }),
                0,
            )
        })
        .collect();
    ControllerResult::of(
        records,
        DeleteAclsResponse::default().with_filter_results(results),
    )
}

fn filter_error(e: ApiError) -> DeleteAclsFilterResult {
    DeleteAclsFilterResult::default()
        .with_error_code(e.code)
        .with_error_message(e.message.as_deref().map(str_bytes))
}

fn matching_acl(b: &AclBinding) -> DeleteAclsMatchingAcl {
    DeleteAclsMatchingAcl::default()
        .with_error_message(None)
        .with_resource_type(b.resource_type.code())
        .with_resource_name(str_bytes(&b.resource_name))
        .with_pattern_type(b.pattern_type.code())
        .with_principal(str_bytes(&b.principal))
        .with_host(str_bytes(&b.host))
        .with_operation(b.operation.code())
        .with_permission_type(b.permission_type.code())
}

/// Kafka's DescribeAcls over the committed ACLs: the matching bindings grouped by resource
/// pattern. Kafka groups them in a HashMap keyed by enum identity hashes, an order that differs
/// from one JVM to the next; ferrokraft keeps StandardAcl order.
pub fn describe_acls(committed: &MetadataImage, req: &DescribeAclsRequest) -> DescribeAclsResponse {
    let filter = AclBindingFilter {
        resource_type: ResourceType::from_code(req.resource_type_filter),
        resource_name: req.resource_name_filter.as_ref().map(|s| s.to_string()),
        pattern_type: PatternType::from_code(req.pattern_type_filter),
        principal: req.principal_filter.as_ref().map(|s| s.to_string()),
        host: req.host_filter.as_ref().map(|s| s.to_string()),
        operation: AclOperation::from_code(req.operation),
        permission_type: AclPermissionType::from_code(req.permission_type),
    };
    let mut resources: Vec<DescribeAclsResource> = Vec::new();
    for (_, b) in sorted_acls(&committed.acls) {
        if !filter.matches(&b) {
            continue;
        }
        let description = AclDescription::default()
            .with_principal(str_bytes(&b.principal))
            .with_host(str_bytes(&b.host))
            .with_operation(b.operation.code())
            .with_permission_type(b.permission_type.code());
        let same = |r: &&mut DescribeAclsResource| {
            r.resource_type == b.resource_type.code()
                && r.resource_name.as_str() == b.resource_name
                && r.pattern_type == b.pattern_type.code()
        };
        match resources.iter_mut().find(same) {
            Some(r) => r.acls.push(description),
            None => resources.push(
                DescribeAclsResource::default()
                    .with_resource_type(b.resource_type.code())
                    .with_resource_name(str_bytes(&b.resource_name))
                    .with_pattern_type(b.pattern_type.code())
                    .with_acls(vec![description]),
            ),
        }
    }
    DescribeAclsResponse::default()
        .with_error_message(None)
        .with_resources(resources)
}
