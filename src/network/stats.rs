//! What the socket layer counts for the metrics: Kafka's SocketServer connection metrics per
//! listener, RequestMetrics per API and version, and the raft channel's traffic.
//!
//! ```text
//!   connection task ─ConnectionGuard (open/created/closed), auth outcome─▶ per-listener counts
//!   connection task ─api, version, times of one request─▶ per-API histograms
//!   connection task ─error codes of one response (handler's count)─▶ per-API error counts
//!   peer tasks ─one request/response and its bytes─▶ raft channel counters
//!   GET /metrics (server layer) ─snapshots─▶ Prometheus text
//! ```
//!
//! Plain data under short locks or atomics; the exposition lives in the server layer, so the
//! socket code only reports what happened.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use kafka_protocol::messages::ApiKey;

use crate::common::yammer::Histogram;

/// Connection counts of one listener (Kafka's `socket-server-metrics` per listener).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListenerCounts {
    /// `connection-count`: open now.
    pub open: u64,
    /// `connection-creation-total`.
    pub created: u64,
    /// `connection-close-total`.
    pub closed: u64,
    /// `successful-authentication-total`.
    pub auth_succeeded: u64,
    /// `failed-authentication-total`.
    pub auth_failed: u64,
}

/// Kafka's RequestMetrics of one API: `RequestsPerSec` per version, `ErrorsPerSec` per error
/// code and the time histograms (ms, rounded to whole ms as Kafka's `Math.round`), which Kafka
/// keeps per API only. See [`RequestTimes`] for what each time measures.
#[derive(Debug, Clone, Default)]
pub struct RequestStats {
    /// Requests answered, per version.
    pub count: BTreeMap<i16, u64>,
    /// Error codes answered (NONE included), per code.
    pub errors: BTreeMap<i16, u64>,
    /// `RequestQueueTimeMs`.
    pub queue_ms: Histogram,
    /// `LocalTimeMs`.
    pub local_ms: Histogram,
    /// `RemoteTimeMs`.
    pub remote_ms: Histogram,
    /// `ThrottleTimeMs`.
    pub throttle_ms: Histogram,
    /// `ResponseQueueTimeMs`.
    pub response_queue_ms: Histogram,
    /// `ResponseSendTimeMs`.
    pub send_ms: Histogram,
    /// `TotalTimeMs`.
    pub total_ms: Histogram,
    /// `RequestBytes`: the request frame's size.
    pub request_bytes: Histogram,
}

/// The name Kafka's RequestMetrics count a request under: its API's, and for a Fetch from a
/// replica `FetchFollower` as well (Kafka's `RequestMetrics.FOLLOW_FETCH_METRIC_NAME`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum RequestMetric {
    /// An API, by its key number (`ApiKey` has no order; its number does).
    Api(i16),
    /// A Fetch from a replica.
    FetchFollower,
}

impl RequestMetric {
    /// The `request` label.
    pub fn name(self) -> String {
        match self {
            Self::Api(key) => {
                ApiKey::try_from(key).map_or_else(|()| key.to_string(), |api| format!("{api:?}"))
            }
            Self::FetchFollower => "FetchFollower".to_string(),
        }
    }
}

/// The raft channel's traffic (Kafka's `raft-channel-metrics`): requests this node sends to
/// the other voters and what comes back.
#[derive(Debug, Default)]
pub struct ChannelCounts {
    requests: AtomicU64,
    responses: AtomicU64,
    bytes_out: AtomicU64,
    bytes_in: AtomicU64,
}

/// A copy of [`ChannelCounts`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChannelSnapshot {
    /// `request-total`.
    pub requests: u64,
    /// `response-total`.
    pub responses: u64,
    /// `outgoing-byte-total`.
    pub bytes_out: u64,
    /// `incoming-byte-total`.
    pub bytes_in: u64,
}

