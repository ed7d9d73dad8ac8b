//! The leader: epoch-start batch, write path with linger, high watermark, BeginQuorumEpoch
//! heartbeats and check-quorum.

use bytes::Bytes;
use kafka_protocol::messages::leader_change_message::Voter;
use kafka_protocol::messages::{BrokerId, LeaderChangeMessage};

use super::core::RaftCore;
use super::errors::ProposeError;
use super::io::{Destination, Output};
use super::log::LogReader;
use super::state::{ReplicaState, Role};
use super::types::{OffsetAndEpoch, VoterSet, MAX_BATCH_SIZE_BYTES};
use super::voters::voter_set_to_record;
use crate::records::batch::{build_control_batch, build_data_batch, RECORD_BATCH_OVERHEAD};
use crate::records::control::ControlRecord;

/// Most bytes a v2 record adds around its value when it has no key and no headers:
/// attributes, timestamp delta, key length and header count (1 byte each) and three varints
/// (offset delta, value length, record length; 5 bytes each at most). An upper bound keeps
/// every batch under [`MAX_BATCH_SIZE_BYTES`] without encoding it twice.
pub const RECORD_OVERHEAD_BOUND: usize = 4 + 3 * 5;

/// How many values of `value_bytes` bytes one proposal may carry: more than this cannot fit
/// one batch and is refused.
pub fn max_records_per_proposal(value_bytes: usize) -> usize {
    ((MAX_BATCH_SIZE_BYTES - RECORD_BATCH_OVERHEAD) / (value_bytes + RECORD_OVERHEAD_BOUND)).max(1)
}

/// The leader's high-watermark candidate (`LeaderState.maybeUpdateHighWatermark`): sort the
/// voters' end offsets descending (unknown last), take the one at index `voters / 2`; it counts
/// only once it is past the epoch start offset (the epoch's LeaderChange is on a majority).
/// Monotonicity is the caller's.
pub(super) fn majority_high_watermark(
    voter_end_offsets: &[Option<i64>],
    epoch_start_offset: i64,
) -> Option<i64> {
    let mut offsets: Vec<i64> = voter_end_offsets.iter().map(|o| o.unwrap_or(-1)).collect();
    offsets.sort_unstable_by(|a, b| b.cmp(a));
    let candidate = *offsets.get(voter_end_offsets.len() / 2)?;
    (candidate > epoch_start_offset).then_some(candidate)
}

impl RaftCore {
    /// Writes the LeaderChange control batch at the epoch start offset.
    pub(super) fn append_epoch_start_batch(&mut self, now_ms: u64, log: &dyn LogReader) {
        let Role::Leader(l) = &self.role else { return };
        let voters: Vec<Voter> = l
            .voters
            .keys()
            .map(|id| Voter::default().with_voter_id(*id))
            .collect();
        let granting: Vec<Voter> = l
            .granting_voters
            .iter()
            .map(|id| Voter::default().with_voter_id(*id))
            .collect();
        let message = LeaderChangeMessage::default()
            .with_version(0)
            .with_leader_id(BrokerId(self.local.id))
            .with_voters(voters)
            .with_granting_voters(granting);
        let epoch = l.epoch;
        let base = l.epoch_start_offset;
        let mut records = vec![ControlRecord::LeaderChange(message)];
        records.extend(self.epoch_start_voter_records());
        let next = base + records.len() as i64;
        match build_control_batch(base, epoch, now_ms as i64, &records) {
            Ok(batch) => self.append_as_leader(now_ms, log, Bytes::from(batch), next, epoch),
            Err(e) => tracing::error!("cannot build the epoch start batch: {e}"),
        }
    }

    /// With kraft.version ≥ 1 the epoch start batch also carries KRaftVersion and Voters
    /// records when the voters so far came only from the bootstrap snapshot, or when our own
    /// entry (listeners, supported kraft.version) differs (LeaderState's epoch-start rule).
    fn epoch_start_voter_records(&self) -> Vec<ControlRecord> {
        let kraft_version = self.history.kraft_version();
        if kraft_version < 1 {
            return Vec::new();
        }
        let voters = self.history.voters();
        let me = self.local_voter_node();
        let mine_differs = voters.get(self.local.id).is_some_and(|v| *v != me);
        if self.history.has_voters_record_in_log() && !mine_differs {
            return Vec::new();
        }
        let updated = if mine_differs {
            let my_id = me.key.id;
            VoterSet::new(
                voters
                    .nodes()
                    .filter(|n| n.key.id != my_id)
                    .cloned()
                    .chain([me]),
            )
        } else {
            voters.clone()
        };
        vec![
            ControlRecord::kraft_version(kraft_version),
            ControlRecord::Voters(voter_set_to_record(&updated)),
        ]
    }

