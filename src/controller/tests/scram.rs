//! AlterUserScramCredentialsRequestTest (Kafka's core tests of the controller's
//! `ScramControlManager`), against the controller alone.
#![allow(clippy::unwrap_used)]

use bytes::Bytes;
use kafka_protocol::messages::alter_user_scram_credentials_request::{
    ScramCredentialDeletion, ScramCredentialUpsertion,
};
use kafka_protocol::messages::{
    AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse,
};
use kafka_protocol::protocol::StrBytes;

use super::context::Ctx;
use crate::codec::{RequestBody, ResponseBody};
use crate::controller::errors;
use crate::controller::scram::{DUPLICATE_RESOURCE, RESOURCE_NOT_FOUND, UNACCEPTABLE_CREDENTIAL};
use crate::security::scram::{ScramCredential, ScramMechanism};
use crate::security::UNSUPPORTED_SASL_MECHANISM;

const SHA_256: i8 = 1;
const SHA_512: i8 = 2;
const MV: i16 = crate::common::release::mv::V4_1_IV1;

fn deletion(name: &str, mechanism: i8) -> ScramCredentialDeletion {
    ScramCredentialDeletion::default()
        .with_name(StrBytes::from_string(name.to_string()))
        .with_mechanism(mechanism)
}

fn upsertion(name: &str, mechanism: i8, iterations: i32) -> ScramCredentialUpsertion {
    ScramCredentialUpsertion::default()
        .with_name(StrBytes::from_string(name.to_string()))
        .with_mechanism(mechanism)
        .with_iterations(iterations)
        .with_salt(Bytes::from_static(b"salt"))
        .with_salted_password(Bytes::from_static(b"saltedPassword"))
}

fn alter(
    ctx: &mut Ctx,
    deletions: Vec<ScramCredentialDeletion>,
    upsertions: Vec<ScramCredentialUpsertion>,
) -> AlterUserScramCredentialsResponse {
    let req = AlterUserScramCredentialsRequest::default()
        .with_deletions(deletions)
        .with_upsertions(upsertions);
    match ctx.call(RequestBody::AlterUserScramCredentials(req), 0) {
        ResponseBody::AlterUserScramCredentials(r) => r,
        other => panic!("{other:?}"),
    }
}

/// (user, error code, message) per result, in the order given.
fn results(r: &AlterUserScramCredentialsResponse) -> Vec<(String, i16, Option<String>)> {
    r.results
        .iter()
        .map(|x| {
            (
                x.user.to_string(),
                x.error_code,
                x.error_message.as_ref().map(|m| m.to_string()),
            )
        })
        .collect()
}

fn codes(r: &AlterUserScramCredentialsResponse) -> Vec<(String, i16)> {
    let mut out: Vec<(String, i16)> = results(r).into_iter().map(|(u, c, _)| (u, c)).collect();
    out.sort();
    out
}

/// The image's credentials as (mechanism, user, iterations).
fn held(ctx: &Ctx) -> Vec<(i8, String, i32)> {
    ctx.image()
        .scram
        .values()
        .map(|r| (r.mechanism, r.name.clone(), r.iterations))
        .collect()
}

#[test]
fn test_alter_nothing() {
    let mut ctx = Ctx::active(MV);
    let end = ctx.image().scram.len();
    let r = alter(&mut ctx, vec![], vec![]);
    assert!(r.results.is_empty());
    assert_eq!(ctx.image().scram.len(), end);
}

#[test]
fn test_alter_same_thing_twice() {
    let mut ctx = Ctx::active(MV);
    let init = alter(
        &mut ctx,
        vec![],
        vec![
            upsertion("user1", SHA_256, 4096),
            upsertion("user2", SHA_256, 4096),
        ],
    );
    assert!(init.results.iter().all(|x| x.error_code == errors::NONE));
    let before = held(&ctx);
    for (deletions, upsertions) in [
        (
            vec![deletion("user1", SHA_256), deletion("user1", SHA_256)],
            vec![
                upsertion("user2", SHA_256, 4096),
                upsertion("user2", SHA_256, 4096),
            ],
        ),
        (
            vec![deletion("user1", SHA_256), deletion("user2", SHA_256)],
            vec![
                upsertion("user1", SHA_256, 4096),
                upsertion("user2", SHA_256, 4096),
            ],
        ),
    ] {
        let r = alter(&mut ctx, deletions, upsertions);
        assert_eq!(
            results(&r),
            ["user1", "user2"]
                .iter()
                .map(|u| (
                    u.to_string(),
                    DUPLICATE_RESOURCE,
                    Some("A user credential cannot be altered twice in the same request".into())
                ))
                .collect::<Vec<_>>()
        );
    }
    assert_eq!(held(&ctx), before, "an all-refused request writes nothing");
}

