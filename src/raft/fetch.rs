//! Fetch, both sides. The leader validates, reads, tracks replicas and parks long polls; the
//! follower sends one Fetch at a time, appends (flushed before the next Fetch), truncates on
//! DivergingEpoch, and learns the high watermark.

use bytes::Bytes;
use kafka_protocol::messages::fetch_request::{
    FetchPartition, FetchTopic, ReplicaState as FetchReplicaState,
};
use kafka_protocol::messages::fetch_response::{
    EpochEndOffset, FetchableTopicResponse, LeaderIdAndEpoch, NodeEndpoint, PartitionData,
    SnapshotId,
};
use kafka_protocol::messages::{BrokerId, FetchRequest, FetchResponse, TopicName};
use kafka_protocol::protocol::StrBytes;

use super::core::{ParkedFetch, RaftCore};
use super::errors::{self, RaftError};
use super::io::{Destination, InboundRequest, Output};
use super::log::{validate_offset_and_epoch, LogReader, ValidOffsetAndEpoch};
use super::state::{ReplicaState, Role};
use super::types::{
    Endpoint, OffsetAndEpoch, ReplicaKey, MAX_BATCH_SIZE_BYTES, METADATA_PARTITION,
    METADATA_TOPIC_ID, METADATA_TOPIC_NAME,
};
use crate::codec::{RequestBody, ResponseBody};
use crate::records::framer::{BatchFramer, FrameEnd};

/// What the leader computed for one Fetch.
struct FetchOutcome {
    error: i16,
    records: Option<Bytes>,
    diverging: Option<OffsetAndEpoch>,
    snapshot: Option<OffsetAndEpoch>,
}

/// The id of the `index`th bootstrap server: -2, -3, … (-1 means "no node" on the wire).
fn bootstrap_id(index: usize) -> i32 {
    -2 - i32::try_from(index).unwrap_or(i32::MAX - 2)
}

fn is_bootstrap_id(node_id: i32) -> bool {
    node_id <= -2
}

fn fetch_is_for_metadata_partition(body: &FetchRequest) -> bool {
    let [topic] = body.topics.as_slice() else {
        return false;
    };
    let [partition] = topic.partitions.as_slice() else {
        return false;
    };
    topic.topic_id == METADATA_TOPIC_ID && partition.partition == METADATA_PARTITION
}

impl RaftCore {
    // ---- leader side ------------------------------------------------------------------

    pub(super) fn handle_fetch_request(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        req: &InboundRequest,
        body: &FetchRequest,
    ) {
        if !self.valid_cluster_id(&body.cluster_id) {
            let resp = FetchResponse::default().with_error_code(errors::INCONSISTENT_CLUSTER_ID);
            return self.respond(req, ResponseBody::Fetch(resp));
        }
        if !fetch_is_for_metadata_partition(body) {
            let resp = FetchResponse::default().with_error_code(errors::INVALID_REQUEST);
            return self.respond(req, ResponseBody::Fetch(resp));
        }
        let p = &body.topics[0].partitions[0];
        if body.max_wait_ms < 0
            || p.fetch_offset < 0
            || p.last_fetched_epoch < 0
            || p.last_fetched_epoch > p.current_leader_epoch
        {
            let outcome = FetchOutcome {
                error: errors::INVALID_REQUEST,
                records: None,
                diverging: None,
                snapshot: None,
            };
            let resp = self.fetch_response(log, req, outcome);
            return self.respond(req, ResponseBody::Fetch(resp));
        }
        let replica_id = if req.api_version >= 15 {
            body.replica_state.replica_id.0
        } else {
            body.replica_id.0
        };
        let key = ReplicaKey::new(
            replica_id,
            if req.api_version >= 17 {
                p.replica_directory_id
            } else {
                uuid::Uuid::nil()
            },
        );
        let fetcher_hw =
            (req.api_version >= 18 && p.high_watermark != i64::MAX).then_some(p.high_watermark);
        let outcome = self.try_complete_fetch(now_ms, log, key, p, body.max_bytes);
        let must_answer = outcome.error != errors::NONE
            || outcome.records.as_ref().is_some_and(|r| !r.is_empty())
            || body.max_wait_ms == 0
            || outcome.diverging.is_some()
            || outcome.snapshot.is_some()
            || self.fetcher_high_watermark_behind(fetcher_hw);
        if must_answer {
            let resp = self.fetch_response(log, req, outcome);
            return self.respond(req, ResponseBody::Fetch(resp));
        }
        self.parked.push(ParkedFetch {
            request: req.clone(),
            fetch_offset: p.fetch_offset,
            fetcher_high_watermark: fetcher_hw,
            deadline_ms: now_ms + body.max_wait_ms as u64,
        });
    }

