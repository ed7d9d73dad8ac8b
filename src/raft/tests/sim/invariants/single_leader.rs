//! SingleLeader: at most one leader per epoch, across every node's persisted election state
//! (running or not) and every running leader, over the whole run.

use std::collections::BTreeMap;

use super::{Cluster, Invariant};
use crate::raft::Role;

#[derive(Debug, Default)]
pub struct SingleLeader {
    /// epoch → (leader, the node that first told us).
    leaders: BTreeMap<i32, (i32, i32)>,
}

impl SingleLeader {
    fn record(&mut self, epoch: i32, leader: i32, witness: i32) -> Result<(), String> {
        let (known, first) = *self.leaders.entry(epoch).or_insert((leader, witness));
        if known != leader {
            return Err(format!(
                "epoch {epoch} has two leaders: {known} (per node {first}) and {leader} (per node {witness})"
            ));
        }
        Ok(())
    }
}

impl Invariant for SingleLeader {
    fn name(&self) -> &'static str {
        "SingleLeader"
    }

    fn check(&mut self, cluster: &Cluster) -> Result<(), String> {
        for node in cluster.nodes.values() {
            if let Some(s) = &node.disk.stored {
                if let Some(leader) = s.leader_id {
                    self.record(s.epoch, leader, node.id)?;
                }
            }
            if let Some(core) = node.core() {
                if let Role::Leader(l) = core.role() {
                    self.record(l.epoch, node.id, node.id)?;
                }
            }
        }
        Ok(())
    }
}
