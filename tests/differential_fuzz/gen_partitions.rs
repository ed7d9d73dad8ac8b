//! Generators for the partition-level and cluster-level steps beyond the first set (issue #36
//! part 2): reassignments (start, cancel, completion through AlterPartition, listing),
//! UpdateFeatures (metadata.version, eligible.leader.replicas.version on and off),
//! registrations with several log directories and ELR support, heartbeats with offline log
//! directories, and failovers of the active controller. requests_partitions.rs turns each
//! into one side's request.
//!
//! ```text
//!   gen.rs step() ──(some draws)──▶ step() here ─▶ Step::Part(PartStep)
//!   gen.rs sequence() ─▶ opening() here: registrations with ELR support / several
//!                        directories, an ELR upgrade after the first topics
//! ```

use ferrokraft::raft::Rng;

use crate::gen::{EpochRef, Step};

/// The target of one partition's reassignment.
#[derive(Debug, Clone)]
pub enum Target {
    /// Null replicas: cancel.
    Cancel,
    /// These brokers, whatever the partition holds (unregistered 7, repeats, -1, empty).
    Explicit(Vec<i32>),
    /// The current replicas with the `n` last replaced by registered brokers they lack
    /// (the replication factor kept).
    Move(usize),
    /// The current replicas with one more registered broker.
    Grow,
    /// The current replicas without the last.
    Shrink,
    /// The current replicas in reverse order.
    Reverse,
}

/// Which partition a reassignment or a completing AlterPartition names.
#[derive(Debug, Clone)]
pub enum PartitionRef {
    /// Partition `p` of the k-th existing topic (by name, modulo their count; a topic
    /// named "nosuch" when there is none); `p` past the last partition is unknown.
    Existing { topic: usize, partition: i32 },
    /// The k-th partition being reassigned (modulo; partition 0 of the k-th topic if none).
    Reassigning(usize),
    /// A topic no one created.
    UnknownTopic,
    /// Partition `p` of the topic of this name (a scenario's own topic).
    Named(&'static str, i32),
}

/// How a completing AlterPartition changes the ISR of a reassigning partition.
#[derive(Debug, Clone, Copy)]
pub enum Completion {
    /// Adds the first adding replica it lacks.
    AddOne,
    /// Adds every replica it lacks (the reassignment completes if they are eligible).
    AddAll,
    /// The ISR of the target replicas only (removing replicas left out).
    TargetOnly,
    /// Without its last member that does not lead.
    ShrinkOne,
}

#[derive(Debug, Clone)]
pub enum PartStep {
    /// AlterPartitionReassignments: per topic, per partition, a target.
    Reassign {
        partitions: Vec<(PartitionRef, Target)>,
        allow_rf_change: bool,
        version: i16,
    },
    /// ListPartitionReassignments: every partition (None) or the named ones.
    ListReassignments {
        topics: Option<Vec<(PartitionRef, Vec<i32>)>>,
    },
    /// An AlterPartition from the partition's leader with the current epochs (by default of
    /// a reassigning partition, to complete it).
    Complete {
        at: PartitionRef,
        change: Completion,
        version: i16,
    },
    /// UpdateFeatures: (feature, level, upgrade type, allowDowngrade of v0).
    UpdateFeatures {
        updates: Vec<(String, i16, i8, bool)>,
        validate_only: bool,
        version: i16,
    },
    /// BrokerRegistration with `dirs` log directories (the first one the plain registration's)
    /// and, when `elr`, eligible.leader.replicas.version 0-1 among its features.
    Register {
        broker: i32,
        incarnation: u8,
        dirs: u8,
        elr: bool,
        previous: EpochRef,
        version: i16,
    },
    /// BrokerHeartbeat v1 listing offline log directories: indexes into the broker's
    /// registered ones (9: a directory it never registered).
    Heartbeat {
        broker: i32,
        epoch: EpochRef,
        offline: Vec<u8>,
        caught_up: bool,
        want_shut_down: bool,
    },
    /// The active controller loses leadership: it resigns and is elected again (`restart`
    /// false: the same controller object renounces and reclaims), or it is stopped and a new
    /// controller replays the log and takes over (`restart` true).
    Failover { restart: bool },
}

impl PartStep {
    pub fn kind(&self) -> &'static str {
        match self {
            PartStep::Reassign { .. } => "AlterPartitionReassignments",
            PartStep::ListReassignments { .. } => "ListPartitionReassignments",
            PartStep::Complete { .. } => "AlterPartition (leader, current epochs)",
            PartStep::UpdateFeatures { .. } => "UpdateFeatures",
            PartStep::Register { .. } => "BrokerRegistration (dirs, ELR)",
            PartStep::Heartbeat { .. } => "BrokerHeartbeat (offline dirs)",
            PartStep::Failover { restart: false } => "Failover (resign)",
            PartStep::Failover { restart: true } => "Failover (restart)",
        }
    }

