//! Delegation tokens (Kafka's `DelegationTokenControlManager` and the token checks of its
//! `ControllerApis`): CreateDelegationToken writes a DelegationTokenRecord, Renew and Expire
//! rewrite it with a new expiry (Expire with a negative period removes it), and the active
//! controller's sweep removes the tokens past their expiry every
//! `delegation.token.expiry.check.interval.ms`.
//!
//! ```text
//!   request ─ token-authenticated, or direct on PLAINTEXT, or direct on SSL as ANONYMOUS?
//!       ─▶ DELEGATION_TOKEN_REQUEST_NOT_ALLOWED (answered at once, active or not)
//!     └ Create for another owner without CREATE_TOKENS on that user ─▶ …_AUTHORIZATION_FAILED
//!     └ manager (active controller): secret key set? ─ metadata.version ≥ 3.6-IV2?
//!          Create: renewers all `User`? ─▶ DelegationTokenRecord (expiry = min(max, now + renew))
//!          Renew/Expire: token of this HMAC (committed) ─ expired? ─ owner or renewer?
//!             ─▶ DelegationTokenRecord with the new expiry, or RemoveDelegationTokenRecord
//!   sweep ─▶ RemoveDelegationTokenRecord for every committed token past its expiry
//! ```
//!
//! A token's HMAC is HMAC-SHA512 of its id under `delegation.token.secret.key`; Kafka looks
//! tokens up by HMAC in a cache its publisher fills from the committed image, so Renew and
//! Expire see committed tokens only, as here (each HMAC computed from the committed tokens;
//! tokens are few, and Kafka computes every HMAC at publication instead).

use crate::codec::error_response::create_token_refusal;
pub use crate::common::errors::{
    DELEGATION_TOKEN_AUTHORIZATION_FAILED, DELEGATION_TOKEN_AUTH_DISABLED,
    DELEGATION_TOKEN_EXPIRED, DELEGATION_TOKEN_NOT_FOUND, DELEGATION_TOKEN_OWNER_MISMATCH,
    DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, INVALID_PRINCIPAL_TYPE,
};
use hmac::{Hmac, Mac};
use kafka_protocol::messages::{
    CreateDelegationTokenRequest, CreateDelegationTokenResponse, ExpireDelegationTokenRequest,
    ExpireDelegationTokenResponse, RenewDelegationTokenRequest, RenewDelegationTokenResponse,
};
use kafka_protocol::protocol::StrBytes;
use sha2::Sha512;

use super::errors;
use super::result::{ControllerResult, RecordOut};
use crate::codec::{RequestBody, ResponseBody};
use crate::common::principal::Principal;
use crate::common::security_protocol::SecurityProtocol;
use crate::metadata::image::MetadataImage;
use crate::metadata::record::MetadataRecord;
use crate::metadata::records::{DelegationTokenRecord, RemoveDelegationTokenRecord};
use crate::raft::Sender;

/// Kafka's `DelegationTokenManager.ErrorTimestamp`.
const ERROR_TIMESTAMP_MS: i64 = -1;

/// The `delegation.token.*` settings; present only when `delegation.token.secret.key` is set
/// and not empty (Kafka's `tokenAuthEnabled`).
#[derive(Clone, PartialEq, Eq)]
pub struct DelegationTokenConfig {
    /// `delegation.token.secret.key`: the HMAC key, the same on every broker and controller.
    pub secret_key: String,
    /// `delegation.token.max.lifetime.ms` (7 days).
    pub max_lifetime_ms: i64,
    /// `delegation.token.expiry.time.ms` (1 day): the renewal period.
    pub expiry_time_ms: i64,
    /// `delegation.token.expiry.check.interval.ms` (1 hour): the sweep's period.
    pub expiry_check_interval_ms: u64,
}

impl std::fmt::Debug for DelegationTokenConfig {
    // The key is a password (Kafka's PASSWORD type prints `[hidden]`).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DelegationTokenConfig")
            .field("secret_key", &"[hidden]")
            .field("max_lifetime_ms", &self.max_lifetime_ms)
            .field("expiry_time_ms", &self.expiry_time_ms)
            .field("expiry_check_interval_ms", &self.expiry_check_interval_ms)
            .finish()
    }
}

impl DelegationTokenConfig {
    /// Kafka's defaults with `secret_key`.
    pub fn with_secret(secret_key: impl Into<String>) -> Self {
        Self {
            secret_key: secret_key.into(),
            max_lifetime_ms: 7 * 24 * 60 * 60 * 1000,
            expiry_time_ms: 24 * 60 * 60 * 1000,
            expiry_check_interval_ms: 60 * 60 * 1000,
        }
    }

