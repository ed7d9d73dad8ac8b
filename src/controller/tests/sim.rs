//! A seeded simulation of the controller layer under leadership changes: three
//! `QuorumController`s share one replicated log; the leader serves random broker and topic
//! requests, time passes (sessions expire), commits arrive late, leadership moves and an
//! uncommitted tail may be lost with it, standbys restart from the log. Invariants (in the
//! spirit of Kafka's `QuorumControllerIntegrationTest` and the Raft simulation's):
//! - acked_writes_committed: every success reply's records are in the committed log;
//! - broker_epochs_unique_and_increasing: in every committed image, distinct brokers have
//!   distinct epochs, and a broker's epoch never goes back;
//! - monotonic_partition_and_leader_epochs: per partition, in every node's committed image;
//! - no_leader_fenced: no committed partition is led by a fenced broker;
//! - restart_replays_the_same_image: a restarted controller replays the committed log to the
//!   image its peers hold at the same offset.
//!
//! `SIM_SEEDS` (default 16) and `SIM_SEED_BASE` choose the seeds, as the Raft simulation's.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;

use kafka_protocol::messages::alter_partition_request::{BrokerState, PartitionData, TopicData};
use kafka_protocol::messages::{
    AllocateProducerIdsRequest, AlterPartitionRequest, BrokerHeartbeatRequest, BrokerId,
    CreateTopicsRequest,
};
use uuid::Uuid;

use super::context::{bootstrap, registration, topic, TestLog, CLUSTER_ID};
use crate::codec::{RequestBody, ResponseBody};
use crate::controller::{ControllerConfig, ControllerOutput, QuorumController};
use crate::metadata::image::MetadataImage;
use crate::metadata::record::MetadataRecord;
use crate::raft::{InboundRequest, Rng};
use crate::records::framer::BatchFramer;

const NODES: usize = 3;
const BROKERS: i32 = 5;

/// The replicated log as the quorum agrees on it: the leader's log (every node reads the same
/// one) and the high watermark.
#[derive(Default)]
struct SharedLog {
    log: TestLog,
    high_watermark: i64,
}

impl SharedLog {
    fn epoch(&self) -> i32 {
        self.log.leader_epoch.unwrap_or(0)
    }

    /// Loses the uncommitted tail (a new leader that did not have it).
    fn truncate_uncommitted(&mut self) {
        let hw = self.high_watermark;
        self.log.batches.retain(|b| b.1 <= hw);
    }

    /// The committed records from `offset` on, and the offset after them.
    fn committed_records_from(&self, offset: i64) -> (Vec<MetadataRecord>, i64) {
        let mut out = Vec::new();
        let mut next_offset = offset;
        for (base, next, bytes) in &self.log.batches {
            if *next > self.high_watermark {
                break;
            }
            if *base < offset {
                continue;
            }
            next_offset = *next;
            for (_, batch) in BatchFramer::trusted(bytes) {
                if batch.is_control() {
                    continue;
                }
                for r in batch.records().flatten() {
                    if let Ok(m) = MetadataRecord::decode(r.value) {
                        out.push(m);
                    }
                }
            }
        }
        (out, next_offset)
    }
}

/// What a success reply promised, checked against the committed log.
#[derive(Debug)]
enum Promise {
    Registered { broker: i32, epoch: i64 },
    Topic(Uuid),
    ProducerIds { next: i64 },
}

struct Sim {
    rng: Rng,
    log: SharedLog,
    nodes: Vec<QuorumController>,
    leader: usize,
    now_ms: u64,
    next_request: u64,
    /// What each broker last learnt of its epoch.
    broker_epochs: BTreeMap<i32, i64>,
    incarnations: BTreeMap<i32, u128>,
    /// Requests in flight at the leader: request id → what its success would promise.
    waiting: BTreeMap<u64, RequestBody>,
    promises: Vec<Promise>,
    /// Promises already found in the committed log (it only grows).
    promises_checked: usize,
    /// What the committed log holds, read up to `committed_cursor`.
    committed_cursor: i64,
    committed_registrations: std::collections::BTreeSet<(i32, i64)>,
    committed_topics: std::collections::BTreeSet<Uuid>,
    committed_producer_ids: std::collections::BTreeSet<i64>,
    /// Per node, the last committed image seen (for the monotonic checks).
    seen: Vec<Option<MetadataImage>>,
    topics: u32,
    /// Broker fencings seen in committed images.
    fencings: usize,
}

