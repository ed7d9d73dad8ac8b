//! The request each step of gen_security.rs becomes (the same on both sides: ACLs, quotas and
//! credentials carry no broker epoch and no topic id).

use bytes::Bytes;
use ferrokraft::codec::RequestBody;
use kafka_protocol::messages::alter_client_quotas_request::{EntityData, EntryData, OpData};
use kafka_protocol::messages::alter_user_scram_credentials_request::{
    ScramCredentialDeletion, ScramCredentialUpsertion,
};
use kafka_protocol::messages::create_acls_request::AclCreation;
use kafka_protocol::messages::create_delegation_token_request::CreatableRenewers;
use kafka_protocol::messages::delete_acls_request::DeleteAclsFilter;
use kafka_protocol::messages::{
    AlterClientQuotasRequest, AlterUserScramCredentialsRequest, CreateAclsRequest,
    CreateDelegationTokenRequest, DeleteAclsRequest, ExpireDelegationTokenRequest,
    RenewDelegationTokenRequest,
};
use kafka_protocol::protocol::StrBytes;

use crate::gen_security::SecStep;

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

fn opt(v: &Option<String>) -> Option<StrBytes> {
    v.as_deref().map(s)
}

/// The HMAC a renewal or expiry of a token no one created carries (the same on both sides).
const UNKNOWN_HMAC: [u8; 8] = *b"nosuchtk";

/// `tokens`: the HMACs of the tokens this side created, in creation order.
pub fn request(step: &SecStep, tokens: &[Vec<u8>]) -> (RequestBody, i16) {
    let hmac = |k: &Option<usize>| {
        let known = k.and_then(|k| (!tokens.is_empty()).then(|| tokens[k % tokens.len()].clone()));
        Bytes::from(known.unwrap_or_else(|| UNKNOWN_HMAC.to_vec()))
    };
    match step {
        SecStep::CreateToken {
            owner,
            renewers,
            max_lifetime_ms,
            version,
        } => {
            let mut req = CreateDelegationTokenRequest::default()
                .with_renewers(
                    renewers
                        .iter()
                        .map(|(t, n)| {
                            CreatableRenewers::default()
                                .with_principal_type(s(t))
                                .with_principal_name(s(n))
                        })
                        .collect(),
                )
                .with_max_lifetime_ms(*max_lifetime_ms);
            // The owner fields exist from v3.
            if let (Some((kind, name)), 3..) = (owner, *version) {
                req = req
                    .with_owner_principal_type(kind.as_deref().map(s))
                    .with_owner_principal_name(Some(s(name)));
            }
            (RequestBody::CreateDelegationToken(req), *version)
        }
        SecStep::RenewToken {
            token,
            renew_period_ms,
            version,
        } => (
            RequestBody::RenewDelegationToken(
                RenewDelegationTokenRequest::default()
                    .with_hmac(hmac(token))
                    .with_renew_period_ms(*renew_period_ms),
            ),
            *version,
        ),
        SecStep::ExpireToken {
            token,
            expiry_period_ms,
            version,
        } => (
            RequestBody::ExpireDelegationToken(
                ExpireDelegationTokenRequest::default()
                    .with_hmac(hmac(token))
                    .with_expiry_time_period_ms(*expiry_period_ms),
            ),
            *version,
        ),
        SecStep::CreateAcls { creations, version } => {
            let creations = creations
                .iter()
                .map(|a| {
                    AclCreation::default()
                        .with_resource_type(a.resource_type)
                        .with_resource_name(s(a.name.as_deref().unwrap_or("")))
                        .with_resource_pattern_type(a.pattern_type)
                        .with_principal(s(a.principal.as_deref().unwrap_or("")))
                        .with_host(s(a.host.as_deref().unwrap_or("")))
                        .with_operation(a.operation)
                        .with_permission_type(a.permission)
                })
                .collect();
            (
                RequestBody::CreateAcls(CreateAclsRequest::default().with_creations(creations)),
                *version,
            )
        }
        SecStep::DeleteAcls { filters, version } => {
            let filters = filters
                .iter()
                .map(|a| {
                    DeleteAclsFilter::default()
                        .with_resource_type_filter(a.resource_type)
                        .with_resource_name_filter(opt(&a.name))
                        .with_pattern_type_filter(a.pattern_type)
                        .with_principal_filter(opt(&a.principal))
                        .with_host_filter(opt(&a.host))
                        .with_operation(a.operation)
                        .with_permission_type(a.permission)
                })
                .collect();
            (
                RequestBody::DeleteAcls(DeleteAclsRequest::default().with_filters(filters)),
                *version,
            )
        }
        SecStep::AlterClientQuotas {
            entries,
            validate_only,
            version,
        } => {
            let entries = entries
                .iter()
                .map(|e| {
                    EntryData::default()
                        .with_entity(
                            e.entity
                                .iter()
                                .map(|(t, n)| {
                                    EntityData::default()
                                        .with_entity_type(s(t))
                                        .with_entity_name(opt(n))
                                })
                                .collect(),
                        )
                        .with_ops(
                            e.ops
                                .iter()
                                .map(|(k, v, remove)| {
                                    OpData::default()
                                        .with_key(s(k))
                                        .with_value(*v)
                                        .with_remove(*remove)
                                })
                                .collect(),
                        )
                })
                .collect();
            (
                RequestBody::AlterClientQuotas(
                    AlterClientQuotasRequest::default()
                        .with_entries(entries)
                        .with_validate_only(*validate_only),
                ),
                *version,
            )
        }
        SecStep::AlterScram {
            deletions,
            upsertions,
            version,
        } => {
            let deletions = deletions
                .iter()
                .map(|(user, mechanism)| {
                    ScramCredentialDeletion::default()
                        .with_name(s(user))
                        .with_mechanism(*mechanism)
                })
                .collect();
            let upsertions = upsertions
                .iter()
                .map(|u| {
                    ScramCredentialUpsertion::default()
                        .with_name(s(&u.user))
                        .with_mechanism(u.mechanism)
                        .with_iterations(u.iterations)
                        .with_salt(Bytes::from(u.salt.clone()))
                        .with_salted_password(Bytes::from(u.salted_password.clone()))
                })
                .collect();
            (
                RequestBody::AlterUserScramCredentials(
                    AlterUserScramCredentialsRequest::default()
                        .with_deletions(deletions)
                        .with_upsertions(upsertions),
                ),
                *version,
            )
        }
    }
}
