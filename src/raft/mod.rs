//! The KRaft protocol as a sans-IO core: no tokio, filesystem, sockets, clock or thread RNG.
//!
//! ```text
//!   driver ──handle_request / handle_response / handle_timeout / propose (now_ms, &LogReader)──▶ RaftCore
//!   driver ◀──poll_output: PersistElectionState, Append*, Truncate, Flush, Send, Respond, HighWatermark──┘
//!   driver ◀──poll_timeout: when to call handle_timeout next
//! ```
//!
//! Call order: after any `handle_*`, drain `poll_output()` and carry out every output in order
//! (each write durable before the next output), then call the core again. Time (`now_ms`,
//! wall-clock milliseconds in production, virtual in simulation) and randomness (the seed in
//! [`RaftConfig`]) are inputs, so a run replays exactly from its inputs.
//!
//! The controller reaches the leader through the same call shape: `propose_at_epoch` for its
//! records, `upgrade_kraft_version` (kraft.version 0 → 1: a KRaftVersion + Voters control batch,
//! `kraft_upgrade.rs`) and `resign` when it fails over.
//!
//! Roles follow Kafka 4.1: Unattached, Prospective (KIP-996 pre-vote), Candidate, Leader,
//! Follower, Resigned; observers are followers that are not voters. One type per role lives in
//! `state.rs`; every transition, with what it persists, is in `transitions.rs`.
mod add_voter;
mod auto_join;
mod config;
mod core;
mod describe;
mod dispatch;
mod election;
pub mod errors;
mod fetch;
mod io;
mod kraft_upgrade;
mod leader;
mod log;
mod remove_voter;
mod requests;
mod rng;
mod snapshot_fetch;
mod state;
mod transitions;
pub mod types;
mod update_voter;
mod validation;
mod voter_changes;
pub mod voters;

#[cfg(test)]
pub(crate) mod tests;

pub use self::config::RaftConfig;
pub use self::core::RaftCore;
pub use self::errors::{ProposeError, RaftError, UpgradeKRaftVersionError};
pub use self::io::{Destination, ElectionState, InboundRequest, Output, ResponseResult, Sender};
pub use self::leader::max_records_per_proposal;
pub use self::log::{
    validate_offset_and_epoch, LogReadError, LogReader, SnapshotChunk, ValidOffsetAndEpoch,
};
pub use self::rng::Rng;
pub use self::state::{
    Candidate, Follower, KRaftVersionUpgrade, Leader, Prospective, ReplicaState, Resigned, Role,
    Unattached,
};
