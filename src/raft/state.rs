//! One type per role. The data each role carries; transitions live in `quorum_state.rs`.

use std::collections::{BTreeMap, BTreeSet};

use super::types::{Endpoint, OffsetAndEpoch, ReplicaKey, VoterNode, VoterSet};

/// Unattached: an epoch with no leader we follow (may have voted, may know the leader's id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unattached {
    /// Epoch.
    pub epoch: i32,
    /// Leader id learned without endpoints.
    pub leader_id: Option<i32>,
    /// Whom we voted for in this epoch.
    pub voted_key: Option<ReplicaKey>,
    /// Election deadline (voters only; observers never elect).
    pub election_deadline_ms: Option<u64>,
}

/// Prospective (KIP-996): collecting pre-votes in the current epoch; memory only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prospective {
    /// Epoch (unchanged from before).
    pub epoch: i32,
    /// The last known leader and its address, to fall back to.
    pub leader: Option<(i32, Option<Endpoint>)>,
    /// Our vote in this epoch, kept.
    pub voted_key: Option<ReplicaKey>,
    /// Voters that granted (self included).
    pub granted: BTreeSet<i32>,
    /// Voters that rejected.
    pub rejected: BTreeSet<i32>,
    /// Election deadline.
    pub election_deadline_ms: u64,
}

/// Candidate: epoch bumped, voted for self, collecting votes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Epoch.
    pub epoch: i32,
    /// Voters that granted (self included).
    pub granted: BTreeSet<i32>,
    /// Voters that rejected.
    pub rejected: BTreeSet<i32>,
    /// Election deadline: on expiry, or after losing, go Prospective.
    pub election_deadline_ms: u64,
}

/// Follower of a known leader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Follower {
    /// Epoch.
    pub epoch: i32,
    /// The leader.
    pub leader_id: i32,
    /// The leader's address on our controller listener.
    pub leader_endpoint: Endpoint,
    /// Our vote in this epoch, kept (4.0+ persists both).
    pub voted_key: Option<ReplicaKey>,
    /// Fetch deadline: no successful fetch by then → election (voters) or rediscovery.
    pub fetch_deadline_ms: u64,
    /// Whether a Fetch to this leader succeeded in this epoch (pre-votes are then refused).
    pub has_fetched: bool,
    /// The leader sent EndQuorumEpoch (it resigned this epoch): the deadline is our election
    /// backoff, not a fetch timeout, and pre-votes are granted again (KAFKA-20895).
    pub leader_resigned: bool,
    /// When to next check whether the leader needs our UpdateRaftVoter (every fetch timeout,
    /// FollowerState's update-voter period).
    pub update_voter_deadline_ms: u64,
    /// The leader answered our UpdateRaftVoter in this epoch (kraft.version 0 sends it once per
    /// leader, since leaders keep static voters' endpoints only in memory).
    pub has_updated_leader: bool,
    /// A snapshot being downloaded: its id and the bytes received so far.
    pub fetching_snapshot: Option<(OffsetAndEpoch, i64)>,
}

impl Follower {
    /// A follower of `leader_id` from `now_ms`: fetch and UpdateRaftVoter timers start at one
    /// fetch timeout, nothing fetched yet.
    pub fn new(
        epoch: i32,
        leader_id: i32,
        leader_endpoint: Endpoint,
        voted_key: Option<ReplicaKey>,
        now_ms: u64,
        fetch_timeout_ms: u64,
    ) -> Self {
        Self {
            epoch,
            leader_id,
            leader_endpoint,
            voted_key,
            fetch_deadline_ms: now_ms + fetch_timeout_ms,
            has_fetched: false,
            leader_resigned: false,
            update_voter_deadline_ms: now_ms + fetch_timeout_ms,
            has_updated_leader: false,
            fetching_snapshot: None,
        }
    }

    /// A successful exchange with the leader restarts the fetch timeout, unless the leader
    /// has resigned this epoch: then the deadline is our election backoff, and an answer that
    /// was already in flight must not push it out (KAFKA-20895).
    pub fn reset_fetch_timeout(&mut self, now_ms: u64, fetch_timeout_ms: u64) {
        if !self.leader_resigned {
            self.fetch_deadline_ms = now_ms + fetch_timeout_ms;
        }
    }
}

