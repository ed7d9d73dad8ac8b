//! What the core needs to know about this replica and its quorum.

use uuid::Uuid;

use super::types::{Endpoint, Endpoints, VoterSet};

/// Configuration of one Raft replica (from `server.properties` and `meta.properties`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RaftConfig {
    /// `node.id`.
    pub node_id: i32,
    /// `directory.id` of the metadata log directory (nil with static voters).
    pub directory_id: Uuid,
    /// The cluster id requests are checked against.
    pub cluster_id: String,
    /// The first of `controller.listener.names`: peers are reached on it.
    pub listener_name: String,
    /// Our advertised controller listeners.
    pub local_endpoints: Endpoints,
    /// The static voters (`controller.quorum.voters`, kraft.version 0).
    pub voters: VoterSet,
    /// Voters and kraft.version from the bootstrap snapshot (0-0), which override the static
    /// voters (KIP-853): `Some((voters, kraft.version))`.
    pub snapshot_voters: Option<(Option<VoterSet>, i16)>,
    /// `controller.quorum.bootstrap.servers` (discovery; ids -2, -3, …).
    pub bootstrap_servers: Vec<Endpoint>,
    /// `controller.quorum.election.timeout.ms`.
    pub election_timeout_ms: u64,
    /// `controller.quorum.fetch.timeout.ms`.
    pub fetch_timeout_ms: u64,
    /// `controller.quorum.election.backoff.max.ms`.
    pub election_backoff_max_ms: u64,
    /// `controller.quorum.request.timeout.ms`.
    pub request_timeout_ms: u64,
    /// `controller.quorum.retry.backoff.ms`.
    pub retry_backoff_ms: u64,
    /// `controller.quorum.append.linger.ms`.
    pub append_linger_ms: u64,
    /// `controller.quorum.auto.join.enable`: as an observer of a kraft.version ≥ 1 quorum,
    /// add itself as a voter (`auto_join.rs`). Every ferrokraft node is a controller, so it is
    /// always a replica that can become a voter (Kafka's `canBecomeVoter`).
    pub auto_join: bool,
    /// MaxBytes of this follower's Fetch requests (`controller.quorum.fetch.max.bytes`,
    /// KIP-1219; before Kafka 4.3 a fixed 8 MiB).
    pub fetch_max_bytes: i32,
    /// MaxBytes of its FetchSnapshot requests (`controller.quorum.fetch.snapshot.max.bytes`).
    pub fetch_snapshot_max_bytes: i32,
    /// As leader, answer a Fetch with at most its MaxBytes (at least one batch), as Kafka 4.3
    /// does (KIP-1219); false: up to 8 MiB whatever it asks, as Kafka 4.1.
    pub leader_reads_fetch_max_bytes: bool,
    /// Seed of the election jitter.
    pub rng_seed: u64,
}

impl RaftConfig {
    /// Check-quorum timeout: 1.5 × fetch timeout (LeaderState.CHECK_QUORUM_TIMEOUT_FACTOR).
    pub fn check_quorum_timeout_ms(&self) -> u64 {
        self.fetch_timeout_ms * 3 / 2
    }

    /// BeginQuorumEpoch heartbeat period: fetch timeout / 2.
    pub fn begin_quorum_epoch_period_ms(&self) -> u64 {
        self.fetch_timeout_ms / 2
    }

    /// MaxWaitMs of this follower's Fetch requests: Kafka's 500 ms, but never more than half
    /// the fetch timeout. Kafka always asks for 500 ms, so with a fetch timeout under 500 ms
    /// an idle leader's long poll outlasts the follower's patience and it starts elections
    /// against a healthy leader; the leader honours whatever MaxWaitMs a follower sends, so
    /// asking for less is invisible to a Java leader. At the default fetch timeout (2 s) this
    /// is Kafka's 500 ms.
    pub fn fetch_max_wait_ms(&self) -> i32 {
        let half = i32::try_from(self.fetch_timeout_ms / 2).unwrap_or(i32::MAX);
        super::types::MAX_FETCH_WAIT_MS.min(half)
    }
}
