//! A scenario test context in the spirit of Kafka's `RaftClientTestContext`: one core under
//! test, an in-memory log and quorum-state, virtual time, and helpers to deliver requests and
//! responses and to inspect what the core sent.

use bytes::Bytes;
use kafka_protocol::messages::{
    begin_quorum_epoch_request, end_quorum_epoch_request, fetch_request, vote_request,
    vote_response, BeginQuorumEpochRequest, BrokerId, EndQuorumEpochRequest, FetchRequest,
    TopicName, VoteRequest, VoteResponse,
};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::mem_log::MemLog;
pub use super::wire::Rpc;
use super::wire::{request_over_the_wire, response_over_the_wire};
use crate::codec::{RequestBody, ResponseBody};
use crate::raft::types::{
    Endpoint, OffsetAndEpoch, ReplicaKey, VoterSet, METADATA_TOPIC_ID, METADATA_TOPIC_NAME,
};
use crate::raft::{
    ElectionState, InboundRequest, Output, RaftConfig, RaftCore, ResponseResult, Role,
};
use crate::records::batch::build_data_batch;

pub const CLUSTER_ID: &str = "test-cluster-id-aaaaaa";
pub const LISTENER: &str = "CONTROLLER";
pub const ELECTION_TIMEOUT_MS: u64 = 10_000;
pub const FETCH_TIMEOUT_MS: u64 = 50_000;
pub const REQUEST_TIMEOUT_MS: u64 = 5_000;
pub const RETRY_BACKOFF_MS: u64 = 50;
pub const ELECTION_BACKOFF_MAX_MS: u64 = 100;

/// Start time of every context (wall-clock-like milliseconds).
pub const START_MS: u64 = 1_700_000_000_000;

pub fn port_of(id: i32) -> u16 {
    9990 + id as u16
}

pub fn voter_set(ids: &[i32]) -> VoterSet {
    VoterSet::from_static(
        LISTENER,
        &ids.iter()
            .map(|id| (*id, "127.0.0.1".to_string(), port_of(*id)))
            .collect::<Vec<_>>(),
    )
}

pub fn config(local_id: i32, voters: &[i32]) -> RaftConfig {
    RaftConfig {
        node_id: local_id,
        directory_id: Uuid::nil(),
        cluster_id: CLUSTER_ID.to_string(),
        listener_name: LISTENER.to_string(),
        local_endpoints: [(
            LISTENER.to_string(),
            Endpoint {
                host: "127.0.0.1".into(),
                port: port_of(local_id),
            },
        )]
        .into_iter()
        .collect(),
        voters: voter_set(voters),
        snapshot_voters: None,
        bootstrap_servers: Vec::new(),
        election_timeout_ms: ELECTION_TIMEOUT_MS,
        fetch_timeout_ms: FETCH_TIMEOUT_MS,
        election_backoff_max_ms: ELECTION_BACKOFF_MAX_MS,
        request_timeout_ms: REQUEST_TIMEOUT_MS,
        retry_backoff_ms: RETRY_BACKOFF_MS,
        append_linger_ms: 0,
        auto_join: false,
        fetch_max_bytes: crate::raft::types::MAX_BATCH_SIZE_BYTES as i32,
        fetch_snapshot_max_bytes: crate::raft::types::MAX_BATCH_SIZE_BYTES as i32,
        leader_reads_fetch_max_bytes: false,
        rng_seed: 7,
    }
}

/// A sent request as the test sees it.
#[derive(Debug, Clone)]
pub struct Sent {
    pub correlation_id: u64,
    pub destination: i32,
    pub endpoint: Endpoint,
    pub request: RequestBody,
}

