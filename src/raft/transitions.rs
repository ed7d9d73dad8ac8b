//! Every role transition of the core, each with what it persists (Kafka's `QuorumState`):
//! durable transitions emit `PersistElectionState` before anything that depends on them;
//! Prospective and Resigned live in memory only.

use std::collections::{BTreeMap, BTreeSet};

use super::core::RaftCore;
use super::errors::RaftError;
use super::log::LogReader;
use super::state::{
    Candidate, Follower, KRaftVersionUpgrade, Leader, Prospective, ReplicaState, Resigned, Role,
    Unattached,
};
use super::types::{Endpoint, ReplicaKey};

impl RaftCore {
    // ---- transitions (each with what it persists) ----------------------------------------

    pub(super) fn leave_role(&mut self, log: &dyn LogReader) {
        self.fail_voter_changes_on_leadership_loss();
        if matches!(self.role, Role::Leader(_) | Role::Resigned(_)) {
            self.fail_parked_fetches(log);
        }
        self.requests.reset();
        self.sent.clear();
    }

    /// Unattached in `epoch` (> current, or == current from Prospective), durable.
    pub(super) fn transition_to_unattached(
        &mut self,
        epoch: i32,
        leader_id: Option<i32>,
        now_ms: u64,
        log: &dyn LogReader,
    ) {
        let is_voter = self.is_voter();
        // Keep the remaining election time if already waiting for an election.
        let deadline = match &self.role {
            Role::Unattached(u) if is_voter => u.election_deadline_ms,
            Role::Candidate(c) if is_voter => Some(c.election_deadline_ms),
            Role::Prospective(p) if is_voter && p.rejected.is_empty() => {
                Some(p.election_deadline_ms)
            }
            _ => self.election_deadline(is_voter, now_ms),
        };
        let voted_key = if epoch == self.role.epoch() {
            self.role.voted_key(self.local)
        } else {
            None
        };
        self.leave_role(log);
        self.role = Role::Unattached(Unattached {
            epoch,
            leader_id,
            voted_key,
            election_deadline_ms: deadline,
        });
        self.persist();
        self.emit_role_changed();
    }

    /// Grants a vote in the current epoch, durable. Unattached stays Unattached with the vote;
    /// Prospective stays Prospective with the vote and a fresh pre-vote round
    /// (QuorumState.unattachedAddVotedState / prospectiveAddVotedState).
    pub(super) fn transition_to_voted(&mut self, candidate: ReplicaKey, now_ms: u64) {
        let deadline = now_ms + self.random_election_timeout_ms();
        let epoch = self.role.epoch();
        let leader_id = self.role.leader_id(self.local.id);
        self.requests.reset();
        self.sent.clear();
        self.role = match &self.role {
            Role::Prospective(p) => Role::Prospective(Prospective {
                epoch,
                leader: p.leader.clone(),
                voted_key: Some(candidate),
                granted: [self.local.id].into_iter().collect(),
                rejected: BTreeSet::new(),
                election_deadline_ms: deadline,
            }),
            _ => Role::Unattached(Unattached {
                epoch,
                leader_id,
                voted_key: Some(candidate),
                election_deadline_ms: Some(deadline),
            }),
        };
        self.persist();
        self.emit_role_changed();
    }

    /// Follower of `leader_id` in `epoch`, durable.
    pub(super) fn transition_to_follower(
        &mut self,
        epoch: i32,
        leader_id: i32,
        endpoint: Endpoint,
        now_ms: u64,
        log: &dyn LogReader,
    ) {
        let voted_key = if epoch == self.role.epoch() {
            self.role.voted_key(self.local)
        } else {
            None
        };
        self.leave_role(log);
        self.role = Role::Follower(Follower::new(
            epoch,
            leader_id,
            endpoint,
            voted_key,
            now_ms,
            self.cfg.fetch_timeout_ms,
        ));
        self.persist();
        self.emit_role_changed();
    }

    /// Prospective (pre-vote) in the current epoch; memory only.
    pub(super) fn transition_to_prospective(&mut self, now_ms: u64, log: &dyn LogReader) {
        let leader = match &self.role {
            Role::Follower(f) => Some((f.leader_id, Some(f.leader_endpoint.clone()))),
            Role::Unattached(u) => u.leader_id.map(|id| (id, self.voter_endpoint(id))),
            Role::Prospective(p) => p.leader.clone(),
            _ => None,
        };
        let voted_key = self.role.voted_key(self.local);
        let epoch = self.role.epoch();
        let deadline = now_ms + self.random_election_timeout_ms();
        self.leave_role(log);
        self.role = Role::Prospective(Prospective {
            epoch,
            leader,
            voted_key,
            granted: [self.local.id].into_iter().collect(),
            rejected: BTreeSet::new(),
            election_deadline_ms: deadline,
        });
        self.emit_role_changed();
    }