/// What the leader knows of one replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaState {
    /// The replica.
    pub key: ReplicaKey,
    /// Its last fetch offset (its log end offset as far as we know).
    pub end_offset: Option<i64>,
    /// When it last fetched.
    pub last_fetch_ms: Option<u64>,
    /// When it was last known to be caught up.
    pub last_caught_up_ms: Option<u64>,
    /// The leader's log end offset at its previous fetch (caught-up rule).
    pub leader_end_offset_at_last_fetch: Option<i64>,
    /// Time of its previous fetch (caught-up rule).
    pub previous_fetch_ms: Option<u64>,
}

impl ReplicaState {
    /// A replica nothing is known of yet.
    pub fn new(key: ReplicaKey) -> Self {
        Self {
            key,
            end_offset: None,
            last_fetch_ms: None,
            last_caught_up_ms: None,
            leader_end_offset_at_last_fetch: None,
            previous_fetch_ms: None,
        }
    }

    /// Records a fetch at `fetch_offset` when the leader's log end offset is
    /// `leader_end_offset`, with Kafka's lastCaughtUpTimestamp rule.
    pub fn record_fetch(&mut self, fetch_offset: i64, leader_end_offset: i64, now_ms: u64) {
        if fetch_offset >= leader_end_offset {
            self.last_caught_up_ms = Some(self.last_caught_up_ms.map_or(now_ms, |t| t.max(now_ms)));
        } else if let (Some(prev_leo), Some(prev_ms)) =
            (self.leader_end_offset_at_last_fetch, self.previous_fetch_ms)
        {
            if fetch_offset >= prev_leo {
                self.last_caught_up_ms =
                    Some(self.last_caught_up_ms.map_or(prev_ms, |t| t.max(prev_ms)));
            }
        }
        self.leader_end_offset_at_last_fetch = Some(leader_end_offset);
        self.previous_fetch_ms = Some(now_ms);
        self.last_fetch_ms = Some(self.last_fetch_ms.map_or(now_ms, |t| t.max(now_ms)));
        self.end_offset = Some(fetch_offset);
    }
}

/// Leader of an epoch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leader {
    /// Epoch.
    pub epoch: i32,
    /// Offset of the epoch's LeaderChange batch.
    pub epoch_start_offset: i64,
    /// Voters (self included) by id.
    pub voters: BTreeMap<i32, ReplicaState>,
    /// Observers seen fetching.
    pub observers: BTreeMap<ReplicaKey, ReplicaState>,
    /// Voters that granted our election.
    pub granting_voters: BTreeSet<i32>,
    /// Voters that acknowledged the epoch (BeginQuorumEpoch or a Fetch).
    pub acknowledged: BTreeSet<i32>,
    /// Next BeginQuorumEpoch round.
    pub begin_quorum_deadline_ms: u64,
    /// Check-quorum: voters that fetched since the timer last reset.
    pub fetched_voters: BTreeSet<i32>,
    /// Check-quorum deadline.
    pub check_quorum_deadline_ms: u64,
    /// Records waiting for the linger to expire (leader write path).
    pub pending_records: Vec<bytes::Bytes>,
    /// Bytes in `pending_records`.
    pub pending_bytes: usize,
    /// When the pending batch must be written.
    pub linger_deadline_ms: Option<u64>,
    /// The AddRaftVoter in progress (at most one voter change at a time).
    pub add_voter: Option<Box<PendingAddVoter>>,
    /// The RemoveRaftVoter in progress.
    pub remove_voter: Option<PendingRemoveVoter>,
    /// kraft.version 0: the static voters with what voters sent in UpdateRaftVoter, kept in
    /// memory until an upgrade writes them; after an upgrade, the version appended.
    pub kraft_upgrade: KRaftVersionUpgrade,
    /// This leader removed itself and the change committed: resign at the next poll.
    pub resign_requested: bool,
}

