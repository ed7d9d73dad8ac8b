//! Helpers for the KIP-853 scenario tests (Kafka's `KafkaRaftClientReconfigTest` set-up):
//! voters with directory ids from a bootstrap snapshot, and the voter-change RPC bodies.

use bytes::Bytes;
use kafka_protocol::messages::api_versions_response::SupportedFeatureKey;
use kafka_protocol::messages::{
    add_raft_voter_request, fetch_response, update_raft_voter_request, AddRaftVoterRequest, ApiKey,
    ApiVersionsResponse, BrokerId, FetchResponse, RemoveRaftVoterRequest, UpdateRaftVoterRequest,
};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::context::*;
use crate::codec::{RequestBody, ResponseBody};
use crate::raft::types::{Endpoint, ReplicaKey, VoterNode, VoterSet, METADATA_TOPIC_ID};
use crate::raft::LogReader;

/// A listener other than the controller listener (Kafka's tests use `ANOTHER_LISTENER`).
pub const ANOTHER_LISTENER: &str = "ANOTHER_LISTENER";

pub fn dir(id: i32) -> Uuid {
    Uuid::from_u128(0x1000 + id as u128)
}

/// Replica `id` with its usual directory id.
pub fn key(id: i32) -> ReplicaKey {
    ReplicaKey::new(id, dir(id))
}

/// Replica `id` with a directory id no voter has (Kafka's `replicaKey(id, true)` for an id
/// that is already a voter).
pub fn other_key(id: i32) -> ReplicaKey {
    ReplicaKey::new(id, Uuid::from_u128(0x9000 + id as u128))
}

pub fn dynamic_voters(ids: &[i32]) -> VoterSet {
    VoterSet::new(ids.iter().map(|id| {
        VoterNode {
            key: ReplicaKey::new(*id, dir(*id)),
            endpoints: [(
                LISTENER.to_string(),
                Endpoint {
                    host: "127.0.0.1".into(),
                    port: port_of(*id),
                },
            )]
            .into_iter()
            .collect(),
            kraft_version_min: 0,
            kraft_version_max: 1,
        }
    }))
}

/// kraft.version 1: `snapshot_ids` from the bootstrap snapshot override the static voters.
pub fn kraft1(local: i32, static_ids: &[i32], snapshot_ids: &[i32]) -> Builder {
    let snapshot = dynamic_voters(snapshot_ids);
    Builder::new(local, static_ids).with_config(move |c| {
        c.directory_id = dir(local);
        c.snapshot_voters = Some((Some(snapshot), 1));
    })
}

/// kraft.version 0: static voters, but the local replica knows its directory id.
pub fn kraft0(local: i32, static_ids: &[i32]) -> Builder {
    Builder::new(local, static_ids).with_config(move |c| c.directory_id = dir(local))
}

/// Adds `ANOTHER_LISTENER` at port 8990 + id to the local listeners.
pub fn with_another_listener(builder: Builder, local: i32) -> Builder {
    builder.with_config(move |c| {
        c.local_endpoints.insert(
            ANOTHER_LISTENER.to_string(),
            Endpoint {
                host: "127.0.0.1".into(),
                port: 8990 + local as u16,
            },
        );
    })
}

/// A leader of `voters` (local id = the first) in a kraft.version 1 quorum.
pub fn kraft1_leader(voters: &[i32]) -> Context {
    let mut ctx = kraft1(voters[0], voters, voters)
        .with_unknown_leader(3)
        .build();
    ctx.become_leader();
    ctx
}

/// A Fetch at `replica`'s log end = ours, v17 so that it carries the directory id; answered
/// at once (MaxWaitMs 0). Returns the Fetch answer's partition error.
pub fn fetch_at_log_end(ctx: &mut Context, replica: ReplicaKey) -> i16 {
    let end = ctx.log.end_offset();
    let mut body = fetch_request_body(ctx.epoch(), replica.id, end.offset, end.epoch, 0);
    if let RequestBody::Fetch(f) = &mut body {
        f.topics[0].partitions[0].replica_directory_id = replica.directory_id;
    }
    let id = ctx.deliver_request(body, 17);
    fetch_partition(ctx.response(id)).error_code
}

/// Kafka's "establish a HWM and fence previous leaders": a voter fetches at our log end.
pub fn establish_high_watermark(ctx: &mut Context, follower: ReplicaKey) {
    assert_eq!(fetch_at_log_end(ctx, follower), 0);
    assert_eq!(
        ctx.core.high_watermark(),
        Some(ctx.log.end_offset().offset),
        "the fetch commits the log"
    );
}

pub fn listeners(id: i32, names: &[&str]) -> Vec<(String, Endpoint)> {
    names
        .iter()
        .map(|name| {
            let port = if *name == LISTENER {
                port_of(id)
            } else {
                8990 + id as u16
            };
            (
                name.to_string(),
                Endpoint {
                    host: "127.0.0.1".into(),
                    port,
                },
            )
        })
        .collect()
}