pub struct Context {
    pub core: RaftCore,
    pub log: MemLog,
    pub stored: Option<ElectionState>,
    /// Every write, in the order carried out, for ordering assertions.
    pub events: Vec<String>,
    pub sent: Vec<Sent>,
    pub responses: Vec<(u64, ResponseBody)>,
    pub high_watermarks: Vec<i64>,
    /// Snapshot downloads in progress.
    pub downloads: std::collections::BTreeMap<(i64, i32), Vec<u8>>,
    pub now_ms: u64,
    /// The RPC versions this scenario speaks (see `wire.rs`).
    pub rpc: Rpc,
    /// The core reported `ShutdownComplete`.
    pub shutdown_complete: bool,
    next_request_id: u64,
    /// The version each delivered request came at: its answer goes back at that version.
    inbound_versions: std::collections::BTreeMap<u64, i16>,
    /// Every request the core sent, by correlation id, to answer it at the right version.
    outbound: std::collections::BTreeMap<u64, RequestBody>,
}

type ConfigTweak = Box<dyn FnOnce(&mut RaftConfig)>;

pub struct Builder {
    local_id: i32,
    voters: Vec<i32>,
    stored: Option<ElectionState>,
    log: MemLog,
    tweak: Vec<ConfigTweak>,
    rpc: Rpc,
}

impl Builder {
    pub fn new(local_id: i32, voters: &[i32]) -> Self {
        Self {
            local_id,
            voters: voters.to_vec(),
            stored: None,
            log: MemLog::default(),
            tweak: Vec::new(),
            rpc: Rpc::Newest,
        }
    }

    /// Runs the scenario at these RPC versions (Kafka's `withKip853Rpc` / `withRaftProtocol`).
    pub fn with_rpc(mut self, rpc: Rpc) -> Self {
        self.rpc = rpc;
        self
    }

    pub fn with_election_state(
        mut self,
        epoch: i32,
        leader_id: Option<i32>,
        voted_id: Option<i32>,
    ) -> Self {
        self.stored = Some(ElectionState {
            epoch,
            leader_id,
            voted_key: voted_id.map(ReplicaKey::of_id),
        });
        self
    }

    pub fn with_unknown_leader(self, epoch: i32) -> Self {
        self.with_election_state(epoch, None, None)
    }

    pub fn with_voted_candidate(self, epoch: i32, voted: i32) -> Self {
        self.with_election_state(epoch, None, Some(voted))
    }

    pub fn with_elected_leader(self, epoch: i32, leader: i32) -> Self {
        self.with_election_state(epoch, Some(leader), None)
    }

    /// Appends a data batch of `count` records at `epoch`.
    pub fn append_to_log(mut self, epoch: i32, count: usize) -> Self {
        let base = crate::raft::LogReader::end_offset(&self.log).offset;
        let values: Vec<Vec<u8>> = (0..count)
            .map(|i| format!("record-{}", base + i as i64).into_bytes())
            .collect();
        let refs: Vec<&[u8]> = values.iter().map(|v| v.as_slice()).collect();
        let batch = build_data_batch(base, epoch, START_MS as i64, &refs).unwrap();
        self.log.append(&Bytes::from(batch));
        self.log.flush();
        self
    }

    pub fn with_snapshot(mut self, id: OffsetAndEpoch) -> Self {
        self.log.add_snapshot(id, Bytes::from(vec![7u8; 100]));
        self
    }

    /// `controller.quorum.bootstrap.servers` at the addresses of `ids` (the core numbers them
    /// -2, -3, … in this order, as Kafka does).
    pub fn with_bootstrap_servers(self, ids: &[i32]) -> Self {
        let servers: Vec<Endpoint> = ids
            .iter()
            .map(|id| Endpoint {
                host: "127.0.0.1".into(),
                port: port_of(*id),
            })
            .collect();
        self.with_config(move |c| c.bootstrap_servers = servers)
    }

    pub fn with_config(mut self, f: impl FnOnce(&mut RaftConfig) + 'static) -> Self {
        self.tweak.push(Box::new(f));
        self
    }

