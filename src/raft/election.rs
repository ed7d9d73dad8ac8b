//! Elections: Vote (real and pre-vote), BeginQuorumEpoch, EndQuorumEpoch, and the polls of
//! the roles that campaign (Unattached, Prospective, Candidate, Resigned).

use std::collections::BTreeSet;

use kafka_protocol::messages::{
    begin_quorum_epoch_request, begin_quorum_epoch_response, end_quorum_epoch_request,
    end_quorum_epoch_response, vote_request, vote_response, BeginQuorumEpochRequest,
    BeginQuorumEpochResponse, BrokerId, EndQuorumEpochRequest, EndQuorumEpochResponse, TopicName,
    VoteRequest, VoteResponse,
};
use kafka_protocol::protocol::StrBytes;

use super::core::RaftCore;
use super::dispatch::LeaderView;
use super::errors;
use super::io::{Destination, InboundRequest, Output};
use super::log::LogReader;
use super::state::Role;
use super::types::{Endpoint, OffsetAndEpoch, ReplicaKey, METADATA_PARTITION, METADATA_TOPIC_NAME};
use super::validation::is_metadata_partition;
use crate::codec::{RequestBody, ResponseBody};

fn topic_name() -> TopicName {
    TopicName(StrBytes::from_static_str(METADATA_TOPIC_NAME))
}

impl RaftCore {
    pub(super) fn respond(&mut self, request: &InboundRequest, body: ResponseBody) {
        self.outputs.push_back(Output::Respond {
            request_id: request.request_id,
            api_version: request.api_version,
            body,
        });
    }

    /// The leader's endpoint for `listener`, as (id, host, port), when a leader is known.
    fn leader_node_endpoint(&self, listener: &str) -> Option<(i32, Endpoint)> {
        let id = self.role.leader_id(self.local.id)?;
        Some((id, self.leader_endpoint_for(id, listener)?))
    }

    // ---- Vote ----------------------------------------------------------------------------

    pub(super) fn handle_vote_request(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        req: &InboundRequest,
        body: &VoteRequest,
    ) {
        if !self.valid_cluster_id(&body.cluster_id) {
            let resp = VoteResponse::default().with_error_code(errors::INCONSISTENT_CLUSTER_ID);
            return self.respond(req, ResponseBody::Vote(resp));
        }
        if !is_metadata_partition(
            &body.topics,
            |t| &t.topic_name,
            |t| &t.partitions,
            |p| p.partition_index,
        ) {
            let resp = VoteResponse::default().with_error_code(errors::INVALID_REQUEST);
            return self.respond(req, ResponseBody::Vote(resp));
        }
        let p = &body.topics[0].partitions[0];
        let illegal_epoch = if p.pre_vote {
            p.last_offset_epoch > p.replica_epoch
        } else {
            p.last_offset_epoch >= p.replica_epoch
        };
        if p.last_offset < 0 || p.last_offset_epoch < 0 || illegal_epoch {
            return self.respond_vote(req, errors::INVALID_REQUEST, false);
        }
        if let Some(error) = self.validate_voter_only_request(p.replica_id.0, p.replica_epoch) {
            return self.respond_vote(req, error, false);
        }
        if p.replica_epoch > self.role.epoch() {
            self.transition_to_unattached(p.replica_epoch, None, now_ms, log);
        }
        if !self.is_valid_voter_key(body.voter_id.0, p.voter_directory_id) {
            return self.respond_vote(req, errors::INVALID_VOTER_KEY, false);
        }
        let candidate = ReplicaKey::new(p.replica_id.0, p.replica_directory_id);
        let last = OffsetAndEpoch::new(p.last_offset, p.last_offset_epoch);
        let up_to_date = last >= self.log_end(log);
        let granted = self.can_grant_vote(candidate, up_to_date, p.pre_vote);
        if granted
            && !p.pre_vote
            && matches!(self.role, Role::Unattached(_) | Role::Prospective(_))
            && self.role.voted_key(self.local).is_none()
        {
            self.transition_to_voted(candidate, now_ms);
        }
        tracing::info!(
            node_id = self.local.id,
            "{} {}vote for {} in epoch {} (their last {}@{}, up to date: {up_to_date})",
            if granted { "Granted" } else { "Rejected" },
            if p.pre_vote { "pre-" } else { "" },
            candidate.id,
            p.replica_epoch,
            p.last_offset,
            p.last_offset_epoch
        );
        self.respond_vote(req, errors::NONE, granted);
    }

