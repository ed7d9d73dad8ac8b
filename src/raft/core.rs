//! `RaftCore`: the replica's state machine, driven only through inputs and outputs.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use bytes::Bytes;

use super::config::RaftConfig;
use super::errors::RaftError;
use super::io::{Destination, ElectionState, InboundRequest, Output, ResponseResult};
use super::log::LogReader;
use super::requests::RequestManager;
use super::rng::Rng;
use super::state::{Candidate, Follower, ReplicaState, Resigned, Role, Unattached};
use super::types::{Endpoint, OffsetAndEpoch, ReplicaKey, MAX_BATCH_SIZE_BYTES};
use super::voters::VoterHistory;
use crate::codec::RequestBody;

/// A Fetch parked until new data, a high-watermark change, leadership loss or its wait expires.
#[derive(Debug, Clone)]
pub(super) struct ParkedFetch {
    pub(super) request: InboundRequest,
    pub(super) fetch_offset: i64,
    /// The fetcher's high watermark (v18), to complete early when ours moves past it.
    pub(super) fetcher_high_watermark: Option<i64>,
    pub(super) deadline_ms: u64,
}

/// What a sent request was, to route its answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SentRequest {
    pub(super) destination_id: i32,
    pub(super) api_key: kafka_protocol::messages::ApiKey,
    pub(super) epoch: i32,
}

/// One KRaft replica. See the module docs of [`super`] for the call order.
#[derive(Debug)]
pub struct RaftCore {
    pub(super) cfg: RaftConfig,
    pub(super) local: ReplicaKey,
    pub(super) role: Role,
    /// Known high watermark (None = unknown; a new leader starts unknown).
    pub(super) high_watermark: Option<i64>,
    pub(super) rng: Rng,
    pub(super) outputs: VecDeque<Output>,
    pub(super) requests: RequestManager,
    pub(super) sent: BTreeMap<u64, SentRequest>,
    pub(super) next_correlation_id: u64,
    pub(super) parked: Vec<ParkedFetch>,
    /// Parked fetches released by a high-watermark change, answered at the next poll.
    pub(super) deferred_parked: Vec<ParkedFetch>,
    /// A truncation was emitted: the reader must catch up before the next Fetch is built.
    pub(super) log_refresh_needed: bool,
    /// Log end as changed by writes emitted during the current call (the reader shows them
    /// only after the driver carried them out).
    pub(super) written_end: Option<OffsetAndEpoch>,
    /// A graceful shutdown in progress: its deadline.
    pub(super) shutdown_deadline_ms: Option<u64>,
    pub(super) shutdown_complete: bool,
    /// The time of the latest call (an observer's expired fetch timer is then no deadline).
    pub(super) now_ms: u64,
    pub(super) fatal: Option<RaftError>,
    /// Voters and kraft.version as the log and snapshots define them.
    pub(super) history: VoterHistory,
    /// A snapshot was installed: reload the voter history from it on the next call.
    pub(super) history_reload: Option<OffsetAndEpoch>,
    /// Unexpected top-level errors in peers' answers: (peer, API, error) → (when last
    /// logged, answers since); `dispatch::handle_top_level_error` logs from it.
    pub(super) unexpected_errors: BTreeMap<(i32, i16, i16), (u64, u64)>,
}

impl RaftCore {
    /// Starts a replica from its persisted election state, as Kafka's `QuorumState.initialize`.
    pub fn new(
        cfg: RaftConfig,
        stored: Option<ElectionState>,
        log: &dyn LogReader,
        now_ms: u64,
    ) -> Self {
        let local = ReplicaKey::new(cfg.node_id, cfg.directory_id);
        let rng = Rng::new(cfg.rng_seed);
        let mut history = VoterHistory::new(cfg.voters.clone(), cfg.snapshot_voters.clone());
        if let Some(id) = log.latest_snapshot_id() {
            history.set_base_offset(id.offset - 1);
        }
        // The control records of the whole log (KRaftControlRecordStateMachine reads to LEO).
        let mut offset = log.log_start_offset();
        let end = log.end_offset().offset;
        let mut read_error = None;
        while offset < end {
            let (control, next) = match log.read_control_batches(offset, MAX_BATCH_SIZE_BYTES) {
                Ok(r) => r,
                Err(e) => {
                    // An unreadable log would silently lose voter changes: stop instead.
                    read_error = Some(e);
                    break;
                }
            };
            if next <= offset {
                break;
            }
            history.apply(&control);
            offset = next;
        }
        let mut core = RaftCore {
            cfg,
            local,
            role: Role::Unattached(Unattached {
                epoch: 0,
                leader_id: None,
                voted_key: None,
                election_deadline_ms: None,
            }),
            high_watermark: None,
            rng,
            outputs: VecDeque::new(),
            requests: RequestManager::default(),
            sent: BTreeMap::new(),
            next_correlation_id: 1,
            parked: Vec::new(),
            deferred_parked: Vec::new(),
            log_refresh_needed: false,
            written_end: None,
            shutdown_deadline_ms: None,
            shutdown_complete: false,
            now_ms,
            fatal: None,
            history,
            history_reload: None,
            unexpected_errors: BTreeMap::new(),
        };
        if let Some(e) = read_error {
            core.set_fatal(RaftError::LogRead(e));
            return core;
        }
        core.initialize(stored, log, now_ms);
        core.poll_roles(now_ms, log);
        core
    }

