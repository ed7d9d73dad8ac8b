//! The admin stream: topic creates and deletes, config changes and partition additions sent
//! through the brokers with Kafka's own tools while the nemesis runs, each outcome recorded as
//! acknowledged, refused (a definite failure: nothing may be applied) or unknown (a timeout
//! or a lost connection: it may or may not have been applied), and the model the final
//! metadata must match.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::nemesis::Rng;
use crate::support::clients::{config_command, TOPIC_COMMAND};
use crate::support::cluster::Cluster;
use crate::support::kafka::{kafka, ToolOutput};

#[derive(Debug, Clone)]
pub enum Op {
    Create {
        topic: String,
        partitions: i32,
        replication_factor: i32,
    },
    Delete {
        topic: String,
    },
    SetRetention {
        topic: String,
        retention_ms: u64,
    },
    AddPartitions {
        topic: String,
        to: i32,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Acked,
    /// A definite refusal, with the exception named.
    Refused(String),
    /// Timed out, disconnected, or the tool did not finish: may have been applied.
    Unknown(String),
}

/// Exceptions after which the operation was certainly not applied: the controller checks these
/// before it writes any record, and no earlier attempt of the same call (the admin client
/// retries a timed-out request) can have been applied and then meet it. Not among them:
/// TopicExists for a create, UnknownTopicOrPartition for a delete, InvalidPartitions for a
/// partition increase — each is what a retry of an applied attempt meets.
const DEFINITE: &[&str] = &[
    "InvalidReplicationFactorException",
    "InvalidConfigurationException",
];

fn classify(out: &Option<ToolOutput>) -> Outcome {
    let Some(out) = out else {
        return Outcome::Unknown("the tool did not finish".into());
    };
    if out.status.success() {
        return Outcome::Acked;
    }
    let text = format!("{}\n{}", out.stdout, out.stderr);
    let first = text
        .lines()
        .find(|l| l.contains("Exception"))
        .unwrap_or("exit without an exception")
        .trim()
        .to_string();
    match DEFINITE.iter().find(|e| text.contains(*e)) {
        // A retried create may meet its own earlier, applied attempt (TopicExists after a
        // timeout): only the listed refusals are definite.
        Some(_) => Outcome::Refused(first),
        None => Outcome::Unknown(first),
    }
}

/// What the final metadata must show of one topic the stream created.
#[derive(Debug, Clone, Default)]
pub struct TopicModel {
    /// `Some(true)`: must exist; `Some(false)`: must not; `None`: either.
    pub exists: Option<bool>,
    /// The partition counts it may have (acked and unknown additions since the last ack).
    pub partitions: Vec<i32>,
    /// The retention.ms values it may show (None: no override).
    pub retention: Vec<Option<u64>>,
    /// Every retention.ms change whose outcome was unknown.
    pub unknown_retention: Vec<u64>,
}

/// The stream: its ops, in order, with outcomes, and the model they imply.
pub struct AdminStream {
    pub ops: Vec<(Op, Outcome)>,
    pub model: BTreeMap<String, TopicModel>,
    next: u32,
    tag: String,
}

impl AdminStream {
    pub fn new(tag: &str) -> AdminStream {
        AdminStream {
            ops: Vec::new(),
            model: BTreeMap::new(),
            next: 0,
            tag: tag.to_string(),
        }
    }

    fn live_topics(&self) -> Vec<String> {
        self.model
            .iter()
            .filter(|(_, m)| m.exists != Some(false))
            .map(|(t, _)| t.clone())
            .collect()
    }

    /// Chooses the next op from `rng`, runs it through `bootstrap` and records it.
    pub fn step(&mut self, c: &Cluster, bootstrap: &str, rng: &mut Rng) -> (Op, Outcome) {
        let live = self.live_topics();
        let op = match rng.range(0, 9) {
            0..=4 if !live.is_empty() => {
                let topic = rng.pick(&live.iter().map(String::as_str).collect::<Vec<_>>());
                match rng.range(0, 2) {
                    0 => Op::Delete {
                        topic: topic.to_string(),
                    },
                    1 => Op::SetRetention {
                        topic: topic.to_string(),
                        retention_ms: rng.range(60_000, 9_000_000),
                    },
                    _ => {
                        let m = &self.model[topic];
                        let max = m.partitions.iter().copied().max().unwrap_or(1);
                        Op::AddPartitions {
                            topic: topic.to_string(),
                            to: max + 1,
                        }
                    }
                }
            }
            _ => {
                self.next += 1;
                Op::Create {
                    topic: format!("adm-{}-{}", self.tag, self.next),
                    partitions: rng.range(1, 3) as i32,
                    replication_factor: rng.range(2, 3) as i32,
                }
            }
        };
        let outcome = classify(&run(c, bootstrap, &op));
        self.record(&op, &outcome);
        self.ops.push((op.clone(), outcome.clone()));
        (op, outcome)
    }

