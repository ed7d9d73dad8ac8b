//! metadata.version levels and feature defaults of Kafka 4.1.2 and 4.4.0, and the
//! FeatureLevelRecord bytes `kafka-storage format` puts into bootstrap files.
//!
//! The table was taken from `kafka-storage version-mapping --release-version X` run against the
//! real 4.1.2 jars for every level (3.3-IV3 = 7 … 4.1-IV1 = 27; 27 is 4.1.2's default) and the
//! 4.4.0 jars for the levels after it (4.2-IV0 = 28 … 4.4-IV2 = 33, 4.4.0's default). Which of
//! them a node accepts as a release version follows its [`Release`].

use std::collections::BTreeMap;

use crate::codec::versions::Release;
use crate::records::varint::{get_uvarint, put_uvarint};

/// Feature name of the metadata version.
pub const METADATA_VERSION_FEATURE: &str = "metadata.version";
/// Feature name of the KRaft protocol version (never a FeatureLevelRecord).
pub const KRAFT_VERSION_FEATURE: &str = "kraft.version";
/// apiKey of FeatureLevelRecord.
pub const FEATURE_LEVEL_RECORD_API_KEY: u32 = 12;
/// metadata.version at which kraft.version 1 (dynamic quorums) becomes available (3.9-IV0).
pub const MIN_MV_FOR_KRAFT_VERSION_1: i16 = 21;

/// Production metadata versions known to Kafka 4.4.0: (level, name). Kafka 4.1.2's are the
/// first 21 (up to 4.1-IV1).
const METADATA_VERSIONS: [(i16, &str); 27] = [
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
    (28, "4.2-IV0"),
    (29, "4.2-IV1"),
    (30, "4.3-IV0"),
    (31, "4.4-IV0"),
    (32, "4.4-IV1"),
    (33, "4.4-IV2"),
];

/// The default of Kafka 4.1.2's formatter (LATEST_PRODUCTION).
pub const LATEST_PRODUCTION_LEVEL: i16 = 27;
/// The default of Kafka 4.4.0's formatter.
pub const LATEST_PRODUCTION_LEVEL_4_4: i16 = 33;

/// A metadata.version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct MetadataVersion {
    /// Feature level.
    pub level: i16,
    /// Kafka's name, e.g. `4.1-IV1`.
    pub name: &'static str,
}

impl MetadataVersion {
    /// The default metadata.version of `release`'s formatter.
    pub fn latest_production(release: Release) -> Self {
        let level = release.latest_production_level();
        Self::from_level(level).unwrap_or(MetadataVersion {
            level,
            name: "4.1-IV1",
        })
    }

    /// Looks up a level (any level Kafka 4.4.0 knows).
    pub fn from_level(level: i16) -> Option<Self> {
        METADATA_VERSIONS
            .iter()
            .find(|(l, _)| *l == level)
            .map(|&(level, name)| MetadataVersion { level, name })
    }

    /// Parses `--release-version`: a full name (`3.7-IV2`) or a release (`3.7`, meaning its
    /// latest IV), as Kafka's `MetadataVersion.fromVersionString` does, among the levels
    /// `release` knows.
    pub fn parse_release(s: &str, release: Release) -> Result<Self, String> {
        let latest = release.latest_production_level();
        let known: Vec<(i16, &str)> = METADATA_VERSIONS
            .iter()
            .copied()
            .filter(|(l, _)| *l <= latest)
            .collect();
        let found = known.iter().find(|(_, n)| *n == s).or_else(|| {
            let prefix = format!("{s}-IV");
            known.iter().rev().find(|(_, n)| n.starts_with(&prefix))
        });
        match (found, known.first(), known.last()) {
            (Some(&(level, name)), _, _) => Ok(MetadataVersion { level, name }),
            (None, Some(first), Some(last)) => Err(format!(
                "Unknown release version '{s}'. Supported versions are: {} to {}",
                first.1, last.1
            )),
            _ => Err(format!("Unknown release version '{s}'.")),
        }
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
        // share.version 1 from 4.2-IV0 and 2 from 4.4-IV0; streams.version 1 from 4.2-IV1.
        m.insert(
            "share.version".into(),
            match l {
                31.. => 2,
                28.. => 1,
                _ => 0,
            },
        );
        m.insert("streams.version".into(), i16::from(l >= 29));
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
        let r41 = Release::Kafka4_1;
        assert_eq!(
            MetadataVersion::parse_release("4.1", r41).unwrap().level,
            27
        );
        assert_eq!(
            MetadataVersion::parse_release("3.5", r41).unwrap().level,
            11
        );
        assert_eq!(
            MetadataVersion::parse_release("3.7-IV2", r41)
                .unwrap()
                .level,
            17
        );
        assert_eq!(
            MetadataVersion::parse_release("4.2", r41).unwrap_err(),
            "Unknown release version '4.2'. Supported versions are: 3.3-IV3 to 4.1-IV1"
        );
        assert_eq!(MetadataVersion::latest_production(r41).name, "4.1-IV1");
        let r44 = Release::Kafka4_4;
        assert_eq!(
            MetadataVersion::parse_release("4.2", r44).unwrap().level,
            29
        );
        assert_eq!(
            MetadataVersion::parse_release("4.3-IV0", r44)
                .unwrap()
                .level,
            30
        );
        assert_eq!(
            MetadataVersion::parse_release("4.5", r44).unwrap_err(),
            "Unknown release version '4.5'. Supported versions are: 3.3-IV3 to 4.4-IV2"
        );
        assert_eq!(MetadataVersion::latest_production(r44).name, "4.4-IV2");
    }

    /// What `kafka-storage format` 4.4.0 writes with no `--release-version`:
    /// `metadata.version=33, eligible.leader.replicas.version=1, group.version=1,
    /// share.version=2, streams.version=1, transaction.version=2`.
    #[test]
    fn default_features_of_kafka_4_4_format() {
        let mv = MetadataVersion::latest_production(Release::Kafka4_4);
        let got: Vec<(String, i16)> = mv.default_features().into_iter().collect();
        let want: Vec<(String, i16)> = [
            ("eligible.leader.replicas.version", 1),
            ("group.version", 1),
            ("share.version", 2),
            ("streams.version", 1),
            ("transaction.version", 2),
        ]
        .iter()
        .map(|(n, l)| (n.to_string(), *l))
        .collect();
        assert_eq!(got, want);
        let at_28 = MetadataVersion::from_level(28).unwrap().default_features();
        assert_eq!((at_28["share.version"], at_28["streams.version"]), (1, 0));
    }
}