    pub fn build(self) -> Context {
        let mut cfg = config(self.local_id, &self.voters);
        for f in self.tweak {
            f(&mut cfg);
        }
        let core = RaftCore::new(cfg, self.stored.clone(), &self.log, START_MS);
        let mut ctx = Context {
            core,
            log: self.log,
            stored: self.stored,
            events: Vec::new(),
            sent: Vec::new(),
            responses: Vec::new(),
            high_watermarks: Vec::new(),
            downloads: Default::default(),
            now_ms: START_MS,
            rpc: self.rpc,
            shutdown_complete: false,
            next_request_id: 1,
            inbound_versions: Default::default(),
            outbound: Default::default(),
        };
        ctx.drain();
        ctx
    }
}

pub fn topic_name() -> TopicName {
    TopicName(StrBytes::from_static_str(METADATA_TOPIC_NAME))
}

impl Context {
    /// Carries out every pending output, in order.
    pub fn drain(&mut self) {
        while let Some(out) = self.core.poll_output() {
            match out {
                Output::PersistElectionState(s) => {
                    self.events.push(format!(
                        "persist epoch={} leader={:?} voted={:?}",
                        s.epoch,
                        s.leader_id,
                        s.voted_key.map(|k| k.id)
                    ));
                    self.stored = Some(s);
                }
                Output::AppendAsLeader { batch, .. } => {
                    self.events.push("append-leader".into());
                    self.log.append(&batch);
                }
                Output::AppendAsFollower { records, .. } => {
                    self.events.push("append-follower".into());
                    self.log.append(&records);
                }
                Output::Truncate { offset } => {
                    self.events.push(format!("truncate {offset}"));
                    self.log.truncate(offset);
                }
                Output::Flush => {
                    self.events.push("flush".into());
                    self.log.flush();
                }
                Output::Send {
                    correlation_id,
                    destination,
                    request,
                } => {
                    self.events.push(format!(
                        "send {:?} to {}",
                        request.api_key(),
                        destination.node_id
                    ));
                    self.outbound.insert(correlation_id, request.clone());
                    self.sent.push(Sent {
                        correlation_id,
                        destination: destination.node_id,
                        endpoint: destination.endpoint,
                        request,
                    });
                }
                Output::Respond {
                    request_id, body, ..
                } => {
                    self.events.push(format!("respond {request_id}"));
                    // The answer leaves at the request's version: one the core cannot encode
                    // there would close the connection in the node, so it fails the scenario.
                    let body = match self.inbound_versions.get(&request_id) {
                        Some(v) => response_over_the_wire(&body, *v)
                            .unwrap_or_else(|e| panic!("the core's answer cannot be sent: {e}")),
                        None => body,
                    };
                    self.responses.push((request_id, body));
                }
                Output::HighWatermark(hw) => self.high_watermarks.push(hw),
                Output::SnapshotChunk {
                    id,
                    position,
                    bytes,
                } => {
                    self.events.push(format!(
                        "snapshot-chunk {}-{} @{position}",
                        id.offset, id.epoch
                    ));
                    let entry = self.downloads.entry((id.offset, id.epoch)).or_default();
                    assert_eq!(entry.len() as i64, position, "chunks arrive in order");
                    entry.extend_from_slice(&bytes);
                }
                Output::InstallSnapshot { id } => {
                    self.events
                        .push(format!("install-snapshot {}-{}", id.offset, id.epoch));
                    let bytes = self
                        .downloads
                        .remove(&(id.offset, id.epoch))
                        .unwrap_or_default();
                    self.log.install_snapshot(id, Bytes::from(bytes));
                }
                Output::AbandonSnapshot { id } => {
                    self.downloads.remove(&(id.offset, id.epoch));
                }
                Output::ShutdownComplete => self.shutdown_complete = true,
                Output::RoleChanged { .. } => {}
            }
        }
    }

    /// Delivers a request at the scenario's RPC version of its API.
    pub fn deliver(&mut self, body: RequestBody) -> u64 {
        let version = self.rpc.version(body.api_key());
        self.deliver_request(body, version)
    }

