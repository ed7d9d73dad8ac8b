//! The controller's seam with the Raft layer and the driver.
//!
//! The controller proposes records through a [`MetadataAppender`] (the driver's adapter over
//! the Raft core's `propose_at_epoch`, or the simulation's) and answers through
//! [`ControllerOutput`]s, which the driver drains with `poll_output` after every call.
//!
//! The same adapter is the controller's [`KRaftVersionAccessor`] (Kafka's name): UpdateFeatures
//! reads kraft.version from the Raft layer and hands an upgrade to it, which appends its own
//! control batch before the controller writes its records; a controller that must fail over
//! asks the Raft layer to `resign`.

use bytes::Bytes;

use crate::codec::ResponseBody;
use crate::logging::LogLevels;
use crate::logging::LoggerChange;
use crate::raft::{ProposeError, UpgradeKRaftVersionError};

/// The Raft layer's kraft.version as the controller sees it (Kafka's `KRaftVersionAccessor`).
pub trait KRaftVersionAccessor {
    /// The kraft.version in effect (an appended upgrade included).
    fn kraft_version(&self) -> i16;

    /// Upgrades kraft.version to `version` as the leader of `epoch` (appending its control
    /// batch, its outputs carried out, unless `validate_only`). `Ok` also when there was
    /// nothing to do.
    fn upgrade_kraft_version(
        &mut self,
        epoch: i32,
        version: i16,
        validate_only: bool,
    ) -> Result<(), UpgradeKRaftVersionError>;
}

/// Appends records to the metadata log as the leader of an epoch.
pub trait MetadataAppender: KRaftVersionAccessor {
    /// The offset the next appended record gets, while this node leads.
    fn next_write_offset(&self) -> Option<i64>;

    /// Appends `records` as one batch of `epoch`; the offset of the last one. Every output
    /// of the Raft core this causes has been carried out when it returns, so the next call
    /// sees the log as it now is.
    fn append(&mut self, epoch: i32, records: Vec<Bytes>) -> Result<i64, ProposeError>;

    /// The leader of `epoch` steps down (Kafka's `RaftClient.resign`, when the controller
    /// fails over after an unexpected error).
    fn resign(&mut self, epoch: i32);
}

/// What the controller asks the driver to do.
#[derive(Debug, Clone, PartialEq)]
pub enum ControllerOutput {
    /// Answer request `request_id` (its records, if any, are committed).
    Respond {
        /// The request.
        request_id: u64,
        /// The answer.
        body: ResponseBody,
    },
    /// This node's log levels changed (BROKER_LOGGER): make `levels` the process's log filter
    /// before the answers that follow, and log each change.
    SetLogLevels {
        /// Every logger's level now.
        levels: LogLevels,
        /// What changed, in order.
        changes: Vec<LoggerChange>,
    },
}
