//! Kafka's error codes (`org.apache.kafka.common.protocol.Errors`) the controller answers with,
//! and the controller layer's local failures.

pub use crate::raft::errors::{
    INCONSISTENT_CLUSTER_ID, INVALID_REQUEST, NONE, NOT_CONTROLLER, NOT_LEADER_OR_FOLLOWER,
    UNKNOWN_SERVER_ERROR, UNKNOWN_TOPIC_OR_PARTITION, UNSUPPORTED_VERSION,
};

/// INVALID_TOPIC_EXCEPTION.
pub const INVALID_TOPIC_EXCEPTION: i16 = 17;
/// TOPIC_ALREADY_EXISTS.
pub const TOPIC_ALREADY_EXISTS: i16 = 36;
/// INVALID_PARTITIONS.
pub const INVALID_PARTITIONS: i16 = 37;
/// INVALID_REPLICATION_FACTOR.
pub const INVALID_REPLICATION_FACTOR: i16 = 38;
/// INVALID_REPLICA_ASSIGNMENT.
pub const INVALID_REPLICA_ASSIGNMENT: i16 = 39;
/// INVALID_CONFIG.
pub const INVALID_CONFIG: i16 = 40;
/// POLICY_VIOLATION.
pub const POLICY_VIOLATION: i16 = 44;
/// FENCED_LEADER_EPOCH.
pub const FENCED_LEADER_EPOCH: i16 = 74;
/// STALE_BROKER_EPOCH.
pub const STALE_BROKER_EPOCH: i16 = 77;
/// THROTTLING_QUOTA_EXCEEDED.
pub const THROTTLING_QUOTA_EXCEEDED: i16 = 89;
/// INVALID_UPDATE_VERSION.
pub const INVALID_UPDATE_VERSION: i16 = 95;
/// UNKNOWN_TOPIC_ID.
pub const UNKNOWN_TOPIC_ID: i16 = 100;
/// DUPLICATE_BROKER_REGISTRATION.
pub const DUPLICATE_BROKER_REGISTRATION: i16 = 101;
/// BROKER_ID_NOT_REGISTERED.
pub const BROKER_ID_NOT_REGISTERED: i16 = 102;
/// CONTROLLER_ID_NOT_REGISTERED (Kafka 4.4).
pub const CONTROLLER_ID_NOT_REGISTERED: i16 = 136;
/// INELIGIBLE_REPLICA.
pub const INELIGIBLE_REPLICA: i16 = 107;
/// NEW_LEADER_ELECTED.
pub const NEW_LEADER_ELECTED: i16 = 108;
/// INVALID_REGISTRATION.
pub const INVALID_REGISTRATION: i16 = 119;

/// A protocol outcome: Kafka's error code and the message it puts in the response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The error code.
    pub code: i16,
    /// The message (`None`: Kafka sends none).
    pub message: Option<String>,
}

impl ApiError {
    /// An error with a message.
    pub fn new(code: i16, message: impl Into<String>) -> Self {
        Self {
            code,
            message: Some(message.into()),
        }
    }

    /// An error without a message.
    pub fn code(code: i16) -> Self {
        Self {
            code,
            message: None,
        }
    }
}

/// Local failures of the controller layer (protocol outcomes are [`ApiError`]s in responses).
#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    /// A record could not be encoded.
    #[error(transparent)]
    Encode(#[from] crate::metadata::MetadataError),
    /// Activation could not go on.
    #[error(transparent)]
    Activation(#[from] super::activation::ActivationError),
    /// The committed log could not be read (fatal: Kafka's controller stops too).
    #[error(transparent)]
    LogRead(#[from] crate::raft::LogReadError),
    /// The Raft layer refused the records.
    #[error(transparent)]
    Propose(#[from] crate::raft::ProposeError),
    /// The Raft layer handed out offsets other than the ones the controller expected: the
    /// speculative image would disagree with the log.
    #[error("the log assigned offsets {got_first}..={got_last}, the controller expected {expected_first}")]
    OffsetMismatch {
        /// First offset expected.
        expected_first: i64,
        /// First offset assigned.
        got_first: i64,
        /// Last offset assigned.
        got_last: i64,
    },
}