pub fn add_voter_request(
    cluster_id: Option<&str>,
    voter: ReplicaKey,
    listeners: &[(String, Endpoint)],
) -> RequestBody {
    RequestBody::AddRaftVoter(
        AddRaftVoterRequest::default()
            .with_cluster_id(cluster_id.map(|c| StrBytes::from_string(c.to_string())))
            .with_timeout_ms(i32::MAX)
            .with_voter_id(voter.id)
            .with_voter_directory_id(voter.directory_id)
            .with_listeners(
                listeners
                    .iter()
                    .map(|(name, ep)| {
                        add_raft_voter_request::Listener::default()
                            .with_name(StrBytes::from_string(name.clone()))
                            .with_host(StrBytes::from_string(ep.host.clone()))
                            .with_port(ep.port)
                    })
                    .collect(),
            ),
    )
}

pub fn remove_voter_request(cluster_id: Option<&str>, voter: ReplicaKey) -> RequestBody {
    RequestBody::RemoveRaftVoter(
        RemoveRaftVoterRequest::default()
            .with_cluster_id(cluster_id.map(|c| StrBytes::from_string(c.to_string())))
            .with_voter_id(voter.id)
            .with_voter_directory_id(voter.directory_id),
    )
}

pub fn update_voter_request(
    cluster_id: Option<&str>,
    voter: ReplicaKey,
    epoch: i32,
    kraft_range: (i16, i16),
    listeners: &[(String, Endpoint)],
) -> RequestBody {
    RequestBody::UpdateRaftVoter(
        UpdateRaftVoterRequest::default()
            .with_cluster_id(cluster_id.map(|c| StrBytes::from_string(c.to_string())))
            .with_current_leader_epoch(epoch)
            .with_voter_id(voter.id)
            .with_voter_directory_id(voter.directory_id)
            .with_listeners(
                listeners
                    .iter()
                    .map(|(name, ep)| {
                        update_raft_voter_request::Listener::default()
                            .with_name(StrBytes::from_string(name.clone()))
                            .with_host(StrBytes::from_string(ep.host.clone()))
                            .with_port(ep.port)
                    })
                    .collect(),
            )
            .with_k_raft_version_feature(
                update_raft_voter_request::KRaftVersionFeature::default()
                    .with_min_supported_version(kraft_range.0)
                    .with_max_supported_version(kraft_range.1),
            ),
    )
}

/// An ApiVersions answer; `kraft_range` None omits the kraft.version feature.
pub fn api_versions_response(error: i16, kraft_range: Option<(i16, i16)>) -> ResponseBody {
    let features = kraft_range
        .map(|(min, max)| {
            vec![SupportedFeatureKey::default()
                .with_name(StrBytes::from_static_str("kraft.version"))
                .with_min_version(min)
                .with_max_version(max)]
        })
        .unwrap_or_default();
    ResponseBody::ApiVersions(
        ApiVersionsResponse::default()
            .with_error_code(error)
            .with_supported_features(features),
    )
}

/// An empty, successful Fetch answer from `leader` in `epoch`.
pub fn empty_fetch_response(epoch: i32, leader: i32, high_watermark: i64) -> ResponseBody {
    ResponseBody::Fetch(FetchResponse::default().with_responses(vec![
        fetch_response::FetchableTopicResponse::default()
            .with_topic_id(METADATA_TOPIC_ID)
            .with_partitions(vec![fetch_response::PartitionData::default()
                .with_high_watermark(high_watermark)
                .with_current_leader(
                    fetch_response::LeaderIdAndEpoch::default()
                        .with_leader_id(BrokerId(leader))
                        .with_leader_epoch(epoch),
                )
                .with_records(Some(Bytes::new()))]),
    ]))
}

pub fn add_voter_error(ctx: &Context, request_id: u64) -> i16 {
    match ctx.response(request_id) {
        ResponseBody::AddRaftVoter(r) => r.error_code,
        other => panic!("not an AddRaftVoter answer: {other:?}"),
    }
}

/// The message of an AddRaftVoter or RemoveRaftVoter answer.
pub fn voter_change_message(ctx: &Context, request_id: u64) -> Option<String> {
    match ctx.response(request_id) {
        ResponseBody::AddRaftVoter(r) => r.error_message.as_ref().map(|m| m.to_string()),
        ResponseBody::RemoveRaftVoter(r) => r.error_message.as_ref().map(|m| m.to_string()),
        other => panic!("not a voter-change answer: {other:?}"),
    }
}

pub fn remove_voter_error(ctx: &Context, request_id: u64) -> i16 {
    match ctx.response(request_id) {
        ResponseBody::RemoveRaftVoter(r) => r.error_code,
        other => panic!("not a RemoveRaftVoter answer: {other:?}"),
    }
}

/// (error, leader id, leader epoch, leader host:port) of an UpdateRaftVoter answer.
pub fn update_voter_answer(ctx: &Context, request_id: u64) -> (i16, i32, i32, String) {
    match ctx.response(request_id) {
        ResponseBody::UpdateRaftVoter(r) => (
            r.error_code,
            r.current_leader.leader_id.0,
            r.current_leader.leader_epoch,
            format!("{}:{}", r.current_leader.host, r.current_leader.port),
        ),
        other => panic!("not an UpdateRaftVoter answer: {other:?}"),
    }
}

/// Takes the one ApiVersions request sent; panics unless exactly one went out.
pub fn take_api_versions(ctx: &mut Context) -> Sent {
    let mut sent = ctx.take_sent(ApiKey::ApiVersions);
    assert_eq!(sent.len(), 1, "one ApiVersions expected: {sent:?}");
    sent.remove(0)
}