    fn fetcher_high_watermark_behind(&self, fetcher_hw: Option<i64>) -> bool {
        match (fetcher_hw, self.high_watermark) {
            (Some(theirs), Some(ours)) => theirs < ours,
            _ => false,
        }
    }

    /// Kafka's `tryCompleteFetchRequest`; `max_bytes` is the request's MaxBytes.
    fn try_complete_fetch(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        key: ReplicaKey,
        p: &FetchPartition,
        max_bytes: i32,
    ) -> FetchOutcome {
        if let Some(error) = self.validate_leader_only_request(p.current_leader_epoch) {
            return FetchOutcome {
                error,
                records: None,
                diverging: None,
                snapshot: None,
            };
        }
        if key.id == self.local.id {
            return FetchOutcome {
                error: errors::UNKNOWN_SERVER_ERROR,
                records: None,
                diverging: None,
                snapshot: None,
            };
        }
        if p.fetch_offset == 0 {
            if let Some(latest) = log
                .latest_snapshot_id()
                .filter(|id| *id != OffsetAndEpoch::new(0, 0))
            {
                return FetchOutcome {
                    error: errors::NONE,
                    records: None,
                    diverging: None,
                    snapshot: Some(latest),
                };
            }
        }
        match validate_offset_and_epoch(log, p.fetch_offset, p.last_fetched_epoch) {
            ValidOffsetAndEpoch::Snapshot(id) => FetchOutcome {
                error: errors::NONE,
                records: None,
                diverging: None,
                snapshot: Some(id),
            },
            ValidOffsetAndEpoch::Diverging(end) => FetchOutcome {
                error: errors::NONE,
                records: None,
                diverging: Some(end),
                snapshot: None,
            },
            ValidOffsetAndEpoch::Valid => {
                // Kafka 4.3 (KIP-1219) reads at most the follower's MaxBytes (still at least
                // one batch); before, always up to 8 MiB whatever it asked.
                let read_bytes = if self.cfg.leader_reads_fetch_max_bytes {
                    usize::try_from(max_bytes).unwrap_or(0)
                } else {
                    MAX_BATCH_SIZE_BYTES
                };
                let records = match log.read(p.fetch_offset, read_bytes) {
                    Ok(r) => r,
                    Err(e) => {
                        // Kafka's raft thread dies on a failed read of its own log; answering
                        // an empty read instead would look like no data.
                        self.set_fatal(e.into());
                        bytes::Bytes::new()
                    }
                };
                self.update_replica_state(now_ms, log, key, p.fetch_offset);
                FetchOutcome {
                    error: errors::NONE,
                    records: Some(records),
                    diverging: None,
                    snapshot: None,
                }
            }
        }
    }

    /// Records a voter's or observer's fetch position (may move the high watermark).
    fn update_replica_state(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        key: ReplicaKey,
        fetch_offset: i64,
    ) {
        if key.id < 0 {
            return;
        }
        let leader_end = self.log_end(log).offset;
        let is_voter = self.history.voters().is_voter(&key);
        let Role::Leader(l) = &mut self.role else {
            return;
        };
        if is_voter {
            if let Some(state) = l.voters.get_mut(&key.id) {
                // The state keeps the voter set's key, as Kafka's LeaderState does: a static
                // voter (kraft.version 0) shows no directory id even though its fetches carry
                // one.
                state.record_fetch(fetch_offset, leader_end, now_ms);
            }
            l.fetched_voters.insert(key.id);
            l.acknowledged.insert(key.id);
            self.maybe_update_leader_high_watermark(log);
        } else {
            l.observers
                .entry(key)
                .or_insert_with(|| ReplicaState::new(key))
                .record_fetch(fetch_offset, leader_end, now_ms);
        }
    }

