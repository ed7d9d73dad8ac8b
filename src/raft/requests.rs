//! One request in flight per destination, with timeouts and retry backoff (Kafka's
//! `RequestManager`). All of it is reset on every role transition.

use std::collections::BTreeMap;

use kafka_protocol::messages::ApiKey;

/// What is outstanding towards one destination.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    /// A request is out; it times out at `deadline_ms`.
    Awaiting {
        correlation_id: u64,
        api_key: ApiKey,
        deadline_ms: u64,
    },
    /// After an error, wait until `until_ms`.
    BackingOff { until_ms: u64 },
}

/// Per-destination request state.
#[derive(Debug, Clone, Default)]
pub struct RequestManager {
    slots: BTreeMap<i32, Slot>,
}

impl RequestManager {
    /// Whether a new request may go to `node_id` now.
    pub fn is_ready(&self, node_id: i32, now_ms: u64) -> bool {
        match self.slots.get(&node_id) {
            None => true,
            Some(Slot::Awaiting { .. }) => false,
            Some(Slot::BackingOff { until_ms }) => now_ms >= *until_ms,
        }
    }

    /// Whether `node_id` is backing off or has timed out recently.
    pub fn is_backing_off(&self, node_id: i32, now_ms: u64) -> bool {
        matches!(self.slots.get(&node_id), Some(Slot::BackingOff { until_ms }) if now_ms < *until_ms)
    }

    /// Whether any request is outstanding.
    pub fn has_any_in_flight(&self) -> bool {
        self.slots
            .values()
            .any(|s| matches!(s, Slot::Awaiting { .. }))
    }

    /// Records a sent request.
    pub fn on_send(
        &mut self,
        node_id: i32,
        correlation_id: u64,
        api_key: ApiKey,
        deadline_ms: u64,
    ) {
        self.slots.insert(
            node_id,
            Slot::Awaiting {
                correlation_id,
                api_key,
                deadline_ms,
            },
        );
    }

    /// Whether `correlation_id` is the request we await from `node_id`.
    pub fn is_expected(&self, node_id: i32, correlation_id: u64) -> bool {
        matches!(self.slots.get(&node_id), Some(Slot::Awaiting { correlation_id: c, .. }) if *c == correlation_id)
    }

    /// A successful answer: ready again.
    pub fn on_success(&mut self, node_id: i32) {
        self.slots.remove(&node_id);
    }

    /// An error answer or a failure: back off.
    pub fn on_error(&mut self, node_id: i32, until_ms: u64) {
        self.slots.insert(node_id, Slot::BackingOff { until_ms });
    }

    /// Requests that timed out by `now_ms` (they then back off until `now_ms + backoff`).
    /// A backoff that has ended is forgotten (the slot is ready either way), so that
    /// [`Self::next_deadline_ms`] never reports a past deadline for it.
    pub fn expire(&mut self, now_ms: u64, backoff_ms: u64) -> Vec<(i32, u64)> {
        self.slots
            .retain(|_, s| !matches!(s, Slot::BackingOff { until_ms } if *until_ms <= now_ms));
        let mut expired = Vec::new();
        for (id, slot) in self.slots.iter_mut() {
            if let Slot::Awaiting {
                correlation_id,
                deadline_ms,
                ..
            } = *slot
            {
                if now_ms >= deadline_ms {
                    expired.push((*id, correlation_id));
                    *slot = Slot::BackingOff {
                        until_ms: now_ms + backoff_ms,
                    };
                }
            }
        }
        expired
    }

    /// Forgets everything (on a role transition).
    pub fn reset(&mut self) {
        self.slots.clear();
    }

    /// The earliest deadline or backoff end.
    pub fn next_deadline_ms(&self) -> Option<u64> {
        self.slots
            .values()
            .map(|s| match s {
                Slot::Awaiting { deadline_ms, .. } => *deadline_ms,
                Slot::BackingOff { until_ms } => *until_ms,
            })
            .min()
    }
}
