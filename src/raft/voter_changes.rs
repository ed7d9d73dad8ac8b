//! What the leader's voter changes share (KIP-853; Kafka's `LeaderState` add/remove voter
//! handler states): at most one AddRaftVoter or RemoveRaftVoter at a time, each answered once
//! its VotersRecord is committed, failed with REQUEST_TIMED_OUT when its timer expires and with
//! NOT_LEADER_OR_FOLLOWER when leadership is lost. Also the leader's replica bookkeeping when
//! the voter set changes (`updateVoterAndObserverStates`).

use kafka_protocol::messages::{AddRaftVoterResponse, RemoveRaftVoterResponse};
use kafka_protocol::protocol::StrBytes;

use super::core::RaftCore;
use super::errors;
use super::io::Output;
use super::log::LogReader;
use super::state::{ReplicaState, Role};
use super::types::{Endpoint, Endpoints, VoterNode, VoterSet};
use super::voters::voter_set_to_record;
use crate::codec::ResponseBody;
use crate::records::control::ControlRecord;

/// Kafka's `RaftUtil.addVoterResponse`: without a message of its own, the error's default
/// message (so a success says "NONE"). Refusals Kafka's `KafkaRaftClient` builds itself (not
/// the leader) carry no message of their own: [`add_voter_refusal`].
pub(super) fn add_voter_response(error: i16, message: Option<String>) -> AddRaftVoterResponse {
    let message = message.unwrap_or_else(|| errors::default_message(error).to_string());
    add_voter_refusal(error).with_error_message(Some(StrBytes::from_string(message)))
}

/// An AddRaftVoter answer with the schema's default message, "" (Kafka sets none).
pub(super) fn add_voter_refusal(error: i16) -> AddRaftVoterResponse {
    AddRaftVoterResponse::default().with_error_code(error)
}

/// Kafka's `RaftUtil.removeVoterResponse` (see [`add_voter_response`]).
pub(super) fn remove_voter_response(
    error: i16,
    message: Option<String>,
) -> RemoveRaftVoterResponse {
    let message = message.unwrap_or_else(|| errors::default_message(error).to_string());
    remove_voter_refusal(error).with_error_message(Some(StrBytes::from_string(message)))
}

/// A RemoveRaftVoter answer with the schema's default message, "".
pub(super) fn remove_voter_refusal(error: i16) -> RemoveRaftVoterResponse {
    RemoveRaftVoterResponse::default().with_error_code(error)
}

/// Lowest and highest kraft.version this implementation supports (what it advertises in
/// ApiVersions and writes for itself in VotersRecord).
pub(super) const LOCAL_KRAFT_VERSION_MIN: i16 = 0;
pub(super) const LOCAL_KRAFT_VERSION_MAX: i16 = 1;

impl RaftCore {
    /// This replica as a voter: key, advertised listeners, supported kraft.version range.
    pub(super) fn local_voter_node(&self) -> VoterNode {
        VoterNode {
            key: self.local,
            endpoints: self.cfg.local_endpoints.clone(),
            kraft_version_min: LOCAL_KRAFT_VERSION_MIN,
            kraft_version_max: LOCAL_KRAFT_VERSION_MAX,
        }
    }

    /// With kraft.version 0 a new leader keeps the static voters, with its own entry updated,
    /// in memory; UpdateRaftVoter then updates them there (Kafka 4.1 `LeaderState`).
    pub(super) fn initial_volatile_voters(&self) -> Option<VoterSet> {
        if self.history.kraft_version() >= 1 {
            return None;
        }
        self.history
            .voters()
            .update_voter_ignoring_directory_id(self.local_voter_node())
    }

    /// Whether an AddRaftVoter or RemoveRaftVoter is in progress, after expiring any whose
    /// timer ran out (`LeaderState.isOperationPending`).
    /// The checks AddRaftVoter and RemoveRaftVoter share, in Kafka's order: no change pending,
    /// a high watermark in this epoch, kraft.version ≥ 1, the latest voter set committed.
    /// `action` names the change in the error message.
    pub(super) fn voter_change_preconditions(
        &mut self,
        now_ms: u64,
        action: &str,
    ) -> Result<(), (i16, String)> {
        if self.voter_change_pending(now_ms) {
            return Err((
                errors::REQUEST_TIMED_OUT,
                "Request timed out waiting for leader to handle previous voter change request"
                    .into(),
            ));
        }
        let hw = self.require_high_watermark()?;
        let kraft_version = self.history.kraft_version();
        if kraft_version < 1 {
            return Err((
                errors::UNSUPPORTED_VERSION,
                format!(
                    "Cluster doesn't support {action} voter because the kraft.version feature is {kraft_version}"
                ),
            ));
        }
        self.latest_voters_committed(hw)
    }

