//! SCRAM credentials (Kafka's `ScramControlManager`): AlterUserScramCredentials turns the
//! client-salted passwords of its upsertions into UserScramCredentialRecords (stored and
//! server keys, never the password) and its deletions into RemoveUserScramCredentialRecords,
//! all in one atomic batch. The image keeps the credentials (`MetadataImage::scram`); the node
//! authenticates SCRAM clients from the committed copy.
//!
//! ```text
//!   deletions ─┐ per user: duplicate? ─ metadata.version ≥ 3.5-IV2? ─ name/mechanism ─ held?
//!   upsertions ┴ per user: duplicate (with a deletion too)? ─ version ─ name/mechanism ─ iterations
//!        ─▶ records: removals, then credentials; results: deleted, upserted, refused
//! ```
//!
//! Kafka keys both passes by user name alone, so one request cannot touch two mechanisms of a
//! user; it keeps them in `HashMap`s, whose iteration order the records and results follow.

pub use crate::common::errors::{DUPLICATE_RESOURCE, RESOURCE_NOT_FOUND, UNACCEPTABLE_CREDENTIAL};
use kafka_protocol::messages::alter_user_scram_credentials_request::{
    ScramCredentialDeletion, ScramCredentialUpsertion,
};
use kafka_protocol::messages::alter_user_scram_credentials_response::AlterUserScramCredentialsResult;
use kafka_protocol::messages::{
    AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse,
};
use kafka_protocol::protocol::StrBytes;

use super::errors::{self, ApiError};
use super::result::{ControllerResult, RecordOut};
use crate::common::java::{java_hash_map_order, Built};
use crate::metadata::credentials::credential_record;
use crate::metadata::image::MetadataImage;
use crate::metadata::record::MetadataRecord;
use crate::metadata::records::RemoveUserScramCredentialRecord;
use crate::security::scram::{ScramCredential, ScramMechanism};
use crate::security::UNSUPPORTED_SASL_MECHANISM;

const TWICE: &str = "A user credential cannot be altered twice in the same request";

