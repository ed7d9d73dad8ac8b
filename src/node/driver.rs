//! The driver: the only code that reads the clock. It owns the Raft core and its store on a
//! dedicated thread, feeds it events, and carries out its outputs in order — each write
//! (quorum-state, append, truncate, fsync) completes before the next output, so no response or
//! request leaves before the write it depends on is durable (Kafka does the same on its raft
//! thread). The async side talks to it through a bounded queue.
//!
//! ```text
//!   connections ─Event::Request─┐
//!   peers ──────Event::Response─┼─▶ raft thread: core.handle_*(now) ─▶ outputs in order:
//!   signals ────Event::Shutdown─┘      persist / append / truncate / flush (blocking, fsync)
//!                                      Send ─▶ peers      Respond ─▶ the waiting connection
//! ```

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::sync::oneshot;

use super::commit_stats::CommitStats;
use super::metrics::{RaftMetrics, VoterLag};
use super::registration::{OwnAction, Registrations};
use super::snapshots::{MetadataLogSettings, SnapshotGenerator, CLEAN_INTERVAL_MS};
use super::store::{RaftStore, StoreError};
use super::workload::{
    no_op_record, IdleNoOps, Pacer, Workload, IDLE_NO_OP_RECORD, MAX_PENDING_RECORDS,
};
use crate::codec::{RequestBody, ResponseBody};
use crate::controller::{ControllerOutput, MetadataAppender, QuorumController};
use crate::metadata::controller::ControllerRegistration;
use crate::network::peers::{PeerConfig, PeerRequest, PeerResponse, Peers};
use crate::raft::{InboundRequest, Output, ProposeError, RaftCore, RaftError};
use crate::snapshot::SnapshotId;

mod metadata;

/// Events queued for the raft thread before producers see "busy".
const EVENT_QUEUE_DEPTH: usize = 4096;
/// Longest the raft thread sleeps without looking at its timers.
const MAX_SLEEP_MS: u64 = 100;

