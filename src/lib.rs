//! ferrokraft: a KRaft controller node that speaks Apache Kafka's wire protocol and writes
//! Kafka's own log formats.
//!
//! Data flows through the modules in this order:
//!
//! ```text
//!   bytes ──codec──▶ Request ──▶ node (driver) ──Input──▶ RaftCore ──Output──▶ node
//!                                     │  ▲                                      │
//!                     log/snapshot ◀──┘  └── Flushed/Appended ◀── disk ◀────────┤
//!                     network      ◀── Send/Respond (after `when` holds) ◀──────┘
//! ```
//!
//! `codec` and `records` are pure bytes ⇄ types; `log`, `snapshot`, `storage` and `network` do
//! I/O; `config` and `cli` read what the operator gives.
pub mod cli;
pub mod codec;
pub mod config;
pub mod controller;
pub mod log;
pub mod logging;
pub mod metadata;
pub mod network;
pub mod node;
pub mod raft;
pub mod records;
#[cfg(test)]
pub(crate) mod sim_env;
pub mod snapshot;
pub mod storage;
