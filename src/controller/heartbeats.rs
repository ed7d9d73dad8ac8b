//! Broker sessions: soft state of the active controller, never in the log (Kafka's
//! `BrokerHeartbeatManager`).
//!
//! ```text
//!   heartbeat(id, epoch, now) ─▶ contact time of (id, epoch) ─▶ checked ─▶ next_broker_state
//!   poll_timeout ─▶ the earliest contact expiry
//!   first expired (id, epoch) in Kafka's map order ─▶ the replication manager fences it
//!        (registered epoch) or drops it; the next one waits for the next run
//! ```
//!
//! Kafka's tracker keeps the contact times in a `ConcurrentHashMap` and its periodic task
//! takes the first expired entry in that map's iteration order, one per run. Which of two
//! entries that expired together goes first is visible (the other waits 10 ms), so
//! `JavaHashOrder` keeps the entries in the bins that map would hold them in.
//!
//! Activation gives every unfenced broker a fresh session (last contact = activation time,
//! KAFKA-18138 / KAFKA-19130), so a failover never fences brokers that heartbeated the old
//! leader, and a broker that died at the failover is still fenced.

use std::collections::{BTreeMap, BTreeSet};

/// What the controller knows of a broker between heartbeats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BrokerSession {
    /// The metadata offset it last reported (`CurrentMetadataOffset`), -1 before any.
    pub metadata_offset: i64,
    /// Whether the session counts the broker as fenced.
    pub fenced: bool,
    /// End offset of the batch that put the broker into controlled shutdown, once it is in
    /// one (Kafka: `controlledShutdownOffset`, -1 when not shutting down).
    pub controlled_shutdown_offset: Option<i64>,
}

impl BrokerSession {
    fn new(fenced: bool) -> Self {
        Self {
            metadata_offset: -1,
            fenced,
            controlled_shutdown_offset: None,
        }
    }

    /// Kafka's `currentBrokerState`.
    pub fn state(&self) -> BrokerControlState {
        if self.controlled_shutdown_offset.is_some() {
            BrokerControlState::ControlledShutdown
        } else if self.fenced {
            BrokerControlState::Fenced
        } else {
            BrokerControlState::Unfenced
        }
    }

    /// Unfenced and not shutting down: its metadata offset bounds controlled shutdowns.
    fn active(&self) -> bool {
        !self.fenced && self.controlled_shutdown_offset.is_none()
    }
}

/// A broker's state as the heartbeat reply reports it (Kafka's `BrokerControlState`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BrokerControlState {
    /// Registered, not serving.
    Fenced,
    /// Serving.
    Unfenced,
    /// Moving its leaderships away before it stops.
    ControlledShutdown,
    /// May stop now.
    ShutdownNow,
}

impl BrokerControlState {
    /// `IsFenced` of the reply.
    pub fn fenced(self) -> bool {
        matches!(self, Self::Fenced | Self::ShutdownNow)
    }

    /// Whether the broker is in controlled shutdown.
    pub fn in_controlled_shutdown(self) -> bool {
        self == Self::ControlledShutdown
    }

    /// `ShouldShutDown` of the reply.
    pub fn should_shut_down(self) -> bool {
        self == Self::ShutdownNow
    }
}

/// The sessions of the registered brokers, as the active controller keeps them. Contact
/// times are kept per (broker id, broker epoch), as Kafka 4.1's `BrokerHeartbeatTracker`
/// does: every heartbeat counts, valid or not, and an entry lives until it expires.
#[derive(Debug, Clone, Default)]
pub struct BrokerHeartbeatManager {
    sessions: BTreeMap<i32, BrokerSession>,
    /// Last contact by (broker id, broker epoch).
    contacts: BTreeMap<(i32, i64), u64>,
    /// The same entries ordered by last contact, oldest first: the next expiry and the
    /// expired entries cost what they return, not the number of brokers (Kafka keeps its
    /// unfenced brokers in contact order for the same reason).
    by_contact: BTreeSet<(u64, (i32, i64))>,
    /// The same entries in the iteration order of Kafka's tracker map.
    java_order: JavaHashOrder,
}

