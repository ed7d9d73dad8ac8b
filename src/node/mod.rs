//! The node state machine: the Raft core and the controller with the decisions that join them
//! (own KIP-919 registration, the idle NoOpRecord, replaying the committed log into the image,
//! when to snapshot it). Sans-IO like its parts: time comes in as `now_ms`, the store is a
//! trait, and everything that leaves the node (requests to peers, answers, snapshot files to
//! write, status for the handler) comes out as [`NodeOutput`]s. The driver (`server/driver.rs`)
//! and the node simulation (`node/tests/sim.rs`) both run it.
//!
//! ```text
//!   request / response / timeout ─▶ NodeMachine ─▶ RaftCore ─▶ Output
//!                                       │            store writes: carried out now, in order
//!                                       │              (NodeStore: quorum-state, append,
//!                                       │               truncate, flush, snapshot install)
//!                                       │            the rest ─▶ NodeOutput queue
//!                                       ├▶ QuorumController (controller APIs; appends through
//!                                       │    the core for its epoch, replies on commit)
//!   end of round (`poll`) ──────────────┴▶ role changes to the controller, image replayed to
//!                                          the high watermark, activation, idle NoOp, own
//!                                          registration, snapshot due ─▶ NodeOutput
//! ```
//!
//! A store write fails the call (`Err(S::Error)`): the node stops, as Kafka's raft thread does.

mod appender;
pub mod no_ops;
pub mod registration;
pub mod snapshot_policy;

#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use bytes::Bytes;

use crate::codec::{RequestBody, ResponseBody};
use crate::controller::{ControllerOutput, QuorumController};
use crate::logging::LogLevels;
use crate::logging::LoggerChange;
use crate::metadata::image::MetadataImage;
use crate::raft::types::OffsetAndEpoch;
use crate::raft::voters::voter_set_to_record;
use crate::raft::{
    Destination, ElectionState, InboundRequest, LogReader, Output, RaftCore, RaftError,
    ResponseResult,
};
use crate::snapshot::{SnapshotHeaderInfo, SnapshotId};
use appender::CoreAppender;
use no_ops::{IdleNoOps, IDLE_NO_OP_RECORD};
use registration::{OwnAction, Registrations};
use snapshot_policy::{MetadataLogSettings, SnapshotGenerator};

/// The store the machine writes through: the core's reads plus the writes its outputs ask for.
/// Each write is complete (durable where it says so) when it returns.
pub trait NodeStore: LogReader {
    /// Why a write failed (the node stops).
    type Error: std::error::Error;
    /// Writes `quorum-state` in the format of `kraft_version` with these voters.
    fn persist_election_state(
        &mut self,
        state: &ElectionState,
        kraft_version: i16,
        voter_ids: Vec<i32>,
    ) -> Result<(), Self::Error>;
    /// Appends a batch the leader built.
    fn append_as_leader(&mut self, batch: &[u8], epoch: i32) -> Result<(), Self::Error>;
    /// Appends fetched batches.
    fn append_as_follower(&mut self, records: &[u8], epoch: i32) -> Result<(), Self::Error>;
    /// Truncates the log to `offset`.
    fn truncate(&mut self, offset: i64) -> Result<(), Self::Error>;
    /// Makes every append durable.
    fn flush(&mut self) -> Result<(), Self::Error>;
    /// Writes a chunk of a snapshot being fetched.
    fn write_snapshot_chunk(
        &mut self,
        id: OffsetAndEpoch,
        position: i64,
        bytes: &[u8],
    ) -> Result<(), Self::Error>;
    /// Installs the fetched snapshot (the log restarts at its end offset).
    fn install_snapshot(&mut self, id: OffsetAndEpoch) -> Result<(), Self::Error>;
    /// Drops a snapshot fetch part-way.
    fn abandon_snapshot(&mut self);
}

