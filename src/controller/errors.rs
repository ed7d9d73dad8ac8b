//! The controller layer's local failures ([`ControllerError`]).
//!
//! Protocol outcomes are Kafka error codes and [`ApiError`]s in responses
//! ([`crate::common::errors`], re-exported here for the managers that answer with them).

pub use crate::common::errors::*;

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
