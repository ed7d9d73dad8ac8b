//! The metadata image: what the committed metadata records say, replayed in offset order with
//! Kafka's rules. For now the parts a controller needs before any broker-facing API: the
//! finalized features (metadata.version first) and the controller registrations.
//!
//! ```text
//!   snapshot (data batches) ─┐
//!   committed log batches ───┴─▶ replay(record) ─▶ features, controllers
//! ```

use std::collections::BTreeMap;

use super::controller::ControllerRegistration;
use super::record::MetadataRecord;
use super::records::FeatureLevelRecord;
use crate::records::framer::BatchFramer;
use crate::records::view::BatchView;
use crate::storage::features::METADATA_VERSION_FEATURE;

/// metadata.version from which controllers register (3.7-IV0, KIP-919).
pub const MIN_MV_FOR_CONTROLLER_REGISTRATION: i16 = 15;

/// The replayed state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MetadataImage {
    /// Finalized features by name (metadata.version included); level 0 means absent.
    pub features: BTreeMap<String, i16>,
    /// Registered controllers by node id.
    pub controllers: BTreeMap<i32, ControllerRegistration>,
    /// Offset after the last record replayed (the next one to read).
    pub next_offset: i64,
    /// Records that could not be decoded (logged; replay goes on).
    pub undecodable_records: u64,
}

impl MetadataImage {
    /// The finalized metadata.version level, once a FeatureLevelRecord set it.
    pub fn metadata_version(&self) -> Option<i16> {
        self.features.get(METADATA_VERSION_FEATURE).copied()
    }

    /// Whether controllers register (KIP-919) at the current metadata.version.
    pub fn controller_registration_supported(&self) -> bool {
        self.metadata_version()
            .is_some_and(|mv| mv >= MIN_MV_FOR_CONTROLLER_REGISTRATION)
    }

    /// Applies one record (Kafka's `FeaturesDelta` / `ClusterDelta` rules).
    pub fn replay(&mut self, record: MetadataRecord) {
        match record {
            MetadataRecord::FeatureLevel(FeatureLevelRecord {
                name,
                feature_level,
                ..
            }) => {
                if feature_level == 0 && name != METADATA_VERSION_FEATURE {
                    self.features.remove(&name);
                } else {
                    self.features.insert(name, feature_level);
                }
            }
            MetadataRecord::RegisterController(registration) => {
                self.controllers
                    .insert(registration.controller_id, registration);
            }
            // Brokers, topics, configs, … are not part of this image yet.
            _ => {}
        }
    }

    /// Replays the data batches of `bytes` (whole v2 batches, as a log read or a snapshot
    /// file holds them) whose last offset is below `below_offset`; control batches only move
    /// the position. Returns the number of batches replayed.
    pub fn replay_batches(&mut self, bytes: &[u8], below_offset: i64, source: &str) -> usize {
        let mut replayed = 0;
        for (_, batch) in BatchFramer::new(bytes, 0, usize::MAX) {
            if batch.last_offset() >= below_offset {
                break;
            }
            if batch.next_offset() <= self.next_offset {
                continue;
            }
            self.replay_batch(&batch, source);
            self.next_offset = batch.next_offset();
            replayed += 1;
        }
        replayed
    }

    /// Starts over from a snapshot file's bytes: its data batches (whose offsets are the
    /// snapshot's own, not the log's) hold the whole image as of `end_offset`.
    pub fn load_snapshot(&mut self, bytes: &[u8], end_offset: i64, source: &str) {
        *self = MetadataImage::default();
        for (_, batch) in BatchFramer::new(bytes, 0, usize::MAX) {
            self.replay_batch(&batch, source);
        }
        self.next_offset = end_offset;
    }

    fn replay_batch(&mut self, batch: &BatchView<'_>, source: &str) {
        if batch.is_control() {
            return;
        }
        for (i, record) in batch.records().enumerate() {
            let decoded = record
                .map_err(|e| e.to_string())
                .and_then(|r| MetadataRecord::decode(r.value).map_err(|e| e.to_string()));
            match decoded {
                Ok(r) => self.replay(r),
                Err(e) => {
                    self.undecodable_records += 1;
                    tracing::warn!(
                        "{source}: metadata record {i} of the batch at offset {} cannot be \
                         decoded, left out of the image: {e}",
                        batch.base_offset()
                    );
                }
            }
        }
    }
}
