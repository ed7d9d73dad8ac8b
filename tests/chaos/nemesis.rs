//! The nemesis: which fault comes next, chosen from a seed, so that a printed seed replays the
//! same schedule (the faults and their parameters; which node leads at a given moment, and so
//! which node "the leader" names, depends on timing and is printed as it happens).

use std::fmt;

/// splitmix64: a small, well-mixed generator whose whole state is the seed.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next_u64() % (hi - lo + 1)
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.range(1, 100) <= percent
    }

    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.range(0, items.len() as u64 - 1) as usize]
    }

    /// A random subset of `items` of size `n`, in the order of `items`.
    pub fn subset<T: Copy>(&mut self, items: &[T], n: usize) -> Vec<T> {
        let mut idx: Vec<usize> = (0..items.len()).collect();
        for i in (1..idx.len()).rev() {
            let j = self.range(0, i as u64) as usize;
            idx.swap(i, j);
        }
        let mut chosen: Vec<usize> = idx.into_iter().take(n).collect();
        chosen.sort_unstable();
        chosen.into_iter().map(|i| items[i]).collect()
    }
}

/// Which controller a fault hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The active controller at the moment the fault starts.
    Leader,
    /// A controller that is not the leader then (chosen among them by this number).
    Follower(u64),
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Leader => write!(f, "the leader"),
            Target::Follower(_) => write!(f, "a follower"),
        }
    }
}

/// One fault, held for `hold_ms` (where it has a duration) and then healed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Fault {
    /// SIGKILL a controller, restart it on its directory after the hold.
    KillController { target: Target, hold_ms: u64 },
    /// SIGKILL a broker, restart it after the hold (past its session timeout when long).
    KillBroker { broker: usize, hold_ms: u64 },
    /// SIGSTOP a controller past its fetch and election timeouts, then SIGCONT.
    PauseController { target: Target, hold_ms: u64 },
    /// SIGSTOP a broker past `broker.session.timeout.ms`, then SIGCONT.
    PauseBroker { broker: usize, hold_ms: u64 },
    /// Cut the active controller from every other node, both ways.
    IsolateLeader { hold_ms: u64 },
    /// Controllers and brokers in two sides (the controllers' minority on side A), cut from
    /// each other both ways.
    Split {
        minority: usize,
        brokers_on_minority: Vec<usize>,
        hold_ms: u64,
    },
    /// Two sides that do not see each other and one controller (the bridge) that sees both.
    Bridge { hold_ms: u64 },
    /// What the leader sends to one follower controller is dropped; the other way works.
    OneWayFromLeader { target: u64, hold_ms: u64 },
    /// What a broker sends to the controllers is dropped; what they send arrives.
    OneWayBrokerToControllers { broker: usize, hold_ms: u64 },
    /// Everything a controller sends goes at `kbit` kbit/s.
    SlowController {
        target: Target,
        kbit: u32,
        hold_ms: u64,
    },
    /// A controller killed, its directory wiped, formatted anew (a new directory id) and
    /// added back as a voter (KIP-853: remove-controller, then add-controller).
    WipeController { target: Target },
    /// A controller's disk (a tmpfs of its own) filled to the last byte; freed after the
    /// hold, and the controller restarted if the full disk stopped it.
    DiskFull { target: Target, hold_ms: u64 },
    /// Every fsync and fdatasync of a controller waits `delay_ms` first (an LD_PRELOAD shim).
    SlowFsync {
        target: Target,
        delay_ms: u64,
        hold_ms: u64,
    },
    /// One link cut (a broker from the controllers, both ways) while every controller is
    /// restarted in turn (SIGTERM, start, a leader again).
    RollingRestartUnderPartition { broker: usize },
}

