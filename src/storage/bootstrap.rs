//! `bootstrap.checkpoint`: the initial feature levels, in every formatted directory.
//!
//! Layout (all PLE 0, offsets from 0): control batch [SNAPSHOT_HEADER(lastContained 0)], one
//! data batch of FeatureLevelRecords (metadata.version first, then the other features with
//! level > 0 sorted by name), control batch [SNAPSHOT_FOOTER]. Kafka writes it through
//! `bootstrap.checkpoint.tmp` and an atomic rename without fsync; we fsync anyway (harmless,
//! and the format must survive a crash right after it returns).
//!
//! Newer Kafka (KAFKA-19648) also puts these records into the 0-0 snapshot; `read_bootstrap`
//! accepts either place.

use std::collections::BTreeMap;
use std::path::Path;

use super::StorageError;
use crate::common::release::METADATA_VERSION_FEATURE;
use crate::durable::write_atomic;
use crate::records::feature_level::{feature_level_record, parse_feature_level_record};
use crate::records::BatchView;
use crate::snapshot::{RawSnapshot, SnapshotEncoder, SnapshotHeaderInfo, SnapshotId};

/// File name.
pub const BOOTSTRAP_FILE: &str = "bootstrap.checkpoint";

/// Feature levels to bootstrap a cluster with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootstrapFeatures {
    /// metadata.version level.
    pub metadata_version: i16,
    /// Other features (written only when level > 0).
    pub features: BTreeMap<String, i16>,
    /// The values of the other bootstrap records, in file order after the features (the
    /// UserScramCredentialRecords of `format --add-scram`).
    pub other_records: Vec<Vec<u8>>,
}

impl BootstrapFeatures {
    /// The record values in Kafka's order.
    pub fn record_values(&self) -> Vec<Vec<u8>> {
        let mut out = vec![feature_level_record(
            METADATA_VERSION_FEATURE,
            self.metadata_version,
        )];
        for (name, level) in &self.features {
            if *level > 0 {
                out.push(feature_level_record(name, *level));
            }
        }
        out.extend(self.other_records.iter().cloned());
        out
    }

    /// Collects FeatureLevelRecords, and keeps every other record, from the data batches of a
    /// snapshot-layout file.
    pub fn from_batches(batches: &[Vec<u8>]) -> Option<Self> {
        let mut mv = None;
        let mut features = BTreeMap::new();
        let mut other_records = Vec::new();
        for b in batches {
            let Ok(v) = BatchView::new(b) else { continue };
            if v.is_control() {
                continue;
            }
            for r in v.records().flatten() {
                if let Some((name, level)) = parse_feature_level_record(r.value) {
                    if name == METADATA_VERSION_FEATURE {
                        mv = Some(level);
                    } else {
                        features.insert(name, level);
                    }
                } else {
                    other_records.push(r.value.to_vec());
                }
            }
        }
        mv.map(|metadata_version| BootstrapFeatures {
            metadata_version,
            features,
            other_records,
        })
    }
}

/// The bytes of a bootstrap.checkpoint; `append_timestamp_ms` stamps the three batches.
pub fn bootstrap_checkpoint_bytes(
    features: &BootstrapFeatures,
    append_timestamp_ms: i64,
) -> Result<Vec<u8>, StorageError> {
    let mut enc = SnapshotEncoder::new(0);
    let header = SnapshotHeaderInfo {
        last_contained_log_timestamp_ms: 0,
        kraft_version: None,
        voters: None,
    };
    let values = features.record_values();
    let refs: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
    let mut out = enc.header_batch(&header, append_timestamp_ms)?;
    out.extend(enc.data_batch(&refs, append_timestamp_ms)?);
    out.extend(enc.footer_batch(append_timestamp_ms)?);
    Ok(out)
}

/// Writes `<dir>/bootstrap.checkpoint`.
pub fn write_bootstrap_checkpoint(
    dir: &Path,
    features: &BootstrapFeatures,
    append_timestamp_ms: i64,
) -> Result<(), StorageError> {
    let path = dir.join(BOOTSTRAP_FILE);
    let bytes = bootstrap_checkpoint_bytes(features, append_timestamp_ms)?;
    write_atomic(&path, &bytes, true).map_err(|e| StorageError::io(&path, e))
}

/// Reads the bootstrap features of a formatted metadata directory: from the 0-0 snapshot's
/// data batches when it has any (newer Kafka), else from bootstrap.checkpoint. `Ok(None)` when
/// neither exists (Kafka then takes metadata.version from configuration).
pub fn read_bootstrap(
    dir: &Path,
    partition_dir: &Path,
) -> Result<Option<BootstrapFeatures>, StorageError> {
    let zero = SnapshotId::BOOTSTRAP.path_in(partition_dir);
    if zero.exists() {
        let snap = RawSnapshot::open_path(&zero, SnapshotId::BOOTSTRAP)?;
        if let Some(f) = BootstrapFeatures::from_batches(&snap.batches()?) {
            return Ok(Some(f));
        }
    }
    let path = dir.join(BOOTSTRAP_FILE);
    if !path.exists() {
        return Ok(None);
    }
    let snap = RawSnapshot::open_path(&path, SnapshotId::BOOTSTRAP)?;
    Ok(BootstrapFeatures::from_batches(&snap.batches()?))
}
