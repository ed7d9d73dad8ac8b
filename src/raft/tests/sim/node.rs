//! One simulated node: its disk (an in-memory log that loses unflushed appends on a crash, and
//! the election state as last persisted) and, while it runs, a `RaftCore` process.

use crate::codec::{RequestBody, ResponseBody};
use crate::raft::tests::mem_log::MemLog;
use crate::raft::types::OffsetAndEpoch;
use crate::raft::{ElectionState, Output, RaftConfig, RaftCore, Role};

/// What survives a crash.
#[derive(Debug, Clone, Default)]
pub struct Disk {
    pub log: MemLog,
    /// Only what a carried-out `PersistElectionState` wrote.
    pub stored: Option<ElectionState>,
    /// Snapshot downloads in progress (FetchSnapshot chunks not yet installed). Lost on a
    /// crash: a partial snapshot is no snapshot, and Kafka deletes `.checkpoint.part` files
    /// when it starts.
    pub downloads: std::collections::BTreeMap<(i64, i32), Vec<u8>>,
}

/// A running process.
#[derive(Debug)]
pub struct Process {
    pub core: RaftCore,
    /// Distinguishes restarts: answers to an older process are dropped.
    pub incarnation: u64,
    /// The time of the pending timer event, if one is scheduled.
    pub timer_at: Option<u64>,
    pub shutting_down: bool,
    /// (virtual time, how many timer firings at it) to catch busy loops.
    pub timer_burst: (u64, u32),
}

/// A carried-out `Truncate`: where to, and the batches it removed.
#[derive(Debug, Clone)]
pub struct Truncation {
    pub offset: i64,
    pub removed: Vec<(i64, i64, bytes::Bytes)>,
}

/// A message the node sends.
#[derive(Debug)]
pub enum Outgoing {
    Request {
        to: i32,
        correlation_id: u64,
        body: RequestBody,
    },
    Response {
        request_id: u64,
        body: ResponseBody,
    },
}

/// The effect of carrying out the pending outputs.
#[derive(Debug, Default)]
pub struct Drained {
    pub outgoing: Vec<Outgoing>,
    pub shutdown_complete: bool,
    /// The node crashed part-way (its remaining outputs were never carried out).
    pub crashed: bool,
}

#[derive(Debug)]
pub struct SimNode {
    pub id: i32,
    pub is_voter: bool,
    pub disk: Disk,
    pub process: Option<Process>,
    /// `Truncate` outputs carried out since the invariants last looked.
    pub truncations: Vec<Truncation>,
    /// Lowest offset lost to a crash or wipe since the invariants last looked.
    pub lost_from: Option<i64>,
    /// Bumped when the disk is wiped (deliberate loss of all state).
    pub wipes: u64,
    /// Snapshots installed since the invariants last looked: (id, the epoch in which the node
    /// was leader or resigned leader when it installed it, if it was).
    pub snapshot_loads: Vec<(OffsetAndEpoch, Option<i32>)>,
}

impl SimNode {
    pub fn new(id: i32, is_voter: bool) -> Self {
        Self {
            id,
            is_voter,
            disk: Disk::default(),
            process: None,
            truncations: Vec::new(),
            lost_from: None,
            wipes: 0,
            snapshot_loads: Vec::new(),
        }
    }

    pub fn is_running(&self) -> bool {
        self.process.is_some()
    }

    pub fn core(&self) -> Option<&RaftCore> {
        self.process.as_ref().map(|p| &p.core)
    }

    pub fn incarnation(&self) -> Option<u64> {
        self.process.as_ref().map(|p| p.incarnation)
    }

    /// Starts a process from what the disk holds.
    pub fn start(&mut self, cfg: RaftConfig, now_ms: u64, incarnation: u64) {
        assert!(self.process.is_none(), "node {} already runs", self.id);
        let core = RaftCore::new(cfg, self.disk.stored.clone(), &self.disk.log, now_ms);
        self.process = Some(Process {
            core,
            incarnation,
            timer_at: None,
            shutting_down: false,
            timer_burst: (0, 0),
        });
    }

    /// The process dies; unflushed appends are lost.
    pub fn crash(&mut self) {
        self.process = None;
        self.disk.downloads.clear();
        if let Some(from) = self.disk.log.crash() {
            self.lost_from = Some(self.lost_from.map_or(from, |l| l.min(from)));
        }
    }

    /// The process dies and its disk is lost entirely.
    pub fn wipe(&mut self) {
        self.process = None;
        self.disk = Disk::default();
        self.truncations.clear();
        self.lost_from = Some(0);
        self.wipes += 1;
    }

    /// Carries out every pending output in order; with `crash_after = Some(k)` the node
    /// crashes after carrying out `k` of them.
    pub fn drain(&mut self, crash_after: Option<usize>) -> Drained {
        let mut drained = Drained::default();
        let Some(p) = self.process.as_mut() else {
            return drained;
        };
        let outputs: Vec<Output> = std::iter::from_fn(|| p.core.poll_output()).collect();
        // The role these outputs come from (a call ends in one role).
        let leader_epoch = match p.core.role() {
            Role::Leader(l) => Some(l.epoch),
            Role::Resigned(r) => Some(r.epoch),
            _ => None,
        };
        for (i, out) in outputs.into_iter().enumerate() {
            if crash_after == Some(i) {
                self.crash();
                drained.crashed = true;
                return drained;
            }
            match out {
                Output::PersistElectionState(s) => self.disk.stored = Some(s),
                Output::AppendAsLeader { batch, .. } => self.disk.log.append(&batch),
                Output::AppendAsFollower { records, .. } => self.disk.log.append(&records),
                Output::Truncate { offset } => {
                    let removed = self.disk.log.batches_between(offset, i64::MAX);
                    self.truncations.push(Truncation { offset, removed });
                    self.disk.log.truncate(offset);
                }
                Output::Flush => self.disk.log.flush(),
                Output::Send {
                    correlation_id,
                    destination,
                    request,
                } => drained.outgoing.push(Outgoing::Request {
                    to: destination.node_id,
                    correlation_id,
                    body: request,
                }),
                Output::Respond {
                    request_id, body, ..
                } => drained
                    .outgoing
                    .push(Outgoing::Response { request_id, body }),
                Output::SnapshotChunk {
                    id,
                    position,
                    bytes,
                } => {
                    let part = self
                        .disk
                        .downloads
                        .entry((id.offset, id.epoch))
                        .or_default();
                    // The core continues a download exactly where it stands (a bug otherwise,
                    // reported as this run's failure).
                    assert_eq!(
                        part.len() as i64,
                        position,
                        "node {}: chunk of snapshot {}-{} at {position}",
                        self.id,
                        id.offset,
                        id.epoch
                    );
                    part.extend_from_slice(&bytes);
                }
                Output::InstallSnapshot { id } => {
                    self.snapshot_loads.push((id, leader_epoch));
                    let bytes = self
                        .disk
                        .downloads
                        .remove(&(id.offset, id.epoch))
                        .unwrap_or_default();
                    self.disk
                        .log
                        .install_snapshot(id, bytes::Bytes::from(bytes));
                }
                Output::AbandonSnapshot { id } => {
                    self.disk.downloads.remove(&(id.offset, id.epoch));
                }
                Output::HighWatermark(_) | Output::RoleChanged { .. } => {}
                Output::ShutdownComplete => drained.shutdown_complete = true,
            }
        }
        drained
    }
}
