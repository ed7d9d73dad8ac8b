//! Warnings about misbehaving peers, rate-limited per address, so that a hostile client cannot
//! fill the disk or bury real errors: the first warning from an address in an interval is
//! logged in full, later ones in that interval only counted, and the count is reported with the
//! next warning logged for that address.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long after a logged warning further ones from the same address are only counted.
pub const WARN_INTERVAL: Duration = Duration::from_secs(60);

/// Addresses tracked at once; beyond it, new addresses share one bucket.
const MAX_TRACKED_ADDRESSES: usize = 4096;

/// The bucket shared by addresses beyond [`MAX_TRACKED_ADDRESSES`].
const OVERFLOW_BUCKET: IpAddr = IpAddr::V4(Ipv4Addr::UNSPECIFIED);

#[derive(Debug, Clone, Copy)]
struct Window {
    logged_at: Instant,
    suppressed: u64,
}

/// Per-address warning windows, shared by every connection of a node.
#[derive(Debug)]
pub struct PeerWarnings {
    interval: Duration,
    windows: Mutex<HashMap<IpAddr, Window>>,
}

impl Default for PeerWarnings {
    fn default() -> Self {
        Self::new(WARN_INTERVAL)
    }
}

#[allow(
    clippy::disallowed_methods,
    reason = "the network layer is driver-side; rate-limiting a log needs the clock"
)]
fn now() -> Instant {
    Instant::now()
}

impl PeerWarnings {
    /// Windows of `interval`.
    pub fn new(interval: Duration) -> Self {
        Self {
            interval,
            windows: Mutex::new(HashMap::new()),
        }
    }

    /// Decides about one warning from `ip` at `now`: `Some(n)` to log it (n earlier ones were
    /// suppressed since the last one logged), `None` to count it only.
    pub fn admit(&self, ip: IpAddr, now: Instant) -> Option<u64> {
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        let key = if windows.len() >= MAX_TRACKED_ADDRESSES && !windows.contains_key(&ip) {
            let interval = self.interval;
            windows.retain(|_, w| now.duration_since(w.logged_at) < interval);
            if windows.len() >= MAX_TRACKED_ADDRESSES {
                OVERFLOW_BUCKET
            } else {
                ip
            }
        } else {
            ip
        };
        match windows.get_mut(&key) {
            Some(w) if now.duration_since(w.logged_at) < self.interval => {
                w.suppressed += 1;
                None
            }
            Some(w) => {
                let suppressed = w.suppressed;
                *w = Window {
                    logged_at: now,
                    suppressed: 0,
                };
                Some(suppressed)
            }
            None => {
                windows.insert(
                    key,
                    Window {
                        logged_at: now,
                        suppressed: 0,
                    },
                );
                Some(0)
            }
        }
    }

    /// Logs `message` about `peer` on `listener` at WARN, unless it is rate-limited (then at
    /// DEBUG).
    pub fn warn(&self, peer: SocketAddr, listener: &str, message: &dyn std::fmt::Display) {
        self.log(peer, listener, message, true);
    }

    /// [`Self::warn`] at INFO (what Kafka logs at INFO, such as a per-address refusal).
    pub fn info(&self, peer: SocketAddr, listener: &str, message: &dyn std::fmt::Display) {
        self.log(peer, listener, message, false);
    }

    fn log(&self, peer: SocketAddr, listener: &str, message: &dyn std::fmt::Display, warn: bool) {
        let Some(suppressed) = self.admit(peer.ip(), now()) else {
            tracing::debug!(peer = %peer, listener = %listener, "{message}");
            return;
        };
        let tail = if suppressed == 0 {
            String::new()
        } else {
            format!(
                " ({suppressed} more about {} were not logged in the last {} s)",
                peer.ip(),
                self.interval.as_secs()
            )
        };
        if warn {
            tracing::warn!(peer = %peer, listener = %listener, "{message}{tail}");
        } else {
            tracing::info!(peer = %peer, listener = %listener, "{message}{tail}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, last))
    }

    #[test]
    fn first_in_full_then_counted_per_interval() {
        let w = PeerWarnings::new(Duration::from_secs(60));
        let t0 = now();
        assert_eq!(w.admit(ip(1), t0), Some(0));
        for s in 1..=5 {
            assert_eq!(w.admit(ip(1), t0 + Duration::from_secs(s)), None);
        }
        // Another address has its own window.
        assert_eq!(w.admit(ip(2), t0 + Duration::from_secs(1)), Some(0));
        // After the interval the next warning is logged with the count.
        assert_eq!(w.admit(ip(1), t0 + Duration::from_secs(61)), Some(5));
        assert_eq!(w.admit(ip(1), t0 + Duration::from_secs(62)), None);
    }

    #[test]
    fn tracked_addresses_are_bounded() {
        let w = PeerWarnings::new(Duration::from_secs(60));
        let t0 = now();
        for i in 0..(MAX_TRACKED_ADDRESSES as u32 + 100) {
            let a = IpAddr::V4(Ipv4Addr::from(0x0a00_0000 + i));
            w.admit(a, t0);
        }
        let windows = w.windows.lock().unwrap();
        assert!(
            windows.len() <= MAX_TRACKED_ADDRESSES + 1,
            "{}",
            windows.len()
        );
        assert!(windows.contains_key(&OVERFLOW_BUCKET));
    }
}