    fn fetch_response(
        &self,
        log: &dyn LogReader,
        req: &InboundRequest,
        outcome: FetchOutcome,
    ) -> FetchResponse {
        let leader = self.role.leader_id(self.local.id).unwrap_or(-1);
        let mut partition = PartitionData::default()
            .with_partition_index(METADATA_PARTITION)
            .with_error_code(outcome.error)
            .with_high_watermark(if outcome.error == errors::NONE {
                self.high_watermark.unwrap_or(-1)
            } else {
                -1
            })
            .with_log_start_offset(log.log_start_offset())
            .with_current_leader(
                LeaderIdAndEpoch::default()
                    .with_leader_id(BrokerId(leader))
                    .with_leader_epoch(self.role.epoch()),
            )
            .with_records(Some(outcome.records.unwrap_or_default()));
        if let Some(d) = outcome.diverging {
            partition = partition.with_diverging_epoch(
                EpochEndOffset::default()
                    .with_epoch(d.epoch)
                    .with_end_offset(d.offset),
            );
        }
        if let Some(s) = outcome.snapshot {
            partition = partition.with_snapshot_id(
                SnapshotId::default()
                    .with_end_offset(s.offset)
                    .with_epoch(s.epoch),
            );
        }
        let mut resp =
            FetchResponse::default().with_responses(vec![FetchableTopicResponse::default()
                .with_topic(TopicName(StrBytes::from_static_str(METADATA_TOPIC_NAME)))
                .with_topic_id(METADATA_TOPIC_ID)
                .with_partitions(vec![partition])]);
        if req.api_version >= 17 && leader >= 0 {
            if let Some(ep) = self.leader_endpoint_for(leader, &req.listener_name) {
                resp = resp.with_node_endpoints(vec![NodeEndpoint::default()
                    .with_node_id(BrokerId(leader))
                    .with_host(StrBytes::from_string(ep.host))
                    .with_port(i32::from(ep.port))]);
            }
        }
        resp
    }

    /// Parked fetches that new data can now answer are released; they are answered on the
    /// next call, once the driver has carried out the append and the reader shows it.
    pub(super) fn complete_parked_fetches_after_append(
        &mut self,
        _now_ms: u64,
        log: &dyn LogReader,
    ) {
        let end = self.log_end(log).offset;
        let (ready, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.parked)
            .into_iter()
            .partition(|p| end > p.fetch_offset);
        self.parked = waiting;
        self.deferred_parked.extend(ready);
    }

    /// v18 fetchers whose high watermark is now behind ours are answered at once.
    pub(super) fn complete_parked_fetches_after_high_watermark(&mut self) {
        let hw = self.high_watermark;
        let (ready, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.parked)
            .into_iter()
            .partition(|p| matches!((p.fetcher_high_watermark, hw), (Some(theirs), Some(ours)) if theirs < ours));
        self.parked = waiting;
        self.deferred_parked.extend(ready);
    }

    fn answer_parked_fresh(&mut self, now_ms: u64, log: &dyn LogReader, parked: ParkedFetch) {
        let RequestBody::Fetch(body) = &parked.request.body else {
            return;
        };
        let body = body.clone();
        let p = &body.topics[0].partitions[0];
        let replica_id = if parked.request.api_version >= 15 {
            body.replica_state.replica_id.0
        } else {
            body.replica_id.0
        };
        let key = ReplicaKey::new(
            replica_id,
            if parked.request.api_version >= 17 {
                p.replica_directory_id
            } else {
                uuid::Uuid::nil()
            },
        );
        let outcome = self.try_complete_fetch(now_ms, log, key, p, body.max_bytes);
        let resp = self.fetch_response(log, &parked.request, outcome);
        self.respond(&parked.request, ResponseBody::Fetch(resp));
    }

