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

use std::collections::HashMap;
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use tokio::sync::oneshot;

use super::store::{RaftStore, StoreError};
use super::workload::{no_op_record, Pacer, Workload};
use crate::codec::ResponseBody;
use crate::network::peers::{PeerConfig, PeerRequest, PeerResponse, Peers};
use crate::raft::{InboundRequest, Output, RaftCore, RaftError};

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
}

/// The async side's handle on the raft thread.
#[derive(Debug, Clone)]
pub struct RaftHandle {
    events: SyncSender<Event>,
    /// Shared status, updated by the raft thread.
    pub status: Arc<Mutex<Status>>,
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
    /// A write to disk failed.
    #[error("storage failure: {0}")]
    Store(#[from] StoreError),
    /// The core stopped on a protocol invariant.
    #[error("raft failure: {0}")]
    Raft(#[from] RaftError),
}

#[allow(clippy::disallowed_methods)] // the driver is the one place that reads the clock
fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Starts the raft thread. `runtime` runs the outbound peer connections.
pub fn spawn(
    core: RaftCore,
    store: RaftStore,
    peer_config: PeerConfig,
    workload: Workload,
    runtime: tokio::runtime::Handle,
) -> std::io::Result<(RaftHandle, JoinHandle<Result<(), DriverError>>)> {
    let (tx, rx) = std::sync::mpsc::sync_channel(EVENT_QUEUE_DEPTH);
    let status = Arc::new(Mutex::new(Status::default()));
    let handle = RaftHandle {
        events: tx.clone(),
        status: status.clone(),
    };
    let thread = std::thread::Builder::new().name("raft".into()).spawn(move || {
        let _enter = runtime.enter();
        let sink_tx = tx.clone();
        let sink = Arc::new(move |r: PeerResponse| {
            if sink_tx.try_send(Event::Response(r)).is_err() {
                tracing::warn!("raft event queue full; dropping a peer response (the request will time out)");
            }
        });
        let peers = Peers::new(peer_config, sink);
        let mut driver = Driver { core, store, peers, pending: HashMap::new(), status, pacer: Pacer::new(workload), shutdown_done: false };
        driver.run(rx)
    })?;
    Ok((handle, thread))
}

struct Driver {
    core: RaftCore,
    store: RaftStore,
    peers: Peers,
    pending: HashMap<u64, oneshot::Sender<ResponseBody>>,
    status: Arc<Mutex<Status>>,
    pacer: Pacer,
    shutdown_done: bool,
}

impl Driver {
    fn run(&mut self, rx: Receiver<Event>) -> Result<(), DriverError> {
        self.carry_out_outputs()?;
        loop {
            let now = now_ms();
            let mut sleep = self
                .core
                .poll_timeout()
                .map_or(MAX_SLEEP_MS, |t| t.saturating_sub(now))
                .min(MAX_SLEEP_MS);
            if self.pacer.active() && self.status_state() == "leader" {
                sleep = sleep.min(5);
            }
            match rx.recv_timeout(Duration::from_millis(sleep)) {
                Ok(Event::Request { request, reply }) => {
                    self.pending.insert(request.request_id, reply);
                    self.core.handle_request(now_ms(), &self.store, request);
                }
                Ok(Event::Response(r)) => {
                    self.core
                        .handle_response(now_ms(), &self.store, r.correlation_id, r.result)
                }
                Ok(Event::Shutdown { timeout_ms }) => {
                    tracing::info!("Beginning graceful shutdown of the raft client");
                    self.core.begin_shutdown(now_ms(), &self.store, timeout_ms);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            }
            self.carry_out_outputs()?;
            let now = now_ms();
            if self.core.poll_timeout().is_some_and(|t| t <= now) {
                self.core.handle_timeout(now, &self.store);
                self.carry_out_outputs()?;
            }
            self.run_workload()?;
            if let Some(e) = self.core.fatal_error() {
                return Err(DriverError::Raft(e.clone()));
            }
            if self.shutdown_done {
                self.store.flush()?;
                return Ok(());
            }
        }
    }

    fn status_state(&self) -> &'static str {
        self.status.lock().map(|s| s.state).unwrap_or("unattached")
    }

    fn run_workload(&mut self) -> Result<(), DriverError> {
        if !self.pacer.active() || self.status_state() != "leader" {
            return Ok(());
        }
        let due = self.pacer.due(now_ms());
        if due == 0 {
            return Ok(());
        }
        let record = no_op_record(self.pacer.record_bytes());
        let records: Vec<Bytes> = (0..due).map(|_| record.clone()).collect();
        self.core.propose(now_ms(), &self.store, records);
        self.carry_out_outputs()
    }

    fn carry_out_outputs(&mut self) -> Result<(), DriverError> {
        while let Some(output) = self.core.poll_output() {
            match output {
                Output::PersistElectionState(state) => self.store.persist_election_state(&state)?,
                Output::AppendAsLeader { batch, epoch } => {
                    self.store.append_as_leader(&batch, epoch)?
                }
                Output::AppendAsFollower { records, epoch } => {
                    self.store.append_as_follower(&records, epoch)?
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
                } => self.peers.send(PeerRequest {
                    correlation_id,
                    destination,
                    request,
                }),
                Output::Respond {
                    request_id, body, ..
                } => {
                    if let Some(reply) = self.pending.remove(&request_id) {
                        let _ = reply.send(body);
                    }
                }
                Output::HighWatermark(hw) => {
                    if let Ok(mut s) = self.status.lock() {
                        s.high_watermark = Some(hw);
                    }
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
                        // Like Kafka's active controller on an empty log: metadata.version
                        // and the other bootstrap features come first.
                        let bootstrap = self.store.bootstrap_records_due();
                        if !bootstrap.is_empty() {
                            tracing::info!(
                                "The metadata log appears to be empty. Appending {} bootstrap record(s)",
                                bootstrap.len()
                            );
                            self.core.propose(now_ms(), &self.store, bootstrap);
                        }
                    }
                }
                Output::ShutdownComplete => self.shutdown_done = true,
            }
        }
        Ok(())
    }
}
