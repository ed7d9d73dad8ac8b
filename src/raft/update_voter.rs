//! UpdateRaftVoter, both sides (KIP-853).
//!
//! Follower voter: every fetch timeout (FollowerState's update-voter period) it checks whether
//! the leader needs its listeners and kraft.version range: with kraft.version ≥ 1 when its
//! entry in the voter set differs from itself, with kraft.version 0 once per leader (leaders
//! keep static voters' endpoints in memory only). The request shares the one-in-flight slot
//! with Fetch, so it waits for a Fetch in flight; an error is retried a period later.
//!
//! Leader (`KafkaRaftClient.handleUpdateVoterRequest`, `UpdateVoterHandler`): answered right
//! after appending the VotersRecord, not at commit (KAFKA-16534), with the leader's id, epoch
//! and address for the request's listener in every answer.

use kafka_protocol::messages::update_raft_voter_request::{KRaftVersionFeature, Listener};
use kafka_protocol::messages::update_raft_voter_response::CurrentLeader;
use kafka_protocol::messages::{BrokerId, UpdateRaftVoterRequest, UpdateRaftVoterResponse};
use kafka_protocol::protocol::StrBytes;

use super::core::RaftCore;
use super::errors;
use super::io::{Destination, InboundRequest};
use super::log::LogReader;
use super::state::{KRaftVersionUpgrade, Role};
use super::types::{Endpoint, ReplicaKey, VoterNode};
use super::voter_changes::{
    endpoints_from_listeners, LOCAL_KRAFT_VERSION_MAX, LOCAL_KRAFT_VERSION_MIN,
};
use crate::codec::{RequestBody, ResponseBody};

impl RaftCore {
    // ---- leader side ------------------------------------------------------------------

    /// Kafka's `RaftUtil.updateVoterResponse`: the leader as this replica knows it.
    fn update_voter_response(&self, error: i16, listener: &str) -> UpdateRaftVoterResponse {
        let leader_id = self.role.leader_id(self.local.id);
        let mut current = CurrentLeader::default()
            .with_leader_id(BrokerId(leader_id.unwrap_or(-1)))
            .with_leader_epoch(self.role.epoch());
        if let Some(ep) = leader_id.and_then(|id| self.leader_endpoint_for(id, listener)) {
            current = current
                .with_host(StrBytes::from_string(ep.host))
                .with_port(i32::from(ep.port));
        }
        UpdateRaftVoterResponse::default()
            .with_error_code(error)
            .with_current_leader(current)
    }

    pub(super) fn handle_update_raft_voter_request(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        req: &InboundRequest,
        body: &UpdateRaftVoterRequest,
    ) {
        let error = self.update_voter(now_ms, log, body);
        let resp = self.update_voter_response(error, &req.listener_name);
        self.respond(req, ResponseBody::UpdateRaftVoter(resp));
    }

