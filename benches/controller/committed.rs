//! When a record committed, read from the controller itself: a poller asks the active
//! controller for its high watermark (DescribeQuorum) every few milliseconds and keeps
//! (time, high watermark) samples; after a phase the benchmark reads the metadata log from the
//! controller's data directory (Kafka's format, whichever implementation wrote it), finds the
//! offset of the last record the phase needed, and takes the first sample whose high
//! watermark passed it. Replies are never the measure: a controller may answer before, or
//! well after, it committed. With several voters the poller follows the leader: a voter that
//! is not (or no longer) the leader answers with an error or not at all, and the poller asks
//! the next one; the fleet reads the leader it found ([`Timeline::leader_port`]).
//!
//! ```text
//!   DescribeQuorum every POLL ─▶ [(t, hw)]      log dir ─▶ [(offset, record)]
//!                                    └── commit_time(offset) = first t with hw > offset
//! ```

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferrokraft::codec::messages::{RequestBody, ResponseBody};
use ferrokraft::metadata::records::MetadataRecord;
use ferrokraft::tools::dump::{dump_path, DumpedRecord};
use kafka_protocol::messages::describe_quorum_request::{PartitionData, TopicData};
use kafka_protocol::messages::{DescribeQuorumRequest, TopicName};
use kafka_protocol::protocol::StrBytes;

use super::now;
use super::wire::Conn;

/// How often the high watermark is sampled.
pub const POLL: Duration = Duration::from_millis(5);

/// What the active controller's DescribeQuorum answer says.
#[derive(Debug, Clone, Copy)]
pub struct LeaderView {
    /// The leader's node id and epoch.
    pub leader_id: i32,
    pub epoch: i32,
    /// Its high watermark.
    pub high_watermark: i64,
    /// The smallest log end offset it reports for a voter (-1: one is unknown).
    pub min_voter_log_end_offset: i64,
}

/// The high watermark over time, as the active controller reported it, and who that was.
#[derive(Clone)]
pub struct Timeline {
    samples: Arc<Mutex<Vec<(Instant, i64)>>>,
    latest: Arc<AtomicI64>,
    stop: Arc<AtomicBool>,
    /// The voters' ports: node id n listens on `ports[n - 1]`.
    ports: Arc<Vec<u16>>,
    leader: Arc<Mutex<Option<LeaderView>>>,
}

impl Timeline {
    /// Starts polling the single controller on `port` (on the current tokio runtime).
    pub fn start(port: u16) -> Timeline {
        Timeline::following(vec![port])
    }

    /// Starts polling whichever of the voters on `ports` (node ids 1, 2, …) leads: only the
    /// leader answers DescribeQuorum without error, so an error or a closed connection moves
    /// the poller to the next voter until one answers.
    pub fn following(ports: Vec<u16>) -> Timeline {
        let t = Timeline {
            samples: Arc::new(Mutex::new(Vec::new())),
            latest: Arc::new(AtomicI64::new(-1)),
            stop: Arc::new(AtomicBool::new(false)),
            ports: Arc::new(ports),
            leader: Arc::new(Mutex::new(None)),
        };
        let poller = t.clone();
        tokio::spawn(async move { poller.poll().await });
        t
    }