    /// Delivers a request as a peer sends it at `api_version` (fields that version cannot
    /// carry are dropped on the way).
    pub fn deliver_request(&mut self, body: RequestBody, api_version: i16) -> u64 {
        let request_id = self.next_request_id;
        self.next_request_id += 1;
        let api = body.api_key();
        let body = request_over_the_wire(&body, api_version)
            .unwrap_or_else(|| panic!("scenario bug: {api:?} cannot be sent at v{api_version}"));
        self.inbound_versions.insert(request_id, api_version);
        let req = InboundRequest {
            request_id,
            api_version,
            listener_name: LISTENER.into(),
            forwarded: false,
            sender: Some(crate::raft::Sender::anonymous_local()),
            forwarded_by: None,
            body,
        };
        self.core.handle_request(self.now_ms, &self.log, req);
        self.drain();
        request_id
    }

    /// Answers the core's request `correlation_id` as a peer speaking the scenario's RPC
    /// versions would: the answer crosses the codec at that version, and a request that
    /// version cannot carry (a pre-vote below Vote v2) never left, so the core gets the
    /// UNSUPPORTED_VERSION its client reports instead.
    pub fn deliver_response(&mut self, correlation_id: u64, body: ResponseBody) {
        let result = match self.outbound.get(&correlation_id) {
            Some(request) => {
                let version = self.rpc.version(request.api_key());
                if request_over_the_wire(request, version).is_none() {
                    ResponseResult::UnsupportedVersion
                } else {
                    ResponseResult::Answered(Box::new(
                        response_over_the_wire(&body, version)
                            .unwrap_or_else(|e| panic!("scenario bug: {e}")),
                    ))
                }
            }
            None => ResponseResult::Answered(Box::new(body)),
        };
        self.core
            .handle_response(self.now_ms, &self.log, correlation_id, result);
        self.drain();
    }

    pub fn deliver_result(&mut self, correlation_id: u64, result: ResponseResult) {
        self.core
            .handle_response(self.now_ms, &self.log, correlation_id, result);
        self.drain();
    }

    pub fn advance(&mut self, ms: u64) {
        self.now_ms += ms;
        self.poll();
    }

    /// Runs timers at the current time (and any immediately due follow-ups).
    pub fn poll(&mut self) {
        for _ in 0..4 {
            self.core.handle_timeout(self.now_ms, &self.log);
            self.drain();
            if self.core.poll_timeout().is_none_or(|t| t > self.now_ms) {
                break;
            }
        }
    }

    pub fn propose(&mut self, values: &[&str]) -> Option<i64> {
        let records = values
            .iter()
            .map(|v| Bytes::from(v.as_bytes().to_vec()))
            .collect();
        let r = self.core.propose(self.now_ms, &self.log, records);
        self.drain();
        r
    }

    pub fn response(&self, request_id: u64) -> &ResponseBody {
        &self
            .responses
            .iter()
            .find(|(id, _)| *id == request_id)
            .unwrap_or_else(|| panic!("no response to {request_id}; events {:?}", self.events))
            .1
    }

    pub fn has_response(&self, request_id: u64) -> bool {
        self.responses.iter().any(|(id, _)| *id == request_id)
    }

    /// Sent requests of `api` not yet examined; clears them.
    pub fn take_sent(&mut self, api: kafka_protocol::messages::ApiKey) -> Vec<Sent> {
        let (taken, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.sent)
            .into_iter()
            .partition(|s| s.request.api_key() == api);
        self.sent = rest;
        taken
    }

    pub fn epoch(&self) -> i32 {
        self.core.epoch()
    }

    pub fn role(&self) -> &Role {
        self.core.role()
    }

    pub fn assert_unattached(&self, epoch: i32) {
        assert!(
            matches!(self.role(), Role::Unattached(u) if u.epoch == epoch),
            "expected unattached in {epoch}, got {:?}",
            self.role()
        );
    }

