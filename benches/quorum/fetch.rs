//! Fetch of `__cluster_metadata-0` as a broker sends it to the active controller (KRaft's
//! observer Fetch: v13+ with the metadata topic id, the replica id and directory id of the
//! fetcher, replica epoch −1), and what its answer says. The request is built with the
//! fields ferrokraft's own Raft client fills (`RaftCore::build_fetch_request`), at the
//! version the two sides negotiated; it is encoded by ferrokraft's codec. Shared by the
//! controller benchmark's observers (async) and the quorum benchmark's commit probe
//! (blocking).
//!
//! ```text
//!   ApiVersions ─▶ version = min(ours 17, theirs) ≥ 13
//!   Fetch(offset, last epoch, leader epoch) ─▶ records + high watermark
//!                                          └─▶ diverging end / snapshot id / new leader epoch
//! ```

use bytes::Bytes;
use kafka_protocol::messages::fetch_request::{FetchPartition, FetchTopic, ReplicaState};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsResponse, BrokerId, FetchRequest, FetchResponse, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

/// The topic id of `__cluster_metadata` (Kafka's `Uuid.METADATA_TOPIC_ID`).
pub const METADATA_TOPIC_ID: Uuid = ferrokraft::raft::types::METADATA_TOPIC_ID;

/// The topic id of Kafka's `TestRaftServer` log (`__raft_performance_test`): its Raft
/// partition is not the metadata one.
pub const TEST_RAFT_TOPIC_ID: Uuid = Uuid::from_u128(2);

/// The highest Fetch version the fetchers send (17: the replica directory id; 18 only adds the
/// fetcher's high watermark, which an observer need not report).
pub const MAX_FETCH_VERSION: i16 = 17;
/// The lowest: v13 carries the topic id KRaft matches on.
pub const MIN_FETCH_VERSION: i16 = 13;
/// The largest answer a fetch asks for (KRaft's 8 MiB batch limit).
pub const FETCH_MAX_BYTES: i32 = 8 * 1024 * 1024;

/// Kafka's error codes a fetcher acts on.
pub const NOT_LEADER_OR_FOLLOWER: i16 = 6;
pub const FENCED_LEADER_EPOCH: i16 = 74;
pub const UNKNOWN_LEADER_EPOCH: i16 = 75;

/// The Fetch version to use with a node that answered ApiVersions with `r`.
pub fn negotiate(r: &ApiVersionsResponse) -> Option<i16> {
    let k = r
        .api_keys
        .iter()
        .find(|k| k.api_key == ApiKey::Fetch as i16)?;
    let version = k.max_version.min(MAX_FETCH_VERSION);
    (version >= MIN_FETCH_VERSION.max(k.min_version)).then_some(version)
}

/// One Fetch's arguments.
#[derive(Debug, Clone)]
pub struct FetchArgs {
    /// The negotiated version.
    pub version: i16,
    /// The Raft partition's topic id (`__cluster_metadata`'s, or `TestRaftServer`'s).
    pub topic_id: Uuid,
    /// The cluster id (None: not checked).
    pub cluster_id: Option<String>,
    /// The fetcher's replica id (a broker id for an observer).
    pub replica_id: i32,
    /// Its directory id (sent from v17).
    pub directory_id: Uuid,
    /// The leader epoch the fetcher knows.
    pub leader_epoch: i32,
    /// Where to read from.
    pub fetch_offset: i64,
    /// The epoch of the batch before `fetch_offset` (0 at the start of the log).
    pub last_fetched_epoch: i32,
    /// How long the leader may hold the fetch for new data.
    pub max_wait_ms: i32,
}

/// The Fetch request of `a`.
pub fn request(a: &FetchArgs) -> FetchRequest {
    let mut partition = FetchPartition::default()
        .with_partition(0)
        .with_current_leader_epoch(a.leader_epoch)
        .with_fetch_offset(a.fetch_offset)
        .with_last_fetched_epoch(a.last_fetched_epoch)
        .with_log_start_offset(-1)
        .with_partition_max_bytes(0);
    if a.version >= 17 {
        partition = partition.with_replica_directory_id(a.directory_id);
    }
    let mut r = FetchRequest::default()
        .with_cluster_id(a.cluster_id.clone().map(StrBytes::from_string))
        .with_max_wait_ms(a.max_wait_ms)
        .with_min_bytes(0)
        .with_max_bytes(FETCH_MAX_BYTES)
        .with_isolation_level(0)
        .with_session_id(0)
        .with_session_epoch(-1)
        .with_topics(vec![FetchTopic::default()
            // From v13 the id is sent, not the name.
            .with_topic(TopicName(StrBytes::from_static_str("")))
            .with_topic_id(a.topic_id)
            .with_partitions(vec![partition])]);
    if a.version >= 15 {
        r = r.with_replica_state(
            ReplicaState::default()
                .with_replica_id(BrokerId(a.replica_id))
                .with_replica_epoch(-1),
        );
    } else {
        r = r.with_replica_id(BrokerId(a.replica_id));
    }
    r
}

/// What a Fetch answer says about `__cluster_metadata-0`.
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// The top-level error, else the partition's (0: none).
    pub error: i16,
    /// The leader's high watermark (-1: unknown).
    pub high_watermark: i64,
    /// The current leader and epoch, as the answer states them (-1: not stated).
    pub leader_id: i32,
    pub leader_epoch: i32,
    /// Truncate to this (end offset, epoch): the fetcher's log diverged.
    pub diverging: Option<(i64, i32)>,
    /// Fetch this snapshot (end offset, epoch) first: the offset is below the log start.
    pub snapshot: Option<(i64, i32)>,
    /// The record batches (possibly none).
    pub records: Bytes,
}

/// The answer `r` for the one partition fetched.
pub fn answer(r: &FetchResponse) -> Answer {
    let mut a = Answer {
        error: r.error_code,
        high_watermark: -1,
        leader_id: -1,
        leader_epoch: -1,
        ..Answer::default()
    };
    let Some(p) = r.responses.first().and_then(|t| t.partitions.first()) else {
        if a.error == 0 {
            // No partition in the answer: nothing can be read from it.
            a.error = -1;
        }
        return a;
    };
    if a.error == 0 {
        a.error = p.error_code;
    }
    a.high_watermark = p.high_watermark;
    a.leader_id = p.current_leader.leader_id.0;
    a.leader_epoch = p.current_leader.leader_epoch;
    if p.diverging_epoch.epoch >= 0 && p.diverging_epoch.end_offset >= 0 {
        a.diverging = Some((p.diverging_epoch.end_offset, p.diverging_epoch.epoch));
    }
    if p.snapshot_id.epoch >= 0 && p.snapshot_id.end_offset >= 0 {
        a.snapshot = Some((p.snapshot_id.end_offset, p.snapshot_id.epoch));
    }
    a.records = p.records.clone().unwrap_or_default();
    a
}