    async fn poll(self) {
        let mut conn: Option<Conn> = None;
        let mut at = 0usize;
        let next = |at: usize| (at + 1) % self.ports.len().max(1);
        while !self.stop.load(Ordering::Relaxed) {
            let Some(&port) = self.ports.get(at) else {
                return;
            };
            if conn.is_none() {
                conn = Conn::connect(port, "ferrokraft-bench-hw", Duration::from_secs(1))
                    .await
                    .ok();
                if conn.is_none() {
                    at = next(at);
                }
            }
            if let Some(c) = conn.as_mut() {
                match describe(c).await {
                    Ok(Some(v)) => {
                        let at_time = now();
                        self.latest.fetch_max(v.high_watermark, Ordering::Relaxed);
                        if let Ok(mut s) = self.samples.lock() {
                            // Kept increasing, so that commit_time can search it.
                            if s.last().is_none_or(|&(_, last)| v.high_watermark > last) {
                                s.push((at_time, v.high_watermark));
                            }
                        }
                        if let Ok(mut l) = self.leader.lock() {
                            *l = Some(v);
                        }
                    }
                    // Not the leader (any more): ask the next voter.
                    Ok(None) | Err(_) => {
                        conn = None;
                        at = next(at);
                    }
                }
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// The leader as it last answered (None before the first answer).
    pub fn leader(&self) -> Option<LeaderView> {
        self.leader.lock().ok().and_then(|l| *l)
    }

    /// The port of the leader as it last answered.
    pub fn leader_port(&self) -> Option<u16> {
        let id = self.leader()?.leader_id;
        self.ports.get(usize::try_from(id - 1).ok()?).copied()
    }

    /// The highest high watermark seen so far (-1 before the first answer).
    pub fn high_watermark(&self) -> i64 {
        self.latest.load(Ordering::Relaxed)
    }

    /// When the high watermark first passed `offset` (the record at `offset` committed).
    pub fn commit_time(&self, offset: i64) -> Option<Instant> {
        let s = self.samples.lock().ok()?;
        let i = s.partition_point(|&(_, hw)| hw <= offset);
        s.get(i).map(|&(t, _)| t)
    }

    /// Waits up to `timeout` for the record at `offset` to commit.
    pub async fn wait_commit(&self, offset: i64, timeout: Duration) -> Result<Instant, String> {
        let deadline = now() + timeout;
        loop {
            if let Some(t) = self.commit_time(offset) {
                return Ok(t);
            }
            if now() > deadline {
                return Err(format!(
                    "offset {offset} not committed within {timeout:?} (high watermark {})",
                    self.high_watermark()
                ));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Stops the poller.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// DescribeQuorum v2 for `__cluster_metadata-0` on `c`; None when the node answers with an
/// error (it is not the leader, or it is still starting).
pub async fn describe(c: &mut Conn) -> std::io::Result<Option<LeaderView>> {
    let request = DescribeQuorumRequest::default().with_topics(vec![TopicData::default()
        .with_topic_name(TopicName(StrBytes::from_static_str("__cluster_metadata")))
        .with_partitions(vec![PartitionData::default().with_partition_index(0)])]);
    let ResponseBody::DescribeQuorum(r) = c
        .call(
            RequestBody::DescribeQuorum(request),
            2,
            Duration::from_secs(2),
        )
        .await?
    else {
        return Err(std::io::Error::other("not a DescribeQuorum response"));
    };
    let p = r.topics.first().and_then(|t| t.partitions.first());
    Ok(match p {
        Some(p) if r.error_code == 0 && p.error_code == 0 && p.leader_id.0 >= 0 => {
            Some(LeaderView {
                leader_id: p.leader_id.0,
                epoch: p.leader_epoch,
                high_watermark: p.high_watermark,
                min_voter_log_end_offset: p
                    .current_voters
                    .iter()
                    .map(|v| v.log_end_offset)
                    .min()
                    .unwrap_or(-1),
            })
        }
        _ => None,
    })
}

/// The metadata records in the log under `log_dir` at or after `from`, in offset order.
pub fn records_from(log_dir: &Path, from: i64) -> Result<Vec<(i64, MetadataRecord)>, String> {
    let files = dump_path(log_dir).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for f in files {
        // The bootstrap checkpoint and snapshots are not the log.
        if f.path.extension().is_some_and(|e| e == "checkpoint") {
            continue;
        }
        for b in f
            .batches
            .iter()
            .filter(|b| !b.control && b.last_offset >= from)
        {
            for r in &b.records {
                if let DumpedRecord::Metadata {
                    offset,
                    record: Ok(r),
                    ..
                } = r
                {
                    if *offset >= from {
                        out.push((*offset, r.message.clone()));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The offset of the first batch (control batches included) of an epoch after `epoch` in the
/// log under `log_dir`, and that epoch: where a new leader's epoch starts (its LeaderChange
/// control record).
pub fn first_offset_after_epoch(log_dir: &Path, epoch: i32) -> Result<Option<(i64, i32)>, String> {
    let files = dump_path(log_dir).map_err(|e| e.to_string())?;
    Ok(files
        .iter()
        .filter(|f| f.path.extension().is_none_or(|e| e != "checkpoint"))
        .flat_map(|f| f.batches.iter())
        .find(|b| b.epoch > epoch)
        .map(|b| (b.base_offset, b.epoch)))
}