    /// Candidate in epoch + 1, voted for self, durable.
    pub(super) fn transition_to_candidate(&mut self, log: &dyn LogReader, now_ms: u64) {
        let epoch = self.role.epoch() + 1;
        let deadline = now_ms + self.random_election_timeout_ms();
        self.leave_role(log);
        self.role = Role::Candidate(Candidate {
            epoch,
            granted: [self.local.id].into_iter().collect(),
            rejected: BTreeSet::new(),
            election_deadline_ms: deadline,
        });
        self.persist();
        self.emit_role_changed();
    }

    /// Leader of the current epoch (from a won candidacy), durable; writes the epoch-start batch.
    pub(super) fn transition_to_leader(&mut self, now_ms: u64, log: &dyn LogReader) {
        let Role::Candidate(c) = &self.role else {
            return;
        };
        let epoch = c.epoch;
        let granting = c.granted.clone();
        let epoch_start_offset = self.log_end(log).offset;
        self.leave_role(log);
        let voters = self
            .history
            .voters()
            .nodes()
            .map(|n| (n.key.id, ReplicaState::new(n.key)))
            .collect();
        self.high_watermark = None;
        let kraft_upgrade = match self.initial_volatile_voters() {
            Some(voters) => KRaftVersionUpgrade::Voters(voters),
            None => KRaftVersionUpgrade::Empty,
        };
        self.role = Role::Leader(Leader {
            epoch,
            epoch_start_offset,
            voters,
            observers: BTreeMap::new(),
            granting_voters: granting,
            acknowledged: [self.local.id].into_iter().collect(),
            begin_quorum_deadline_ms: now_ms,
            fetched_voters: BTreeSet::new(),
            check_quorum_deadline_ms: now_ms + self.cfg.check_quorum_timeout_ms(),
            pending_records: Vec::new(),
            pending_bytes: 0,
            linger_deadline_ms: None,
            add_voter: None,
            remove_voter: None,
            kraft_upgrade,
            resign_requested: false,
        });
        self.persist();
        self.emit_role_changed();
        self.append_epoch_start_batch(now_ms, log);
    }

    /// Resigned (graceful step-down or check-quorum failure); memory only.
    pub(super) fn transition_to_resigned(&mut self, now_ms: u64, log: &dyn LogReader) {
        let Role::Leader(l) = &self.role else {
            return;
        };
        let epoch = l.epoch;
        let mut others: Vec<&ReplicaState> = l
            .voters
            .values()
            .filter(|r| r.key.id != self.local.id)
            .collect();
        // Most caught-up first (testEndQuorumEpochSentBasedOnFetchOffset).
        others.sort_by_key(|r| std::cmp::Reverse(r.end_offset.unwrap_or(-1)));
        let preferred: Vec<ReplicaKey> = others.iter().map(|r| r.key).collect();
        self.leave_role(log);
        let deadline = now_ms + self.random_election_timeout_ms();
        self.role = Role::Resigned(Resigned {
            epoch,
            preferred_successors: preferred,
            unacknowledged: BTreeSet::new(),
            election_deadline_ms: deadline,
        });
        self.prepare_resigned_state();
        self.emit_role_changed();
    }

    pub(super) fn prepare_resigned_state(&mut self) {
        let others: BTreeSet<i32> = self
            .history
            .voters()
            .ids()
            .filter(|id| *id != self.local.id)
            .collect();
        if let Role::Resigned(r) = &mut self.role {
            r.unacknowledged = others;
        }
    }

    /// Moves to a leader learned from a request or response, with Kafka's consistency rule.
    /// Returns false when the claim contradicts what we know (then the core is fatal).
    pub(super) fn maybe_transition(
        &mut self,
        leader_id: Option<i32>,
        epoch: i32,
        endpoint: Option<Endpoint>,
        now_ms: u64,
        log: &dyn LogReader,
    ) -> bool {
        let local_epoch = self.role.epoch();
        if epoch == local_epoch {
            let known = self.role.leader_id(self.local.id);
            if let (Some(known_id), Some(claimed)) = (known, leader_id) {
                if known_id != claimed {
                    self.set_fatal(RaftError::InconsistentLeader {
                        epoch,
                        known: Some(known_id),
                        claimed,
                    });
                    return false;
                }
            }
            if leader_id == Some(self.local.id)
                && !matches!(self.role, Role::Leader(_) | Role::Resigned(_))
            {
                self.set_fatal(RaftError::InconsistentLeader {
                    epoch,
                    known,
                    claimed: self.local.id,
                });
                return false;
            }
        }
        if epoch > local_epoch {
            match (leader_id, endpoint) {
                (Some(id), Some(ep)) if id != self.local.id => {
                    self.transition_to_follower(epoch, id, ep, now_ms, log)
                }
                (id, _) => self.transition_to_unattached(
                    epoch,
                    id.filter(|i| *i != self.local.id),
                    now_ms,
                    log,
                ),
            }
        } else if epoch == local_epoch {
            if let (Some(id), Some(ep)) = (leader_id, endpoint) {
                let follows_already = matches!(&self.role, Role::Follower(f) if f.leader_id == id);
                if id != self.local.id && !follows_already && !matches!(self.role, Role::Leader(_))
                {
                    self.transition_to_follower(epoch, id, ep, now_ms, log);
                }
            }
        }
        true
    }
}
