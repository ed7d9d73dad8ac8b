//! Routing inputs to handlers, and the response handling every API shares
//! (`maybeHandleCommonResponse`, `handleTopLevelError`).

use super::core::{RaftCore, SentRequest};
use super::errors::{self, RaftError};
use super::io::{InboundRequest, ResponseResult};
use super::log::LogReader;
use super::state::Role;
use super::types::Endpoint;
use crate::codec::{RequestBody, ResponseBody};

/// The leader view a partition-level answer carries.
pub(super) struct LeaderView {
    pub(super) error: i16,
    pub(super) leader_id: i32,
    pub(super) epoch: i32,
    pub(super) endpoint: Option<Endpoint>,
}

impl LeaderView {
    /// The view of one partition of an answer, with the leader's address from its NodeEndpoints.
    pub(super) fn of<'a>(
        error: i16,
        leader_id: i32,
        epoch: i32,
        nodes: impl Iterator<Item = (i32, &'a kafka_protocol::protocol::StrBytes, u16)>,
    ) -> Self {
        Self {
            error,
            leader_id,
            epoch,
            endpoint: find_endpoint(nodes, leader_id),
        }
    }
}

/// The address of `leader_id` among an answer's NodeEndpoints.
pub(super) fn find_endpoint<'a>(
    mut nodes: impl Iterator<Item = (i32, &'a kafka_protocol::protocol::StrBytes, u16)>,
    leader_id: i32,
) -> Option<Endpoint> {
    nodes
        .find(|(id, _, _)| *id == leader_id)
        .map(|(_, host, port)| Endpoint {
            host: host.to_string(),
            port,
        })
}

impl RaftCore {
    pub(super) fn dispatch_request(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        request: InboundRequest,
    ) {
        match &request.body {
            RequestBody::Vote(body) => self.handle_vote_request(now_ms, log, &request, body),
            RequestBody::BeginQuorumEpoch(body) => {
                self.handle_begin_quorum_epoch_request(now_ms, log, &request, body)
            }
            RequestBody::EndQuorumEpoch(body) => {
                self.handle_end_quorum_epoch_request(now_ms, log, &request, body)
            }
            RequestBody::Fetch(body) => self.handle_fetch_request(now_ms, log, &request, body),
            RequestBody::FetchSnapshot(body) => {
                self.handle_fetch_snapshot_request(now_ms, log, &request, body)
            }
            RequestBody::DescribeQuorum(body) => {
                self.handle_describe_quorum_request(now_ms, log, &request, body)
            }
            RequestBody::AddRaftVoter(body) => {
                self.handle_add_raft_voter_request(now_ms, &request, body)
            }
            RequestBody::RemoveRaftVoter(body) => {
                self.handle_remove_raft_voter_request(now_ms, log, &request, body)
            }
            RequestBody::UpdateRaftVoter(body) => {
                self.handle_update_raft_voter_request(now_ms, log, &request, body)
            }
            // ApiVersions, DescribeCluster, ControllerRegistration and Envelope are the node's.
            // The controller's APIs go to the controller layer.
            _ => {
                tracing::warn!(
                    "request {:?} is not the Raft core's to answer",
                    request.body.api_key()
                );
            }
        }
    }

