//! Finalized features as the controller reports them (Kafka's `FeatureControlManager`, read
//! side): what ApiVersions lists, and the record versions a metadata.version implies.

use crate::metadata::image::MetadataImage;

/// Whether an ISR shrink bumps the leader epoch at `image`'s metadata.version.
pub fn leader_epoch_bump_on_isr_shrink(image: &MetadataImage) -> bool {
    image
        .metadata_version()
        .is_some_and(|l| l < crate::common::release::mv::NO_LEADER_EPOCH_BUMP_ON_ISR_SHRINK)
}

/// The PartitionRecord / PartitionChangeRecord version at `image`'s metadata.version.
pub fn partition_record_version(image: &MetadataImage) -> u16 {
    crate::metadata::image::partition_version(image.metadata_version().unwrap_or(1))
}

/// Whether eligible leader replicas (KIP-966) are on: eligible.leader.replicas.version ≥ 1.
pub fn elr_enabled(image: &MetadataImage) -> bool {
    image
        .features
        .get(crate::metadata::image::ELR_FEATURE)
        .is_some_and(|l| *l >= 1)
}
