//! Kafka error codes the Raft layer answers with (values from Kafka's `Errors`).
//!
//! Protocol outcomes are values in responses; `RaftError` is for local failures only.

#![allow(missing_docs)]

pub const NONE: i16 = 0;
pub const UNKNOWN_SERVER_ERROR: i16 = -1;
pub const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
pub const NOT_LEADER_OR_FOLLOWER: i16 = 6;
pub const REQUEST_TIMED_OUT: i16 = 7;
pub const BROKER_NOT_AVAILABLE: i16 = 8;
pub const CLUSTER_AUTHORIZATION_FAILED: i16 = 31;
pub const UNSUPPORTED_VERSION: i16 = 35;
/// The request needs the active controller and this node is not it.
pub const NOT_CONTROLLER: i16 = 41;
pub const INVALID_REQUEST: i16 = 42;
pub const FENCED_LEADER_EPOCH: i16 = 74;
pub const UNKNOWN_LEADER_EPOCH: i16 = 75;
pub const INCONSISTENT_CLUSTER_ID: i16 = 104;
pub const SNAPSHOT_NOT_FOUND: i16 = 98;
pub const POSITION_OUT_OF_RANGE: i16 = 99;
pub const INVALID_VOTER_KEY: i16 = 125;
pub const DUPLICATE_VOTER: i16 = 126;
pub const VOTER_NOT_FOUND: i16 = 127;
pub const NETWORK_EXCEPTION: i16 = 13;

/// Kafka's default message (`Errors.message()`) of every code above. kafka-protocol's
/// descriptions are not always Kafka's text (SNAPSHOT_NOT_FOUND and INCONSISTENT_CLUSTER_ID lack
/// the final period), so these are Kafka's own; NONE has no exception, so its message is its
/// name.
const KAFKA_MESSAGES: &[(i16, &str)] = &[
    (NONE, "NONE"),
    (UNKNOWN_SERVER_ERROR, "The server experienced an unexpected error when processing the request."),
    (UNKNOWN_TOPIC_OR_PARTITION, "This server does not host this topic-partition."),
    (NOT_LEADER_OR_FOLLOWER, "For requests intended only for the leader, this error indicates that the broker is not the current leader. For requests intended for any replica, this error indicates that the broker is not a replica of the topic partition."),
    (REQUEST_TIMED_OUT, "The request timed out."),
    (BROKER_NOT_AVAILABLE, "The broker is not available."),
    (NETWORK_EXCEPTION, "The server disconnected before a response was received."),
    // TOPIC_AUTHORIZATION_FAILED, GROUP_AUTHORIZATION_FAILED (per-resource refusals).
    (29, "Topic authorization failed."),
    (30, "Group authorization failed."),
    (CLUSTER_AUTHORIZATION_FAILED, "Cluster authorization failed."),
    (UNSUPPORTED_VERSION, "The version of API is not supported."),
    (NOT_CONTROLLER, "This is not the correct controller for this cluster."),
    (INVALID_REQUEST, "This most likely occurs because of a request being malformed by the client library or the message was sent to an incompatible broker. See the broker logs for more details."),
    (FENCED_LEADER_EPOCH, "The leader epoch in the request is older than the epoch on the broker."),
    (UNKNOWN_LEADER_EPOCH, "The leader epoch in the request is newer than the epoch on the broker."),
    (SNAPSHOT_NOT_FOUND, "Requested snapshot was not found."),
    (POSITION_OUT_OF_RANGE, "Requested position is not greater than or equal to zero, and less than the size of the snapshot."),
    (INCONSISTENT_CLUSTER_ID, "The clusterId in the request does not match that found on the server."),
    (INVALID_VOTER_KEY, "The voter key doesn't match the receiving replica's key."),
    (DUPLICATE_VOTER, "The voter is already part of the set of voters."),
    (VOTER_NOT_FOUND, "The voter is not part of the set of voters."),
];

/// Kafka's `Errors.forCode(code).name()`, as its messages print an error: kafka-protocol's
/// variant name in Kafka's UPPER_SNAKE form; a code neither knows is Kafka's fallback,
/// UNKNOWN_SERVER_ERROR.
pub fn error_name(code: i16) -> String {
    if code == NONE {
        return "NONE".to_string();
    }
    use kafka_protocol::error::ResponseError;
    let error = match ResponseError::try_from_code(code) {
        Some(ResponseError::Unknown(_)) | None => return "UNKNOWN_SERVER_ERROR".to_string(),
        Some(error) => error,
    };
    let mut name = String::new();
    for (i, ch) in error.to_string().chars().enumerate() {
        if ch.is_ascii_uppercase() && i > 0 {
            name.push('_');
        }
        name.push(ch.to_ascii_uppercase());
    }
    name
}

/// Kafka's `Errors.forCode(code).message()`: what `RaftUtil` answers a voter change with when
/// it was completed without a message of its own. Every code the Raft layer answers with is
/// in [`KAFKA_MESSAGES`]; any other is answered as UNKNOWN_SERVER_ERROR would be.
pub fn default_message(code: i16) -> &'static str {
    let find = |code: i16| KAFKA_MESSAGES.iter().find(|(c, _)| *c == code);
    find(code)
        .or_else(|| find(UNKNOWN_SERVER_ERROR))
        .map_or("", |(_, message)| message)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_names_are_kafkas() {
        assert_eq!(error_name(NONE), "NONE");
        assert_eq!(error_name(NOT_LEADER_OR_FOLLOWER), "NOT_LEADER_OR_FOLLOWER");
        assert_eq!(
            error_name(INCONSISTENT_CLUSTER_ID),
            "INCONSISTENT_CLUSTER_ID"
        );
        // Codes the Raft layer never answers with are named too (Errors.forCode).
        assert_eq!(error_name(58), "SASL_AUTHENTICATION_FAILED");
        assert_eq!(error_name(9999), "UNKNOWN_SERVER_ERROR");
        assert_eq!(default_message(REQUEST_TIMED_OUT), "The request timed out.");
        assert_eq!(
            default_message(9999),
            "The server experienced an unexpected error when processing the request."
        );
    }
}
