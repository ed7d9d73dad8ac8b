//! Delegation tokens against the whole controller, after Kafka's DelegationTokenRequestsTest,
//! DelegationTokenRequestsOnPlainTextTest and DelegationTokenRequestsWithDisableTokenFeatureTest
//! (core), with the manager's rules of DelegationTokenControlManager and the checks of
//! ControllerApis.
#![allow(clippy::unwrap_used)]

use base64::Engine;
use bytes::Bytes;
use kafka_protocol::messages::create_delegation_token_request::CreatableRenewers;
use kafka_protocol::messages::{
    CreateDelegationTokenRequest, CreateDelegationTokenResponse, DescribeDelegationTokenRequest,
    DescribeUserScramCredentialsRequest, ExpireDelegationTokenRequest,
    ExpireDelegationTokenResponse, RenewDelegationTokenRequest, RenewDelegationTokenResponse,
};
use kafka_protocol::protocol::StrBytes;

use super::context::Ctx;
use crate::codec::{RequestBody, ResponseBody};
use crate::common::security_protocol::SecurityProtocol;
use crate::controller::delegation_tokens::{
    DelegationTokenConfig, DELEGATION_TOKEN_AUTHORIZATION_FAILED, DELEGATION_TOKEN_AUTH_DISABLED,
    DELEGATION_TOKEN_EXPIRED, DELEGATION_TOKEN_NOT_FOUND, DELEGATION_TOKEN_OWNER_MISMATCH,
    DELEGATION_TOKEN_REQUEST_NOT_ALLOWED, INVALID_PRINCIPAL_TYPE,
};
use crate::controller::{errors, ControllerConfig};
use crate::metadata::record::MetadataRecord;
use crate::raft::Sender;

const MV: i16 = crate::common::release::mv::V4_1_IV1;
const HOUR_MS: u64 = 60 * 60 * 1000;

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

fn sasl_user(name: &str) -> Sender {
    Sender {
        principal: format!("User:{name}"),
        security_protocol: SecurityProtocol::SaslPlaintext,
        ..Sender::anonymous_local()
    }
}

/// An active controller with tokens on (key "testKey"), the requests from `User:owner` over
/// SASL_PLAINTEXT.
fn tokens_on(mv: i16) -> Ctx {
    let mut cfg = ControllerConfig::new(1, super::context::CLUSTER_ID);
    cfg.rng_seed = 42;
    cfg.delegation_tokens = Some(DelegationTokenConfig::with_secret("testKey"));
    let mut ctx = Ctx::with_config(cfg, mv);
    ctx.sender = sasl_user("owner");
    ctx
}

fn create_req(renewers: &[&str], max_lifetime_ms: i64) -> CreateDelegationTokenRequest {
    CreateDelegationTokenRequest::default()
        .with_renewers(
            renewers
                .iter()
                .map(|r| {
                    let (t, n) = r.split_once(':').unwrap();
                    CreatableRenewers::default()
                        .with_principal_type(s(t))
                        .with_principal_name(s(n))
                })
                .collect(),
        )
        .with_max_lifetime_ms(max_lifetime_ms)
}

fn create(ctx: &mut Ctx, req: CreateDelegationTokenRequest) -> CreateDelegationTokenResponse {
    match ctx.call(RequestBody::CreateDelegationToken(req), 3) {
        ResponseBody::CreateDelegationToken(r) => r,
        other => panic!("{other:?}"),
    }
}

fn renew(ctx: &mut Ctx, hmac: &Bytes, period_ms: i64) -> RenewDelegationTokenResponse {
    let req = RenewDelegationTokenRequest::default()
        .with_hmac(hmac.clone())
        .with_renew_period_ms(period_ms);
    match ctx.call(RequestBody::RenewDelegationToken(req), 2) {
        ResponseBody::RenewDelegationToken(r) => r,
        other => panic!("{other:?}"),
    }
}

