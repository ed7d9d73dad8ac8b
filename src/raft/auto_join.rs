//! Auto-join (`controller.quorum.auto.join.enable`, Kafka 4.2's `pollFollowerAsObserver`): an
//! observer of a kraft.version ≥ 1 quorum adds itself as a voter.
//!
//! ```text
//!   observer poll ─▶ auto-join on? kraft.version ≥ 1? update-voter period (fetch timeout) due?
//!        no ─▶ Fetch as usual
//!        yes ─▶ our id a voter under another directory id? ─▶ RemoveRaftVoter(that stale key)
//!                                                     else ─▶ AddRaftVoter(us, AckWhenCommitted=false)
//!   answer ─▶ NONE / REQUEST_TIMED_OUT / DUPLICATE_VOTER (add), VOTER_NOT_FOUND (remove):
//!               the period restarts (next try one fetch timeout later)
//!          ─▶ any other error: logged, the leader backs off (retry backoff); the next try
//!             is one period after the failed one went out
//! ```
//!
//! While the period is due no Fetch goes out: the request waits for the Fetch in flight (one
//! request per destination) and for any backoff towards the leader, as Kafka's does. The
//! leader decides the rest (caught up, one change at a time, kraft.version range); its
//! refusal with REQUEST_TIMED_OUT is the expected "not yet". The observer becomes a voter when
//! the VotersRecord naming it reaches its log, like any voter change.

use kafka_protocol::messages::{
    add_raft_voter_request, AddRaftVoterRequest, AddRaftVoterResponse, ApiKey,
    RemoveRaftVoterRequest, RemoveRaftVoterResponse,
};
use kafka_protocol::protocol::StrBytes;

use super::core::RaftCore;
use super::errors;
use super::state::Role;
use super::types::ReplicaKey;
use crate::codec::RequestBody;

impl RaftCore {
    /// Kafka's `shouldSendAddOrRemoveVoterRequest` for an observer, without the period: auto-join
    /// is on and the quorum can change its voters. A replica without a directory id cannot be
    /// named in AddRaftVoter (the leader answers INVALID_REQUEST); Kafka's always has one.
    fn auto_join_applies(&self) -> bool {
        self.cfg.auto_join
            && matches!(self.role, Role::Follower(_))
            && !self.is_voter()
            && self.history.kraft_version() >= 1
            && !self.local.directory_id.is_nil()
    }

    /// The observer's update-voter period. Returns true when this poll is spent on auto-join
    /// (sent, or waiting for the leader's slot), so no Fetch goes out now.
    pub(super) fn maybe_auto_join(&mut self, now_ms: u64) -> bool {
        if !self.auto_join_applies() {
            return false;
        }
        let Some(leader) = self.due_update_voter_period(now_ms) else {
            return false;
        };
        if !self.requests.is_ready(leader.node_id, now_ms) {
            // A Fetch is in flight or the leader backs off: Kafka's maybeSendRequest waits.
            return true;
        }
        let stale = self
            .history
            .voters()
            .get(self.local.id)
            .map(|node| node.key);
        let request = match stale {
            Some(stale) => {
                tracing::info!(
                    node_id = self.local.id,
                    "Auto-join: removing the stale voter {stale} (this node's id under another \
                     directory id) through leader {}",
                    leader.node_id
                );
                self.build_remove_stale_voter_request(stale)
            }
            None => {
                tracing::info!(
                    node_id = self.local.id,
                    "Auto-join: asking leader {} to add {} as a voter",
                    leader.node_id,
                    self.local
                );
                self.build_auto_join_add_voter_request()
            }
        };
        self.send_in_update_voter_period(now_ms, leader, request);
        true
    }

    /// When the observer's auto-join period next needs a poll.
    pub(super) fn auto_join_deadline_ms(&self) -> Option<u64> {
        match &self.role {
            Role::Follower(f)
                if self.auto_join_applies() && f.update_voter_deadline_ms > self.now_ms =>
            {
                Some(f.update_voter_deadline_ms)
            }
            _ => None,
        }
    }

    /// Kafka's `RaftUtil.addVoterRequest` with AckWhenCommitted false: answered once the
    /// leader wrote the VotersRecord. A leader that only takes AddRaftVoter v0 (Kafka 4.1)
    /// cannot carry it, so the request fails with UNSUPPORTED_VERSION there, as Kafka's does.
    fn build_auto_join_add_voter_request(&self) -> RequestBody {
        let listeners = self
            .cfg
            .local_endpoints
            .iter()
            .map(|(name, ep)| {
                add_raft_voter_request::Listener::default()
                    .with_name(StrBytes::from_string(name.clone()))
                    .with_host(StrBytes::from_string(ep.host.clone()))
                    .with_port(ep.port)
            })
            .collect();
        let mut request = AddRaftVoterRequest::default()
            .with_cluster_id(Some(StrBytes::from_string(self.cfg.cluster_id.clone())))
            .with_timeout_ms(i32::try_from(self.cfg.request_timeout_ms).unwrap_or(i32::MAX))
            .with_voter_id(self.local.id)
            .with_voter_directory_id(self.local.directory_id)
            .with_listeners(listeners);
        request.ack_when_committed = false;
        RequestBody::AddRaftVoter(request)
    }

    /// Kafka's `RaftUtil.removeVoterRequest` for the voter holding our id.
    fn build_remove_stale_voter_request(&self, stale: ReplicaKey) -> RequestBody {
        RequestBody::RemoveRaftVoter(
            RemoveRaftVoterRequest::default()
                .with_cluster_id(Some(StrBytes::from_string(self.cfg.cluster_id.clone())))
                .with_voter_id(stale.id)
                .with_voter_directory_id(stale.directory_id),
        )
    }

    /// `handleAddVoterResponse`.
    pub(super) fn handle_add_raft_voter_response(
        &mut self,
        now_ms: u64,
        from: i32,
        resp: &AddRaftVoterResponse,
    ) {
        let done = [
            errors::NONE,
            errors::REQUEST_TIMED_OUT,
            errors::DUPLICATE_VOTER,
        ];
        self.handle_auto_join_answer(now_ms, from, ApiKey::AddRaftVoter, resp.error_code, &done);
    }

    /// `handleRemoveVoterResponse`.
    pub(super) fn handle_remove_raft_voter_response(
        &mut self,
        now_ms: u64,
        from: i32,
        resp: &RemoveRaftVoterResponse,
    ) {
        let done = [
            errors::NONE,
            errors::REQUEST_TIMED_OUT,
            errors::VOTER_NOT_FOUND,
        ];
        self.handle_auto_join_answer(
            now_ms,
            from,
            ApiKey::RemoveRaftVoter,
            resp.error_code,
            &done,
        );
    }

    /// An answer in `done` (success, or the leader cannot act now) restarts the period; any
    /// other error is Kafka's `handleUnexpectedError`: logged, and the leader backs off for the
    /// retry backoff; the period, restarted when the request went out, stands, so the next
    /// try is one period after that send.
    fn handle_auto_join_answer(
        &mut self,
        now_ms: u64,
        from: i32,
        api: ApiKey,
        error: i16,
        done: &[i16],
    ) {
        if !done.contains(&error) {
            self.handle_top_level_error(now_ms, from, api, error);
            return;
        }
        tracing::info!(
            node_id = self.local.id,
            "Auto-join: {api:?} answered {}; next check in {} ms",
            errors::error_name(error),
            self.cfg.fetch_timeout_ms
        );
        self.requests.on_success(from);
        if matches!(self.role, Role::Follower(_)) {
            self.restart_update_voter_period(now_ms);
        }
    }
}
