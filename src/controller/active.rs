//! The active controller's state: the speculative image, the replies parked until their
//! records commit, and the broker sessions (Kafka's `QuorumController` write path, its
//! `DeferredEventQueue` purgatory and `BrokerHeartbeatManager`).
//!
//! ```text
//!   result ─▶ encode ─▶ appender.append(epoch) ─▶ offsets checked against the prediction
//!          ─▶ replay into the speculative image ─▶ park (last offset, reply)
//!   high watermark ─▶ replies with offset < hw released, in offset order
//!   committed image at the last write offset ─▶ must equal the speculative image
//!   any write, leaders imbalanced ─▶ balancing due after leader.imbalance.check.interval
//!          ─▶ handle_timeout past it ─▶ preferred elections (≤ 1,000; more: again in 10 ms)
//! ```

use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;
use kafka_protocol::messages::incremental_alter_configs_response::AlterConfigsResourceResponse;

use super::answers::not_controller_body;
use super::authorization::{Allowance, Checker, ResourceAccess};
use super::config::ControllerConfig;
use super::errors::{ApiError, ControllerError};
use super::heartbeats::BrokerHeartbeatManager;
use super::io::{ControllerOutput, MetadataAppender};
use super::mutation_quotas::MutationQuotas;
use super::result::{ControllerResult, RecordOut};
use super::sharing::TopicSharing;
use super::{cluster, configuration, delegation_tokens, encode_records, error_response};
use super::{not_controller, producer_ids};
use super::{propose_error, replication};
use crate::codec::{RequestBody, ResponseBody};
use crate::metadata::image::MetadataImage;
use crate::metadata::record::MetadataRecord;
use crate::raft::{InboundRequest, Rng};

/// A reply waiting for its records (or the writes before it) to commit.
#[derive(Debug)]
struct Parked {
    /// The last offset that must commit first.
    offset: i64,
    request_id: u64,
    body: ResponseBody,
    /// The request and its version, kept for the APIs whose error answer Kafka builds from
    /// the request rather than the reply (ElectLeaders' `getErrorResponse`).
    request: Option<(i16, RequestBody)>,
}

/// Kafka's `MAX_RECORDS_PER_BATCH`.
const MAX_RECORDS_PER_BATCH: usize = super::MAX_RECORDS_PER_USER_OP;

/// Kafka's delay of a balancing run rescheduled at once (10 ms, so that queued events go
/// first).
const BALANCE_AGAIN_MS: u64 = 10;

/// What a request is served against besides the active state.
#[derive(Debug, Clone, Copy)]
pub(super) struct Env<'a> {
    /// The time now.
    pub(super) now_ms: u64,
    /// The controller's settings.
    pub(super) cfg: &'a ControllerConfig,
    /// The committed image: Kafka resolves some names at the last committed offset.
    pub(super) committed: &'a MetadataImage,
    /// The answers to an IncrementalAlterConfigs' BROKER_LOGGER resources (applied already),
    /// which go last in its answer.
    pub(super) broker_loggers: &'a [AlterConfigsResourceResponse],
}

/// What a token request is served with: the settings, its sender, the wall-clock time.
fn token_context<'a>(
    cfg: &'a ControllerConfig,
    request: &'a InboundRequest,
    now_ms: u64,
) -> delegation_tokens::TokenContext<'a> {
    delegation_tokens::TokenContext {
        cfg: cfg.delegation_tokens.as_ref(),
        // The node's own requests are never token requests; refused before this otherwise.
        requester: request
            .sender
            .as_ref()
            .map_or("User:ANONYMOUS", |s| s.principal.as_str()),
        now_ms: i64::try_from(now_ms).unwrap_or(i64::MAX),
    }
}

/// The mutation quota of `request`, strict from `strict_since` (Kafka's ControllerApis:
/// CreateTopics 6, DeleteTopics 5, CreatePartitions 3).
fn mutation_quota<'a>(
    quotas: &'a mut MutationQuotas,
    committed: &MetadataImage,
    request: &InboundRequest,
    strict_since: i16,
    now_ms: u64,
) -> super::mutation_quotas::RequestQuota<'a> {
    let (principal, client_id) = request.sender.as_ref().map_or(("User:ANONYMOUS", ""), |s| {
        (s.principal.as_str(), s.client_id.as_str())
    });
    quotas.quota_for(
        committed,
        principal,
        client_id,
        request.api_version,
        strict_since,
        now_ms,
    )
}

