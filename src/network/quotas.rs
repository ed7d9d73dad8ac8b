//! Who may hold a connection: Kafka's `max.connections` (all listeners),
//! `listener.name.<l>.max.connections`, `max.connections.per.ip` and its overrides, enforced as
//! connections are accepted.
//!
//! Where Kafka's acceptor waits for a slot when a listener is full (so that idle connections
//! can lock everyone out until `connections.max.idle.ms`), ferrokraft makes room: the least
//! recently active connection that has carried no cluster traffic is closed for the new one,
//! and only when none is left, the least recently active of the others. Cluster traffic is
//! what Kafka authorizes as CLUSTER_ACTION (Raft RPCs from voters and observers, broker
//! registrations and heartbeats, AlterPartition, Envelope): the connections of the quorum and
//! its brokers, which is what Kafka protects by exempting its inter-broker listener. Without
//! authentication (#16) anyone can send such a request, so cluster traffic is protected, not
//! exempt: the quorum's live connections are active every few hundred milliseconds (fetches,
//! heartbeats) and so are the last to go, while a connection that sent one Fetch and went
//! quiet goes first once the clients are gone. Recency is an activity sequence number, not a
//! clock.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use kafka_protocol::messages::ApiKey;
use tokio_util::sync::CancellationToken;

/// The limits, with `max.connections.per.ip.overrides` resolved to addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotaLimits {
    /// `max.connections` (already bounded by the file descriptors the process may open).
    pub max_connections: usize,
    /// `listener.name.<l>.max.connections`, by upper-case listener name.
    pub listener_max_connections: BTreeMap<String, usize>,
    /// `max.connections.per.ip`.
    pub max_connections_per_ip: usize,
    /// `max.connections.per.ip.overrides`, resolved.
    pub per_ip_overrides: HashMap<IpAddr, usize>,
}

/// Whether a request of `api_key` marks its connection as cluster traffic, never evicted for
/// a client (the API table's `cluster_traffic`).
pub fn is_cluster_action(api_key: ApiKey) -> bool {
    crate::codec::apis::api(api_key).is_some_and(|a| a.cluster_traffic)
}

#[derive(Debug)]
struct Entry {
    ip: IpAddr,
    listener: String,
    cluster_traffic: bool,
    last_activity: u64,
    close: CancellationToken,
}

#[derive(Debug, Default)]
struct Registry {
    next_id: u64,
    entries: HashMap<u64, Entry>,
    per_ip: HashMap<IpAddr, usize>,
    per_listener: HashMap<String, usize>,
}

impl Registry {
    fn remove(&mut self, id: u64) -> Option<Entry> {
        let entry = self.entries.remove(&id)?;
        decrement(&mut self.per_ip, &entry.ip);
        decrement(&mut self.per_listener, &entry.listener);
        Some(entry)
    }
}

fn decrement<K: std::hash::Hash + Eq>(counts: &mut HashMap<K, usize>, key: &K) {
    if let Some(n) = counts.get_mut(key) {
        *n -= 1;
        if *n == 0 {
            counts.remove(key);
        }
    }
}

/// What became of a new connection.
#[derive(Debug)]
pub enum Admission {
    /// Serve it; `evicted` names the connection closed to make room, if one was.
    Admitted {
        /// The slot the connection holds until it ends.
        slot: ConnectionSlot,
        /// The address of the connection closed for it.
        evicted: Option<IpAddr>,
    },
    /// Its address already holds its maximum (Kafka's TooManyConnectionsException).
    PerIpLimit {
        /// The maximum for that address.
        limit: usize,
    },
    /// The limit is reached and there is no connection to close for it.
    Full {
        /// The limit that is reached.
        limit: usize,
    },
}

/// The connections of every listener of one node.
#[derive(Debug)]
pub struct ConnectionQuotas {
    limits: QuotaLimits,
    activity: AtomicU64,
    registry: Mutex<Registry>,
}

