//! Metadata record values (`metadata_record` vectors, framed by Kafka's `MetadataRecordSerde`)
//! against `ferrokraft::metadata`: every record type and version Kafka writes decodes to its own
//! type and re-encodes to Kafka's exact bytes. The vectors of every committed Kafka version are
//! read whatever `KAFKA_VERSION` says: record layouts are facts of each release, and 4.4.0 has
//! versions 4.1.2 lacks (RegisterBrokerRecord v4, BrokerRegistrationChangeRecord v3,
//! UnregisterControllerRecord).

use std::collections::BTreeSet;
use std::fs;

use ferrokraft::metadata::record::ApiMessageAndVersion;
use ferrokraft::metadata::records::RECORD_TYPES;

use super::vectors::{byte_diff, parse_vectors, tests_dir, Label};

/// Vector files carrying metadata records checked here: 4.1.2's full file, and 4.4.0's
/// metadata records alone (`Oracle metadata-records`; the RPC walker does not cover 4.4 yet).
const RECORD_VECTOR_FILES: &[&str] = &["kafka-4.1.2.vectors", "kafka-4.4.0-metadata.vectors"];

/// Our re-encoding of a metadata record value.
pub(crate) fn reencode(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let record = ApiMessageAndVersion::decode(bytes).map_err(|e| e.to_string())?;
    record.encode().map_err(|e| e.to_string())
}

/// Whether ferrokraft encodes records of this kind (all known types do).
pub(crate) fn encoded_by_us(bytes: &[u8]) -> bool {
    reencode(bytes).is_ok()
}

#[test]
fn every_metadata_record_type_and_version_round_trips_kafkas_bytes() {
    let mut seen = BTreeSet::new();
    let mut failures = Vec::new();
    for kafka in RECORD_VECTOR_FILES {
        let path = tests_dir().join("golden").join(kafka);
        let text = fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        for v in parse_vectors(&text) {
            let Label::MetadataRecord {
                name,
                api_key,
                version,
            } = &v.label
            else {
                continue;
            };
            let decoded = match ApiMessageAndVersion::decode(&v.bytes) {
                Ok(d) => d,
                Err(e) => {
                    failures.push(format!("{kafka} {}: {e}", v.text));
                    continue;
                }
            };
            if decoded.message.name() != name
                || i32::from(decoded.message.api_key()) != i32::from(*api_key)
                || i32::from(decoded.version) != i32::from(*version)
            {
                failures.push(format!(
                    "{kafka} {}: decoded as {} v{}",
                    v.text,
                    decoded.message.name(),
                    decoded.version
                ));
                continue;
            }
            match decoded.encode() {
                Ok(ours) if ours == v.bytes => {
                    seen.insert((decoded.message.api_key(), decoded.version));
                }
                Ok(ours) => failures.push(format!(
                    "{kafka} {}: {}",
                    v.text,
                    byte_diff(&v.bytes, &ours)
                )),
                Err(e) => failures.push(format!("{kafka} {}: {e}", v.text)),
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Every type and version described here met a Kafka-written vector, and vice versa.
    let described: BTreeSet<(u16, u16)> = RECORD_TYPES
        .iter()
        .flat_map(|(key, _, max)| (0..=*max).map(move |v| (*key, v)))
        .collect();
    assert_eq!(
        seen, described,
        "record types/versions with a Kafka vector vs described"
    );
}