    /// The checks in Kafka's order, then the update; returns the error to answer.
    fn update_voter(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        body: &UpdateRaftVoterRequest,
    ) -> i16 {
        if !self.valid_cluster_id(&body.cluster_id) {
            return errors::INCONSISTENT_CLUSTER_ID;
        }
        if let Some(error) = self.validate_leader_only_request(body.current_leader_epoch) {
            return error;
        }
        if body.voter_id < 0 || body.voter_directory_id.is_nil() {
            return errors::INVALID_REQUEST;
        }
        let key = ReplicaKey::new(body.voter_id, body.voter_directory_id);
        let endpoints =
            endpoints_from_listeners(body.listeners.iter().map(|l| (&l.name, &l.host, l.port)));
        if !endpoints.contains_key(&self.cfg.listener_name) {
            return errors::INVALID_REQUEST;
        }
        let range = &body.k_raft_version_feature;
        let (min, max) = (range.min_supported_version, range.max_supported_version);
        if min < 0 || max < 0 || max < min {
            return errors::INVALID_REQUEST;
        }
        // The handler proper.
        if self.voter_change_pending(now_ms) {
            return errors::REQUEST_TIMED_OUT;
        }
        let Ok(hw) = self.require_high_watermark() else {
            return errors::REQUEST_TIMED_OUT;
        };
        let kraft_version = self.history.kraft_version();
        let reconfig_supported = kraft_version >= 1;
        let voters = if reconfig_supported {
            match self.latest_voters_committed(hw) {
                Ok(()) => self.history.voters().clone(),
                Err(_) => return errors::REQUEST_TIMED_OUT,
            }
        } else {
            match &self.role {
                Role::Leader(l) => match l.kraft_upgrade.voters() {
                    Some(v) => v.clone(),
                    // Only before the leader set them up; Kafka answers the same.
                    None => return errors::REQUEST_TIMED_OUT,
                },
                _ => return errors::NOT_LEADER_OR_FOLLOWER,
            }
        };
        if min > kraft_version || max < kraft_version {
            return errors::INVALID_REQUEST;
        }
        let node = VoterNode {
            key,
            endpoints,
            kraft_version_min: min,
            kraft_version_max: max,
        };
        let updated = if reconfig_supported {
            voters.update_voter(node)
        } else {
            voters.update_voter_ignoring_directory_id(node)
        };
        let Some(updated) = updated else {
            return errors::VOTER_NOT_FOUND;
        };
        if reconfig_supported {
            tracing::info!(
                node_id = self.local.id,
                "Updating voter {key:?} with a VotersRecord"
            );
            if self.append_voters_record(now_ms, log, &updated).is_none() {
                return errors::UNKNOWN_SERVER_ERROR;
            }
        } else if let Role::Leader(l) = &mut self.role {
            tracing::info!(node_id = self.local.id, "Updated in-memory voter {key:?}");
            l.kraft_upgrade = KRaftVersionUpgrade::Voters(updated);
        }
        // A successful request from a voter counts as hearing from it (check quorum).
        if let Role::Leader(l) = &mut self.role {
            if l.voters.contains_key(&key.id) && key.id != self.local.id {
                l.fetched_voters.insert(key.id);
            }
        }
        errors::NONE
    }

    // ---- follower side ----------------------------------------------------------------

    /// Kafka's `shouldSendUpdateVoteRequest`.
    fn should_send_update_voter(&self) -> bool {
        let Role::Follower(f) = &self.role else {
            return false;
        };
        // A key without a directory id is answered INVALID_REQUEST; Kafka nodes always have
        // one, static-voter configurations of ours may not.
        if self.local.directory_id.is_nil() {
            return false;
        }
        if self.history.kraft_version() >= 1 {
            self.history
                .voters()
                .voter_node_needs_update(&self.local_voter_node())
        } else {
            !f.has_updated_leader
        }
    }

    fn build_update_voter_request(&self) -> RequestBody {
        let listeners = self
            .cfg
            .local_endpoints
            .iter()
            .map(|(name, ep)| {
                Listener::default()
                    .with_name(StrBytes::from_string(name.clone()))
                    .with_host(StrBytes::from_string(ep.host.clone()))
                    .with_port(ep.port)
            })
            .collect();
        RequestBody::UpdateRaftVoter(
            UpdateRaftVoterRequest::default()
                .with_cluster_id(Some(StrBytes::from_string(self.cfg.cluster_id.clone())))
                .with_current_leader_epoch(self.role.epoch())
                .with_voter_id(self.local.id)
                .with_voter_directory_id(self.local.directory_id)
                .with_listeners(listeners)
                .with_k_raft_version_feature(
                    KRaftVersionFeature::default()
                        .with_min_supported_version(LOCAL_KRAFT_VERSION_MIN)
                        .with_max_supported_version(LOCAL_KRAFT_VERSION_MAX),
                ),
        )
    }

    /// The update-voter period of a follower voter (`pollFollowerAsVoter`). Returns true when
    /// this poll is spent on it (sent, or waiting to send), so no Fetch goes out now.
    pub(super) fn maybe_send_update_voter(&mut self, now_ms: u64) -> bool {
        if !self.is_voter() {
            return false;
        }
        let Some(leader) = self.due_update_voter_period(now_ms) else {
            return false;
        };
        if !self.should_send_update_voter() {
            self.restart_update_voter_period(now_ms);
            return false;
        }
        if !self.requests.is_ready(leader.node_id, now_ms) {
            // A Fetch is in flight (or the leader backs off): send once it is answered.
            return true;
        }
        let request = self.build_update_voter_request();
        self.send_in_update_voter_period(now_ms, leader, request);
        true
    }