/// The active controller of one epoch.
#[derive(Debug)]
pub(super) struct ActiveController {
    pub(super) epoch: i32,
    /// Committed image plus every record written in this epoch.
    pub(super) image: MetadataImage,
    /// Offset of the last record written in this epoch (-1: none yet).
    last_write_offset: i64,
    parked: VecDeque<Parked>,
    pub(super) heartbeats: BrokerHeartbeatManager,
    /// Offset of each broker's RegisterBrokerRecord (its catch-up target), this epoch's
    /// writes included.
    pub(super) registration_offsets: BTreeMap<i32, i64>,
    /// An append found the Raft layer not leading this epoch any more.
    pub(super) lost_leadership: bool,
    /// When the preferred-leader balancing runs (Kafka's SCHEDULED state), if it is due.
    pub(super) balance_at_ms: Option<u64>,
    /// When the expired delegation tokens are next swept (Kafka schedules the sweep at
    /// activation when tokens are on, then every expiry check interval).
    pub(super) token_sweep_at_ms: Option<u64>,
    /// The last run hit its record limit: the next one runs 10 ms after scheduling, not
    /// after the check interval (Kafka's IMMEDIATELY rather than DEFERRED).
    balance_again_soon: bool,
    /// `last_write_offset` when the image was last found balanced: no write since, no need
    /// to look again.
    balanced_at_offset: Option<i64>,
    /// The topics written, to share with the committed image once their records commit.
    sharing: TopicSharing,
}

impl ActiveController {
    /// Claims `epoch` on top of `committed`: every registered broker gets a fresh session.
    pub(super) fn new(
        epoch: i32,
        committed: &MetadataImage,
        registration_offsets: &BTreeMap<i32, i64>,
        now_ms: u64,
    ) -> Self {
        let heartbeats = BrokerHeartbeatManager::activate(
            committed
                .brokers
                .values()
                .map(|b| (b.broker_id, b.broker_epoch, b.fenced)),
            now_ms,
        );
        Self {
            epoch,
            image: committed.clone(),
            last_write_offset: -1,
            parked: VecDeque::new(),
            heartbeats,
            registration_offsets: registration_offsets.clone(),
            lost_leadership: false,
            balance_at_ms: None,
            token_sweep_at_ms: None,
            balance_again_soon: false,
            balanced_at_offset: None,
            sharing: TopicSharing::default(),
        }
    }

    /// Appends encoded `values` (already checked by a manager or the activation) and replays
    /// them into the speculative image; the last offset.
    pub(super) fn write_records(
        &mut self,
        appender: &mut dyn MetadataAppender,
        values: Vec<Bytes>,
    ) -> Result<i64, ControllerError> {
        let records: Vec<MetadataRecord> = values
            .iter()
            .map(|v| MetadataRecord::decode(v))
            .collect::<Result<_, _>>()?;
        let count = records.len() as i64;
        let last = self.append(appender, values)?;
        for (i, r) in records.into_iter().enumerate() {
            self.replay(last - count + 1 + i as i64, r);
        }
        Ok(last)
    }

    /// Appends `values` in batches of at most [`MAX_RECORDS_PER_BATCH`] records (Kafka's
    /// `appendRecords` splits a non-atomic result so; the managers keep atomic ones within
    /// one batch, refusing larger requests with POLICY_VIOLATION); the last offset.
    fn append(
        &mut self,
        appender: &mut dyn MetadataAppender,
        mut values: Vec<Bytes>,
    ) -> Result<i64, ControllerError> {
        let mut last = self.last_write_offset;
        while !values.is_empty() {
            let rest = values.split_off(values.len().min(MAX_RECORDS_PER_BATCH));
            last = self.append_batch(appender, values)?;
            values = rest;
        }
        Ok(last)
    }

