//! The cluster under simulation: nodes, network, virtual time and one event queue, all driven
//! by one seeded `Rng`. Invariants are checked after every event.

use std::collections::{BTreeMap, VecDeque};

use bytes::Bytes;

use super::invariants::Invariant;
use super::network::{Fate, Kind, NetConfig, Network};
use super::node::{Outgoing, SimNode};
use super::snapshots;
use crate::codec::versions::advertised;
use crate::codec::RequestBody;
use crate::raft::tests::context::{config, LISTENER};
use crate::raft::{InboundRequest, RaftConfig, ResponseResult, Rng, Role};

#[path = "cluster_queries.rs"]
mod queries;

/// Kafka's `RaftEventSimulationTest` timers.
pub const ELECTION_TIMEOUT_MS: u64 = 1_000;
pub const FETCH_TIMEOUT_MS: u64 = 3_000;
pub const REQUEST_TIMEOUT_MS: u64 = 3_000;
pub const RETRY_BACKOFF_MS: u64 = 50;
pub const ELECTION_BACKOFF_MAX_MS: u64 = 1_000;
/// Graceful shutdown timeout (Kafka's simulation uses 500 ms).
pub const SHUTDOWN_TIMEOUT_MS: u64 = 500;
/// Virtual start time (wall-clock-like, as batch timestamps need).
pub const START_MS: u64 = 1_700_000_000_000;
/// Hard cap on events per run (Kafka: 500 000 iterations).
const MAX_EVENTS: u64 = 3_000_000;
/// Timer firings at one instant before we call it a busy loop.
const MAX_TIMER_BURST: u32 = 64;
/// The pseudo-node voter-change requests come from (an admin client).
pub const ADMIN_ID: i32 = -100;

#[derive(Debug)]
enum Event {
    Timer {
        node: i32,
        incarnation: u64,
    },
    Request {
        from: i32,
        from_incarnation: u64,
        to: i32,
        correlation_id: u64,
        body: RequestBody,
    },
    Response {
        to: i32,
        incarnation: u64,
        correlation_id: u64,
        result: ResponseResult,
    },
    Append,
    /// Nodes take snapshots of their committed state and clean their logs.
    Snapshot,
}

/// A request being handled by its destination.
#[derive(Debug, Clone, Copy)]
struct Inflight {
    from: i32,
    from_incarnation: u64,
    to: i32,
    correlation_id: u64,
}

pub struct Cluster {
    pub now: u64,
    pub rng: Rng,
    pub nodes: BTreeMap<i32, SimNode>,
    pub voter_ids: Vec<i32>,
    pub net: Network,
    /// Probability (per million) that a drain is cut short by a crash.
    pub crash_mid_drain_ppm: u64,
    /// The workload proposes every `append_period_ms` + jitter.
    pub append_period_ms: u64,
    /// Each proposal carries 1..=this many records.
    pub append_max_records: u64,
    pub appending: bool,
    /// Snapshots are taken every `snapshot_period_ms` + jitter once the workload runs
    /// (0: never; the voter-change simulation takes none).
    pub snapshot_period_ms: u64,
    pub snapshots_taken: u64,
    pub snapshots_installed: u64,
    pub next_value: u64,
    pub events: u64,
    queue: BTreeMap<(u64, u64), Box<Event>>,
    seq: u64,
    next_incarnation: u64,
    next_request_id: u64,
    inflight: BTreeMap<u64, Inflight>,
    invariants: Vec<Box<dyn Invariant>>,
    /// `leader_with_max_epoch`, computed once before the invariants run.
    pub max_epoch_leader: Option<(i32, i32, Option<i64>)>,
    pub trace: Option<VecDeque<String>>,
    live_trace: bool,
    /// kraft.version 1: nodes have directory ids and the initial voters come from a bootstrap
    /// snapshot, so voter changes are possible.
    pub dynamic: bool,
    /// Answers to admin requests, by the correlation id they were sent with.
    pub admin_answers: BTreeMap<u64, crate::codec::ResponseBody>,
    /// `controller.quorum.auto.join.enable` on every node.
    pub auto_join: bool,
}