    /// Kafka's `canGrantVote(candidate, isLogUpToDate, isPreVote)` per role (reference §3.4).
    fn can_grant_vote(&self, candidate: ReplicaKey, up_to_date: bool, pre_vote: bool) -> bool {
        match &self.role {
            Role::Leader(_) => false,
            // Kafka 4.1.2's ResignedState grants an up-to-date pre-vote (a real vote in our own
            // epoch never): the successor we named may need our pre-vote for its majority.
            Role::Resigned(_) | Role::Candidate(_) => pre_vote && up_to_date,
            // KAFKA-20895 (open in Kafka, PR #23168): once our leader has announced its
            // resignation, our fetches no longer prove it alive, so a pre-vote is granted.
            Role::Follower(f) => pre_vote && up_to_date && (!f.has_fetched || f.leader_resigned),
            Role::Unattached(_) | Role::Prospective(_) => {
                if pre_vote {
                    return up_to_date;
                }
                if let Some(voted) = self.role.voted_key(self.local) {
                    return voted.id == candidate.id
                        && (voted.directory_id.is_nil()
                            || candidate.directory_id.is_nil()
                            || voted.directory_id == candidate.directory_id);
                }
                if self.role.leader_id(self.local.id).is_some() {
                    return false;
                }
                up_to_date
            }
        }
    }

