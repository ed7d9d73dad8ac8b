//! MajorityReachedHighWatermark: a majority of voters hold (durably) every offset below the
//! high watermark of the running leader with the largest epoch. With voter changes (KIP-853)
//! "voters" is the leader's latest voter set, or, while a change is not yet committed, the
//! voter set in effect at the high watermark (the one that committed it).

use super::{Cluster, Invariant};
use crate::raft::voters::VoterHistory;
use crate::raft::LogReader;

#[derive(Debug, Default)]
pub struct MajorityReachedHighWatermark;

fn reached(cluster: &Cluster, voters: &[i32], hw: i64) -> usize {
    voters
        .iter()
        .filter(|id| {
            cluster
                .nodes
                .get(id)
                .is_some_and(|n| n.disk.log.flushed_end_offset() >= hw)
        })
        .count()
}

impl Invariant for MajorityReachedHighWatermark {
    fn name(&self) -> &'static str {
        "MajorityReachedHighWatermark"
    }

    fn check(&mut self, cluster: &Cluster) -> Result<(), String> {
        let Some((leader, epoch, Some(hw))) = cluster.max_epoch_leader else {
            return Ok(());
        };
        let Some(core) = cluster.nodes.get(&leader).and_then(|n| n.core()) else {
            return Ok(());
        };
        let latest: Vec<i32> = core.voters().ids().collect();
        let count = reached(cluster, &latest, hw);
        if count > latest.len() / 2 {
            return Ok(());
        }
        // The voter set in effect just below the high watermark, from the leader's log
        // (only on this rare path: it reads the log).
        let log = &cluster.nodes[&leader].disk.log;
        let mut history = VoterHistory::new(core.voters().clone(), None);
        for (_, _, batch) in log.batches_between(0, hw) {
            history.apply(&batch);
        }
        let committed: Vec<i32> = history.voters().ids().collect();
        let committed_count = reached(cluster, &committed, hw);
        if committed_count > committed.len() / 2 {
            return Ok(());
        }
        Err(format!(
            "leader {leader} (epoch {epoch}) has high watermark {hw} but only {count} of voters {latest:?} and {committed_count} of {committed:?} hold it durably (log end {:?})",
            log.end_offset()
        ))
    }
}
