//! Kafka's simulation invariants (`RaftEventSimulationTest` 952-1250), one per file, checked
//! after every event.

mod consistent_committed_data;
mod leader_never_load_snapshot;
mod majority_reached_high_watermark;
mod monotonic_epoch;
mod monotonic_high_watermark;
mod overlapping_voter_sets;
mod single_leader;
mod snapshot_at_log_start;

pub use consistent_committed_data::ConsistentCommittedData;
pub use leader_never_load_snapshot::LeaderNeverLoadSnapshot;
pub use majority_reached_high_watermark::MajorityReachedHighWatermark;
pub use monotonic_epoch::MonotonicEpoch;
pub use monotonic_high_watermark::MonotonicHighWatermark;
pub use overlapping_voter_sets::OverlappingVoterSets;
pub use single_leader::SingleLeader;
pub use snapshot_at_log_start::SnapshotAtLogStart;

use super::cluster::Cluster;

/// A property of the whole cluster that must hold after every event.
pub trait Invariant {
    /// Kafka's name for it.
    fn name(&self) -> &'static str;
    /// `Err(what went wrong)` on a violation.
    fn check(&mut self, cluster: &Cluster) -> Result<(), String>;
}

/// Kafka's `schedulerWithDefaultInvariants`.
pub fn install_defaults(cluster: &mut Cluster) {
    cluster.add_invariant(Box::new(MonotonicHighWatermark::default()));
    cluster.add_invariant(Box::new(MonotonicEpoch::default()));
    cluster.add_invariant(Box::new(MajorityReachedHighWatermark));
    cluster.add_invariant(Box::new(SingleLeader::default()));
    cluster.add_invariant(Box::new(SnapshotAtLogStart));
    cluster.add_invariant(Box::new(LeaderNeverLoadSnapshot));
    cluster.add_invariant(Box::new(ConsistentCommittedData::default()));
}

/// For `canRecoverFromSingleNodeCommittedDataLoss`: Kafka drops `MonotonicEpoch` and
/// `MajorityReachedHighWatermark`, which deliberate loss of a node's disk can break.
pub fn install_for_data_loss(cluster: &mut Cluster) {
    cluster.add_invariant(Box::new(MonotonicHighWatermark::default()));
    cluster.add_invariant(Box::new(SingleLeader::default()));
    cluster.add_invariant(Box::new(SnapshotAtLogStart));
    cluster.add_invariant(Box::new(LeaderNeverLoadSnapshot));
    cluster.add_invariant(Box::new(ConsistentCommittedData::default()));
}
