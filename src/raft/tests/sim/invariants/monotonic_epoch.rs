//! MonotonicEpoch: a node's persisted epoch never decreases, and a running node's epoch is
//! the persisted one.

use std::collections::BTreeMap;

use super::{Cluster, Invariant};

#[derive(Debug, Default)]
pub struct MonotonicEpoch {
    /// node → (wipe count, last persisted epoch seen).
    epochs: BTreeMap<i32, (u64, i32)>,
}

impl Invariant for MonotonicEpoch {
    fn name(&self) -> &'static str {
        "MonotonicEpoch"
    }

    fn check(&mut self, cluster: &Cluster) -> Result<(), String> {
        for node in cluster.nodes.values() {
            let Some(stored) = &node.disk.stored else {
                continue;
            };
            if let Some((wipes, old)) = self.epochs.get(&node.id) {
                if *wipes == node.wipes && *old > stored.epoch {
                    return Err(format!(
                        "node {} persisted epoch went from {old} to {}",
                        node.id, stored.epoch
                    ));
                }
            }
            self.epochs.insert(node.id, (node.wipes, stored.epoch));
            if let Some(core) = node.core() {
                if core.epoch() != stored.epoch {
                    return Err(format!(
                        "node {} runs in epoch {} but persisted {}",
                        node.id,
                        core.epoch(),
                        stored.epoch
                    ));
                }
            }
        }
        Ok(())
    }
}