    pub fn is_request(&self) -> bool {
        !matches!(self, PartStep::Failover { .. })
    }

    /// Broker-level operations (see gen.rs `is_broker_level`); a failover too: a new
    /// controller's first acts visit brokers' partitions in its own map's order.
    pub fn is_broker_level(&self) -> bool {
        matches!(
            self,
            PartStep::Register { .. } | PartStep::Heartbeat { .. } | PartStep::Failover { .. }
        )
    }
}

fn pick<T: Clone>(rng: &mut Rng, items: &[T]) -> T {
    items[rng.below(items.len() as u64) as usize].clone()
}

fn chance(rng: &mut Rng, percent: u64) -> bool {
    rng.below(100) < percent
}

const BROKERS: [i32; 4] = [1, 2, 3, 4];

fn epoch_ref(rng: &mut Rng) -> EpochRef {
    match rng.below(10) {
        0 => EpochRef::Stale,
        1 => EpochRef::Unknown,
        _ => EpochRef::Current,
    }
}

fn partition_ref(rng: &mut Rng) -> PartitionRef {
    match rng.below(20) {
        0 => PartitionRef::UnknownTopic,
        1..=4 => PartitionRef::Reassigning(rng.below(4) as usize),
        _ => PartitionRef::Existing {
            topic: rng.below(6) as usize,
            partition: pick(rng, &[0, 0, 0, 1, 1, 2, 7, -1]),
        },
    }
}

fn target(rng: &mut Rng) -> Target {
    match rng.below(20) {
        0..=3 => Target::Cancel,
        4..=8 => Target::Move(1),
        9..=10 => Target::Move(2),
        11 => Target::Grow,
        12 => Target::Shrink,
        13 => Target::Reverse,
        _ => Target::Explicit(match rng.below(10) {
            0 => Vec::new(),
            1 => vec![1, 1],
            2 => vec![-1],
            3 => vec![7, 1],
            _ => {
                let n = 1 + rng.below(3) as usize;
                let mut v: Vec<i32> = Vec::new();
                while v.len() < n {
                    let b = pick(rng, &BROKERS);
                    if !v.contains(&b) {
                        v.push(b);
                    }
                }
                v
            }
        }),
    }
}

/// A feature update: mostly metadata.version and eligible.leader.replicas.version, at levels
/// around the current ones, with the other known features, kraft.version and an unknown one.
fn feature_update(rng: &mut Rng) -> (String, i16, i8, bool) {
    let (name, level) = match rng.below(20) {
        0..=6 => (
            "metadata.version",
            pick(rng, &[27, 27, 26, 25, 24, 23, 22, 21, 28, 7, 0, -1]),
        ),
        7..=14 => (
            "eligible.leader.replicas.version",
            pick(rng, &[1, 1, 1, 0, 0, 2]),
        ),
        15 => ("group.version", pick(rng, &[0, 1, 2])),
        16 => ("transaction.version", pick(rng, &[0, 1, 2, 3])),
        17 => ("kraft.version", pick(rng, &[0, 1, 2])),
        18 => ("streams.version", pick(rng, &[0, 1])),
        _ => (
            pick(rng, &["no.such.feature", "share.version", ""]),
            pick(rng, &[0, 1]),
        ),
    };
    let upgrade_type = match rng.below(20) {
        0..=11 => 1,
        12..=15 => 2,
        16..=17 => 3,
        _ => pick(rng, &[0, 4]),
    };
    (name.to_string(), level, upgrade_type, chance(rng, 40))
}

