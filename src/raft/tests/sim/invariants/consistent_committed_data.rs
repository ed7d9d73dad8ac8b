//! ConsistentCommittedData: a batch is committed the first time any running node's high
//! watermark passes it. From then on every running node holds exactly those bytes at that
//! offset below its own high watermark (Kafka's check), no `Truncate` ever removes a copy of a
//! committed batch, and no node's high watermark is past its own log end. Snapshots included
//! (Kafka's check reads the state machine's snapshot too): every snapshot a node holds is the
//! fingerprint of exactly the committed batches below its end offset, which must be a committed
//! batch boundary. Incremental: each node's log is compared once, again only after a
//! truncation or a crash; each snapshot once.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;

use super::{Cluster, Invariant};
use crate::raft::tests::sim::snapshots;
use crate::raft::LogReader;

#[derive(Debug, Default)]
pub struct ConsistentCommittedData {
    /// base offset → (next offset, batch bytes).
    committed: BTreeMap<i64, (i64, Bytes)>,
    /// Every batch below this is committed.
    committed_end: i64,
    /// node → (wipe count, offset up to which its log was compared).
    checked_to: BTreeMap<i32, (u64, i64)>,
    /// Committed batch boundary → the snapshot hash of every committed batch below it.
    hash_at: BTreeMap<i64, u64>,
    /// (node, wipe count, snapshot end offset, epoch) already compared.
    checked_snapshots: BTreeSet<(i32, u64, i64, i32)>,
}

impl ConsistentCommittedData {
    fn learn(&mut self, cluster: &Cluster) -> Result<(), String> {
        for node in cluster.running() {
            let Some(hw) = node.core().and_then(|c| c.high_watermark()) else {
                continue;
            };
            let end = node.disk.log.end_offset().offset;
            if hw > end {
                return Err(format!(
                    "node {} high watermark {hw} is past its log end {end}",
                    node.id
                ));
            }
            // A node whose log starts past what we know cannot teach us the batches in
            // between (its snapshot holds them); another node taught us them earlier.
            if hw <= self.committed_end || node.disk.log.log_start_offset() > self.committed_end {
                continue;
            }
            for (base, next, bytes) in node.disk.log.batches_between(self.committed_end, hw) {
                if base != self.committed_end || next > hw {
                    return Err(format!(
                        "node {} (hw {hw}) has batch [{base}, {next}) not aligned with the committed end {}",
                        node.id, self.committed_end
                    ));
                }
                let before = *self
                    .hash_at
                    .entry(self.committed_end)
                    .or_insert_with(snapshots::empty_hash);
                self.hash_at
                    .insert(next, snapshots::hash_continue(before, &bytes));
                self.committed.insert(base, (next, bytes));
                self.committed_end = next;
            }
        }
        Ok(())
    }
}

impl ConsistentCommittedData {
    fn check_snapshots(&mut self, node: &super::super::node::SimNode) -> Result<(), String> {
        for ((offset, epoch), bytes) in &node.disk.log.snapshots {
            if !self
                .checked_snapshots
                .insert((node.id, node.wipes, *offset, *epoch))
            {
                continue;
            }
            let Some((end, hash)) = snapshots::decode(bytes) else {
                return Err(format!(
                    "node {} holds snapshot {offset}-{epoch} of {} bytes, not a fingerprint",
                    node.id,
                    bytes.len()
                ));
            };
            if end != *offset || *offset > self.committed_end {
                return Err(format!(
                    "node {} holds snapshot {offset}-{epoch} (of state up to {end}) past the committed data (end {})",
                    node.id, self.committed_end
                ));
            }
            match self.hash_at.get(offset) {
                Some(h) if *h == hash => {}
                Some(_) => {
                    return Err(format!(
                        "node {} holds snapshot {offset}-{epoch} whose state differs from the committed batches below {offset}",
                        node.id
                    ))
                }
                None => {
                    return Err(format!(
                        "node {} holds snapshot {offset}-{epoch} that ends inside a committed batch",
                        node.id
                    ))
                }
            }
        }
        Ok(())
    }
}

impl Invariant for ConsistentCommittedData {
    fn name(&self) -> &'static str {
        "ConsistentCommittedData"
    }

    fn check(&mut self, cluster: &Cluster) -> Result<(), String> {
        for node in cluster.nodes.values() {
            for t in &node.truncations {
                for (base, next, bytes) in &t.removed {
                    if self.committed.get(base) == Some(&(*next, bytes.clone())) {
                        return Err(format!(
                            "node {} truncated to {} and so removed committed batch [{base}, {next})",
                            node.id, t.offset
                        ));
                    }
                }
            }
        }
        self.learn(cluster)?;
        for node in cluster.nodes.values() {
            self.check_snapshots(node)?;
            let entry = self.checked_to.entry(node.id).or_insert((node.wipes, 0));
            if entry.0 != node.wipes {
                *entry = (node.wipes, 0);
            }
            let mut from = entry.1;
            if let Some(lost) = node.lost_from {
                from = from.min(lost);
            }
            for t in &node.truncations {
                from = from.min(t.offset);
            }
            // Below its log start a node holds only its snapshot.
            from = from.max(node.disk.log.log_start_offset());
            let hw = node.core().and_then(|c| c.high_watermark()).unwrap_or(0);
            let upto = hw.min(self.committed_end);
            if upto <= from {
                entry.1 = from;
                continue;
            }
            let mut checked = from;
            for (base, next, bytes) in node.disk.log.batches_between(from, upto) {
                match self.committed.get(&base) {
                    Some((n, b)) if *n == next && *b == bytes => checked = next,
                    Some((n, _)) => {
                        return Err(format!(
                            "node {} holds a different batch [{base}, {next}) below its high watermark {hw} where [{base}, {n}) is committed",
                            node.id
                        ))
                    }
                    None => {
                        return Err(format!(
                            "node {} holds batch [{base}, {next}) below its high watermark {hw} that straddles committed batches",
                            node.id
                        ))
                    }
                }
            }
            entry.1 = checked;
        }
        Ok(())
    }
}