/// What the raft thread reacts to.
#[derive(Debug)]
pub enum Event {
    /// A Raft request from a connection; the answer goes to `reply`.
    Request {
        /// The request.
        request: InboundRequest,
        /// Where the answer goes.
        reply: oneshot::Sender<ResponseBody>,
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
    /// The committed metadata.version level, once known.
    pub metadata_version: Option<i16>,
    /// Registered controllers (KIP-919) in the committed metadata.
    pub controllers: BTreeMap<i32, ControllerRegistration>,
    /// Finalized features (metadata.version included) in the committed metadata.
    pub finalized_features: BTreeMap<String, i16>,
    /// Offset of the committed image when the finalized features last changed (-1: none).
    pub finalized_features_epoch: i64,
}

/// The async side's handle on the raft thread.
#[derive(Debug, Clone)]
pub struct RaftHandle {
    events: SyncSender<Event>,
    /// Shared status, updated by the raft thread.
    pub status: Arc<Mutex<Status>>,
    /// Raft metrics, updated by the raft thread.
    pub metrics: Arc<Mutex<RaftMetrics>>,
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
    /// The core stopped on a protocol invariant.
    #[error("raft failure: {0}")]
    Raft(#[from] RaftError),
    /// The controller could not go on (an unreadable committed log).
    #[error("controller failure: {0}")]
    Controller(String),
}

#[allow(clippy::disallowed_methods)] // the driver is the one place that reads the clock
fn monotonic_now() -> Instant {
    Instant::now()
}

/// Records in `batches` and the last offset they hold.
fn count_records(batches: &[u8]) -> (u64, i64) {
    let mut count = 0u64;
    let mut last = -1;
    // The core built or checked these batches before handing them out.
    for (_, batch) in crate::records::framer::BatchFramer::trusted(batches) {
        count += u64::try_from(batch.record_count()).unwrap_or(0);
        last = batch.last_offset();
    }
    (count, last)
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
    };
    let thread = std::thread::Builder::new().name("raft".into()).spawn(move || {
        let _enter = runtime.enter();
        let sink_tx = tx.clone();
        let sink = Arc::new(move |r: PeerResponse| {
            if sink_tx.try_send(Event::Response(r)).is_err() {
                tracing::warn!("raft event queue full; dropping a peer response (the request will time out)");
            }
        });
        // Registration gets its own connections, as Kafka's registration channel manager has:
        // the leader answers it only after commit, and on the Raft connection that answer
        // would hold back this node's next Fetch, which the commit may need.
        let registration_peers = Peers::new(
            PeerConfig {
                client_id: format!("{}-registration", peer_config.client_id),
                ..peer_config.clone()
            },
            sink.clone(),
        );
        let peers = Peers::new(peer_config, sink);
        let mut driver = Driver {
            core,
            store,
            registrations,
            controller: Some(controller),
            role_events: Vec::new(),
            registration_peers,
            peers,
            pending: HashMap::new(),
            status,
            pacer: Pacer::new(workload),
            workload_stats: CommitStats::new(workload.record_bytes),
            clock_base: monotonic_now(),
            idle_no_ops: IdleNoOps::new(settings.max_idle_interval_ms),
            snapshot_generator: SnapshotGenerator::new(&settings, now_ms()),
            next_clean_ms: now_ms() + CLEAN_INTERVAL_MS,
            settings,
            events: tx.clone(),
            shutdown_done: false,
            metrics,
            uncommitted: VecDeque::new(),
            leaderless_since_ms: None,
            sent_to: HashMap::new(),
            failed_voters: BTreeSet::new(),
            image_due: None,
            gauges_at: (-1, false),
            fatal: None,
        };
        driver.run(rx)
    })?;
    Ok((handle, thread))
}

struct Driver {
    core: RaftCore,
    store: RaftStore,
    registrations: Registrations,
    /// The controller layer (taken out while it runs, so it can append through the driver).
    controller: Option<QuorumController>,
    /// Leadership changes the core announced, for the controller (epoch, leader, leading).
    role_events: Vec<(i32, Option<i32>, bool)>,
    registration_peers: Peers,
    peers: Peers,
    pending: HashMap<u64, oneshot::Sender<ResponseBody>>,
    status: Arc<Mutex<Status>>,
    pacer: Pacer,
    /// Commit latency and throughput of the workload (benchmark output).
    workload_stats: CommitStats,
    /// Origin of `now_us` (monotonic).
    clock_base: Instant,
    idle_no_ops: IdleNoOps,
    /// Metadata log settings (snapshots, retention, NoOp cadence, bootstrap).
    settings: MetadataLogSettings,
    snapshot_generator: SnapshotGenerator,
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
    /// The high watermark the image has to catch up to, once this round's requests are out.
    image_due: Option<i64>,
    /// (image offset, active) the controller gauges were last computed at.
    gauges_at: (i64, bool),
    /// A failure found outside the core (the controller's replay): the node stops.
    fatal: Option<DriverError>,
}

impl Driver {
    fn run(&mut self, rx: Receiver<Event>) -> Result<(), DriverError> {
        // The image starts from the latest snapshot; the log is replayed as the high watermark
        // becomes known (Kafka's MetadataLoader also waits for it).
        self.catch_up_image(0);
        tracing::info!(
            "Controller incarnation id {}",
            self.registrations.incarnation_id()
        );
        self.carry_out_outputs()?;
        loop {
            let now = now_ms();
            let controller_timeout = self.controller.as_ref().and_then(|c| c.poll_timeout());
            let mut sleep = [self.core.poll_timeout(), controller_timeout]
                .into_iter()
                .flatten()
                .min()
                .map_or(MAX_SLEEP_MS, |t| t.saturating_sub(now))
                .min(MAX_SLEEP_MS);
            if self.pacer.active() && self.status_state() == "leader" {
                sleep = sleep.min(5);
            }
            let waited = monotonic_now();
            let received = rx.recv_timeout(Duration::from_millis(sleep));
            let idle_ms = waited.elapsed().as_secs_f64() * 1000.0;
            let busy_started = monotonic_now();
            match received {
                Ok(Event::Request { request, reply }) => {
                    self.pending.insert(request.request_id, reply);
                    if crate::controller::serves(request.body.api_key()) {
                        self.with_controller(|c, a| c.handle_request(a.now_ms, a, request))?;
                    } else {
                        self.core.handle_request(now_ms(), &self.store, request);
                    }
                }
                Ok(Event::Response(r))
                    if self.registrations.is_own_correlation(r.correlation_id) =>
                {
                    let error = match r.result {
                        crate::raft::ResponseResult::Answered(
                            ResponseBody::ControllerRegistration(resp),
                        ) if resp.error_code == 0 => None,
                        crate::raft::ResponseResult::Answered(
                            ResponseBody::ControllerRegistration(resp),
                        ) => Some((
                            resp.error_code,
                            resp.error_message
                                .map(|m| m.to_string())
                                .unwrap_or_default(),
                        )),
                        other => Some((-1, format!("{other:?}"))),
                    };
                    self.registrations
                        .own_response(now_ms(), r.correlation_id, error);
                }
                Ok(Event::Response(r)) => {
                    if let Some(dest) = self.sent_to.remove(&r.correlation_id) {
                        if matches!(r.result, crate::raft::ResponseResult::Failed) {
                            self.failed_voters.insert(dest);
                        } else {
                            self.failed_voters.remove(&dest);
                        }
                    }
                    self.core
                        .handle_response(now_ms(), &self.store, r.correlation_id, r.result)
                }
                Ok(Event::Shutdown { timeout_ms }) => {
                    tracing::info!("Beginning graceful shutdown of the raft client");
                    self.core.begin_shutdown(now_ms(), &self.store, timeout_ms);
                }
                Ok(Event::SnapshotWritten { id, result }) => self.snapshot_written(id, result)?,
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            }
            self.carry_out_outputs()?;
            let now = now_ms();
            if self.core.poll_timeout().is_some_and(|t| t <= now) {
                self.core.handle_timeout(now, &self.store);
                self.carry_out_outputs()?;
            }
            self.process_role_events()?;
            self.with_controller(|c, a| c.poll(a.now_ms, a))?;
            self.run_workload()?;
            self.run_idle_no_op()?;
            self.run_own_registration()?;
            self.run_log_cleaner()?;
            self.catch_up_image_due()?;
            let busy_ms = busy_started.elapsed().as_secs_f64() * 1000.0;
            self.update_metrics(idle_ms, busy_ms);
            if let Some(e) = self.core.fatal_error() {
                return Err(DriverError::Raft(e.clone()));
            }
            if let Some(e) = self.fatal.take() {
                return Err(e);
            }
            if self.shutdown_done {
                self.store.flush().map_err(|e| self.storage_failure(e))?;
                return Ok(());
            }
        }
    }

