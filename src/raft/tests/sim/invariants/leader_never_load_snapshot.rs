//! LeaderNeverLoadSnapshot: a leader (or a leader that resigned its epoch) never installs a
//! snapshot; only replicas behind the leader's log start download one.

use super::{Cluster, Invariant};

#[derive(Debug, Default)]
pub struct LeaderNeverLoadSnapshot;

impl Invariant for LeaderNeverLoadSnapshot {
    fn name(&self) -> &'static str {
        "LeaderNeverLoadSnapshot"
    }

    fn check(&mut self, cluster: &Cluster) -> Result<(), String> {
        for node in cluster.nodes.values() {
            if let Some((id, Some(epoch))) = node.snapshot_loads.iter().find(|(_, l)| l.is_some()) {
                return Err(format!(
                    "node {}, leader of epoch {epoch}, installed snapshot {}-{}",
                    node.id, id.offset, id.epoch
                ));
            }
        }
        Ok(())
    }
}