fn expire(ctx: &mut Ctx, hmac: &Bytes, period_ms: i64) -> ExpireDelegationTokenResponse {
    let req = ExpireDelegationTokenRequest::default()
        .with_hmac(hmac.clone())
        .with_expiry_time_period_ms(period_ms);
    match ctx.call(RequestBody::ExpireDelegationToken(req), 2) {
        ResponseBody::ExpireDelegationToken(r) => r,
        other => panic!("{other:?}"),
    }
}

fn now(ctx: &Ctx) -> i64 {
    ctx.now_ms as i64
}

#[test]
fn the_hmac_is_javas_hmac_sha512_of_the_token_id() {
    // javax.crypto.Mac "HmacSHA512" with key "testKey" over "6r4rSEGYTaK7mVlAcJxXzQ", as
    // Java 17 computes it.
    let hmac = DelegationTokenConfig::with_secret("testKey").hmac("6r4rSEGYTaK7mVlAcJxXzQ");
    assert_eq!(
        base64::engine::general_purpose::STANDARD.encode(hmac),
        "7yhnYxVOhCe7YpEmy1cLEkE1ruPEcD5dTyEWa4w7dPKJgAikh6Fw0o8K/ZPOsebz0anFfi2C5EQdqJLxAqodUg=="
    );
}

#[test]
fn test_delegation_token_requests() {
    let mut ctx = tokens_on(MV);
    let t0 = now(&ctx);
    let day = 24 * HOUR_MS as i64;
    // Create token1 with renewer1: a record with Kafka's defaults (expiry 1 day, max 7 days).
    let from = ctx.log.end();
    let token1 = create(&mut ctx, create_req(&["User:renewer1"], -1));
    assert_eq!(token1.error_code, errors::NONE);
    assert_eq!(
        (
            token1.principal_type.as_str(),
            token1.principal_name.as_str()
        ),
        ("User", "owner")
    );
    assert_eq!(token1.token_requester_principal_name.as_str(), "owner");
    assert_eq!(token1.issue_timestamp_ms, t0);
    assert_eq!(token1.expiry_timestamp_ms, t0 + day);
    assert_eq!(token1.max_timestamp_ms, t0 + 7 * day);
    assert_eq!(token1.token_id.len(), 22, "a Kafka Uuid string");
    let cfg = DelegationTokenConfig::with_secret("testKey");
    assert_eq!(token1.hmac.as_ref(), cfg.hmac(&token1.token_id).as_slice());
    let records = ctx.log.records_from(from);
    let MetadataRecord::DelegationToken(r) = &records[0] else {
        panic!("{records:?}");
    };
    assert_eq!(r.owner, "User:owner");
    assert_eq!(r.requester, "User:owner");
    assert_eq!(r.renewers, vec!["User:renewer1".to_string()]);
    assert_eq!(r.token_id, token1.token_id.as_str());
    assert_eq!(ctx.image().delegation_tokens.len(), 1);

    let token2 = create(&mut ctx, create_req(&["User:renewer2"], -1));
    assert_ne!(token2.token_id, token1.token_id);
    assert_eq!(ctx.image().delegation_tokens.len(), 2);

    // Renew token1 an hour later, by its renewer: the expiry moves, the record is rewritten.
    ctx.advance(HOUR_MS);
    ctx.sender = sasl_user("renewer1");
    let renewed = renew(&mut ctx, &token1.hmac, -1);
    assert_eq!(renewed.error_code, errors::NONE);
    assert_eq!(renewed.expiry_timestamp_ms, now(&ctx) + day);
    let held = &ctx.image().delegation_tokens[token1.token_id.as_str()];
    assert_eq!(held.expiration_timestamp, renewed.expiry_timestamp_ms);
    // A shorter period than the default is kept; never beyond the maximum.
    let short = renew(&mut ctx, &token1.hmac, 1000);
    assert_eq!(short.expiry_timestamp_ms, now(&ctx) + 1000);
    // renewer1 may not renew token2; nobody renews an unknown HMAC.
    assert_eq!(
        renew(&mut ctx, &token2.hmac, -1).error_code,
        DELEGATION_TOKEN_OWNER_MISMATCH
    );
    assert_eq!(
        renew(&mut ctx, &Bytes::from_static(b"nope"), -1).error_code,
        DELEGATION_TOKEN_NOT_FOUND
    );

    // Expire both (the owner, negative period: removed at once).
    ctx.sender = sasl_user("owner");
    for t in [&token1, &token2] {
        let r = expire(&mut ctx, &t.hmac, -1);
        assert_eq!(r.error_code, errors::NONE);
        assert_eq!(r.expiry_timestamp_ms, now(&ctx));
    }
    assert!(ctx.image().delegation_tokens.is_empty());

    // An invalid renewer principal type.
    let bad = create(&mut ctx, create_req(&["Group:Renewer4"], -1));
    assert_eq!(bad.error_code, INVALID_PRINCIPAL_TYPE);
    assert!(ctx.image().delegation_tokens.is_empty());
    // Renewing a deleted token.
    assert_eq!(
        renew(&mut ctx, &token1.hmac, -1).error_code,
        DELEGATION_TOKEN_NOT_FOUND
    );

    // A token with a one-second lifetime is swept at the next check past its expiry.
    let token5 = create(&mut ctx, create_req(&["User:renewer1"], 1000));
    assert_eq!(token5.max_timestamp_ms, now(&ctx) + 1000);
    assert_eq!(token5.expiry_timestamp_ms, now(&ctx) + 1000);
    ctx.advance(2000);
    // Past its expiry but not yet swept: renewing it is refused as expired.
    ctx.sender = sasl_user("renewer1");
    assert_eq!(
        renew(&mut ctx, &token5.hmac, -1).error_code,
        DELEGATION_TOKEN_EXPIRED
    );
    assert_eq!(ctx.image().delegation_tokens.len(), 1);
    ctx.advance(HOUR_MS);
    assert!(
        ctx.image().delegation_tokens.is_empty(),
        "swept within an expiry check interval"
    );
    assert_eq!(
        expire(&mut ctx, &token5.hmac, -1).error_code,
        DELEGATION_TOKEN_NOT_FOUND
    );
}

