//! DescribeQuorum (leader only) and serving FetchSnapshot.

use kafka_protocol::messages::describe_quorum_response::{self, Listener, Node};
use kafka_protocol::messages::fetch_snapshot_response::{self, LeaderIdAndEpoch};
use kafka_protocol::messages::{
    BrokerId, DescribeQuorumRequest, DescribeQuorumResponse, FetchSnapshotRequest,
    FetchSnapshotResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::core::RaftCore;
use super::errors;
use super::io::InboundRequest;
use super::log::LogReader;
use super::state::{ReplicaState, Role};
use super::types::{
    OffsetAndEpoch, MAX_BATCH_SIZE_BYTES, METADATA_PARTITION, METADATA_TOPIC_NAME,
    OBSERVER_SESSION_TIMEOUT_MS,
};
use super::validation::is_metadata_partition;
use crate::codec::ResponseBody;

fn topic_name() -> TopicName {
    TopicName(StrBytes::from_static_str(METADATA_TOPIC_NAME))
}

impl RaftCore {
    pub(super) fn handle_describe_quorum_request(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        req: &InboundRequest,
        body: &DescribeQuorumRequest,
    ) {
        let error_partition = |error: i16, message: &str| {
            DescribeQuorumResponse::default().with_topics(vec![
                describe_quorum_response::TopicData::default()
                    .with_topic_name(topic_name())
                    .with_partitions(vec![describe_quorum_response::PartitionData::default()
                        .with_partition_index(METADATA_PARTITION)
                        .with_error_code(error)
                        .with_error_message(Some(StrBytes::from_string(message.to_string())))]),
            ])
        };
        if !is_metadata_partition(
            &body.topics,
            |t| &t.topic_name,
            |t| &t.partitions,
            |p| p.partition_index,
        ) {
            let resp = error_partition(
                errors::UNKNOWN_TOPIC_OR_PARTITION,
                "The topic or partition does not exist on this broker.",
            );
            return self.respond(req, ResponseBody::DescribeQuorum(resp));
        }
        let Role::Leader(l) = &self.role else {
            let resp = error_partition(
                errors::NOT_LEADER_OR_FOLLOWER,
                "This node is not the leader of the metadata partition.",
            );
            return self.respond(req, ResponseBody::DescribeQuorum(resp));
        };
        let leader_end = self.log_end(log).offset;
        let describe = |r: &ReplicaState, is_leader: bool| {
            let mut s = describe_quorum_response::ReplicaState::default()
                .with_replica_id(BrokerId(r.key.id))
                .with_log_end_offset(if is_leader {
                    leader_end
                } else {
                    r.end_offset.unwrap_or(-1)
                });
            if req.api_version >= 1 {
                let (fetch, caught_up) = if is_leader {
                    (now_ms as i64, now_ms as i64)
                } else {
                    (
                        r.last_fetch_ms.map_or(-1, |t| t as i64),
                        r.last_caught_up_ms.map_or(-1, |t| t as i64),
                    )
                };
                s = s
                    .with_last_fetch_timestamp(fetch)
                    .with_last_caught_up_timestamp(caught_up);
            }
            if req.api_version >= 2 {
                s = s.with_replica_directory_id(r.key.directory_id);
            }
            s
        };
        let voters = l
            .voters
            .values()
            .map(|r| describe(r, r.key.id == self.local.id))
            .collect();
        let observers = l
            .observers
            .values()
            .filter(|r| {
                r.last_fetch_ms
                    .is_some_and(|t| now_ms.saturating_sub(t) < OBSERVER_SESSION_TIMEOUT_MS)
            })
            .map(|r| describe(r, false))
            .collect();
        let partition = describe_quorum_response::PartitionData::default()
            .with_partition_index(METADATA_PARTITION)
            .with_error_code(errors::NONE)
            .with_leader_id(BrokerId(self.local.id))
            .with_leader_epoch(l.epoch)
            .with_high_watermark(self.high_watermark.unwrap_or(-1))
            .with_current_voters(voters)
            .with_observers(observers);
        let mut resp = DescribeQuorumResponse::default().with_topics(vec![
            describe_quorum_response::TopicData::default()
                .with_topic_name(topic_name())
                .with_partitions(vec![partition]),
        ]);
        if req.api_version >= 2 {
            let nodes = self
                .history
                .voters()
                .nodes()
                .map(|n| {
                    Node::default()
                        .with_node_id(BrokerId(n.key.id))
                        .with_listeners(
                            n.endpoints
                                .iter()
                                .map(|(name, ep)| {
                                    Listener::default()
                                        .with_name(StrBytes::from_string(name.clone()))
                                        .with_host(StrBytes::from_string(ep.host.clone()))
                                        .with_port(ep.port)
                                })
                                .collect(),
                        )
                })
                .collect();
            resp = resp.with_nodes(nodes);
        }
        self.respond(req, ResponseBody::DescribeQuorum(resp));
    }

    pub(super) fn handle_fetch_snapshot_request(
        &mut self,
        _now_ms: u64,
        log: &dyn LogReader,
        req: &InboundRequest,
        body: &FetchSnapshotRequest,
    ) {
        if !self.valid_cluster_id(&body.cluster_id) {
            let resp =
                FetchSnapshotResponse::default().with_error_code(errors::INCONSISTENT_CLUSTER_ID);
            return self.respond(req, ResponseBody::FetchSnapshot(resp));
        }
        // Kafka's check is `topics != 1 && partitions != 1` (sic): only both wrong is refused here.
        let partitions = body.topics.first().map_or(0, |t| t.partitions.len());
        if body.topics.len() != 1 && partitions != 1 {
            let resp = FetchSnapshotResponse::default().with_error_code(errors::INVALID_REQUEST);
            return self.respond(req, ResponseBody::FetchSnapshot(resp));
        }
        let (Some(topic), Some(p)) = (
            body.topics.first(),
            body.topics.first().and_then(|t| t.partitions.first()),
        ) else {
            let resp = FetchSnapshotResponse::default().with_error_code(errors::INVALID_REQUEST);
            return self.respond(req, ResponseBody::FetchSnapshot(resp));
        };
        let leader = self.role.leader_id(self.local.id).unwrap_or(-1);
        let mut partition = fetch_snapshot_response::PartitionSnapshot::default()
            .with_index(p.partition)
            .with_current_leader(
                LeaderIdAndEpoch::default()
                    .with_leader_id(BrokerId(leader))
                    .with_leader_epoch(self.role.epoch()),
            );
        let error =
            if topic.name.as_str() != METADATA_TOPIC_NAME || p.partition != METADATA_PARTITION {
                Some(errors::UNKNOWN_TOPIC_OR_PARTITION)
            } else {
                self.validate_leader_only_request(p.current_leader_epoch)
            };
        let id = OffsetAndEpoch::new(p.snapshot_id.end_offset, p.snapshot_id.epoch);
        let error = error.or_else(|| {
            if id == OffsetAndEpoch::new(0, 0) {
                return Some(errors::SNAPSHOT_NOT_FOUND);
            }
            None
        });
        if error.is_none() {
            if let Role::Leader(l) = &mut self.role {
                let key_id = body.replica_id.0;
                if self.history.voters().contains_id(key_id) {
                    l.fetched_voters.insert(key_id);
                }
            }
        }
        let result = match error {
            Some(e) => Err(e),
            None => {
                let max = (body.max_bytes.max(0) as usize).min(MAX_BATCH_SIZE_BYTES);
                match log.read_snapshot(id, p.position, max) {
                    None => Err(errors::SNAPSHOT_NOT_FOUND),
                    Some(chunk) if p.position < 0 || p.position >= chunk.size => {
                        Err(errors::POSITION_OUT_OF_RANGE)
                    }
                    Some(chunk) => Ok(chunk),
                }
            }
        };
        partition = match result {
            Err(e) => partition.with_error_code(e),
            Ok(chunk) => partition
                .with_error_code(errors::NONE)
                .with_snapshot_id(
                    fetch_snapshot_response::SnapshotId::default()
                        .with_end_offset(id.offset)
                        .with_epoch(id.epoch),
                )
                .with_size(chunk.size)
                .with_position(p.position)
                .with_unaligned_records(chunk.bytes),
        };
        let mut resp = FetchSnapshotResponse::default().with_topics(vec![
            fetch_snapshot_response::TopicSnapshot::default()
                .with_name(topic.name.clone())
                .with_partitions(vec![partition]),
        ]);
        if req.api_version >= 1 && leader >= 0 {
            if let Some(ep) = self.leader_endpoint_for(leader, &req.listener_name) {
                resp =
                    resp.with_node_endpoints(vec![fetch_snapshot_response::NodeEndpoint::default(
                    )
                    .with_node_id(BrokerId(leader))
                    .with_host(StrBytes::from_string(ep.host))
                    .with_port(ep.port)]);
            }
        }
        self.respond(req, ResponseBody::FetchSnapshot(resp));
    }
}