impl Fault {
    /// Whether it needs links (network namespaces).
    pub fn needs_net(&self) -> bool {
        matches!(
            self,
            Fault::IsolateLeader { .. }
                | Fault::Split { .. }
                | Fault::Bridge { .. }
                | Fault::OneWayFromLeader { .. }
                | Fault::OneWayBrokerToControllers { .. }
                | Fault::SlowController { .. }
                | Fault::RollingRestartUnderPartition { .. }
        )
    }
}

/// Every fault kind's name, as [`Fault::kind`] gives it.
pub const KINDS: &[&str] = &[
    "kill-controller",
    "kill-broker",
    "pause-controller",
    "pause-broker",
    "isolate-leader",
    "split",
    "bridge",
    "one-way-from-leader",
    "one-way-from-broker",
    "slow-controller",
    "disk-full",
    "slow-fsync",
    "wipe-and-re-add",
    "rolling-restart-under-cut",
];

impl Fault {
    /// A short name of the fault's kind, for the per-kind heal times.
    pub fn kind(&self) -> &'static str {
        match self {
            Fault::KillController { .. } => "kill-controller",
            Fault::KillBroker { .. } => "kill-broker",
            Fault::PauseController { .. } => "pause-controller",
            Fault::PauseBroker { .. } => "pause-broker",
            Fault::IsolateLeader { .. } => "isolate-leader",
            Fault::Split { .. } => "split",
            Fault::Bridge { .. } => "bridge",
            Fault::OneWayFromLeader { .. } => "one-way-from-leader",
            Fault::OneWayBrokerToControllers { .. } => "one-way-from-broker",
            Fault::SlowController { .. } => "slow-controller",
            Fault::DiskFull { .. } => "disk-full",
            Fault::SlowFsync { .. } => "slow-fsync",
            Fault::WipeController { .. } => "wipe-and-re-add",
            Fault::RollingRestartUnderPartition { .. } => "rolling-restart-under-cut",
        }
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fault::KillController { target, hold_ms } => {
                write!(f, "SIGKILL {target}, restart after {hold_ms} ms")
            }
            Fault::KillBroker { broker, hold_ms } => {
                write!(f, "SIGKILL broker #{broker}, restart after {hold_ms} ms")
            }
            Fault::PauseController { target, hold_ms } => {
                write!(f, "SIGSTOP {target} for {hold_ms} ms")
            }
            Fault::PauseBroker { broker, hold_ms } => {
                write!(f, "SIGSTOP broker #{broker} for {hold_ms} ms")
            }
            Fault::IsolateLeader { hold_ms } => write!(f, "isolate the leader for {hold_ms} ms"),
            Fault::Split {
                minority,
                brokers_on_minority,
                hold_ms,
            } => write!(
                f,
                "split: {minority} controller(s) and brokers {brokers_on_minority:?} apart for {hold_ms} ms"
            ),
            Fault::Bridge { hold_ms } => write!(f, "bridge partition for {hold_ms} ms"),
            Fault::OneWayFromLeader { hold_ms, .. } => {
                write!(f, "drop what the leader sends to a follower for {hold_ms} ms")
            }
            Fault::OneWayBrokerToControllers { broker, hold_ms } => write!(
                f,
                "drop what broker #{broker} sends to the controllers for {hold_ms} ms"
            ),
            Fault::SlowController {
                target,
                kbit,
                hold_ms,
            } => write!(f, "{target} sends at {kbit} kbit/s for {hold_ms} ms"),
            Fault::WipeController { target } => {
                write!(f, "wipe {target}'s directory and add it back as a new voter")
            }
            Fault::DiskFull { target, hold_ms } => {
                write!(f, "fill {target}'s disk for {hold_ms} ms")
            }
            Fault::SlowFsync {
                target,
                delay_ms,
                hold_ms,
            } => write!(
                f,
                "{target}'s fsyncs take {delay_ms} ms more for {hold_ms} ms"
            ),
            Fault::RollingRestartUnderPartition { broker } => write!(
                f,
                "rolling restart of every controller while broker #{broker} is cut from them"
            ),
        }
    }
}

