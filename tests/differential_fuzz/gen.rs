//! Random well-formed request sequences from a seed (the project's seeded `Rng`, as the
//! simulations use: the same seed is the same sequence on every machine); requests.rs turns
//! each step into one side's request.

use ferrokraft::raft::Rng;

/// Which broker epoch a heartbeat or re-registration carries.
#[derive(Debug, Clone, Copy)]
pub enum EpochRef {
    /// The epoch this side last gave the broker.
    Current,
    /// One below it (a stale epoch).
    Stale,
    /// -1 (none).
    Unknown,
}

#[derive(Debug, Clone)]
pub struct TopicSpec {
    pub name: String,
    pub partitions: i32,
    pub rf: i16,
    /// Explicit replica assignments, partition by partition.
    pub assignments: Option<Vec<Vec<i32>>>,
    pub configs: Vec<(String, Option<String>)>,
}

#[derive(Debug, Clone)]
pub enum Step {
    Register {
        broker: i32,
        incarnation: u8,
        rack: Option<u8>,
        /// Supports metadata.version 4.1-IV1 (else only up to 3.9's level: refused).
        supports_mv: bool,
        previous: EpochRef,
        version: i16,
    },
    Heartbeat {
        broker: i32,
        epoch: EpochRef,
        caught_up: bool,
        want_fence: bool,
        want_shut_down: bool,
        version: i16,
    },
    CreateTopics {
        topics: Vec<TopicSpec>,
        validate_only: bool,
        version: i16,
    },
    /// Topics by name (v1-v5) or by name or id (v6).
    DeleteTopics {
        topics: Vec<TopicRef>,
        version: i16,
    },
    CreatePartitions {
        topics: Vec<NewPartitions>,
        validate_only: bool,
        version: i16,
    },
    IncrementalAlterConfigs {
        resources: Vec<ResourceSpec>,
        validate_only: bool,
        version: i16,
    },
    AllocateProducerIds {
        broker: i32,
        epoch: EpochRef,
    },
    UnregisterBroker {
        broker: i32,
    },
    /// Election type 0 preferred, 1 unclean; partitions None: every partition.
    ElectLeaders {
        election_type: i8,
        partitions: Option<Vec<(String, Vec<i32>)>>,
        version: i16,
    },
    /// An ISR change of partition `partition` of `topic`, sent by `sender`, with epochs off
    /// the current ones by the deltas.
    AlterPartition {
        /// The k-th existing topic (by name, modulo their count), or None: an unknown one.
        topic: Option<usize>,
        /// The k-th partition of it (modulo), or None: one past the last.
        partition: Option<usize>,
        sender: Sender,
        broker_epoch: EpochRef,
        leader_epoch_delta: i32,
        partition_epoch_delta: i32,
        isr: IsrChange,
        leader_recovery_state: i8,
        version: i16,
    },
    /// The legacy AlterConfigs: each resource's (key, value) set replaces its stored one
    /// (the operations of `resources` are not sent).
    AlterConfigs {
        resources: Vec<ResourceSpec>,
        validate_only: bool,
        version: i16,
    },
    /// Mock time moves by this many milliseconds (session expiries).
    Time(u64),
    /// Reassignments, UpdateFeatures, log directories, failovers (gen_partitions.rs).
    Part(crate::gen_partitions::PartStep),
    /// ACLs, client quotas, SCRAM credentials (gen_security.rs).
    Sec(crate::gen_security::SecStep),
}

/// Who sends an AlterPartition.
#[derive(Debug, Clone, Copy)]
pub enum Sender {
    Leader,
    /// The first replica that does not lead (else the leader).
    Follower,
    /// Broker `n`, whatever it holds.
    Broker(i32),
}

/// The ISR an AlterPartition asks for, from the current one.
#[derive(Debug, Clone, Copy)]
pub enum IsrChange {
    Same,
    /// Without its last member that does not lead.
    Shrink,
    /// With the first replica it lacks.
    Expand,
    /// With broker 4 (maybe not a replica) or 7 (never registered).
    AddBroker(i32),
    LeaderOnly,
    Empty,
}

/// How a DeleteTopics request names a topic.
#[derive(Debug, Clone)]
pub enum TopicRef {
    Name(String),
    /// The id this side gave the latest topic of that name (an id no topic has if none).
    IdOf(String),
    /// Name and id together (refused).
    Both(String),
    /// Neither name nor id (refused).
    Neither,
}

