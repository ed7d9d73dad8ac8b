//! MonotonicHighWatermark: within one process lifetime a node's known high watermark never
//! decreases; and (Kafka's form) the high watermark of the running leader with the largest
//! epoch never decreases as long as no older-epoch leader is the one looked at.

use std::collections::BTreeMap;

use super::{Cluster, Invariant};

#[derive(Debug, Default)]
pub struct MonotonicHighWatermark {
    /// node → (incarnation, last known high watermark).
    per_process: BTreeMap<i32, (u64, i64)>,
    /// (epoch, high watermark) of the newest leader seen.
    leader: Option<(i32, i64)>,
}

impl Invariant for MonotonicHighWatermark {
    fn name(&self) -> &'static str {
        "MonotonicHighWatermark"
    }

    fn check(&mut self, cluster: &Cluster) -> Result<(), String> {
        for node in cluster.running() {
            let (Some(core), Some(incarnation)) = (node.core(), node.incarnation()) else {
                continue;
            };
            let Some(hw) = core.high_watermark() else {
                continue;
            };
            if let Some((inc, old)) = self.per_process.get(&node.id) {
                if *inc == incarnation && hw < *old {
                    return Err(format!(
                        "node {} high watermark went from {old} to {hw}",
                        node.id
                    ));
                }
            }
            self.per_process.insert(node.id, (incarnation, hw));
        }
        if let Some((id, epoch, Some(hw))) = cluster.max_epoch_leader {
            match self.leader {
                Some((old_epoch, old_hw)) if epoch >= old_epoch && hw < old_hw => {
                    return Err(format!(
                        "leader {id} of epoch {epoch} has high watermark {hw}, below {old_hw} of epoch {old_epoch}"
                    ));
                }
                Some((old_epoch, _)) if epoch < old_epoch => {}
                _ => self.leader = Some((epoch, hw)),
            }
        }
        Ok(())
    }
}
