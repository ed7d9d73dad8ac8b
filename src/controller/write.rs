//! The active controller's write path, written once (Kafka's `QuorumController` write events
//! and their purgatory, `DeferredEventQueue`):
//!
//! ```text
//!   ControllerResult{records, reply} ─▶ encode ─▶ append (≤ 10,000 records a batch, epoch
//!        checked; offsets checked against the prediction) ─▶ replay into the speculative
//!        image ─▶ invariants (debug builds) ─▶ park (last offset, reply)
//!   high watermark ─▶ replies with offset < hw released, in offset order
//!   committed image at the last write offset ─▶ must equal the speculative image
//!   resignation ─▶ every parked reply NOT_CONTROLLER (Kafka's `renounce`)
//! ```
//!
//! A request's records, the activation records and the periodic tasks' records (no reply)
//! all go through [`ActiveController::append_and_replay`]; replay is the only mutation.

use std::collections::VecDeque;

use bytes::Bytes;

use super::active::{ActiveController, Parked};
use super::answers::{not_controller, not_controller_body};
use super::errors::{self, ApiError, ControllerError};
use super::io::{ControllerOutput, MetadataAppender};
use super::result::{ControllerResult, RecordOut, MAX_RECORDS_PER_USER_OP};
use crate::codec::error_response::error_response;
use crate::codec::{RequestBody, ResponseBody};
use crate::metadata::image::MetadataImage;
use crate::metadata::record::MetadataRecord;
use crate::raft::{InboundRequest, ProposeError};

/// Kafka's `MAX_RECORDS_PER_BATCH`.
const MAX_RECORDS_PER_BATCH: usize = MAX_RECORDS_PER_USER_OP;

/// Encodes `records` as record values (frame included).
pub(crate) fn encode_records(records: &[RecordOut]) -> Result<Vec<Bytes>, ControllerError> {
    records
        .iter()
        .map(|r| {
            r.record
                .encode_at(r.version)
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

impl ActiveController {
    /// Appends encoded `values` (already checked by the activation) and replays them into
    /// the speculative image; the last offset.
    pub(super) fn write_records(
        &mut self,
        appender: &mut dyn MetadataAppender,
        values: Vec<Bytes>,
    ) -> Result<i64, ControllerError> {
        let records: Vec<MetadataRecord> = values
            .iter()
            .map(|v| MetadataRecord::decode(v))
            .collect::<Result<_, _>>()?;
        self.append_and_replay(appender, values, records)
    }

    /// Encodes a manager's `records`, appends and replays them, and checks the invariants
    /// every write keeps; the last offset.
    fn write(
        &mut self,
        appender: &mut dyn MetadataAppender,
        records: Vec<RecordOut>,
    ) -> Result<i64, ControllerError> {
        let values = encode_records(&records)?;
        let last = self.append_and_replay(
            appender,
            values,
            records.into_iter().map(|r| r.record).collect(),
        )?;
        self.check_invariants();
        Ok(last)
    }

    /// THE write: `values` appended (in batches), then `records` (the same, decoded)
    /// replayed into the speculative image at the offsets they were given; the last offset.
    fn append_and_replay(
        &mut self,
        appender: &mut dyn MetadataAppender,
        values: Vec<Bytes>,
        records: Vec<MetadataRecord>,
    ) -> Result<i64, ControllerError> {
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
    /// partition is led by an unregistered broker, nor by a fenced one (except by 4.0's rule,
    /// [`ActiveController::fenced_leader_possible`]), a leader is in its ISR, the ISR is a
    /// non-empty subset of the replicas.
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
                        broker.is_some_and(|b| !b.fenced || self.fenced_leader_possible),
                        "partition led by a fenced or unknown broker: {}",
                        where_()
                    );
                    assert!(
                        p.isr().contains(&p.leader),
                        "leader out of its ISR: {}",
                        where_()
                    );
                }
                assert!(
                    elr || !p.isr().is_empty(),
                    "empty ISR without ELR: {}",
                    where_()
                );
                assert!(
                    p.isr().iter().all(|r| p.replicas().contains(r)),
                    "ISR member that is not a replica: {}",
                    where_()
                );
            }
        }
    }

    fn replay(&mut self, offset: i64, record: MetadataRecord) {
        super::active::track_registration(&mut self.registration_offsets, offset, &record);
        self.sharing.written(offset, &record);
        let name = record.name();
        let registration_change = match &record {
            MetadataRecord::BrokerRegistrationChange(r) => Some(r.broker_id),
            MetadataRecord::FenceBroker(r) => Some(r.id),
            MetadataRecord::UnfenceBroker(r) => Some(r.id),
            _ => None,
        };
        if let Err(e) = self.image.replay(record) {
            // The manager built this record from this image: its refusal is a bug.
            debug_assert!(
                false,
                "the active controller wrote a {name} its image refuses: {e}"
            );
            tracing::error!("the active controller wrote a {name} its image refuses: {e}");
            return;
        }
        // Kafka's replay of a registration change re-registers the broker's session (see
        // `BrokerHeartbeatManager::replayed_registration_change`).
        if let Some(id) = registration_change {
            if let Some(b) = self.image.brokers.get(&id) {
                self.heartbeats.replayed_registration_change(id, b.fenced);
            }
        }
    }

    /// Writes `result` and parks its reply; a refused append answers with the error.
    pub(super) fn complete<T>(
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
        match self.write(appender, result.records) {
            Ok(last) => {
                self.park(last, request, into_body(result.response));
                Some(last)
            }
            Err(ControllerError::Encode(e)) => {
                tracing::error!("cannot encode the records of a controller write: {e}");
                refuse(
                    ApiError::new(super::errors::UNKNOWN_SERVER_ERROR, e.to_string()),
                    outputs,
                );
                None
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
    pub(super) fn write_unanswered(
        &mut self,
        appender: &mut dyn MetadataAppender,
        records: Vec<RecordOut>,
    ) {
        if records.is_empty() {
            return;
        }
        if let Err(e) = self.write(appender, records) {
            tracing::warn!("controller write failed: {e}");
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
}
