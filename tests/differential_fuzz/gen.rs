//! Random well-formed request sequences from a seed (the project's seeded `Rng`, as the
//! simulations use: the same seed is the same sequence on every machine), and the requests
//! each step becomes on one side (broker epochs are that side's own answers).

use std::collections::BTreeMap;

use bytes::BytesMut;
use ferrokraft::codec::RequestBody;
use ferrokraft::raft::Rng;
use kafka_protocol::messages::broker_registration_request::{Feature, Listener};
use kafka_protocol::messages::create_topics_request::{
    CreatableReplicaAssignment, CreatableTopic, CreatableTopicConfig,
};
use kafka_protocol::messages::{
    BrokerHeartbeatRequest, BrokerId, BrokerRegistrationRequest, CreateTopicsRequest, TopicName,
};
use kafka_protocol::protocol::{Encodable, StrBytes};
use uuid::Uuid;

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
    /// Mock time moves by this many milliseconds (session expiries).
    Time(u64),
}

impl Step {
    pub fn is_request(&self) -> bool {
        !matches!(self, Step::Time(_))
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

fn step(rng: &mut Rng) -> Step {
    let epoch = |rng: &mut Rng| match rng.below(10) {
        0 => EpochRef::Stale,
        1 => EpochRef::Unknown,
        _ => EpochRef::Current,
    };
    match rng.below(100) {
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

/// The request a step becomes on a side that gave the brokers `epochs`.
pub fn request(
    step: &Step,
    cluster_id: &str,
    epochs: &BTreeMap<i32, i64>,
) -> Option<(RequestBody, i16)> {
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
        Step::Time(_) => return None,
    })
}

/// The API key and the request's body bytes at `version`.
pub fn encode(body: &RequestBody, version: i16) -> (i16, Vec<u8>) {
    let mut buf = BytesMut::new();
    let key = match body {
        RequestBody::BrokerRegistration(r) => {
            r.encode(&mut buf, version).expect("encode");
            62
        }
        RequestBody::BrokerHeartbeat(r) => {
            r.encode(&mut buf, version).expect("encode");
            63
        }
        RequestBody::CreateTopics(r) => {
            r.encode(&mut buf, version).expect("encode");
            19
        }
        other => panic!("not generated: {other:?}"),
    };
    (key, buf.to_vec())
}