#[test]
fn test_alter_empty_user() {
    let mut ctx = Ctx::active(MV);
    let r = alter(
        &mut ctx,
        vec![deletion("", SHA_256)],
        vec![upsertion("", SHA_256, 4096)],
    );
    assert_eq!(
        results(&r),
        vec![(
            String::new(),
            UNACCEPTABLE_CREDENTIAL,
            Some("Username must not be empty".into())
        )]
    );
}

#[test]
fn test_alter_unknown_mechanism() {
    let mut ctx = Ctx::active(MV);
    let r = alter(
        &mut ctx,
        vec![
            deletion("user1", 0),
            deletion("user1", SHA_256),
            deletion("user2", 10),
        ],
        vec![
            upsertion("user4", 0, 8192),
            upsertion("user4", SHA_256, 8192),
            upsertion("user5", 10, 8192),
            upsertion("user6", 0, 8192),
        ],
    );
    assert_eq!(r.results.len(), 5);
    assert!(r
        .results
        .iter()
        .all(|x| x.error_code == UNSUPPORTED_SASL_MECHANISM
            && x.error_message.as_deref() == Some("Unknown SCRAM mechanism")));
    assert!(held(&ctx).is_empty());
}

#[test]
fn test_alter_too_few_iterations() {
    let mut ctx = Ctx::active(MV);
    let r = alter(&mut ctx, vec![], vec![upsertion("user1", SHA_256, 1)]);
    assert_eq!(
        results(&r),
        vec![(
            "user1".into(),
            UNACCEPTABLE_CREDENTIAL,
            Some("Too few iterations".into())
        )]
    );
}

#[test]
fn test_alter_too_many_iterations() {
    let mut ctx = Ctx::active(MV);
    let r = alter(
        &mut ctx,
        vec![],
        vec![upsertion("user1", SHA_256, i32::MAX)],
    );
    assert_eq!(
        results(&r),
        vec![(
            "user1".into(),
            UNACCEPTABLE_CREDENTIAL,
            Some("Too many iterations".into())
        )]
    );
    // The bounds themselves are accepted.
    let r = alter(
        &mut ctx,
        vec![],
        vec![
            upsertion("user1", SHA_256, 4096),
            upsertion("user2", SHA_512, 16_384),
        ],
    );
    assert!(r.results.iter().all(|x| x.error_code == errors::NONE));
}

#[test]
fn test_delete_something_that_does_not_exist() {
    let mut ctx = Ctx::active(MV);
    let r = alter(&mut ctx, vec![deletion("user1", SHA_256)], vec![]);
    assert_eq!(
        results(&r),
        vec![(
            "user1".into(),
            RESOURCE_NOT_FOUND,
            Some("Attempt to delete a user credential that does not exist".into())
        )]
    );
    // A credential under the other mechanism is not the one asked for.
    alter(&mut ctx, vec![], vec![upsertion("user1", SHA_512, 4096)]);
    let r = alter(&mut ctx, vec![deletion("user1", SHA_256)], vec![]);
    assert_eq!(codes(&r), vec![("user1".into(), RESOURCE_NOT_FOUND)]);
}

#[test]
fn test_alter_not_controller() {
    let mut ctx = Ctx::active(MV);
    ctx.lose_leadership(2);
    let req = AlterUserScramCredentialsRequest::default()
        .with_deletions(vec![deletion("user1", SHA_256)])
        .with_upsertions(vec![upsertion("user2", SHA_512, 4096)]);
    let id = ctx.send(RequestBody::AlterUserScramCredentials(req), 0);
    let Some(ResponseBody::AlterUserScramCredentials(r)) = ctx.answer(id) else {
        panic!("answered at once");
    };
    assert_eq!(
        codes(&r),
        vec![
            ("user1".into(), errors::NOT_CONTROLLER),
            ("user2".into(), errors::NOT_CONTROLLER)
        ]
    );
}

#[test]
fn test_alter_and_describe() {
    let mut ctx = Ctx::active(MV);
    let r = alter(&mut ctx, vec![], vec![upsertion("user1", SHA_256, 4096)]);
    assert_eq!(codes(&r), vec![("user1".into(), errors::NONE)]);
    let r = alter(
        &mut ctx,
        vec![],
        vec![
            upsertion("user1", SHA_512, 8192),
            upsertion("user2", SHA_512, 8192),
            upsertion("user3@user3.com", SHA_512, 8192),
        ],
    );
    assert_eq!(r.results.len(), 3);
    assert!(r.results.iter().all(|x| x.error_code == errors::NONE));
    assert_eq!(
        held(&ctx),
        vec![
            (SHA_256, "user1".into(), 4096),
            (SHA_512, "user1".into(), 8192),
            (SHA_512, "user2".into(), 8192),
            (SHA_512, "user3@user3.com".into(), 8192),
        ]
    );
    let r = alter(
        &mut ctx,
        vec![deletion("user1", SHA_256), deletion("user2", SHA_512)],
        vec![],
    );
    assert_eq!(
        codes(&r),
        vec![
            ("user1".into(), errors::NONE),
            ("user2".into(), errors::NONE)
        ]
    );
    assert_eq!(
        held(&ctx),
        vec![
            (SHA_512, "user1".into(), 8192),
            (SHA_512, "user3@user3.com".into(), 8192),
        ]
    );
}

