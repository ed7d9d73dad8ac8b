//! The driver: the only code that reads the clock, and I/O only. It runs the node state
//! machine ([`crate::node::NodeMachine`]: Raft core + controller) and its store on a
//! dedicated thread, feeds it events, and carries out what comes out: the machine's store
//! writes (quorum-state, append, truncate, fsync) complete inside its calls, before any request
//! or answer they precede leaves (Kafka does the same on its raft thread). The async side
//! talks to it through a bounded queue. Beside the machine it keeps what is not a decision:
//! peer connections, reply channels, the snapshot writer thread, the log cleaner's cadence,
//! metrics and status, and the benchmark workload.
//!
//! ```text
//!   connections ─Event::Request─┐
//!   peers ──────Event::Response─┼─▶ raft thread: machine.handle_*(now, store) ─▶ NodeOutput:
//!   signals ────Event::Shutdown─┘      Send ─▶ peers      Respond ─▶ the waiting connection
//!                                      WriteSnapshot ─▶ writer thread   status / metrics
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::oneshot;

use super::metrics::{RaftMetrics, VoterLag};
use super::store::{RaftStore, StoreError};
use crate::codec::ResponseBody;
use crate::controller::QuorumController;
use crate::logging::LoggerChange;
use crate::metadata::controller::ControllerRegistration;
use crate::network::peers::{PeerConfig, PeerRequest, PeerResponse, Peers};
use crate::node::registration::Registrations;
use crate::node::snapshot_policy::{MetadataLogSettings, CLEAN_INTERVAL_MS};
use crate::node::{MachineError, NodeMachine, NodeOutput};
use crate::raft::{InboundRequest, RaftCore};
use crate::server::workload::commit_stats::CommitStats;
use crate::server::workload::{no_op_record, Pacer, Workload, MAX_PENDING_RECORDS};
use crate::snapshot::SnapshotId;

pub mod metadata;

/// Events queued for the raft thread before producers see "busy".
const EVENT_QUEUE_DEPTH: usize = 4096;
/// Longest the raft thread sleeps without looking at its timers.
const MAX_SLEEP_MS: u64 = 100;

/// What the raft thread reacts to.
#[derive(Debug)]
pub enum Event {
    /// A Raft request from a connection; the answer goes to `reply`.
    Request {
        /// The request (boxed: its sender strings make it the largest event by far).
        request: Box<InboundRequest>,
        /// Where the answer goes.
        reply: oneshot::Sender<ResponseBody>,
        /// When the handler queued it (for `EventQueueTimeMs`).
        queued_at: Instant,
    },
    /// The outcome of a request the core sent.
    Response(PeerResponse),
    /// Start a graceful shutdown bounded by `timeout_ms`.
    Shutdown {
        /// Bound on the shutdown.
        timeout_ms: u64,
    },
    /// The snapshot writer thread finished: the frozen file's size, or why it failed.
    SnapshotWritten {
        /// The snapshot.
        id: SnapshotId,
        /// Its size in bytes, or the error.
        result: Result<u64, String>,
    },
}

/// What the rest of the node may know of the Raft state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Status {
    /// Current epoch.
    pub epoch: i32,
    /// Known leader.
    pub leader_id: Option<i32>,
    /// Kafka's `current-state` value.
    pub state: &'static str,
    /// Known high watermark.
    pub high_watermark: Option<i64>,
    /// The voters in effect (static, or from voter records).
    pub voters: crate::raft::types::VoterSet,
    /// The Raft layer's kraft.version (Kafka's controller lists it among the finalized
    /// features of its ApiVersions answer, read live from the Raft client).
    pub kraft_version: i16,
    /// The committed metadata.version level, once known.
    pub metadata_version: Option<i16>,
    /// Registered controllers (KIP-919) in the committed metadata.
    pub controllers: BTreeMap<i32, ControllerRegistration>,
    /// Finalized features (metadata.version included) in the committed metadata.
    pub finalized_features: BTreeMap<String, i16>,
    /// Offset of the committed image when the finalized features last changed (-1: none).
    pub finalized_features_epoch: i64,
    /// SCRAM credentials in the committed metadata, by (mechanism id, user), for SASL/SCRAM
    /// listeners (shared: copied only when they change).
    pub scram: Arc<BTreeMap<(i8, String), crate::metadata::records::UserScramCredentialRecord>>,
    /// ACLs in the committed metadata, for the checks the handler makes itself
    /// (DescribeCluster); shared, copied only when they change.
    pub acls: Arc<BTreeMap<uuid::Uuid, crate::metadata::records::AccessControlEntryRecord>>,
    /// Delegation tokens in the committed metadata, by token id, for SCRAM token
    /// authentication (`tokenauth=true`); shared, copied only when they change.
    pub delegation_tokens: Arc<BTreeMap<String, crate::metadata::records::DelegationTokenRecord>>,
}