/// Some of gen.rs's draws: one of the steps of this module.
pub fn step(rng: &mut Rng) -> PartStep {
    match rng.below(100) {
        0..=29 => PartStep::Reassign {
            partitions: (0..pick(rng, &[1, 1, 1, 2, 3]))
                .map(|_| (partition_ref(rng), target(rng)))
                .collect(),
            allow_rf_change: !chance(rng, 30),
            version: pick(rng, &[0, 1, 1]),
        },
        30..=37 => PartStep::ListReassignments {
            topics: (!chance(rng, 50)).then(|| {
                (0..pick(rng, &[1, 1, 2]))
                    .map(|_| {
                        (
                            partition_ref(rng),
                            (0..pick(rng, &[1, 2, 3]))
                                .map(|_| pick(rng, &[0, 1, 2, 7]))
                                .collect(),
                        )
                    })
                    .collect()
            }),
        },
        38..=57 => PartStep::Complete {
            at: PartitionRef::Reassigning(rng.below(4) as usize),
            change: match rng.below(10) {
                0..=3 => Completion::AddOne,
                4..=8 => Completion::AddAll,
                _ => Completion::TargetOnly,
            },
            version: pick(rng, &[2, 3, 3]),
        },
        58..=71 => PartStep::UpdateFeatures {
            updates: (0..pick(rng, &[1, 1, 1, 2, 2, 3]))
                .map(|_| feature_update(rng))
                .collect(),
            validate_only: chance(rng, 10),
            version: pick(rng, &[0, 1, 1, 2, 2]),
        },
        72..=79 => PartStep::Register {
            broker: pick(rng, &BROKERS),
            incarnation: rng.below(3) as u8,
            dirs: pick(rng, &[1, 2, 2, 3]),
            elr: chance(rng, 80),
            previous: epoch_ref(rng),
            version: pick(rng, &[2, 3, 4]),
        },
        80..=93 => PartStep::Heartbeat {
            broker: pick(rng, &BROKERS),
            epoch: match rng.below(12) {
                0 => EpochRef::Stale,
                _ => EpochRef::Current,
            },
            offline: match rng.below(10) {
                0..=2 => Vec::new(),
                3..=6 => vec![pick(rng, &[0, 1, 1, 2])],
                7..=8 => vec![0, 1],
                _ => vec![9],
            },
            caught_up: !chance(rng, 10),
            want_shut_down: chance(rng, 5),
        },
        _ => PartStep::Failover {
            restart: chance(rng, 50),
        },
    }
}

/// The opening of a sequence, reworked in some sequences: at least two brokers (three
/// mostly), whose registrations support ELR (some with several log directories), and after
/// the first topics (gen.rs) an UpdateFeatures that turns ELR on in most, so that later steps
/// run with eligible leader replicas. `registrations` is the count gen.rs drew; it may grow.
pub fn opening(rng: &mut Rng, registrations: &mut usize) -> Option<(Vec<PartStep>, bool)> {
    if *registrations == 0 || !chance(rng, 35) {
        return None;
    }
    *registrations = (*registrations).max(pick(rng, &[2, 3, 3]));
    let steps = (0..*registrations)
        .map(|i| PartStep::Register {
            broker: BROKERS[i],
            incarnation: 0,
            dirs: if chance(rng, 30) { 2 } else { 1 },
            elr: true,
            previous: EpochRef::Unknown,
            version: 4,
        })
        .collect();
    Some((steps, chance(rng, 70)))
}

