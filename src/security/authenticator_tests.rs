//! SaslServerAuthenticatorTest's cases and the re-authentication rules of KafkaChannel, on the
//! sans-IO authenticator: requests in, steps out.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, DescribeQuorumRequest, SaslAuthenticateRequest,
    SaslHandshakeRequest,
};
use kafka_protocol::protocol::StrBytes;

use super::authenticator::{api_name, Reply, SaslServerAuthenticator, SaslServerSettings, Step};
use super::scram::{ScramCredential, ScramMechanism};
use super::{Principal, SaslMechanism, SASL_AUTHENTICATION_FAILED, UNSUPPORTED_SASL_MECHANISM};
use crate::codec::header::RequestHeader;
use crate::codec::request::InboundRequest;
use crate::codec::{RequestBody, ResponseBody};
use crate::common::secret::Secret;

fn settings(max_reauth_ms: u64) -> Arc<SaslServerSettings> {
    let mut users = BTreeMap::new();
    users.insert("alice".to_string(), Secret::from("alice-secret"));
    users.insert("bob".to_string(), Secret::from("bob-secret"));
    let mechanisms = vec![
        SaslMechanism::Plain,
        SaslMechanism::Scram(ScramMechanism::Sha256),
    ];
    Arc::new(SaslServerSettings {
        max_reauth_ms: mechanisms.iter().map(|m| (*m, max_reauth_ms)).collect(),
        enabled_mechanisms: mechanisms,
        plain_users: users,
        api_versions_max_version: 4,
    })
}

fn request(api_key: ApiKey, version: i16, body: RequestBody) -> InboundRequest {
    InboundRequest::Request {
        header: RequestHeader {
            api_key,
            api_version: version,
            correlation_id: 7,
            client_id: "test".into(),
            header_version: 2,
        },
        body,
    }
}

fn api_versions(name: &str) -> InboundRequest {
    request(
        ApiKey::ApiVersions,
        3,
        RequestBody::ApiVersions(
            ApiVersionsRequest::default()
                .with_client_software_name(StrBytes::from_string(name.into()))
                .with_client_software_version(StrBytes::from_static_str("4.1.2")),
        ),
    )
}

fn handshake(mechanism: &str, version: i16) -> InboundRequest {
    request(
        ApiKey::SaslHandshake,
        version,
        RequestBody::SaslHandshake(
            SaslHandshakeRequest::default().with_mechanism(StrBytes::from_string(mechanism.into())),
        ),
    )
}

fn authenticate(token: &[u8], version: i16) -> InboundRequest {
    request(
        ApiKey::SaslAuthenticate,
        version,
        RequestBody::SaslAuthenticate(
            SaslAuthenticateRequest::default().with_auth_bytes(Bytes::copy_from_slice(token)),
        ),
    )
}

fn plain(user: &str, password: &str) -> Vec<u8> {
    super::plain::client_message(user, password)
}

fn no_scram(_: ScramMechanism, _: &str) -> Option<ScramCredential> {
    None
}

fn step(a: &mut SaslServerAuthenticator, r: InboundRequest, now_ms: u64) -> Step {
    a.on_request(r, now_ms, &no_scram)
}

/// Authenticates `a` as `user` with PLAIN at `now_ms`; the last reply.
fn login(a: &mut SaslServerAuthenticator, user: &str, now_ms: u64) -> Reply {
    let Step::Respond(_) = step(a, handshake("PLAIN", 1), now_ms) else {
        panic!("the handshake is answered");
    };
    match step(
        a,
        authenticate(&plain(user, &format!("{user}-secret")), 2),
        now_ms,
    ) {
        Step::Authenticated {
            reply: Some(reply),
            principal,
            ..
        } => {
            assert_eq!(principal, Principal::user(user));
            reply
        }
        other => panic!("not authenticated: {other:?}"),
    }
}

fn authenticate_response(reply: &Reply) -> &kafka_protocol::messages::SaslAuthenticateResponse {
    match &reply.body {
        ResponseBody::SaslAuthenticate(r) => r,
        other => panic!("not a SaslAuthenticate answer: {other:?}"),
    }
}

