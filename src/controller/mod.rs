//! The active controller (Kafka's `QuorumController`), sans-IO like the Raft core: no tokio,
//! filesystem, sockets, clock or thread RNG (tests/tidy.rs and clippy enforce it). Time and
//! randomness are inputs; records leave through a [`MetadataAppender`], answers through
//! [`ControllerOutput`]s.
//!
//! ```text
//!   committed log ──replay_committed(hw)──▶ committed image ──▶ parked replies below hw released
//!   leader change ──handle_leader_change──▶ claimed ──(image past the epoch start)──▶ active:
//!        speculative image = committed, fresh broker sessions, activation records
//!   request ──handle_request──▶ manager(speculative image) ─▶ ControllerResult{records, reply}
//!        ─▶ appender.append(epoch, records) ─▶ replay into the speculative image
//!        ─▶ reply parked until the high watermark passes its last offset
//!   timer ──handle_timeout──▶ stale brokers fenced, preferred leaders elected once the
//!        balancing check is due (records written, no reply)
//!   resignation ─▶ speculative image dropped, every parked reply NOT_CONTROLLER
//! ```
//!
//! One manager per concern, each a function over the image returning a [`ControllerResult`]:
//! `cluster.rs` (brokers and controllers), `heartbeats.rs` (broker sessions, soft state),
//! `replication/` (topics, partition changes, placement), `producer_ids.rs`, `features.rs`,
//! `activation.rs`, `scram.rs`, `acls.rs`, `client_quotas.rs`, `delegation_tokens.rs`.
//! [`MetadataImage::replay`] is the only code that changes state.

pub mod acls;
pub mod activation;
mod active;
mod answers;
mod apis;
pub mod authorization;
pub mod client_quotas;
pub mod cluster;
pub mod config;
pub mod configs;
pub mod delegation_tokens;
pub mod errors;
pub mod features;
pub mod heartbeats;
pub mod io;
pub mod mutation_quotas;
mod periodic;
pub mod producer_ids;
pub mod replication;
pub mod result;
pub mod scram;
mod sharing;
mod write;

#[cfg(test)]
pub(crate) mod tests;

use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;

use crate::logging::LogLevels;
use crate::metadata::image::MetadataImage;
use crate::raft::{LogReader, Rng};

pub use config::ControllerConfig;
pub use errors::{ApiError, ControllerError};
pub use heartbeats::BrokerHeartbeatManager;
pub use io::{ControllerOutput, KRaftVersionAccessor, MetadataAppender};
pub use result::{ControllerResult, RecordOut};

/// Bytes read from the log per replay step.
const REPLAY_READ_BYTES: usize = 1 << 20;

/// What [`QuorumController::replay_committed`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CatchUp {
    /// The image changed (a snapshot loaded or batches replayed).
    pub changed: bool,
    /// The latest snapshot was loaded first.
    pub loaded_snapshot: bool,
    /// Bytes of log batches replayed.
    pub log_bytes: u64,
}

/// Whether this node leads, and how far its controller is.
#[derive(Debug)]
enum Leadership {
    /// Another node leads (or none is known).
    Standby { leader_id: Option<i32> },
    /// This node leads `epoch`, and activates once the committed image has replayed past the
    /// epoch's first offset (its LeaderChange batch): everything before it is then applied.
    Claimed { epoch: i32, epoch_start_offset: i64 },
    /// Serving writes.
    Active(Box<active::ActiveController>),
}

pub use crate::codec::error_response::error_response;
pub use answers::not_controller;
pub use result::MAX_RECORDS_PER_USER_OP;

/// The controller of one node: the committed image on every node, the active state on the
/// leader. Call order: after every `handle_*`/`replay_committed`/`poll`, drain
/// [`Self::poll_output`].
#[derive(Debug)]
pub struct QuorumController {
    cfg: ControllerConfig,
    committed: MetadataImage,
    /// Offset of each broker's RegisterBrokerRecord in the committed log.
    registration_offsets: BTreeMap<i32, i64>,
    high_watermark: i64,
    rng: Rng,
    bootstrap: Vec<Bytes>,
    leadership: Leadership,
    /// This node's log levels (the BROKER_LOGGER resource); the driver applies each change.
    log_levels: LogLevels,
    /// The controller mutation quotas' buckets (soft state of this node, as Kafka's sensors).
    mutation_quotas: mutation_quotas::MutationQuotas,
    outputs: VecDeque<ControllerOutput>,
}