    /// Appends control `records` as their own batch after any pending data (Kafka's
    /// `BatchAccumulator.appendVotersRecord` drains first); returns the first record's offset.
    pub(super) fn append_control_records(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        records: &[ControlRecord],
    ) -> Option<i64> {
        self.drain_pending(now_ms, log);
        let Role::Leader(l) = &self.role else {
            return None;
        };
        let epoch = l.epoch;
        let base = self.log_end(log).offset;
        match build_control_batch(base, epoch, now_ms as i64, records) {
            Ok(batch) => {
                let next = base + records.len() as i64;
                self.append_as_leader(now_ms, log, Bytes::from(batch), next, epoch);
                Some(base)
            }
            Err(e) => {
                tracing::error!("cannot build a control batch: {e}");
                None
            }
        }
    }

    /// Emits an append + flush of a leader batch ending before `next_offset`, then counts it.
    fn append_as_leader(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        batch: Bytes,
        next_offset: i64,
        epoch: i32,
    ) {
        let voters_before = self.history.last_voters_offset();
        self.history.apply(&batch);
        // A VotersRecord counts from the moment it is appended (KIP-853).
        if self.history.last_voters_offset() != voters_before {
            self.sync_leader_replica_states();
        }
        self.outputs
            .push_back(Output::AppendAsLeader { batch, epoch });
        self.outputs.push_back(Output::Flush);
        self.written_end = Some(OffsetAndEpoch::new(next_offset, epoch));
        let local = self.local;
        if let Role::Leader(l) = &mut self.role {
            // A leader that removed itself is tracked as an observer until it resigns, as
            // Kafka's LeaderState does (DescribeQuorum lists it there).
            let me = match l.voters.get_mut(&local.id) {
                Some(me) => me,
                None => l
                    .observers
                    .entry(local)
                    .or_insert_with(|| ReplicaState::new(local)),
            };
            me.record_fetch(next_offset, next_offset, now_ms);
        }
        self.maybe_update_leader_high_watermark(log);
        self.complete_parked_fetches_after_append(now_ms, log);
    }

    /// The offset the next proposed record gets (log end, this call's writes and the records
    /// lingering for the next batch included); `None` unless leading.
    pub(super) fn next_write_offset_inner(&self, log: &dyn LogReader) -> Option<i64> {
        let Role::Leader(l) = &self.role else {
            return None;
        };
        Some(self.log_end(log).offset + l.pending_records.len() as i64)
    }

    /// Queues records for the next batch of `epoch`; returns the offset the last one will
    /// have. Refused whole (no offset handed out) when this replica does not lead `epoch`,
    /// is shutting down, or the records cannot fit one batch.
    pub(super) fn accumulate(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        epoch: Option<i32>,
        records: Vec<Bytes>,
    ) -> Result<i64, ProposeError> {
        let current_epoch = self.role.epoch();
        if !matches!(self.role, Role::Leader(_)) || epoch.is_some_and(|e| e != current_epoch) {
            return Err(ProposeError::NotLeader {
                epoch: epoch.unwrap_or(current_epoch),
                current_epoch,
            });
        }
        if self.shutdown_deadline_ms.is_some() {
            return Err(ProposeError::ShuttingDown);
        }
        if records.is_empty() {
            return Err(ProposeError::Empty);
        }
        let size: usize = records
            .iter()
            .map(|r| r.len() + RECORD_OVERHEAD_BOUND)
            .sum();
        if RECORD_BATCH_OVERHEAD + size > MAX_BATCH_SIZE_BYTES {
            // Kafka's prepareAppend refuses a proposal that cannot fit one batch
            // (RecordBatchTooLargeException); it must never become an oversized batch.
            tracing::warn!(
                "refusing to append {} records of about {size} bytes: more than one batch holds ({MAX_BATCH_SIZE_BYTES} bytes)",
                records.len()
            );
            return Err(ProposeError::TooLarge {
                records: records.len(),
                bytes: size,
                max_bytes: MAX_BATCH_SIZE_BYTES,
            });
        }
        let needs_drain = matches!(&self.role, Role::Leader(l)
            if RECORD_BATCH_OVERHEAD + l.pending_bytes + size > MAX_BATCH_SIZE_BYTES);
        if needs_drain {
            self.drain_pending(now_ms, log);
        }
        let linger = self.cfg.append_linger_ms;
        let end = self.log_end(log).offset;
        let Role::Leader(l) = &mut self.role else {
            return Err(ProposeError::NotLeader {
                epoch: current_epoch,
                current_epoch,
            });
        };
        l.pending_bytes += size;
        l.pending_records.extend(records);
        if l.linger_deadline_ms.is_none() {
            l.linger_deadline_ms = Some(now_ms + linger);
        }
        let last = end + l.pending_records.len() as i64 - 1;
        if linger == 0 {
            self.drain_pending(now_ms, log);
        }
        Ok(last)
    }