    /// The leader's address on our listener from a request's LeaderEndpoints, else (v0, or
    /// none given) from the voter set.
    fn request_leader_endpoint<'a>(
        &self,
        mut endpoints: impl Iterator<Item = (&'a StrBytes, &'a StrBytes, u16)>,
        leader_id: i32,
    ) -> Option<Endpoint> {
        endpoints
            .find(|(name, _, _)| name.as_str().eq_ignore_ascii_case(&self.cfg.listener_name))
            .map(|(_, host, port)| Endpoint {
                host: host.to_string(),
                port,
            })
            .or_else(|| self.voter_endpoint(leader_id))
    }

    fn respond_vote(&mut self, req: &InboundRequest, error: i16, granted: bool) {
        let leader = self.role.leader_id(self.local.id).unwrap_or(-1);
        let partition = vote_response::PartitionData::default()
            .with_partition_index(METADATA_PARTITION)
            .with_error_code(error)
            .with_leader_id(BrokerId(leader))
            .with_leader_epoch(self.role.epoch())
            .with_vote_granted(granted);
        let mut resp =
            VoteResponse::default().with_topics(vec![vote_response::TopicData::default()
                .with_topic_name(topic_name())
                .with_partitions(vec![partition])]);
        if req.api_version >= 1 {
            if let Some((id, ep)) = self.leader_node_endpoint(&req.listener_name) {
                resp = resp.with_node_endpoints(vec![vote_response::NodeEndpoint::default()
                    .with_node_id(BrokerId(id))
                    .with_host(StrBytes::from_string(ep.host))
                    .with_port(ep.port)]);
            }
        }
        self.respond(req, ResponseBody::Vote(resp));
    }

    pub(super) fn build_vote_request(
        &self,
        log: &dyn LogReader,
        voter: ReplicaKey,
        pre_vote: bool,
    ) -> RequestBody {
        let end = self.log_end(log);
        let epoch = self.role.epoch();
        let partition = vote_request::PartitionData::default()
            .with_partition_index(METADATA_PARTITION)
            .with_replica_epoch(epoch)
            .with_replica_id(BrokerId(self.local.id))
            .with_replica_directory_id(self.local.directory_id)
            .with_voter_directory_id(voter.directory_id)
            .with_last_offset_epoch(end.epoch)
            .with_last_offset(end.offset)
            .with_pre_vote(pre_vote);
        RequestBody::Vote(
            VoteRequest::default()
                .with_cluster_id(Some(StrBytes::from_string(self.cfg.cluster_id.clone())))
                .with_voter_id(BrokerId(voter.id))
                .with_topics(vec![vote_request::TopicData::default()
                    .with_topic_name(topic_name())
                    .with_partitions(vec![partition])]),
        )
    }

    /// Sends (pre-)votes to every voter that has not answered and is ready.
    fn send_vote_requests(&mut self, now_ms: u64, log: &dyn LogReader, pre_vote: bool) {
        let (answered, rejections): (BTreeSet<i32>, usize) = match &self.role {
            Role::Prospective(p) => (
                p.granted.union(&p.rejected).copied().collect(),
                p.rejected.len(),
            ),
            Role::Candidate(c) => (
                c.granted.union(&c.rejected).copied().collect(),
                c.rejected.len(),
            ),
            _ => return,
        };
        // Only while the election can still be won (maybeSendVoteRequests).
        if self.election_lost(rejections) {
            return;
        }
        let voters: Vec<ReplicaKey> = self.history.voters().nodes().map(|n| n.key).collect();
        for voter in voters {
            if answered.contains(&voter.id) || !self.requests.is_ready(voter.id, now_ms) {
                continue;
            }
            let Some(endpoint) = self.voter_endpoint(voter.id) else {
                continue;
            };
            let request = self.build_vote_request(log, voter, pre_vote);
            self.send(
                now_ms,
                Destination {
                    node_id: voter.id,
                    endpoint,
                },
                request,
            );
        }
    }

    pub(super) fn handle_vote_response(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        from: i32,
        resp: &VoteResponse,
    ) {
        if resp.error_code != errors::NONE {
            return self.handle_top_level_error(
                now_ms,
                from,
                kafka_protocol::messages::ApiKey::Vote,
                resp.error_code,
            );
        }
        if !is_metadata_partition(
            &resp.topics,
            |t| &t.topic_name,
            |t| &t.partitions,
            |p| p.partition_index,
        ) {
            self.requests
                .on_error(from, now_ms + self.cfg.retry_backoff_ms);
            return;
        }
        let p = &resp.topics[0].partitions[0];
        let endpoint = resp
            .node_endpoints
            .iter()
            .find(|n| n.node_id.0 == p.leader_id.0)
            .map(|n| Endpoint {
                host: n.host.to_string(),
                port: n.port,
            });
        if self.handle_common_response(
            now_ms,
            log,
            from,
            p.error_code,
            p.leader_id.0,
            p.leader_epoch,
            endpoint,
        ) {
            return;
        }
        self.requests.on_success(from);
        if p.error_code != errors::NONE {
            return;
        }
        let majority = self.history.voters().majority();
        let voters = self.history.voters().len();
        match &mut self.role {
            Role::Prospective(s) if p.leader_epoch <= s.epoch => {
                if p.vote_granted {
                    s.granted.insert(from);
                } else {
                    s.rejected.insert(from);
                }
                if s.granted.len() >= majority {
                    tracing::info!(
                        node_id = self.local.id,
                        "Pre-vote won in epoch {}; starting an election",
                        s.epoch
                    );
                    self.transition_to_candidate(log, now_ms);
                } else if s.rejected.len() > voters - majority {
                    // Kafka: a lost pre-vote falls back at once (pollProspective).
                    self.prospective_lost(now_ms, log);
                }
            }
            Role::Candidate(s) if p.leader_epoch == s.epoch => {
                if p.vote_granted {
                    s.granted.insert(from);
                } else {
                    s.rejected.insert(from);
                }
                if s.granted.len() >= majority {
                    tracing::info!(
                        node_id = self.local.id,
                        "Won the election in epoch {} with votes from {:?}",
                        s.epoch,
                        s.granted
                    );
                    self.transition_to_leader(now_ms, log);
                }
            }
            _ => {}
        }
    }

    /// A pre-vote round failed: follow the last known leader again, or wait unattached.
    fn prospective_lost(&mut self, now_ms: u64, log: &dyn LogReader) {
        let Role::Prospective(p) = &self.role else {
            return;
        };
        let epoch = p.epoch;
        match p.leader.clone() {
            Some((id, Some(ep))) => self.transition_to_follower(epoch, id, ep, now_ms, log),
            Some((id, None)) => self.transition_to_unattached(epoch, Some(id), now_ms, log),
            None => self.transition_to_unattached(epoch, None, now_ms, log),
        }
    }

    // ---- BeginQuorumEpoch / EndQuorumEpoch ------------------------------------------------

    pub(super) fn handle_begin_quorum_epoch_request(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        req: &InboundRequest,
        body: &BeginQuorumEpochRequest,
    ) {
        if !self.valid_cluster_id(&body.cluster_id) {
            let resp = BeginQuorumEpochResponse::default()
                .with_error_code(errors::INCONSISTENT_CLUSTER_ID);
            return self.respond(req, ResponseBody::BeginQuorumEpoch(resp));
        }
        if !is_metadata_partition(
            &body.topics,
            |t| &t.topic_name,
            |t| &t.partitions,
            |p| p.partition_index,
        ) {
            let resp = BeginQuorumEpochResponse::default().with_error_code(errors::INVALID_REQUEST);
            return self.respond(req, ResponseBody::BeginQuorumEpoch(resp));
        }
        let p = &body.topics[0].partitions[0];
        if let Some(error) = self.validate_voter_only_request(p.leader_id.0, p.leader_epoch) {
            return self.respond_begin_quorum_epoch(req, error);
        }
        let endpoint = self.request_leader_endpoint(
            body.leader_endpoints
                .iter()
                .map(|e| (&e.name, &e.host, e.port)),
            p.leader_id.0,
        );
        if !self.maybe_transition(Some(p.leader_id.0), p.leader_epoch, endpoint, now_ms, log) {
            return;
        }
        if !self.is_valid_voter_key(body.voter_id.0, p.voter_directory_id) {
            return self.respond_begin_quorum_epoch(req, errors::INVALID_VOTER_KEY);
        }
        self.respond_begin_quorum_epoch(req, errors::NONE);
    }

    fn respond_begin_quorum_epoch(&mut self, req: &InboundRequest, error: i16) {
        let leader = self.role.leader_id(self.local.id).unwrap_or(-1);
        let partition = begin_quorum_epoch_response::PartitionData::default()
            .with_partition_index(METADATA_PARTITION)
            .with_error_code(error)
            .with_leader_id(BrokerId(leader))
            .with_leader_epoch(self.role.epoch());
        let mut resp = BeginQuorumEpochResponse::default().with_topics(vec![
            begin_quorum_epoch_response::TopicData::default()
                .with_topic_name(topic_name())
                .with_partitions(vec![partition]),
        ]);
        if req.api_version >= 1 {
            if let Some((id, ep)) = self.leader_node_endpoint(&req.listener_name) {
                resp = resp.with_node_endpoints(vec![
                    begin_quorum_epoch_response::NodeEndpoint::default()
                        .with_node_id(BrokerId(id))
                        .with_host(StrBytes::from_string(ep.host))
                        .with_port(ep.port),
                ]);
            }
        }
        self.respond(req, ResponseBody::BeginQuorumEpoch(resp));
    }

    pub(super) fn handle_end_quorum_epoch_request(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        req: &InboundRequest,
        body: &EndQuorumEpochRequest,
    ) {
        if !self.valid_cluster_id(&body.cluster_id) {
            let resp =
                EndQuorumEpochResponse::default().with_error_code(errors::INCONSISTENT_CLUSTER_ID);
            return self.respond(req, ResponseBody::EndQuorumEpoch(resp));
        }
        if !is_metadata_partition(
            &body.topics,
            |t| &t.topic_name,
            |t| &t.partitions,
            |p| p.partition_index,
        ) {
            let resp = EndQuorumEpochResponse::default().with_error_code(errors::INVALID_REQUEST);
            return self.respond(req, ResponseBody::EndQuorumEpoch(resp));
        }
        let p = &body.topics[0].partitions[0];
        if let Some(error) = self.validate_voter_only_request(p.leader_id.0, p.leader_epoch) {
            return self.respond_end_quorum_epoch(req, error);
        }
        let endpoint = self.request_leader_endpoint(
            body.leader_endpoints
                .iter()
                .map(|e| (&e.name, &e.host, e.port)),
            p.leader_id.0,
        );
        if !self.maybe_transition(Some(p.leader_id.0), p.leader_epoch, endpoint, now_ms, log) {
            return;
        }
        let preferred: Vec<ReplicaKey> = if req.api_version >= 1 {
            p.preferred_candidates
                .iter()
                .map(|c| ReplicaKey::new(c.candidate_id.0, c.candidate_directory_id))
                .collect()
        } else {
            p.preferred_successors
                .iter()
                .map(|id| ReplicaKey::of_id(*id))
                .collect()
        };
        let backoff_ms = self.end_epoch_election_backoff_ms(&preferred);
        if let Role::Follower(f) = &mut self.role {
            if f.leader_id == p.leader_id.0 {
                f.fetch_deadline_ms = now_ms + backoff_ms;
                // KAFKA-20895 (open in Kafka 4.1.2, fix proposed in PR #23168): the leader told
                // us it is going away, so grant pre-votes from now on (`can_grant_vote`), or the
                // first preferred successor of a quorum of 5 or more cannot win. Sticky for the
                // epoch: a resigned leader never leads this epoch again. Java peers only see a
                // granted pre-vote (docs/interop.md).
                f.leader_resigned = true;
                tracing::info!(
                    node_id = self.local.id,
                    "Leader {} resigned epoch {}; starting a pre-vote in {backoff_ms} ms",
                    p.leader_id.0,
                    p.leader_epoch
                );
            }
        }
        self.respond_end_quorum_epoch(req, errors::NONE);
    }

    /// Strict exponential backoff by our position among the preferred successors.
    fn end_epoch_election_backoff_ms(&self, preferred: &[ReplicaKey]) -> u64 {
        let max = self.cfg.election_backoff_max_ms;
        let position = preferred.iter().position(|k| {
            k.id == self.local.id
                && (k.directory_id.is_nil() || k.directory_id == self.local.directory_id)
        });
        match position {
            Some(0) => 0,
            None => max,
            Some(p) => {
                let n = preferred.len() as u32;
                let shifted = (max >> (n - 1)) << (p as u32 - 1);
                shifted.min(max)
            }
        }
    }

    fn respond_end_quorum_epoch(&mut self, req: &InboundRequest, error: i16) {
        let leader = self.role.leader_id(self.local.id).unwrap_or(-1);
        let partition = end_quorum_epoch_response::PartitionData::default()
            .with_partition_index(METADATA_PARTITION)
            .with_error_code(error)
            .with_leader_id(BrokerId(leader))
            .with_leader_epoch(self.role.epoch());
        let mut resp = EndQuorumEpochResponse::default().with_topics(vec![
            end_quorum_epoch_response::TopicData::default()
                .with_topic_name(topic_name())
                .with_partitions(vec![partition]),
        ]);
        if req.api_version >= 1 {
            if let Some((id, ep)) = self.leader_node_endpoint(&req.listener_name) {
                resp = resp.with_node_endpoints(vec![
                    end_quorum_epoch_response::NodeEndpoint::default()
                        .with_node_id(BrokerId(id))
                        .with_host(StrBytes::from_string(ep.host))
                        .with_port(ep.port),
                ]);
            }
        }
        self.respond(req, ResponseBody::EndQuorumEpoch(resp));
    }

    pub(super) fn build_begin_quorum_epoch_request(&self, voter: ReplicaKey) -> RequestBody {
        let partition = begin_quorum_epoch_request::PartitionData::default()
            .with_partition_index(METADATA_PARTITION)
            .with_voter_directory_id(voter.directory_id)
            .with_leader_id(BrokerId(self.local.id))
            .with_leader_epoch(self.role.epoch());
        RequestBody::BeginQuorumEpoch(
            BeginQuorumEpochRequest::default()
                .with_cluster_id(Some(StrBytes::from_string(self.cfg.cluster_id.clone())))
                .with_voter_id(BrokerId(voter.id))
                .with_topics(vec![begin_quorum_epoch_request::TopicData::default()
                    .with_topic_name(topic_name())
                    .with_partitions(vec![partition])])
                .with_leader_endpoints(self.local_leader_endpoints_begin()),
        )
    }

    fn local_leader_endpoints_begin(&self) -> Vec<begin_quorum_epoch_request::LeaderEndpoint> {
        self.cfg
            .local_endpoints
            .iter()
            .map(|(name, ep)| {
                begin_quorum_epoch_request::LeaderEndpoint::default()
                    .with_name(StrBytes::from_string(name.clone()))
                    .with_host(StrBytes::from_string(ep.host.clone()))
                    .with_port(ep.port)
            })
            .collect()
    }

    fn build_end_quorum_epoch_request(&self, preferred: &[ReplicaKey]) -> RequestBody {
        let partition = end_quorum_epoch_request::PartitionData::default()
            .with_partition_index(METADATA_PARTITION)
            .with_leader_id(BrokerId(self.local.id))
            .with_leader_epoch(self.role.epoch())
            .with_preferred_successors(preferred.iter().map(|k| k.id).collect())
            .with_preferred_candidates(
                preferred
                    .iter()
                    .map(|k| {
                        end_quorum_epoch_request::ReplicaInfo::default()
                            .with_candidate_id(BrokerId(k.id))
                            .with_candidate_directory_id(k.directory_id)
                    })
                    .collect(),
            );
        RequestBody::EndQuorumEpoch(
            EndQuorumEpochRequest::default()
                .with_cluster_id(Some(StrBytes::from_string(self.cfg.cluster_id.clone())))
                .with_topics(vec![end_quorum_epoch_request::TopicData::default()
                    .with_topic_name(topic_name())
                    .with_partitions(vec![partition])])
                .with_leader_endpoints(
                    self.cfg
                        .local_endpoints
                        .iter()
                        .map(|(name, ep)| {
                            end_quorum_epoch_request::LeaderEndpoint::default()
                                .with_name(StrBytes::from_string(name.clone()))
                                .with_host(StrBytes::from_string(ep.host.clone()))
                                .with_port(ep.port)
                        })
                        .collect(),
                ),
        )
    }

    pub(super) fn handle_begin_quorum_epoch_response(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        from: i32,
        resp: &BeginQuorumEpochResponse,
    ) {
        let view = resp
            .topics
            .first()
            .and_then(|t| t.partitions.first())
            .map(|p| {
                LeaderView::of(
                    p.error_code,
                    p.leader_id.0,
                    p.leader_epoch,
                    resp.node_endpoints
                        .iter()
                        .map(|n| (n.node_id.0, &n.host, n.port)),
                )
            });
        if self.accept_answer(
            now_ms,
            log,
            from,
            resp.error_code,
            view,
            kafka_protocol::messages::ApiKey::BeginQuorumEpoch,
        ) == Some(errors::NONE)
        {
            if let Role::Leader(l) = &mut self.role {
                l.acknowledged.insert(from);
            }
        }
    }

    pub(super) fn handle_end_quorum_epoch_response(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        from: i32,
        resp: &EndQuorumEpochResponse,
    ) {
        let view = resp
            .topics
            .first()
            .and_then(|t| t.partitions.first())
            .map(|p| {
                LeaderView::of(
                    p.error_code,
                    p.leader_id.0,
                    p.leader_epoch,
                    resp.node_endpoints
                        .iter()
                        .map(|n| (n.node_id.0, &n.host, n.port)),
                )
            });
        if self.accept_answer(
            now_ms,
            log,
            from,
            resp.error_code,
            view,
            kafka_protocol::messages::ApiKey::EndQuorumEpoch,
        ) == Some(errors::NONE)
        {
            if let Role::Resigned(r) = &mut self.role {
                r.unacknowledged.remove(&from);
            }
        }
    }

    // ---- polls of the campaigning roles ---------------------------------------------------

    pub(super) fn poll_unattached(&mut self, now_ms: u64, log: &dyn LogReader) {
        let Role::Unattached(u) = &self.role else {
            return;
        };
        if let Some(deadline) = u.election_deadline_ms {
            if now_ms >= deadline && self.is_voter() {
                tracing::info!(
                    node_id = self.local.id,
                    "Election timeout in epoch {}; starting a pre-vote",
                    u.epoch
                );
                self.transition_to_prospective(now_ms, log);
                return;
            }
        }
        self.maybe_send_discovery_fetch(now_ms, log);
    }

    pub(super) fn poll_prospective(&mut self, now_ms: u64, log: &dyn LogReader) {
        let Role::Prospective(p) = &self.role else {
            return;
        };
        if p.granted.len() >= self.history.voters().majority() {
            self.transition_to_candidate(log, now_ms);
            return;
        }
        if now_ms >= p.election_deadline_ms {
            self.prospective_lost(now_ms, log);
            return;
        }
        self.send_vote_requests(now_ms, log, true);
    }

    pub(super) fn poll_candidate(&mut self, now_ms: u64, log: &dyn LogReader) {
        let Role::Candidate(c) = &self.role else {
            return;
        };
        if c.granted.len() >= self.history.voters().majority() {
            self.transition_to_leader(now_ms, log);
            return;
        }
        if now_ms >= c.election_deadline_ms {
            // Kafka 4.1 (KAFKA-18345): a candidate that did not win by its election timeout
            // starts over with a pre-vote, without exponential backoff.
            self.transition_to_prospective(now_ms, log);
            return;
        }
        self.send_vote_requests(now_ms, log, false);
    }

    pub(super) fn poll_resigned(&mut self, now_ms: u64, log: &dyn LogReader) {
        let Role::Resigned(r) = &self.role else {
            return;
        };
        if now_ms >= r.election_deadline_ms {
            let epoch = r.epoch + 1;
            self.transition_to_unattached(epoch, None, now_ms, log);
            return;
        }
        let preferred = r.preferred_successors.clone();
        let pending: Vec<i32> = r.unacknowledged.iter().copied().collect();
        for id in pending {
            if !self.requests.is_ready(id, now_ms) {
                continue;
            }
            let Some(endpoint) = self.voter_endpoint(id) else {
                continue;
            };
            let request = self.build_end_quorum_epoch_request(&preferred);
            self.send(
                now_ms,
                Destination {
                    node_id: id,
                    endpoint,
                },
                request,
            );
        }
    }
}