    fn append_batch(
        &mut self,
        appender: &mut dyn MetadataAppender,
        values: Vec<Bytes>,
    ) -> Result<i64, ControllerError> {
        let count = values.len() as i64;
        let expected_first = appender.next_write_offset();
        let last = match appender.append(self.epoch, values) {
            Ok(last) => last,
            Err(e) => {
                self.lost_leadership = true;
                return Err(ControllerError::Propose(e));
            }
        };
        let first = last - count + 1;
        if let Some(expected_first) = expected_first {
            if first != expected_first {
                // The records are in the log all the same, so they are replayed; a broker
                // epoch taken from the prediction would not be its record's offset.
                let e = ControllerError::OffsetMismatch {
                    expected_first,
                    got_first: first,
                    got_last: last,
                };
                debug_assert!(false, "{e}");
                tracing::error!("{e}");
            }
        }
        self.last_write_offset = last;
        self.image.next_offset = last + 1;
        Ok(last)
    }

    /// The invariants every write keeps (checked after each one in debug builds): no
    /// partition is led by a fenced or unregistered broker, a leader is in its ISR, the ISR is
    /// a non-empty subset of the replicas.
    pub(super) fn check_invariants(&self) {
        if !cfg!(debug_assertions) {
            return;
        }
        // With eligible leader replicas on (a Kafka controller may have led), an ISR may be
        // empty while the ELR holds the candidates.
        let elr = self
            .image
            .features
            .get(crate::metadata::image::ELR_FEATURE)
            .is_some_and(|l| *l > 0);
        assert_eq!(
            self.image.partition_stats,
            crate::metadata::image::PartitionStats::count(self.image.topics.values()),
            "the partition counts kept by replay differ from a count"
        );
        for t in self.image.topics.values() {
            for (id, p) in &t.partitions {
                let where_ = || format!("{}-{id}: {p:?}", t.name);
                if p.leader >= 0 {
                    let broker = self.image.brokers.get(&p.leader);
                    assert!(
                        broker.is_some_and(|b| !b.fenced),
                        "partition led by a fenced or unknown broker: {}",
                        where_()
                    );
                    assert!(
                        p.isr.contains(&p.leader),
                        "leader out of its ISR: {}",
                        where_()
                    );
                }
                assert!(
                    elr || !p.isr.is_empty(),
                    "empty ISR without ELR: {}",
                    where_()
                );
                assert!(
                    p.isr.iter().all(|r| p.replicas.contains(r)),
                    "ISR member that is not a replica: {}",
                    where_()
                );
            }
        }
    }

    fn replay(&mut self, offset: i64, record: MetadataRecord) {
        track_registration(&mut self.registration_offsets, offset, &record);
        self.sharing.written(offset, &record);
        let name = record.name();
        if let Err(e) = self.image.replay(record) {
            // The manager built this record from this image: its refusal is a bug.
            debug_assert!(
                false,
                "the active controller wrote a {name} its image refuses: {e}"
            );
            tracing::error!("the active controller wrote a {name} its image refuses: {e}");
        }
    }

    /// Writes `result` and parks its reply; a refused append answers with the error.
    fn complete<T>(
        &mut self,
        appender: &mut dyn MetadataAppender,
        request: &InboundRequest,
        result: ControllerResult<T>,
        into_body: impl FnOnce(T) -> ResponseBody,
        outputs: &mut VecDeque<ControllerOutput>,
    ) -> Option<i64> {
        let request_id = request.request_id;
        let refuse = |error: ApiError, outputs: &mut VecDeque<ControllerOutput>| {
            outputs.push_back(ControllerOutput::Respond {
                request_id,
                body: error_response(&request.body, request.api_version, &error),
            });
        };
        if result.records.is_empty() {
            // Nothing to write: the answer still waits for everything written before it, so
            // it never reports state that could be lost.
            self.park(self.last_write_offset, request, into_body(result.response));
            return None;
        }
        let values = match encode_records(&result.records) {
            Ok(v) => v,
            Err(e) => {
                tracing::error!("cannot encode the records of a controller write: {e}");
                refuse(
                    ApiError::new(super::errors::UNKNOWN_SERVER_ERROR, e.to_string()),
                    outputs,
                );
                return None;
            }
        };
        match self.append(appender, values) {
            Ok(last) => {
                let count = result.records.len() as i64;
                for (i, r) in result.records.into_iter().enumerate() {
                    self.replay(last - count + 1 + i as i64, r.record);
                }
                self.check_invariants();
                self.park(last, request, into_body(result.response));
                Some(last)
            }
            Err(ControllerError::Propose(e)) => {
                refuse(propose_error(&e), outputs);
                None
            }
            Err(e) => {
                tracing::error!("controller write failed: {e}");
                self.lost_leadership = true;
                refuse(not_controller(None), outputs);
                None
            }
        }
    }

