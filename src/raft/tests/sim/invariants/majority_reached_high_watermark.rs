//! MajorityReachedHighWatermark: a majority of voters hold (durably) every offset below the
//! high watermark of the running leader with the largest epoch.

use super::{Cluster, Invariant};

#[derive(Debug, Default)]
pub struct MajorityReachedHighWatermark;

impl Invariant for MajorityReachedHighWatermark {
    fn name(&self) -> &'static str {
        "MajorityReachedHighWatermark"
    }

    fn check(&mut self, cluster: &Cluster) -> Result<(), String> {
        let Some((leader, epoch, Some(hw))) = cluster.max_epoch_leader else {
            return Ok(());
        };
        let reached = cluster
            .nodes
            .values()
            .filter(|n| n.is_voter && n.disk.log.flushed_end_offset() >= hw)
            .count();
        if reached < cluster.majority() {
            return Err(format!(
                "leader {leader} (epoch {epoch}) has high watermark {hw} but only {reached} voters hold it durably (majority {})",
                cluster.majority()
            ));
        }
        Ok(())
    }
}