    /// Answers parked fetches whose wait expired (with an empty, fresh answer), and those a
    /// high-watermark change released.
    pub(super) fn expire_parked_fetches(&mut self, now_ms: u64, log: &dyn LogReader) {
        let released = std::mem::take(&mut self.deferred_parked);
        for parked in released {
            self.answer_parked_fresh(now_ms, log, parked);
        }
        let (expired, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.parked)
            .into_iter()
            .partition(|p| now_ms >= p.deadline_ms);
        self.parked = waiting;
        for parked in expired {
            let outcome = FetchOutcome {
                error: errors::NONE,
                records: Some(Bytes::new()),
                diverging: None,
                snapshot: None,
            };
            let resp = self.fetch_response(log, &parked.request, outcome);
            self.respond(&parked.request, ResponseBody::Fetch(resp));
        }
    }

    /// On losing leadership every parked fetch gets NOT_LEADER_OR_FOLLOWER.
    pub(super) fn fail_parked_fetches(&mut self, log: &dyn LogReader) {
        let parked: Vec<_> = std::mem::take(&mut self.parked)
            .into_iter()
            .chain(std::mem::take(&mut self.deferred_parked))
            .collect();
        for p in parked {
            let outcome = FetchOutcome {
                error: errors::NOT_LEADER_OR_FOLLOWER,
                records: None,
                diverging: None,
                snapshot: None,
            };
            let resp = self.fetch_response(log, &p.request, outcome);
            self.respond(&p.request, ResponseBody::Fetch(resp));
        }
    }

    // ---- follower side ----------------------------------------------------------------

    pub(super) fn build_fetch_request(&self, log: &dyn LogReader) -> RequestBody {
        let end = self.log_end(log);
        let partition = FetchPartition::default()
            .with_partition(METADATA_PARTITION)
            .with_current_leader_epoch(self.role.epoch())
            .with_fetch_offset(end.offset)
            .with_last_fetched_epoch(end.epoch)
            .with_log_start_offset(-1)
            .with_partition_max_bytes(0)
            .with_replica_directory_id(self.local.directory_id)
            .with_high_watermark(self.high_watermark.unwrap_or(-1));
        RequestBody::Fetch(
            FetchRequest::default()
                .with_cluster_id(Some(StrBytes::from_string(self.cfg.cluster_id.clone())))
                .with_replica_state(
                    FetchReplicaState::default()
                        .with_replica_id(BrokerId(self.local.id))
                        .with_replica_epoch(-1),
                )
                .with_max_wait_ms(self.cfg.fetch_max_wait_ms())
                .with_min_bytes(0)
                .with_max_bytes(self.cfg.fetch_max_bytes)
                .with_isolation_level(0)
                .with_session_id(0)
                .with_session_epoch(-1)
                .with_topics(vec![FetchTopic::default()
                    .with_topic(TopicName(StrBytes::from_static_str(METADATA_TOPIC_NAME)))
                    .with_topic_id(METADATA_TOPIC_ID)
                    .with_partitions(vec![partition])]),
        )
    }

    pub(super) fn poll_follower(&mut self, now_ms: u64, log: &dyn LogReader) {
        let Role::Follower(f) = &self.role else {
            return;
        };
        if now_ms >= f.fetch_deadline_ms {
            if self.is_voter() {
                if f.leader_resigned {
                    tracing::info!(
                        node_id = self.local.id,
                        "Election backoff after leader {} resigned is over; starting a pre-vote",
                        f.leader_id
                    );
                } else {
                    tracing::info!(
                        node_id = self.local.id,
                        "No fetch from leader {} within {} ms; starting a pre-vote",
                        f.leader_id,
                        self.cfg.fetch_timeout_ms
                    );
                }
                self.transition_to_prospective(now_ms, log);
                return;
            }
            // Observers keep following but rediscover through the voters.
            self.maybe_send_discovery_fetch(now_ms, log);
            return;
        }
        let leader = f.leader_id;
        let endpoint = f.leader_endpoint.clone();
        if self.log_refresh_needed {
            return;
        }
        if self.maybe_send_update_voter(now_ms) || self.maybe_auto_join(now_ms) {
            return;
        }
        let fetching_snapshot = match &self.role {
            Role::Follower(f) => f.fetching_snapshot,
            _ => None,
        };
        // One Fetch at a time whatever its target: while a discovery Fetch to a bootstrap
        // server is out, the leader waits (KafkaRaftClient.maybeSendFetchToBestNode,
        // testObserverHandleRetryFetchToLeader).
        if self.requests.is_ready(leader, now_ms) && !self.requests.has_any_in_flight() {
            let request = match fetching_snapshot {
                Some((id, position)) => self.build_fetch_snapshot_request(id, position),
                None => self.build_fetch_request(log),
            };
            self.send(
                now_ms,
                Destination {
                    node_id: leader,
                    endpoint,
                },
                request,
            );
        } else if self.requests.is_backing_off(leader, now_ms) && !self.requests.has_any_in_flight()
        {
            // KAFKA-17030: while the leader is unreachable, fetch a bootstrap server instead.
            self.maybe_send_discovery_fetch(now_ms, log);
        }
    }