/// The async side's handle on the raft thread.
#[derive(Debug, Clone)]
pub struct RaftHandle {
    events: SyncSender<Event>,
    /// Shared status, updated by the raft thread.
    pub status: Arc<Mutex<Status>>,
    /// Raft metrics, updated by the raft thread.
    pub metrics: Arc<Mutex<RaftMetrics>>,
    /// The controller's authorizer (`authorizer.class.name`), for the checks the handler
    /// makes itself.
    pub authorizer: Option<Arc<crate::metadata::authorizer::AuthorizerConfig>>,
    /// `delegation.token.secret.key` and the token lifetimes, for token authentication.
    pub delegation_tokens: Option<Arc<crate::controller::delegation_tokens::DelegationTokenConfig>>,
}

impl RaftHandle {
    /// Queues an event; false when the queue is full or the thread is gone.
    pub fn try_send(&self, event: Event) -> bool {
        match self.events.try_send(event) {
            Ok(()) => true,
            Err(TrySendError::Full(_)) => {
                tracing::warn!("raft event queue full; refusing an event");
                false
            }
            Err(TrySendError::Disconnected(_)) => false,
        }
    }

    /// A copy of the current status.
    pub fn status(&self) -> Status {
        self.status.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

/// Why the raft thread stopped.
#[derive(Debug, thiserror::Error)]
pub enum DriverError {
    /// A write to disk failed. Everything below `durable_end` had been fsynced (and
    /// acknowledged where it counts); what came after may be lost.
    #[error("storage failure (the log is durable below offset {durable_end}): {source}")]
    Store {
        /// The failure.
        source: StoreError,
        /// The log's flushed offset when it happened.
        durable_end: i64,
    },
    /// The node state machine stopped (a Raft invariant, an unreadable committed log).
    #[error(transparent)]
    Machine(#[from] MachineError),
}

#[allow(clippy::disallowed_methods)] // the driver is the one place that reads the clock
fn monotonic_now() -> Instant {
    Instant::now()
}

#[allow(clippy::disallowed_methods)] // the driver is the one place that reads the clock
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Starts the raft thread. `runtime` runs the outbound peer connections.
#[allow(clippy::too_many_arguments)]
pub fn spawn(
    core: RaftCore,
    store: RaftStore,
    registrations: Registrations,
    controller: QuorumController,
    peer_config: PeerConfig,
    workload: Workload,
    settings: MetadataLogSettings,
    runtime: tokio::runtime::Handle,
) -> std::io::Result<(RaftHandle, JoinHandle<Result<(), DriverError>>)> {
    let (tx, rx) = std::sync::mpsc::sync_channel(EVENT_QUEUE_DEPTH);
    let status = Arc::new(Mutex::new(Status::default()));
    let metrics = Arc::new(Mutex::new(RaftMetrics::default()));
    let handle = RaftHandle {
        events: tx.clone(),
        status: status.clone(),
        metrics: metrics.clone(),
        authorizer: controller.config().authorizer.clone().map(Arc::new),
        delegation_tokens: controller.config().delegation_tokens.clone().map(Arc::new),
    };
    let thread = std::thread::Builder::new().name("raft".into()).spawn(move || {
        let _enter = runtime.enter();
        let sink_tx = tx.clone();
        let sink = Arc::new(move |r: PeerResponse| {
            // Disconnected: the raft thread has stopped (shutdown), nothing waits for the
            // answer; only a full queue loses one that is waited for.
            if let Err(TrySendError::Full(_)) = sink_tx.try_send(Event::Response(r)) {
                tracing::warn!("raft event queue full; dropping a peer response (the request will time out)");
            }
        });
        // Registration gets its own connections, as Kafka's registration channel manager has:
        // the leader answers it only after commit, and on the Raft connection that answer
        // would hold back this node's next Fetch, which the commit may need.
        let registration_peers = Peers::new(
            PeerConfig {
                client_id: format!("{}-registration", peer_config.client_id),
                channel: None,
                ..peer_config.clone()
            },
            sink.clone(),
        );
        let peers = Peers::new(peer_config, sink);
        let mut driver = Driver {
            machine: NodeMachine::new(core, controller, registrations, &settings, now_ms()),
            store,
            registration_peers,
            peers,
            pending: HashMap::new(),
            status,
            pacer: Pacer::new(workload),
            workload_stats: CommitStats::new(workload.record_bytes),
            clock_base: monotonic_now(),
            next_clean_ms: now_ms() + CLEAN_INTERVAL_MS,
            settings,
            events: tx.clone(),
            shutdown_done: false,
            metrics,
            uncommitted: VecDeque::new(),
            leaderless_since_ms: None,
            sent_to: HashMap::new(),
            failed_voters: BTreeSet::new(),
            gauges_at: (-1, false),
        };
        driver.run(rx)
    })?;
    Ok((handle, thread))
}

struct Driver {
    /// Raft core + controller: every decision.
    machine: NodeMachine,
    store: RaftStore,
    registration_peers: Peers,
    peers: Peers,
    pending: HashMap<u64, oneshot::Sender<ResponseBody>>,
    status: Arc<Mutex<Status>>,
    pacer: Pacer,
    /// Commit latency and throughput of the workload (benchmark output).
    workload_stats: CommitStats,
    /// Origin of `now_us` (monotonic).
    clock_base: Instant,
    /// Metadata log settings (snapshots, retention, NoOp cadence, bootstrap).
    settings: MetadataLogSettings,
    /// When the log cleaner runs next.
    next_clean_ms: u64,
    /// For the snapshot writer thread's completion event.
    events: SyncSender<Event>,
    shutdown_done: bool,
    metrics: Arc<Mutex<RaftMetrics>>,
    /// Leader batches not yet committed: (last offset, append time) for commit latency.
    uncommitted: VecDeque<(i64, u64)>,
    /// When the node last lost track of a leader (election latency).
    leaderless_since_ms: Option<u64>,
    /// Destination of each request in flight (for unknown-voter-connection counting).
    sent_to: HashMap<u64, i32>,
    /// Voters whose last request failed to connect or answer.
    failed_voters: BTreeSet<i32>,
    /// (image offset, active) the controller gauges were last computed at.
    gauges_at: (i64, bool),
}

impl Driver {
    fn run(&mut self, rx: Receiver<Event>) -> Result<(), DriverError> {
        // The image starts from the latest snapshot; the log is replayed as the high watermark
        // becomes known (Kafka's MetadataLoader also waits for it).
        let started = self.machine.start(now_ms(), &mut self.store);
        self.checked(started)?;
        tracing::info!(
            "Controller incarnation id {}",
            self.machine.incarnation_id()
        );
        loop {
            let now = now_ms();
            let mut sleep = self
                .machine
                .poll_timeout()
                .map_or(MAX_SLEEP_MS, |t| t.saturating_sub(now))
                .min(MAX_SLEEP_MS);
            if self.pacer.active() && self.machine.core().state_name() == "leader" {
                sleep = sleep.min(5);
            }
            let waited = monotonic_now();
            let received = rx.recv_timeout(Duration::from_millis(sleep));
            let idle_ms = waited.elapsed().as_secs_f64() * 1000.0;
            let busy_started = monotonic_now();
            match received {
                Ok(Event::Request {
                    request,
                    reply,
                    queued_at,
                }) => {
                    self.pending.insert(request.request_id, reply);
                    let queued_ms = busy_started
                        .saturating_duration_since(queued_at)
                        .as_secs_f64()
                        * 1000.0;
                    let controller_api =
                        crate::codec::apis::is_controller_api(request.body.api_key());
                    let result = self
                        .machine
                        .handle_request(now_ms(), &mut self.store, *request);
                    if controller_api {
                        // Kafka's EventQueueProcessingTimeMs: how long the event ran.
                        let ms = busy_started.elapsed().as_secs_f64() * 1000.0;
                        self.with_metrics(|m, _| {
                            let at = crate::network::stats::monotonic_s();
                            m.controller_event_ms.update(ms, at);
                            m.event_queue_ms.update(queued_ms, at);
                        });
                    }
                    self.checked(result)?;
                }
                Ok(Event::Response(r)) => {
                    if let Some(dest) = self.sent_to.remove(&r.correlation_id) {
                        if matches!(
                            r.result,
                            crate::raft::ResponseResult::Failed
                                | crate::raft::ResponseResult::AuthenticationFailed
                        ) {
                            self.failed_voters.insert(dest);
                        } else {
                            self.failed_voters.remove(&dest);
                        }
                    }
                    let result = self.machine.handle_response(
                        now_ms(),
                        &mut self.store,
                        r.correlation_id,
                        r.result,
                    );
                    self.checked(result)?;
                }
                Ok(Event::Shutdown { timeout_ms }) => {
                    tracing::info!("Beginning graceful shutdown of the raft client");
                    let result = self
                        .machine
                        .begin_shutdown(now_ms(), &mut self.store, timeout_ms);
                    self.checked(result)?;
                }
                Ok(Event::SnapshotWritten { id, result }) => self.snapshot_written(id, result)?,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            }
            let polled = self.machine.poll(now_ms(), &mut self.store);
            self.checked(polled)?;
            self.run_workload()?;
            self.run_log_cleaner()?;
            let busy_ms = busy_started.elapsed().as_secs_f64() * 1000.0;
            self.update_metrics(idle_ms, busy_ms);
            if let Some(e) = self.machine.fatal_error() {
                return Err(e.into());
            }
            if self.shutdown_done {
                self.store.flush().map_err(|e| self.storage_failure(e))?;
                return Ok(());
            }
        }
    }

    /// A machine call's store failure stops the node; otherwise its outputs are carried out.
    fn checked(&mut self, result: Result<(), StoreError>) -> Result<(), DriverError> {
        result.map_err(|e| self.storage_failure(e))?;
        self.carry_out_outputs()
    }

    fn run_workload(&mut self) -> Result<(), DriverError> {
        if !self.pacer.active() || !self.machine.is_active_controller() {
            return Ok(());
        }
        let room = MAX_PENDING_RECORDS.saturating_sub(self.workload_stats.pending_records());
        let due = self.pacer.due(now_ms(), room);
        if due == 0 {
            return Ok(());
        }
        let record = no_op_record(self.pacer.record_bytes());
        // One proposal is one batch at most; a large due count becomes several.
        let per_proposal = crate::raft::max_records_per_proposal(record.len()) as u64;
        let mut left = due;
        while left > 0 {
            let n = left.min(per_proposal);
            left -= n;
            let records: Vec<Bytes> = (0..n).map(|_| record.clone()).collect();
            let proposed_us = self.now_us();
            let proposed = self.machine.propose(now_ms(), &mut self.store, records);
            match proposed {
                Ok(Some(last)) => self.workload_stats.proposed(last, n, proposed_us),
                Ok(None) => {}
                Err(e) => return Err(self.storage_failure(e)),
            }
            self.carry_out_outputs()?;
        }
        if let Some(summary) = self.workload_stats.summary_due(self.now_us()) {
            tracing::info!("Workload: {summary}");
        }
        Ok(())
    }

    /// Microseconds on the monotonic clock since the driver started.
    fn now_us(&self) -> u64 {
        self.clock_base.elapsed().as_micros() as u64
    }

    /// Copies what the handler needs from the image into the shared status.
    fn publish_image(&self) {
        let image = self.machine.committed_image();
        if let Ok(mut s) = self.status.lock() {
            s.metadata_version = image.metadata_version();
            if s.controllers != image.controllers {
                s.controllers = image.controllers.clone();
            }
            if *s.scram != image.scram {
                s.scram = Arc::new(image.scram.clone());
            }
            if *s.acls != image.acls {
                s.acls = Arc::new(image.acls.clone());
            }
            if *s.delegation_tokens != image.delegation_tokens {
                s.delegation_tokens = Arc::new(image.delegation_tokens.clone());
            }
            if s.finalized_features != image.features {
                s.finalized_features = image.features.clone();
                s.finalized_features_epoch = image.next_offset - 1;
            }
        }
    }

    fn with_metrics(&self, f: impl FnOnce(&mut RaftMetrics, u64)) {
        if let Ok(mut m) = self.metrics.lock() {
            if !m.recording {
                return;
            }
            let now = now_ms();
            f(&mut m, now);
        }
    }

    #[inline(never)] // so that a profile shows what the metrics cost
    fn update_metrics(&mut self, idle_ms: f64, busy_ms: f64) {
        let now = now_ms();
        let core = self.machine.core();
        let end = crate::raft::LogReader::end_offset(&self.store);
        if let Ok(mut s) = self.status.lock() {
            if &s.voters != core.voters() {
                s.voters = core.voters().clone();
            }
            s.kraft_version = core.kraft_version();
        }
        if !self.metrics.lock().is_ok_and(|m| m.recording) {
            return;
        }
        let c = self.machine.controller();
        let applied = c
            .speculative_image()
            .unwrap_or(c.committed_image())
            .next_offset;
        let moved = applied != self.gauges_at.0;
        let became_active = c.is_active() && !self.gauges_at.1;
        let gauges = if (applied, c.is_active()) != self.gauges_at {
            self.gauges_at = (applied, c.is_active());
            Some(super::controller_metrics::ControllerGauges::of(c))
        } else {
            None
        };
        let Ok(mut m) = self.metrics.lock() else {
            return;
        };
        if let Some(g) = gauges {
            m.controller = g;
        }
        if moved {
            m.last_applied_at_ms = Some(now);
        }
        m.new_active_controllers += u64::from(became_active);
        m.number_of_voters = core.voters().len();
        (m.number_of_observers, m.uncommitted_voter_change) = match core.role() {
            crate::raft::Role::Leader(l) => (
                l.observers.len(),
                l.add_voter.is_some() || l.remove_voter.is_some(),
            ),
            _ => (0, false),
        };
        m.now_ms = now;
        m.latest_snapshot_at_ms.get_or_insert(now);
        m.current_state = core.state_name();
        m.current_leader = core.leader_id().unwrap_or(-1);
        m.current_vote = core.voted_id().unwrap_or(-1);
        m.current_epoch = core.epoch();
        m.high_watermark = core.high_watermark().unwrap_or(-1);
        m.log_end_offset = end.offset;
        m.log_end_epoch = end.epoch;
        m.unknown_voter_connections = self.failed_voters.len();
        let total = idle_ms + busy_ms;
        if total > 0.0 {
            m.poll_idle_ratio.record(now, idle_ms / total);
        }
        let ns = |ms: f64| (ms * 1e6) as u64;
        m.thread_ns.0 += ns(idle_ms);
        m.thread_ns.1 += ns(total);
        // Overwritten in place (an insert over a present key allocates nothing; this runs
        // every loop), then voters no longer in the set dropped.
        let voters = core.voter_progress().unwrap_or_default();
        for r in &voters {
            let records = r.end_offset.map_or(end.offset, |o| (end.offset - o).max(0));
            let ms = r
                .last_caught_up_ms
                .map_or(-1, |t| now.saturating_sub(t) as i64);
            m.voter_lag.insert(r.key.id, VoterLag { records, ms });
        }
        if m.voter_lag.len() != voters.len() {
            m.voter_lag
                .retain(|id, _| voters.iter().any(|r| r.key.id == *id));
        }
    }

    /// A store failure stops the node, reporting how much of the log is durable.
    fn storage_failure(&self, source: StoreError) -> DriverError {
        let durable_end = self.store.flushed_offset();
        DriverError::Store {
            source,
            durable_end,
        }
    }

    /// Carries out every output the machine has queued, in order.
    fn carry_out_outputs(&mut self) -> Result<(), DriverError> {
        while let Some(output) = self.machine.poll_output() {
            self.carry_out(output)?;
        }
        Ok(())
    }

    /// Carries out one output: network, reply channels, status, metrics, snapshot files.
    fn carry_out(&mut self, output: NodeOutput) -> Result<(), DriverError> {
        match output {
            NodeOutput::Send {
                correlation_id,
                destination,
                request,
            } => {
                self.sent_to.insert(correlation_id, destination.node_id);
                self.peers.send(PeerRequest {
                    correlation_id,
                    destination,
                    request,
                })
            }
            NodeOutput::SendRegistration {
                correlation_id,
                destination,
                request,
            } => self.registration_peers.send(PeerRequest {
                correlation_id,
                destination,
                request,
            }),
            NodeOutput::Respond { request_id, body } => {
                if let Some(reply) = self.pending.remove(&request_id) {
                    let _ = reply.send(body);
                }
            }
            NodeOutput::Appended {
                as_leader,
                records,
                last_offset,
            } => {
                if as_leader {
                    self.uncommitted.push_back((last_offset, now_ms()));
                    self.with_metrics(|m, now| m.append_records.record(now, records as f64));
                } else {
                    self.with_metrics(|m, now| m.fetch_records.record(now, records as f64));
                }
            }
            NodeOutput::HighWatermark(hw) => {
                if let Ok(mut s) = self.status.lock() {
                    s.high_watermark = Some(hw);
                }
                if self.pacer.active() {
                    let now_us = self.now_us();
                    self.workload_stats.committed(hw, now_us);
                }
                let now = now_ms();
                let mut latencies = Vec::new();
                while self.uncommitted.front().is_some_and(|(last, _)| *last < hw) {
                    if let Some((_, appended)) = self.uncommitted.pop_front() {
                        latencies.push(now.saturating_sub(appended) as f64);
                    }
                }
                self.with_metrics(|m, now| {
                    for l in latencies {
                        m.commit_latency_ms.record(now, l);
                    }
                });
            }
            NodeOutput::RoleChanged {
                epoch,
                leader_id,
                state,
            } => {
                let high_watermark = self.machine.core().high_watermark();
                if let Ok(mut s) = self.status.lock() {
                    s.epoch = epoch;
                    s.leader_id = leader_id;
                    s.state = state;
                    if state != "leader" {
                        s.high_watermark = high_watermark;
                    }
                }
                if state == "leader" {
                    self.pacer.reset();
                } else {
                    self.uncommitted.clear();
                    self.workload_stats.resigned();
                }
                let now = now_ms();
                match (leader_id, self.leaderless_since_ms) {
                    (None, None) => self.leaderless_since_ms = Some(now),
                    (Some(_), Some(since)) => {
                        self.leaderless_since_ms = None;
                        self.with_metrics(|m, now| {
                            m.election_latency_ms
                                .record(now, now.saturating_sub(since) as f64)
                        });
                    }
                    _ => {}
                }
            }
            NodeOutput::ImageChanged => self.publish_image(),
            NodeOutput::WriteSnapshot {
                id,
                header,
                image,
                reason,
            } => self.start_snapshot(id, header, image, &reason),
            NodeOutput::SnapshotSkipped { why, error } => {
                if error {
                    tracing::error!("{why}");
                } else {
                    tracing::info!("{why}");
                }
            }
            NodeOutput::SetLogLevels { levels, changes } => apply_log_levels(&levels, &changes),
            NodeOutput::ShutdownComplete => self.shutdown_done = true,
        }
        Ok(())
    }
}

/// Makes `levels` the process's log filter, then logs each change as Kafka's
/// `RuntimeLoggerManager` does (WARN on success, ERROR when the filter could not change).
fn apply_log_levels(levels: &crate::logging::LogLevels, changes: &[LoggerChange]) {
    let applied = crate::logging::apply(levels);
    for c in changes {
        match (&applied, c.level) {
            (Ok(()), Some(level)) => {
                tracing::warn!("Updated the log level of {} to {level}", c.name)
            }
            (Ok(()), None) => tracing::warn!("Unset the log level of {}", c.name),
            (Err(e), Some(level)) => tracing::error!(
                "Failed to update the log level of {} to {level}: {e}",
                c.name
            ),
            (Err(e), None) => {
                tracing::error!("Failed to unset the log level of {}: {e}", c.name)
            }
        }
    }
}