    /// The HMAC of a token id (`DelegationTokenManager.createHmac`).
    pub fn hmac(&self, token_id: &str) -> Vec<u8> {
        // HMAC takes a key of any length; `new_from_slice` cannot fail for it.
        let Ok(mut mac) = Hmac::<Sha512>::new_from_slice(self.secret_key.as_bytes()) else {
            return Vec::new();
        };
        mac.update(token_id.as_bytes());
        mac.finalize().into_bytes().to_vec()
    }
}

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

/// The owner a CreateDelegationToken asks for: its `OwnerPrincipalName` (v3+) when given and
/// not empty, else the requester. `None` when a name comes without a type (Kafka's
/// `KafkaPrincipal` constructor throws then).
fn requested_owner(req: &CreateDelegationTokenRequest, requester: &Principal) -> Option<Principal> {
    match req.owner_principal_name.as_deref() {
        Some(name) if !name.is_empty() => {
            let principal_type = req.owner_principal_type.as_deref()?;
            Some(Principal {
                principal_type: principal_type.to_string(),
                name: name.to_string(),
                token_authenticated: false,
            })
        }
        _ => Some(requester.clone()),
    }
}

/// Kafka's `ControllerApis.allowTokenRequests`: no token requests over a token-authenticated
/// connection, nor directly over PLAINTEXT or one-way SSL (forwarded ones may come over
/// PLAINTEXT: the broker checked its own client).
fn token_requests_allowed(sender: &Sender, forwarded: bool) -> bool {
    !(sender.token_authenticated
        || (!forwarded && sender.security_protocol == SecurityProtocol::Plaintext)
        || (!forwarded
            && sender.security_protocol == SecurityProtocol::Ssl
            && sender.principal == "User:ANONYMOUS"))
}

/// The answer `ControllerApis` gives a token request before the controller sees it, `None`
/// when it goes on. `may_create_for` says whether the requester holds CREATE_TOKENS on a
/// user (the authorizer's check; always true without an authorizer).
pub fn refusal(
    body: &RequestBody,
    version: i16,
    sender: Option<&Sender>,
    forwarded: bool,
    may_create_for: &dyn Fn(&str) -> bool,
) -> Option<ResponseBody> {
    // The node's own requests are never token requests.
    let sender = sender?;
    let allowed = token_requests_allowed(sender, forwarded);
    match body {
        RequestBody::CreateDelegationToken(req) => {
            let requester = Principal::parse(&sender.principal);
            let Some(owner) = requested_owner(req, &requester) else {
                // Kafka's handler throws before answering: the generic error answer.
                return Some(ResponseBody::CreateDelegationToken(create_token_refusal(
                    version,
                    errors::UNKNOWN_SERVER_ERROR,
                    &Principal::anonymous(),
                    &Principal::anonymous(),
                )));
            };
            let code = if !allowed {
                DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
            } else if owner != requester && !may_create_for(&owner.to_string()) {
                DELEGATION_TOKEN_AUTHORIZATION_FAILED
            } else {
                return None;
            };
            Some(ResponseBody::CreateDelegationToken(create_token_refusal(
                version, code, &owner, &requester,
            )))
        }
        RequestBody::RenewDelegationToken(_) if !allowed => {
            Some(ResponseBody::RenewDelegationToken(
                RenewDelegationTokenResponse::default()
                    .with_error_code(DELEGATION_TOKEN_REQUEST_NOT_ALLOWED)
                    .with_expiry_timestamp_ms(ERROR_TIMESTAMP_MS),
            ))
        }
        RequestBody::ExpireDelegationToken(_) if !allowed => {
            Some(ResponseBody::ExpireDelegationToken(
                ExpireDelegationTokenResponse::default()
                    .with_error_code(DELEGATION_TOKEN_REQUEST_NOT_ALLOWED)
                    .with_expiry_timestamp_ms(ERROR_TIMESTAMP_MS),
            ))
        }
        _ => None,
    }
}

/// What a token request is served with besides the image.
#[derive(Debug, Clone, Copy)]
pub struct TokenContext<'a> {
    /// The settings; `None`: `delegation.token.secret.key` not set.
    pub cfg: Option<&'a DelegationTokenConfig>,
    /// The requester (`Type:name`).
    pub requester: &'a str,
    /// The time now (Kafka reads its clock in the manager).
    pub now_ms: i64,
}

/// Kafka's `sum`: saturating at `Long.MAX_VALUE`.
fn sum(now_ms: i64, duration_ms: i64) -> i64 {
    now_ms.saturating_add(duration_ms)
}

