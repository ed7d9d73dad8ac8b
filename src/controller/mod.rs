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
mod answers;
pub mod authorization;
pub mod client_quotas;
pub mod cluster;
pub mod config;
pub mod configuration;
pub mod delegation_tokens;
pub mod errors;
pub mod feature_control;
pub mod features;
pub mod heartbeats;
pub mod io;
pub mod mutation_quotas;
pub mod producer_ids;
pub mod replication;
pub mod result;
pub mod scram;

#[cfg(test)]
pub(crate) mod tests;

use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;

use crate::codec::{RequestBody, ResponseBody};
use crate::logging::LogLevels;
use crate::metadata::image::MetadataImage;
use crate::metadata::record::ApiMessageAndVersion;
use crate::raft::{InboundRequest, LogReader, ProposeError, Rng};

pub use config::ControllerConfig;
pub use errors::{ApiError, ControllerError};
pub use heartbeats::BrokerHeartbeatManager;
pub use io::{ControllerOutput, KRaftVersionAccessor, MetadataAppender};
pub use result::{ControllerResult, RecordOut};

/// Bytes read from the log per replay step.
const REPLAY_READ_BYTES: usize = 1 << 20;


/// Kafka's `MAX_RECORDS_PER_USER_OP` (its `MAX_RECORDS_PER_BATCH`): an atomic write holds at
/// most this many records; a request that would write more is refused whole with
/// POLICY_VIOLATION.
pub const MAX_RECORDS_PER_USER_OP: usize = 10_000;

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

mod active;
mod sharing;

