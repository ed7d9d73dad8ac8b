//! What scenarios and invariants look at in the simulated cluster: running nodes, high
//! watermarks, leaders, and a one-screen description for failure messages (read-only).

use super::super::node::SimNode;
use super::Cluster;
use crate::raft::{LogReader, Role};

impl Cluster {
    pub fn running(&self) -> impl Iterator<Item = &SimNode> {
        self.nodes.values().filter(|n| n.is_running())
    }

    /// A running node's high watermark (0 when unknown or down), as Kafka's `RaftNode`.
    pub fn hw(&self, id: i32) -> i64 {
        self.nodes[&id]
            .core()
            .and_then(|c| c.high_watermark())
            .unwrap_or(0)
    }

    /// The running leader with the largest epoch: (id, epoch, high watermark).
    pub fn leader_with_max_epoch(&self) -> Option<(i32, i32, Option<i64>)> {
        self.running()
            .filter_map(|n| {
                let c = n.core()?;
                matches!(c.role(), Role::Leader(_)).then(|| (n.id, c.epoch(), c.high_watermark()))
            })
            .max_by_key(|(_, epoch, _)| *epoch)
    }

    /// Kafka's `latestLeader`: the leader known in the largest epoch among running nodes.
    pub fn latest_leader(&self) -> Option<i32> {
        let mut best: Option<(i32, Option<i32>)> = None;
        for n in self.running() {
            let c = n.core().expect("running");
            let (epoch, leader) = (c.epoch(), c.leader_id());
            match best {
                Some((e, _)) if epoch < e => {}
                Some((e, _)) if epoch == e && leader.is_none() => {}
                _ => best = Some((epoch, leader)),
            }
        }
        best.and_then(|(_, l)| l)
    }

    /// Kafka's `hasConsistentLeader`: every running node persisted the same epoch and leader.
    /// (Only those: since 4.0 a follower also keeps the vote it cast in the epoch.)
    pub fn has_consistent_leader(&self) -> bool {
        let mut states = self
            .running()
            .map(|n| n.disk.stored.as_ref().map(|s| (s.epoch, s.leader_id)));
        let Some(Some(first)) = states.next() else {
            return false;
        };
        first.1.is_some() && states.all(|s| s == Some(first))
    }

    pub fn any_reached_hw(&self, offset: i64) -> bool {
        self.running().any(|n| self.hw(n.id) > offset)
    }

    pub fn all_reached_hw(&self, offset: i64) -> bool {
        self.running().all(|n| self.hw(n.id) >= offset)
    }

    pub fn all_of_reached_hw(&self, offset: i64, ids: &[i32]) -> bool {
        ids.iter()
            .all(|id| self.nodes[id].is_running() && self.hw(*id) >= offset)
    }

    pub fn max_hw_reached(&self, ids: Option<&[i32]>) -> i64 {
        self.running()
            .filter(|n| ids.is_none_or(|ids| ids.contains(&n.id)))
            .map(|n| self.hw(n.id))
            .max()
            .unwrap_or(0)
    }

    pub fn max_log_end_offset(&self) -> i64 {
        self.running()
            .map(|n| n.disk.log.end_offset().offset)
            .max()
            .unwrap_or(0)
    }

    /// A one-screen summary of every node, for failure messages.
    pub fn describe(&self) -> String {
        let mut s = String::new();
        for n in self.nodes.values() {
            let role = n.core().map_or("down".to_string(), |c| {
                format!("{} epoch {}", c.state_name(), c.epoch())
            });
            s.push_str(&format!(
                "  node {}{}: {role}, hw {:?}, log end {:?}, stored {:?}\n",
                n.id,
                if n.is_voter { "" } else { " (observer)" },
                n.core().and_then(|c| c.high_watermark()),
                n.disk.log.end_offset(),
                n.disk.stored
            ));
        }
        s
    }
}