/// Why a token request cannot be served at all: tokens off, or metadata.version too old.
fn unusable(image: &MetadataImage, cfg: Option<&DelegationTokenConfig>) -> Option<i16> {
    if cfg.is_none() {
        return Some(DELEGATION_TOKEN_AUTH_DISABLED);
    }
    if image
        .metadata_version()
        .is_none_or(|mv| mv < crate::common::release::mv::DELEGATION_TOKENS)
    {
        return Some(errors::UNSUPPORTED_VERSION);
    }
    None
}

/// Kafka's `createDelegationToken` (the owner already checked by [`refusal`]).
pub fn create(
    image: &MetadataImage,
    ctx: TokenContext<'_>,
    version: i16,
    req: &CreateDelegationTokenRequest,
    token_id: String,
) -> ControllerResult<CreateDelegationTokenResponse> {
    let requester = Principal::parse(ctx.requester);
    let owner = requested_owner(req, &requester).unwrap_or_else(|| requester.clone());
    // Kafka's response before the outcome: owner and requester set, the rest defaults.
    let mut response = CreateDelegationTokenResponse::default()
        .with_principal_type(s(&owner.principal_type))
        .with_principal_name(s(&owner.name));
    if version > 2 {
        response = response
            .with_token_requester_principal_type(s(&requester.principal_type))
            .with_token_requester_principal_name(s(&requester.name));
    }
    let fail = |code| ControllerResult::response_only(response.clone().with_error_code(code));
    if let Some(code) = unusable(image, ctx.cfg) {
        return fail(code);
    }
    let Some(cfg) = ctx.cfg else {
        return fail(DELEGATION_TOKEN_AUTH_DISABLED);
    };
    let max_lifetime_ms = if req.max_lifetime_ms > 0 {
        cfg.max_lifetime_ms.min(req.max_lifetime_ms)
    } else {
        cfg.max_lifetime_ms
    };
    let max_timestamp = sum(ctx.now_ms, max_lifetime_ms);
    let expiry_timestamp = max_timestamp.min(sum(ctx.now_ms, cfg.expiry_time_ms));
    let mut renewers = Vec::with_capacity(req.renewers.len());
    for r in &req.renewers {
        if r.principal_type.as_str() != "User" {
            return fail(INVALID_PRINCIPAL_TYPE);
        }
        renewers.push(format!("{}:{}", r.principal_type, r.principal_name));
    }
    let hmac = cfg.hmac(&token_id);
    let record = DelegationTokenRecord {
        owner: owner.to_string(),
        requester: requester.to_string(),
        renewers,
        issue_timestamp: ctx.now_ms,
        max_timestamp,
        expiration_timestamp: expiry_timestamp,
        token_id: token_id.clone(),
        ..Default::default()
    };
    let response = response
        .with_error_code(errors::NONE)
        .with_issue_timestamp_ms(ctx.now_ms)
        .with_expiry_timestamp_ms(expiry_timestamp)
        .with_max_timestamp_ms(max_timestamp)
        .with_token_id(s(&token_id))
        .with_hmac(hmac.into());
    ControllerResult::of(
        vec![RecordOut::new(MetadataRecord::DelegationToken(record), 0)],
        response,
    )
}

/// The committed token whose HMAC is `hmac` (Kafka's `tokenCache.tokenForHmac`).
fn token_for_hmac<'a>(
    committed: &'a MetadataImage,
    cfg: &DelegationTokenConfig,
    hmac: &[u8],
) -> Option<&'a DelegationTokenRecord> {
    committed
        .delegation_tokens
        .values()
        .find(|t| cfg.hmac(&t.token_id) == hmac)
}

/// Kafka's `allowedToRenew`: the owner or a renewer.
fn may_renew(token: &DelegationTokenRecord, who: &Principal) -> bool {
    Principal::parse(&token.owner) == *who
        || token.renewers.iter().any(|r| Principal::parse(r) == *who)
}

fn expired(token: &DelegationTokenRecord, now_ms: i64) -> bool {
    token.max_timestamp < now_ms || token.expiration_timestamp < now_ms
}

