//! The controller simulations' invariants, one file each, named as in Kafka's tests and the
//! Raft simulation; [`ImageChecks`] runs the per-image ones on each node's committed images.

pub mod acked_writes_committed;
pub mod broker_epochs_unique_and_increasing;
pub mod monotonic_partition_and_leader_epochs;
pub mod no_leader_fenced;
pub mod restart_replays_the_same_image;

use crate::metadata::image::MetadataImage;

/// The invariants of one node's successive committed images.
#[derive(Debug, Default)]
pub struct ImageChecks {
    /// The last committed image seen (for the monotonic checks); `None` after a restart.
    pub seen: Option<MetadataImage>,
    /// Broker fencings seen (so a run can show it fenced brokers).
    pub fencings: usize,
}

impl ImageChecks {
    /// broker_epochs_unique_and_increasing, no_leader_fenced and
    /// monotonic_partition_and_leader_epochs on node `n`'s committed `image`.
    pub fn check(&mut self, n: usize, image: &MetadataImage) -> Result<(), String> {
        broker_epochs_unique_and_increasing::unique(n, image)?;
        no_leader_fenced::check(n, image)?;
        if self
            .seen
            .as_ref()
            .is_some_and(|prev| prev.next_offset == image.next_offset)
        {
            return Ok(());
        }
        if let Some(prev) = &self.seen {
            broker_epochs_unique_and_increasing::increasing(n, prev, image)?;
            monotonic_partition_and_leader_epochs::check(n, prev, image)?;
            self.fencings += image
                .brokers
                .iter()
                .filter(|(id, b)| b.fenced && prev.brokers.get(id).is_some_and(|o| !o.fenced))
                .count();
        }
        self.seen = Some(image.clone());
        Ok(())
    }
}