    /// Writes records that answer no request (fencing, activation follow-ups).
    fn write_unanswered(&mut self, appender: &mut dyn MetadataAppender, records: Vec<RecordOut>) {
        if records.is_empty() {
            return;
        }
        let result = encode_records(&records);
        let outcome = result.and_then(|values| self.append(appender, values));
        match outcome {
            Ok(last) => {
                let count = records.len() as i64;
                for (i, r) in records.into_iter().enumerate() {
                    self.replay(last - count + 1 + i as i64, r.record);
                }
                self.check_invariants();
            }
            Err(e) => tracing::warn!("controller write failed: {e}"),
        }
    }

    fn park(&mut self, offset: i64, request: &InboundRequest, body: ResponseBody) {
        // Kafka answers a lost leadership with the request's error answer; for these the
        // reply alone cannot rebuild it (its order or fields differ).
        let keep_request = matches!(
            request.body,
            RequestBody::ElectLeaders(_)
                | RequestBody::AlterClientQuotas(_)
                | RequestBody::CreateDelegationToken(_)
                | RequestBody::RenewDelegationToken(_)
                | RequestBody::ExpireDelegationToken(_)
        );
        self.parked.push_back(Parked {
            offset,
            request_id: request.request_id,
            body,
            request: keep_request.then(|| (request.api_version, request.body.clone())),
        });
    }

    /// Releases the replies whose records are below `high_watermark`.
    pub(super) fn release_committed(
        &mut self,
        high_watermark: i64,
        outputs: &mut VecDeque<ControllerOutput>,
    ) {
        // Parked in offset order (every write's offset is after the previous one's).
        while self
            .parked
            .front()
            .is_some_and(|p| p.offset < high_watermark)
        {
            if let Some(p) = self.parked.pop_front() {
                outputs.push_back(ControllerOutput::Respond {
                    request_id: p.request_id,
                    body: p.body,
                });
            }
        }
    }

    /// When the committed image has replayed everything this epoch wrote, it must equal the
    /// speculative one (both applied the same records).
    pub(super) fn check_against_committed(&self, committed: &MetadataImage) {
        if self.last_write_offset < 0 || committed.next_offset <= self.last_write_offset {
            return;
        }
        if committed.open_transaction.is_some() || self.image.open_transaction.is_some() {
            return;
        }
        // The whole comparison costs the size of the image: debug and simulation builds make
        // it; release builds compare what is kept cheaply (the partition counts stand in for
        // the partitions).
        let same = committed.features == self.image.features
            && committed.brokers == self.image.brokers
            && committed.controllers == self.image.controllers
            && committed.partition_stats == self.image.partition_stats
            && committed.topic_ids.len() == self.image.topic_ids.len()
            && committed.next_producer_id == self.image.next_producer_id
            && (!cfg!(debug_assertions)
                || (committed.topics == self.image.topics
                    && committed.configs == self.image.configs));
        if !same {
            debug_assert!(same, "speculative image differs from the committed image");
            tracing::error!(
                "the speculative image differs from the committed image at offset {}",
                committed.next_offset
            );
        }
    }

    /// Holds once again the topics whose records the committed image has replayed since
    /// (their copies in the two images are equal then).
    pub(super) fn share_committed(&mut self, committed: &MetadataImage) {
        self.sharing.share_committed(&mut self.image, committed);
    }

    /// Leadership lost: every parked reply gets NOT_CONTROLLER (Kafka's `renounce`).
    pub(super) fn renounce(
        &mut self,
        leader_id: Option<i32>,
        outputs: &mut VecDeque<ControllerOutput>,
    ) {
        let error = not_controller(leader_id);
        for p in self.parked.drain(..) {
            let body = match &p.request {
                Some((version, request)) => error_response(request, *version, &error),
                None => not_controller_body(&p.body, &error),
            };
            outputs.push_back(ControllerOutput::Respond {
                request_id: p.request_id,
                body,
            });
        }
    }