    /// The follower's update-voter period (Kafka's `FollowerState.updateVoterSetPeriodTimer`),
    /// which a voter spends on UpdateRaftVoter and an observer on auto-join: the leader to send
    /// to, once the period is due.
    pub(super) fn due_update_voter_period(&self, now_ms: u64) -> Option<Destination> {
        match &self.role {
            Role::Follower(f) if now_ms >= f.update_voter_deadline_ms => Some(Destination {
                node_id: f.leader_id,
                endpoint: f.leader_endpoint.clone(),
            }),
            _ => None,
        }
    }

    /// Sends the period's `request` to `leader` and restarts the period.
    pub(super) fn send_in_update_voter_period(
        &mut self,
        now_ms: u64,
        leader: Destination,
        request: RequestBody,
    ) {
        self.send(now_ms, leader, request);
        self.restart_update_voter_period(now_ms);
    }

    /// `FollowerState.resetUpdateVoterSetPeriod`: the next try one fetch timeout from now.
    pub(super) fn restart_update_voter_period(&mut self, now_ms: u64) {
        let next = now_ms + self.cfg.fetch_timeout_ms;
        if let Role::Follower(f) = &mut self.role {
            f.update_voter_deadline_ms = next;
        }
    }

    /// When the follower's update-voter timer next needs a poll (`None` once it is due: a
    /// request in flight or its answer wakes the core then).
    pub(super) fn update_voter_deadline_ms(&self) -> Option<u64> {
        match &self.role {
            Role::Follower(f) if self.is_voter() && f.update_voter_deadline_ms > self.now_ms => {
                Some(f.update_voter_deadline_ms)
            }
            _ => None,
        }
    }

    /// `handleUpdateVoterResponse`: NONE or UNSUPPORTED_VERSION (a leader that cannot take
    /// it) both mean done, and count as hearing from the leader.
    pub(super) fn handle_update_raft_voter_response(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        from: i32,
        resp: &UpdateRaftVoterResponse,
    ) {
        let leader_id = resp.current_leader.leader_id.0;
        let endpoint = (leader_id >= 0 && !resp.current_leader.host.is_empty())
            .then(|| {
                u16::try_from(resp.current_leader.port)
                    .ok()
                    .map(|port| Endpoint {
                        host: resp.current_leader.host.to_string(),
                        port,
                    })
            })
            .flatten();
        let done =
            resp.error_code == errors::NONE || resp.error_code == errors::UNSUPPORTED_VERSION;
        // A leader not ready for voter changes yet (no high watermark in its epoch, another
        // change pending) answers REQUEST_TIMED_OUT: expected, retried next period. Kafka logs
        // it at ERROR; the shared handling would too, so it is kept from it.
        let not_ready = resp.error_code == errors::REQUEST_TIMED_OUT;
        // The shared handling treats any error it does not know as a failure; UNSUPPORTED_VERSION
        // is a success here.
        let common_error = if done || not_ready {
            errors::NONE
        } else {
            resp.error_code
        };
        if self.handle_common_response(
            now_ms,
            log,
            from,
            common_error,
            leader_id,
            resp.current_leader.leader_epoch,
            endpoint,
        ) {
            return;
        }
        if not_ready {
            tracing::info!(
                node_id = self.local.id,
                "leader {from} is not ready for UpdateRaftVoter (REQUEST_TIMED_OUT); retrying next period"
            );
            self.requests
                .on_error(from, now_ms + self.cfg.retry_backoff_ms);
            return;
        }
        self.requests.on_success(from);
        let fetch_timeout_ms = self.cfg.fetch_timeout_ms;
        if let Role::Follower(f) = &mut self.role {
            f.has_updated_leader = true;
            f.reset_fetch_timeout(now_ms, fetch_timeout_ms);
        }
    }
}
