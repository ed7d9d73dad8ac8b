//! Random well-formed request sequences from a seed (the project's seeded `Rng`, as the
//! simulations use: the same seed is the same sequence on every machine), and the requests
//! each step becomes on one side (broker epochs are that side's own answers).

use std::collections::BTreeMap;

use bytes::BytesMut;
use ferrokraft::codec::RequestBody;
use ferrokraft::raft::Rng;
use kafka_protocol::messages::broker_registration_request::{Feature, Listener};
use kafka_protocol::messages::create_partitions_request::{
    CreatePartitionsAssignment, CreatePartitionsTopic,
};
use kafka_protocol::messages::create_topics_request::{
    CreatableReplicaAssignment, CreatableTopic, CreatableTopicConfig,
};
use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::{
    AllocateProducerIdsRequest, BrokerHeartbeatRequest, BrokerId, BrokerRegistrationRequest,
    CreatePartitionsRequest, CreateTopicsRequest, DeleteTopicsRequest,
    IncrementalAlterConfigsRequest, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use crate::compare::Ids;

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
    /// Mock time moves by this many milliseconds (session expiries).
    Time(u64),
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
        !matches!(self, Step::Time(_))
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
            Step::Time(_) => "Time",
        }
    }

    /// A step whose records may hold partition changes of a broker-level operation (fencing,
    /// unfencing, controlled shutdown, unclean re-registration), written in the order of
    /// Kafka's per-broker topic-id map.
    pub fn is_broker_level(&self) -> bool {
        matches!(
            self,
            Step::Time(_) | Step::Heartbeat { .. } | Step::Register { .. }
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
const TOPIC_NAMES: [&str; 6] = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta"];
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

fn resource_spec(rng: &mut Rng) -> ResourceSpec {
    let (resource_type, name, table): (i8, String, &[Alteration]) = match rng.below(10) {
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
    let count = pick(rng, &[-1, 0, 1, 2, 2, 3, 4, 6]);
    let assignments = chance(rng, 25).then(|| {
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

fn step(rng: &mut Rng) -> Step {
    let epoch = |rng: &mut Rng| match rng.below(10) {
        0 => EpochRef::Stale,
        1 => EpochRef::Unknown,
        _ => EpochRef::Current,
    };
    match rng.below(130) {
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

/// The sequence of `seed`: 6 to 30 steps, opening with registrations.
pub fn sequence(seed: u64) -> Vec<Step> {
    let mut rng = Rng::new(seed);
    let len = 6 + rng.below(25) as usize;
    let opening = rng.below(4) as usize;
    let mut steps: Vec<Step> = (0..opening)
        .map(|i| Step::Register {
            broker: BROKERS[i],
            incarnation: 0,
            rack: Some((i % 2) as u8),
            supports_mv: true,
            previous: EpochRef::Unknown,
            version: 4,
        })
        .collect();
    while steps.len() < len {
        steps.push(step(&mut rng));
    }
    steps
}

fn s(v: &str) -> StrBytes {
    StrBytes::from_string(v.to_string())
}

/// The id a DeleteTopics step uses for a topic that this side never created (the same on
/// both sides).
pub const UNKNOWN_TOPIC_ID: Uuid = Uuid::from_u128(0xdead_beef_0000_4000_8000_0000_0000_0001);

/// The request a step becomes on a side that gave the brokers `epochs` and the topics `ids`.
pub fn request(
    step: &Step,
    cluster_id: &str,
    epochs: &BTreeMap<i32, i64>,
    ids: &Ids,
) -> Option<(RequestBody, i16)> {
    let id_of = |name: &str| ids.latest.get(name).copied().unwrap_or(UNKNOWN_TOPIC_ID);
    let resolve = |broker: i32, r: EpochRef| {
        let current = epochs.get(&broker).copied().unwrap_or(-1);
        match r {
            EpochRef::Current => current,
            EpochRef::Stale => current - 1,
            EpochRef::Unknown => -1,
        }
    };
    Some(match step {
        Step::Register {
            broker,
            incarnation,
            rack,
            supports_mv,
            previous,
            version,
        } => {
            let tag = (u128::from(*broker as u32) << 8) | u128::from(*incarnation);
            let req = BrokerRegistrationRequest::default()
                .with_broker_id(BrokerId(*broker))
                .with_cluster_id(s(cluster_id))
                .with_incarnation_id(Uuid::from_u128(0x1000_0000 | tag))
                .with_listeners(vec![Listener::default()
                    .with_name(s("PLAINTEXT"))
                    .with_host(s("localhost"))
                    .with_port(9000 + *broker as u16)
                    .with_security_protocol(0)])
                .with_features(vec![Feature::default()
                    .with_name(s("metadata.version"))
                    .with_min_supported_version(7)
                    .with_max_supported_version(if *supports_mv { 27 } else { 21 })])
                .with_rack(rack.map(|r| s(&format!("rack{r}"))))
                .with_log_dirs(vec![Uuid::from_u128((tag << 64) | 7)])
                .with_previous_broker_epoch(resolve(*broker, *previous));
            (RequestBody::BrokerRegistration(req), *version)
        }
        Step::Heartbeat {
            broker,
            epoch,
            caught_up,
            want_fence,
            want_shut_down,
            version,
        } => {
            let req = BrokerHeartbeatRequest::default()
                .with_broker_id(BrokerId(*broker))
                .with_broker_epoch(resolve(*broker, *epoch))
                // Offsets differ in meaning between the two logs; "caught up" is past any
                // registration on either, "behind" before any.
                .with_current_metadata_offset(if *caught_up { 1 << 40 } else { 0 })
                .with_want_fence(*want_fence)
                .with_want_shut_down(*want_shut_down);
            (RequestBody::BrokerHeartbeat(req), *version)
        }
        Step::CreateTopics {
            topics,
            validate_only,
            version,
        } => {
            let topics = topics
                .iter()
                .map(|t| {
                    CreatableTopic::default()
                        .with_name(TopicName(s(&t.name)))
                        .with_num_partitions(t.partitions)
                        .with_replication_factor(t.rf)
                        .with_assignments(
                            t.assignments
                                .iter()
                                .flatten()
                                .enumerate()
                                .map(|(i, rs)| {
                                    CreatableReplicaAssignment::default()
                                        .with_partition_index(i as i32)
                                        .with_broker_ids(rs.iter().map(|b| BrokerId(*b)).collect())
                                })
                                .collect(),
                        )
                        .with_configs(
                            t.configs
                                .iter()
                                .map(|(k, v)| {
                                    CreatableTopicConfig::default()
                                        .with_name(s(k))
                                        .with_value(v.as_deref().map(s))
                                })
                                .collect(),
                        )
                })
                .collect();
            let req = CreateTopicsRequest::default()
                .with_topics(topics)
                .with_timeout_ms(30_000)
                .with_validate_only(*validate_only && *version >= 1);
            (RequestBody::CreateTopics(req), *version)
        }
        Step::DeleteTopics { topics, version } => {
            let mut req = DeleteTopicsRequest::default().with_timeout_ms(30_000);
            if *version >= 6 {
                req.topics = topics
                    .iter()
                    .map(|t| {
                        let (name, id) = match t {
                            TopicRef::Name(n) => (Some(n.as_str()), Uuid::nil()),
                            TopicRef::IdOf(n) => (None, id_of(n)),
                            TopicRef::Both(n) => (Some(n.as_str()), id_of(n)),
                            TopicRef::Neither => (None, Uuid::nil()),
                        };
                        DeleteTopicState::default()
                            .with_name(name.map(|n| TopicName(s(n))))
                            .with_topic_id(id)
                    })
                    .collect();
            } else {
                req.topic_names = topics
                    .iter()
                    .filter_map(|t| match t {
                        TopicRef::Name(n) => Some(TopicName(s(n))),
                        _ => None,
                    })
                    .collect();
            }
            (RequestBody::DeleteTopics(req), *version)
        }
        Step::CreatePartitions {
            topics,
            validate_only,
            version,
        } => {
            let req = CreatePartitionsRequest::default()
                .with_topics(
                    topics
                        .iter()
                        .map(|t| {
                            CreatePartitionsTopic::default()
                                .with_name(TopicName(s(&t.name)))
                                .with_count(t.count)
                                .with_assignments(t.assignments.as_ref().map(|a| {
                                    a.iter()
                                        .map(|rs| {
                                            CreatePartitionsAssignment::default().with_broker_ids(
                                                rs.iter().map(|b| BrokerId(*b)).collect(),
                                            )
                                        })
                                        .collect()
                                }))
                        })
                        .collect(),
                )
                .with_timeout_ms(30_000)
                .with_validate_only(*validate_only);
            (RequestBody::CreatePartitions(req), *version)
        }
        Step::IncrementalAlterConfigs {
            resources,
            validate_only,
            version,
        } => {
            let req = IncrementalAlterConfigsRequest::default()
                .with_resources(
                    resources
                        .iter()
                        .map(|r| {
                            AlterConfigsResource::default()
                                .with_resource_type(r.resource_type)
                                .with_resource_name(s(&r.name))
                                .with_configs(
                                    r.configs
                                        .iter()
                                        .map(|(k, op, v)| {
                                            AlterableConfig::default()
                                                .with_name(s(k))
                                                .with_config_operation(*op)
                                                .with_value(v.as_deref().map(s))
                                        })
                                        .collect(),
                                )
                        })
                        .collect(),
                )
                .with_validate_only(*validate_only);
            (RequestBody::IncrementalAlterConfigs(req), *version)
        }
        Step::AllocateProducerIds { broker, epoch } => {
            let req = AllocateProducerIdsRequest::default()
                .with_broker_id(BrokerId(*broker))
                .with_broker_epoch(resolve(*broker, *epoch));
            (RequestBody::AllocateProducerIds(req), 0)
        }
        Step::Time(_) => return None,
    })
}

/// The API key and the request's body bytes at `version`.
pub fn encode(body: &RequestBody, version: i16) -> (i16, Vec<u8>) {
    let mut buf = BytesMut::new();
    body.encode(version, &mut buf).expect("encode");
    (body.api_key() as i16, buf.to_vec())
}