/// The record holds the keys of the client's salted password, never the password: a
/// credential derived from the password itself equals it; the deletion removes it.
#[test]
fn records_carry_stored_and_server_keys_of_the_salted_password() {
    let mut ctx = Ctx::active(MV);
    let salt = b"0123456789abcdef";
    let from_password =
        ScramCredential::from_password(ScramMechanism::Sha256, "alice-secret", salt, 4096);
    let salted = pbkdf2::pbkdf2_hmac_array::<sha2::Sha256, 32>(b"alice-secret", salt, 4096);
    let up = upsertion("alice", SHA_256, 4096)
        .with_salt(Bytes::copy_from_slice(salt))
        .with_salted_password(Bytes::copy_from_slice(&salted));
    alter(&mut ctx, vec![], vec![up]);
    let r = ctx
        .image()
        .scram
        .get(&(SHA_256, "alice".to_string()))
        .unwrap();
    assert_eq!(
        ScramCredential {
            salt: r.salt.clone(),
            stored_key: r.stored_key.clone(),
            server_key: r.server_key.clone(),
            iterations: r.iterations,
        },
        from_password
    );
    let r = alter(&mut ctx, vec![deletion("alice", SHA_256)], vec![]);
    assert_eq!(codes(&r), vec![("alice".into(), errors::NONE)]);
    assert!(held(&ctx).is_empty());
}

/// Below metadata.version 3.5-IV2 every user is refused UNSUPPORTED_VERSION and nothing is
/// written.
#[test]
fn metadata_version_without_scram_refuses_every_user() {
    let mut ctx = Ctx::active(crate::common::release::mv::SCRAM - 1);
    let r = alter(
        &mut ctx,
        vec![deletion("user1", SHA_256)],
        vec![upsertion("user2", SHA_256, 4096)],
    );
    let expected = Some("The current metadata.version does not support SCRAM".to_string());
    assert_eq!(
        {
            let mut r = results(&r);
            r.sort();
            r
        },
        vec![
            (
                "user1".into(),
                errors::UNSUPPORTED_VERSION,
                expected.clone()
            ),
            ("user2".into(), errors::UNSUPPORTED_VERSION, expected),
        ]
    );
    assert!(held(&ctx).is_empty());
}

/// Results come in Kafka's order: deletions, then upsertions, then refusals, each in its Java
/// HashMap's iteration order (by the spread String hash, not by name or request order).
#[test]
fn results_follow_kafkas_hash_map_order() {
    let mut ctx = Ctx::active(MV);
    alter(&mut ctx, vec![], vec![upsertion("zed", SHA_256, 4096)]);
    let r = alter(
        &mut ctx,
        vec![deletion("zed", SHA_256), deletion("gone", SHA_256)],
        vec![
            upsertion("user3", SHA_256, 4096),
            upsertion("user1", SHA_256, 4096),
            upsertion("bad", SHA_256, 1),
        ],
    );
    // Buckets of a 16-slot table after the spread: "user1" 0, "user3" 14; "bad" 4, "gone" 15
    // (gone: nothing to delete).
    let order: Vec<String> = r.results.iter().map(|x| x.user.to_string()).collect();
    assert_eq!(order, ["zed", "user1", "user3", "bad", "gone"]);
}

/// D16 (differential fuzz, #36): an empty salted password fails Kafka's finishUpsertion
/// (an HMAC cannot be keyed with nothing): UNKNOWN_SERVER_ERROR without a message, listed
/// with the refused users after the successes, and nothing written for it.
#[test]
fn an_empty_salted_password_is_an_unknown_server_error_and_writes_nothing() {
    let mut ctx = Ctx::active(MV);
    let empty = upsertion("alice", SHA_512, 4096).with_salted_password(Bytes::new());
    let r = alter(
        &mut ctx,
        vec![deletion("carol", SHA_256)],
        vec![empty, upsertion("bob", SHA_256, 4096)],
    );
    assert_eq!(
        results(&r),
        vec![
            ("bob".into(), errors::NONE, None),
            // The refused in the order of Kafka's HashMap (buckets: carol 1, alice 9).
            (
                "carol".into(),
                RESOURCE_NOT_FOUND,
                Some("Attempt to delete a user credential that does not exist".into())
            ),
            ("alice".into(), errors::UNKNOWN_SERVER_ERROR, None),
        ]
    );
    assert_eq!(held(&ctx), vec![(SHA_256, "bob".to_string(), 4096)]);
}
