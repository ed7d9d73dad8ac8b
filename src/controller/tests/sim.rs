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

use super::context::{bootstrap, TestLog, CLUSTER_ID};
use super::invariants::acked_writes_committed::{CommittedIndex, Promise};
use super::invariants::restart_replays_the_same_image::same_image;
use super::invariants::ImageChecks;
use super::sim_support::{Brokers, BROKERS};
use crate::codec::RequestBody;
use crate::controller::{ControllerConfig, ControllerOutput, QuorumController};
use crate::raft::{InboundRequest, Rng};

const NODES: usize = 3;

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
        self.log.log.truncate(self.high_watermark);
    }

    /// The committed batches from `offset` on, and the offset after them.
    fn committed_batches_from(&self, offset: i64) -> (Vec<u8>, i64) {
        let mut out = Vec::new();
        let mut next_offset = offset;
        for (_, next, bytes) in self.log.log.batches_between(offset, self.high_watermark) {
            if next > self.high_watermark {
                break;
            }
            next_offset = next;
            out.extend_from_slice(&bytes);
        }
        (out, next_offset)
    }
}

struct Sim {
    rng: Rng,
    log: SharedLog,
    nodes: Vec<QuorumController>,
    leader: usize,
    now_ms: u64,
    next_request: u64,
    brokers: Brokers,
    /// Requests in flight at the leader.
    waiting: BTreeMap<u64, RequestBody>,
    promises: Vec<Promise>,
    /// Promises already found in the committed log (it only grows).
    promises_checked: usize,
    /// What the committed log holds, read up to `committed_cursor`.
    committed_cursor: i64,
    committed: CommittedIndex,
    checks: Vec<ImageChecks>,
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
            brokers: Brokers::default(),
            waiting: BTreeMap::new(),
            promises: Vec::new(),
            promises_checked: 0,
            committed_cursor: 0,
            committed: CommittedIndex::default(),
            checks: (0..NODES).map(|_| ImageChecks::default()).collect(),
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
                forwarded: false,
                sender: Some(crate::raft::Sender::anonymous_local()),
                forwarded_by: None,
                body,
            },
        );
        self.collect();
    }

    /// Takes every answer and records what its success promised.
    fn collect(&mut self) {
        for c in &mut self.nodes {
            while let Some(output) = c.poll_output() {
                let ControllerOutput::Respond { request_id, body } = output else {
                    continue;
                };
                if let Some(req) = self.waiting.remove(&request_id) {
                    let promised = self.brokers.answered(&req, &body);
                    self.promises.extend(promised);
                }
            }
        }
    }

    fn random_request(&mut self) {
        let image = self.nodes[self.leader].committed_image();
        if let Some((body, version)) =
            self.brokers
                .random_request(&mut self.rng, image, self.log.high_watermark)
        {
            self.send(body, version);
        }
    }

    fn check(&mut self) -> Result<(), String> {
        // acked_writes_committed
        let (batches, cursor) = self.log.committed_batches_from(self.committed_cursor);
        self.committed_cursor = cursor;
        self.committed.add_batches(&batches);
        for p in &self.promises[self.promises_checked..] {
            if !self.committed.holds(p) {
                return Err(format!(
                    "acked_writes_committed: {p:?} is not in the committed log"
                ));
            }
        }
        self.promises_checked = self.promises.len();
        for (n, c) in self.nodes.iter().enumerate() {
            self.checks[n].check(n, c.committed_image())?;
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
        if !same_image(
            fresh.committed_image(),
            self.nodes[self.leader].committed_image(),
        ) {
            return Err(format!("restart_replays_the_same_image: node {n}"));
        }
        self.nodes[n] = fresh;
        self.checks[n].seen = None;
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

/// What one seed exercised.
#[derive(Debug, Default, Clone, Copy)]
struct Coverage {
    registrations: usize,
    topics: usize,
    producer_ids: usize,
    topics_removed: usize,
    epochs: i32,
    fencings: usize,
}

impl Coverage {
    fn of(sim: &Sim) -> Self {
        let kinds = |f: fn(&Promise) -> bool| sim.promises.iter().filter(|p| f(p)).count();
        Coverage {
            registrations: kinds(|p| matches!(p, Promise::Registered { .. })),
            topics: kinds(|p| matches!(p, Promise::Topic(_))),
            producer_ids: kinds(|p| matches!(p, Promise::ProducerIds { .. })),
            topics_removed: kinds(|p| matches!(p, Promise::TopicRemoved(_))),
            epochs: sim.log.epoch(),
            fencings: sim.checks.iter().map(|c| c.fencings).sum(),
        }
    }

    /// Whether the seed did all the run is for: every broker registered, more than 10 topics,
    /// producer ids, a deletion, several epochs, a fencing.
    fn full(&self) -> bool {
        self.registrations >= BROKERS as usize
            && self.topics > 10
            && self.producer_ids > 0
            && self.topics_removed > 0
            && self.epochs > 5
            && self.fencings > 0
    }
}

/// Runs the seeds; an invariant that breaks fails the test at once with the seed. Coverage is
/// a property of the campaign, not of one seed (a legal seed may happen to create few topics):
/// every kind of event must occur in the campaign, and at least 3/4 of the seeds of a campaign
/// of 8 or more must cover everything. Per-seed figures are printed (`--nocapture`).
#[test]
fn controller_invariants_hold_under_leadership_changes() {
    let mut campaign = Vec::new();
    for seed in crate::sim_env::seeds(16) {
        let mut sim = Sim::new(seed);
        if let Err(e) = sim.run(seed, 1_000) {
            panic!(
                "seed {seed}: {e}\nreproduce: SIM_SEEDS=1 SIM_SEED_BASE={seed} cargo test --lib controller::tests::sim"
            );
        }
        let c = Coverage::of(&sim);
        println!("controller sim seed {seed}: {c:?}");
        campaign.push(c);
    }
    let total = |f: fn(&Coverage) -> usize| campaign.iter().map(f).sum::<usize>();
    let full = campaign.iter().filter(|c| c.full()).count();
    println!(
        "controller sim: {} seeds, {full} covering everything; registrations {}, topics {}, producer id blocks {}, deletions {}, fencings {}",
        campaign.len(),
        total(|c| c.registrations),
        total(|c| c.topics),
        total(|c| c.producer_ids),
        total(|c| c.topics_removed),
        total(|c| c.fencings),
    );
    assert!(
        total(|c| c.registrations) >= BROKERS as usize,
        "registrations acked"
    );
    assert!(total(|c| c.topics) > 0, "topics created");
    assert!(total(|c| c.producer_ids) > 0, "producer ids allocated");
    assert!(total(|c| c.topics_removed) > 0, "topics deleted");
    assert!(campaign.iter().any(|c| c.epochs > 5), "leadership moved");
    assert!(total(|c| c.fencings) > 0, "brokers were fenced");
    if campaign.len() >= 8 {
        assert!(
            full * 4 >= campaign.len() * 3,
            "only {full} of {} seeds covered everything: the workload lost its purpose",
            campaign.len()
        );
    }
}
