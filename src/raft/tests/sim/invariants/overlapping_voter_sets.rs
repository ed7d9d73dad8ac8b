//! OverlappingVoterSets (ours, for KIP-853 voter changes), on the log of the running leader
//! with the largest epoch:
//! - every VotersRecord differs from the one before it by at most one voter key each way
//!   (Kafka's `VoterSet.hasOverlappingMajority`), so no majority of the old set is disjoint
//!   from a majority of the new one: two disjoint majorities never exist;
//! - the latest committed voter set and the leader's latest (possibly uncommitted, already
//!   effective) one never allow disjoint majorities: at most one change is uncommitted;
//! - a VotersRecord once committed (below that leader's high watermark) is found unchanged,
//!   at its offset, in the log of every later such leader: committed voter changes are never
//!   lost.
//!
//! Incremental: a leader's log is scanned once, and again from the start when the leader,
//! its incarnation or its truncation count changes.

use std::collections::{BTreeMap, BTreeSet};

use super::{Cluster, Invariant};
use crate::raft::types::ReplicaKey;
use crate::raft::voters::voter_set_from_record;
use crate::raft::LogReader;
use crate::records::control::ControlRecord;
use crate::records::framer::BatchFramer;

type Keys = BTreeSet<ReplicaKey>;

#[derive(Debug, Default)]
pub struct OverlappingVoterSets {
    /// (leader, incarnation, truncations) whose log `scanned_to` refers to.
    scanning: Option<(i32, u64, usize)>,
    scanned_to: i64,
    last: Option<(i64, Keys)>,
    /// Committed VotersRecords: offset → voter keys.
    committed: BTreeMap<i64, Keys>,
    /// VotersRecord offsets seen in the current scan.
    seen: BTreeSet<i64>,
}

/// Whether a majority of `a` and a majority of `b` can be disjoint: each takes as many
/// members as it can outside the other set, the rest must come from the intersection.
pub fn disjoint_majorities_possible(a: &Keys, b: &Keys) -> bool {
    let both = a.intersection(b).count();
    let need_a = (a.len() / 2 + 1).saturating_sub(a.len() - both);
    let need_b = (b.len() / 2 + 1).saturating_sub(b.len() - both);
    need_a + need_b <= both
}

/// Keys as `id` or `id/dir-suffix`, for short messages.
fn show(keys: &Keys) -> String {
    let ids: Vec<String> = keys
        .iter()
        .map(|k| format!("{}/{:x}", k.id, k.directory_id.as_u128() & 0xffff))
        .collect();
    format!("[{}]", ids.join(", "))
}

fn voters_records(batch: &[u8]) -> Vec<(i64, Keys)> {
    let mut found = Vec::new();
    for (_, view) in BatchFramer::new(batch, 0, usize::MAX) {
        if !view.is_control() {
            continue;
        }
        for record in view.records().flatten() {
            if let Ok(ControlRecord::Voters(v)) = record.control_record() {
                let keys = voter_set_from_record(&v).nodes().map(|n| n.key).collect();
                found.push((record.offset, keys));
            }
        }
    }
    found
}

impl Invariant for OverlappingVoterSets {
    fn name(&self) -> &'static str {
        "OverlappingVoterSets"
    }

    fn check(&mut self, cluster: &Cluster) -> Result<(), String> {
        let Some((leader, _, hw)) = cluster.max_epoch_leader else {
            return Ok(());
        };
        let node = &cluster.nodes[&leader];
        let Some(incarnation) = node.incarnation() else {
            return Ok(());
        };
        let scanning = Some((leader, incarnation, node.truncations.len()));
        if self.scanning != scanning {
            self.scanning = scanning;
            self.scanned_to = 0;
            self.last = None;
            self.seen.clear();
        }
        let log = &node.disk.log;
        let end = log.end_offset().offset;
        for (_, next, batch) in log.batches_between(self.scanned_to, end) {
            for (offset, keys) in voters_records(&batch) {
                if let Some((prev_offset, prev)) = &self.last {
                    let removed = prev.difference(&keys).count();
                    let added = keys.difference(prev).count();
                    if removed > 1 || added > 1 || disjoint_majorities_possible(prev, &keys) {
                        return Err(format!(
                            "leader {leader}: voters {} at offset {offset} do not overlap a majority of {} at {prev_offset}",
                            show(&keys),
                            show(prev)
                        ));
                    }
                }
                if let Some(committed) = self.committed.get(&offset) {
                    if *committed != keys {
                        return Err(format!(
                            "leader {leader}: committed voters {} at offset {offset} became {}",
                            show(committed),
                            show(&keys)
                        ));
                    }
                }
                self.seen.insert(offset);
                self.last = Some((offset, keys));
            }
            self.scanned_to = next;
        }
        for (offset, keys) in &self.committed {
            if *offset < self.scanned_to && !self.seen.contains(offset) {
                return Err(format!(
                    "leader {leader}: committed voters {} at offset {offset} are missing from its log",
                    show(keys)
                ));
            }
        }
        if let Some(hw) = hw {
            // Newly committed records: everything scanned below the high watermark.
            let newly: Vec<i64> = self
                .seen
                .range(..hw)
                .filter(|o| !self.committed.contains_key(o))
                .copied()
                .collect();
            if !newly.is_empty() {
                let mut history = BTreeMap::new();
                for (_, _, batch) in log.batches_between(newly[0], hw) {
                    history.extend(voters_records(&batch));
                }
                for offset in newly {
                    if let Some(keys) = history.remove(&offset) {
                        self.committed.insert(offset, keys);
                    }
                }
            }
            let committed = self.committed.range(..hw).next_back();
            if let (Some((c_offset, committed)), Some((offset, latest))) = (committed, &self.last) {
                if disjoint_majorities_possible(committed, latest) {
                    return Err(format!(
                        "leader {leader}: committed voters {} at {c_offset} and effective voters {} at {offset} allow disjoint majorities",
                        show(committed),
                        show(latest)
                    ));
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(ids: &[i32]) -> Keys {
        ids.iter().map(|id| ReplicaKey::of_id(*id)).collect()
    }

    #[test]
    fn one_change_keeps_majorities_overlapping_two_do_not() {
        assert!(!disjoint_majorities_possible(
            &keys(&[0, 1, 2]),
            &keys(&[0, 1, 2, 3])
        ));
        assert!(!disjoint_majorities_possible(
            &keys(&[0, 1, 2]),
            &keys(&[0, 1])
        ));
        assert!(!disjoint_majorities_possible(&keys(&[0]), &keys(&[0, 1])));
        assert!(disjoint_majorities_possible(
            &keys(&[0, 1, 2]),
            &keys(&[0, 1, 3])
        ));
        assert!(disjoint_majorities_possible(
            &keys(&[0, 1, 2, 3]),
            &keys(&[0, 1, 4, 5])
        ));
        assert!(disjoint_majorities_possible(&keys(&[0, 1]), &keys(&[2, 3])));
    }
}