impl BrokerHeartbeatManager {
    /// Sessions for `brokers` (id, epoch, fenced) at activation: the unfenced ones get a
    /// whole session timeout from `now_ms` to heartbeat the new controller (KAFKA-18138,
    /// KAFKA-19130).
    pub fn activate(brokers: impl IntoIterator<Item = (i32, i64, bool)>, now_ms: u64) -> Self {
        let mut m = Self::default();
        for (id, epoch, fenced) in brokers {
            m.sessions.insert(id, BrokerSession::new(fenced));
            if !fenced {
                m.set_contact((id, epoch), now_ms);
            }
        }
        m
    }

    /// The session of `broker_id`, if it has one.
    pub fn session(&self, broker_id: i32) -> Option<&BrokerSession> {
        self.sessions.get(&broker_id)
    }

    /// A heartbeat arrived from (`broker_id`, `broker_epoch`) at `now_ms`, before it is
    /// checked (Kafka's `trackBrokerHeartbeat`).
    pub fn track_contact(&mut self, broker_id: i32, broker_epoch: i64, now_ms: u64) {
        let key = (broker_id, broker_epoch);
        let latest = self.contacts.get(&key).map_or(now_ms, |t| (*t).max(now_ms));
        self.set_contact(key, latest);
    }

    /// Sets the last contact of `key`, keeping the order index in step.
    fn set_contact(&mut self, key: (i32, i64), at_ms: u64) {
        if let Some(old) = self.contacts.insert(key, at_ms) {
            self.by_contact.remove(&(old, key));
        } else {
            self.java_order.insert(key);
        }
        self.by_contact.insert((at_ms, key));
        debug_assert_eq!(self.contacts.len(), self.by_contact.len());
    }

    /// Kafka's `touch`: a checked heartbeat leaves `broker_id` `fenced` or not, at
    /// `metadata_offset`. A fenced broker leaves controlled shutdown.
    pub fn touch(&mut self, broker_id: i32, fenced: bool, metadata_offset: i64) {
        let s = self
            .sessions
            .entry(broker_id)
            .or_insert_with(|| BrokerSession::new(fenced));
        s.metadata_offset = metadata_offset;
        s.fenced = fenced;
        if fenced {
            s.controlled_shutdown_offset = None;
        }
    }

    /// A registration was written: the broker's session starts over, `fenced` as the record
    /// says (a controlled shutdown in progress is forgotten, as Kafka's replay forgets it).
    pub fn register(&mut self, broker_id: i32, fenced: bool) {
        self.sessions.insert(broker_id, BrokerSession::new(fenced));
    }

    /// Kafka's `ClusterControlManager.replayRegistrationChange` (every BrokerRegistrationChange,
    /// FenceBroker and UnfenceBroker record the active controller writes) calls
    /// `BrokerHeartbeatManager.register(id, fenced)`: a session whose fencing the record left
    /// unchanged restarts at metadata offset -1 (an unfencing heartbeat's `touch` came first,
    /// so that is the usual case), one whose fencing changed keeps its offset, and a fenced
    /// one leaves controlled shutdown (so a broker fenced by session expiry during its
    /// controlled shutdown is usable for placement again, 4.1.2's bytecode).
    pub fn replayed_registration_change(&mut self, broker_id: i32, fenced: bool) {
        let offset = match self.sessions.get(&broker_id) {
            Some(s) if s.fenced != fenced => s.metadata_offset,
            _ => -1,
        };
        self.touch(broker_id, fenced, offset);
    }

    /// The broker left the cluster.
    pub fn remove(&mut self, broker_id: i32) {
        self.sessions.remove(&broker_id);
    }

    /// The broker was fenced without a heartbeat (its session expired).
    pub fn fence(&mut self, broker_id: i32) {
        if let Some(s) = self.sessions.get_mut(&broker_id) {
            s.fenced = true;
        }
    }

