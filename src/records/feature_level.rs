//! The FeatureLevelRecord bytes `kafka-storage format` puts into bootstrap files, written and
//! read without the metadata layer (the bootstrap file and activation need nothing else).

use super::varint::{get_uvarint, put_uvarint};

/// apiKey of FeatureLevelRecord.
pub const FEATURE_LEVEL_RECORD_API_KEY: u32 = 12;

/// A FeatureLevelRecord (apiKey 12, v0) framed as a metadata record value:
/// `uvarint 1 (frame) | uvarint 12 | uvarint 0 | compact string name | int16 level | tags 0`.
pub fn feature_level_record(name: &str, level: i16) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len() + 8);
    put_uvarint(&mut out, 1);
    put_uvarint(&mut out, FEATURE_LEVEL_RECORD_API_KEY);
    put_uvarint(&mut out, 0);
    put_uvarint(&mut out, name.len() as u32 + 1);
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(&level.to_be_bytes());
    put_uvarint(&mut out, 0);
    out
}

/// Decodes a metadata record value if it is a FeatureLevelRecord v0; `None` for other records
/// or malformed bytes.
pub fn parse_feature_level_record(value: &[u8]) -> Option<(String, i16)> {
    let mut pos = 0;
    if get_uvarint(value, &mut pos).ok()? != 1
        || get_uvarint(value, &mut pos).ok()? != FEATURE_LEVEL_RECORD_API_KEY
        || get_uvarint(value, &mut pos).ok()? != 0
    {
        return None;
    }
    let len = (get_uvarint(value, &mut pos).ok()? as usize).checked_sub(1)?;
    let name = std::str::from_utf8(value.get(pos..pos.checked_add(len)?)?).ok()?;
    pos += len;
    let level = i16::from_be_bytes(value.get(pos..pos + 2)?.try_into().ok()?);
    pos += 2;
    // Tagged fields: only an empty set is expected from a bootstrap file.
    if get_uvarint(value, &mut pos).ok()? != 0 || pos != value.len() {
        return None;
    }
    Some((name.to_string(), level))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_bytes() {
        // Reference §3.4.
        let v = feature_level_record("metadata.version", 25);
        let mut want = vec![0x01, 0x0c, 0x00, 0x11];
        want.extend_from_slice(b"metadata.version");
        want.extend_from_slice(&[0x00, 0x19, 0x00]);
        assert_eq!(v, want);
        assert_eq!(
            parse_feature_level_record(&v),
            Some(("metadata.version".into(), 25))
        );
        assert_eq!(parse_feature_level_record(&v[..v.len() - 1]), None);
    }
}