pub use crate::codec::error_response::error_response;
pub use answers::not_controller;

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

    /// The answer refusing `request` because its sender may not make it (Kafka's
    /// ControllerApis checks, over the committed ACLs); `None` when it may go on.
    pub fn authorization_refusal(&self, request: &InboundRequest) -> Option<ResponseBody> {
        authorization::refusal(self.cfg.authorizer.as_ref(), &self.committed, request)
    }

    /// The answer ControllerApis gives a delegation-token request before the controller sees
    /// it (not allowed on this connection; CREATE_TOKENS missing for another owner).
    fn token_refusal(&self, request: &InboundRequest) -> Option<ResponseBody> {
        let checker =
            authorization::Checker::new(self.cfg.authorizer.as_ref(), &self.committed, request);
        let may_create_for = |owner: &str| {
            checker.as_ref().is_none_or(|c| {
                c.allowed(
                    crate::metadata::acl::AclOperation::CreateTokens,
                    crate::metadata::acl::ResourceType::User,
                    owner,
                    true,
                )
            })
        };
        delegation_tokens::refusal(
            &request.body,
            request.api_version,
            request.sender.as_ref(),
            request.forwarded,
            &may_create_for,
        )
    }

    /// A request for the controller (one of [`CONTROLLER_APIS`]); its answer comes out of
    /// [`Self::poll_output`], at once when refused, after commit when it wrote records.
    pub fn handle_request(
        &mut self,
        now_ms: u64,
        appender: &mut dyn MetadataAppender,
        request: InboundRequest,
    ) {
        let request_id = request.request_id;
        let version = request.api_version;
        if let Some(body) = self.authorization_refusal(&request) {
            self.outputs
                .push_back(ControllerOutput::Respond { request_id, body });
            return;
        }
        if let Some(body) = self.token_refusal(&request) {
            self.outputs
                .push_back(ControllerOutput::Respond { request_id, body });
            return;
        }
        if matches!(
            request.body,
            RequestBody::DescribeDelegationToken(_) | RequestBody::DescribeUserScramCredentials(_)
        ) {
            // A Kafka controller advertises these but has no handler: its ControllerApis
            // throws "Unsupported ApiKey", answered UNKNOWN_SERVER_ERROR (brokers serve them).
            let error = ApiError::code(errors::UNKNOWN_SERVER_ERROR);
            self.outputs.push_back(ControllerOutput::Respond {
                request_id,
                body: error_response(&request.body, version, &error),
            });
            return;
        }
        if self.cfg.authorizer.is_none() {
            if let Some(body) = acls::security_disabled(&request.body) {
                self.outputs
                    .push_back(ControllerOutput::Respond { request_id, body });
                return;
            }
        }
        if let RequestBody::DescribeAcls(req) = &request.body {
            // Kafka's authorizer answers from the ACLs it has loaded (the committed image),
            // on any controller.
            self.outputs.push_back(ControllerOutput::Respond {
                request_id,
                body: ResponseBody::DescribeAcls(acls::describe_acls(&self.committed, req)),
            });
            return;
        }
        if let RequestBody::DescribeConfigs(req) = &request.body {
            // Answered from the committed image by any controller, as Kafka's ConfigHelper
            // answers from the controller's metadata cache.
            let ctx = configuration::describe::DescribeContext {
                node_id: self.cfg.node_id,
                static_min_insync_replicas: self.cfg.min_insync_replicas,
                log_levels: &self.log_levels,
            };
            self.outputs.push_back(ControllerOutput::Respond {
                request_id,
                body: ResponseBody::DescribeConfigs(configuration::describe::describe_configs(
                    &self.committed,
                    ctx,
                    req,
                    authorization::ResourceAccess::new(
                        authorization::Checker::new(
                            self.cfg.authorizer.as_ref(),
                            &self.committed,
                            &request,
                        )
                        .as_ref(),
                    ),
                )),
            });
            return;
        }
        let alter_ctx = configuration::AlterContext {
            node_id: self.cfg.node_id,
            forwarded: request.forwarded,
            release: self.cfg.release,
        };
        let mut broker_loggers = Vec::new();
        if let RequestBody::IncrementalAlterConfigs(req) = &request.body {
            // Kafka's ControllerApis applies BROKER_LOGGER resources on the node that got the
            // request, before (and whatever) the controller answers for the rest.
            let (answers, changes) = configuration::broker_logger::incremental_alter(
                &mut self.log_levels,
                self.cfg.node_id,
                req,
            );
            if !changes.is_empty() {
                self.outputs.push_back(ControllerOutput::SetLogLevels {
                    levels: self.log_levels.clone(),
                    changes,
                });
            }
            let checker = authorization::Checker::new(
                self.cfg.authorizer.as_ref(),
                &self.committed,
                &request,
            );
            let access = authorization::ResourceAccess::new(checker.as_ref());
            if !configuration::incremental_needs_controller(req, access) {
                let result = configuration::incremental_alter_configs(
                    &self.committed,
                    alter_ctx,
                    req,
                    &answers,
                    access,
                );
                self.outputs.push_back(ControllerOutput::Respond {
                    request_id,
                    body: ResponseBody::IncrementalAlterConfigs(result.response),
                });
                return;
            }
            broker_loggers = answers;
        }
        if let RequestBody::AlterConfigs(req) = &request.body {
            let checker = authorization::Checker::new(
                self.cfg.authorizer.as_ref(),
                &self.committed,
                &request,
            );
            let access = authorization::ResourceAccess::new(checker.as_ref());
            if !configuration::legacy_needs_controller(req, access) {
                let result =
                    configuration::legacy_alter_configs(&self.committed, alter_ctx, req, access);
                self.outputs.push_back(ControllerOutput::Respond {
                    request_id,
                    body: ResponseBody::AlterConfigs(result.response),
                });
                return;
            }
        }
        if let RequestBody::ListPartitionReassignments(req) = &request.body {
            // A read at the committed offset (Kafka's read event), on any controller.
            self.outputs.push_back(ControllerOutput::Respond {
                request_id,
                body: ResponseBody::ListPartitionReassignments(
                    replication::list_partition_reassignments(&self.committed, req),
                ),
            });
            return;
        }
        if let RequestBody::AlterPartitionReassignments(req) = &request.body {
            if req.topics.is_empty() {
                // Kafka answers an empty list at once, without an event.
                self.outputs.push_back(ControllerOutput::Respond {
                    request_id,
                    body: ResponseBody::AlterPartitionReassignments(Default::default()),
                });
                return;
            }
        }
        if let RequestBody::AlterClientQuotas(req) = &request.body {
            if req.entries.is_empty() {
                // Kafka answers an empty alteration list at once, without an event, active or
                // not.
                self.outputs.push_back(ControllerOutput::Respond {
                    request_id,
                    body: ResponseBody::AlterClientQuotas(Default::default()),
                });
                return;
            }
        }
        if let RequestBody::ElectLeaders(req) = &request.body {
            if req.topic_partitions.as_ref().is_some_and(Vec::is_empty) {
                // Kafka answers an empty (not null) list at once, without an event, active or
                // not.
                self.outputs.push_back(ControllerOutput::Respond {
                    request_id,
                    body: ResponseBody::ElectLeaders(Default::default()),
                });
                return;
            }
        }
        let Leadership::Active(a) = &mut self.leadership else {
            let leader = match self.leadership {
                Leadership::Standby { leader_id } => leader_id,
                _ => None,
            };
            let error = not_controller(leader);
            self.outputs.push_back(ControllerOutput::Respond {
                request_id,
                body: error_response(&request.body, version, &error),
            });
            return;
        };
        a.handle_request(
            active::Env {
                now_ms,
                cfg: &self.cfg,
                committed: &self.committed,
                broker_loggers: &broker_loggers,
            },
            &mut self.rng,
            &mut self.mutation_quotas,
            appender,
            request,
            &mut self.outputs,
        );
        // A reply that waits on nothing uncommitted goes out now, not at the next commit
        // (Kafka completes a write event without records at once when nothing is pending).
        a.release_committed(self.high_watermark, &mut self.outputs);
        // Every controller request is one of Kafka's write events, after which it schedules
        // the balancing.
        a.maybe_schedule_balance(now_ms, &self.cfg);
        self.after_write(appender);
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

/// Encodes `records` as record values (frame included).
pub(crate) fn encode_records(records: &[RecordOut]) -> Result<Vec<Bytes>, ControllerError> {
    records
        .iter()
        .map(|r| {
            ApiMessageAndVersion::new(r.record.clone(), r.version)
                .encode()
                .map(Bytes::from)
                .map_err(ControllerError::from)
        })
        .collect()
}

/// How a refused proposal is answered.
pub(crate) fn propose_error(e: &ProposeError) -> ApiError {
    match e {
        ProposeError::NotLeader { .. } | ProposeError::ShuttingDown => not_controller(None),
        ProposeError::TooLarge { .. } | ProposeError::Empty => {
            ApiError::new(errors::UNKNOWN_SERVER_ERROR, e.to_string())
        }
    }
}