    /// Kafka's `maybeUpdateControlledShutdownOffset`: the broker is in controlled shutdown
    /// since the batch ending at `offset` (kept from the first such batch).
    pub fn enter_controlled_shutdown(&mut self, broker_id: i32, offset: i64) {
        if let Some(s) = self.sessions.get_mut(&broker_id) {
            if !s.fenced {
                s.controlled_shutdown_offset.get_or_insert(offset);
            }
        }
    }

    fn expired(last_contact_ms: u64, now_ms: u64, session_timeout_ms: u64) -> bool {
        last_contact_ms.saturating_add(session_timeout_ms) < now_ms
    }

    /// Kafka 4.1's `hasValidSession(id, epoch)`: (id, epoch) heartbeated within the
    /// timeout, fenced or not.
    pub fn has_valid_session(
        &self,
        broker_id: i32,
        broker_epoch: i64,
        now_ms: u64,
        session_timeout_ms: u64,
    ) -> bool {
        self.contacts
            .get(&(broker_id, broker_epoch))
            .is_some_and(|t| !Self::expired(*t, now_ms, session_timeout_ms))
    }

    /// When the first contact entry expires.
    pub fn next_expiry_ms(&self, session_timeout_ms: u64) -> Option<u64> {
        self.by_contact
            .first()
            .map(|(t, _)| t.saturating_add(session_timeout_ms) + 1)
    }

    /// Removes the first contact entry expired at `now_ms` in the iteration order of Kafka's
    /// tracker map and returns it (Kafka's `maybeRemoveExpired`: one entry per fencing run).
    pub fn remove_first_expired(
        &mut self,
        now_ms: u64,
        session_timeout_ms: u64,
    ) -> Option<(i32, i64)> {
        // The oldest contact says whether any expired, without walking the map.
        let &(oldest, _) = self.by_contact.first()?;
        if !Self::expired(oldest, now_ms, session_timeout_ms) {
            return None;
        }
        let key = self.java_order.iter().find(|k| {
            self.contacts
                .get(k)
                .is_some_and(|t| Self::expired(*t, now_ms, session_timeout_ms))
        })?;
        if let Some(t) = self.contacts.remove(&key) {
            self.by_contact.remove(&(t, key));
        }
        self.java_order.remove(key);
        Some(key)
    }

    /// Kafka's `lowestActiveOffset`: the lowest metadata offset of the active brokers
    /// (unfenced, not shutting down); `i64::MAX` when there are none.
    pub fn lowest_active_offset(&self) -> i64 {
        self.sessions
            .values()
            .filter(|s| s.active())
            .map(|s| s.metadata_offset)
            .min()
            .unwrap_or(i64::MAX)
    }

    /// Kafka's `calculateNextBrokerState` for a heartbeat from `broker_id`: (current, next).
    pub fn next_state(
        &self,
        broker_id: i32,
        ask: HeartbeatAsk,
        leads_partitions: impl FnOnce() -> bool,
    ) -> (BrokerControlState, BrokerControlState) {
        let session = self.sessions.get(&broker_id);
        let current = session.map_or(BrokerControlState::Fenced, BrokerSession::state);
        let shutdown_offset = session.and_then(|s| s.controlled_shutdown_offset);
        let next = next_broker_state(current, ask, leads_partitions, || {
            shutdown_offset.is_some_and(|o| o <= self.lowest_active_offset())
        });
        (current, next)
    }
}

/// What a heartbeat asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeartbeatAsk {
    /// `WantFence`.
    pub want_fence: bool,
    /// `WantShutDown`.
    pub want_shut_down: bool,
    /// `CurrentMetadataOffset` reached the registration's offset.
    pub caught_up: bool,
}