    pub(super) fn voter_change_pending(&mut self, now_ms: u64) -> bool {
        self.expire_voter_changes(now_ms);
        matches!(&self.role, Role::Leader(l) if l.add_voter.is_some() || l.remove_voter.is_some())
    }

    /// The high watermark, which must be known before a voter change: a known one means the
    /// epoch's first batch committed and previous leaders are fenced. Err is the answer.
    pub(super) fn require_high_watermark(&self) -> Result<i64, (i16, String)> {
        let Some(hw) = self.high_watermark else {
            return Err((
                errors::REQUEST_TIMED_OUT,
                "Request timed out waiting for leader to establish HWM and fence previous voter changes".into(),
            ));
        };
        Ok(hw)
    }

    /// Err(REQUEST_TIMED_OUT) while the latest voter set is not committed: one uncommitted
    /// change at a time keeps old and new majorities overlapping.
    pub(super) fn latest_voters_committed(&self, hw: i64) -> Result<(), (i16, String)> {
        match self.history.last_voters_offset() {
            Some(offset) if offset < hw => Ok(()),
            offset => {
                // Kafka formats a java.util.Optional of the offset.
                let offset =
                    offset.map_or("Optional.empty".to_string(), |o| format!("Optional[{o}]"));
                Err((
                    errors::REQUEST_TIMED_OUT,
                    format!(
                        "Request timed out waiting for voters to commit the latest voter change at {offset} with HWM {hw}"
                    ),
                ))
            }
        }
    }

    /// Appends a VotersRecord for `voters`; returns its offset.
    pub(super) fn append_voters_record(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        voters: &VoterSet,
    ) -> Option<i64> {
        self.append_control_records(
            now_ms,
            log,
            &[ControlRecord::Voters(voter_set_to_record(voters))],
        )
    }

    /// Answers the AddRaftVoter in progress, if any, and forgets it.
    pub(super) fn complete_add_voter(&mut self, error: i16, message: Option<String>) {
        let Role::Leader(l) = &mut self.role else {
            return;
        };
        let Some(pending) = l.add_voter.take() else {
            return;
        };
        tracing::info!(
            node_id = self.local.id,
            "AddRaftVoter of {:?} completed with error {error}",
            pending.voter.key
        );
        if pending.answered {
            // AckWhenCommitted false: the client had its answer when the record was appended.
            return;
        }
        self.outputs.push_back(Output::Respond {
            request_id: pending.request_id,
            api_version: pending.api_version,
            body: ResponseBody::AddRaftVoter(add_voter_response(error, message)),
        });
    }

    /// AddRaftVoter v1 with AckWhenCommitted false: answered NONE once its VotersRecord is
    /// appended (Kafka 4.4's `AddVoterHandler`); the change stays pending until it commits.
    pub(super) fn answer_add_voter_early(&mut self) {
        let Role::Leader(l) = &mut self.role else {
            return;
        };
        let Some(pending) = l.add_voter.as_mut() else {
            return;
        };
        if pending.ack_when_committed || pending.answered {
            return;
        }
        pending.answered = true;
        let (request_id, api_version) = (pending.request_id, pending.api_version);
        self.outputs.push_back(Output::Respond {
            request_id,
            api_version,
            body: ResponseBody::AddRaftVoter(add_voter_response(errors::NONE, None)),
        });
    }

    /// Answers the RemoveRaftVoter in progress, if any, and forgets it.
    pub(super) fn complete_remove_voter(&mut self, error: i16, message: Option<String>) {
        let Role::Leader(l) = &mut self.role else {
            return;
        };
        let Some(pending) = l.remove_voter.take() else {
            return;
        };
        tracing::info!(
            node_id = self.local.id,
            "RemoveRaftVoter completed with error {error}"
        );
        self.outputs.push_back(Output::Respond {
            request_id: pending.request_id,
            api_version: pending.api_version,
            body: ResponseBody::RemoveRaftVoter(remove_voter_response(error, message)),
        });
    }