impl ChannelCounts {
    /// One request of `bytes` (frame included) sent.
    pub fn sent(&self, bytes: usize) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.bytes_out.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// One response of `bytes` (frame included) received.
    pub fn received(&self, bytes: usize) {
        self.responses.fetch_add(1, Ordering::Relaxed);
        self.bytes_in.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// The counts now.
    pub fn snapshot(&self) -> ChannelSnapshot {
        ChannelSnapshot {
            requests: self.requests.load(Ordering::Relaxed),
            responses: self.responses.load(Ordering::Relaxed),
            bytes_out: self.bytes_out.load(Ordering::Relaxed),
            bytes_in: self.bytes_in.load(Ordering::Relaxed),
        }
    }
}

/// Everything the socket layer counts, shared by the listeners, the peers and `/metrics`.
#[derive(Debug, Default)]
pub struct NetStats {
    listeners: Mutex<BTreeMap<String, ListenerCounts>>,
    /// Metric name → stats.
    requests: Mutex<BTreeMap<RequestMetric, RequestStats>>,
    /// The raft channel (voter-to-voter requests).
    pub raft_channel: std::sync::Arc<ChannelCounts>,
    /// Skip the per-request metrics (without a metrics listener nothing reads them).
    requests_off: bool,
}

/// Adds `errors` (code, count) to `api`'s `ErrorsPerSec`.
fn count_errors(
    map: &mut BTreeMap<RequestMetric, RequestStats>,
    api: ApiKey,
    errors: &[(i16, u32)],
) {
    if errors.is_empty() {
        return;
    }
    let s = map.entry(RequestMetric::Api(api as i16)).or_default();
    for (code, n) in errors {
        *s.errors.entry(*code).or_default() += u64::from(*n);
    }
}

/// The origin of [`monotonic_s`].
static START: OnceLock<RequestClock> = OnceLock::new();

/// A reading of the request clock: `quanta`'s, which reads the TSC where it is invariant
/// (about 11 ns against 27 ns for `std::time::Instant::now` on the VMs measured; it falls back
/// to the OS's monotonic clock elsewhere). Request times and the histograms' decay only.
pub type RequestClock = quanta::Instant;

/// Now, on the request clock.
#[allow(clippy::disallowed_methods)] // request times are wall-clock by nature; not a core
pub fn request_clock() -> RequestClock {
    quanta::Instant::now()
}

/// Seconds on the request clock since its first reading, for the histograms' decay.
pub fn monotonic_s() -> f64 {
    seconds_at(request_clock())
}

/// `at` in [`monotonic_s`]'s seconds, for a caller that has read the clock already: each
/// read saved is time off the request path (docs/benchmarks.md, "The metrics' cost").
pub fn seconds_at(at: RequestClock) -> f64 {
    at.saturating_duration_since(*START.get_or_init(request_clock))
        .as_secs_f64()
}

impl NetStats {
    /// Stats that keep no per-request metrics (`RequestMetrics`): for a node without a
    /// metrics listener, whose requests then cost no histogram updates.
    pub fn without_request_metrics() -> Self {
        Self {
            requests_off: true,
            ..Self::default()
        }
    }

    /// Whether requests are timed: without request metrics nothing reads the times, so the
    /// connections do not read the clock for them either.
    pub fn times_requests(&self) -> bool {
        !self.requests_off
    }

    fn with_listener(&self, listener: &str, f: impl FnOnce(&mut ListenerCounts)) {
        if let Ok(mut map) = self.listeners.lock() {
            match map.get_mut(listener) {
                Some(c) => f(c),
                None => f(map.entry(listener.to_string()).or_default()),
            }
        }
    }

    /// A connection opened on `listener`; closed when the guard drops.
    pub fn connection_opened(&self, listener: &str) -> ConnectionGuard<'_> {
        self.with_listener(listener, |c| {
            c.open += 1;
            c.created += 1;
        });
        ConnectionGuard {
            stats: self,
            listener: listener.to_string(),
        }
    }

    /// A SASL authentication on `listener` ended.
    pub fn authenticated(&self, listener: &str, ok: bool) {
        self.with_listener(listener, |c| {
            if ok {
                c.auth_succeeded += 1;
            } else {
                c.auth_failed += 1;
            }
        });
    }

    /// A response to an `api` request that could not be written, with these error codes:
    /// Kafka counts them at `sendResponse` (`RequestChannel.updateErrorMetrics`), before the
    /// write, so they count whether or not the write succeeds.
    pub fn response_errors(&self, api: ApiKey, errors: &[(i16, u32)]) {
        if errors.is_empty() || self.requests_off {
            return;
        }
        if let Ok(mut map) = self.requests.lock() {
            count_errors(&mut map, api, errors);
        }
    }

    /// One request answered (its response written), with its times (ms), frame size and
    /// the error codes its response carries with their counts (`ErrorsPerSec`, NONE
    /// included, under the API; in the same lock as the times, which is why they come here
    /// and not through [`NetStats::response_errors`]);
    /// `follower_fetch` counts it as `FetchFollower` too. Never inlined, so that a profile
    /// shows what the request metrics cost (docs/benchmarks.md, "The metrics' cost").
    #[inline(never)]
    pub fn request_done(
        &self,
        api: ApiKey,
        version: i16,
        follower_fetch: bool,
        times: RequestTimes,
        request_bytes: usize,
        errors: &[(i16, u32)],
    ) {
        if self.requests_off {
            return;
        }
        let now = times.done_at.map_or_else(monotonic_s, seconds_at);
        let Ok(mut map) = self.requests.lock() else {
            return;
        };
        count_errors(&mut map, api, errors);
        let api_metric = RequestMetric::Api(api as i16);
        let follower = follower_fetch.then_some(RequestMetric::FetchFollower);
        for metric in follower.into_iter().chain([api_metric]) {
            let s = map.entry(metric).or_default();
            *s.count.entry(version).or_default() += 1;
            // Kafka rounds each part to whole ms (`Math.round`) before the histogram.
            s.queue_ms.update(times.queue_ms.round(), now);
            s.local_ms.update(times.local_ms.round(), now);
            s.remote_ms.update(times.remote_ms.round(), now);
            s.throttle_ms.update(f64::from(times.throttle_ms), now);
            s.response_queue_ms
                .update(times.response_queue_ms.round(), now);
            s.send_ms.update(times.send_ms.round(), now);
            s.total_ms.update(times.total_ms.round(), now);
            s.request_bytes.update(request_bytes as f64, now);
        }
    }