    fn initialize(&mut self, stored: Option<ElectionState>, log: &dyn LogReader, now_ms: u64) {
        let log_epoch = log.end_offset().epoch;
        let is_voter = self.is_voter();
        let stored = stored.unwrap_or(ElectionState {
            epoch: 0,
            leader_id: None,
            voted_key: None,
        });
        let role = if stored.epoch < log_epoch {
            tracing::warn!(
                "epoch in quorum-state ({}) is older than the log's last epoch ({log_epoch}); starting unattached in {log_epoch}",
                stored.epoch
            );
            Role::Unattached(Unattached {
                epoch: log_epoch,
                leader_id: None,
                voted_key: None,
                election_deadline_ms: self.election_deadline(is_voter, now_ms),
            })
        } else if stored.leader_id == Some(self.local.id) && is_voter {
            // Never start as leader: resign the epoch and let the others elect.
            Role::Resigned(Resigned {
                epoch: stored.epoch,
                preferred_successors: Vec::new(),
                unacknowledged: BTreeSet::new(),
                election_deadline_ms: now_ms + self.random_election_timeout_ms(),
            })
        } else if stored.voted_key.is_some_and(|k| k.matches(&self.local)) && is_voter {
            Role::Candidate(Candidate {
                epoch: stored.epoch,
                granted: [self.local.id].into_iter().collect(),
                rejected: BTreeSet::new(),
                election_deadline_ms: now_ms + self.random_election_timeout_ms(),
            })
        } else if let Some(leader_id) = stored.leader_id {
            match self.voter_endpoint(leader_id) {
                Some(endpoint) if leader_id != self.local.id => Role::Follower(Follower::new(
                    stored.epoch,
                    leader_id,
                    endpoint,
                    stored.voted_key,
                    now_ms,
                    self.cfg.fetch_timeout_ms,
                )),
                _ => Role::Unattached(Unattached {
                    epoch: stored.epoch,
                    leader_id: Some(leader_id),
                    voted_key: stored.voted_key,
                    election_deadline_ms: self.election_deadline(is_voter, now_ms),
                }),
            }
        } else {
            Role::Unattached(Unattached {
                epoch: stored.epoch,
                leader_id: None,
                voted_key: stored.voted_key,
                election_deadline_ms: self.election_deadline(is_voter, now_ms),
            })
        };
        self.role = role;
        if !matches!(self.role, Role::Resigned(_)) {
            self.persist();
        }
        self.emit_role_changed();
        if let Role::Resigned(_) = &self.role {
            self.prepare_resigned_state();
        }
        // A lone voter elects itself at once (KafkaRaftClient.initialize).
        if self.is_only_voter() && !matches!(self.role, Role::Leader(_)) {
            self.transition_to_candidate(log, now_ms);
        }
    }

    // ---- what the driver calls ----------------------------------------------------------

    /// Every entry point starts here: the driver has carried out all earlier outputs, so the
    /// reader is current again.
    pub(super) fn begin_call(&mut self, log: &dyn LogReader) {
        self.written_end = None;
        self.log_refresh_needed = false;
        if let Some(id) = self.history_reload.take() {
            let base = log
                .read_snapshot(id, 0, usize::MAX)
                .and_then(|chunk| super::voters::snapshot_voters(&chunk.bytes));
            self.history.reset(base);
            self.history.set_base_offset(id.offset - 1);
        }
    }

    /// Answers `request` with `body` without serving it (an authorization refusal made
    /// before the Raft layer: nothing in its state changes).
    pub fn refuse(&mut self, request: &InboundRequest, body: crate::codec::ResponseBody) {
        self.respond(request, body);
    }