    /// Writes the pending records as one batch.
    pub(super) fn drain_pending(&mut self, now_ms: u64, log: &dyn LogReader) {
        let end = self.log_end(log).offset;
        let Role::Leader(l) = &mut self.role else {
            return;
        };
        if l.pending_records.is_empty() {
            l.linger_deadline_ms = None;
            return;
        }
        let records = std::mem::take(&mut l.pending_records);
        l.pending_bytes = 0;
        l.linger_deadline_ms = None;
        let epoch = l.epoch;
        let values: Vec<&[u8]> = records.iter().map(|r| r.as_ref()).collect();
        match build_data_batch(end, epoch, now_ms as i64, &values) {
            Ok(batch) => {
                let next = end + records.len() as i64;
                self.append_as_leader(now_ms, log, Bytes::from(batch), next, epoch);
            }
            Err(e) => tracing::error!(
                "cannot build a data batch of {} records: {e}",
                records.len()
            ),
        }
    }

    /// Kafka's `maybeUpdateHighWatermark`: the majority-th largest voter end offset, once it
    /// is past the epoch start offset; never decreasing.
    pub(super) fn maybe_update_leader_high_watermark(&mut self, _log: &dyn LogReader) {
        let Role::Leader(l) = &self.role else { return };
        let offsets: Vec<Option<i64>> = l.voters.values().map(|r| r.end_offset).collect();
        if let Some(candidate) = majority_high_watermark(&offsets, l.epoch_start_offset) {
            let before = self.high_watermark;
            self.update_high_watermark(candidate);
            if self.high_watermark != before {
                self.complete_parked_fetches_after_high_watermark();
                self.voter_changes_on_high_watermark();
            }
        }
    }

    pub(super) fn poll_leader(&mut self, now_ms: u64, log: &dyn LogReader) {
        // A leader whose removal committed steps down (RemoveVoterHandler → requestResign).
        if matches!(&self.role, Role::Leader(l) if l.resign_requested) {
            self.transition_to_resigned(now_ms, log);
            return;
        }
        self.expire_voter_changes(now_ms);
        let linger_due = matches!(&self.role, Role::Leader(l) if l.linger_deadline_ms.is_some_and(|d| now_ms >= d));
        if linger_due {
            self.drain_pending(now_ms, log);
        }
        let local_id = self.local.id;
        let Role::Leader(l) = &mut self.role else {
            return;
        };
        // Check quorum (never for a lone voter). The leader counts towards the majority only
        // while it is a voter (it may have just removed itself).
        if now_ms >= l.check_quorum_deadline_ms {
            let majority = l.voters.len() / 2 + 1;
            let needed = if l.voters.contains_key(&local_id) {
                majority - 1
            } else {
                majority
            };
            if l.voters.len() == 1 || l.fetched_voters.len() >= needed {
                l.fetched_voters.clear();
                l.check_quorum_deadline_ms = now_ms + self.cfg.check_quorum_timeout_ms();
            } else {
                tracing::info!(
                    node_id = self.local.id,
                    "Did not receive fetch requests from a majority of voters within {} ms; resigning",
                    self.cfg.check_quorum_timeout_ms()
                );
                self.transition_to_resigned(now_ms, log);
                return;
            }
        }
        // BeginQuorumEpoch to every other voter, every fetch.timeout / 2.
        if now_ms >= l.begin_quorum_deadline_ms {
            l.begin_quorum_deadline_ms = now_ms + self.cfg.begin_quorum_epoch_period_ms();
            let voters: Vec<_> = self
                .history
                .voters()
                .nodes()
                .map(|n| n.key)
                .filter(|k| k.id != self.local.id)
                .collect();
            for voter in voters {
                if !self.requests.is_ready(voter.id, now_ms) {
                    continue;
                }
                let Some(endpoint) = self.voter_endpoint(voter.id) else {
                    continue;
                };
                let request = self.build_begin_quorum_epoch_request(voter);
                self.send(
                    now_ms,
                    Destination {
                        node_id: voter.id,
                        endpoint,
                    },
                    request,
                );
            }
        }
    }
}