#[test]
fn expire_with_a_period_shortens_and_an_expired_token_cannot_be() {
    let mut ctx = tokens_on(MV);
    let token = create(&mut ctx, create_req(&[], -1));
    let r = expire(&mut ctx, &token.hmac, 5000);
    assert_eq!(r.error_code, errors::NONE);
    assert_eq!(r.expiry_timestamp_ms, now(&ctx) + 5000);
    assert_eq!(
        ctx.image().delegation_tokens[token.token_id.as_str()].expiration_timestamp,
        now(&ctx) + 5000
    );
    ctx.advance(6000);
    // Expire checks the owner before the expiry (Renew checks the expiry first).
    ctx.sender = sasl_user("stranger");
    assert_eq!(
        expire(&mut ctx, &token.hmac, 5000).error_code,
        DELEGATION_TOKEN_OWNER_MISMATCH
    );
    assert_eq!(
        renew(&mut ctx, &token.hmac, 5000).error_code,
        DELEGATION_TOKEN_EXPIRED
    );
    ctx.sender = sasl_user("owner");
    assert_eq!(
        expire(&mut ctx, &token.hmac, 5000).error_code,
        DELEGATION_TOKEN_EXPIRED
    );
    // A negative period removes even an expired token.
    assert_eq!(expire(&mut ctx, &token.hmac, -1).error_code, errors::NONE);
    assert!(ctx.image().delegation_tokens.is_empty());
}

/// DelegationTokenRequestsWithDisableTokenFeatureTest: no secret key.
#[test]
fn test_delegation_token_requests_with_disabled_token_feature() {
    let mut ctx = Ctx::active(MV);
    ctx.sender = sasl_user("owner");
    let from = ctx.log.end();
    let r = create(&mut ctx, create_req(&[], -1));
    assert_eq!(r.error_code, DELEGATION_TOKEN_AUTH_DISABLED);
    assert_eq!(r.principal_name.as_str(), "owner");
    assert_eq!(
        renew(&mut ctx, &Bytes::from_static(b"x"), -1).error_code,
        DELEGATION_TOKEN_AUTH_DISABLED
    );
    assert_eq!(
        expire(&mut ctx, &Bytes::from_static(b"x"), -1).error_code,
        DELEGATION_TOKEN_AUTH_DISABLED
    );
    assert!(ctx.log.records_from(from).is_empty());
}