    /// Handles a request that arrived.
    pub fn handle_request(&mut self, now_ms: u64, log: &dyn LogReader, request: InboundRequest) {
        self.now_ms = self.now_ms.max(now_ms);
        self.begin_call(log);
        if self.fatal.is_some() {
            return;
        }
        self.dispatch_request(now_ms, log, request);
        self.poll_roles(now_ms, log);
    }

    /// Handles the outcome of a request this core sent.
    pub fn handle_response(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        correlation_id: u64,
        result: ResponseResult,
    ) {
        self.now_ms = self.now_ms.max(now_ms);
        self.begin_call(log);
        if self.fatal.is_some() {
            return;
        }
        // An answer not (or no longer) expected is dropped, but the role is still polled, as
        // every pass of KafkaRaftClient.poll runs pollCurrentState: begin_call has just taken
        // the reader as current, which is all a follower waiting on a truncation needs to
        // fetch again (without this poll it would wait for its next timer, the fetch timeout).
        let Some(sent) = self.sent.remove(&correlation_id) else {
            self.poll_roles(now_ms, log);
            return;
        };
        if !self
            .requests
            .is_expected(sent.destination_id, correlation_id)
        {
            // A stale answer (its slot was reset by a transition, or it timed out).
            self.poll_roles(now_ms, log);
            return;
        }
        self.dispatch_response(now_ms, log, sent, result);
        self.poll_roles(now_ms, log);
    }

    /// Advances timers to `now_ms`.
    pub fn handle_timeout(&mut self, now_ms: u64, log: &dyn LogReader) {
        self.now_ms = self.now_ms.max(now_ms);
        self.begin_call(log);
        if self.fatal.is_some() {
            return;
        }
        for (node_id, correlation_id) in self.requests.expire(now_ms, self.cfg.retry_backoff_ms) {
            self.sent.remove(&correlation_id);
            self.on_request_timeout(node_id, now_ms);
        }
        self.expire_parked_fetches(now_ms, log);
        self.poll_roles(now_ms, log);
    }

    /// Appends records through the leader's write path, whatever the epoch; returns the
    /// offset of the last one, or `None` when this replica is not the leader (the workload and
    /// idle NoOps, which need no epoch check).
    pub fn propose(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        records: Vec<Bytes>,
    ) -> Option<i64> {
        self.now_ms = self.now_ms.max(now_ms);
        self.begin_call(log);
        let last = self.accumulate(now_ms, log, None, records).ok();
        self.poll_roles(now_ms, log);
        last
    }

    /// Kafka's `prepareAppend(epoch, records)`: appends `records` as one batch of `epoch`'s
    /// leader and returns the offset of the last one. Refused whole, with no offset handed
    /// out, when this replica does not lead `epoch`, is shutting down, or they cannot fit one
    /// batch. An offset handed out is lost only with the epoch (the records then never
    /// commit, and the controller resets on the leadership change).
    pub fn propose_at_epoch(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        epoch: i32,
        records: Vec<Bytes>,
    ) -> Result<i64, super::errors::ProposeError> {
        self.now_ms = self.now_ms.max(now_ms);
        self.begin_call(log);
        let last = self.accumulate(now_ms, log, Some(epoch), records);
        self.poll_roles(now_ms, log);
        last
    }

    /// Leader only: the offset the next proposed record will get (log end plus records
    /// lingering for the next batch). Kafka's controller takes a broker's epoch from it.
    pub fn next_write_offset(&self, log: &dyn LogReader) -> Option<i64> {
        self.next_write_offset_inner(log)
    }

    /// Starts a graceful shutdown: a leader resigns first; done within `timeout_ms`.
    pub fn begin_shutdown(&mut self, now_ms: u64, log: &dyn LogReader, timeout_ms: u64) {
        self.now_ms = self.now_ms.max(now_ms);
        self.begin_call(log);
        self.shutdown_deadline_ms = Some(now_ms + timeout_ms);
        if let Role::Leader(_) = self.role {
            self.transition_to_resigned(now_ms, log);
        }
        self.poll_roles(now_ms, log);
    }

    /// The next output to carry out, in order.
    pub fn poll_output(&mut self) -> Option<Output> {
        self.outputs.pop_front()
    }