    pub fn assert_voted(&self, epoch: i32, candidate: i32) {
        assert!(
            matches!(self.role(), Role::Unattached(u) if u.epoch == epoch && u.voted_key.map(|k| k.id) == Some(candidate)),
            "expected voted for {candidate} in {epoch}, got {:?}",
            self.role()
        );
        let stored = self.stored.as_ref().unwrap();
        assert_eq!(
            (stored.epoch, stored.voted_key.map(|k| k.id)),
            (epoch, Some(candidate)),
            "vote must be persisted"
        );
    }

    pub fn assert_follower(&self, epoch: i32, leader: i32) {
        assert!(
            matches!(self.role(), Role::Follower(f) if f.epoch == epoch && f.leader_id == leader),
            "expected follower of {leader} in {epoch}, got {:?}",
            self.role()
        );
    }

    pub fn assert_leader(&self, epoch: i32) {
        assert!(
            matches!(self.role(), Role::Leader(l) if l.epoch == epoch),
            "expected leader in {epoch}, got {:?}",
            self.role()
        );
    }

    pub fn assert_candidate(&self, epoch: i32) {
        assert!(
            matches!(self.role(), Role::Candidate(c) if c.epoch == epoch),
            "expected candidate in {epoch}, got {:?}",
            self.role()
        );
    }

    pub fn assert_prospective(&self, epoch: i32) {
        assert!(
            matches!(self.role(), Role::Prospective(p) if p.epoch == epoch),
            "expected prospective in {epoch}, got {:?}",
            self.role()
        );
    }

    pub fn assert_resigned(&self, epoch: i32) {
        assert!(
            matches!(self.role(), Role::Resigned(r) if r.epoch == epoch),
            "expected resigned in {epoch}, got {:?}",
            self.role()
        );
    }

    /// Wins an election for a context whose local node is a voter: time out, win the
    /// pre-vote and the vote from every other voter.
    pub fn become_leader(&mut self) {
        self.advance(2 * ELECTION_TIMEOUT_MS);
        self.become_leader_again();
    }

    /// Grants every pending (pre-)vote request until the core leads.
    pub fn become_leader_again(&mut self) {
        for _ in 0..2 {
            let votes = self.take_sent(kafka_protocol::messages::ApiKey::Vote);
            for v in votes {
                let RequestBody::Vote(req) = &v.request else {
                    unreachable!()
                };
                let epoch = req.topics[0].partitions[0].replica_epoch;
                self.deliver_response(
                    v.correlation_id,
                    ResponseBody::Vote(vote_response_body(0, -1, epoch, true)),
                );
            }
        }
        assert!(
            matches!(self.role(), Role::Leader(_)),
            "did not become leader: {:?}",
            self.role()
        );
    }
}

pub fn vote_request_body(
    epoch: i32,
    candidate: i32,
    last_epoch: i32,
    last_offset: i64,
    pre_vote: bool,
) -> RequestBody {
    RequestBody::Vote(
        VoteRequest::default()
            .with_cluster_id(Some(StrBytes::from_static_str(CLUSTER_ID)))
            .with_voter_id(BrokerId(-1))
            .with_topics(vec![vote_request::TopicData::default()
                .with_topic_name(topic_name())
                .with_partitions(vec![vote_request::PartitionData::default()
                    .with_replica_epoch(epoch)
                    .with_replica_id(BrokerId(candidate))
                    .with_last_offset_epoch(last_epoch)
                    .with_last_offset(last_offset)
                    .with_pre_vote(pre_vote)])]),
    )
}

pub fn vote_response_body(error: i16, leader: i32, epoch: i32, granted: bool) -> VoteResponse {
    VoteResponse::default().with_topics(vec![vote_response::TopicData::default()
        .with_topic_name(topic_name())
        .with_partitions(vec![vote_response::PartitionData::default()
            .with_error_code(error)
            .with_leader_id(BrokerId(leader))
            .with_leader_epoch(epoch)
            .with_vote_granted(granted)])])
}