impl Cluster {
    pub fn new(rng: Rng, voters: usize, observers: usize, trace: bool) -> Self {
        let voter_ids: Vec<i32> = (0..voters as i32).collect();
        let mut nodes = BTreeMap::new();
        for id in 0..(voters + observers) as i32 {
            nodes.insert(id, SimNode::new(id, (id as usize) < voters));
        }
        Self {
            now: START_MS,
            rng,
            nodes,
            voter_ids,
            net: Network::new(NetConfig::benign()),
            crash_mid_drain_ppm: 0,
            append_period_ms: 10,
            append_max_records: 4,
            appending: false,
            snapshot_period_ms: 300,
            snapshots_taken: 0,
            snapshots_installed: 0,
            next_value: 0,
            events: 0,
            queue: BTreeMap::new(),
            seq: 0,
            next_incarnation: 1,
            next_request_id: 1,
            inflight: BTreeMap::new(),
            invariants: Vec::new(),
            max_epoch_leader: None,
            trace: trace.then(VecDeque::new),
            live_trace: crate::sim_env::trace_enabled(),
            dynamic: false,
            admin_answers: BTreeMap::new(),
            auto_join: false,
        }
    }

    pub fn add_invariant(&mut self, inv: Box<dyn Invariant>) {
        self.invariants.push(inv);
    }

    pub fn majority(&self) -> usize {
        self.voter_ids.len() / 2 + 1
    }

    pub fn node_ids(&self) -> Vec<i32> {
        self.nodes.keys().copied().collect()
    }

    pub fn note_pub(&mut self, line: String) {
        self.note(|| line);
    }

    pub fn elapsed_ms(&self) -> u64 {
        self.now - START_MS
    }

    fn note(&mut self, f: impl FnOnce() -> String) {
        if self.live_trace {
            eprintln!("[{:>7}] {}", self.now - START_MS, f());
            return;
        }
        if let Some(t) = self.trace.as_mut() {
            if t.len() >= 400 {
                t.pop_front();
            }
            t.push_back(format!("[{:>7}] {}", self.now - START_MS, f()));
        }
    }

    fn schedule(&mut self, at: u64, event: Event) {
        self.seq += 1;
        self.queue
            .insert((at.max(self.now), self.seq), Box::new(event));
    }

    fn node_config(&mut self, id: i32) -> RaftConfig {
        let mut cfg = config(id, &self.voter_ids);
        cfg.election_timeout_ms = ELECTION_TIMEOUT_MS;
        cfg.fetch_timeout_ms = FETCH_TIMEOUT_MS;
        cfg.request_timeout_ms = REQUEST_TIMEOUT_MS;
        cfg.retry_backoff_ms = RETRY_BACKOFF_MS;
        cfg.election_backoff_max_ms = ELECTION_BACKOFF_MAX_MS;
        cfg.append_linger_ms = 0;
        cfg.rng_seed = self.rng.next_u64();
        cfg.auto_join = self.auto_join;
        if self.dynamic {
            super::reconfig::make_dynamic(&mut cfg, &self.voter_ids);
        }
        cfg
    }

    /// Sends `body` to node `to` as an admin client would; the answer lands in
    /// `admin_answers[correlation_id]`.
    pub fn admin_request(&mut self, to: i32, correlation_id: u64, body: RequestBody) {
        let at = self.now + 1;
        self.schedule(
            at,
            Event::Request {
                from: ADMIN_ID,
                from_incarnation: 0,
                to,
                correlation_id,
                body,
            },
        );
    }

    // ---- faults and lifecycle ---------------------------------------------------------------

    pub fn start(&mut self, id: i32) -> Result<(), String> {
        if self.nodes[&id].is_running() {
            return Ok(());
        }
        let cfg = self.node_config(id);
        let incarnation = self.next_incarnation;
        self.next_incarnation += 1;
        let now = self.now;
        self.note(|| format!("start node {id}"));
        if let Some(node) = self.nodes.get_mut(&id) {
            node.start(cfg, now, incarnation);
        }
        self.after_call(id)
    }

    pub fn start_all(&mut self) -> Result<(), String> {
        for id in self.node_ids() {
            self.start(id)?;
        }
        Ok(())
    }

    /// Hard kill: unflushed appends are lost.
    pub fn kill(&mut self, id: i32) {
        if let Some(node) = self.nodes.get_mut(&id) {
            if node.is_running() {
                node.crash();
                self.note(|| format!("kill node {id}"));
                self.on_node_down(id);
            }
        }
    }

    pub fn kill_all(&mut self) {
        for id in self.node_ids() {
            self.kill(id);
        }
    }

    /// Kill and lose every byte of persistent state.
    pub fn kill_and_wipe(&mut self, id: i32) {
        self.kill(id);
        if let Some(node) = self.nodes.get_mut(&id) {
            node.wipe();
        }
        self.note(|| format!("wipe node {id}"));
    }

