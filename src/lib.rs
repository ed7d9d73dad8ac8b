//! ferrokraft: a KRaft controller node that speaks Apache Kafka's wire protocol and writes
//! Kafka's own log formats.
//!
//! Data flows through the modules in this order:
//!
//! ```text
//!   bytes ──codec──▶ WireRequest ──▶ server (handler; driver: clock, I/O) ──Event──▶ node
//!                                      ▲                          (NodeMachine) │ │
//!        network / replies ◀── NodeOutput (Send, Respond, …) ◀─────────────────┘ │ Raft APIs
//!        log/snapshot ◀── NodeStore writes, in order, in the call ◀── RaftCore ◀──┤
//!                                                                                 │ controller
//!                                  controller (apis: one Checker, reads; managers over the
//!                                  speculative image ─▶ write: records proposed to the
//!                                  RaftCore, replies released on commit) ◀── HighWatermark
//!                                  ─▶ replay ─ metadata
//! ```
//!
//! The layers, from the ground up (every import points down; `tests/tidy.rs` checks it):
//! `records`, `logging`, `common` (Kafka's shared values, each once) · `codec` (bytes ⇄
//! messages, the API table, every error answer) · `durable`, `snapshot`, `storage`, `log` (the
//! files) · the sans-IO cores `metadata`, `raft`, `security`, `controller`, `node` (no tokio,
//! filesystem, sockets, clock or thread RNG) · the I/O shell `network`, `server` · `config`
//! (reads what the operator gives, builds each layer's settings) · `launch` (a `Config` becomes
//! a running node), `tools` (`format`, `dump`), `cli`. docs/architecture.md has the table.
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
