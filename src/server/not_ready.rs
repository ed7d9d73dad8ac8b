//! Answers for requests the node cannot serve yet (no Raft core running).
//!
//! Each carries the error Kafka gives when a controller is not ready, in the field a Java peer
//! reads: a top-level BROKER_NOT_AVAILABLE, which Kafka's raft client treats as "back off and
//! retry" (never fatal). Fetch below v7 has no top-level error, so there the error goes on each
//! requested partition as NOT_LEADER_OR_FOLLOWER.

pub use crate::common::errors::{BROKER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER};
use kafka_protocol::messages::fetch_response::{FetchableTopicResponse, PartitionData};
use kafka_protocol::messages::{
    AddRaftVoterResponse, BeginQuorumEpochResponse, ControllerRegistrationResponse,
    DescribeClusterResponse, DescribeQuorumResponse, EndQuorumEpochResponse, FetchResponse,
    FetchSnapshotResponse, RemoveRaftVoterResponse, UpdateRaftVoterResponse, VoteResponse,
};
use kafka_protocol::protocol::StrBytes;

use crate::codec::{RequestBody, ResponseBody};

const NOT_READY_MESSAGE: &str = "ferrokraft: the Raft core is not running on this node yet";

/// The not-ready answer to `body` at `version`; `None` for ApiVersions and Envelope (served by
/// the node, not the Raft core).
pub fn not_ready_response(body: &RequestBody, version: i16) -> Option<ResponseBody> {
    let message = || Some(StrBytes::from_static_str(NOT_READY_MESSAGE));
    Some(match body {
        // The node answers these itself (an envelope through its inner request).
        RequestBody::ApiVersions(_) | RequestBody::Envelope(_) => return None,
        RequestBody::Fetch(req) if version < 7 => {
            let responses = req
                .topics
                .iter()
                .map(|t| {
                    FetchableTopicResponse::default()
                        .with_topic(t.topic.clone())
                        .with_topic_id(t.topic_id)
                        .with_partitions(
                            t.partitions
                                .iter()
                                .map(|p| {
                                    PartitionData::default()
                                        .with_partition_index(p.partition)
                                        .with_error_code(NOT_LEADER_OR_FOLLOWER)
                                        .with_high_watermark(-1)
                                })
                                .collect(),
                        )
                })
                .collect();
            ResponseBody::Fetch(FetchResponse::default().with_responses(responses))
        }
        RequestBody::Fetch(_) => {
            ResponseBody::Fetch(FetchResponse::default().with_error_code(BROKER_NOT_AVAILABLE))
        }
        RequestBody::Vote(_) => {
            ResponseBody::Vote(VoteResponse::default().with_error_code(BROKER_NOT_AVAILABLE))
        }
        RequestBody::BeginQuorumEpoch(_) => ResponseBody::BeginQuorumEpoch(
            BeginQuorumEpochResponse::default().with_error_code(BROKER_NOT_AVAILABLE),
        ),
        RequestBody::EndQuorumEpoch(_) => ResponseBody::EndQuorumEpoch(
            EndQuorumEpochResponse::default().with_error_code(BROKER_NOT_AVAILABLE),
        ),
        RequestBody::DescribeQuorum(_) => {
            let mut resp = DescribeQuorumResponse::default().with_error_code(BROKER_NOT_AVAILABLE);
            if version >= 2 {
                resp = resp.with_error_message(message());
            }
            ResponseBody::DescribeQuorum(resp)
        }
        RequestBody::FetchSnapshot(_) => ResponseBody::FetchSnapshot(
            FetchSnapshotResponse::default().with_error_code(BROKER_NOT_AVAILABLE),
        ),
        RequestBody::DescribeCluster(req) => ResponseBody::DescribeCluster(
            DescribeClusterResponse::default()
                .with_error_code(BROKER_NOT_AVAILABLE)
                .with_error_message(message())
                .with_endpoint_type(if version >= 1 { req.endpoint_type } else { 1 }),
        ),
        RequestBody::AddRaftVoter(_) => ResponseBody::AddRaftVoter(
            AddRaftVoterResponse::default()
                .with_error_code(BROKER_NOT_AVAILABLE)
                .with_error_message(message()),
        ),
        RequestBody::RemoveRaftVoter(_) => ResponseBody::RemoveRaftVoter(
            RemoveRaftVoterResponse::default()
                .with_error_code(BROKER_NOT_AVAILABLE)
                .with_error_message(message()),
        ),
        RequestBody::UpdateRaftVoter(_) => ResponseBody::UpdateRaftVoter(
            UpdateRaftVoterResponse::default().with_error_code(BROKER_NOT_AVAILABLE),
        ),
        RequestBody::ControllerRegistration(_) => ResponseBody::ControllerRegistration(
            ControllerRegistrationResponse::default()
                .with_error_code(BROKER_NOT_AVAILABLE)
                .with_error_message(message()),
        ),
        // The controller APIs: a node that is not running its controller is not the active
        // controller (brokers then look for it elsewhere).
        _ => crate::codec::error_response::error_response(
            body,
            version,
            &crate::controller::not_controller(None),
        ),
    })
}
