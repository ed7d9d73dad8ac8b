//! A minimal Kafka-protocol client for the benchmark: ApiVersions and DescribeQuorum over a
//! blocking socket, encoded and decoded with ferrokraft's own codec (the same bytes any Kafka
//! client sends). Every call has a short timeout so a dead or paused node is just "no answer".

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use bytes::Bytes;
use ferrokraft::codec::messages::{RequestBody, ResponseBody};
use ferrokraft::codec::request::encode_request;
use ferrokraft::codec::response::decode_response;
use kafka_protocol::messages::describe_quorum_request::{PartitionData, TopicData};
use kafka_protocol::messages::{
    ApiVersionsRequest, ApiVersionsResponse, DescribeQuorumRequest, TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::fetch;

/// What a DescribeQuorum answer says about `__cluster_metadata-0`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumView {
    /// The smallest log end offset the leader reports for a voter (-1: one is unknown).
    pub min_voter_log_end_offset: i64,
    /// (voter id, log end offset the leader last saw from it; -1 unknown).
    pub voters: Vec<(i32, i64)>,
    /// The leader (the answering node, since only the leader answers without error).
    pub leader_id: i32,
    /// Its epoch.
    pub epoch: i32,
    /// Its high watermark.
    pub high_watermark: i64,
}

/// One connection to one node.
pub struct Probe {
    stream: TcpStream,
    correlation_id: i32,
}

const DESCRIBE_QUORUM_VERSION: i16 = 2;
const API_VERSIONS_VERSION: i16 = 3;

impl Probe {
    /// Connects to 127.0.0.1:`port` within `timeout`.
    pub fn connect(port: u16, timeout: Duration) -> std::io::Result<Probe> {
        let addr = SocketAddr::from(([127, 0, 0, 1], port));
        let stream = TcpStream::connect_timeout(&addr, timeout)?;
        stream.set_read_timeout(Some(timeout))?;
        stream.set_write_timeout(Some(timeout))?;
        stream.set_nodelay(true)?;
        Ok(Probe {
            stream,
            correlation_id: 0,
        })
    }

    fn call(&mut self, body: RequestBody, version: i16) -> std::io::Result<ResponseBody> {
        self.correlation_id += 1;
        let api_key = body.api_key();
        let frame = encode_request(&body, version, self.correlation_id, "ferrokraft-bench")
            .map_err(std::io::Error::other)?;
        self.stream.write_all(&frame)?;
        let mut len = [0u8; 4];
        self.stream.read_exact(&mut len)?;
        let len = u32::from_be_bytes(len) as usize;
        if len > 16 * 1024 * 1024 {
            return Err(std::io::Error::other(format!("response of {len} bytes")));
        }
        let mut buf = vec![0u8; len];
        self.stream.read_exact(&mut buf)?;
        let (correlation_id, body) =
            decode_response(Bytes::from(buf), api_key, version).map_err(std::io::Error::other)?;
        if correlation_id != self.correlation_id {
            return Err(std::io::Error::other("correlation id mismatch"));
        }
        Ok(body)
    }

    /// ApiVersions v3; Ok when the node answers with error 0.
    pub fn api_versions(&mut self) -> std::io::Result<()> {
        self.api_versions_response().map(|_| ())
    }

    fn api_versions_response(&mut self) -> std::io::Result<ApiVersionsResponse> {
        let request = ApiVersionsRequest::default()
            .with_client_software_name(StrBytes::from_static_str("ferrokraft-bench"))
            .with_client_software_version(StrBytes::from_static_str("0"));
        match self.call(RequestBody::ApiVersions(request), API_VERSIONS_VERSION)? {
            ResponseBody::ApiVersions(r) if r.error_code == 0 => Ok(r),
            other => Err(std::io::Error::other(format!("ApiVersions: {other:?}"))),
        }
    }