/// Sometimes (instead of one step of gen.rs) a short run of steps that reaches a success
/// path the independent draws rarely reach: a reassignment started and completed (or
/// cancelled), a leader fenced, unfenced, back in the ISR and elected again as the
/// preferred leader, an ISR shrunk and expanded again.
pub fn scenario(rng: &mut Rng) -> Option<Vec<Step>> {
    if !chance(rng, 7) {
        return None;
    }
    // The scenario's topic, created first (refused if it exists: then it is the old one).
    let name = pick(rng, &crate::gen::TOPIC_NAMES);
    let partition = pick(rng, &[0, 0, 1]);
    let at = PartitionRef::Named(name, partition);
    let mut s = Vec::new();
    if chance(rng, 70) {
        // Sessions kept alive (and brokers unfenced) so that the topic has replicas.
        for broker in [1, 2, 3] {
            s.push(Step::Heartbeat {
                broker,
                epoch: EpochRef::Current,
                caught_up: true,
                want_fence: false,
                want_shut_down: false,
                version: 1,
            });
        }
    }
    s.push(Step::CreateTopics {
        topics: vec![crate::gen::TopicSpec {
            name: name.to_string(),
            partitions: 2,
            rf: pick(rng, &[2, 2, 3]),
            assignments: None,
            configs: Vec::new(),
        }],
        validate_only: false,
        version: 7,
    });
    let isr = |change: Completion| {
        Step::Part(PartStep::Complete {
            at: at.clone(),
            change,
            version: 3,
        })
    };
    match rng.below(10) {
        0..=4 => {
            s.push(Step::Part(PartStep::Reassign {
                partitions: vec![(
                    at.clone(),
                    pick(
                        rng,
                        &[
                            Target::Move(1),
                            Target::Move(1),
                            Target::Move(2),
                            Target::Grow,
                        ],
                    ),
                )],
                allow_rf_change: true,
                version: 1,
            }));
            if chance(rng, 30) {
                s.push(Step::Part(PartStep::ListReassignments { topics: None }));
            }
            if chance(rng, 25) {
                s.push(Step::Part(PartStep::Reassign {
                    partitions: vec![(at.clone(), Target::Cancel)],
                    allow_rf_change: true,
                    version: 1,
                }));
            } else {
                for _ in 0..pick(rng, &[1, 1, 2]) {
                    s.push(isr(pick(
                        rng,
                        &[Completion::AddAll, Completion::AddAll, Completion::AddOne],
                    )));
                }
            }
        }
        5..=7 => {
            // The leader (mostly broker 1, 2 or 3 of the opening) fenced: leadership moves;
            // unfenced, back in the ISR, then elected again as the preferred leader.
            let broker = pick(rng, &[1, 1, 2, 3]);
            let heartbeat = |want_fence: bool| Step::Heartbeat {
                broker,
                epoch: EpochRef::Current,
                caught_up: true,
                want_fence,
                want_shut_down: false,
                version: 1,
            };
            s.push(heartbeat(true));
            s.push(heartbeat(false));
            s.push(isr(Completion::AddAll));
            s.push(Step::ElectLeaders {
                election_type: 0,
                partitions: if chance(rng, 50) {
                    None
                } else {
                    Some(vec![(name.to_string(), vec![partition])])
                },
                version: 2,
            });
        }
        _ => {
            s.push(isr(Completion::ShrinkOne));
            s.push(isr(Completion::AddAll));
        }
    }
    Some(s)
}

/// The UpdateFeatures that turns ELR on.
pub fn elr_on() -> PartStep {
    PartStep::UpdateFeatures {
        updates: vec![("eligible.leader.replicas.version".to_string(), 1, 1, false)],
        validate_only: false,
        version: 2,
    }
}