impl QuorumController {
    /// A standby controller with an empty image; `bootstrap` holds the records a leader of an
    /// empty log appends first (bootstrap.checkpoint or the 0-0 snapshot).
    pub fn new(cfg: ControllerConfig, bootstrap: Vec<Bytes>) -> Self {
        let rng = Rng::new(cfg.rng_seed);
        let mutation_quotas = mutation_quotas::MutationQuotas::new(cfg.mutation_quota);
        Self {
            mutation_quotas,
            cfg,
            committed: MetadataImage::new(),
            registration_offsets: BTreeMap::new(),
            high_watermark: 0,
            rng,
            bootstrap,
            leadership: Leadership::Standby { leader_id: None },
            log_levels: LogLevels::default(),
            outputs: VecDeque::new(),
        }
    }

    /// The log levels the node started with (ferrokraft's default `info` otherwise).
    pub fn with_log_levels(mut self, levels: LogLevels) -> Self {
        self.log_levels = levels;
        self
    }

    /// This node's log levels as the controller last set them.
    pub fn log_levels(&self) -> &LogLevels {
        &self.log_levels
    }

    /// The configuration.
    pub fn config(&self) -> &ControllerConfig {
        &self.cfg
    }

    /// What the committed log says.
    pub fn committed_image(&self) -> &MetadataImage {
        &self.committed
    }

    /// The active controller's speculative image (committed plus written, not yet committed).
    pub fn speculative_image(&self) -> Option<&MetadataImage> {
        match &self.leadership {
            Leadership::Active(a) => Some(&a.image),
            _ => None,
        }
    }

    /// Whether this node is the active controller (leader, activated).
    pub fn is_active(&self) -> bool {
        matches!(self.leadership, Leadership::Active(_))
    }

    /// The broker sessions, on the active controller.
    pub fn heartbeats(&self) -> Option<&BrokerHeartbeatManager> {
        match &self.leadership {
            Leadership::Active(a) => Some(&a.heartbeats),
            _ => None,
        }
    }

    /// The next answer to give.
    pub fn poll_output(&mut self) -> Option<ControllerOutput> {
        self.outputs.pop_front()
    }

    /// When [`Self::handle_timeout`] should next be called.
    pub fn poll_timeout(&self) -> Option<u64> {
        match &self.leadership {
            Leadership::Active(a) => {
                let expiry = a
                    .heartbeats
                    .next_expiry_ms(self.cfg.broker_session_timeout_ms);
                [expiry, a.balance_at_ms, a.token_sweep_at_ms]
                    .into_iter()
                    .flatten()
                    .min()
            }
            _ => None,
        }
    }

    /// Replays what is committed below `high_watermark` into the committed image (loading
    /// the latest snapshot first when the log no longer holds the next offset), then releases
    /// the replies whose records are now committed.
    pub fn replay_committed(
        &mut self,
        log: &dyn LogReader,
        high_watermark: i64,
    ) -> Result<CatchUp, ControllerError> {
        let mut done = CatchUp::default();
        // The active controller never loads a snapshot (Kafka's LeaderNeverLoadSnapshot).
        // Otherwise the latest snapshot is loaded when the log no longer holds the next
        // offset, and also by a new listener (nothing replayed yet) whatever the log holds,
        // once a high watermark is known: KafkaRaftClient.updateListenersProgress hands a
        // listener at STARTING_NEXT_OFFSET the latest snapshot.
        let new_listener = self.committed.next_offset == 0 && high_watermark > 0;
        if !self.is_active() {
            if let Some(id) = log.latest_snapshot_id() {
                if (new_listener || self.committed.next_offset < log.log_start_offset())
                    && id.offset > self.committed.next_offset
                {
                    if let Some(chunk) = log.read_snapshot(id, 0, usize::MAX) {
                        self.committed
                            .load_snapshot(&chunk.bytes, id.offset, "snapshot");
                        // Kafka replays a snapshot's records at its last contained offset.
                        self.registration_offsets = self
                            .committed
                            .brokers
                            .keys()
                            .map(|b| (*b, id.offset - 1))
                            .collect();
                        done.loaded_snapshot = true;
                    }
                }
            }
        }
        while self.committed.next_offset < high_watermark {
            let bytes = log.read(self.committed.next_offset, REPLAY_READ_BYTES)?;
            let offsets = &mut self.registration_offsets;
            let (replayed, replayed_bytes) = self.committed.replay_batches_observed(
                &bytes,
                high_watermark,
                "metadata log",
                &mut |offset, record| active::track_registration(offsets, offset, record),
            );
            if replayed == 0 {
                break;
            }
            done.log_bytes += replayed_bytes;
        }
        done.changed = done.loaded_snapshot || done.log_bytes > 0;
        self.high_watermark = self.high_watermark.max(high_watermark);
        if let Leadership::Active(a) = &mut self.leadership {
            a.release_committed(self.high_watermark, &mut self.outputs);
            a.check_against_committed(&self.committed);
            a.share_committed(&self.committed);
        }
        Ok(done)
    }