fn target(rng: &mut Rng, leader_percent: u64) -> Target {
    if rng.chance(leader_percent) {
        Target::Leader
    } else {
        Target::Follower(rng.next_u64())
    }
}

/// The next fault. `controllers` and `brokers` are the counts; `net` whether link faults can
/// be made.
pub fn next_fault(rng: &mut Rng, controllers: usize, brokers: usize, net: bool) -> Fault {
    loop {
        let fault = match rng.range(0, 13) {
            0 => Fault::KillController {
                target: target(rng, 60),
                hold_ms: rng.range(1_000, 8_000),
            },
            1 => Fault::KillBroker {
                broker: rng.range(0, brokers as u64 - 1) as usize,
                hold_ms: rng.range(2_000, 14_000),
            },
            2 => Fault::PauseController {
                target: target(rng, 60),
                hold_ms: rng.range(3_000, 7_000),
            },
            3 => Fault::PauseBroker {
                broker: rng.range(0, brokers as u64 - 1) as usize,
                hold_ms: rng.range(10_000, 13_000),
            },
            4 => Fault::IsolateLeader {
                hold_ms: rng.range(4_000, 12_000),
            },
            5 => {
                let minority = rng.range(1, (controllers as u64 - 1) / 2) as usize;
                let idx: Vec<usize> = (0..brokers).collect();
                let n = rng.range(0, brokers as u64) as usize;
                Fault::Split {
                    minority,
                    brokers_on_minority: rng.subset(&idx, n),
                    hold_ms: rng.range(4_000, 12_000),
                }
            }
            6 => Fault::Bridge {
                hold_ms: rng.range(4_000, 12_000),
            },
            7 => Fault::OneWayFromLeader {
                target: rng.next_u64(),
                hold_ms: rng.range(3_000, 10_000),
            },
            8 => Fault::OneWayBrokerToControllers {
                broker: rng.range(0, brokers as u64 - 1) as usize,
                hold_ms: rng.range(5_000, 14_000),
            },
            9 => Fault::SlowController {
                target: target(rng, 70),
                kbit: rng.pick(&[32, 128, 512]),
                hold_ms: rng.range(4_000, 10_000),
            },
            10 => Fault::WipeController {
                target: target(rng, 40),
            },
            11 => Fault::DiskFull {
                target: target(rng, 50),
                hold_ms: rng.range(3_000, 10_000),
            },
            12 => Fault::SlowFsync {
                target: target(rng, 60),
                delay_ms: rng.pick(&[50, 200, 800]),
                hold_ms: rng.range(4_000, 10_000),
            },
            _ => Fault::RollingRestartUnderPartition {
                broker: rng.range(0, brokers as u64 - 1) as usize,
            },
        };
        if net || !fault.needs_net() {
            return fault;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_replays_the_same_schedule() {
        let a: Vec<Fault> = {
            let mut r = Rng::new(7);
            (0..50).map(|_| next_fault(&mut r, 3, 3, true)).collect()
        };
        let mut r = Rng::new(7);
        let b: Vec<Fault> = (0..50).map(|_| next_fault(&mut r, 3, 3, true)).collect();
        assert_eq!(a, b);
        let mut r = Rng::new(8);
        let c: Vec<Fault> = (0..50).map(|_| next_fault(&mut r, 3, 3, true)).collect();
        assert_ne!(a, c);
    }

    #[test]
    fn every_kind_is_drawn_and_named() {
        let mut r = Rng::new(3);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..2_000 {
            seen.insert(next_fault(&mut r, 3, 3, true).kind());
        }
        let all: std::collections::BTreeSet<&str> = KINDS.iter().copied().collect();
        assert_eq!(seen, all);
    }

    #[test]
    fn without_namespaces_only_process_faults_are_chosen() {
        let mut r = Rng::new(1);
        for _ in 0..200 {
            assert!(!next_fault(&mut r, 5, 3, false).needs_net());
        }
    }
}