fn controller(node: usize, seed: u64) -> QuorumController {
    let mut cfg = ControllerConfig::new(node as i32 + 1, CLUSTER_ID);
    cfg.rng_seed = seed ^ node as u64;
    QuorumController::new(cfg, bootstrap(27))
}

impl Sim {
    fn new(seed: u64) -> Self {
        let mut s = Sim {
            rng: Rng::new(seed),
            log: SharedLog::default(),
            nodes: (0..NODES).map(|n| controller(n, seed)).collect(),
            leader: 0,
            now_ms: 1_000,
            next_request: 1,
            broker_epochs: BTreeMap::new(),
            incarnations: BTreeMap::new(),
            waiting: BTreeMap::new(),
            promises: Vec::new(),
            promises_checked: 0,
            committed_cursor: 0,
            committed_registrations: Default::default(),
            committed_topics: Default::default(),
            committed_producer_ids: Default::default(),
            seen: vec![None; NODES],
            topics: 0,
            fencings: 0,
        };
        s.elect(0, false);
        s
    }

    /// `node` leads a new epoch; the uncommitted tail is lost when `lose_tail`.
    fn elect(&mut self, node: usize, lose_tail: bool) {
        if lose_tail {
            self.log.truncate_uncommitted();
        }
        let epoch = self.log.epoch() + 1;
        let start = self.log.log.push_leader_change(epoch);
        self.leader = node;
        for (i, c) in self.nodes.iter_mut().enumerate() {
            let start_offset = (i == node).then_some(start);
            c.handle_leader_change(epoch, Some(node as i32 + 1), start_offset);
        }
        self.collect();
    }

    fn commit(&mut self) -> Result<(), String> {
        self.log.high_watermark = self.log.log.end();
        for c in &mut self.nodes {
            c.replay_committed(&self.log.log, self.log.high_watermark)
                .unwrap();
        }
        self.collect();
        self.check()
    }

    fn poll(&mut self) {
        let leader = self.leader;
        self.nodes[leader].poll(self.now_ms, &mut self.log.log);
        self.collect();
    }

    fn send(&mut self, body: RequestBody, version: i16) {
        let id = self.next_request;
        self.next_request += 1;
        self.waiting.insert(id, body.clone());
        let leader = self.leader;
        self.nodes[leader].handle_request(
            self.now_ms,
            &mut self.log.log,
            InboundRequest {
                request_id: id,
                api_version: version,
                listener_name: "CONTROLLER".into(),
                body,
            },
        );
        self.collect();
    }

    /// Takes every answer and records what its success promised.
    fn collect(&mut self) {
        for c in &mut self.nodes {
            while let Some(ControllerOutput::Respond { request_id, body }) = c.poll_output() {
                let Some(_req) = self.waiting.remove(&request_id) else {
                    continue;
                };
                match body {
                    ResponseBody::BrokerRegistration(r) if r.error_code == 0 => {
                        self.promises.push(Promise::Registered {
                            broker: -1,
                            epoch: r.broker_epoch,
                        });
                        if let RequestBody::BrokerRegistration(req) = &_req {
                            self.broker_epochs.insert(req.broker_id.0, r.broker_epoch);
                            if let Some(Promise::Registered { broker, .. }) =
                                self.promises.last_mut()
                            {
                                *broker = req.broker_id.0;
                            }
                        }
                    }
                    ResponseBody::CreateTopics(r) => {
                        for t in r.topics.iter().filter(|t| t.error_code == 0) {
                            self.promises.push(Promise::Topic(t.topic_id));
                        }
                    }
                    ResponseBody::AllocateProducerIds(r) if r.error_code == 0 => {
                        self.promises.push(Promise::ProducerIds {
                            next: r.producer_id_start.0 + i64::from(r.producer_id_len),
                        });
                    }
                    _ => {}
                }
            }
        }
    }

