//! The controller (Kafka's `ControllerApis` + `QuorumController` + its control managers),
//! sans-IO like the Raft core: no tokio, filesystem, sockets, clock or thread RNG
//! (tests/tidy.rs and clippy enforce it). Time and randomness are inputs; records leave
//! through a [`MetadataAppender`], answers through [`ControllerOutput`]s.
//!
//! ```text
//!   committed log ──replay_committed(hw)──▶ committed image ──▶ parked replies below hw released
//!   leader change ──handle_leader_change──▶ claimed ──(image past the epoch start)──▶ active:
//!        speculative image = committed, fresh broker sessions, activation records
//!   request ──handle_request (apis.rs)──▶ one Checker ─▶ read from the committed image, or
//!        manager(speculative image) ─▶ ControllerResult{records, reply}
//!        ─▶ write.rs: append(epoch, records) ─▶ replay into the speculative image
//!        ─▶ reply parked until the high watermark passes its last offset
//!   timer ──handle_timeout (periodic.rs)──▶ stale brokers fenced, preferred leaders elected,
//!        expired tokens removed (records written, no reply)
//!   resignation ─▶ speculative image dropped, every parked reply NOT_CONTROLLER
//! ```
//!
//! Files by role: `mod.rs` (this lifecycle), `apis.rs` (entry points, one function per API),
//! `write.rs` (the one write path), `periodic.rs`, `replay.rs` (the committed side),
//! `active.rs` (the active state), `activation.rs`, `authorization.rs` (ControllerApis'
//! checks), `answers.rs` (NOT_CONTROLLER). One manager per concern, each a function over the
//! image returning a [`ControllerResult`]: `cluster.rs` (brokers and controllers),
//! `heartbeats.rs` (broker sessions, soft state), `replication/` (topics, partition changes,
//! placement), `configs/` (dynamic configs, BROKER_LOGGER), `features.rs`, `producer_ids.rs`,
//! `acls.rs`, `client_quotas.rs`, `mutation_quotas.rs`, `scram.rs`, `delegation_tokens.rs`.
//! [`MetadataImage::replay`] is the only code that changes state.

pub mod acls;
pub mod activation;
mod active;
mod answers;
mod apis;
pub mod authorization;
pub(crate) mod change_log;
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
mod replay;
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
use crate::raft::Rng;

pub use config::ControllerConfig;
pub use errors::{ApiError, ControllerError};
pub use heartbeats::BrokerHeartbeatManager;
pub use io::{ControllerOutput, KRaftVersionAccessor, MetadataAppender};
pub use replay::CatchUp;
pub use result::{ControllerResult, RecordOut};

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
    /// The leader elections the committed log recorded, counted as replayed.
    election_stats: ElectionStats,
    /// Snapshots loaded into the committed image (Kafka's `HandleLoadSnapshotCount`).
    snapshot_loads: u64,
    /// Log (or snapshot) bytes one `replay_committed` call replays at most.
    replay_budget_bytes: u64,
}

/// Leader elections seen in the committed metadata log (Kafka's `ControllerStats` meters
/// `UncleanLeaderElectionsPerSec` and `ElectionFromEligibleLeaderReplicasPerSec`, which
/// Kafka 4.1's `TopicDelta.updateElectionStats` feeds): a PartitionChangeRecord that sets
/// the leader recovery state to RECOVERING is an unclean election; one whose leader was in
/// the partition's ELR is an election from the ELR. Records of a loaded snapshot count for
/// nothing, as in Kafka.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ElectionStats {
    /// Unclean leader elections.
    pub unclean: u64,
    /// Leaders elected from the eligible leader replicas.
    pub from_elr: u64,
}

impl ElectionStats {
    /// Counts `record`, replayed onto `image` (the image before it).
    fn count(&mut self, image: &MetadataImage, record: &crate::metadata::record::MetadataRecord) {
        let crate::metadata::record::MetadataRecord::PartitionChange(c) = record else {
            return;
        };
        if c.leader_recovery_state == replication::partition_change::RECOVERING {
            self.unclean += 1;
        }
        let prev = image
            .topics
            .get(&c.topic_id)
            .and_then(|t| t.partitions.get(&c.partition_id));
        if prev.is_some_and(|p| p.elr().contains(&c.leader)) {
            self.from_elr += 1;
        }
    }
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
            election_stats: ElectionStats::default(),
            snapshot_loads: 0,
            replay_budget_bytes: replay::REPLAY_BYTES_PER_CALL,
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

    /// The leader elections counted in the committed log replayed so far.
    pub fn election_stats(&self) -> ElectionStats {
        self.election_stats
    }

    /// How many log (or snapshot) bytes one [`Self::replay_committed`] call replays at most
    /// (default [`replay::REPLAY_BYTES_PER_CALL`]; tests set it small).
    pub fn set_replay_budget_bytes(&mut self, bytes: u64) {
        self.replay_budget_bytes = bytes.max(1);
    }

    /// Snapshots loaded into the committed image since start (at start, and whenever the log
    /// moved past the image), Kafka's MetadataLoader `HandleLoadSnapshotCount`.
    pub fn snapshot_loads(&self) -> u64 {
        self.snapshot_loads
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
                let expiry = a.fence_again_at_ms.or_else(|| {
                    a.heartbeats
                        .next_expiry_ms(self.cfg.broker_session_timeout_ms)
                });
                [
                    expiry,
                    a.balance_at_ms,
                    a.unclean_at_ms,
                    a.token_sweep_at_ms,
                ]
                .into_iter()
                .flatten()
                .min()
            }
            _ => None,
        }
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

    /// Fences a broker whose session expired by `now_ms` (Kafka takes one expired entry per
    /// run, the next 10 ms later; the records of each are their own batch), then runs the preferred-leader balancing when it
    /// is due.
    pub fn handle_timeout(&mut self, now_ms: u64, appender: &mut dyn MetadataAppender) {
        let Leadership::Active(a) = &mut self.leadership else {
            return;
        };
        a.fence_stale_brokers(now_ms, &self.cfg, appender);
        a.maybe_schedule_balance(now_ms, &self.cfg);
        a.maybe_balance(now_ms, &self.cfg, appender);
        a.maybe_schedule_unclean(now_ms, &self.cfg);
        a.maybe_elect_unclean(now_ms, &self.cfg, appender);
        a.maybe_sweep_tokens(now_ms, &self.cfg, &self.committed, appender);
        self.after_write(appender);
    }

    /// The kraft.version the Raft layer is at (broker registrations and feature updates
    /// check against it).
    pub fn set_kraft_version(&mut self, kraft_version: i16) {
        self.cfg.kraft_version = kraft_version;
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