    /// Graceful shutdown: the node stops once the core reports `ShutdownComplete`.
    pub fn shutdown(&mut self, id: i32) -> Result<(), String> {
        let now = self.now;
        let Some(node) = self.nodes.get_mut(&id) else {
            return Ok(());
        };
        let Some(p) = node.process.as_mut() else {
            return Ok(());
        };
        if p.shutting_down {
            return Ok(());
        }
        p.shutting_down = true;
        p.core
            .begin_shutdown(now, &node.disk.log, SHUTDOWN_TIMEOUT_MS);
        self.note(|| format!("begin graceful shutdown of node {id}"));
        self.after_call(id)
    }

    fn on_node_down(&mut self, id: i32) {
        let broken: Vec<u64> = self
            .inflight
            .iter()
            .filter(|(_, i)| i.to == id || i.from == id)
            .map(|(r, _)| *r)
            .collect();
        for request_id in broken {
            let Some(inf) = self.inflight.remove(&request_id) else {
                continue;
            };
            // The connection to a dead node breaks: sometimes the sender notices at once.
            if inf.to == id && self.net.refused(&mut self.rng) {
                let at = self.now + 1 + self.rng.below(5);
                self.schedule(
                    at,
                    Event::Response {
                        to: inf.from,
                        incarnation: inf.from_incarnation,
                        correlation_id: inf.correlation_id,
                        result: ResponseResult::Failed,
                    },
                );
            }
        }
    }

    pub fn start_appending(&mut self) {
        if !self.appending {
            self.appending = true;
            let at = self.now;
            self.schedule(at, Event::Append);
            if self.snapshot_period_ms > 0 && !self.dynamic {
                let at = self.now + self.snapshot_period_ms;
                self.schedule(at, Event::Snapshot);
            }
        }
    }

    // ---- the event loop -------------------------------------------------------------------

    /// Runs events until `cond` holds; fails if it does not within `within_ms` virtual ms.
    pub fn run_until(
        &mut self,
        within_ms: u64,
        what: &str,
        mut cond: impl FnMut(&Cluster) -> bool,
    ) -> Result<(), String> {
        let deadline = self.now + within_ms;
        loop {
            if cond(self) {
                return Ok(());
            }
            let due = self.queue.first_key_value().map(|(k, _)| k.0);
            match due {
                None => return Err(format!("event queue exhausted before: {what}")),
                Some(t) if t > deadline => {
                    return Err(format!(
                        "not reached within {within_ms} virtual ms: {what}\n{}",
                        self.describe()
                    ))
                }
                Some(_) => self.step()?,
            }
        }
    }

    /// Runs every event due up to `now + ms`.
    pub fn run_for(&mut self, ms: u64) -> Result<(), String> {
        let until = self.now + ms;
        while self
            .queue
            .first_key_value()
            .is_some_and(|(k, _)| k.0 <= until)
        {
            self.step()?;
        }
        self.now = until;
        Ok(())
    }

    fn step(&mut self) -> Result<(), String> {
        let Some(((at, _), event)) = self.queue.pop_first() else {
            return Ok(());
        };
        self.now = self.now.max(at);
        self.events += 1;
        if self.events > MAX_EVENTS {
            return Err(format!("more than {MAX_EVENTS} events"));
        }
        if self.execute(*event)? {
            self.check_invariants()?;
        }
        Ok(())
    }

    fn check_invariants(&mut self) -> Result<(), String> {
        self.max_epoch_leader = self.leader_with_max_epoch();
        let mut invariants = std::mem::take(&mut self.invariants);
        let mut result = Ok(());
        for inv in invariants.iter_mut() {
            if let Err(e) = inv.check(self) {
                result = Err(format!("invariant {} violated: {e}", inv.name()));
                break;
            }
        }
        self.invariants = invariants;
        for node in self.nodes.values_mut() {
            self.snapshots_installed += node.snapshot_loads.len() as u64;
            node.snapshot_loads.clear();
            node.truncations.clear();
            node.lost_from = None;
        }
        result
    }