impl ConnectionQuotas {
    /// Quotas enforcing `limits`.
    pub fn new(limits: QuotaLimits) -> Arc<Self> {
        Arc::new(Self {
            limits,
            activity: AtomicU64::new(0),
            registry: Mutex::new(Registry::default()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Connections open now.
    pub fn open_connections(&self) -> usize {
        self.lock().entries.len()
    }

    /// Admits a connection from `ip` on `listener`, closing another to make room if needed.
    pub fn admit(self: &Arc<Self>, listener: &str, ip: IpAddr) -> Admission {
        let ip_limit = self
            .limits
            .per_ip_overrides
            .get(&ip)
            .copied()
            .unwrap_or(self.limits.max_connections_per_ip);
        let mut reg = self.lock();
        if reg.per_ip.get(&ip).copied().unwrap_or(0) >= ip_limit {
            return Admission::PerIpLimit { limit: ip_limit };
        }
        let listener_limit = self.limits.listener_max_connections.get(listener).copied();
        let listener_full = listener_limit
            .is_some_and(|max| reg.per_listener.get(listener).copied().unwrap_or(0) >= max);
        let total_full = reg.entries.len() >= self.limits.max_connections;
        let mut evicted = None;
        if listener_full || total_full {
            // The least recently active client connection, on this listener if that is the
            // limit reached, else on any; cluster traffic only when no client is left.
            let victim = reg
                .entries
                .iter()
                .filter(|(_, e)| !listener_full || e.listener == listener)
                .min_by_key(|(_, e)| (e.cluster_traffic, e.last_activity))
                .map(|(id, _)| *id);
            let Some(victim) = victim else {
                let limit = if listener_full {
                    listener_limit.unwrap_or(self.limits.max_connections)
                } else {
                    self.limits.max_connections
                };
                return Admission::Full { limit };
            };
            if let Some(entry) = reg.remove(victim) {
                entry.close.cancel();
                evicted = Some(entry.ip);
            }
        }
        let id = reg.next_id;
        reg.next_id += 1;
        let close = CancellationToken::new();
        reg.entries.insert(
            id,
            Entry {
                ip,
                listener: listener.to_string(),
                cluster_traffic: false,
                last_activity: self.activity.fetch_add(1, Ordering::Relaxed),
                close: close.clone(),
            },
        );
        *reg.per_ip.entry(ip).or_insert(0) += 1;
        *reg.per_listener.entry(listener.to_string()).or_insert(0) += 1;
        Admission::Admitted {
            slot: ConnectionSlot {
                quotas: self.clone(),
                id,
                close,
            },
            evicted,
        }
    }
}

/// A connection's place in [`ConnectionQuotas`]; dropping it frees the place.
#[derive(Debug)]
pub struct ConnectionSlot {
    quotas: Arc<ConnectionQuotas>,
    id: u64,
    close: CancellationToken,
}

impl ConnectionSlot {
    /// Cancelled when the connection is closed to make room for another.
    pub fn evicted(&self) -> &CancellationToken {
        &self.close
    }

    /// Records a request on this connection (and whether it is cluster traffic).
    pub fn record_request(&self, api_key: ApiKey) {
        let seq = self.quotas.activity.fetch_add(1, Ordering::Relaxed);
        let mut reg = self.quotas.lock();
        if let Some(e) = reg.entries.get_mut(&self.id) {
            e.last_activity = seq;
            e.cluster_traffic |= is_cluster_action(api_key);
        }
    }
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        self.quotas.lock().remove(self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn limits(max: usize, per_ip: usize) -> QuotaLimits {
        QuotaLimits {
            max_connections: max,
            listener_max_connections: BTreeMap::new(),
            max_connections_per_ip: per_ip,
            per_ip_overrides: HashMap::new(),
        }
    }

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, last))
    }

    fn admitted(a: Admission) -> (ConnectionSlot, Option<IpAddr>) {
        match a {
            Admission::Admitted { slot, evicted } => (slot, evicted),
            other => panic!("not admitted: {other:?}"),
        }
    }

    #[test]
    fn a_full_listener_closes_the_least_recently_active_client() {
        let q = ConnectionQuotas::new(limits(3, 100));
        let (peer, _) = admitted(q.admit("CONTROLLER", ip(1)));
        peer.record_request(ApiKey::Fetch);
        let (idle, _) = admitted(q.admit("CONTROLLER", ip(2)));
        let (active, _) = admitted(q.admit("CONTROLLER", ip(3)));
        active.record_request(ApiKey::ApiVersions);
        let (_new, evicted) = admitted(q.admit("CONTROLLER", ip(4)));
        assert_eq!(evicted, Some(ip(2)));
        assert!(idle.evicted().is_cancelled());
        assert!(!peer.evicted().is_cancelled() && !active.evicted().is_cancelled());
        assert_eq!(q.open_connections(), 3);
        drop(idle);
        assert_eq!(
            q.open_connections(),
            3,
            "an evicted slot is not counted twice"
        );
        // The next to go is the client, not the cluster connection, however idle.
        let (_newer, evicted) = admitted(q.admit("CONTROLLER", ip(5)));
        assert_eq!(evicted, Some(ip(3)));
    }

    #[test]
    fn cluster_traffic_goes_last_least_recently_active_first() {
        let q = ConnectionQuotas::new(limits(2, 100));
        let (a, _) = admitted(q.admit("CONTROLLER", ip(1)));
        let (b, _) = admitted(q.admit("CONTROLLER", ip(2)));
        // b sent one Fetch and went quiet; a keeps fetching.
        b.record_request(ApiKey::Fetch);
        a.record_request(ApiKey::Vote);
        a.record_request(ApiKey::Fetch);
        let (_c, evicted) = admitted(q.admit("CONTROLLER", ip(3)));
        assert_eq!(evicted, Some(ip(2)));
        assert!(b.evicted().is_cancelled() && !a.evicted().is_cancelled());
        // A client (c) goes before the cluster connection, however recent.
        let (_d, evicted) = admitted(q.admit("CONTROLLER", ip(4)));
        assert_eq!(evicted, Some(ip(3)));
    }

    #[test]
    fn per_ip_limits_and_overrides() {
        let mut l = limits(100, 2);
        l.per_ip_overrides.insert(ip(9), 0);
        let q = ConnectionQuotas::new(l);
        let _a = admitted(q.admit("CONTROLLER", ip(1)));
        let _b = admitted(q.admit("CONTROLLER", ip(1)));
        assert!(matches!(
            q.admit("CONTROLLER", ip(1)),
            Admission::PerIpLimit { limit: 2 }
        ));
        assert!(matches!(
            q.admit("CONTROLLER", ip(9)),
            Admission::PerIpLimit { limit: 0 }
        ));
        let _c = admitted(q.admit("CONTROLLER", ip(2)));
    }

    #[test]
    fn listener_limit_evicts_on_that_listener() {
        let mut l = limits(100, 100);
        l.listener_max_connections.insert("CONTROLLER".into(), 1);
        let q = ConnectionQuotas::new(l);
        let (other, _) = admitted(q.admit("OTHER", ip(1)));
        let (first, _) = admitted(q.admit("CONTROLLER", ip(2)));
        let (_second, evicted) = admitted(q.admit("CONTROLLER", ip(3)));
        assert_eq!(evicted, Some(ip(2)));
        assert!(first.evicted().is_cancelled() && !other.evicted().is_cancelled());
    }
}
