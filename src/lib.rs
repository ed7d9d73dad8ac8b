//! ferrokraft: a KRaft controller node that speaks Apache Kafka's wire protocol and writes
//! Kafka's own log formats.
//!
//! Data flows through the modules in this order:
//!
//! ```text
//!   bytes ──codec──▶ Request ──▶ node (driver: clock, I/O) ──Event──▶ machine (NodeMachine)
//!                                  ▲                                  │ │
//!        network / replies ◀── NodeOutput (Send, Respond, …) ◀────────┘ │ Raft APIs
//!        log/snapshot ◀── NodeStore writes, in order, in the call ◀── RaftCore ◀┤
//!                                                                               │ controller APIs
//!                                  controller (QuorumController: managers over the metadata
//!                                  image ─▶ records proposed to the RaftCore, replies
//!                                  released on commit) ◀── HighWatermark ─▶ replay ─ metadata
//! ```
//!
//! `codec` and `records` are pure bytes ⇄ types; `raft`, `controller`, `metadata` and
//! `machine` (the node state machine joining the Raft core and the controller), and `security`
//! (SASL exchanges, driven by `network`) are sans-IO (no
//! tokio, filesystem, sockets, clock or thread RNG: tests/tidy.rs); `log`, `snapshot`,
//! `storage` and `network` do I/O; `node` is the driver that runs the machine; `workload` is
//! the benchmark load generator; `config` and `cli` read what the operator gives; `tools` are
//! the command-line verbs other than `start` (`format`, `info`, `dump`).
pub mod cli;
pub mod codec;
pub mod common;
pub mod config;
pub mod controller;
pub mod durable;
pub mod launch;
pub mod log;
pub mod logging;
pub mod metadata;
pub mod network;
pub mod node;
pub mod raft;
pub mod records;
pub mod security;
pub mod server;
#[cfg(test)]
pub(crate) mod sim_env;
pub mod snapshot;
pub mod storage;
pub mod tools;