pub fn begin_epoch_request_body(epoch: i32, leader: i32) -> RequestBody {
    RequestBody::BeginQuorumEpoch(
        BeginQuorumEpochRequest::default()
            .with_cluster_id(Some(StrBytes::from_static_str(CLUSTER_ID)))
            .with_voter_id(BrokerId(-1))
            .with_topics(vec![begin_quorum_epoch_request::TopicData::default()
                .with_topic_name(topic_name())
                .with_partitions(vec![
                    begin_quorum_epoch_request::PartitionData::default()
                        .with_leader_id(BrokerId(leader))
                        .with_leader_epoch(epoch),
                ])]),
    )
}

pub fn end_epoch_request_body(epoch: i32, leader: i32, preferred: &[i32]) -> RequestBody {
    RequestBody::EndQuorumEpoch(
        EndQuorumEpochRequest::default()
            .with_cluster_id(Some(StrBytes::from_static_str(CLUSTER_ID)))
            .with_topics(vec![end_quorum_epoch_request::TopicData::default()
                .with_topic_name(topic_name())
                .with_partitions(vec![
                    end_quorum_epoch_request::PartitionData::default()
                        .with_leader_id(BrokerId(leader))
                        .with_leader_epoch(epoch)
                        .with_preferred_successors(preferred.to_vec())
                        .with_preferred_candidates(
                            preferred
                                .iter()
                                .map(|id| {
                                    end_quorum_epoch_request::ReplicaInfo::default()
                                        .with_candidate_id(BrokerId(*id))
                                })
                                .collect(),
                        ),
                ])]),
    )
}

pub fn fetch_request_body(
    epoch: i32,
    replica: i32,
    fetch_offset: i64,
    last_fetched_epoch: i32,
    max_wait_ms: i32,
) -> RequestBody {
    RequestBody::Fetch(
        FetchRequest::default()
            .with_cluster_id(Some(StrBytes::from_static_str(CLUSTER_ID)))
            .with_replica_state(
                fetch_request::ReplicaState::default().with_replica_id(BrokerId(replica)),
            )
            .with_max_wait_ms(max_wait_ms)
            .with_topics(vec![fetch_request::FetchTopic::default()
                .with_topic_id(METADATA_TOPIC_ID)
                .with_partitions(vec![fetch_request::FetchPartition::default()
                    .with_current_leader_epoch(epoch)
                    .with_fetch_offset(fetch_offset)
                    .with_last_fetched_epoch(last_fetched_epoch)])]),
    )
}

pub fn fetch_partition(
    resp: &ResponseBody,
) -> &kafka_protocol::messages::fetch_response::PartitionData {
    let ResponseBody::Fetch(f) = resp else {
        panic!("not a fetch response: {resp:?}")
    };
    &f.responses[0].partitions[0]
}

pub fn vote_partition(resp: &ResponseBody) -> &vote_response::PartitionData {
    let ResponseBody::Vote(v) = resp else {
        panic!("not a vote response: {resp:?}")
    };
    &v.topics[0].partitions[0]
}

/// A Fetch answer from `leader` in `epoch` with `records` and high watermark `hw`.
pub fn follower_fetch_response(leader: i32, epoch: i32, hw: i64, records: Bytes) -> ResponseBody {
    ResponseBody::Fetch(
        kafka_protocol::messages::FetchResponse::default().with_responses(vec![
            kafka_protocol::messages::fetch_response::FetchableTopicResponse::default()
                .with_topic_id(METADATA_TOPIC_ID)
                .with_partitions(vec![
                    kafka_protocol::messages::fetch_response::PartitionData::default()
                        .with_high_watermark(hw)
                        .with_current_leader(
                            kafka_protocol::messages::fetch_response::LeaderIdAndEpoch::default()
                                .with_leader_id(BrokerId(leader))
                                .with_leader_epoch(epoch),
                        )
                        .with_records(Some(records)),
                ]),
        ]),
    )
}