#[test]
fn metadata_version_before_3_6_iv2_refuses_tokens() {
    let mut ctx = tokens_on(crate::common::release::mv::DELEGATION_TOKENS - 1);
    let r = create(&mut ctx, create_req(&[], -1));
    assert_eq!(r.error_code, errors::UNSUPPORTED_VERSION);
    assert!(ctx.image().delegation_tokens.is_empty());
    // And no sweep is scheduled on such a controller.
    assert!(ctx
        .c
        .poll_timeout()
        .is_none_or(|t| t < ctx.now_ms + HOUR_MS));
}

/// DelegationTokenRequestsOnPlainTextTest: straight to the controller over PLAINTEXT, every
/// token request is refused before the controller, active or not.
#[test]
fn test_delegation_token_requests_on_plain_text() {
    let mut ctx = tokens_on(MV);
    ctx.sender = Sender::anonymous_local();
    let r = create(&mut ctx, create_req(&[], -1));
    assert_eq!(r.error_code, DELEGATION_TOKEN_REQUEST_NOT_ALLOWED);
    assert_eq!(r.issue_timestamp_ms, -1);
    assert_eq!(
        renew(&mut ctx, &Bytes::from_static(b"x"), -1).expiry_timestamp_ms,
        -1
    );
    ctx.lose_leadership(2);
    assert_eq!(
        renew(&mut ctx, &Bytes::from_static(b"x"), -1).error_code,
        DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    );
    assert_eq!(
        expire(&mut ctx, &Bytes::from_static(b"x"), -1).error_code,
        DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    );
}

#[test]
fn token_requests_are_refused_over_a_token_or_one_way_ssl_and_allowed_forwarded() {
    let mut ctx = tokens_on(MV);
    // A token-authenticated principal (here forwarded by a broker) may not ask for tokens.
    ctx.forwarded = true;
    ctx.sender = Sender {
        token_authenticated: true,
        ..sasl_user("owner")
    };
    let r = create(&mut ctx, create_req(&[], -1));
    assert_eq!(r.error_code, DELEGATION_TOKEN_REQUEST_NOT_ALLOWED);
    // One-way SSL (no client certificate: ANONYMOUS) directly.
    ctx.forwarded = false;
    ctx.sender = Sender {
        security_protocol: SecurityProtocol::Ssl,
        ..Sender::anonymous_local()
    };
    assert_eq!(
        create(&mut ctx, create_req(&[], -1)).error_code,
        DELEGATION_TOKEN_REQUEST_NOT_ALLOWED
    );
    // Forwarded over a PLAINTEXT broker connection: allowed (the broker checked its client).
    ctx.forwarded = true;
    ctx.sender = Sender {
        principal: "User:alice".into(),
        ..Sender::anonymous_local()
    };
    let ok = create(&mut ctx, create_req(&[], -1));
    assert_eq!(ok.error_code, errors::NONE);
    assert_eq!(ok.principal_name.as_str(), "alice");
}