    fn record(&mut self, op: &Op, outcome: &Outcome) {
        let acked = *outcome == Outcome::Acked;
        let refused = matches!(outcome, Outcome::Refused(_));
        match op {
            Op::Create {
                topic, partitions, ..
            } => {
                self.model.insert(
                    topic.clone(),
                    TopicModel {
                        exists: if acked {
                            Some(true)
                        } else if refused {
                            Some(false)
                        } else {
                            None
                        },
                        partitions: vec![*partitions],
                        retention: vec![None],
                        unknown_retention: Vec::new(),
                    },
                );
            }
            Op::Delete { topic } => {
                let m = self.model.get_mut(topic).expect("a known topic");
                // A delete that finds no such topic: gone either way (never made, or deleted
                // by an earlier attempt of this same call).
                let gone = matches!(outcome, Outcome::Unknown(e) if e.contains("UnknownTopicOrPartitionException"));
                if acked || gone {
                    m.exists = Some(false);
                } else if !refused {
                    m.exists = None;
                }
            }
            Op::SetRetention {
                topic,
                retention_ms,
            } => {
                let m = self.model.get_mut(topic).expect("a known topic");
                if acked {
                    // An earlier change that timed out may still land after this one (a
                    // forwarded request the broker retries): its value stays possible.
                    m.retention = m
                        .unknown_retention
                        .iter()
                        .chain([retention_ms])
                        .map(|v| Some(*v))
                        .collect();
                } else if !refused {
                    m.retention.push(Some(*retention_ms));
                    m.unknown_retention.push(*retention_ms);
                }
            }
            Op::AddPartitions { topic, to } => {
                let m = self.model.get_mut(topic).expect("a known topic");
                if acked {
                    m.partitions = vec![*to];
                } else if !refused {
                    m.partitions.push(*to);
                }
            }
        }
    }

    /// Counts of (acked, refused, unknown).
    pub fn tally(&self) -> (usize, usize, usize) {
        let mut t = (0, 0, 0);
        for (_, o) in &self.ops {
            match o {
                Outcome::Acked => t.0 += 1,
                Outcome::Refused(_) => t.1 += 1,
                Outcome::Unknown(_) => t.2 += 1,
            }
        }
        t
    }

    /// Compares the model with the final metadata (`topics`: name → (partitions,
    /// retention.ms override)); the disagreements.
    pub fn check(&self, topics: &BTreeMap<String, (i32, Option<u64>)>) -> Vec<String> {
        let mut bad = Vec::new();
        for (name, m) in &self.model {
            match (topics.get(name), m.exists) {
                (None, Some(true)) => bad.push(format!("{name}: acked, but not in the metadata")),
                (Some(_), Some(false)) => bad.push(format!(
                    "{name}: in the metadata, but its create was refused or its delete acked"
                )),
                (Some((parts, retention)), _) => {
                    if !m.partitions.contains(parts) {
                        bad.push(format!(
                            "{name}: {parts} partitions, expected one of {:?}",
                            m.partitions
                        ));
                    }
                    if !m.retention.contains(retention) {
                        bad.push(format!(
                            "{name}: retention.ms {retention:?}, expected one of {:?}",
                            m.retention
                        ));
                    }
                }
                (None, _) => {}
            }
        }
        bad
    }
}

fn run(c: &Cluster, bootstrap: &str, op: &Op) -> Option<ToolOutput> {
    let config = c.admin_config();
    let base = [
        "--bootstrap-server",
        bootstrap,
        "--command-config",
        config.as_str(),
    ];
    let (what, class, args): (String, &str, Vec<String>) = match op {
        Op::Create {
            topic,
            partitions,
            replication_factor,
        } => (
            format!("create-{topic}"),
            TOPIC_COMMAND,
            vec![
                "--create".into(),
                "--topic".into(),
                topic.clone(),
                "--partitions".into(),
                partitions.to_string(),
                "--replication-factor".into(),
                replication_factor.to_string(),
            ],
        ),
        Op::Delete { topic } => (
            format!("delete-{topic}"),
            TOPIC_COMMAND,
            vec!["--delete".into(), "--topic".into(), topic.clone()],
        ),
        Op::SetRetention {
            topic,
            retention_ms,
        } => (
            format!("retention-{topic}"),
            config_command(),
            vec![
                "--entity-type".into(),
                "topics".into(),
                "--entity-name".into(),
                topic.clone(),
                "--alter".into(),
                "--add-config".into(),
                format!("retention.ms={retention_ms}"),
            ],
        ),
        Op::AddPartitions { topic, to } => (
            format!("partitions-{topic}"),
            TOPIC_COMMAND,
            vec![
                "--alter".into(),
                "--topic".into(),
                topic.clone(),
                "--partitions".into(),
                to.to_string(),
            ],
        ),
    };
    let mut full: Vec<&str> = base.to_vec();
    full.extend(args.iter().map(String::as_str));
    kafka().client_tool(&c.art, &what, class, &full, Duration::from_secs(40))
}

/// Every topic the brokers know through `bootstrap`, with its partition count and its
/// retention.ms override (`kafka-topics --describe` prints overrides in its Configs column).
pub fn describe_all(c: &Cluster, bootstrap: &str) -> Option<BTreeMap<String, (i32, Option<u64>)>> {
    let config = c.admin_config();
    let out = kafka().client_tool(
        &c.art,
        "describe-all-topics",
        TOPIC_COMMAND,
        &[
            "--bootstrap-server",
            bootstrap,
            "--command-config",
            &config,
            "--describe",
            "--exclude-internal",
        ],
        Duration::from_secs(60),
    )?;
    if !out.status.success() {
        return None;
    }
    let mut topics = BTreeMap::new();
    for line in out.stdout.lines() {
        // `Topic: t\tTopicId: …\tPartitionCount: 2\tReplicationFactor: 3\tConfigs: a=b,c=d`
        if !line.starts_with("Topic:") || !line.contains("PartitionCount:") {
            continue;
        }
        let field = |name: &str| {
            line.split('\t')
                .find_map(|f| f.trim().strip_prefix(name))
                .map(|v| v.trim().to_string())
        };
        let (Some(name), Some(parts)) = (field("Topic:"), field("PartitionCount:")) else {
            continue;
        };
        let retention = field("Configs:").and_then(|cfg| {
            cfg.split(',')
                .find_map(|kv| kv.trim().strip_prefix("retention.ms="))
                .and_then(|v| v.parse().ok())
        });
        topics.insert(name, (parts.parse().ok()?, retention));
    }
    Some(topics)
}