    /// Carries out one event; false when it touched nothing (a stale timer, a lost message).
    fn execute(&mut self, event: Event) -> Result<bool, String> {
        let now = self.now;
        match event {
            Event::Timer { node, incarnation } => {
                let Some(n) = self.nodes.get_mut(&node) else {
                    return Ok(false);
                };
                let Some(p) = n.process.as_mut() else {
                    return Ok(false);
                };
                if p.incarnation != incarnation || p.timer_at != Some(now) {
                    return Ok(false);
                }
                p.timer_at = None;
                if p.timer_burst.0 == now {
                    p.timer_burst.1 += 1;
                    if p.timer_burst.1 > MAX_TIMER_BURST {
                        return Err(format!(
                            "busy loop: node {node} poll_timeout stays at {} (now {}) in role {:?}",
                            p.core.poll_timeout().unwrap_or(0) as i64 - START_MS as i64,
                            now - START_MS,
                            p.core.role()
                        ));
                    }
                } else {
                    p.timer_burst = (now, 1);
                }
                p.core.handle_timeout(now, &n.disk.log);
                self.after_call(node).map(|()| true)
            }
            Event::Request {
                from,
                from_incarnation,
                to,
                correlation_id,
                body,
            } => {
                let running = self.nodes.get(&to).is_some_and(|n| n.is_running());
                if !running {
                    if self.net.refused(&mut self.rng) {
                        let at = now + 1 + self.rng.below(5);
                        self.schedule(
                            at,
                            Event::Response {
                                to: from,
                                incarnation: from_incarnation,
                                correlation_id,
                                result: ResponseResult::Failed,
                            },
                        );
                    }
                    return Ok(false);
                }
                // ApiVersions is the node's to answer, not the core's (see node/handler.rs).
                if let RequestBody::ApiVersions(_) = body {
                    let answer = crate::codec::api_versions::api_versions_response(
                        Default::default(),
                        4,
                        &[],
                        -1,
                    );
                    let at = now + 1 + self.rng.below(5);
                    self.schedule(
                        at,
                        Event::Response {
                            to: from,
                            incarnation: from_incarnation,
                            correlation_id,
                            result: ResponseResult::Answered(Box::new(
                                crate::codec::ResponseBody::ApiVersions(answer),
                            )),
                        },
                    );
                    return Ok(false);
                }
                let request_id = self.next_request_id;
                self.next_request_id += 1;
                self.inflight.insert(
                    request_id,
                    Inflight {
                        from,
                        from_incarnation,
                        to,
                        correlation_id,
                    },
                );
                let api_version = advertised(body.api_key()).map_or(0, |r| r.max_version);
                self.note(|| format!("{from} -> {to} #{correlation_id} {}", brief_request(&body)));
                if let Some(n) = self.nodes.get_mut(&to) {
                    if let Some(p) = n.process.as_mut() {
                        p.core.handle_request(
                            now,
                            &n.disk.log,
                            InboundRequest {
                                request_id,
                                api_version,
                                listener_name: LISTENER.to_string(),
                                forwarded: false,
                                sender: Some(crate::raft::Sender::anonymous_local()),
                                forwarded_by: None,
                                body,
                            },
                        );
                    }
                }
                self.after_call(to).map(|()| true)
            }
            Event::Response {
                to,
                incarnation,
                correlation_id,
                result,
            } => {
                let Some(n) = self.nodes.get_mut(&to) else {
                    return Ok(false);
                };
                let Some(p) = n.process.as_mut() else {
                    return Ok(false);
                };
                if p.incarnation != incarnation {
                    return Ok(false);
                }
                p.core
                    .handle_response(now, &n.disk.log, correlation_id, result);
                self.after_call(to).map(|()| true)
            }
            Event::Append => {
                let jitter = self.rng.below(self.append_period_ms + 1);
                let next = now + self.append_period_ms + jitter;
                self.schedule(next, Event::Append);
                let leaders: Vec<i32> = self
                    .nodes
                    .values()
                    .filter(|n| {
                        n.process.as_ref().is_some_and(|p| {
                            !p.shutting_down && matches!(p.core.role(), Role::Leader(_))
                        })
                    })
                    .map(|n| n.id)
                    .collect();
                let touched = !leaders.is_empty();
                for id in leaders {
                    let count = 1 + self.rng.below(self.append_max_records);
                    let records: Vec<Bytes> = (0..count)
                        .map(|i| Bytes::copy_from_slice(&(self.next_value + i).to_be_bytes()))
                        .collect();
                    self.next_value += count;
                    if let Some(n) = self.nodes.get_mut(&id) {
                        if let Some(p) = n.process.as_mut() {
                            p.core.propose(now, &n.disk.log, records);
                        }
                    }
                    self.after_call(id)?;
                }
                Ok(touched)
            }
            Event::Snapshot => {
                // Look at the cluster as it stands first: a snapshot and a log clean remove
                // batches that the invariants must have seen committed (a node started by the
                // scenario itself, not by an event, was never looked at).
                self.check_invariants()?;
                let jitter = self.rng.below(self.snapshot_period_ms + 1);
                let next = now + self.snapshot_period_ms / 2 + jitter;
                self.schedule(next, Event::Snapshot);
                let ids: Vec<i32> = self.running().map(|n| n.id).collect();
                let mut touched = false;
                for id in ids {
                    let (take, clean) = (self.rng.below(2) == 0, self.rng.below(2) == 0);
                    let Some(node) = self.nodes.get_mut(&id) else {
                        continue;
                    };
                    let taken = if take { snapshots::take(node) } else { None };
                    let cleaned = if clean { snapshots::clean(node) } else { None };
                    self.snapshots_taken += u64::from(taken.is_some());
                    if taken.is_some() || cleaned.is_some() {
                        touched = true;
                        self.note(|| {
                            format!("node {id} snapshot {taken:?}, log start now {cleaned:?}")
                        });
                    }
                }
                Ok(touched)
            }
        }
    }