    /// Per-listener connection counts.
    pub fn listeners(&self) -> BTreeMap<String, ListenerCounts> {
        self.listeners.lock().map(|m| m.clone()).unwrap_or_default()
    }

    /// Per-API request stats, by API key number (`FetchFollower` last).
    pub fn requests(&self) -> Vec<(RequestMetric, RequestStats)> {
        let Ok(map) = self.requests.lock() else {
            return Vec::new();
        };
        map.iter().map(|(key, s)| (*key, s.clone())).collect()
    }
}

/// The parts of one request's time, in ms, Kafka's `RequestChannel.Request` timestamps as
/// ferrokraft's connection task sees them:
///
/// ```text
///   frame's last bytes read ─queue─▶ handler called ─local─▶ handler returned
///     ─remote─▶ response encoded ─response queue─▶ write starts ─send─▶ written and flushed
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestTimes {
    /// `RequestQueueTimeMs`: the read that completed the frame → the handler called (decode,
    /// SASL, and frames pipelined ahead of it on the connection).
    pub queue_ms: f64,
    /// `LocalTimeMs`: the handler's synchronous part (routing, answering at once, handing
    /// the request to the raft thread), Kafka's `apis.handle` on the handler thread.
    pub local_ms: f64,
    /// `RemoteTimeMs`: the handler returned → the response encoded: the raft thread's queue
    /// and work, the wait for commit, a Fetch's long poll (Kafka's controller future).
    pub remote_ms: f64,
    /// `ThrottleTimeMs`: the throttle applied (the controller mutation quota's, direct
    /// requests only).
    pub throttle_ms: i32,
    /// `ResponseQueueTimeMs`: the response encoded → its write started.
    pub response_queue_ms: f64,
    /// `ResponseSendTimeMs`: writing and flushing the response.
    pub send_ms: f64,
    /// `TotalTimeMs`: the read that completed the frame → the response written.
    pub total_ms: f64,
    /// When the response was written, if the caller read the clock then (the histograms'
    /// decay is counted from it; `None`: read now).
    pub done_at: Option<RequestClock>,
}

/// Counts a connection closed when dropped.
#[derive(Debug)]
pub struct ConnectionGuard<'a> {
    stats: &'a NetStats,
    listener: String,
}

impl Drop for ConnectionGuard<'_> {
    fn drop(&mut self) {
        self.stats.with_listener(&self.listener, |c| {
            c.open = c.open.saturating_sub(1);
            c.closed += 1;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_count_open_created_and_closed() {
        let stats = NetStats::default();
        let a = stats.connection_opened("CONTROLLER");
        let b = stats.connection_opened("CONTROLLER");
        drop(a);
        stats.authenticated("CONTROLLER", false);
        let c = &stats.listeners()["CONTROLLER"];
        assert_eq!((c.open, c.created, c.closed, c.auth_failed), (1, 2, 1, 1));
        drop(b);
        assert_eq!(stats.listeners()["CONTROLLER"].open, 0);
    }

    #[test]
    fn requests_are_kept_per_api_and_version() {
        let stats = NetStats::default();
        let t = RequestTimes {
            total_ms: 3.4,
            local_ms: 2.0,
            send_ms: 1.0,
            ..Default::default()
        };
        stats.request_done(ApiKey::Fetch, 17, true, t, 100, &[]);
        stats.request_done(ApiKey::Fetch, 17, false, t, 100, &[]);
        stats.request_done(ApiKey::Vote, 2, false, t, 50, &[(0, 2)]);
        // A response whose write failed still counts its errors (Kafka counts them first).
        stats.response_errors(ApiKey::Vote, &[(6, 1)]);
        let r = stats.requests();
        assert_eq!(r.len(), 3);
        let fetch = RequestMetric::Api(ApiKey::Fetch as i16);
        assert_eq!((r[0].0, r[0].1.count[&17]), (fetch, 2));
        assert_eq!(r[0].0.name(), "Fetch");
        // Rounded to whole ms, as Kafka's histograms hold longs.
        assert_eq!(r[0].1.total_ms.snapshot().max, 3.0);
        assert_eq!(r[1].0.name(), "Vote");
        assert_eq!(r[1].1.count[&2], 1);
        assert_eq!((r[1].1.errors[&0], r[1].1.errors[&6]), (2, 1));
        // Only the replica's Fetch is a FetchFollower.
        assert_eq!(
            (r[2].0.name().as_str(), r[2].1.count[&17]),
            ("FetchFollower", 1)
        );
        stats.raft_channel.sent(10);
        stats.raft_channel.received(20);
        let c = stats.raft_channel.snapshot();
        assert_eq!(
            (c.requests, c.responses, c.bytes_out, c.bytes_in),
            (1, 1, 10, 20)
        );
        let off = NetStats::without_request_metrics();
        off.request_done(ApiKey::Fetch, 17, false, t, 100, &[(0, 1)]);
        off.response_errors(ApiKey::Fetch, &[(0, 1)]);
        assert!(
            off.requests().is_empty(),
            "nothing kept without a metrics listener"
        );
    }
}