    /// When `handle_timeout` should next be called.
    pub fn poll_timeout(&self) -> Option<u64> {
        let role = match &self.role {
            Role::Unattached(s) => s.election_deadline_ms,
            Role::Prospective(s) => Some(s.election_deadline_ms),
            Role::Candidate(s) => Some(s.election_deadline_ms),
            // An observer whose fetch timer expired keeps discovering the leader through the
            // voters; its requests' deadlines wake it (Kafka's pollFollowerAsObserver).
            Role::Follower(s) if !self.is_voter() && s.fetch_deadline_ms <= self.now_ms => None,
            Role::Follower(s) => Some(
                s.fetch_deadline_ms
                    .min(self.update_voter_deadline_ms().unwrap_or(u64::MAX))
                    .min(self.auto_join_deadline_ms().unwrap_or(u64::MAX)),
            ),
            Role::Leader(s) => Some(
                s.begin_quorum_deadline_ms
                    .min(s.check_quorum_deadline_ms)
                    .min(s.linger_deadline_ms.unwrap_or(u64::MAX))
                    .min(self.voter_change_deadline_ms().unwrap_or(u64::MAX)),
            ),
            Role::Resigned(s) => Some(s.election_deadline_ms),
        };
        [
            role,
            self.requests.next_deadline_ms(),
            self.parked.iter().map(|p| p.deadline_ms).min(),
            self.shutdown_deadline_ms,
            (self.log_refresh_needed || !self.deferred_parked.is_empty()).then_some(0),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// A fatal error, if the core stopped (the node must stop too).
    pub fn fatal_error(&self) -> Option<&RaftError> {
        self.fatal.as_ref()
    }

    /// The current role.
    pub fn role(&self) -> &Role {
        &self.role
    }

    /// The current epoch.
    pub fn epoch(&self) -> i32 {
        self.role.epoch()
    }

    /// The known leader, if any.
    pub fn leader_id(&self) -> Option<i32> {
        self.role.leader_id(self.local.id)
    }

    /// A follower's leader and its address on our controller listener.
    pub fn leader_destination(&self) -> Option<Destination> {
        match &self.role {
            Role::Follower(f) => Some(Destination {
                node_id: f.leader_id,
                endpoint: f.leader_endpoint.clone(),
            }),
            _ => None,
        }
    }

    /// The known high watermark.
    pub fn high_watermark(&self) -> Option<i64> {
        self.high_watermark
    }

    /// The vote cast in the current epoch, if any (Kafka's `current-vote`).
    pub fn voted_id(&self) -> Option<i32> {
        self.role.voted_key(self.local).map(|k| k.id)
    }

    /// Leader only: the offset of this epoch's LeaderChange batch. Everything below it is
    /// committed once the high watermark passes it (Kafka fires `handleLeaderChange` to the
    /// controller only after its listener read that far).
    pub fn epoch_start_offset(&self) -> Option<i64> {
        match &self.role {
            Role::Leader(l) => Some(l.epoch_start_offset),
            _ => None,
        }
    }

    /// Leader only: what it knows of each voter, self included.
    pub fn voter_progress(&self) -> Option<Vec<ReplicaState>> {
        let Role::Leader(l) = &self.role else {
            return None;
        };
        Some(l.voters.values().cloned().collect())
    }

    /// The kraft.version in effect (0: static voters, 1: KIP-853 voter records).
    pub fn kraft_version(&self) -> i16 {
        self.history.kraft_version()
    }

    /// kraft.version and voters in effect at `offset`, for the header of a snapshot whose
    /// last contained offset it is (`None` voters: only the static set applies).
    pub fn voters_at_offset(&self, offset: i64) -> (i16, Option<super::types::VoterSet>) {
        self.history.at_offset(offset)
    }

    /// The voters in effect.
    pub fn voters(&self) -> &super::types::VoterSet {
        self.history.voters()
    }

    /// Kafka's `current-state` metric value.
    pub fn state_name(&self) -> &'static str {
        match &self.role {
            Role::Leader(_) => "leader",
            Role::Candidate(_) => "candidate",
            Role::Prospective(p) if p.voted_key.is_some() => "prospective-voted",
            Role::Prospective(_) => "prospective",
            Role::Follower(_) if !self.is_voter() => "observer",
            Role::Follower(_) => "follower",
            Role::Unattached(u) if u.voted_key.is_some() => "unattached-voted",
            Role::Unattached(_) | Role::Resigned(_) => "unattached",
        }
    }

    // ---- helpers shared by the handlers ------------------------------------------------

    pub(super) fn is_voter(&self) -> bool {
        self.history.voters().is_voter(&self.local)
    }

    pub(super) fn is_only_voter(&self) -> bool {
        self.history.voters().len() == 1 && self.is_voter()
    }

    pub(super) fn random_election_timeout_ms(&mut self) -> u64 {
        let t = self.cfg.election_timeout_ms;
        if t == 0 {
            return 0;
        }
        t + self.rng.below(t)
    }

    pub(super) fn election_deadline(&mut self, is_voter: bool, now_ms: u64) -> Option<u64> {
        is_voter.then(|| now_ms + self.random_election_timeout_ms())
    }

    /// Voter `id`'s address on our controller listener.
    pub(super) fn voter_endpoint(&self, id: i32) -> Option<Endpoint> {
        self.history
            .voters()
            .endpoint(id, &self.cfg.listener_name)
            .cloned()
    }

    /// The endpoint of `leader_id` for `listener` (answers carry it for the request's listener).
    pub(super) fn leader_endpoint_for(&self, leader_id: i32, listener: &str) -> Option<Endpoint> {
        if leader_id == self.local.id {
            return self.cfg.local_endpoints.get(listener).cloned();
        }
        self.history.voters().endpoint(leader_id, listener).cloned()
    }

    /// Whether `rejections` make winning impossible (EpochElection.isVoteRejected).
    pub(super) fn election_lost(&self, rejections: usize) -> bool {
        rejections > self.history.voters().len() - self.history.voters().majority()
    }

    /// Log end offset and epoch, including writes emitted in this call.
    pub(super) fn log_end(&self, log: &dyn LogReader) -> OffsetAndEpoch {
        self.written_end.unwrap_or_else(|| log.end_offset())
    }

    pub(super) fn persist(&mut self) {
        let state = ElectionState {
            epoch: self.role.epoch(),
            leader_id: self.role.leader_id(self.local.id),
            voted_key: self.role.voted_key(self.local),
        };
        self.outputs.push_back(Output::PersistElectionState(state));
    }

    pub(super) fn emit_role_changed(&mut self) {
        let out = Output::RoleChanged {
            epoch: self.role.epoch(),
            leader_id: self.role.leader_id(self.local.id),
            state: self.state_name(),
        };
        tracing::info!(
            node_id = self.local.id,
            "Transitioned to {} in epoch {} (leader {:?})",
            self.state_name(),
            self.role.epoch(),
            self.role.leader_id(self.local.id)
        );
        self.outputs.push_back(out);
    }

    pub(super) fn send(&mut self, now_ms: u64, destination: Destination, request: RequestBody) {
        let correlation_id = self.next_correlation_id;
        self.next_correlation_id += 1;
        let api_key = request.api_key();
        self.requests.on_send(
            destination.node_id,
            correlation_id,
            api_key,
            now_ms + self.cfg.request_timeout_ms,
        );
        self.sent.insert(
            correlation_id,
            SentRequest {
                destination_id: destination.node_id,
                api_key,
                epoch: self.role.epoch(),
            },
        );
        self.outputs.push_back(Output::Send {
            correlation_id,
            destination,
            request,
        });
    }

    pub(super) fn set_fatal(&mut self, error: RaftError) {
        tracing::error!(node_id = self.local.id, "fatal: {error}");
        self.fatal = Some(error);
    }

    pub(super) fn update_high_watermark(&mut self, hw: i64) {
        if self.high_watermark.is_none_or(|old| hw > old) {
            self.high_watermark = Some(hw);
            self.outputs.push_back(Output::HighWatermark(hw));
        }
    }

    /// Runs the per-role timers and sends whatever each role sends.
    pub(super) fn poll_roles(&mut self, now_ms: u64, log: &dyn LogReader) {
        // Transitions may cascade (a lone voter: Prospective → Candidate → Leader).
        for _ in 0..4 {
            if self.fatal.is_some() {
                return;
            }
            let before = (self.role.epoch(), std::mem::discriminant(&self.role));
            match &self.role {
                Role::Unattached(_) => self.poll_unattached(now_ms, log),
                Role::Prospective(_) => self.poll_prospective(now_ms, log),
                Role::Candidate(_) => self.poll_candidate(now_ms, log),
                Role::Follower(_) => self.poll_follower(now_ms, log),
                Role::Leader(_) => self.poll_leader(now_ms, log),
                Role::Resigned(_) => self.poll_resigned(now_ms, log),
            }
            if (self.role.epoch(), std::mem::discriminant(&self.role)) == before {
                break;
            }
        }
        self.maybe_complete_shutdown(now_ms);
    }

    fn maybe_complete_shutdown(&mut self, now_ms: u64) {
        let Some(deadline) = self.shutdown_deadline_ms else {
            return;
        };
        if self.shutdown_complete {
            return;
        }
        let done = now_ms >= deadline
            || !self.is_voter()
            || self.is_only_voter()
            || matches!(&self.role, Role::Follower(f) if f.leader_id != self.local.id)
            || matches!(&self.role, Role::Resigned(r) if r.unacknowledged.is_empty());
        if done {
            self.shutdown_complete = true;
            self.outputs.push_back(Output::ShutdownComplete);
        }
    }
}
