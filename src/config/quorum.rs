//! The Raft client keys (Kafka's QuorumConfig): its timeouts and backoffs, whether an
//! observer joins the quorum on its own, and how much a follower asks for per Fetch and
//! FetchSnapshot (KIP-1219). The voters and bootstrap servers are addresses
//! (`listeners.rs`).

use super::properties::{get, invalid, parse_bool, parse_num, ConfigError, Properties};

/// The `controller.quorum.*` timings and `controller.quorum.auto.join.enable`.
pub(super) struct Timeouts {
    pub(super) election_timeout_ms: u64,
    pub(super) fetch_timeout_ms: u64,
    pub(super) election_backoff_max_ms: u64,
    pub(super) append_linger_ms: u64,
    pub(super) request_timeout_ms: u64,
    pub(super) retry_backoff_ms: u64,
    pub(super) auto_join_enable: bool,
    /// `controller.quorum.fetch.max.bytes` when given (Kafka 4.3's key; its default depends
    /// on the release presented, which is known only once the directory is read).
    pub(super) fetch_max_bytes: Option<i32>,
    /// `controller.quorum.fetch.snapshot.max.bytes` when given (Kafka 4.3's key).
    pub(super) fetch_snapshot_max_bytes: Option<i32>,
}

/// An INT key with Kafka's `atLeast(1)` bound that may be absent (its default is the
/// release's). Kafka's message shows the parsed value, not its spelling.
fn optional_positive(props: &Properties, key: &str) -> Result<Option<i32>, ConfigError> {
    if get(props, key).is_none() {
        return Ok(None);
    }
    let value: i32 = parse_num(props, key, 1)?;
    if value < 1 {
        return Err(invalid(key, &value.to_string(), "Value must be at least 1"));
    }
    Ok(Some(value))
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
        fetch_max_bytes: optional_positive(props, "controller.quorum.fetch.max.bytes")?,
        fetch_snapshot_max_bytes: optional_positive(
            props,
            "controller.quorum.fetch.snapshot.max.bytes",
        )?,
    })
}