    /// Fences every broker whose session has expired (Kafka 4.1's periodic
    /// `maybeFenceStaleBroker`, each fencing its own batch). An expired entry of an older
    /// epoch, or of a broker already fenced, is dropped without records.
    pub(super) fn fence_stale_brokers(
        &mut self,
        now_ms: u64,
        cfg: &ControllerConfig,
        appender: &mut dyn MetadataAppender,
    ) {
        for (broker_id, epoch) in self
            .heartbeats
            .remove_expired(now_ms, cfg.broker_session_timeout_ms)
        {
            if self.lost_leadership {
                return;
            }
            let current = self.image.brokers.get(&broker_id);
            match current {
                Some(b) if b.broker_epoch == epoch && !b.fenced => {}
                _ => continue,
            }
            tracing::info!(
                "Fencing broker {broker_id} at epoch {epoch} because its session has timed out."
            );
            let records = replication::broker_fenced(&self.image, cfg, broker_id);
            self.heartbeats.fence(broker_id);
            self.write_unanswered(appender, records);
        }
    }

    /// After a write (Kafka's `maybeScheduleNextBalancePartitionLeaders`): with balancing on,
    /// none due yet and some partition not led by its preferred replica, the balancing is due
    /// after the check interval (10 ms when the last run hit its limit).
    pub(super) fn maybe_schedule_balance(&mut self, now_ms: u64, cfg: &ControllerConfig) {
        if self.balance_at_ms.is_some() || self.balanced_at_offset == Some(self.last_write_offset) {
            return;
        }
        let Some(interval_ms) = cfg.leader_imbalance_check_interval_ms() else {
            return;
        };
        if !replication::are_partition_leaders_imbalanced(&self.image) {
            self.balanced_at_offset = Some(self.last_write_offset);
            return;
        }
        let delay_ms = if self.balance_again_soon {
            BALANCE_AGAIN_MS
        } else {
            interval_ms
        };
        self.balance_at_ms = Some(now_ms.saturating_add(delay_ms));
    }

    /// Schedules the expired-token sweep one check interval from `now_ms` when tokens are on
    /// and the image's metadata.version holds them (Kafka's
    /// `maybeScheduleNextExpiredDelegationTokenSweep`).
    pub(super) fn maybe_schedule_token_sweep(&mut self, now_ms: u64, cfg: &ControllerConfig) {
        let tokens = cfg.delegation_tokens.as_ref();
        self.token_sweep_at_ms = delegation_tokens::sweep_enabled(&self.image, tokens)
            .then(|| tokens.map(|t| now_ms.saturating_add(t.expiry_check_interval_ms)))
            .flatten();
    }

    /// The sweep, when due by `now_ms`: a RemoveDelegationTokenRecord for every committed
    /// token past its expiry, written unanswered; the next sweep scheduled first.
    pub(super) fn maybe_sweep_tokens(
        &mut self,
        now_ms: u64,
        cfg: &ControllerConfig,
        committed: &MetadataImage,
        appender: &mut dyn MetadataAppender,
    ) {
        if self.lost_leadership || self.token_sweep_at_ms.is_none_or(|at| at > now_ms) {
            return;
        }
        self.maybe_schedule_token_sweep(now_ms, cfg);
        let now = i64::try_from(now_ms).unwrap_or(i64::MAX);
        let records = delegation_tokens::sweep_expired(committed, now);
        self.write_unanswered(appender, records);
    }

    /// The balancing, when due by `now_ms` (Kafka's `maybeBalancePartitionLeaders` event):
    /// preferred elections, their records written unanswered.
    pub(super) fn maybe_balance(
        &mut self,
        now_ms: u64,
        cfg: &ControllerConfig,
        appender: &mut dyn MetadataAppender,
    ) {
        if self.lost_leadership || self.balance_at_ms.is_none_or(|at| at > now_ms) {
            return;
        }
        self.balance_at_ms = None;
        let result = replication::balance_partition_leaders(
            &self.image,
            cfg,
            replication::elect_leaders::MAX_ELECTIONS_PER_IMBALANCE,
        );
        tracing::info!(
            "maybeBalancePartitionLeaders: generated {} records.{}",
            result.records.len(),
            if result.response {
                " Rescheduling immediately."
            } else {
                ""
            }
        );
        self.balance_again_soon = result.response;
        self.write_unanswered(appender, result.records);
        self.maybe_schedule_balance(now_ms, cfg);
    }