#[test]
fn test_latest_api_versions_request_then_plain() {
    let mut a = SaslServerAuthenticator::new(settings(0));
    // ApiVersions is the handler's to answer, before the handshake.
    assert!(matches!(
        step(&mut a, api_versions("apache-kafka-java"), 0),
        Step::Forward(_)
    ));
    let Step::Respond(reply) = step(&mut a, handshake("PLAIN", 1), 0) else {
        panic!("the handshake is answered");
    };
    let ResponseBody::SaslHandshake(r) = &reply.body else {
        panic!("{reply:?}");
    };
    assert_eq!(r.error_code, 0);
    let names: Vec<&str> = r.mechanisms.iter().map(|m| m.as_str()).collect();
    assert_eq!(names, ["PLAIN", "SCRAM-SHA-256"]);
    assert_eq!((reply.version, reply.correlation_id), (1, 7));
    let Step::Authenticated {
        reply: Some(reply),
        principal,
        ..
    } = step(&mut a, authenticate(&plain("alice", "alice-secret"), 2), 0)
    else {
        panic!("not authenticated");
    };
    assert_eq!(principal.to_string(), "User:alice");
    let r = authenticate_response(&reply);
    assert_eq!((r.error_code, r.session_lifetime_ms), (0, 0));
    assert!(a.is_complete());
    assert!(!a.session_expired(u64::MAX));
    // From now on every request is the handler's.
    assert!(matches!(
        step(&mut a, api_versions("x"), 1),
        Step::Forward(_)
    ));
}

#[test]
fn test_invalid_api_versions_request_keeps_the_state() {
    let mut a = SaslServerAuthenticator::new(settings(0));
    // An invalid one (software name) is answered INVALID_REQUEST by the handler and the client
    // may try again; so may one at an unknown version.
    assert!(matches!(
        step(&mut a, api_versions("-bad-"), 0),
        Step::Forward(_)
    ));
    let unknown = InboundRequest::UnsupportedApiVersions {
        header: RequestHeader {
            api_key: ApiKey::ApiVersions,
            api_version: 9,
            correlation_id: 1,
            client_id: String::new(),
            header_version: 2,
        },
    };
    assert!(matches!(step(&mut a, unknown, 0), Step::Forward(_)));
    assert!(matches!(
        step(&mut a, api_versions("apache-kafka-java"), 0),
        Step::Forward(_)
    ));
    // A second valid one is an illegal state: closed without an answer.
    assert!(matches!(
        step(&mut a, api_versions("apache-kafka-java"), 0),
        Step::Close { .. }
    ));
}

