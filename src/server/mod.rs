//! The I/O shell (Kafka's `ControllerServer` without its configuration): the driver thread
//! that runs the node state machine (`crate::node`) with the clock and the disk, the request
//! handler the listeners call, the store behind the Raft core, the metrics (plain data kept by
//! the driver and the sockets, encoded per scrape by `exposition` with `prometheus-client`), the
//! benchmark workload. It never reads `server.properties`: `crate::launch` builds it from a
//! `Config`.
//!
//! ```text
//!   listener ─▶ handler::Handler ──Event──▶ driver (raft thread: NodeMachine, RaftStore)
//!        ◀── answers (oneshot) ◀─────────── NodeOutput::Respond
//! ```
//!
//! The driver is the only place that reads the clock.
pub mod controller_metrics;
pub mod driver;
pub mod exposition;
mod handler;
pub mod metrics;
mod not_ready;
pub mod process_metrics;
pub mod raft_exposition;
pub mod store;
pub mod workload;

pub use handler::Handler;
pub use not_ready::{not_ready_response, BROKER_NOT_AVAILABLE, NOT_LEADER_OR_FOLLOWER};