    /// Fails voter changes whose timer expired (`maybeExpirePendingOperation`).
    pub(super) fn expire_voter_changes(&mut self, now_ms: u64) {
        let Role::Leader(l) = &self.role else {
            return;
        };
        let add_expired = l
            .add_voter
            .as_ref()
            .is_some_and(|p| now_ms >= p.deadline_ms);
        let remove_expired = l
            .remove_voter
            .as_ref()
            .is_some_and(|p| now_ms >= p.deadline_ms);
        if add_expired {
            self.complete_add_voter(errors::REQUEST_TIMED_OUT, None);
        }
        if remove_expired {
            self.complete_remove_voter(errors::REQUEST_TIMED_OUT, None);
        }
    }

    /// The earliest voter-change deadline (for `poll_timeout`).
    pub(super) fn voter_change_deadline_ms(&self) -> Option<u64> {
        let Role::Leader(l) = &self.role else {
            return None;
        };
        [
            l.add_voter.as_ref().map(|p| p.deadline_ms),
            l.remove_voter.as_ref().map(|p| p.deadline_ms),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// The high watermark moved: a change whose VotersRecord it passed is answered; a leader
    /// that removed itself then resigns (`{Add,Remove}VoterHandler.highWatermarkUpdated`).
    pub(super) fn voter_changes_on_high_watermark(&mut self) {
        let Some(hw) = self.high_watermark else {
            return;
        };
        let Role::Leader(l) = &self.role else {
            return;
        };
        let add_done = l
            .add_voter
            .as_ref()
            .and_then(|p| p.last_offset)
            .is_some_and(|offset| hw > offset);
        let remove_done = l.remove_voter.as_ref().is_some_and(|p| hw > p.last_offset);
        if add_done {
            self.complete_add_voter(errors::NONE, None);
        }
        if remove_done {
            self.complete_remove_voter(errors::NONE, None);
            let still_voter = self
                .history
                .voters()
                .get(self.local.id)
                .is_some_and(|n| n.is_voter_key(&self.local));
            if !still_voter {
                tracing::info!(
                    node_id = self.local.id,
                    "Leader is not in the committed voter set; resigning from epoch {}",
                    self.role.epoch()
                );
                if let Role::Leader(l) = &mut self.role {
                    l.resign_requested = true;
                }
            }
        }
    }

    /// Leaving the leader role answers changes in progress with NOT_LEADER_OR_FOLLOWER.
    pub(super) fn fail_voter_changes_on_leadership_loss(&mut self) {
        self.complete_add_voter(errors::NOT_LEADER_OR_FOLLOWER, None);
        self.complete_remove_voter(errors::NOT_LEADER_OR_FOLLOWER, None);
    }

    /// Moves replica states between voters and observers to match the voter set now in
    /// effect, keeping what is known of each replica (`updateVoterAndObserverStates`): the high
    /// watermark and check-quorum count the new voters from the moment the record is appended.
    pub(super) fn sync_leader_replica_states(&mut self) {
        let voters = self.history.voters().clone();
        let Role::Leader(l) = &mut self.role else {
            return;
        };
        let mut old = std::mem::take(&mut l.voters);
        for node in voters.nodes() {
            let mut state = match old.remove(&node.key.id) {
                Some(s) if s.key.matches(&node.key) => s,
                other => {
                    if let Some(s) = other {
                        l.observers.entry(s.key).or_insert(s);
                    }
                    let observed = l.observers.keys().copied().find(|k| node.is_voter_key(k));
                    observed
                        .and_then(|k| l.observers.remove(&k))
                        .unwrap_or_else(|| ReplicaState::new(node.key))
                }
            };
            l.observers.remove(&node.key);
            if !node.key.directory_id.is_nil() {
                state.key = node.key;
            }
            l.voters.insert(node.key.id, state);
        }
        for (_, state) in old {
            l.observers.entry(state.key).or_insert(state);
        }
        let ids: std::collections::BTreeSet<i32> = l.voters.keys().copied().collect();
        l.fetched_voters.retain(|id| ids.contains(id));
    }
}

/// A voter's endpoints from the listeners of a request, listener names upper-cased as Kafka
/// normalises them.
pub(super) fn endpoints_from_listeners<'a>(
    listeners: impl Iterator<Item = (&'a StrBytes, &'a StrBytes, u16)>,
) -> Endpoints {
    listeners
        .map(|(name, host, port)| {
            (
                name.to_ascii_uppercase(),
                Endpoint {
                    host: host.to_string(),
                    port,
                },
            )
        })
        .collect()
}