/// The token of `hmac` the requester may renew or expire, or the error code.
fn owned_token<'a>(
    image: &MetadataImage,
    committed: &'a MetadataImage,
    ctx: TokenContext<'a>,
    hmac: &[u8],
    check_expiry: bool,
) -> Result<(&'a DelegationTokenRecord, &'a DelegationTokenConfig), i16> {
    if let Some(code) = unusable(image, ctx.cfg) {
        return Err(code);
    }
    let Some(cfg) = ctx.cfg else {
        return Err(DELEGATION_TOKEN_AUTH_DISABLED);
    };
    let Some(token) = token_for_hmac(committed, cfg, hmac) else {
        return Err(DELEGATION_TOKEN_NOT_FOUND);
    };
    // Renew checks the expiry before the owner; Expire after (Kafka's order).
    if check_expiry && expired(token, ctx.now_ms) {
        return Err(DELEGATION_TOKEN_EXPIRED);
    }
    if !may_renew(token, &Principal::parse(ctx.requester)) {
        return Err(DELEGATION_TOKEN_OWNER_MISMATCH);
    }
    Ok((token, cfg))
}

fn renewed(token: &DelegationTokenRecord, expiry_timestamp: i64) -> Vec<RecordOut> {
    let record = DelegationTokenRecord {
        expiration_timestamp: expiry_timestamp,
        ..token.clone()
    };
    vec![RecordOut::new(MetadataRecord::DelegationToken(record), 0)]
}

/// Kafka's `renewDelegationToken`.
pub fn renew(
    image: &MetadataImage,
    committed: &MetadataImage,
    ctx: TokenContext<'_>,
    req: &RenewDelegationTokenRequest,
) -> ControllerResult<RenewDelegationTokenResponse> {
    let (token, cfg) = match owned_token(image, committed, ctx, &req.hmac, true) {
        Ok(found) => found,
        Err(code) => {
            return ControllerResult::response_only(
                RenewDelegationTokenResponse::default().with_error_code(code),
            )
        }
    };
    let renew_ms = if req.renew_period_ms > 0 {
        cfg.expiry_time_ms.min(req.renew_period_ms)
    } else {
        cfg.expiry_time_ms
    };
    let expiry_timestamp = token.max_timestamp.min(ctx.now_ms.saturating_add(renew_ms));
    ControllerResult::of(
        renewed(token, expiry_timestamp),
        RenewDelegationTokenResponse::default()
            .with_error_code(errors::NONE)
            .with_expiry_timestamp_ms(expiry_timestamp),
    )
}

/// Kafka's `expireDelegationToken`: a negative period removes the token at once.
pub fn expire(
    image: &MetadataImage,
    committed: &MetadataImage,
    ctx: TokenContext<'_>,
    req: &ExpireDelegationTokenRequest,
) -> ControllerResult<ExpireDelegationTokenResponse> {
    let response = ExpireDelegationTokenResponse::default();
    let token = match owned_token(image, committed, ctx, &req.hmac, false) {
        Ok((token, _)) => token,
        Err(code) => return ControllerResult::response_only(response.with_error_code(code)),
    };
    if req.expiry_time_period_ms < 0 {
        let record = RemoveDelegationTokenRecord {
            token_id: token.token_id.clone(),
            ..Default::default()
        };
        return ControllerResult::of(
            vec![RecordOut::new(
                MetadataRecord::RemoveDelegationToken(record),
                0,
            )],
            response
                .with_error_code(errors::NONE)
                .with_expiry_timestamp_ms(ctx.now_ms),
        );
    }
    if expired(token, ctx.now_ms) {
        return ControllerResult::response_only(response.with_error_code(DELEGATION_TOKEN_EXPIRED));
    }
    let expiry_timestamp = token
        .max_timestamp
        .min(sum(ctx.now_ms, req.expiry_time_period_ms));
    ControllerResult::of(
        renewed(token, expiry_timestamp),
        response
            .with_error_code(errors::NONE)
            .with_expiry_timestamp_ms(expiry_timestamp),
    )
}

/// Kafka's `sweepExpiredDelegationTokens`: a removal for every committed token past its
/// expiry or its maximum lifetime.
pub fn sweep_expired(committed: &MetadataImage, now_ms: i64) -> Vec<RecordOut> {
    committed
        .delegation_tokens
        .values()
        .filter(|t| expired(t, now_ms))
        .map(|t| {
            tracing::info!(
                "Delegation token expired for token: {} for owner: {}",
                t.token_id,
                t.owner
            );
            RecordOut::new(
                MetadataRecord::RemoveDelegationToken(RemoveDelegationTokenRecord {
                    token_id: t.token_id.clone(),
                    ..Default::default()
                }),
                0,
            )
        })
        .collect()
}

/// Whether the sweep runs on an active controller whose image is `image` (Kafka schedules it
/// at activation when tokens are on and the metadata.version holds them).
pub fn sweep_enabled(image: &MetadataImage, cfg: Option<&DelegationTokenConfig>) -> bool {
    unusable(image, cfg).is_none()
}