#[test]
fn a_token_for_another_owner_needs_create_tokens_on_that_user() {
    let mut ctx = tokens_on(MV);
    let for_bob = || {
        create_req(&[], -1)
            .with_owner_principal_type(Some(s("User")))
            .with_owner_principal_name(Some(s("bob")))
    };
    // Without an authorizer every check passes.
    let r = create(&mut ctx, for_bob());
    assert_eq!(r.error_code, errors::NONE);
    assert_eq!(r.principal_name.as_str(), "bob");
    assert_eq!(r.token_requester_principal_name.as_str(), "owner");
    let held = ctx.image().delegation_tokens[r.token_id.as_str()].clone();
    assert_eq!(
        (held.owner.as_str(), held.requester.as_str()),
        ("User:bob", "User:owner")
    );
    // The owner bob may renew it, the requester may not (Kafka: owner or renewers only).
    ctx.sender = sasl_user("bob");
    assert_eq!(renew(&mut ctx, &r.hmac, -1).error_code, errors::NONE);

    // With the StandardAuthorizer and no ACL, the requester is refused for bob but may
    // create its own.
    let mut cfg = ctx.c.config().clone();
    cfg.authorizer = Some(
        crate::metadata::authorizer::AuthorizerConfig::parse(Some("User:admin"), None).unwrap(),
    );
    let mut ctx = Ctx::with_config(cfg, MV);
    ctx.sender = sasl_user("owner");
    let refused = create(&mut ctx, for_bob());
    assert_eq!(refused.error_code, DELEGATION_TOKEN_AUTHORIZATION_FAILED);
    assert_eq!(refused.principal_name.as_str(), "bob");
    assert_eq!(refused.token_requester_principal_name.as_str(), "owner");
    assert_eq!(
        create(&mut ctx, create_req(&[], -1)).error_code,
        errors::NONE
    );
    ctx.sender = sasl_user("admin");
    assert_eq!(create(&mut ctx, for_bob()).error_code, errors::NONE);
}

#[test]
fn a_v2_answer_has_no_requester_and_an_owner_name_without_type_fails() {
    let mut ctx = tokens_on(MV);
    let r = match ctx.call(RequestBody::CreateDelegationToken(create_req(&[], -1)), 2) {
        ResponseBody::CreateDelegationToken(r) => r,
        other => panic!("{other:?}"),
    };
    assert_eq!(r.error_code, errors::NONE);
    assert_eq!(r.token_requester_principal_name.as_str(), "");
    let nameless_type = create_req(&[], -1)
        .with_owner_principal_type(None)
        .with_owner_principal_name(Some(s("bob")));
    let r = create(&mut ctx, nameless_type);
    assert_eq!(r.error_code, errors::UNKNOWN_SERVER_ERROR);
    assert_eq!(r.principal_name.as_str(), "ANONYMOUS");
}

#[test]
fn a_token_reply_lost_with_the_leadership_is_not_controller() {
    let mut ctx = tokens_on(MV);
    let id = ctx.send(RequestBody::CreateDelegationToken(create_req(&[], -1)), 3);
    assert!(ctx.answer(id).is_none(), "parked until committed");
    ctx.lose_leadership(2);
    match ctx.answer(id) {
        Some(ResponseBody::CreateDelegationToken(r)) => {
            assert_eq!(r.error_code, errors::NOT_CONTROLLER);
            assert_eq!(r.principal_name.as_str(), "ANONYMOUS");
            assert_eq!(r.token_id.as_str(), "");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn describe_token_and_scram_apis_are_advertised_but_not_handled_as_by_kafka() {
    let mut ctx = tokens_on(MV);
    match ctx.call(
        RequestBody::DescribeDelegationToken(DescribeDelegationTokenRequest::default()),
        3,
    ) {
        ResponseBody::DescribeDelegationToken(r) => {
            assert_eq!(r.error_code, errors::UNKNOWN_SERVER_ERROR);
            assert!(r.tokens.is_empty());
        }
        other => panic!("{other:?}"),
    }
    let users = vec![
        kafka_protocol::messages::describe_user_scram_credentials_request::UserName::default()
            .with_name(s("alice")),
    ];
    match ctx.call(
        RequestBody::DescribeUserScramCredentials(
            DescribeUserScramCredentialsRequest::default().with_users(Some(users)),
        ),
        0,
    ) {
        ResponseBody::DescribeUserScramCredentials(r) => {
            assert_eq!(r.error_code, errors::UNKNOWN_SERVER_ERROR);
            assert_eq!(r.results.len(), 1);
            assert_eq!(r.results[0].user.as_str(), "");
            // Kafka's ApiError hides an unexpected error's text (tool_parity compares).
            assert_eq!(r.error_message, None);
            assert_eq!(r.results[0].error_message, None);
        }
        other => panic!("{other:?}"),
    }
}