    /// Serves one controller request.
    pub(super) fn handle_request(
        &mut self,
        env: Env<'_>,
        rng: &mut Rng,
        quotas: &mut MutationQuotas,
        appender: &mut dyn MetadataAppender,
        request: InboundRequest,
        outputs: &mut VecDeque<ControllerOutput>,
    ) {
        let Env {
            now_ms,
            cfg,
            committed,
            broker_loggers,
        } = env;
        let next_offset = appender.next_write_offset().unwrap_or(-1);
        let version = request.api_version;
        let alter_ctx = |request: &InboundRequest| configuration::AlterContext {
            node_id: cfg.node_id,
            forwarded: request.forwarded,
            release: cfg.release,
        };
        match &request.body {
            RequestBody::BrokerRegistration(req) => {
                let result = cluster::register_broker(
                    &self.image,
                    cfg,
                    &self.heartbeats,
                    now_ms,
                    req,
                    version,
                    next_offset,
                );
                let registered = result.registered;
                let result = result.result;
                let written = self
                    .complete(
                        appender,
                        &request,
                        result,
                        ResponseBody::BrokerRegistration,
                        outputs,
                    )
                    .is_some();
                if let (true, Some((broker_id, fenced))) = (written, registered) {
                    self.heartbeats.register(broker_id, fenced);
                }
            }
            RequestBody::BrokerHeartbeat(req) => {
                let broker_id = req.broker_id.0;
                self.heartbeats
                    .track_contact(broker_id, req.broker_epoch, now_ms);
                let outcome = replication::process_broker_heartbeat(
                    &self.image,
                    cfg,
                    &self.registration_offsets,
                    &self.heartbeats,
                    req,
                );
                match outcome {
                    Err(e) => {
                        // A stale heartbeat still counts as contact (Kafka touches the broker
                        // before it answers with the error only for timeouts).
                        outputs.push_back(ControllerOutput::Respond {
                            request_id: request.request_id,
                            body: error_response(&request.body, version, &e),
                        });
                    }
                    Ok(hb) => {
                        let next = hb.next;
                        self.heartbeats.touch(
                            broker_id,
                            next.fenced(),
                            req.current_metadata_offset,
                        );
                        let offset = self.complete(
                            appender,
                            &request,
                            hb.result,
                            ResponseBody::BrokerHeartbeat,
                            outputs,
                        );
                        if next.in_controlled_shutdown() {
                            let end = offset.unwrap_or(self.last_write_offset);
                            self.heartbeats.enter_controlled_shutdown(broker_id, end);
                        }
                    }
                }
            }
            RequestBody::UnregisterBroker(req) => {
                let result = cluster::unregister_broker(&self.image, cfg, req.broker_id.0);
                if self
                    .complete(
                        appender,
                        &request,
                        result,
                        ResponseBody::UnregisterBroker,
                        outputs,
                    )
                    .is_some()
                {
                    self.heartbeats.remove(req.broker_id.0);
                }
            }
            RequestBody::UnregisterController(req) => {
                let result = cluster::unregister_controller(&self.image, cfg, req.controller_id);
                self.complete(
                    appender,
                    &request,
                    result,
                    ResponseBody::UnregisterController,
                    outputs,
                );
            }
            RequestBody::ControllerRegistration(req) => {
                let result = cluster::register_controller(&self.image, req);
                self.complete(
                    appender,
                    &request,
                    result,
                    ResponseBody::ControllerRegistration,
                    outputs,
                );
            }
            RequestBody::AllocateProducerIds(req) => {
                let result = producer_ids::allocate(&self.image, req);
                self.complete(
                    appender,
                    &request,
                    result,
                    ResponseBody::AllocateProducerIds,
                    outputs,
                );
            }
            RequestBody::CreateTopics(req) => {
                let checker = super::authorization::Checker::new(
                    cfg.authorizer.as_ref(),
                    committed,
                    &request,
                );
                let (kept, refused) = match &checker {
                    Some(c) => super::authorization::create_topics_access(c, req),
                    None => (None, Vec::new()),
                };
                let mut quota = mutation_quota(quotas, committed, &request, 6, now_ms);
                let mut result = replication::create_topics(
                    &self.image,
                    cfg,
                    rng,
                    kept.as_ref().unwrap_or(req),
                    &mut quota,
                );
                result.response.throttle_time_ms = quota.throttle_time_ms();
                if let Some(c) = &checker {
                    result.response =
                        super::authorization::finish_create_topics(c, result.response, &refused);
                }
                self.complete(
                    appender,
                    &request,
                    result,
                    ResponseBody::CreateTopics,
                    outputs,
                );
            }
            RequestBody::DeleteTopics(req) => {
                let mut quota = mutation_quota(quotas, committed, &request, 5, now_ms);
                let checker = Checker::new(cfg.authorizer.as_ref(), committed, &request);
                let mut result = replication::delete_topics(
                    committed,
                    &self.image,
                    cfg,
                    rng,
                    Allowance {
                        quota: &mut quota,
                        access: ResourceAccess::new(checker.as_ref()),
                    },
                    req,
                    version,
                );
                result.response.throttle_time_ms = quota.throttle_time_ms();
                self.complete(
                    appender,
                    &request,
                    result,
                    ResponseBody::DeleteTopics,
                    outputs,
                );
            }
            RequestBody::CreatePartitions(req) => {
                let mut quota = mutation_quota(quotas, committed, &request, 3, now_ms);
                let checker = Checker::new(cfg.authorizer.as_ref(), committed, &request);
                let mut result = replication::create_partitions(
                    &self.image,
                    cfg.release,
                    rng,
                    req,
                    Allowance {
                        quota: &mut quota,
                        access: ResourceAccess::new(checker.as_ref()),
                    },
                );
                result.response.throttle_time_ms = quota.throttle_time_ms();
                self.complete(
                    appender,
                    &request,
                    result,
                    ResponseBody::CreatePartitions,
                    outputs,
                );
            }
            RequestBody::UpdateFeatures(req) => {
                match super::feature_control::update_features(
                    &self.image,
                    cfg,
                    appender,
                    self.epoch,
                    req,
                    version,
                ) {
                    Ok(result) => {
                        self.complete(
                            appender,
                            &request,
                            result,
                            ResponseBody::UpdateFeatures,
                            outputs,
                        );
                    }
                    Err(error) => {
                        // Kafka's handleEventException: the answer is the error alone, and
                        // the controller renounces, resigning the Raft leadership.
                        outputs.push_back(ControllerOutput::Respond {
                            request_id: request.request_id,
                            body: ResponseBody::UpdateFeatures(
                                crate::codec::error_response::update_features_error(&error),
                            ),
                        });
                        self.lost_leadership = true;
                        appender.resign(self.epoch);
                    }
                }
            }
            RequestBody::AlterPartitionReassignments(req) => {
                let result =
                    replication::alter_partition_reassignments(&self.image, cfg, req, version);
                self.complete(
                    appender,
                    &request,
                    result,
                    ResponseBody::AlterPartitionReassignments,
                    outputs,
                );
            }
            RequestBody::IncrementalAlterConfigs(req) => {
                let checker = Checker::new(cfg.authorizer.as_ref(), committed, &request);
                let result = configuration::incremental_alter_configs(
                    &self.image,
                    alter_ctx(&request),
                    req,
                    broker_loggers,
                    ResourceAccess::new(checker.as_ref()),
                );
                self.complete(
                    appender,
                    &request,
                    result,
                    ResponseBody::IncrementalAlterConfigs,
                    outputs,
                );
            }
            RequestBody::AlterConfigs(req) => {
                let checker = Checker::new(cfg.authorizer.as_ref(), committed, &request);
                let result = configuration::legacy_alter_configs(
                    &self.image,
                    alter_ctx(&request),
                    req,
                    ResourceAccess::new(checker.as_ref()),
                );
                self.complete(
                    appender,
                    &request,
                    result,
                    ResponseBody::AlterConfigs,
                    outputs,
                );
            }
            RequestBody::AlterPartition(req) => {
                let result = replication::alter_partition(&self.image, cfg, req, version);
                self.complete(
                    appender,
                    &request,
                    result,
                    ResponseBody::AlterPartition,
                    outputs,
                );
            }
            RequestBody::ElectLeaders(req) => {
                match replication::elect_leaders(&self.image, cfg, req) {
                    Ok(result) => {
                        self.complete(
                            appender,
                            &request,
                            result,
                            ResponseBody::ElectLeaders,
                            outputs,
                        );
                    }
                    // Kafka's event fails: the error on every partition asked for, at once.
                    Err(e) => outputs.push_back(ControllerOutput::Respond {
                        request_id: request.request_id,
                        body: error_response(&request.body, version, &e),
                    }),
                }
            }
            RequestBody::AssignReplicasToDirs(req) => {
                let result = replication::assign_replicas_to_dirs(&self.image, cfg, req);
                self.complete(
                    appender,
                    &request,
                    result,
                    ResponseBody::AssignReplicasToDirs,
                    outputs,
                );
            }
            RequestBody::CreateAcls(req) => {
                let result = super::acls::create_acls(&self.image, rng, req);
                self.complete(
                    appender,
                    &request,
                    result,
                    ResponseBody::CreateAcls,
                    outputs,
                );
            }
            RequestBody::DeleteAcls(req) => {
                let result = super::acls::delete_acls(&self.image, req);
                self.complete(
                    appender,
                    &request,
                    result,
                    ResponseBody::DeleteAcls,
                    outputs,
                );
            }
            RequestBody::AlterClientQuotas(req) => {
                let result = super::client_quotas::alter_client_quotas(&self.image, req);
                self.complete(
                    appender,
                    &request,
                    result,
                    ResponseBody::AlterClientQuotas,
                    outputs,
                );
            }
            RequestBody::CreateDelegationToken(req) => {
                let token_id =
                    crate::common::uuid::uuid_to_kafka_string(&replication::random_topic_id(rng));
                let ctx = token_context(cfg, &request, now_ms);
                let result = delegation_tokens::create(&self.image, ctx, version, req, token_id);
                self.complete(
                    appender,
                    &request,
                    result,
                    ResponseBody::CreateDelegationToken,
                    outputs,
                );
            }
            RequestBody::RenewDelegationToken(req) => {
                let ctx = token_context(cfg, &request, now_ms);
                let result = delegation_tokens::renew(&self.image, committed, ctx, req);
                self.complete(
                    appender,
                    &request,
                    result,
                    ResponseBody::RenewDelegationToken,
                    outputs,
                );
            }
            RequestBody::ExpireDelegationToken(req) => {
                let ctx = token_context(cfg, &request, now_ms);
                let result = delegation_tokens::expire(&self.image, committed, ctx, req);
                self.complete(
                    appender,
                    &request,
                    result,
                    ResponseBody::ExpireDelegationToken,
                    outputs,
                );
            }
            RequestBody::AlterUserScramCredentials(req) => {
                let result = super::scram::alter_credentials(&self.image, req);
                self.complete(
                    appender,
                    &request,
                    result,
                    ResponseBody::AlterUserScramCredentials,
                    outputs,
                );
            }
            other => {
                let error = ApiError::new(
                    super::errors::UNSUPPORTED_VERSION,
                    format!("{:?} is not served by the controller", other.api_key()),
                );
                outputs.push_back(ControllerOutput::Respond {
                    request_id: request.request_id,
                    body: error_response(&request.body, version, &error),
                });
            }
        }
    }
}

/// Keeps the offset of each broker's RegisterBrokerRecord, as Kafka's
/// `ClusterControlManager.registerBrokerRecordOffsets` does on replay.
pub(super) fn track_registration(
    offsets: &mut BTreeMap<i32, i64>,
    offset: i64,
    record: &MetadataRecord,
) {
    match record {
        MetadataRecord::RegisterBroker(r) => {
            offsets.insert(r.broker_id, offset);
        }
        MetadataRecord::UnregisterBroker(r) => {
            offsets.remove(&r.broker_id);
        }
        _ => {}
    }
}
