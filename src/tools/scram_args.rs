//! `format --add-scram` (Kafka's `ScramParser`): each argument
//! `MECHANISM=[name=…,password=…]` (or `salt=<base64>,saltedpassword=<base64>`, optional
//! `iterations`, default 4096) becomes a UserScramCredentialRecord in the bootstrap records, so
//! a quorum whose controller listener speaks SCRAM can be reached before any credential was
//! altered through a broker.

use std::collections::BTreeMap;

use base64::Engine as _;

use crate::metadata::credentials::credential_record;
use crate::metadata::record::{ApiMessageAndVersion, MetadataRecord};
use crate::metadata::records::UserScramCredentialRecord;
use crate::security::scram::{ScramCredential, ScramMechanism};

/// Iterations when the argument names none (Kafka's default).
pub const DEFAULT_ITERATIONS: i32 = 4096;

/// One parsed `--add-scram` argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScramArgument {
    mechanism: ScramMechanism,
    name: String,
    salt: Option<Vec<u8>>,
    iterations: Option<i32>,
    secret: Secret,
}

#[derive(Clone, PartialEq, Eq)]
enum Secret {
    Password(String),
    SaltedPassword(Vec<u8>),
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[hidden]")
    }
}

fn decode_base64(what: &str, s: &str) -> Result<Vec<u8>, String> {
    base64::engine::general_purpose::STANDARD
        .decode(s)
        .map_err(|_| format!("Failed to decode given {what}: {s}"))
}

/// Kafka's `splitTrimmedConfigStringComponent`: `key=value`, a quoted value unquoted.
fn split_component(input: &str) -> Result<(String, String), String> {
    let (key, value) = input
        .split_once('=')
        .ok_or_else(|| format!("No equals sign found in SCRAM component: {input}"))?;
    let value = if value.len() >= 2 && value.starts_with('"') && value.ends_with('"') {
        &value[1..value.len() - 1]
    } else {
        value
    };
    Ok((key.to_string(), value.to_string()))
}

impl ScramArgument {
    /// Parses one argument with Kafka's checks and messages.
    pub fn parse(input: &str) -> Result<Self, String> {
        let input = input.trim();
        let (mechanism_name, config) = input
            .split_once('=')
            .ok_or_else(|| format!("Failed to find equals sign in SCRAM argument '{input}'"))?;
        let mechanism = ScramMechanism::from_name(mechanism_name)
            .ok_or_else(|| format!("The add-scram mechanism {mechanism_name} is not supported."))?;
        let config = config
            .strip_prefix('[')
            .ok_or("Expected configuration string to start with [")?
            .strip_suffix(']')
            .ok_or("Expected configuration string to end with ]")?;
        let mut components = BTreeMap::new();
        for component in config.split(',') {
            let (key, value) = split_component(component)?;
            components.insert(key, value);
        }
        let name = components
            .remove("name")
            .ok_or("You must supply 'name' to add-scram")?;
        let salt = components
            .remove("salt")
            .map(|s| decode_base64("salt", &s))
            .transpose()?;
        let iterations = components
            .remove("iterations")
            .map(|s| {
                s.parse::<i32>()
                    .map_err(|_| format!("Failed to parse iterations count: {s}"))
            })
            .transpose()?;
        let password = components.remove("password");
        let salted = components.remove("saltedpassword");
        let secret = match (password, salted) {
            (Some(p), _) => Secret::Password(p),
            (None, None) => {
                return Err(
                    "You must supply one of 'password' or 'saltedpassword' to add-scram".into(),
                )
            }
            (None, Some(_)) if salt.is_none() => {
                return Err("You must supply 'salt' with 'saltedpassword' to add-scram".into())
            }
            (None, Some(s)) => Secret::SaltedPassword(decode_base64("saltedPassword", &s)?),
        };
        if !components.is_empty() {
            let keys: Vec<&str> = components.keys().map(String::as_str).collect();
            return Err(format!("Unknown SCRAM configurations: {}", keys.join(", ")));
        }
        Ok(Self {
            mechanism,
            name,
            salt,
            iterations,
            secret,
        })
    }

    /// The record (Kafka's `toRecord`); `random_salt` supplies a salt the argument lacks.
    pub fn to_record(
        &self,
        random_salt: impl FnOnce() -> Vec<u8>,
    ) -> Result<UserScramCredentialRecord, String> {
        let salt = self.salt.clone().unwrap_or_else(random_salt);
        let iterations = self.iterations.unwrap_or(DEFAULT_ITERATIONS);
        let mechanism = self.mechanism;
        if iterations < mechanism.min_iterations() {
            return Err(format!(
                "The 'iterations' value must be >= {} for add-scram using {}",
                mechanism.min_iterations(),
                java_enum_name(mechanism)
            ));
        }
        if iterations > mechanism.max_iterations() {
            return Err(format!(
                "The 'iterations' value must be <= {} for add-scram using {}",
                mechanism.max_iterations(),
                java_enum_name(mechanism)
            ));
        }
        let credential = match &self.secret {
            Secret::Password(p) => ScramCredential::from_password(mechanism, p, &salt, iterations),
            Secret::SaltedPassword(s) => {
                ScramCredential::from_salted_password(mechanism, s, &salt, iterations)
            }
        };
        Ok(credential_record(
            self.name.clone(),
            mechanism.type_id(),
            credential.salt,
            credential.stored_key,
            credential.server_key,
            credential.iterations,
        ))
    }
}

/// How Kafka's `ScramMechanism` enum prints in these messages.
fn java_enum_name(m: ScramMechanism) -> &'static str {
    match m {
        ScramMechanism::Sha256 => "SCRAM_SHA_256",
        ScramMechanism::Sha512 => "SCRAM_SHA_512",
    }
}

/// Kafka's `ScramFormatter.secureRandomBytes`: the UTF-8 of a random number in base 36.
pub fn random_salt() -> Vec<u8> {
    let mut n = uuid::Uuid::new_v4().as_u128() ^ (uuid::Uuid::new_v4().as_u128() << 6);
    let mut digits = Vec::new();
    while n > 0 {
        let d = (n % 36) as u8;
        digits.push(if d < 10 { b'0' + d } else { b'a' + d - 10 });
        n /= 36;
    }
    digits.reverse();
    digits
}

/// The record values of `arguments`, in order (version 0, as Kafka writes them).
pub fn scram_record_values(arguments: &[String]) -> Result<Vec<Vec<u8>>, String> {
    arguments
        .iter()
        .map(|a| {
            let record = ScramArgument::parse(a)?.to_record(random_salt)?;
            ApiMessageAndVersion::new(MetadataRecord::UserScramCredential(record), 0)
                .encode()
                .map_err(|e| format!("cannot encode the SCRAM record: {e}"))
        })
        .collect()
}

#[cfg(test)]
#[path = "scram_args_tests.rs"]
mod tests;
