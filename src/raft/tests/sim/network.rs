//! The simulated network: random delay (which reorders), drops, duplicates, and directed
//! link filters for partitions (symmetric, asymmetric, or requests-only as Kafka's
//! `DropOutboundRequestsTo`).

use std::collections::BTreeMap;

use crate::raft::Rng;

/// What a directed link lets through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkFilter {
    /// Requests are dropped; responses still pass (Kafka's `DropOutboundRequestsTo`).
    DropRequests,
    /// Everything is dropped.
    DropAll,
}

/// Message kinds, for the filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Request,
    Response,
}

/// Random behaviour of the links. Probabilities are per million.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetConfig {
    pub min_delay_ms: u64,
    pub max_delay_ms: u64,
    /// Occasionally a much slower message (reorders against later ones).
    pub slow_ppm: u64,
    pub slow_max_delay_ms: u64,
    pub drop_ppm: u64,
    pub duplicate_ppm: u64,
    /// A request to a node that is down fails fast (connection refused) this often; else it
    /// is silently lost and the sender's request timeout fires.
    pub refused_ppm: u64,
}

impl NetConfig {
    /// Nothing lost; 5–25 ms of delay (Kafka's simulation uses a few ms; longer round trips
    /// cost fewer events per virtual second while leaderless replicas poll each other).
    pub fn benign() -> Self {
        Self {
            min_delay_ms: 5,
            max_delay_ms: 25,
            slow_ppm: 0,
            slow_max_delay_ms: 0,
            drop_ppm: 0,
            duplicate_ppm: 0,
            refused_ppm: 500_000,
        }
    }
}

/// What happens to one message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fate {
    Dropped,
    /// Delivered after each delay (two entries: duplicated).
    Delivered(Vec<u64>),
}

#[derive(Debug, Clone)]
pub struct Network {
    pub cfg: NetConfig,
    /// (from, to) → filter.
    filters: BTreeMap<(i32, i32), LinkFilter>,
}

impl Network {
    pub fn new(cfg: NetConfig) -> Self {
        Self {
            cfg,
            filters: BTreeMap::new(),
        }
    }

    pub fn set_filter(&mut self, from: i32, to: i32, filter: Option<LinkFilter>) {
        match filter {
            Some(f) => self.filters.insert((from, to), f),
            None => self.filters.remove(&(from, to)),
        };
    }

    /// Cuts `node` off from every node in `others`, both directions.
    pub fn isolate(&mut self, node: i32, others: impl IntoIterator<Item = i32>) {
        for other in others {
            if other != node {
                self.set_filter(node, other, Some(LinkFilter::DropAll));
                self.set_filter(other, node, Some(LinkFilter::DropAll));
            }
        }
    }

    /// Lifts every filter touching `node`.
    pub fn reconnect(&mut self, node: i32) {
        self.filters.retain(|(a, b), _| *a != node && *b != node);
    }

    pub fn heal_all(&mut self) {
        self.filters.clear();
    }

    pub fn passes(&self, from: i32, to: i32, kind: Kind) -> bool {
        match self.filters.get(&(from, to)) {
            None => true,
            Some(LinkFilter::DropAll) => false,
            Some(LinkFilter::DropRequests) => kind == Kind::Response,
        }
    }

    fn delay(&self, rng: &mut Rng) -> u64 {
        let c = &self.cfg;
        if c.slow_ppm > 0 && rng.below(1_000_000) < c.slow_ppm {
            return c.min_delay_ms + rng.below(c.slow_max_delay_ms.max(1));
        }
        c.min_delay_ms + rng.below(c.max_delay_ms.saturating_sub(c.min_delay_ms) + 1)
    }

    /// Decides the fate of a message from `from` to `to`.
    pub fn route(&self, rng: &mut Rng, from: i32, to: i32, kind: Kind) -> Fate {
        if !self.passes(from, to, kind) {
            return Fate::Dropped;
        }
        if self.cfg.drop_ppm > 0 && rng.below(1_000_000) < self.cfg.drop_ppm {
            return Fate::Dropped;
        }
        let mut delays = vec![self.delay(rng)];
        if self.cfg.duplicate_ppm > 0 && rng.below(1_000_000) < self.cfg.duplicate_ppm {
            delays.push(self.delay(rng));
        }
        Fate::Delivered(delays)
    }

    /// Whether a request to a node that is down fails fast.
    pub fn refused(&self, rng: &mut Rng) -> bool {
        rng.below(1_000_000) < self.cfg.refused_ppm
    }
}