    /// Carries out a node's outputs, routes its messages and re-arms its timer.
    fn after_call(&mut self, id: i32) -> Result<(), String> {
        let crash_after = if self.crash_mid_drain_ppm > 0
            && self.rng.below(1_000_000) < self.crash_mid_drain_ppm
        {
            Some(self.rng.below(4) as usize)
        } else {
            None
        };
        let Some(node) = self.nodes.get_mut(&id) else {
            return Ok(());
        };
        let Some(incarnation) = node.incarnation() else {
            return Ok(());
        };
        let drained = node.drain(crash_after);
        if let Some(err) = node.core().and_then(|c| c.fatal_error()) {
            return Err(format!("node {id} hit a fatal error: {err}"));
        }
        for out in drained.outgoing {
            match out {
                Outgoing::Request {
                    to,
                    correlation_id,
                    body,
                } => {
                    if !self.nodes.contains_key(&to) {
                        continue;
                    }
                    if let Fate::Delivered(delays) =
                        self.net.route(&mut self.rng, id, to, Kind::Request)
                    {
                        for d in delays {
                            let at = self.now + d;
                            self.schedule(
                                at,
                                Event::Request {
                                    from: id,
                                    from_incarnation: incarnation,
                                    to,
                                    correlation_id,
                                    body: body.clone(),
                                },
                            );
                        }
                    }
                }
                Outgoing::Response { request_id, body } => {
                    let Some(inf) = self.inflight.remove(&request_id) else {
                        continue;
                    };
                    if inf.from == ADMIN_ID {
                        self.admin_answers.insert(inf.correlation_id, body);
                        continue;
                    }
                    if let Fate::Delivered(delays) =
                        self.net.route(&mut self.rng, id, inf.from, Kind::Response)
                    {
                        for d in delays {
                            let at = self.now + d;
                            self.schedule(
                                at,
                                Event::Response {
                                    to: inf.from,
                                    incarnation: inf.from_incarnation,
                                    correlation_id: inf.correlation_id,
                                    result: ResponseResult::Answered(Box::new(body.clone())),
                                },
                            );
                        }
                    }
                }
            }
        }
        if drained.crashed {
            self.note(|| format!("node {id} crashed mid-drain"));
            self.on_node_down(id);
            return Ok(());
        }
        if drained.shutdown_complete {
            self.note(|| format!("node {id} completed its graceful shutdown"));
            self.kill(id);
            return Ok(());
        }
        self.rearm_timer(id);
        Ok(())
    }

    fn rearm_timer(&mut self, id: i32) {
        let now = self.now;
        let Some(p) = self.nodes.get_mut(&id).and_then(|n| n.process.as_mut()) else {
            return;
        };
        let Some(t) = p.core.poll_timeout() else {
            p.timer_at = None;
            return;
        };
        let t = t.max(now);
        if p.timer_at != Some(t) {
            p.timer_at = Some(t);
            let incarnation = p.incarnation;
            self.schedule(
                t,
                Event::Timer {
                    node: id,
                    incarnation,
                },
            );
        }
    }
}

fn brief_request(body: &RequestBody) -> String {
    match body {
        RequestBody::Fetch(f) => {
            let p = &f.topics[0].partitions[0];
            format!(
                "Fetch epoch {} offset {} last epoch {}",
                p.current_leader_epoch, p.fetch_offset, p.last_fetched_epoch
            )
        }
        RequestBody::Vote(v) => {
            let p = &v.topics[0].partitions[0];
            format!(
                "Vote{} epoch {} last {}@{}",
                if p.pre_vote { "(pre)" } else { "" },
                p.replica_epoch,
                p.last_offset,
                p.last_offset_epoch
            )
        }
        other => format!("{:?}", other.api_key()),
    }
}