/// What the machine hands to its driver.
#[derive(Debug)]
pub enum NodeOutput {
    /// A request to a peer on the Raft channel.
    Send {
        /// Its correlation id (the response comes back with it).
        correlation_id: u64,
        /// The peer.
        destination: Destination,
        /// The request.
        request: RequestBody,
    },
    /// This node's own ControllerRegistration to the leader, on its own channel (the leader
    /// answers only after commit; on the Raft channel the answer would hold back the Fetch the
    /// commit may need).
    SendRegistration {
        /// Its correlation id.
        correlation_id: u64,
        /// The leader.
        destination: Destination,
        /// The request.
        request: RequestBody,
    },
    /// The answer to an inbound request (Raft or controller API).
    Respond {
        /// The request's id.
        request_id: u64,
        /// The answer.
        body: ResponseBody,
    },
    /// Records this node appended to its log: the leader's own (`as_leader`) or fetched.
    Appended {
        /// Appended by this node as leader.
        as_leader: bool,
        /// Records in the batches.
        records: u64,
        /// The last offset appended.
        last_offset: i64,
    },
    /// The high watermark moved.
    HighWatermark(i64),
    /// The epoch, leader or state changed.
    RoleChanged {
        /// The epoch.
        epoch: i32,
        /// The leader, if known.
        leader_id: Option<i32>,
        /// Kafka's `current-state`.
        state: &'static str,
    },
    /// The committed image changed (what the handler shows follows it).
    ImageChanged,
    /// A snapshot of the committed image is due: the driver encodes and writes it off the
    /// raft thread (Kafka's snapshot generator has its own thread too) and reports back with
    /// [`NodeMachine::snapshot_written`].
    WriteSnapshot {
        /// Its id.
        id: SnapshotId,
        /// The header's fields.
        header: SnapshotHeaderInfo,
        /// A copy of the committed image at `id`. The copy shares the partitions (topics are
        /// behind `Arc`s), so making it costs the topic tables: at 10M partitions about
        /// 0.2 s, where encoding the records here took 7.5–9 s and stalled the raft thread.
        image: Box<MetadataImage>,
        /// Why now (for the log line).
        reason: String,
    },
    /// A snapshot was due but is not written, and why (logged by the driver; `error` marks
    /// what Kafka logs at ERROR).
    SnapshotSkipped {
        /// Kafka's message.
        why: String,
        /// Logged at ERROR rather than INFO.
        error: bool,
    },
    /// This node's log levels changed (BROKER_LOGGER): the driver makes `levels` the
    /// process's log filter, then logs each change, before carrying out what follows.
    SetLogLevels {
        /// Every logger's level now.
        levels: LogLevels,
        /// What changed, in order.
        changes: Vec<LoggerChange>,
    },
    /// A graceful shutdown finished.
    ShutdownComplete,
}

/// Why the machine cannot go on (besides store failures, which the calls return).
#[derive(Debug, Clone, thiserror::Error)]
pub enum MachineError {
    /// The core stopped on a protocol invariant.
    #[error("raft failure: {0}")]
    Raft(#[from] RaftError),
    /// The controller could not replay the committed log.
    #[error("controller failure: {0}")]
    Controller(String),
}

/// The node: Raft core, controller, and what joins them.
#[derive(Debug)]
pub struct NodeMachine {
    core: RaftCore,
    controller: QuorumController,
    registrations: Registrations,
    idle_no_ops: IdleNoOps,
    snapshot_generator: SnapshotGenerator,
    /// Leadership changes the core announced, for the controller (epoch, leader, leading).
    role_events: Vec<(i32, Option<i32>, bool)>,
    /// The high watermark the image has to catch up to at the end of this round.
    image_due: Option<i64>,
    outputs: VecDeque<NodeOutput>,
    fatal: Option<MachineError>,
}

impl NodeMachine {
    /// A machine over a core and controller opened from the same store.
    pub fn new(
        core: RaftCore,
        controller: QuorumController,
        registrations: Registrations,
        settings: &MetadataLogSettings,
        now_ms: u64,
    ) -> Self {
        Self {
            core,
            controller,
            registrations,
            idle_no_ops: IdleNoOps::new(settings.max_idle_interval_ms),
            snapshot_generator: SnapshotGenerator::new(settings, now_ms),
            role_events: Vec::new(),
            image_due: None,
            outputs: VecDeque::new(),
            fatal: None,
        }
    }