    /// DescribeQuorum v2 for `__cluster_metadata-0`; `None` when the node answers with an
    /// error (it is not the leader, or it is still starting).
    pub fn describe_quorum(&mut self) -> std::io::Result<Option<QuorumView>> {
        let request = DescribeQuorumRequest::default().with_topics(vec![TopicData::default()
            .with_topic_name(TopicName(StrBytes::from_static_str("__cluster_metadata")))
            .with_partitions(vec![PartitionData::default().with_partition_index(0)])]);
        let ResponseBody::DescribeQuorum(r) = self.call(
            RequestBody::DescribeQuorum(request),
            DESCRIBE_QUORUM_VERSION,
        )?
        else {
            return Err(std::io::Error::other("not a DescribeQuorum response"));
        };
        if r.error_code != 0 {
            return Ok(None);
        }
        let Some(p) = r.topics.first().and_then(|t| t.partitions.first()) else {
            return Ok(None);
        };
        if p.error_code != 0 || p.leader_id.0 < 0 {
            return Ok(None);
        }
        let min_voter_log_end_offset = p
            .current_voters
            .iter()
            .map(|v| v.log_end_offset)
            .min()
            .unwrap_or(-1);
        let voters = p
            .current_voters
            .iter()
            .map(|v| (v.replica_id.0, v.log_end_offset))
            .collect();
        Ok(Some(QuorumView {
            min_voter_log_end_offset,
            voters,
            leader_id: p.leader_id.0,
            epoch: p.leader_epoch,
            high_watermark: p.high_watermark,
        }))
    }
}

/// The replica id the commit probe fetches as: an observer no quorum has as a voter.
const COMMIT_PROBE_REPLICA_ID: i32 = 9_999;

/// Reads a Raft leader's high watermark with Fetch, for servers that do not answer
/// DescribeQuorum (Kafka's `TestRaftServer` handles only the Raft APIs): an observer's Fetch
/// past the end of the leader's log in its current epoch is answered at once with a diverging
/// epoch (Kafka's `validateOffsetAndEpoch`) and the high watermark, without reading or
/// sending records and without counting as a fetch of the observer.
pub struct CommitProbe {
    probe: Probe,
    version: i16,
    epoch: i32,
    topic_id: uuid::Uuid,
}

impl CommitProbe {
    /// Connects to the node on `port` and negotiates the Fetch version; `topic_id` is its Raft
    /// partition's ([`fetch::METADATA_TOPIC_ID`] or [`fetch::TEST_RAFT_TOPIC_ID`]).
    pub fn connect(
        port: u16,
        timeout: Duration,
        topic_id: uuid::Uuid,
    ) -> std::io::Result<CommitProbe> {
        let mut probe = Probe::connect(port, timeout)?;
        let versions = probe.api_versions_response()?;
        let version = fetch::negotiate(&versions)
            .ok_or_else(|| std::io::Error::other("no Fetch version in common"))?;
        Ok(CommitProbe {
            probe,
            version,
            epoch: 0,
            topic_id,
        })
    }

    /// The leader's high watermark; an error when the node is not (or no longer) the leader.
    pub fn high_watermark(&mut self) -> std::io::Result<i64> {
        // The first try learns the leader epoch from FENCED_LEADER_EPOCH.
        for _ in 0..3 {
            let args = fetch::FetchArgs {
                version: self.version,
                topic_id: self.topic_id,
                cluster_id: None,
                replica_id: COMMIT_PROBE_REPLICA_ID,
                directory_id: uuid::Uuid::nil(),
                leader_epoch: self.epoch,
                fetch_offset: i64::MAX / 2,
                last_fetched_epoch: self.epoch,
                max_wait_ms: 0,
            };
            let ResponseBody::Fetch(r) = self
                .probe
                .call(RequestBody::Fetch(fetch::request(&args)), self.version)?
            else {
                return Err(std::io::Error::other("not a Fetch response"));
            };
            let a = fetch::answer(&r);
            match a.error {
                0 if a.diverging.is_some() && a.high_watermark >= 0 => return Ok(a.high_watermark),
                fetch::FENCED_LEADER_EPOCH | fetch::UNKNOWN_LEADER_EPOCH
                    if a.leader_epoch > self.epoch =>
                {
                    self.epoch = a.leader_epoch;
                }
                _ => {
                    return Err(std::io::Error::other(format!(
                        "Fetch answered error {} (leader {} epoch {}, high watermark {})",
                        a.error, a.leader_id, a.leader_epoch, a.high_watermark
                    )))
                }
            }
        }
        Err(std::io::Error::other("the leader epoch keeps changing"))
    }
}

/// One DescribeQuorum on a fresh connection to `port` (None on any failure).
pub fn describe_once(port: u16, timeout: Duration) -> Option<QuorumView> {
    Probe::connect(port, timeout)
        .ok()?
        .describe_quorum()
        .ok()
        .flatten()
}