#[derive(Debug, Clone)]
pub struct NewPartitions {
    pub name: String,
    pub count: i32,
    /// Explicit replicas of each new partition.
    pub assignments: Option<Vec<Vec<i32>>>,
}

#[derive(Debug, Clone)]
pub struct ResourceSpec {
    pub resource_type: i8,
    pub name: String,
    /// (key, operation: 0 SET, 1 DELETE, 2 APPEND, 3 SUBTRACT, value).
    pub configs: Vec<(String, i8, Option<String>)>,
}

impl Step {
    pub fn is_request(&self) -> bool {
        match self {
            Step::Part(p) => p.is_request(),
            _ => !matches!(self, Step::Time(_)),
        }
    }

    /// The step's name, for the coverage tally.
    pub fn kind(&self) -> &'static str {
        match self {
            Step::Register { .. } => "BrokerRegistration",
            Step::Heartbeat { .. } => "BrokerHeartbeat",
            Step::CreateTopics { .. } => "CreateTopics",
            Step::DeleteTopics { .. } => "DeleteTopics",
            Step::CreatePartitions { .. } => "CreatePartitions",
            Step::IncrementalAlterConfigs { .. } => "IncrementalAlterConfigs",
            Step::AllocateProducerIds { .. } => "AllocateProducerIds",
            Step::UnregisterBroker { .. } => "UnregisterBroker",
            Step::ElectLeaders { .. } => "ElectLeaders",
            Step::AlterPartition { .. } => "AlterPartition",
            Step::AlterConfigs { .. } => "AlterConfigs",
            Step::Time(_) => "Time",
            Step::Part(p) => p.kind(),
            Step::Sec(x) => x.kind(),
        }
    }

    /// A step whose records may hold partition changes of a broker-level operation (fencing,
    /// unfencing, controlled shutdown, unclean re-registration, unregistration), written in
    /// the order of Kafka's per-broker topic-id map.
    pub fn is_broker_level(&self) -> bool {
        if let Step::Part(p) = self {
            return p.is_broker_level();
        }
        matches!(
            self,
            Step::Time(_)
                | Step::Heartbeat { .. }
                | Step::Register { .. }
                | Step::UnregisterBroker { .. }
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
pub const TOPIC_NAMES: [&str; 6] = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];
/// Topic configs: valid ones, a value Kafka's ConfigDef rejects, a value below a minimum, an
/// unknown key and a delete (null value, refused on create).
const CONFIGS: [(&str, Option<&str>); 7] = [
    ("cleanup.policy", Some("compact")),
    ("retention.ms", Some("60000")),
    ("min.insync.replicas", Some("2")),
    ("retention.ms", Some("soon")),
    ("segment.bytes", Some("1")),
    ("no.such.config", Some("1")),
    ("compression.type", None),
];

fn topic_spec(rng: &mut Rng) -> TopicSpec {
    let name = match rng.below(40) {
        0 => "__cluster_metadata".to_string(),
        1 => "bad/name".to_string(),
        2 => String::new(),
        _ => pick(rng, &TOPIC_NAMES).to_string(),
    };
    let assignments = chance(rng, 25).then(|| {
        let partitions = 1 + rng.below(3) as usize;
        let rf = 1 + rng.below(3) as usize;
        (0..partitions)
            .map(|_| {
                (0..rf)
                    .map(|_| {
                        if chance(rng, 5) {
                            7 // never registered
                        } else {
                            pick(rng, &BROKERS)
                        }
                    })
                    .collect()
            })
            .collect()
    });
    let (partitions, rf) = if assignments.is_some() && !chance(rng, 10) {
        (-1, -1)
    } else {
        (
            pick(rng, &[-1, 1, 1, 2, 3, 5, 0]),
            pick(rng, &[-1, 1, 1, 2, 3, 0, 5]),
        )
    };
    let configs = (0..pick(rng, &[0, 0, 1, 2]))
        .map(|_| {
            let (k, v) = pick(rng, &CONFIGS);
            (k.to_string(), v.map(str::to_string))
        })
        .collect();
    TopicSpec {
        name,
        partitions,
        rf,
        assignments,
        configs,
    }
}

/// A config alteration: key, operation, value.
type Alteration = (&'static str, i8, Option<&'static str>);

/// Topic config alterations: valid, invalid values, list operations on lists and on scalars,
/// unknown keys, deletes.
const TOPIC_ALTERATIONS: [Alteration; 12] = [
    ("retention.ms", 0, Some("60000")),
    ("retention.ms", 0, Some("soon")),
    ("retention.ms", 2, Some("1")),
    ("cleanup.policy", 2, Some("compact")),
    ("cleanup.policy", 3, Some("delete")),
    ("cleanup.policy", 0, Some("compact,delete")),
    ("min.insync.replicas", 0, Some("2")),
    ("min.insync.replicas", 1, None),
    ("segment.bytes", 0, Some("1")),
    ("no.such.config", 0, Some("1")),
    ("compression.type", 0, None),
    ("unclean.leader.election.enable", 0, Some("true")),
];

/// Broker (and cluster default) config alterations.
const BROKER_ALTERATIONS: [Alteration; 9] = [
    ("log.retention.ms", 0, Some("1000")),
    ("log.retention.ms", 1, None),
    ("min.insync.replicas", 0, Some("2")),
    ("log.cleaner.threads", 0, Some("2")),
    ("log.cleaner.threads", 0, Some("x")),
    ("num.io.threads", 0, Some("4")),
    ("broker.id", 0, Some("5")),
    ("no.such.broker.config", 0, Some("1")),
    ("unclean.leader.election.enable", 0, Some("true")),
];

/// Group config alterations (GROUP resources): valid values, values outside the broker's
/// bounds, the wrong type, an unknown key, deletes.
const GROUP_ALTERATIONS: [Alteration; 9] = [
    ("consumer.session.timeout.ms", 0, Some("50000")),
    ("consumer.session.timeout.ms", 0, Some("1000")),
    ("consumer.heartbeat.interval.ms", 0, Some("6000")),
    ("share.auto.offset.reset", 0, Some("earliest")),
    ("share.auto.offset.reset", 0, Some("sometime")),
    ("share.record.lock.duration.ms", 0, Some("x")),
    ("streams.num.standby.replicas", 0, Some("1")),
    ("consumer.session.timeout.ms", 1, None),
    ("no.such.group.config", 0, Some("1")),
];

/// Client-metrics subscription alterations (CLIENT_METRICS resources).
const CLIENT_METRICS_ALTERATIONS: [Alteration; 8] = [
    ("metrics", 0, Some("org.apache.kafka.producer.")),
    ("interval.ms", 0, Some("60000")),
    ("interval.ms", 0, Some("50")),
    ("match", 0, Some("client_id=app.*")),
    ("match", 0, Some("no_such_selector=x")),
    ("match", 0, Some("client_id")),
    ("metrics", 1, None),
    ("no.such.metrics.config", 0, Some("1")),
];

/// This node's loggers (BROKER_LOGGER resources, the node's id "0"): only `root` exists on
/// both sides (the other loggers are each implementation's own), set to levels at or above
/// the harness's WARN so that the JVM's log stays quiet; an unknown level, an unknown logger,
/// the root's deletion, list operations (all refused).
const BROKER_LOGGER_ALTERATIONS: [Alteration; 8] = [
    ("root", 0, Some("WARN")),
    ("root", 0, Some("ERROR")),
    ("root", 0, Some("LOUD")),
    ("root", 1, None),
    ("no.such.logger", 0, Some("WARN")),
    ("no.such.logger", 1, None),
    ("root", 2, Some("WARN")),
    ("root", 3, Some("WARN")),
];

fn resource_spec(rng: &mut Rng) -> ResourceSpec {
    let (resource_type, name, table): (i8, String, &[Alteration]) = match rng.below(15) {
        0..=4 => (
            2,
            match rng.below(12) {
                0 => String::new(),
                1 => "bad/name".to_string(),
                _ => pick(rng, &TOPIC_NAMES).to_string(),
            },
            &TOPIC_ALTERATIONS,
        ),
        5..=8 => (
            4,
            pick(rng, &["", "", "1", "4", "7", "x"]).to_string(),
            &BROKER_ALTERATIONS,
        ),
        10..=11 => (
            32,
            pick(rng, &["grp", "grp", "g2", ""]).to_string(),
            &GROUP_ALTERATIONS,
        ),
        13 => (
            8,
            pick(rng, &["0", "0", "0", "1", "x"]).to_string(),
            &BROKER_LOGGER_ALTERATIONS,
        ),
        12 => (
            16,
            pick(rng, &["m1", "m1", ""]).to_string(),
            &CLIENT_METRICS_ALTERATIONS,
        ),
        _ => (pick(rng, &[0, 99]), "alpha".to_string(), &TOPIC_ALTERATIONS),
    };
    let configs = (0..pick(rng, &[0, 1, 1, 2, 3]))
        .map(|_| {
            let (k, op, v) = pick(rng, table);
            (k.to_string(), op, v.map(str::to_string))
        })
        .collect();
    ResourceSpec {
        resource_type,
        name,
        configs,
    }
}

fn new_partitions(rng: &mut Rng) -> NewPartitions {
    let name = if chance(rng, 8) {
        "nosuch".to_string()
    } else {
        pick(rng, &TOPIC_NAMES).to_string()
    };
    let count = pick(rng, &[-1, 0, 1, 2, 3, 4, 4, 5, 6, 8]);
    let assignments = chance(rng, 15).then(|| {
        let new = 1 + rng.below(3) as usize;
        let rf = 1 + rng.below(3) as usize;
        (0..new)
            .map(|_| {
                (0..rf)
                    .map(|_| {
                        if chance(rng, 5) {
                            7
                        } else {
                            pick(rng, &BROKERS)
                        }
                    })
                    .collect()
            })
            .collect()
    });
    NewPartitions {
        name,
        count,
        assignments,
    }
}

fn topic_ref(rng: &mut Rng, by_id: bool) -> TopicRef {
    let name = if chance(rng, 10) {
        "nosuch".to_string()
    } else {
        pick(rng, &TOPIC_NAMES).to_string()
    };
    if !by_id {
        return TopicRef::Name(name);
    }
    match rng.below(20) {
        0 => TopicRef::Both(name),
        1 => TopicRef::Neither,
        2..=10 => TopicRef::IdOf(name),
        _ => TopicRef::Name(name),
    }
}

fn topic_name(rng: &mut Rng) -> String {
    if chance(rng, 8) {
        "nosuch".to_string()
    } else {
        pick(rng, &TOPIC_NAMES).to_string()
    }
}

fn alter_partition(rng: &mut Rng) -> Step {
    Step::AlterPartition {
        topic: (!chance(rng, 5)).then(|| rng.below(6) as usize),
        partition: (!chance(rng, 5)).then(|| rng.below(4) as usize),
        sender: match rng.below(10) {
            0..=6 => Sender::Leader,
            7 | 8 => Sender::Follower,
            _ => Sender::Broker(pick(rng, &[1, 4, 7])),
        },
        broker_epoch: match rng.below(12) {
            0 => EpochRef::Stale,
            _ => EpochRef::Current,
        },
        leader_epoch_delta: pick(rng, &[0, 0, 0, 0, 0, -1, 1]),
        partition_epoch_delta: pick(rng, &[0, 0, 0, 0, 0, -1, 1]),
        isr: match rng.below(12) {
            0 => IsrChange::Same,
            1..=4 => IsrChange::Shrink,
            5..=8 => IsrChange::Expand,
            9 => IsrChange::AddBroker(pick(rng, &[4, 7])),
            10 => IsrChange::LeaderOnly,
            _ => IsrChange::Empty,
        },
        leader_recovery_state: if chance(rng, 5) { 1 } else { 0 },
        version: pick(rng, &[2, 3, 3]),
    }
}

fn elect_leaders(rng: &mut Rng) -> Step {
    let version = rng.below(3) as i16;
    let partitions = (!chance(rng, 30)).then(|| {
        (0..pick(rng, &[1, 1, 2]))
            .map(|_| {
                let ps = (0..pick(rng, &[1, 1, 2]))
                    .map(|_| pick(rng, &[0, 0, 1, 2, 7]))
                    .collect();
                (topic_name(rng), ps)
            })
            .collect()
    });
    Step::ElectLeaders {
        election_type: if version == 0 || chance(rng, 60) {
            0
        } else {
            1
        },
        partitions,
        version,
    }
}

fn step(rng: &mut Rng) -> Step {
    let epoch = |rng: &mut Rng| match rng.below(10) {
        0 => EpochRef::Stale,
        1 => EpochRef::Unknown,
        _ => EpochRef::Current,
    };
    if chance(rng, 18) {
        return Step::Part(crate::gen_partitions::step(rng));
    }
    if chance(rng, 12) {
        return Step::Sec(crate::gen_security::step(rng));
    }
    match rng.below(165) {
        130..=147 => alter_partition(rng),
        148..=153 => elect_leaders(rng),
        154..=157 => Step::UnregisterBroker {
            broker: pick(rng, &BROKERS),
        },
        158..=164 => Step::AlterConfigs {
            resources: (0..pick(rng, &[1, 1, 2]))
                .map(|_| resource_spec(rng))
                .collect(),
            validate_only: chance(rng, 10),
            version: rng.below(3) as i16,
        },
        100..=107 => {
            let version = 1 + rng.below(6) as i16;
            Step::DeleteTopics {
                topics: (0..pick(rng, &[1, 1, 2, 3]))
                    .map(|_| topic_ref(rng, version >= 6))
                    .collect(),
                version,
            }
        }
        108..=115 => Step::CreatePartitions {
            topics: (0..pick(rng, &[1, 1, 2, 3]))
                .map(|_| new_partitions(rng))
                .collect(),
            validate_only: chance(rng, 10),
            version: rng.below(4) as i16,
        },
        116..=125 => Step::IncrementalAlterConfigs {
            resources: (0..pick(rng, &[1, 1, 2, 3]))
                .map(|_| resource_spec(rng))
                .collect(),
            validate_only: chance(rng, 10),
            version: rng.below(2) as i16,
        },
        126..=129 => Step::AllocateProducerIds {
            broker: pick(rng, &BROKERS),
            epoch: epoch(rng),
        },
        0..=24 => Step::Register {
            broker: pick(rng, &BROKERS),
            incarnation: rng.below(3) as u8,
            rack: pick(rng, &[None, Some(0), Some(1)]),
            supports_mv: !chance(rng, 5),
            previous: epoch(rng),
            version: pick(rng, &[2, 3, 4]),
        },
        25..=59 => Step::Heartbeat {
            broker: pick(rng, &BROKERS),
            epoch: epoch(rng),
            caught_up: !chance(rng, 15),
            want_fence: chance(rng, 10),
            want_shut_down: chance(rng, 8),
            version: pick(rng, &[0, 1]),
        },
        60..=84 => Step::CreateTopics {
            topics: (0..pick(rng, &[1, 1, 2, 3]))
                .map(|_| topic_spec(rng))
                .collect(),
            validate_only: chance(rng, 10),
            version: 2 + rng.below(6) as i16,
        },
        _ => Step::Time(pick(rng, &[500, 3_000, 4_500, 9_000, 10_000])),
    }
}

/// The sequence of `seed`: 6 to 30 steps, opening with registrations, mostly followed by
/// their unfencing heartbeats and a few valid topics (so that the later steps meet unfenced
/// brokers and existing topics, not only refusals).
pub fn sequence(seed: u64) -> Vec<Step> {
    let mut rng = Rng::new(seed);
    let len = 6 + rng.below(25) as usize;
    let mut opening = rng.below(4) as usize;
    let reworked = crate::gen_partitions::opening(&mut rng, &mut opening);
    let mut steps: Vec<Step> = match &reworked {
        Some((registrations, _)) => registrations.iter().cloned().map(Step::Part).collect(),
        None => (0..opening)
            .map(|i| Step::Register {
                broker: BROKERS[i],
                incarnation: 0,
                rack: Some((i % 2) as u8),
                supports_mv: true,
                previous: EpochRef::Unknown,
                version: 4,
            })
            .collect(),
    };
    if opening > 0 && chance(&mut rng, 75) {
        for broker in &BROKERS[..opening] {
            steps.push(Step::Heartbeat {
                broker: *broker,
                epoch: EpochRef::Current,
                caught_up: true,
                want_fence: false,
                want_shut_down: false,
                version: 1,
            });
        }
        if chance(&mut rng, 80) {
            let topics = (0..1 + rng.below(3))
                .map(|_| TopicSpec {
                    name: pick(&mut rng, &TOPIC_NAMES).to_string(),
                    partitions: 1 + rng.below(3) as i32,
                    rf: 1 + rng.below(opening.min(2) as u64) as i16,
                    assignments: None,
                    configs: Vec::new(),
                })
                .collect();
            steps.push(Step::CreateTopics {
                topics,
                validate_only: false,
                version: 7,
            });
        }
        if reworked.as_ref().is_some_and(|(_, elr)| *elr) {
            steps.push(Step::Part(crate::gen_partitions::elr_on()));
        }
    }
    while steps.len() < len {
        match crate::gen_partitions::scenario(&mut rng) {
            Some(s) => steps.extend(s),
            None => match crate::gen_security::scenario(&mut rng) {
                Some(s) => steps.extend(s),
                None => steps.push(step(&mut rng)),
            },
        }
    }
    steps
}