    fn random_request(&mut self) {
        let broker = self.rng.below(BROKERS as u64) as i32;
        match self.rng.below(10) {
            0 => {
                // A (possibly new) incarnation registers.
                if self.rng.below(4) == 0 || !self.incarnations.contains_key(&broker) {
                    let inc = self.rng.next_u64() as u128;
                    self.incarnations.insert(broker, inc);
                }
                let req = registration(broker, Some(["a", "b"][broker as usize % 2]))
                    .with_incarnation_id(Uuid::from_u128(self.incarnations[&broker] | 1 << 100));
                self.send(RequestBody::BrokerRegistration(req), 4);
            }
            1..=5 => {
                let Some(&epoch) = self.broker_epochs.get(&broker) else {
                    return;
                };
                let req = BrokerHeartbeatRequest::default()
                    .with_broker_id(BrokerId(broker))
                    .with_broker_epoch(epoch)
                    .with_current_metadata_offset(self.log.high_watermark)
                    .with_want_fence(self.rng.below(30) == 0)
                    .with_want_shut_down(self.rng.below(40) == 0);
                self.send(RequestBody::BrokerHeartbeat(req), 1);
            }
            6 => {
                self.topics += 1;
                let name = format!("t{}", self.topics);
                let req = CreateTopicsRequest::default().with_topics(vec![topic(
                    &name,
                    1 + self.rng.below(3) as i32,
                    1 + self.rng.below(3) as i16,
                )]);
                self.send(RequestBody::CreateTopics(req), 7);
            }
            7 => {
                let Some(&epoch) = self.broker_epochs.get(&broker) else {
                    return;
                };
                let req = AllocateProducerIdsRequest::default()
                    .with_broker_id(BrokerId(broker))
                    .with_broker_epoch(epoch);
                self.send(RequestBody::AllocateProducerIds(req), 0);
            }
            _ => self.random_alter_partition(),
        }
    }

    /// A partition leader asks to shrink or expand its ISR, from the committed image (as a
    /// broker would know it).
    fn random_alter_partition(&mut self) {
        let image = self.nodes[self.leader].committed_image();
        let parts: Vec<(Uuid, i32, crate::metadata::image::PartitionRegistration)> = image
            .topics
            .values()
            .flat_map(|t| t.partitions.iter().map(move |(i, p)| (t.id, *i, p.clone())))
            .filter(|(_, _, p)| p.leader >= 0)
            .collect();
        if parts.is_empty() {
            return;
        }
        let (topic_id, index, p) = parts[self.rng.below(parts.len() as u64) as usize].clone();
        let Some(&leader_epoch) = self.broker_epochs.get(&p.leader) else {
            return;
        };
        let mut isr = vec![p.leader];
        for r in &p.replicas {
            if *r != p.leader && self.rng.below(2) == 0 {
                isr.push(*r);
            }
        }
        let states = isr
            .iter()
            .map(|b| {
                BrokerState::default()
                    .with_broker_id(BrokerId(*b))
                    .with_broker_epoch(self.broker_epochs.get(b).copied().unwrap_or(-1))
            })
            .collect();
        let req = AlterPartitionRequest::default()
            .with_broker_id(BrokerId(p.leader))
            .with_broker_epoch(leader_epoch)
            .with_topics(vec![TopicData::default()
                .with_topic_id(topic_id)
                .with_partitions(vec![PartitionData::default()
                    .with_partition_index(index)
                    .with_leader_epoch(p.leader_epoch)
                    .with_partition_epoch(p.partition_epoch)
                    .with_new_isr_with_epochs(states)])]);
        self.send(RequestBody::AlterPartition(req), 3);
    }

    fn check(&mut self) -> Result<(), String> {
        // acked_writes_committed
        let (records, cursor) = self.log.committed_records_from(self.committed_cursor);
        self.committed_cursor = cursor;
        for r in records {
            match r {
                MetadataRecord::RegisterBroker(b) => {
                    self.committed_registrations
                        .insert((b.broker_id, b.broker_epoch));
                }
                MetadataRecord::Topic(t) => {
                    self.committed_topics.insert(t.topic_id);
                }
                MetadataRecord::ProducerIds(p) => {
                    self.committed_producer_ids.insert(p.next_producer_id);
                }
                _ => {}
            }
        }
        for p in &self.promises[self.promises_checked..] {
            let found = match p {
                Promise::Registered { broker, epoch } => {
                    self.committed_registrations.contains(&(*broker, *epoch))
                }
                Promise::Topic(id) => self.committed_topics.contains(id),
                Promise::ProducerIds { next } => self.committed_producer_ids.contains(next),
            };
            if !found {
                return Err(format!(
                    "acked_writes_committed: {p:?} is not in the committed log"
                ));
            }
        }
        self.promises_checked = self.promises.len();
        for (n, c) in self.nodes.iter().enumerate() {
            let image = c.committed_image();
            // broker_epochs_unique_and_increasing
            let mut epochs: Vec<i64> = image.brokers.values().map(|b| b.broker_epoch).collect();
            epochs.sort_unstable();
            let before = epochs.len();
            epochs.dedup();
            if epochs.len() != before {
                return Err(format!(
                    "broker_epochs_unique: node {n}: {:?}",
                    image.brokers
                ));
            }
            // no_leader_fenced
            for t in image.topics.values() {
                for (i, p) in &t.partitions {
                    if p.leader >= 0 && image.brokers.get(&p.leader).is_none_or(|b| b.fenced) {
                        return Err(format!("no_leader_fenced: node {n}: {}-{i} {p:?}", t.name));
                    }
                }
            }
            if let Some(prev) = &self.seen[n] {
                for (id, b) in &image.brokers {
                    if let Some(old) = prev.brokers.get(id) {
                        if b.fenced && !old.fenced {
                            self.fencings += 1;
                        }
                        if b.broker_epoch < old.broker_epoch {
                            return Err(format!("broker_epochs_increasing: node {n}: broker {id}"));
                        }
                    }
                }
                // monotonic_partition_and_leader_epochs
                for (tid, t) in &image.topics {
                    let Some(old_t) = prev.topics.get(tid) else {
                        continue;
                    };
                    for (i, p) in &t.partitions {
                        if let Some(old) = old_t.partitions.get(i) {
                            if p.partition_epoch < old.partition_epoch
                                || p.leader_epoch < old.leader_epoch
                            {
                                return Err(format!(
                                    "monotonic_partition_and_leader_epochs: node {n}: {}-{i} {old:?} → {p:?}",
                                    t.name
                                ));
                            }
                        }
                    }
                }
            }
            self.seen[n] = Some(image.clone());
        }
        Ok(())
    }