    /// Sends a Fetch to a random ready voter (or bootstrap server) to discover the leader,
    /// when nothing else is in flight.
    pub(super) fn maybe_send_discovery_fetch(&mut self, now_ms: u64, log: &dyn LogReader) {
        if self.requests.has_any_in_flight() {
            return;
        }
        // Kafka's RequestManager discovers through controller.quorum.bootstrap.servers when
        // they are configured (ids -2, -3, … in KafkaRaftClient's constructor), else through
        // the voters; never through a voter id when bootstrap servers exist, so a timed-out
        // leader connection and the retry through the same address are separate slots
        // (testObserverHandleRetryFetchtToBootstrapServer).
        let mut candidates: Vec<Destination> = if self.cfg.bootstrap_servers.is_empty() {
            self.history
                .voters()
                .nodes()
                .filter(|n| n.key.id != self.local.id)
                .filter_map(|n| {
                    self.voter_endpoint(n.key.id).map(|endpoint| Destination {
                        node_id: n.key.id,
                        endpoint,
                    })
                })
                .collect()
        } else {
            self.cfg
                .bootstrap_servers
                .iter()
                .enumerate()
                .map(|(i, endpoint)| Destination {
                    node_id: bootstrap_id(i),
                    endpoint: endpoint.clone(),
                })
                .collect()
        };
        candidates.retain(|d| self.requests.is_ready(d.node_id, now_ms));
        if candidates.is_empty() {
            return;
        }
        let pick = self.rng.below(candidates.len() as u64) as usize;
        let destination = candidates.swap_remove(pick);
        let request = self.build_fetch_request(log);
        self.send(now_ms, destination, request);
    }

    pub(super) fn on_fetch_failure(&mut self, _now_ms: u64, _node_id: i32) {
        // Backoff is recorded by the request manager; poll_follower picks the next target.
    }

