//! The UserScramCredentialRecord of a SCRAM credential, written by AlterUserScramCredentials
//! (`controller::scram`) and by `format --add-scram` (`tools::scram_args`). The credential
//! comes as plain values (the mechanism's type id, Kafka's `ScramMechanism.type()`), so that
//! the records know nothing of the SCRAM exchange that computes it.

use super::records::UserScramCredentialRecord;

/// The UserScramCredentialRecord of `name`'s credential for the mechanism `mechanism_type`.
pub fn credential_record(
    name: String,
    mechanism_type: i8,
    salt: Vec<u8>,
    stored_key: Vec<u8>,
    server_key: Vec<u8>,
    iterations: i32,
) -> UserScramCredentialRecord {
    UserScramCredentialRecord {
        name,
        mechanism: mechanism_type,
        salt,
        stored_key,
        server_key,
        iterations,
        ..Default::default()
    }
}