    /// A standby restarts: a new controller replays the committed log from scratch.
    fn restart_standby(&mut self, seed: u64) -> Result<(), String> {
        let n = (self.leader + 1 + self.rng.below(NODES as u64 - 1) as usize) % NODES;
        // A restarted process draws other random numbers (production seeds from the clock).
        let mut fresh = controller(n, seed.wrapping_add(self.next_request << 8));
        fresh.handle_leader_change(self.log.epoch(), Some(self.leader as i32 + 1), None);
        fresh
            .replay_committed(&self.log.log, self.log.high_watermark)
            .unwrap();
        let peer = self.nodes[self.leader].committed_image();
        let same = fresh.committed_image().brokers == peer.brokers
            && fresh.committed_image().topics == peer.topics
            && fresh.committed_image().features == peer.features
            && fresh.committed_image().next_producer_id == peer.next_producer_id;
        if !same {
            return Err(format!("restart_replays_the_same_image: node {n}"));
        }
        self.nodes[n] = fresh;
        self.seen[n] = None;
        Ok(())
    }

    fn run(&mut self, seed: u64, steps: usize) -> Result<(), String> {
        self.commit()?;
        self.poll();
        self.commit()?;
        for _ in 0..steps {
            match self.rng.below(20) {
                0..=10 => self.random_request(),
                11..=14 => self.commit()?,
                15..=16 => {
                    self.now_ms += 100 + self.rng.below(3_000);
                    self.poll();
                }
                17 => {
                    let to = self.rng.below(NODES as u64) as usize;
                    let lose = self.rng.below(2) == 0;
                    self.elect(to, lose);
                    // The new leader activates once its image passed the epoch start.
                    self.commit()?;
                    self.poll();
                }
                18 => self.restart_standby(seed)?,
                _ => {
                    self.poll();
                }
            }
        }
        self.commit()
    }
}

#[test]
fn controller_invariants_hold_under_leadership_changes() {
    for seed in crate::sim_env::seeds(16) {
        let mut sim = Sim::new(seed);
        if let Err(e) = sim.run(seed, 1_000) {
            panic!(
                "seed {seed}: {e}\nreproduce: SIM_SEEDS=1 SIM_SEED_BASE={seed} cargo test --lib controller::tests::sim"
            );
        }
        // The run did what it is for: registrations, topics and producer ids acked, several
        // epochs, brokers fenced on the way.
        let kinds = |f: fn(&Promise) -> bool| sim.promises.iter().filter(|p| f(p)).count();
        assert!(
            kinds(|p| matches!(p, Promise::Registered { .. })) >= BROKERS as usize,
            "seed {seed}"
        );
        assert!(
            kinds(|p| matches!(p, Promise::Topic(_))) > 10,
            "seed {seed}"
        );
        assert!(
            kinds(|p| matches!(p, Promise::ProducerIds { .. })) > 0,
            "seed {seed}"
        );
        assert!(sim.log.epoch() > 5, "seed {seed}: leadership moved");
        assert!(sim.fencings > 0, "seed {seed}: brokers were fenced");
    }
}