/// Kafka's `calculateNextBrokerState`: where a broker goes from `current` given what its
/// heartbeat asks; `leads_partitions` and `shutdown_done` (its controlled-shutdown offset is
/// at or below every active broker's metadata offset) are asked only when they matter.
pub fn next_broker_state(
    current: BrokerControlState,
    ask: HeartbeatAsk,
    leads_partitions: impl FnOnce() -> bool,
    shutdown_done: impl FnOnce() -> bool,
) -> BrokerControlState {
    use BrokerControlState as S;
    match current {
        S::Fenced if ask.want_shut_down => S::ShutdownNow,
        S::Fenced if !ask.want_fence && ask.caught_up => S::Unfenced,
        S::Fenced => S::Fenced,
        S::Unfenced if ask.want_fence && ask.want_shut_down => S::ShutdownNow,
        S::Unfenced if ask.want_fence => S::Fenced,
        S::Unfenced if ask.want_shut_down => {
            if leads_partitions() {
                S::ControlledShutdown
            } else {
                S::ShutdownNow
            }
        }
        S::Unfenced => S::Unfenced,
        S::ControlledShutdown => {
            if leads_partitions() {
                S::ControlledShutdown
            } else if shutdown_done() {
                S::ShutdownNow
            } else {
                S::ControlledShutdown
            }
        }
        S::ShutdownNow => S::ShutdownNow,
    }
}

/// Java's `ConcurrentHashMap<BrokerIdAndEpoch, Long>` as far as its iteration order goes: the
/// bins of a table of 16 that doubles once it holds three quarters of its capacity (never
/// shrinking), a bin in insertion order, split at a resize as Java's `transfer` splits it.
/// Not modelled: tree bins (eight entries in one bin of a table of 64 or more).
#[derive(Debug, Clone)]
struct JavaHashOrder {
    bins: Vec<Vec<(i32, i64)>>,
    len: usize,
}

impl Default for JavaHashOrder {
    fn default() -> Self {
        JavaHashOrder {
            bins: vec![Vec::new(); 16],
            len: 0,
        }
    }
}

impl JavaHashOrder {
    /// `BrokerIdAndEpoch.hashCode` (`Objects.hash(id, epoch)`) spread as the map spreads it.
    fn spread((id, epoch): (i32, i64)) -> u32 {
        let long_hash = (epoch ^ ((epoch as u64) >> 32) as i64) as i32;
        let h = 31i32
            .wrapping_mul(31i32.wrapping_add(id))
            .wrapping_add(long_hash) as u32;
        (h ^ (h >> 16)) & 0x7fff_ffff
    }

    fn bin(&self, key: (i32, i64)) -> usize {
        Self::spread(key) as usize & (self.bins.len() - 1)
    }

    /// A new key (an existing one keeps its place: Java replaces the value in its node).
    fn insert(&mut self, key: (i32, i64)) {
        let b = self.bin(key);
        self.bins[b].push(key);
        self.len += 1;
        if self.len >= self.bins.len() - self.bins.len() / 4 {
            self.grow();
        }
    }

    fn remove(&mut self, key: (i32, i64)) {
        let b = self.bin(key);
        if let Some(i) = self.bins[b].iter().position(|k| *k == key) {
            self.bins[b].remove(i);
            self.len -= 1;
        }
    }

    /// Java's `transfer`: each bin splits into the low and high bins of the doubled table; the
    /// trailing run that goes to one side keeps its order, the entries before it are pushed
    /// in front of their side one by one (so they come reversed).
    fn grow(&mut self) {
        let n = self.bins.len();
        let mut bins = vec![Vec::new(); 2 * n];
        for (i, bin) in self.bins.iter().enumerate() {
            let high = |k: &(i32, i64)| Self::spread(*k) as usize & n != 0;
            let Some(last) = bin.last() else { continue };
            let run_bit = high(last);
            let run_start = bin
                .iter()
                .rposition(|k| high(k) != run_bit)
                .map_or(0, |p| p + 1);
            let (mut lo, mut hi) = (Vec::new(), Vec::new());
            for k in bin[..run_start].iter().rev() {
                if high(k) {
                    hi.push(*k)
                } else {
                    lo.push(*k)
                }
            }
            let side = if run_bit { &mut hi } else { &mut lo };
            side.extend_from_slice(&bin[run_start..]);
            bins[i] = lo;
            bins[i + n] = hi;
        }
        self.bins = bins;
    }

    fn iter(&self) -> impl Iterator<Item = (i32, i64)> + '_ {
        self.bins.iter().flatten().copied()
    }
}
