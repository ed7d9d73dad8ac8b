//! The Raft layer's local failures (`RaftError`, `ProposeError`, `UpgradeKRaftVersionError`).
//!
//! Protocol outcomes are Kafka error codes in responses ([`crate::common::errors`], re-exported
//! here for the Raft code that answers with them).

pub use crate::common::errors::*;

/// A local failure that stops the Raft core (Kafka throws and the raft thread dies).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RaftError {
    /// The leader told us to truncate below our high watermark: committed data would be lost.
    #[error(
        "leader asked to truncate to {truncate_to}, below the high watermark {high_watermark}"
    )]
    TruncateBelowHighWatermark {
        /// Requested truncation offset.
        truncate_to: i64,
        /// Our high watermark.
        high_watermark: i64,
    },
    /// A peer claimed a different leader for an epoch whose leader we know.
    #[error("inconsistent leader for epoch {epoch}: we know {known:?}, peer says {claimed}")]
    InconsistentLeader {
        /// The epoch.
        epoch: i32,
        /// Leader we know.
        known: Option<i32>,
        /// Leader claimed.
        claimed: i32,
    },
    /// The log could not be read where it holds data.
    #[error(transparent)]
    LogRead(#[from] super::log::LogReadError),
    /// A peer answered CLUSTER_AUTHORIZATION_FAILED (fatal in Kafka).
    #[error("cluster authorization failed talking to node {peer}")]
    ClusterAuthorizationFailed {
        /// The peer.
        peer: i32,
    },
}

/// Why a proposal was refused (Kafka's `prepareAppend` throws NotLeaderException or
/// RecordBatchTooLargeException); nothing of it is written and no offset is handed out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProposeError {
    /// This replica does not lead, or leads another epoch than the proposal's.
    #[error("not the leader of epoch {epoch} (current epoch {current_epoch})")]
    NotLeader {
        /// The epoch the proposal was made for.
        epoch: i32,
        /// The replica's epoch now.
        current_epoch: i32,
    },
    /// The leader is shutting down and takes no more writes.
    #[error("the leader is shutting down")]
    ShuttingDown,
    /// The records cannot fit one batch.
    #[error("{records} records of about {bytes} bytes do not fit one batch of {max_bytes} bytes")]
    TooLarge {
        /// Records proposed.
        records: usize,
        /// Their size, record overhead included.
        bytes: usize,
        /// The batch limit.
        max_bytes: usize,
    },
    /// Nothing to append.
    #[error("empty proposal")]
    Empty,
}

/// Why a kraft.version upgrade was refused (what Kafka's `upgradeKRaftVersion` throws); the
/// controller answers with it. Nothing was appended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UpgradeKRaftVersionError {
    /// Not the leader, or the leader of a later epoch (Kafka's raft `NotLeaderException`).
    #[error("{0}")]
    NotLeader(String),
    /// Refused as Kafka's `InvalidUpdateVersionException` (INVALID_UPDATE_VERSION).
    #[error("{0}")]
    InvalidUpdateVersion(String),
    /// A bad argument (Kafka's `IllegalArgumentException`): an epoch ahead of the leader's.
    #[error("{0}")]
    IllegalArgument(String),
    /// A state Kafka treats as unexpected (`IllegalStateException`): a voter without a
    /// directory id, voters missing from the volatile set.
    #[error("{0}")]
    IllegalState(String),
}