    /// The Raft layer's leadership changed: `epoch_start_offset` is set when this node now
    /// leads `epoch`. Losing leadership resets the controller to the committed image and fails
    /// every parked reply with NOT_CONTROLLER.
    pub fn handle_leader_change(
        &mut self,
        epoch: i32,
        leader_id: Option<i32>,
        epoch_start_offset: Option<i64>,
    ) {
        let same_epoch = match &self.leadership {
            Leadership::Claimed { epoch: e, .. } => *e == epoch,
            Leadership::Active(a) => a.epoch == epoch,
            Leadership::Standby { .. } => false,
        };
        if epoch_start_offset.is_some() && same_epoch {
            return;
        }
        if let Leadership::Active(a) = &mut self.leadership {
            tracing::info!(
                "Renouncing the leadership of epoch {} (controller epoch now {epoch})",
                a.epoch
            );
            a.renounce(leader_id, &mut self.outputs);
        }
        self.leadership = match epoch_start_offset {
            Some(epoch_start_offset) => Leadership::Claimed {
                epoch,
                epoch_start_offset,
            },
            None => Leadership::Standby { leader_id },
        };
    }

    /// Periodic work: activation once the committed image reaches the epoch start, then the
    /// fencing of brokers whose session expired.
    pub fn poll(&mut self, now_ms: u64, appender: &mut dyn MetadataAppender) {
        if let Leadership::Claimed {
            epoch,
            epoch_start_offset,
        } = self.leadership
        {
            if self.committed.next_offset > epoch_start_offset {
                self.activate(now_ms, epoch, appender);
            }
        }
        self.handle_timeout(now_ms, appender);
    }

    /// Fences the brokers whose session expired by `now_ms` (Kafka fences one per event; the
    /// records of each are their own batch), then runs the preferred-leader balancing when it
    /// is due.
    pub fn handle_timeout(&mut self, now_ms: u64, appender: &mut dyn MetadataAppender) {
        let Leadership::Active(a) = &mut self.leadership else {
            return;
        };
        a.fence_stale_brokers(now_ms, &self.cfg, appender);
        a.maybe_schedule_balance(now_ms, &self.cfg);
        a.maybe_balance(now_ms, &self.cfg, appender);
        a.maybe_sweep_tokens(now_ms, &self.cfg, &self.committed, appender);
        self.after_write(appender);
    }

    /// The kraft.version the Raft layer is at (broker registrations and feature updates
    /// check against it).
    pub fn set_kraft_version(&mut self, kraft_version: i16) {
        self.cfg.kraft_version = kraft_version;
    }

    fn activate(&mut self, now_ms: u64, epoch: i32, appender: &mut dyn MetadataAppender) {
        let mut active = active::ActiveController::new(
            epoch,
            &self.committed,
            &self.registration_offsets,
            now_ms,
        );
        match activation::activation_records(
            &self.committed,
            &self.bootstrap,
            self.cfg.min_insync_replicas,
        ) {
            Ok(Some((records, message))) => {
                tracing::info!("{message}");
                if let Err(e) = active.write_records(appender, records) {
                    tracing::error!("Controller activation failed: {e}");
                    return;
                }
            }
            Ok(None) => {}
            // Kafka's controller does not activate then; the node keeps leading the quorum.
            Err(e) => {
                tracing::error!("Controller activation failed: {e}");
                return;
            }
        }
        tracing::info!(
            "Becoming the active controller at epoch {epoch}, next write offset {}",
            appender.next_write_offset().unwrap_or(-1)
        );
        // Kafka schedules the periodic tasks once the activation records are applied.
        active.maybe_schedule_balance(now_ms, &self.cfg);
        active.maybe_schedule_token_sweep(now_ms, &self.cfg);
        self.leadership = Leadership::Active(Box::new(active));
    }

    /// A write found the Raft layer no longer leading: renounce now rather than at the next
    /// leader-change notice.
    fn after_write(&mut self, appender: &mut dyn MetadataAppender) {
        if let Leadership::Active(a) = &mut self.leadership {
            if a.lost_leadership || appender.next_write_offset().is_none() {
                a.renounce(None, &mut self.outputs);
                self.leadership = Leadership::Standby { leader_id: None };
            }
        }
    }
}