    /// Loads the image from the latest snapshot and carries out what the core asked for on
    /// start-up.
    pub fn start<S: NodeStore>(&mut self, now_ms: u64, store: &mut S) -> Result<(), S::Error> {
        self.catch_up_image(now_ms, store, 0);
        self.carry_out(store)
    }

    /// The Raft core (read-only: state for metrics and status).
    pub fn core(&self) -> &RaftCore {
        &self.core
    }

    /// The controller (read-only: gauges).
    pub fn controller(&self) -> &QuorumController {
        &self.controller
    }

    /// The committed metadata image.
    pub fn committed_image(&self) -> &MetadataImage {
        self.controller.committed_image()
    }

    /// This controller's incarnation id (KIP-919).
    pub fn incarnation_id(&self) -> uuid::Uuid {
        self.registrations.incarnation_id()
    }

    /// The next output for the driver.
    pub fn poll_output(&mut self) -> Option<NodeOutput> {
        self.outputs.pop_front()
    }

    /// A failure that stops the node.
    pub fn fatal_error(&self) -> Option<MachineError> {
        self.fatal
            .clone()
            .or_else(|| self.core.fatal_error().cloned().map(MachineError::Raft))
    }

    /// The earliest time `poll` has something to do.
    pub fn poll_timeout(&self) -> Option<u64> {
        // A catch-up left unfinished continues at once (see `REPLAY_BYTES_PER_CALL`).
        let catching_up = self.image_due.map(|_| 0);
        [
            self.core.poll_timeout(),
            self.controller.poll_timeout(),
            catching_up,
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Leader and activated: Kafka's controller writes nothing (and accepts no registration)
    /// before its activation records.
    pub fn is_active_controller(&self) -> bool {
        self.core.state_name() == "leader" && self.controller.is_active()
    }

    /// An inbound request: controller APIs to the controller, the rest to the Raft core.
    pub fn handle_request<S: NodeStore>(
        &mut self,
        now_ms: u64,
        store: &mut S,
        request: InboundRequest,
    ) -> Result<(), S::Error> {
        if crate::codec::apis::is_controller_api(request.body.api_key()) {
            self.controller.set_kraft_version(self.core.kraft_version());
            return self
                .with_controller(now_ms, store, |c, a| c.handle_request(now_ms, a, request));
        }
        if let Some(body) = self.controller.authorization_refusal(&request) {
            // Raft RPCs need CLUSTER_ACTION (DescribeQuorum DESCRIBE, voter changes ALTER),
            // checked before the Raft layer sees them, as Kafka's ControllerApis does.
            self.core.refuse(&request, body);
            return self.carry_out(store);
        }
        self.core.handle_request(now_ms, &*store, request);
        self.carry_out(store)
    }

    /// The outcome of a request this node sent (Raft or own registration).
    pub fn handle_response<S: NodeStore>(
        &mut self,
        now_ms: u64,
        store: &mut S,
        correlation_id: u64,
        result: ResponseResult,
    ) -> Result<(), S::Error> {
        if self.registrations.is_own_correlation(correlation_id) {
            let error = match result {
                ResponseResult::Answered(body) => registration_error(&body),
                other => Some((-1, format!("{other:?}"))),
            };
            self.registrations
                .own_response(now_ms, correlation_id, error);
            return Ok(());
        }
        self.core
            .handle_response(now_ms, &*store, correlation_id, result);
        self.carry_out(store)
    }

    /// Starts a graceful shutdown bounded by `timeout_ms`.
    pub fn begin_shutdown<S: NodeStore>(
        &mut self,
        now_ms: u64,
        store: &mut S,
        timeout_ms: u64,
    ) -> Result<(), S::Error> {
        self.core.begin_shutdown(now_ms, &*store, timeout_ms);
        self.carry_out(store)
    }

    /// Proposes records at the current epoch (the benchmark workload); the last offset, or
    /// `None` when not leader.
    pub fn propose<S: NodeStore>(
        &mut self,
        now_ms: u64,
        store: &mut S,
        records: Vec<Bytes>,
    ) -> Result<Option<i64>, S::Error> {
        let last = self.core.propose(now_ms, &*store, records);
        self.carry_out(store)?;
        Ok(last)
    }

    /// The end of a round: timers, the controller's leadership changes and timers, the idle
    /// NoOpRecord, own registration, and the image replayed to the high watermark — after this
    /// round's requests are out, so a follower's next Fetch is on its way while it replays
    /// (Kafka replays on its MetadataLoader thread, beside the raft thread).
    pub fn poll<S: NodeStore>(&mut self, now_ms: u64, store: &mut S) -> Result<(), S::Error> {
        if self.core.poll_timeout().is_some_and(|t| t <= now_ms) {
            self.core.handle_timeout(now_ms, &*store);
            self.carry_out(store)?;
        }
        self.process_role_events(now_ms, store);
        self.with_controller(now_ms, store, |c, a| c.poll(now_ms, a))?;
        self.run_idle_no_op(now_ms, store)?;
        self.run_own_registration(now_ms, store)?;
        if let Some(hw) = self.image_due.take() {
            self.apply_committed(now_ms, store, hw);
            // An activation waiting for the image to reach the epoch start, unless the
            // catch-up spent its budget: then it comes in the next round, with its time.
            if self.image_due.is_none() {
                self.with_controller(now_ms, store, |c, a| c.poll(now_ms, a))?;
            }
        }
        Ok(())
    }

    /// The driver finished writing snapshot `id` (or failed to).
    pub fn snapshot_written(&mut self) {
        self.snapshot_generator.written();
    }

    /// Carries out every output the core has queued, in order: store writes now, the rest
    /// queued for the driver.
    fn carry_out<S: NodeStore>(&mut self, store: &mut S) -> Result<(), S::Error> {
        carry_out_core(
            &mut self.core,
            store,
            &mut self.outputs,
            &mut self.role_events,
            &mut self.image_due,
        )
    }

    /// Runs `f` on the controller with an appender over the Raft core, then hands on what it
    /// answered and the leadership changes its appends caused.
    fn with_controller<S: NodeStore>(
        &mut self,
        now_ms: u64,
        store: &mut S,
        f: impl FnOnce(&mut QuorumController, &mut CoreAppender<'_, S>),
    ) -> Result<(), S::Error> {
        let mut appender = CoreAppender {
            core: &mut self.core,
            store: &mut *store,
            outputs: &mut self.outputs,
            role_events: &mut self.role_events,
            image_due: &mut self.image_due,
            now_ms,
            failure: None,
        };
        f(&mut self.controller, &mut appender);
        if let Some(e) = appender.failure.take() {
            return Err(e);
        }
        self.drain_controller_outputs(now_ms);
        self.process_role_events(now_ms, store);
        Ok(())
    }

    /// Hands the controller's answers to the driver (or to our own registration).
    fn drain_controller_outputs(&mut self, now_ms: u64) {
        while let Some(output) = self.controller.poll_output() {
            let (request_id, body) = match output {
                ControllerOutput::Respond { request_id, body } => (request_id, body),
                ControllerOutput::SetLogLevels { levels, changes } => {
                    self.outputs
                        .push_back(NodeOutput::SetLogLevels { levels, changes });
                    continue;
                }
            };
            if self.registrations.is_own_correlation(request_id) {
                let error = registration_error(&body);
                self.registrations.own_response(now_ms, request_id, error);
                continue;
            }
            self.outputs
                .push_back(NodeOutput::Respond { request_id, body });
        }
    }

    /// Tells the controller of the leadership changes the core announced. Losing leadership
    /// first answers what committed before it, as committed.
    fn process_role_events<S: NodeStore>(&mut self, now_ms: u64, store: &S) {
        if self.role_events.is_empty() {
            return;
        }
        for (epoch, leader_id, leading) in std::mem::take(&mut self.role_events) {
            if !leading {
                if let Some(hw) = self.image_due.take() {
                    self.apply_committed(now_ms, store, hw);
                }
            }
            let epoch_start = if leading {
                self.core.epoch_start_offset()
            } else {
                None
            };
            self.controller
                .handle_leader_change(epoch, leader_id, epoch_start);
        }
        self.drain_controller_outputs(now_ms);
    }

    /// The image replayed to `high_watermark` and the requests waiting below it answered.
    fn apply_committed<S: NodeStore>(&mut self, now_ms: u64, store: &S, high_watermark: i64) {
        self.catch_up_image(now_ms, store, high_watermark);
        self.drain_controller_outputs(now_ms);
    }

    /// Replays the image up to `high_watermark`, and asks for a snapshot of it when one is due
    /// (Kafka's `SnapshotGenerator`).
    fn catch_up_image<S: NodeStore>(&mut self, now_ms: u64, store: &S, high_watermark: i64) {
        let done = match self.controller.replay_committed(store, high_watermark) {
            Ok(done) => done,
            Err(e) => {
                // An unreadable committed range stops the node (Kafka's controller faults).
                self.fatal = Some(MachineError::Controller(e.to_string()));
                return;
            }
        };
        if done.more {
            self.image_due = Some(
                self.image_due
                    .map_or(high_watermark, |h| h.max(high_watermark)),
            );
        }
        if done.changed {
            self.outputs.push_back(NodeOutput::ImageChanged);
        }
        if done.loaded_snapshot {
            self.snapshot_generator.loaded(now_ms);
        }
        let in_transaction = self.committed_image().open_transaction.is_some();
        if let Some(reason) =
            self.snapshot_generator
                .log_delta(done.log_bytes, now_ms, in_transaction)
        {
            match self.snapshot_of_image(store, reason) {
                Ok(output) => self.outputs.push_back(output),
                Err((why, error)) => {
                    self.outputs
                        .push_back(NodeOutput::SnapshotSkipped { why, error });
                    self.snapshot_generator.written();
                }
            }
        }
    }

    /// The snapshot of the committed image, or why none is written.
    fn snapshot_of_image(
        &self,
        store: &dyn LogReader,
        reason: String,
    ) -> Result<NodeOutput, (String, bool)> {
        let image = self.committed_image();
        let id = SnapshotId {
            end_offset: image.next_offset,
            epoch: image.last_epoch,
        };
        let log_start = store.log_start_offset();
        if id.end_offset < log_start {
            return Err((
                format!(
                    "Cannot create a snapshot with an id ({}) less than the log start offset ({log_start})",
                    id.file_stem()
                ),
                false,
            ));
        }
        if store
            .latest_snapshot_id()
            .is_some_and(|s| s >= OffsetAndEpoch::new(id.end_offset, id.epoch))
        {
            return Err((
                format!(
                    "Not generating snapshot {} because it already exists.",
                    id.file_stem()
                ),
                true,
            ));
        }
        // Checked here so that the message is Kafka's; what a metadata.version cannot hold
        // is found while the driver encodes the records.
        if image.metadata_version().is_none() {
            return Err((
                crate::metadata::image::ImageWriteError::NoMetadataVersion
                    .generation_message(&id.file_stem()),
                true,
            ));
        }
        let (kraft_version, voters) = self.core.voters_at_offset(id.end_offset - 1);
        let header = SnapshotHeaderInfo {
            last_contained_log_timestamp_ms: image.last_contained_log_time_ms,
            kraft_version: Some(kraft_version),
            voters: voters.as_ref().map(voter_set_to_record),
        };
        Ok(NodeOutput::WriteSnapshot {
            id,
            header,
            image: Box::new(image.clone()),
            reason,
        })
    }

    /// An active controller's periodic NoOpRecord (once the image knows metadata.version, as
    /// Kafka's controller is active only after loading the log).
    fn run_idle_no_op<S: NodeStore>(&mut self, now_ms: u64, store: &mut S) -> Result<(), S::Error> {
        let active =
            self.is_active_controller() && self.committed_image().metadata_version().is_some();
        if self.idle_no_ops.due(now_ms, active) {
            self.core.propose(
                now_ms,
                &*store,
                vec![Bytes::from_static(&IDLE_NO_OP_RECORD)],
            );
            self.carry_out(store)?;
        }
        Ok(())
    }

    /// Registers this controller when the committed metadata does not hold it yet: with the
    /// local controller when leading (once active), else with the leader.
    fn run_own_registration<S: NodeStore>(
        &mut self,
        now_ms: u64,
        store: &mut S,
    ) -> Result<(), S::Error> {
        let is_leader = self.core.state_name() == "leader";
        if is_leader && !self.is_active_controller() {
            return Ok(());
        }
        let leader = self.core.leader_destination();
        let image = self.controller.committed_image();
        match self
            .registrations
            .own_action(now_ms, image, is_leader, leader)
        {
            OwnAction::None => Ok(()),
            OwnAction::Local {
                correlation_id,
                request,
            } => {
                let request = InboundRequest {
                    request_id: correlation_id,
                    api_version: 0,
                    listener_name: String::new(),
                    forwarded: false,
                    sender: None,
                    forwarded_by: None,
                    body: RequestBody::ControllerRegistration(request),
                };
                self.with_controller(now_ms, store, |c, a| c.handle_request(now_ms, a, request))
            }
            OwnAction::Send {
                correlation_id,
                destination,
                request,
            } => {
                self.outputs.push_back(NodeOutput::SendRegistration {
                    correlation_id,
                    destination,
                    request: RequestBody::ControllerRegistration(request),
                });
                Ok(())
            }
        }
    }
}

/// A ControllerRegistration answer as the registration client wants it: `None` on success.
fn registration_error(body: &ResponseBody) -> Option<(i16, String)> {
    match body {
        ResponseBody::ControllerRegistration(r) if r.error_code == 0 => None,
        ResponseBody::ControllerRegistration(r) => Some((
            r.error_code,
            r.error_message
                .as_ref()
                .map(|m| m.to_string())
                .unwrap_or_default(),
        )),
        other => Some((-1, format!("{other:?}"))),
    }
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

/// Carries out the core's outputs in order: store writes now, the rest queued.
pub(super) fn carry_out_core<S: NodeStore>(
    core: &mut RaftCore,
    store: &mut S,
    outputs: &mut VecDeque<NodeOutput>,
    role_events: &mut Vec<(i32, Option<i32>, bool)>,
    image_due: &mut Option<i64>,
) -> Result<(), S::Error> {
    while let Some(output) = core.poll_output() {
        match output {
            Output::PersistElectionState(state) => {
                let voter_ids = core.voters().ids().collect();
                store.persist_election_state(&state, core.kraft_version(), voter_ids)?
            }
            Output::AppendAsLeader { batch, epoch } => {
                store.append_as_leader(&batch, epoch)?;
                let (records, last_offset) = count_records(&batch);
                outputs.push_back(NodeOutput::Appended {
                    as_leader: true,
                    records,
                    last_offset,
                });
            }
            Output::AppendAsFollower { records, epoch } => {
                store.append_as_follower(&records, epoch)?;
                let (count, last_offset) = count_records(&records);
                outputs.push_back(NodeOutput::Appended {
                    as_leader: false,
                    records: count,
                    last_offset,
                });
            }
            Output::Truncate { offset } => store.truncate(offset)?,
            Output::Flush => store.flush()?,
            Output::SnapshotChunk {
                id,
                position,
                bytes,
            } => store.write_snapshot_chunk(id, position, &bytes)?,
            Output::InstallSnapshot { id } => store.install_snapshot(id)?,
            Output::AbandonSnapshot { .. } => store.abandon_snapshot(),
            Output::Send {
                correlation_id,
                destination,
                request,
            } => outputs.push_back(NodeOutput::Send {
                correlation_id,
                destination,
                request,
            }),
            Output::Respond {
                request_id, body, ..
            } => outputs.push_back(NodeOutput::Respond { request_id, body }),
            Output::HighWatermark(hw) => {
                // Replayed, and waiters answered, at the end of the round (`poll`).
                *image_due = Some(hw);
                outputs.push_back(NodeOutput::HighWatermark(hw));
            }
            Output::RoleChanged {
                epoch,
                leader_id,
                state,
            } => {
                // The controller hears of it once this round's outputs are carried out.
                role_events.push((epoch, leader_id, state == "leader"));
                outputs.push_back(NodeOutput::RoleChanged {
                    epoch,
                    leader_id,
                    state,
                });
            }
            Output::ShutdownComplete => outputs.push_back(NodeOutput::ShutdownComplete),
        }
    }
    Ok(())
}
