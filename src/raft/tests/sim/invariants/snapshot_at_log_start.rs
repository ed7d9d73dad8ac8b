//! SnapshotAtLogStart (Kafka's): on every node the log starts at or before its earliest
//! snapshot, and exactly at it once the log start has moved past 0; the log agrees with the
//! snapshot's id (validating its end offset and epoch is VALID). Ours besides: a node without
//! snapshots starts its log at 0, and no truncation reaches below the log start (it would cut
//! into data only the snapshot still holds).

use super::{Cluster, Invariant};
use crate::raft::{validate_offset_and_epoch, LogReader, ValidOffsetAndEpoch};

#[derive(Debug, Default)]
pub struct SnapshotAtLogStart;

impl Invariant for SnapshotAtLogStart {
    fn name(&self) -> &'static str {
        "SnapshotAtLogStart"
    }

    fn check(&mut self, cluster: &Cluster) -> Result<(), String> {
        for node in cluster.nodes.values() {
            let log = &node.disk.log;
            let start = log.log_start_offset();
            match log.earliest_snapshot_id() {
                None if start != 0 => {
                    return Err(format!(
                        "node {} starts its log at {start} without a snapshot",
                        node.id
                    ))
                }
                None => {}
                Some(id) => {
                    // Kafka's check: the log may still start before its earliest snapshot
                    // (not cleaned yet), but once it starts later than 0 a snapshot must sit
                    // exactly there.
                    if start > id.offset || (start > 0 && start != id.offset) {
                        return Err(format!(
                            "node {}: log start {start} but earliest snapshot {}-{}",
                            node.id, id.offset, id.epoch
                        ));
                    }
                    let valid = validate_offset_and_epoch(log, id.offset, id.epoch);
                    if valid != ValidOffsetAndEpoch::Valid {
                        return Err(format!(
                            "node {}: its epoch cache does not agree with snapshot {}-{}: {valid:?}",
                            node.id, id.offset, id.epoch
                        ));
                    }
                }
            }
            if let Some(t) = node.truncations.iter().find(|t| t.offset < start) {
                return Err(format!(
                    "node {} truncated to {} below its log start {start}",
                    node.id, t.offset
                ));
            }
        }
        Ok(())
    }
}
