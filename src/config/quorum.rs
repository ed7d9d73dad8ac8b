//! The Raft client keys (Kafka's QuorumConfig): its timeouts and backoffs, and whether an
//! observer joins the quorum on its own. The voters and bootstrap servers are addresses
//! (`listeners.rs`).

use super::properties::{parse_bool, parse_num, ConfigError, Properties};

/// The `controller.quorum.*` timings and `controller.quorum.auto.join.enable`.
pub(super) struct Timeouts {
    pub(super) election_timeout_ms: u64,
    pub(super) fetch_timeout_ms: u64,
    pub(super) election_backoff_max_ms: u64,
    pub(super) append_linger_ms: u64,
    pub(super) request_timeout_ms: u64,
    pub(super) retry_backoff_ms: u64,
    pub(super) auto_join_enable: bool,
}

/// Reads them, with Kafka's defaults.
pub(super) fn timeouts(props: &Properties) -> Result<Timeouts, ConfigError> {
    Ok(Timeouts {
        election_timeout_ms: parse_num(props, "controller.quorum.election.timeout.ms", 1000)?,
        fetch_timeout_ms: parse_num(props, "controller.quorum.fetch.timeout.ms", 2000)?,
        election_backoff_max_ms: parse_num(
            props,
            "controller.quorum.election.backoff.max.ms",
            1000,
        )?,
        append_linger_ms: parse_num(props, "controller.quorum.append.linger.ms", 25)?,
        request_timeout_ms: parse_num(props, "controller.quorum.request.timeout.ms", 2000)?,
        retry_backoff_ms: parse_num(props, "controller.quorum.retry.backoff.ms", 20)?,
        auto_join_enable: parse_bool(props, "controller.quorum.auto.join.enable", false)?,
    })
}
