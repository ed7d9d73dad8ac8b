//! Kafka's active controller keeps the log moving when nothing else is written: a NoOpRecord
//! every `metadata.max.idle.interval.ms`. Time is an input.

/// NoOpRecord's metadata api key.
pub const NO_OP_RECORD_API_KEY: u8 = 20;

/// An empty NoOpRecord v0 in its frame, as Kafka's active controller writes it.
pub const IDLE_NO_OP_RECORD: [u8; 4] = [1, NO_OP_RECORD_API_KEY, 0, 0];

/// Kafka's active controller appends a NoOpRecord every `metadata.max.idle.interval.ms`
/// (`QuorumController.maybeScheduleNextWriteNoOpRecord`), so the high watermark keeps moving
/// and followers see an active controller; 0 turns it off, as in Kafka.
#[derive(Debug, Clone)]
pub struct IdleNoOps {
    interval_ms: u64,
    next_ms: Option<u64>,
}

impl IdleNoOps {
    /// Every `interval_ms` while active.
    pub fn new(interval_ms: u64) -> Self {
        Self {
            interval_ms,
            next_ms: None,
        }
    }

    /// Whether a NoOpRecord is due at `now_ms`; the first one comes an interval after this
    /// node became active, as Kafka schedules it.
    pub fn due(&mut self, now_ms: u64, active: bool) -> bool {
        if self.interval_ms == 0 || !active {
            self.next_ms = None;
            return false;
        }
        match self.next_ms {
            None => {
                self.next_ms = Some(now_ms + self.interval_ms);
                false
            }
            Some(next) if now_ms >= next => {
                self.next_ms = Some(now_ms + self.interval_ms);
                true
            }
            Some(_) => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_no_ops_follow_kafkas_schedule() {
        let mut n = IdleNoOps::new(500);
        assert!(
            !n.due(1000, true),
            "the first comes an interval after activation"
        );
        assert!(!n.due(1499, true));
        assert!(n.due(1500, true));
        assert!(!n.due(1600, true));
        assert!(n.due(2000, true));
        assert!(
            !n.due(2600, false),
            "not active: nothing, and the schedule restarts"
        );
        assert!(!n.due(2700, true));
        assert!(n.due(3200, true));
        let mut off = IdleNoOps::new(0);
        assert!(
            !off.due(0, true) && !off.due(1_000_000, true),
            "0 turns it off"
        );
        assert_eq!(IDLE_NO_OP_RECORD, [1, 20, 0, 0]);
    }
}