    fn status_state(&self) -> &'static str {
        self.status.lock().map(|s| s.state).unwrap_or("unattached")
    }

    /// Leader and activated: Kafka's controller writes nothing (and accepts no registration)
    /// before its activation records.
    fn active_controller(&self) -> bool {
        self.core.state_name() == "leader"
            && self.controller.as_ref().is_some_and(|c| c.is_active())
    }

    /// The committed metadata image.
    fn image(&self) -> &crate::metadata::image::MetadataImage {
        static EMPTY: std::sync::OnceLock<crate::metadata::image::MetadataImage> =
            std::sync::OnceLock::new();
        match &self.controller {
            Some(c) => c.committed_image(),
            None => EMPTY.get_or_init(crate::metadata::image::MetadataImage::new),
        }
    }

    /// Runs `f` on the controller with an appender over the Raft core, then carries out what
    /// it asked for (answers, own registration results) and the leadership changes its
    /// appends caused.
    fn with_controller(
        &mut self,
        f: impl FnOnce(&mut QuorumController, &mut DriverAppender<'_>),
    ) -> Result<(), DriverError> {
        let Some(mut controller) = self.controller.take() else {
            return Ok(());
        };
        let mut appender = DriverAppender {
            now_ms: now_ms(),
            driver: self,
            failure: None,
        };
        let started = monotonic_now();
        f(&mut controller, &mut appender);
        let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
        let failure = appender.failure.take();
        self.controller = Some(controller);
        self.with_metrics(|m, now| m.controller_event_ms.record(now, elapsed_ms));
        if let Some(e) = failure {
            return Err(self.storage_failure(e));
        }
        self.drain_controller_outputs();
        self.process_role_events()
    }

    /// Hands the controller's answers to the waiting connections (or to our own
    /// registration).
    fn drain_controller_outputs(&mut self) {
        let Some(controller) = self.controller.as_mut() else {
            return;
        };
        let mut outputs = Vec::new();
        while let Some(o) = controller.poll_output() {
            outputs.push(o);
        }
        for o in outputs {
            let ControllerOutput::Respond { request_id, body } = o;
            if self.registrations.is_own_correlation(request_id) {
                let error = match &body {
                    ResponseBody::ControllerRegistration(r) if r.error_code == 0 => None,
                    ResponseBody::ControllerRegistration(r) => Some((
                        r.error_code,
                        r.error_message
                            .as_ref()
                            .map(|m| m.to_string())
                            .unwrap_or_default(),
                    )),
                    other => Some((-1, format!("{other:?}"))),
                };
                self.registrations.own_response(now_ms(), request_id, error);
                continue;
            }
            if let Some(reply) = self.pending.remove(&request_id) {
                let _ = reply.send(body);
            }
        }
    }

    /// Tells the controller of the leadership changes the core announced. Losing leadership
    /// first answers what committed before it, as committed.
    fn process_role_events(&mut self) -> Result<(), DriverError> {
        if self.role_events.is_empty() || self.controller.is_none() {
            return Ok(());
        }
        let events = std::mem::take(&mut self.role_events);
        for (epoch, leader_id, leading) in events {
            if !leading {
                if let Some(hw) = self.image_due.take() {
                    self.apply_committed(hw);
                }
            }
            let epoch_start = if leading {
                self.core.epoch_start_offset()
            } else {
                None
            };
            if let Some(c) = self.controller.as_mut() {
                c.handle_leader_change(epoch, leader_id, epoch_start);
            }
        }
        self.drain_controller_outputs();
        Ok(())
    }

    fn run_workload(&mut self) -> Result<(), DriverError> {
        if !self.pacer.active() || !self.active_controller() {
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
            if let Some(last) = self.core.propose(now_ms(), &self.store, records) {
                self.workload_stats.proposed(last, n, proposed_us);
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

    /// Registers this controller when the committed metadata does not hold it yet.
    fn run_own_registration(&mut self) -> Result<(), DriverError> {
        let now = now_ms();
        let is_leader = self.core.state_name() == "leader";
        if is_leader && !self.active_controller() {
            // A leader that has not activated yet registers once it has (not with itself).
            return Ok(());
        }
        let leader = self.core.leader_destination();
        let image = match &self.controller {
            Some(c) => c.committed_image(),
            None => return Ok(()),
        };
        match self.registrations.own_action(now, image, is_leader, leader) {
            OwnAction::None => Ok(()),
            OwnAction::Local {
                correlation_id,
                request,
            } => {
                let request = InboundRequest {
                    request_id: correlation_id,
                    api_version: 0,
                    listener_name: String::new(),
                    body: RequestBody::ControllerRegistration(request),
                };
                self.with_controller(|c, a| c.handle_request(a.now_ms, a, request))
            }
            OwnAction::Send {
                correlation_id,
                destination,
                request,
            } => {
                self.registration_peers.send(PeerRequest {
                    correlation_id,
                    destination,
                    request: RequestBody::ControllerRegistration(request),
                });
                Ok(())
            }
        }
    }

    /// Copies what the handler needs from the image into the shared status.
    fn publish_image(&self) {
        let image = self.image();
        if let Ok(mut s) = self.status.lock() {
            s.metadata_version = image.metadata_version();
            if s.controllers != image.controllers {
                s.controllers = image.controllers.clone();
            }
            if s.finalized_features != image.features {
                s.finalized_features = image.features.clone();
                s.finalized_features_epoch = image.next_offset - 1;
            }
        }
    }

    /// An active controller's periodic NoOpRecord (once the image knows metadata.version, as
    /// Kafka's controller is active only after loading the log).
    fn run_idle_no_op(&mut self) -> Result<(), DriverError> {
        let now = now_ms();
        let active = self.active_controller() && self.image().metadata_version().is_some();
        if self.idle_no_ops.due(now, active) {
            self.core.propose(
                now,
                &self.store,
                vec![Bytes::from_static(&IDLE_NO_OP_RECORD)],
            );
            self.carry_out_outputs()?;
        }
        Ok(())
    }

    fn with_metrics(&self, f: impl FnOnce(&mut RaftMetrics, u64)) {
        if let Ok(mut m) = self.metrics.lock() {
            let now = now_ms();
            f(&mut m, now);
        }
    }

    fn update_metrics(&mut self, idle_ms: f64, busy_ms: f64) {
        let now = now_ms();
        let end = crate::raft::LogReader::end_offset(&self.store);
        let progress = self.core.voter_progress();
        if let Ok(mut s) = self.status.lock() {
            if &s.voters != self.core.voters() {
                s.voters = self.core.voters().clone();
            }
        }
        let gauges_due = self.controller.as_ref().is_some_and(|c| {
            let applied = c
                .speculative_image()
                .unwrap_or(c.committed_image())
                .next_offset;
            (applied, c.is_active()) != self.gauges_at
        });
        let gauges = if gauges_due {
            self.controller.as_ref().map(|c| {
                let applied = c
                    .speculative_image()
                    .unwrap_or(c.committed_image())
                    .next_offset;
                self.gauges_at = (applied, c.is_active());
                super::controller_metrics::ControllerGauges::of(c)
            })
        } else {
            None
        };
        let Ok(mut m) = self.metrics.lock() else {
            return;
        };
        if let Some(g) = gauges {
            m.controller = g;
        }
        m.now_ms = now;
        m.current_state = self.core.state_name();
        m.current_leader = self.core.leader_id().unwrap_or(-1);
        m.current_vote = self.core.voted_id().unwrap_or(-1);
        m.current_epoch = self.core.epoch();
        m.high_watermark = self.core.high_watermark().unwrap_or(-1);
        m.log_end_offset = end.offset;
        m.log_end_epoch = end.epoch;
        m.unknown_voter_connections = self.failed_voters.len();
        let total = idle_ms + busy_ms;
        if total > 0.0 {
            m.poll_idle_ratio.record(now, idle_ms / total);
        }
        m.voter_lag.clear();
        if let Some(voters) = progress {
            for r in voters {
                let records = r.end_offset.map_or(end.offset, |o| (end.offset - o).max(0));
                let ms = r
                    .last_caught_up_ms
                    .map_or(-1, |t| now.saturating_sub(t) as i64);
                m.voter_lag.insert(r.key.id, VoterLag { records, ms });
            }
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

    fn carry_out_outputs(&mut self) -> Result<(), DriverError> {
        self.carry_out_core_outputs()
            .map_err(|e| self.storage_failure(e))
    }

    /// Carries out every output the core has queued, in order.
    fn carry_out_core_outputs(&mut self) -> Result<(), StoreError> {
        while let Some(output) = self.core.poll_output() {
            self.carry_out(output)?;
        }
        Ok(())
    }

    /// Carries out one output; only the store can fail.
    fn carry_out(&mut self, output: Output) -> Result<(), StoreError> {
        {
            match output {
                Output::PersistElectionState(state) => {
                    let voter_ids = self.core.voters().ids().collect();
                    self.store
                        .set_quorum_state_format(self.core.kraft_version(), voter_ids);
                    self.store.persist_election_state(&state)?
                }
                Output::AppendAsLeader { batch, epoch } => {
                    self.store.append_as_leader(&batch, epoch)?;
                    let (records, last) = count_records(&batch);
                    self.uncommitted.push_back((last, now_ms()));
                    self.with_metrics(|m, now| m.append_records.record(now, records as f64));
                }
                Output::AppendAsFollower { records, epoch } => {
                    self.store.append_as_follower(&records, epoch)?;
                    let (count, _) = count_records(&records);
                    self.with_metrics(|m, now| m.fetch_records.record(now, count as f64));
                }
                Output::Truncate { offset } => self.store.truncate(offset)?,
                Output::Flush => self.store.flush()?,
                Output::SnapshotChunk {
                    id,
                    position,
                    bytes,
                } => self.store.write_snapshot_chunk(id, position, &bytes)?,
                Output::InstallSnapshot { id } => self.store.install_snapshot(id)?,
                Output::AbandonSnapshot { .. } => self.store.abandon_snapshot(),
                Output::Send {
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
                Output::Respond {
                    request_id, body, ..
                } => {
                    // The core answers only the Raft APIs; the controller's go through it.
                    if let Some(reply) = self.pending.remove(&request_id) {
                        let _ = reply.send(body);
                    }
                }
                Output::HighWatermark(hw) => {
                    if let Ok(mut s) = self.status.lock() {
                        s.high_watermark = Some(hw);
                    }
                    // Replayed, and waiters answered, after this round's requests leave
                    // (`catch_up_image_due`).
                    self.image_due = Some(hw);
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
                Output::RoleChanged {
                    epoch,
                    leader_id,
                    state,
                } => {
                    if let Ok(mut s) = self.status.lock() {
                        s.epoch = epoch;
                        s.leader_id = leader_id;
                        s.state = state;
                        if state != "leader" {
                            s.high_watermark = self.core.high_watermark();
                        }
                    }
                    if state == "leader" {
                        self.pacer.reset();
                    } else {
                        self.uncommitted.clear();
                        self.workload_stats.resigned();
                    }
                    // Kafka's controller activation (bootstrap records on an empty log) waits
                    // for the image to pass the epoch start; the controller hears of the
                    // change once this round's outputs are carried out.
                    self.role_events.push((epoch, leader_id, state == "leader"));
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
                Output::ShutdownComplete => self.shutdown_done = true,
            }
        }
        Ok(())
    }
}

/// The controller's way into the Raft core: each append's outputs are carried out before it
/// returns (the core's contract), so the next append sees the log as it is.
struct DriverAppender<'a> {
    driver: &'a mut Driver,
    now_ms: u64,
    /// A store failure while carrying out an append (fatal, reported after the call).
    failure: Option<StoreError>,
}

impl MetadataAppender for DriverAppender<'_> {
    fn next_write_offset(&self) -> Option<i64> {
        if self.failure.is_some() {
            return None;
        }
        self.driver.core.next_write_offset(&self.driver.store)
    }

    fn append(&mut self, epoch: i32, records: Vec<Bytes>) -> Result<i64, ProposeError> {
        if self.failure.is_some() {
            return Err(ProposeError::ShuttingDown);
        }
        let d = &mut *self.driver;
        let result = d
            .core
            .propose_at_epoch(self.now_ms, &d.store, epoch, records);
        if let Err(e) = d.carry_out_core_outputs() {
            self.failure = Some(e);
        }
        result
    }
}