    pub(super) fn dispatch_response(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        sent: SentRequest,
        result: ResponseResult,
    ) {
        let from = sent.destination_id;
        // The ApiVersions of an AddRaftVoter decides the operation whatever its outcome.
        if sent.api_key == kafka_protocol::messages::ApiKey::ApiVersions {
            let answer = match &result {
                ResponseResult::Answered(body) => match body.as_ref() {
                    ResponseBody::ApiVersions(r) => Ok(r),
                    _ => Err(errors::BROKER_NOT_AVAILABLE),
                },
                ResponseResult::UnsupportedVersion => Err(errors::UNSUPPORTED_VERSION),
                ResponseResult::AuthenticationFailed => Err(errors::NETWORK_EXCEPTION),
                _ => Err(errors::BROKER_NOT_AVAILABLE),
            };
            return self.handle_api_versions_response(now_ms, log, from, answer);
        }
        // A leader that cannot take UpdateRaftVoter: Kafka's synthetic error answer carries no
        // epoch and is dropped; the next update-voter period tries again.
        if sent.api_key == kafka_protocol::messages::ApiKey::UpdateRaftVoter
            && matches!(result, ResponseResult::UnsupportedVersion)
        {
            self.requests.on_success(from);
            return;
        }
        let body = match result {
            ResponseResult::Answered(body) => *body,
            ResponseResult::UnsupportedVersion => {
                return self.handle_top_level_error_for(
                    now_ms,
                    log,
                    sent,
                    errors::UNSUPPORTED_VERSION,
                )
            }
            ResponseResult::Failed => {
                return self.handle_top_level_error_for(
                    now_ms,
                    log,
                    sent,
                    errors::BROKER_NOT_AVAILABLE,
                )
            }
            ResponseResult::AuthenticationFailed => {
                return self.handle_top_level_error_for(
                    now_ms,
                    log,
                    sent,
                    errors::NETWORK_EXCEPTION,
                )
            }
        };
        match body {
            ResponseBody::Vote(r) => self.handle_vote_response(now_ms, log, from, &r),
            ResponseBody::BeginQuorumEpoch(r) => {
                self.handle_begin_quorum_epoch_response(now_ms, log, from, &r)
            }
            ResponseBody::EndQuorumEpoch(r) => {
                self.handle_end_quorum_epoch_response(now_ms, log, from, &r)
            }
            ResponseBody::Fetch(r) => self.handle_fetch_response(now_ms, log, from, &r),
            ResponseBody::FetchSnapshot(r) => {
                self.handle_fetch_snapshot_response(now_ms, log, from, &r)
            }
            ResponseBody::UpdateRaftVoter(r) => {
                self.handle_update_raft_voter_response(now_ms, log, from, &r)
            }
            ResponseBody::AddRaftVoter(r) => self.handle_add_raft_voter_response(now_ms, from, &r),
            ResponseBody::RemoveRaftVoter(r) => {
                self.handle_remove_raft_voter_response(now_ms, from, &r)
            }
            _ => {
                self.requests.on_success(from);
            }
        }
    }

    /// A synthetic top-level error for a request that got no real answer.
    fn handle_top_level_error_for(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        sent: SentRequest,
        error: i16,
    ) {
        // A peer that cannot take Vote v2 cannot pre-vote: go straight to a real election
        // (testPreVoteNotSupportedByRemote).
        if error == errors::UNSUPPORTED_VERSION
            && sent.api_key == kafka_protocol::messages::ApiKey::Vote
            && matches!(self.role, Role::Prospective(_))
        {
            self.requests
                .on_error(sent.destination_id, now_ms + self.cfg.retry_backoff_ms);
            self.transition_to_candidate(log, now_ms);
            return;
        }
        if sent.api_key == kafka_protocol::messages::ApiKey::Fetch {
            self.on_fetch_failure(now_ms, sent.destination_id);
        }
        self.handle_top_level_error(now_ms, sent.destination_id, sent.api_key, error);
    }

    /// Kafka's `handleTopLevelError`: back off; CLUSTER_AUTHORIZATION_FAILED is fatal; any
    /// other error but BROKER_NOT_AVAILABLE is logged at ERROR as Kafka's
    /// `handleUnexpectedError` logs it ("Unexpected error INCONSISTENT_CLUSTER_ID in VOTE
    /// response", naming the peer), at most once a minute per peer, API and error, with the
    /// count of the repeats not logged (Kafka logs every one, every retry backoff).
    pub(super) fn handle_top_level_error(
        &mut self,
        now_ms: u64,
        from: i32,
        api: kafka_protocol::messages::ApiKey,
        error: i16,
    ) {
        if error == errors::CLUSTER_AUTHORIZATION_FAILED {
            self.set_fatal(RaftError::ClusterAuthorizationFailed { peer: from });
            return;
        }
        if error != errors::BROKER_NOT_AVAILABLE {
            let key = (from, api as i16, error);
            let entry = self.unexpected_errors.entry(key).or_insert((0, 0));
            if entry.1 == 0 || now_ms >= entry.0.saturating_add(UNEXPECTED_ERROR_LOG_INTERVAL_MS) {
                let repeats = std::mem::take(&mut entry.1);
                entry.0 = now_ms;
                tracing::error!(
                    node_id = self.local.id,
                    "Unexpected error {} in {} response from node {from}{}",
                    errors::error_name(error),
                    api_name(api),
                    if repeats > 1 {
                        format!(" ({} more since the last one logged)", repeats - 1)
                    } else {
                        String::new()
                    }
                );
            }
            entry.1 += 1;
        }
        self.requests
            .on_error(from, now_ms + self.cfg.retry_backoff_ms);
    }

