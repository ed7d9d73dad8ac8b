//! Kafka's `Uuid`: 16 bytes (most significant long, then least significant), shown as URL-safe
//! base64 without padding (22 characters), with Kafka's rules for random ids.

use base64::engine::general_purpose::{URL_SAFE, URL_SAFE_NO_PAD};
use base64::Engine;
use uuid::Uuid;

/// Kafka's `Uuid.ZERO_UUID`.
pub const ZERO_UUID: Uuid = Uuid::nil();
/// Kafka's `Uuid.ONE_UUID`.
pub const ONE_UUID: Uuid = Uuid::from_u128(1);
/// `Uuid.METADATA_TOPIC_ID` (= ONE_UUID): the topic id of `__cluster_metadata`.
pub const METADATA_TOPIC_ID: Uuid = Uuid::from_u128(1);

/// Error for a string that is not a Kafka Uuid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid Kafka uuid {input:?}: {reason}")]
pub struct UuidParseError {
    /// The text given.
    pub input: String,
    /// Why it was rejected.
    pub reason: &'static str,
}

/// Kafka's string form: URL-safe base64 of the 16 bytes, no padding.
pub fn uuid_to_kafka_string(id: &Uuid) -> String {
    KafkaUuid(id).to_string()
}

/// Kafka's string form, encoded as it is written: a log line formats ids without building
/// a String for each.
pub struct KafkaUuid<'a>(pub &'a Uuid);

impl std::fmt::Display for KafkaUuid<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut text = [0u8; 22];
        // 16 bytes are 22 characters unpadded, so the slice always holds them.
        let n = URL_SAFE_NO_PAD
            .encode_slice(self.0.as_bytes(), &mut text)
            .map_err(|_| std::fmt::Error)?;
        f.write_str(std::str::from_utf8(&text[..n]).map_err(|_| std::fmt::Error)?)
    }
}

/// Parses Kafka's string form (22 characters; a padded 24-character form is accepted as
/// Java's URL decoder accepts it).
pub fn parse_kafka_uuid(s: &str) -> Result<Uuid, UuidParseError> {
    let err = |reason| UuidParseError {
        input: s.chars().take(40).collect(),
        reason,
    };
    if s.len() > 24 {
        return Err(err("too long"));
    }
    let bytes = if s.ends_with('=') {
        URL_SAFE.decode(s)
    } else {
        URL_SAFE_NO_PAD.decode(s)
    }
    .map_err(|_| err("not URL-safe base64"))?;
    let arr: [u8; 16] = bytes
        .try_into()
        .map_err(|_| err("does not decode to 16 bytes"))?;
    Ok(Uuid::from_bytes(arr))
}

/// Kafka's `Uuid.randomUuid()`: a random (v4) id, rerolled while it is reserved
/// (ZERO, ONE = METADATA_TOPIC_ID) or its string starts with '-' (it would look like a
/// command-line flag).
pub fn random_kafka_uuid() -> Uuid {
    loop {
        let id = Uuid::new_v4();
        if id != ZERO_UUID && id != ONE_UUID && !uuid_to_kafka_string(&id).starts_with('-') {
            return id;
        }
    }
}

/// Whether a directory id is reserved (`DirectoryId.reserved`: most significant long 0 and
/// least significant long < 100; covers UNASSIGNED, LOST, MIGRATING).
pub fn is_reserved_directory_id(id: &Uuid) -> bool {
    let v = id.as_u128();
    (v >> 64) == 0 && (v as u64) < 100
}

/// A random directory id as `kafka-storage format` picks one: not reserved, not starting with
/// '-', and not in `taken`.
pub fn random_directory_id(taken: &[Uuid]) -> Uuid {
    loop {
        let id = random_kafka_uuid();
        if !is_reserved_directory_id(&id) && !taken.contains(&id) {
            return id;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn kafka_strings() {
        assert_eq!(uuid_to_kafka_string(&ZERO_UUID), "AAAAAAAAAAAAAAAAAAAAAA");
        assert_eq!(
            uuid_to_kafka_string(&METADATA_TOPIC_ID),
            "AAAAAAAAAAAAAAAAAAAAAQ"
        );
        // A directory id written by Kafka 4.1.2's formatter.
        let id = parse_kafka_uuid("fIFoBanoy2NV4I5F4JiG8w").unwrap();
        assert_eq!(uuid_to_kafka_string(&id), "fIFoBanoy2NV4I5F4JiG8w");
        assert_eq!(format!("[{}]", KafkaUuid(&id)), "[fIFoBanoy2NV4I5F4JiG8w]");
        assert_eq!(id.as_bytes()[0], 0x7c);
        assert!(parse_kafka_uuid("short").is_err());
        assert!(parse_kafka_uuid("AAAAAAAAAAAAAAAAAAAAAAAAAAAA").is_err());
        assert_eq!(
            parse_kafka_uuid("AAAAAAAAAAAAAAAAAAAAAQ==").unwrap(),
            ONE_UUID
        );
    }

    #[test]
    fn random_ids_follow_kafka_rules() {
        for _ in 0..1000 {
            let id = random_directory_id(&[]);
            assert!(!is_reserved_directory_id(&id));
            assert!(!uuid_to_kafka_string(&id).starts_with('-'));
        }
        assert!(is_reserved_directory_id(&Uuid::from_u128(99)));
        assert!(!is_reserved_directory_id(&Uuid::from_u128(100)));
    }
}