    pub(super) fn handle_fetch_response(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        from: i32,
        resp: &FetchResponse,
    ) {
        if resp.error_code != errors::NONE {
            return self.handle_top_level_error(
                now_ms,
                from,
                kafka_protocol::messages::ApiKey::Fetch,
                resp.error_code,
            );
        }
        let partition = match resp.responses.as_slice() {
            [t] if t.topic_id == METADATA_TOPIC_ID => match t.partitions.as_slice() {
                [p] if p.partition_index == METADATA_PARTITION => p.clone(),
                _ => {
                    return self
                        .requests
                        .on_error(from, now_ms + self.cfg.retry_backoff_ms)
                }
            },
            _ => {
                return self
                    .requests
                    .on_error(from, now_ms + self.cfg.retry_backoff_ms)
            }
        };
        let leader_id = partition.current_leader.leader_id.0;
        let endpoint = resp
            .node_endpoints
            .iter()
            .find(|n| n.node_id.0 == leader_id)
            .and_then(|n| {
                u16::try_from(n.port).ok().map(|port| Endpoint {
                    host: n.host.to_string(),
                    port,
                })
            });
        if self.handle_common_response(
            now_ms,
            log,
            from,
            partition.error_code,
            leader_id,
            partition.current_leader.leader_epoch,
            endpoint,
        ) {
            return;
        }
        self.requests.on_success(from);
        let Role::Follower(f) = &mut self.role else {
            return;
        };
        // Only the leader answers a Fetch without error, so an answer through a bootstrap
        // server that names our leader is the leader's data (Kafka appends it too).
        if f.leader_id != from && !(is_bootstrap_id(from) && leader_id == f.leader_id) {
            return;
        }
        f.reset_fetch_timeout(now_ms, self.cfg.fetch_timeout_ms);
        f.has_fetched = true;
        if partition.diverging_epoch.epoch >= 0 {
            return self.truncate_to_diverging(
                log,
                OffsetAndEpoch::new(
                    partition.diverging_epoch.end_offset,
                    partition.diverging_epoch.epoch,
                ),
            );
        }
        if partition.snapshot_id.epoch >= 0 || partition.snapshot_id.end_offset >= 0 {
            return self.start_snapshot_download(
                now_ms,
                log,
                from,
                OffsetAndEpoch::new(
                    partition.snapshot_id.end_offset,
                    partition.snapshot_id.epoch,
                ),
            );
        }
        let records = partition.records.clone().unwrap_or_default();
        let epoch = self.role.epoch();
        if !records.is_empty() {
            match self.complete_batches_end(log, &records) {
                Some((bytes, end)) if !bytes.is_empty() => {
                    // Voter changes take effect as soon as they are appended (KIP-853).
                    self.history.apply(&bytes);
                    self.outputs.push_back(Output::AppendAsFollower {
                        records: bytes,
                        epoch,
                    });
                    // Voters' fetch offsets count as replicated: durable before the next Fetch.
                    self.outputs.push_back(Output::Flush);
                    self.written_end = Some(end);
                }
                Some(_) => {}
                None => {
                    tracing::warn!(
                        node_id = self.local.id,
                        "fetched records from {from} do not continue our log; refetching"
                    );
                    return;
                }
            }
        }
        if partition.high_watermark >= 0 {
            let hw = partition.high_watermark.min(self.log_end(log).offset);
            self.update_high_watermark(hw);
        }
    }

    /// The whole batches of `records` that continue our log, and the log end after them.
    fn complete_batches_end(
        &self,
        log: &dyn LogReader,
        records: &Bytes,
    ) -> Option<(Bytes, OffsetAndEpoch)> {
        let mut end = self.log_end(log);
        let mut framer = BatchFramer::new(records, 0, MAX_BATCH_SIZE_BYTES);
        let mut valid = 0usize;
        for (_, batch) in framer.by_ref() {
            if batch.base_offset() != end.offset {
                return None;
            }
            end = OffsetAndEpoch::new(batch.next_offset(), batch.partition_leader_epoch());
            valid += batch.size_bytes();
        }
        if let Some(FrameEnd::Corrupt { reason, .. }) = framer.end() {
            tracing::warn!(
                node_id = self.local.id,
                "fetched records end in a corrupt batch: {reason}"
            );
        }
        Some((records.slice(..valid), end))
    }

    /// Kafka's follower truncation on DivergingEpoch; never below the high watermark.
    fn truncate_to_diverging(&mut self, log: &dyn LogReader, diverging: OffsetAndEpoch) {
        let local_end = self.log_end(log);
        let truncate_to = if diverging.epoch == 0 {
            diverging.offset.min(local_end.offset)
        } else {
            let local = log.end_offset_for_epoch(diverging.epoch);
            if local.epoch == diverging.epoch {
                local.offset.min(diverging.offset)
            } else {
                local.offset
            }
        };
        if let Some(hw) = self.high_watermark {
            if truncate_to < hw {
                return self.set_fatal(RaftError::TruncateBelowHighWatermark {
                    truncate_to,
                    high_watermark: hw,
                });
            }
        }
        tracing::info!(
            node_id = self.local.id,
            "Truncating to offset {truncate_to} after diverging epoch {}@{}",
            diverging.offset,
            diverging.epoch
        );
        self.outputs.push_back(Output::Truncate {
            offset: truncate_to,
        });
        // Voter changes above the truncation point are rewound with the log.
        self.history.truncate(truncate_to);
        // The epoch of the new last record is the log's to tell: wait for the driver to carry
        // out the truncation before fetching again.
        self.written_end = None;
        self.log_refresh_needed = true;
    }
}