#[test]
fn test_unexpected_request_type() {
    let describe = || {
        request(
            ApiKey::DescribeQuorum,
            2,
            RequestBody::DescribeQuorum(DescribeQuorumRequest::default()),
        )
    };
    let mut a = SaslServerAuthenticator::new(settings(0));
    assert_eq!(
        step(&mut a, describe(), 0),
        Step::Fail {
            reply: None,
            reason: "Unexpected Kafka request of type DESCRIBE_QUORUM during SASL handshake."
                .into()
        }
    );
    let mut a = SaslServerAuthenticator::new(settings(0));
    let _ = step(&mut a, handshake("PLAIN", 1), 0);
    let Step::Fail { reason, reply } = step(&mut a, describe(), 0) else {
        panic!("refused");
    };
    assert_eq!(
        reason,
        "Unexpected Kafka request of type DESCRIBE_QUORUM during SASL authentication."
    );
    // During the exchange Kafka answers with the request's own error response
    // (ILLEGAL_SASL_STATE and the reason), then closes; before the handshake it does not.
    let reply = reply.expect("an error answer");
    match reply.body {
        ResponseBody::DescribeQuorum(r) => {
            assert_eq!(r.error_code, crate::security::ILLEGAL_SASL_STATE);
            assert_eq!(r.error_message.as_deref(), Some(reason.as_str()));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(reply.version, 2);
    // Nothing more is served once failed.
    assert!(matches!(
        step(&mut a, api_versions("x"), 0),
        Step::Close { .. }
    ));
}

#[test]
fn unsupported_mechanism_is_answered_with_the_enabled_ones() {
    let mut a = SaslServerAuthenticator::new(settings(0));
    let Step::Fail {
        reply: Some(reply),
        reason,
    } = step(&mut a, handshake("GSSAPI", 1), 0)
    else {
        panic!("refused");
    };
    assert_eq!(reason, "Unsupported SASL mechanism GSSAPI");
    let ResponseBody::SaslHandshake(r) = &reply.body else {
        panic!()
    };
    assert_eq!(r.error_code, UNSUPPORTED_SASL_MECHANISM);
    assert_eq!(r.mechanisms.len(), 2);
}

#[test]
fn wrong_credentials_get_kafkas_message() {
    for (user, password) in [("alice", "bob-secret"), ("mallory", "x"), ("", "x")] {
        let mut a = SaslServerAuthenticator::new(settings(0));
        let _ = step(&mut a, handshake("PLAIN", 1), 0);
        let Step::Fail {
            reply: Some(reply),
            reason,
        } = step(&mut a, authenticate(&plain(user, password), 2), 0)
        else {
            panic!("refused");
        };
        let r = authenticate_response(&reply);
        assert_eq!(r.error_code, SASL_AUTHENTICATION_FAILED);
        assert_eq!(r.error_message.as_deref(), Some(reason.as_str()));
        let want = if user.is_empty() {
            "Authentication failed: username not specified"
        } else {
            "Authentication failed: Invalid username or password"
        };
        assert_eq!(reason, want);
        assert!(!a.is_complete());
    }
}

#[test]
fn a_scram_exchange_needs_the_nonce_supplied_first() {
    let mut a = SaslServerAuthenticator::new(settings(0));
    let _ = step(&mut a, handshake("SCRAM-SHA-256", 1), 0);
    assert!(a.needs_scram_nonce());
    let Step::Fail { reason, .. } = step(&mut a, authenticate(b"n,,n=alice,r=abc", 2), 0) else {
        panic!("refused");
    };
    assert_eq!(
        reason,
        "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-256"
    );
}

#[test]
fn raw_tokens_after_a_version_0_handshake() {
    let mut a = SaslServerAuthenticator::new(settings(0));
    assert!(matches!(
        step(&mut a, handshake("PLAIN", 0), 0),
        Step::Respond(_)
    ));
    assert!(a.expects_raw_token());
    match a.on_token(&plain("bob", "bob-secret"), 0, &no_scram) {
        Step::Authenticated {
            reply: None,
            raw: Some(token),
            principal,
        } => {
            assert!(token.is_empty());
            assert_eq!(principal, Principal::user("bob"));
        }
        other => panic!("{other:?}"),
    }
    // A refusal has no answer to carry in raw mode.
    let mut a = SaslServerAuthenticator::new(settings(0));
    let _ = step(&mut a, handshake("PLAIN", 0), 0);
    assert!(matches!(
        a.on_token(&plain("bob", "nope"), 0, &no_scram),
        Step::Fail { reply: None, .. }
    ));
}

#[test]
fn test_session_lifetime_is_connections_max_reauth_ms() {
    let mut a = SaslServerAuthenticator::new(settings(10_000));
    let reply = login(&mut a, "alice", 1_000);
    assert_eq!(authenticate_response(&reply).session_lifetime_ms, 10_000);
    assert_eq!(a.session_expiry_ms(), Some(11_000));
    assert!(a.client_supports_reauthentication());
    assert!(!a.session_expired(11_000));
    assert!(a.session_expired(11_001));
}

#[test]
fn reauthentication_as_the_same_principal() {
    let mut a = SaslServerAuthenticator::new(settings(10_000));
    login(&mut a, "alice", 0);
    // Re-authentication renews the session.
    login(&mut a, "alice", 8_000);
    assert_eq!(a.session_expiry_ms(), Some(18_000));
    // Not twice within a second: the handshake then goes to the handler (ILLEGAL_SASL_STATE).
    assert!(matches!(
        step(&mut a, handshake("PLAIN", 1), 8_500),
        Step::Forward(_)
    ));
    login(&mut a, "alice", 9_000);
}

#[test]
fn reauthentication_cannot_change_the_principal() {
    let mut a = SaslServerAuthenticator::new(settings(10_000));
    login(&mut a, "alice", 0);
    let _ = step(&mut a, handshake("PLAIN", 1), 5_000);
    let Step::Fail {
        reply: Some(reply),
        reason,
    } = step(&mut a, authenticate(&plain("bob", "bob-secret"), 2), 5_000)
    else {
        panic!("refused");
    };
    assert_eq!(
        reason,
        "Cannot change principals during re-authentication from User.alice: User.bob"
    );
    assert_eq!(
        authenticate_response(&reply).error_code,
        SASL_AUTHENTICATION_FAILED
    );
}

#[test]
fn reauthentication_cannot_change_the_mechanism() {
    let mut a = SaslServerAuthenticator::new(settings(10_000));
    login(&mut a, "alice", 0);
    // The handshake is answered NONE; the next token is refused without an answer.
    assert!(matches!(
        step(&mut a, handshake("SCRAM-SHA-256", 1), 5_000),
        Step::Respond(_)
    ));
    assert_eq!(
        step(&mut a, authenticate(b"n,,n=alice,r=x", 2), 5_000),
        Step::Fail {
            reply: None,
            reason: "SASL mechanism 'SCRAM-SHA-256' requested by client is not supported for \
                     re-authentication of mechanism 'PLAIN'"
                .into()
        }
    );
}

#[test]
fn without_a_session_lifetime_a_handshake_is_the_handlers() {
    let mut a = SaslServerAuthenticator::new(settings(0));
    login(&mut a, "alice", 0);
    assert!(matches!(
        step(&mut a, handshake("PLAIN", 1), 5_000),
        Step::Forward(_)
    ));
    assert!(matches!(
        step(&mut a, authenticate(b"x", 2), 5_000),
        Step::Forward(_)
    ));
}

#[test]
fn api_names_are_kafkas_enum_names() {
    assert_eq!(api_name(ApiKey::DescribeQuorum), "DESCRIBE_QUORUM");
    assert_eq!(api_name(ApiKey::ApiVersions), "API_VERSIONS");
    assert_eq!(api_name(ApiKey::Fetch), "FETCH");
}

#[test]
fn a_scram_exchange_with_a_credential_from_the_image() {
    let credential = ScramCredential::from_password(ScramMechanism::Sha256, "pw", b"salt", 4096);
    let lookup = |m: ScramMechanism, user: &str| {
        (m == ScramMechanism::Sha256 && user == "alice").then(|| credential.clone())
    };
    let mut a = SaslServerAuthenticator::new(settings(0));
    let _ = a.on_request(handshake("SCRAM-SHA-256", 1), 0, &lookup);
    a.set_scram_nonce("server-nonce".into());
    let mut client =
        super::scram::ScramClient::new(ScramMechanism::Sha256, "alice", "pw", "c".into());
    let Step::Respond(reply) = a.on_request(authenticate(&client.first_message(), 2), 0, &lookup)
    else {
        panic!("server-first");
    };
    let token = authenticate_response(&reply).auth_bytes.clone();
    let last = client.evaluate(&token).unwrap().unwrap();
    let Step::Authenticated {
        reply: Some(reply),
        principal,
        ..
    } = a.on_request(authenticate(&last, 2), 0, &lookup)
    else {
        panic!("authenticated");
    };
    assert_eq!(principal, Principal::user("alice"));
    assert_eq!(
        client
            .evaluate(&authenticate_response(&reply).auth_bytes)
            .unwrap(),
        None
    );
}

/// A delegation token's credential: the token `t1` of `owner`, whose HMAC is "hmac", with
/// `lifetime_ms` left.
struct Token {
    lifetime_ms: i64,
}

impl super::scram::ScramCredentials for Token {
    fn user(&self, _m: ScramMechanism, _user: &str) -> Option<ScramCredential> {
        None
    }

    fn token(&self, m: ScramMechanism, id: &str) -> Option<super::scram::TokenCredential> {
        (id == "t1").then(|| {
            super::scram::TokenCredential::new(m, id, "hmac", "owner".into(), self.lifetime_ms)
        })
    }
}

/// A token exchange at `now_ms` with `connections.max.reauth.ms` = `max_reauth_ms`: the
/// principal and the session lifetime the server tells.
fn token_login(max_reauth_ms: u64, lifetime_ms: i64, now_ms: u64) -> (Principal, i64) {
    let creds = Token { lifetime_ms };
    let mut a = SaslServerAuthenticator::new(settings(max_reauth_ms));
    let _ = a.on_request(handshake("SCRAM-SHA-256", 1), now_ms, &creds);
    a.set_scram_nonce("server-nonce".into());
    let mut client =
        super::scram::ScramClient::new(ScramMechanism::Sha256, "t1", "hmac", "c".into())
            .with_token_auth();
    let Step::Respond(reply) =
        a.on_request(authenticate(&client.first_message(), 2), now_ms, &creds)
    else {
        panic!("server-first");
    };
    let last = client
        .evaluate(&authenticate_response(&reply).auth_bytes)
        .unwrap()
        .unwrap();
    let Step::Authenticated {
        reply: Some(reply),
        principal,
        ..
    } = a.on_request(authenticate(&last, 2), now_ms, &creds)
    else {
        panic!("authenticated");
    };
    (principal, authenticate_response(&reply).session_lifetime_ms)
}

#[test]
fn a_delegation_token_session_ends_with_the_token() {
    // The principal is the owner, token-authenticated (it may not ask for tokens itself).
    let (principal, lifetime) = token_login(0, 5_000, 100);
    assert_eq!(principal.name, "owner");
    assert!(principal.token_authenticated);
    // Without connections.max.reauth.ms the token's time left is the session's (Kafka's
    // CREDENTIAL_LIFETIME_MS); with it, the shorter of the two.
    assert_eq!(lifetime, 5_000);
    assert_eq!(token_login(3_000, 5_000, 100).1, 3_000);
    assert_eq!(token_login(10_000, 5_000, 100).1, 5_000);
    // An expired but not yet swept token authenticates for a session of zero.
    assert_eq!(token_login(10_000, -50, 100).1, 0);
}