    /// Kafka's `maybeHandleCommonResponse`. Returns true when the response is fully handled.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn handle_common_response(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        from: i32,
        error: i16,
        leader_id: i32,
        epoch: i32,
        endpoint: Option<Endpoint>,
    ) -> bool {
        let local_epoch = self.role.epoch();
        let leader = (leader_id >= 0).then_some(leader_id);
        let endpoint = endpoint.or_else(|| leader.and_then(|id| self.voter_endpoint(id)));
        if epoch < local_epoch || error == errors::UNKNOWN_LEADER_EPOCH {
            self.requests.on_success(from);
            return true;
        }
        if epoch > local_epoch
            || error == errors::FENCED_LEADER_EPOCH
            || error == errors::NOT_LEADER_OR_FOLLOWER
        {
            self.requests.on_success(from);
            self.maybe_transition(leader, epoch, endpoint, now_ms, log);
            return true;
        }
        if let (Some(id), None) = (leader, self.role.leader_id(self.local.id)) {
            if let Some(ep) = endpoint {
                if id != self.local.id {
                    self.transition_to_follower(epoch, id, ep, now_ms, log);
                    if error == errors::NONE {
                        // The request's slot was reset by the transition; the caller goes on.
                        return false;
                    }
                    return true;
                }
            }
        }
        match error {
            errors::NONE => false,
            errors::BROKER_NOT_AVAILABLE => {
                self.requests
                    .on_error(from, now_ms + self.cfg.retry_backoff_ms);
                true
            }
            errors::INVALID_VOTER_KEY => {
                tracing::warn!(
                    node_id = self.local.id,
                    "node {from} answered INVALID_VOTER_KEY"
                );
                self.requests.on_success(from);
                true
            }
            other => {
                // Kafka throws on INVALID_REQUEST here; we log loudly and back off instead of
                // stopping, since the peer, not this node, is at fault.
                tracing::error!(
                    node_id = self.local.id,
                    "node {from} answered error {other}"
                );
                self.requests
                    .on_error(from, now_ms + self.cfg.retry_backoff_ms);
                true
            }
        }
    }

    /// The first steps every answer shares: a top-level error backs off, a missing partition
    /// backs off, then `maybeHandleCommonResponse`. Returns the partition error when the caller
    /// should go on with its own handling.
    pub(super) fn accept_answer(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        from: i32,
        top_level_error: i16,
        view: Option<LeaderView>,
        api: kafka_protocol::messages::ApiKey,
    ) -> Option<i16> {
        if top_level_error != errors::NONE {
            self.handle_top_level_error(now_ms, from, api, top_level_error);
            return None;
        }
        let Some(v) = view else {
            self.requests
                .on_error(from, now_ms + self.cfg.retry_backoff_ms);
            return None;
        };
        if self.handle_common_response(now_ms, log, from, v.error, v.leader_id, v.epoch, v.endpoint)
        {
            return None;
        }
        self.requests.on_success(from);
        Some(v.error)
    }

    pub(super) fn on_request_timeout(&mut self, node_id: i32, now_ms: u64) {
        tracing::debug!(
            node_id = self.local.id,
            "request to node {node_id} timed out"
        );
        // An AddRaftVoter waiting for this node's ApiVersions fails (REQUEST_TIMED_OUT).
        let awaiting_api_versions = matches!(&self.role, Role::Leader(l)
            if l.add_voter.as_ref().is_some_and(|p| p.last_offset.is_none() && p.voter.key.id == node_id));
        if awaiting_api_versions {
            self.complete_add_voter(errors::REQUEST_TIMED_OUT, None);
        }
        self.on_fetch_failure(now_ms, node_id);
    }
}

/// How often one peer's same unexpected error in the same API's answers is logged.
const UNEXPECTED_ERROR_LOG_INTERVAL_MS: u64 = 60_000;

/// Kafka's `ApiKeys` constant name of `api` (`Vote` → `VOTE`, `BeginQuorumEpoch` →
/// `BEGIN_QUORUM_EPOCH`), as its log lines print it.
fn api_name(api: kafka_protocol::messages::ApiKey) -> String {
    let mut name = String::new();
    for (i, ch) in format!("{api:?}").chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            name.push('_');
        }
        name.push(ch.to_ascii_uppercase());
    }
    name
}