/// The leader's kraft.version upgrade state (Kafka 4.1's `KRaftVersionUpgrade`): at
/// kraft.version 0 the volatile voters an upgrade would write; once an upgrade is appended,
/// its version (the voters are then in the log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KRaftVersionUpgrade {
    /// kraft.version ≥ 1 from the start of the epoch: nothing to upgrade.
    Empty,
    /// kraft.version 0: the static voters, each as its UpdateRaftVoter last described it.
    Voters(VoterSet),
    /// An upgrade to this kraft.version was appended in this epoch.
    Version(i16),
}

impl KRaftVersionUpgrade {
    /// The volatile voters, while kraft.version is 0 and no upgrade was appended.
    pub fn voters(&self) -> Option<&VoterSet> {
        match self {
            Self::Voters(v) => Some(v),
            _ => None,
        }
    }
}

/// An AddRaftVoter in progress (Kafka's `AddVoterHandlerState`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingAddVoter {
    /// The AddRaftVoter request to answer.
    pub request_id: u64,
    /// Its API version.
    pub api_version: i16,
    /// The new voter (its kraft.version range is filled in from its ApiVersions answer).
    pub voter: VoterNode,
    /// The operation fails with REQUEST_TIMED_OUT at this time.
    pub deadline_ms: u64,
    /// Offset of the appended VotersRecord; `None` while waiting for ApiVersions.
    pub last_offset: Option<i64>,
    /// AddRaftVoter v1's AckWhenCommitted (true below v1): false answers once the VotersRecord
    /// is appended, and the change still blocks others until it commits.
    pub ack_when_committed: bool,
    /// The request was answered already (AckWhenCommitted false): nothing more is sent.
    pub answered: bool,
}

/// A RemoveRaftVoter in progress (Kafka's `RemoveVoterHandlerState`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingRemoveVoter {
    /// The RemoveRaftVoter request to answer.
    pub request_id: u64,
    /// Its API version.
    pub api_version: i16,
    /// Offset of the appended VotersRecord; answered once the high watermark passes it.
    pub last_offset: i64,
    /// The operation fails with REQUEST_TIMED_OUT at this time.
    pub deadline_ms: u64,
}

/// A leader that stepped down in its epoch; memory only (quorum-state still names it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resigned {
    /// Epoch.
    pub epoch: i32,
    /// Voters (other than self) in preferred-successor order.
    pub preferred_successors: Vec<ReplicaKey>,
    /// Voters that have not acknowledged our EndQuorumEpoch.
    pub unacknowledged: BTreeSet<i32>,
    /// Election deadline.
    pub election_deadline_ms: u64,
}

/// The role of this replica.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// See [`Unattached`].
    Unattached(Unattached),
    /// See [`Prospective`].
    Prospective(Prospective),
    /// See [`Candidate`].
    Candidate(Candidate),
    /// See [`Follower`].
    Follower(Follower),
    /// See [`Leader`].
    Leader(Leader),
    /// See [`Resigned`].
    Resigned(Resigned),
}

impl Role {
    /// The epoch.
    pub fn epoch(&self) -> i32 {
        match self {
            Role::Unattached(s) => s.epoch,
            Role::Prospective(s) => s.epoch,
            Role::Candidate(s) => s.epoch,
            Role::Follower(s) => s.epoch,
            Role::Leader(s) => s.epoch,
            Role::Resigned(s) => s.epoch,
        }
    }

    /// The leader id as this role knows it.
    pub fn leader_id(&self, local_id: i32) -> Option<i32> {
        match self {
            Role::Unattached(s) => s.leader_id,
            Role::Prospective(s) => s.leader.as_ref().map(|(id, _)| *id),
            Role::Candidate(_) => None,
            Role::Follower(s) => Some(s.leader_id),
            Role::Leader(_) | Role::Resigned(_) => Some(local_id),
        }
    }

    /// The vote cast in this epoch.
    pub fn voted_key(&self, local: ReplicaKey) -> Option<ReplicaKey> {
        match self {
            Role::Unattached(s) => s.voted_key,
            Role::Prospective(s) => s.voted_key,
            Role::Candidate(_) => Some(local),
            Role::Follower(s) => s.voted_key,
            Role::Leader(_) | Role::Resigned(_) => None,
        }
    }
}
