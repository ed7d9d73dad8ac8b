//! When a record committed, read from the controller itself: a poller asks the active
//! controller for its high watermark (DescribeQuorum) every few milliseconds and keeps
//! (time, high watermark) samples; after a phase the benchmark reads the metadata log from the
//! controller's data directory (Kafka's format, whichever implementation wrote it), finds the
//! offset of the last record the phase needed, and takes the first sample whose high
//! watermark passed it. Replies are never the measure: a controller may answer before, or
//! well after, it committed.
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
use ferrokraft::dump::{dump_path, DumpedRecord};
use ferrokraft::metadata::records::MetadataRecord;
use kafka_protocol::messages::describe_quorum_request::{PartitionData, TopicData};
use kafka_protocol::messages::{DescribeQuorumRequest, TopicName};
use kafka_protocol::protocol::StrBytes;

use super::now;
use super::wire::Conn;

/// How often the high watermark is sampled.
pub const POLL: Duration = Duration::from_millis(5);

/// The high watermark over time, as the active controller reported it.
#[derive(Clone)]
pub struct Timeline {
    samples: Arc<Mutex<Vec<(Instant, i64)>>>,
    latest: Arc<AtomicI64>,
    stop: Arc<AtomicBool>,
}

impl Timeline {
    /// Starts polling the controller on `port` (on the current tokio runtime).
    pub fn start(port: u16) -> Timeline {
        let t = Timeline {
            samples: Arc::new(Mutex::new(Vec::new())),
            latest: Arc::new(AtomicI64::new(-1)),
            stop: Arc::new(AtomicBool::new(false)),
        };
        let poller = t.clone();
        tokio::spawn(async move { poller.poll(port).await });
        t
    }

    async fn poll(self, port: u16) {
        let mut conn: Option<Conn> = None;
        while !self.stop.load(Ordering::Relaxed) {
            if conn.is_none() {
                conn = Conn::connect(port, "ferrokraft-bench-hw", Duration::from_secs(1))
                    .await
                    .ok();
            }
            if let Some(c) = conn.as_mut() {
                match high_watermark(c).await {
                    Ok(Some(hw)) => {
                        let at = now();
                        self.latest.fetch_max(hw, Ordering::Relaxed);
                        if let Ok(mut s) = self.samples.lock() {
                            // Kept increasing, so that commit_time can search it.
                            if s.last().is_none_or(|&(_, last)| hw > last) {
                                s.push((at, hw));
                            }
                        }
                    }
                    Ok(None) => {}
                    Err(_) => conn = None,
                }
            }
            tokio::time::sleep(POLL).await;
        }
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

async fn high_watermark(c: &mut Conn) -> std::io::Result<Option<i64>> {
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
            Some(p.high_watermark)
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
