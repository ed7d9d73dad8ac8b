//! Kafka's error codes (`org.apache.kafka.common.protocol.Errors`), each defined once, with
//! Kafka's name and default message, and [`ApiError`], a protocol outcome (code + message).
//!
//! Protocol outcomes are values in responses; each layer's local failures are its own
//! `thiserror` enum (`RaftError`, `ControllerError`, …).

/// NONE: No error.
pub const NONE: i16 = 0;
/// UNKNOWN_SERVER_ERROR.
pub const UNKNOWN_SERVER_ERROR: i16 = -1;
/// UNKNOWN_TOPIC_OR_PARTITION.
pub const UNKNOWN_TOPIC_OR_PARTITION: i16 = 3;
/// NOT_LEADER_OR_FOLLOWER.
pub const NOT_LEADER_OR_FOLLOWER: i16 = 6;
/// REQUEST_TIMED_OUT.
pub const REQUEST_TIMED_OUT: i16 = 7;
/// BROKER_NOT_AVAILABLE.
pub const BROKER_NOT_AVAILABLE: i16 = 8;
/// NETWORK_EXCEPTION.
pub const NETWORK_EXCEPTION: i16 = 13;
/// INVALID_TOPIC_EXCEPTION.
pub const INVALID_TOPIC_EXCEPTION: i16 = 17;
/// TOPIC_AUTHORIZATION_FAILED.
pub const TOPIC_AUTHORIZATION_FAILED: i16 = 29;
/// GROUP_AUTHORIZATION_FAILED.
pub const GROUP_AUTHORIZATION_FAILED: i16 = 30;
/// CLUSTER_AUTHORIZATION_FAILED.
pub const CLUSTER_AUTHORIZATION_FAILED: i16 = 31;
/// UNSUPPORTED_SASL_MECHANISM.
pub const UNSUPPORTED_SASL_MECHANISM: i16 = 33;
/// ILLEGAL_SASL_STATE.
pub const ILLEGAL_SASL_STATE: i16 = 34;
/// UNSUPPORTED_VERSION.
pub const UNSUPPORTED_VERSION: i16 = 35;
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
/// NOT_CONTROLLER: The request needs the active controller and this node is not it.
pub const NOT_CONTROLLER: i16 = 41;
/// INVALID_REQUEST.
pub const INVALID_REQUEST: i16 = 42;
/// POLICY_VIOLATION.
pub const POLICY_VIOLATION: i16 = 44;
/// SECURITY_DISABLED.
pub const SECURITY_DISABLED: i16 = 54;
/// SASL_AUTHENTICATION_FAILED.
pub const SASL_AUTHENTICATION_FAILED: i16 = 58;
/// DELEGATION_TOKEN_AUTH_DISABLED.
pub const DELEGATION_TOKEN_AUTH_DISABLED: i16 = 61;
/// DELEGATION_TOKEN_NOT_FOUND.
pub const DELEGATION_TOKEN_NOT_FOUND: i16 = 62;
/// DELEGATION_TOKEN_OWNER_MISMATCH.
pub const DELEGATION_TOKEN_OWNER_MISMATCH: i16 = 63;
/// DELEGATION_TOKEN_REQUEST_NOT_ALLOWED.
pub const DELEGATION_TOKEN_REQUEST_NOT_ALLOWED: i16 = 64;
/// DELEGATION_TOKEN_AUTHORIZATION_FAILED.
pub const DELEGATION_TOKEN_AUTHORIZATION_FAILED: i16 = 65;
/// DELEGATION_TOKEN_EXPIRED.
pub const DELEGATION_TOKEN_EXPIRED: i16 = 66;
/// INVALID_PRINCIPAL_TYPE.
pub const INVALID_PRINCIPAL_TYPE: i16 = 67;
/// TOPIC_DELETION_DISABLED.
pub const TOPIC_DELETION_DISABLED: i16 = 73;
/// FENCED_LEADER_EPOCH.
pub const FENCED_LEADER_EPOCH: i16 = 74;
/// UNKNOWN_LEADER_EPOCH.
pub const UNKNOWN_LEADER_EPOCH: i16 = 75;
/// STALE_BROKER_EPOCH.
pub const STALE_BROKER_EPOCH: i16 = 77;
/// PREFERRED_LEADER_NOT_AVAILABLE.
pub const PREFERRED_LEADER_NOT_AVAILABLE: i16 = 80;
/// ELIGIBLE_LEADERS_NOT_AVAILABLE.
pub const ELIGIBLE_LEADERS_NOT_AVAILABLE: i16 = 83;
/// ELECTION_NOT_NEEDED.
pub const ELECTION_NOT_NEEDED: i16 = 84;
/// NO_REASSIGNMENT_IN_PROGRESS.
pub const NO_REASSIGNMENT_IN_PROGRESS: i16 = 85;
/// THROTTLING_QUOTA_EXCEEDED.
pub const THROTTLING_QUOTA_EXCEEDED: i16 = 89;
/// RESOURCE_NOT_FOUND.
pub const RESOURCE_NOT_FOUND: i16 = 91;
/// DUPLICATE_RESOURCE.
pub const DUPLICATE_RESOURCE: i16 = 92;
/// UNACCEPTABLE_CREDENTIAL.
pub const UNACCEPTABLE_CREDENTIAL: i16 = 93;
/// INVALID_UPDATE_VERSION.
pub const INVALID_UPDATE_VERSION: i16 = 95;
/// PRINCIPAL_DESERIALIZATION_FAILURE.
pub const PRINCIPAL_DESERIALIZATION_FAILURE: i16 = 97;
/// SNAPSHOT_NOT_FOUND.
pub const SNAPSHOT_NOT_FOUND: i16 = 98;
/// POSITION_OUT_OF_RANGE.
pub const POSITION_OUT_OF_RANGE: i16 = 99;
/// UNKNOWN_TOPIC_ID.
pub const UNKNOWN_TOPIC_ID: i16 = 100;
/// DUPLICATE_BROKER_REGISTRATION.
pub const DUPLICATE_BROKER_REGISTRATION: i16 = 101;
/// BROKER_ID_NOT_REGISTERED.
pub const BROKER_ID_NOT_REGISTERED: i16 = 102;
/// INCONSISTENT_CLUSTER_ID.
pub const INCONSISTENT_CLUSTER_ID: i16 = 104;
/// INELIGIBLE_REPLICA.
pub const INELIGIBLE_REPLICA: i16 = 107;
/// NEW_LEADER_ELECTED.
pub const NEW_LEADER_ELECTED: i16 = 108;
/// MISMATCHED_ENDPOINT_TYPE.
pub const MISMATCHED_ENDPOINT_TYPE: i16 = 114;
/// UNSUPPORTED_ENDPOINT_TYPE.
pub const UNSUPPORTED_ENDPOINT_TYPE: i16 = 115;
/// INVALID_REGISTRATION.
pub const INVALID_REGISTRATION: i16 = 119;
/// INVALID_VOTER_KEY.
pub const INVALID_VOTER_KEY: i16 = 125;
/// DUPLICATE_VOTER.
pub const DUPLICATE_VOTER: i16 = 126;
/// VOTER_NOT_FOUND.
pub const VOTER_NOT_FOUND: i16 = 127;
/// CONTROLLER_ID_NOT_REGISTERED (Kafka 4.4).
pub const CONTROLLER_ID_NOT_REGISTERED: i16 = 136;

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
    (TOPIC_AUTHORIZATION_FAILED, "Topic authorization failed."),
    (GROUP_AUTHORIZATION_FAILED, "Group authorization failed."),
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
/// it was completed without a message of its own. Every code listed in [`KAFKA_MESSAGES`]
/// has its text; any other is answered as UNKNOWN_SERVER_ERROR would be.
pub fn default_message(code: i16) -> &'static str {
    let find = |code: i16| KAFKA_MESSAGES.iter().find(|(c, _)| *c == code);
    find(code)
        .or_else(|| find(UNKNOWN_SERVER_ERROR))
        .map_or("", |(_, message)| message)
}

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
