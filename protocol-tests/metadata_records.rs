//! Metadata record values (`metadata_record` vectors, framed by Kafka's `MetadataRecordSerde`)
//! against `ferrokraft::metadata`: every record Kafka writes decodes; the ones ferrokraft
//! writes re-encode to Kafka's exact bytes.

use ferrokraft::metadata::record::MetadataRecord;

use super::vectors::{byte_diff, golden_vectors, Label};

/// Our re-encoding of a metadata record value; an error for records we only skip.
pub(crate) fn reencode(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let record = MetadataRecord::decode(bytes).map_err(|e| e.to_string())?;
    record
        .encode()
        .ok_or_else(|| format!("not written by ferrokraft (decoded as {record:?})"))
}

/// Whether ferrokraft writes records of this kind (so Kafka must accept our encoding).
pub(crate) fn encoded_by_us(bytes: &[u8]) -> bool {
    reencode(bytes).is_ok()
}

#[test]
fn metadata_record_vectors_decode_and_ours_round_trip() {
    let mut checked = 0;
    let mut written_by_us = Vec::new();
    let mut failures = Vec::new();
    for v in golden_vectors() {
        let Label::MetadataRecord {
            name,
            api_key,
            version,
        } = &v.label
        else {
            continue;
        };
        checked += 1;
        let decoded = match MetadataRecord::decode(&v.bytes) {
            Ok(d) => d,
            Err(e) => {
                failures.push(format!("{}: {e}", v.text));
                continue;
            }
        };
        let expected_kind = match (*api_key, *version) {
            (12, 0) => matches!(decoded, MetadataRecord::FeatureLevel { .. }),
            (20, 0) => decoded == MetadataRecord::NoOp,
            (27, 0) => matches!(decoded, MetadataRecord::RegisterController(_)),
            (k, ver) => {
                decoded
                    == MetadataRecord::Other {
                        api_key: k as u16,
                        version: ver as u16,
                    }
            }
        };
        if !expected_kind {
            failures.push(format!("{}: decoded as {decoded:?}", v.text));
            continue;
        }
        if let Some(ours) = decoded.encode() {
            written_by_us.push(name.clone());
            if ours != v.bytes {
                failures.push(format!("{}: {}", v.text, byte_diff(&v.bytes, &ours)));
            }
        }
    }
    assert!(
        checked >= 30,
        "only {checked} metadata_record vectors (regenerate the golden file)"
    );
    assert_eq!(
        written_by_us,
        ["FeatureLevelRecord", "RegisterControllerRecord"],
        "records ferrokraft writes"
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