/// Kafka's `alterCredentials`: validated per user, written atomically.
pub fn alter_credentials(
    image: &MetadataImage,
    req: &AlterUserScramCredentialsRequest,
) -> ControllerResult<AlterUserScramCredentialsResponse> {
    let supported = image
        .metadata_version()
        .is_some_and(|mv| mv >= crate::common::release::mv::SCRAM);
    let unsupported = || {
        ApiError::new(
            errors::UNSUPPORTED_VERSION,
            "The current metadata.version does not support SCRAM",
        )
    };
    // Insertion-ordered stand-ins for Kafka's three HashMaps (reordered at the end).
    let mut deletions: Vec<&ScramCredentialDeletion> = Vec::new();
    let mut upsertions: Vec<(&ScramCredentialUpsertion, ScramMechanism)> = Vec::new();
    let mut refused: Vec<(String, ApiError)> = Vec::new();
    let is_refused =
        |refused: &[(String, ApiError)], name: &str| refused.iter().any(|(n, _)| n == name);

    for deletion in &req.deletions {
        let name = deletion.name.as_str();
        if is_refused(&refused, name) {
            continue;
        }
        if let Some(i) = deletions.iter().position(|d| d.name.as_str() == name) {
            deletions.remove(i);
            refused.push((name.to_string(), ApiError::new(DUPLICATE_RESOURCE, TWICE)));
        } else if !supported {
            refused.push((name.to_string(), unsupported()));
        } else if let Err(e) = validate_deletion(image, deletion) {
            refused.push((name.to_string(), e));
        } else {
            deletions.push(deletion);
        }
    }
    for upsertion in &req.upsertions {
        let name = upsertion.name.as_str();
        if is_refused(&refused, name) {
            continue;
        }
        let deleted = deletions.iter().position(|d| d.name.as_str() == name);
        let upserted = upsertions.iter().position(|(u, _)| u.name.as_str() == name);
        if deleted.is_some() || upserted.is_some() {
            // Kafka removes the name from both maps (the deletion map first).
            if let Some(i) = deleted {
                deletions.remove(i);
            } else if let Some(i) = upserted {
                upsertions.remove(i);
            }
            refused.push((name.to_string(), ApiError::new(DUPLICATE_RESOURCE, TWICE)));
        } else if !supported {
            refused.push((name.to_string(), unsupported()));
        } else {
            match validate_upsertion(upsertion) {
                Ok(mechanism) => upsertions.push((upsertion, mechanism)),
                Err(e) => refused.push((name.to_string(), e)),
            }
        }
    }

    java_hash_map_order(&mut deletions, Built::Default, |d| d.name.as_str());
    java_hash_map_order(&mut upsertions, Built::Default, |(u, _)| u.name.as_str());

    let mut records = Vec::new();
    let mut results = Vec::new();
    let ok = |name: &StrBytes| {
        AlterUserScramCredentialsResult::default()
            .with_user(name.clone())
            .with_error_code(errors::NONE)
            .with_error_message(None)
    };
    for deletion in &deletions {
        records.push(RecordOut::new(
            MetadataRecord::RemoveUserScramCredential(RemoveUserScramCredentialRecord {
                name: deletion.name.to_string(),
                mechanism: deletion.mechanism,
                ..Default::default()
            }),
            0,
        ));
        results.push(ok(&deletion.name));
    }
    for (upsertion, mechanism) in &upsertions {
        if upsertion.salted_password.is_empty() {
            // Kafka's finishUpsertion keys an HMAC with the salted password, and Java's
            // SecretKeySpec throws on an empty key: the user joins the refused ones with
            // UNKNOWN_SERVER_ERROR (no message) and nothing is written for it (#36, D16).
            refused.push((
                upsertion.name.to_string(),
                ApiError::code(errors::UNKNOWN_SERVER_ERROR),
            ));
            continue;
        }
        // Kafka's finishUpsertion: the keys of the client's salted password.
        let credential = ScramCredential::from_salted_password(
            *mechanism,
            &upsertion.salted_password,
            &upsertion.salt,
            upsertion.iterations,
        );
        let record = credential_record(
            upsertion.name.to_string(),
            mechanism.type_id(),
            credential.salt,
            credential.stored_key,
            credential.server_key,
            credential.iterations,
        );
        records.push(RecordOut::new(
            MetadataRecord::UserScramCredential(record),
            0,
        ));
        results.push(ok(&upsertion.name));
    }
    java_hash_map_order(&mut refused, Built::Default, |(n, _)| n.as_str());
    for (name, error) in refused {
        results.push(
            AlterUserScramCredentialsResult::default()
                .with_user(StrBytes::from_string(name))
                .with_error_code(error.code)
                .with_error_message(error.message.map(StrBytes::from_string)),
        );
    }
    ControllerResult::of(
        records,
        AlterUserScramCredentialsResponse::default().with_results(results),
    )
}

/// Kafka's `validateScramUsernameAndMechanism`.
fn validate_name_and_mechanism(name: &str, mechanism: i8) -> Result<ScramMechanism, ApiError> {
    if name.is_empty() {
        return Err(ApiError::new(
            UNACCEPTABLE_CREDENTIAL,
            "Username must not be empty",
        ));
    }
    ScramMechanism::from_type_id(mechanism)
        .ok_or_else(|| ApiError::new(UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"))
}

fn validate_upsertion(upsertion: &ScramCredentialUpsertion) -> Result<ScramMechanism, ApiError> {
    let mechanism = validate_name_and_mechanism(&upsertion.name, upsertion.mechanism)?;
    if upsertion.iterations < mechanism.min_iterations() {
        return Err(ApiError::new(UNACCEPTABLE_CREDENTIAL, "Too few iterations"));
    }
    if upsertion.iterations > mechanism.max_iterations() {
        return Err(ApiError::new(
            UNACCEPTABLE_CREDENTIAL,
            "Too many iterations",
        ));
    }
    Ok(mechanism)
}

fn validate_deletion(
    image: &MetadataImage,
    deletion: &ScramCredentialDeletion,
) -> Result<(), ApiError> {
    validate_name_and_mechanism(&deletion.name, deletion.mechanism)?;
    if !image
        .scram
        .contains_key(&(deletion.mechanism, deletion.name.to_string()))
    {
        return Err(ApiError::new(
            RESOURCE_NOT_FOUND,
            "Attempt to delete a user credential that does not exist",
        ));
    }
    Ok(())
}
