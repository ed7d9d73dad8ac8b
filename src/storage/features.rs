//! metadata.version levels and feature defaults of Kafka 4.1.2, and the FeatureLevelRecord
//! bytes `kafka-storage format` puts into bootstrap files.
//!
//! The table was taken from `kafka-storage version-mapping --release-version X` run against the
//! real 4.1.2 jars for every level (3.3-IV3 = 7 … 4.1-IV1 = 27; 27 is the default).

use std::collections::BTreeMap;

use crate::records::varint::{get_uvarint, put_uvarint};

/// Feature name of the metadata version.
pub const METADATA_VERSION_FEATURE: &str = "metadata.version";
/// Feature name of the KRaft protocol version (never a FeatureLevelRecord).
pub const KRAFT_VERSION_FEATURE: &str = "kraft.version";
/// apiKey of FeatureLevelRecord.
pub const FEATURE_LEVEL_RECORD_API_KEY: u32 = 12;
/// metadata.version at which kraft.version 1 (dynamic quorums) becomes available (3.9-IV0).
pub const MIN_MV_FOR_KRAFT_VERSION_1: i16 = 21;

/// Production metadata versions known to Kafka 4.1.2: (level, name).
const METADATA_VERSIONS: [(i16, &str); 21] = [
    (7, "3.3-IV3"),
    (8, "3.4-IV0"),
    (9, "3.5-IV0"),
    (10, "3.5-IV1"),
    (11, "3.5-IV2"),
    (12, "3.6-IV0"),
    (13, "3.6-IV1"),
    (14, "3.6-IV2"),
    (15, "3.7-IV0"),
    (16, "3.7-IV1"),
    (17, "3.7-IV2"),
    (18, "3.7-IV3"),
    (19, "3.7-IV4"),
    (20, "3.8-IV0"),
    (21, "3.9-IV0"),
    (22, "4.0-IV0"),
    (23, "4.0-IV1"),
    (24, "4.0-IV2"),
    (25, "4.0-IV3"),
    (26, "4.1-IV0"),
    (27, "4.1-IV1"),
];

/// The default of Kafka 4.1.2's formatter (LATEST_PRODUCTION).
pub const LATEST_PRODUCTION_LEVEL: i16 = 27;

/// A metadata.version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct MetadataVersion {
    /// Feature level.
    pub level: i16,
    /// Kafka's name, e.g. `4.1-IV1`.
    pub name: &'static str,
}

impl MetadataVersion {
    /// The default metadata.version of Kafka 4.1.2.
    pub fn latest_production() -> Self {
        Self::from_level(LATEST_PRODUCTION_LEVEL).unwrap_or(MetadataVersion {
            level: LATEST_PRODUCTION_LEVEL,
            name: "4.1-IV1",
        })
    }

    /// Looks up a level.
    pub fn from_level(level: i16) -> Option<Self> {
        METADATA_VERSIONS
            .iter()
            .find(|(l, _)| *l == level)
            .map(|&(level, name)| MetadataVersion { level, name })
    }

    /// Parses `--release-version`: a full name (`3.7-IV2`) or a release (`3.7`, meaning its
    /// latest IV), as Kafka's `MetadataVersion.fromVersionString` does.
    pub fn parse_release(s: &str) -> Result<Self, String> {
        let found = METADATA_VERSIONS.iter().find(|(_, n)| *n == s).or_else(|| {
            let prefix = format!("{s}-IV");
            METADATA_VERSIONS
                .iter()
                .rev()
                .find(|(_, n)| n.starts_with(&prefix))
        });
        found
            .map(|&(level, name)| MetadataVersion { level, name })
            .ok_or_else(|| {
                format!(
                    "Unknown release version '{s}'. Supported versions are: {} to {}",
                    METADATA_VERSIONS[0].1,
                    METADATA_VERSIONS[METADATA_VERSIONS.len() - 1].1
                )
            })
    }

    /// kraft.version this metadata.version defaults to (1 from 3.9-IV0).
    pub fn default_kraft_version(&self) -> i16 {
        i16::from(self.level >= MIN_MV_FOR_KRAFT_VERSION_1)
    }

    /// Defaults of the other features at this metadata.version (from `version-mapping`).
    pub fn default_features(&self) -> BTreeMap<String, i16> {
        let l = self.level;
        let mut m = BTreeMap::new();
        m.insert(
            "eligible.leader.replicas.version".into(),
            i16::from(l >= 26),
        );
        m.insert("group.version".into(), i16::from(l >= 22));
        m.insert("share.version".into(), 0);
        m.insert("streams.version".into(), 0);
        m.insert("transaction.version".into(), if l >= 24 { 2 } else { 0 });
        m
    }
}

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
#[allow(clippy::unwrap_used)]
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

    #[test]
    fn release_versions() {
        assert_eq!(MetadataVersion::parse_release("4.1").unwrap().level, 27);
        assert_eq!(MetadataVersion::parse_release("3.5").unwrap().level, 11);
        assert_eq!(MetadataVersion::parse_release("3.7-IV2").unwrap().level, 17);
        assert_eq!(
            MetadataVersion::parse_release("4.2").unwrap_err(),
            "Unknown release version '4.2'. Supported versions are: 3.3-IV3 to 4.1-IV1"
        );
        assert_eq!(MetadataVersion::latest_production().name, "4.1-IV1");
    }
}
