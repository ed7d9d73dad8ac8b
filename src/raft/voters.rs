//! The voter set and kraft.version as the log defines them (Kafka's
//! `KRaftControlRecordStateMachine`).
//!
//! With kraft.version 0 the voters are the static `controller.quorum.voters`. With kraft.version
//! 1 they come from the bootstrap snapshot (0-0, written by `kafka-storage format`), then from
//! every KRaftVersion/Voters control record in the log — effective as soon as appended, and
//! rewound when the log is truncated. A bootstrap snapshot overrides the static voters.

use kafka_protocol::messages::voters_record::{
    Endpoint as RecordEndpoint, KRaftVersionFeature, Voter,
};
use kafka_protocol::messages::{BrokerId, VotersRecord};
use kafka_protocol::protocol::StrBytes;

use super::types::{Endpoint, ReplicaKey, VoterNode, VoterSet};
use crate::records::control::ControlRecord;
use crate::records::framer::BatchFramer;

/// Voter set from a VotersRecord.
pub fn voter_set_from_record(record: &VotersRecord) -> VoterSet {
    VoterSet::new(record.voters.iter().map(|v| {
        VoterNode {
            key: ReplicaKey::new(v.voter_id.0, v.voter_directory_id),
            endpoints: v
                .endpoints
                .iter()
                .map(|e| {
                    (
                        e.name.to_ascii_uppercase(),
                        Endpoint {
                            host: e.host.to_string(),
                            port: e.port,
                        },
                    )
                })
                .collect(),
            kraft_version_min: v.k_raft_version_feature.min_supported_version,
            kraft_version_max: v.k_raft_version_feature.max_supported_version,
        }
    }))
}

/// The VotersRecord of a voter set (voters in ascending id order).
pub fn voter_set_to_record(voters: &VoterSet) -> VotersRecord {
    VotersRecord::default().with_version(0).with_voters(
        voters
            .nodes()
            .map(|n| {
                Voter::default()
                    .with_voter_id(BrokerId(n.key.id))
                    .with_voter_directory_id(n.key.directory_id)
                    .with_endpoints(
                        n.endpoints
                            .iter()
                            .map(|(name, ep)| {
                                RecordEndpoint::default()
                                    .with_name(StrBytes::from_string(name.clone()))
                                    .with_host(StrBytes::from_string(ep.host.clone()))
                                    .with_port(ep.port)
                            })
                            .collect(),
                    )
                    .with_k_raft_version_feature(
                        KRaftVersionFeature::default()
                            .with_min_supported_version(n.kraft_version_min)
                            .with_max_supported_version(n.kraft_version_max),
                    )
            })
            .collect(),
    )
}

/// Voter sets and kraft.version by log offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoterHistory {
    static_voters: VoterSet,
    /// From the bootstrap snapshot (or the latest installed snapshot): (voters, kraft.version).
    base: Option<(Option<VoterSet>, i16)>,
    /// The offset the snapshot's voters count at: its last contained offset (-1 for the
    /// bootstrap snapshot 0-0), as Kafka's `KRaftControlRecordStateMachine` records them.
    base_offset: i64,
    /// (offset, voters) of each Voters record in the log, ascending.
    voters: Vec<(i64, VoterSet)>,
    /// (offset, level) of each KRaftVersion record in the log, ascending.
    kraft: Vec<(i64, i16)>,
}

impl VoterHistory {
    /// A history over static voters, optionally overridden by a snapshot's records.
    pub fn new(static_voters: VoterSet, base: Option<(Option<VoterSet>, i16)>) -> Self {
        Self {
            static_voters,
            base,
            base_offset: -1,
            voters: Vec::new(),
            kraft: Vec::new(),
        }
    }

    /// The voters now (the last record appended, else the snapshot's, else the static set).
    pub fn voters(&self) -> &VoterSet {
        if let Some((_, v)) = self.voters.last() {
            return v;
        }
        match &self.base {
            Some((Some(v), _)) => v,
            _ => &self.static_voters,
        }
    }

    /// The kraft.version now.
    pub fn kraft_version(&self) -> i16 {
        if let Some((_, k)) = self.kraft.last() {
            return *k;
        }
        self.base.as_ref().map_or(0, |(_, k)| *k)
    }

    /// The offset of the voter set in effect, when it came from a record (log or snapshot);
    /// `None` for static voters (Kafka's `lastVoterSetEntry`). A voter change may start only
    /// once the high watermark is past it.
    pub fn last_voters_offset(&self) -> Option<i64> {
        if let Some((offset, _)) = self.voters.last() {
            return Some(*offset);
        }
        match &self.base {
            Some((Some(_), _)) => Some(self.base_offset),
            _ => None,
        }
    }

    /// kraft.version and the voter set in effect at `offset` (Kafka's `kraftVersionAtOffset`,
    /// `voterSetAtOffset`): what a snapshot ending after `offset` records in its header. The
    /// voters are `None` when only the static set applies.
    pub fn at_offset(&self, offset: i64) -> (i16, Option<VoterSet>) {
        let base = self.base.as_ref().filter(|_| self.base_offset <= offset);
        let kraft = self
            .kraft
            .iter()
            .rev()
            .find(|(o, _)| *o <= offset)
            .map(|(_, k)| *k)
            .or_else(|| base.map(|(_, k)| *k))
            .unwrap_or(0);
        let voters = self
            .voters
            .iter()
            .rev()
            .find(|(o, _)| *o <= offset)
            .map(|(_, v)| v.clone())
            .or_else(|| base.and_then(|(v, _)| v.clone()));
        (kraft, voters)
    }

    /// Sets the offset the snapshot's voters count at (its end offset - 1).
    pub fn set_base_offset(&mut self, offset: i64) {
        self.base_offset = offset;
    }

    /// Whether a Voters record exists in the log (not only in a snapshot).
    pub fn has_voters_record_in_log(&self) -> bool {
        !self.voters.is_empty()
    }

    /// Takes in the control records of appended `batches`.
    pub fn apply(&mut self, batches: &[u8]) {
        // Every caller's batches were checked where they came in (built, fetched, read).
        for (_, batch) in BatchFramer::trusted(batches) {
            if !batch.is_control() {
                continue;
            }
            for record in batch.records().flatten() {
                match record.control_record() {
                    Ok(ControlRecord::Voters(v)) => {
                        self.voters.push((record.offset, voter_set_from_record(&v)))
                    }
                    Ok(ControlRecord::KRaftVersion(k)) => {
                        self.kraft.push((record.offset, k.k_raft_version))
                    }
                    _ => {}
                }
            }
        }
    }

    /// Forgets records at or after `offset` (log truncation).
    pub fn truncate(&mut self, offset: i64) {
        self.voters.retain(|(o, _)| *o < offset);
        self.kraft.retain(|(o, _)| *o < offset);
    }

    /// Restarts from a snapshot's records (after installing it).
    pub fn reset(&mut self, base: Option<(Option<VoterSet>, i16)>) {
        self.base = base;
        self.voters.clear();
        self.kraft.clear();
    }
}

/// The (voters, kraft.version) a snapshot's control records define, if any.
pub fn snapshot_voters(snapshot: &[u8]) -> Option<(Option<VoterSet>, i16)> {
    let mut history = VoterHistory::new(VoterSet::default(), None);
    history.apply(snapshot);
    if history.kraft.is_empty() && history.voters.is_empty() {
        return None;
    }
    let voters = history.voters.last().map(|(_, v)| v.clone());
    Some((voters, history.kraft_version()))
}
