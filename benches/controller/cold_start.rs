//! Measurement 5: cold start, on the whole log and on a snapshot of the image, and the
//! snapshot's write time. Also [`serving`], the "answers a CreateTopics" check that the
//! failover measurement shares.
//!
//! ```text
//!   SIGKILL ─▶ exec (snapshots every 1 s) ─▶ serving ─▶ first .checkpoint past the HW then
//!            ─▶ SIGKILL ─▶ exec ─▶ serving (loaded from that snapshot)
//!   write time: commit of the snapshot's last record ─▶ its .checkpoint in the directory
//! ```

use std::path::Path;
use std::time::{Duration, Instant};

use ferrokraft::codec::messages::{RequestBody, ResponseBody};
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::{CreateTopicsRequest, TopicName};
use kafka_protocol::protocol::StrBytes;

use super::committed::{Timeline, POLL};
use super::now;
use super::phases::{ms_between, Controller};
use super::wire::Conn;

/// Measurement 5.
#[derive(Debug, Clone, Default)]
pub struct ColdStartResult {
    /// From exec to the first CreateTopics answered, with the whole log to replay.
    pub from_log_ms: f64,
    /// From exec to the first CreateTopics answered, on a snapshot of the image.
    pub from_snapshot_ms: f64,
    /// The snapshot's end offset and size.
    pub snapshot_offset: i64,
    pub snapshot_bytes: u64,
    /// From the commit of the snapshot's last record (the offset whose publication triggered
    /// it) to its `.checkpoint` file in the directory (written, fsynced, renamed). The
    /// decision itself is not visible from outside; both controllers decide when they
    /// publish the image at that offset.
    pub snapshot_write_ms: f64,
    /// RSS once serving from the snapshot.
    pub rss_kib: u64,
}

/// Kafka's metadata.log.max.snapshot.interval.ms while the cold start waits for a snapshot
/// (during the other measurements no snapshot is written: procs.rs turns them off).
const SNAPSHOT_INTERVAL_MS: &str = "1000";

/// Measurement 5: the controller is SIGKILLed and started again, first with the whole log to
/// replay, then (once it has written a snapshot of the image) on that snapshot. Serving means
/// answering a CreateTopics (one partition, RF 1: the fleet may have one live broker left).
/// The snapshot timed is the first whose last record committed after the restarted
/// controller served, so that its commit is on the timeline (a record committed before the
/// SIGKILL was committed long before any snapshot decision).
pub async fn cold_starts(
    ctrl: &Controller,
    timeline: &Timeline,
) -> Result<ColdStartResult, String> {
    let image_end = timeline.high_watermark();
    let exec = ctrl.restart_with(
        "metadata.log.max.snapshot.interval.ms",
        SNAPSHOT_INTERVAL_MS,
    )?;
    let from_log_ms = ms_between(exec, serving(&[ctrl.port()], "cold-log", 1).await?);
    // A sample of the restarted controller is on the timeline; offsets below this had
    // committed when it was read.
    timeline
        .wait_commit(image_end, Duration::from_secs(60))
        .await?;
    let committed_before = timeline.high_watermark();
    let snapshot = first_snapshot_past(ctrl.data_dir(), committed_before).await?;
    let last_record_committed = timeline
        .wait_commit(snapshot.end_offset - 1, Duration::from_secs(60))
        .await?;
    let exec = ctrl.restart_with("metadata.log.max.snapshot.interval.ms", "0")?;
    let from_snapshot_ms = ms_between(exec, serving(&[ctrl.port()], "cold-snapshot", 1).await?);
    Ok(ColdStartResult {
        from_log_ms,
        from_snapshot_ms,
        snapshot_offset: snapshot.end_offset,
        snapshot_bytes: snapshot.bytes,
        snapshot_write_ms: ms_between(last_record_committed, snapshot.appeared),
        rss_kib: ctrl.rss_kib(),
    })
}

/// When one of the controllers on `ports` first answers a CreateTopics of `topic` (one
/// partition, RF `replication_factor`) without error, or says it exists (an earlier try timed
/// out after the controller took it). Each port keeps its connection while it answers; a
/// NOT_CONTROLLER answer or a refused connection moves on to the next.
pub async fn serving(
    ports: &[u16],
    topic: &str,
    replication_factor: i16,
) -> Result<Instant, String> {
    const TOPIC_ALREADY_EXISTS: i16 = 36;
    let deadline = now() + Duration::from_secs(600);
    let mut last = String::new();
    let mut conns: Vec<Option<Conn>> = ports.iter().map(|_| None).collect();
    while now() < deadline {
        for (slot, &port) in conns.iter_mut().zip(ports) {
            if slot.is_none() {
                *slot = Conn::connect(port, "bench-serving", Duration::from_millis(200))
                    .await
                    .ok();
            }
            let Some(c) = slot.as_mut() else {
                continue;
            };
            let request = CreateTopicsRequest::default()
                .with_timeout_ms(5_000)
                .with_topics(vec![CreatableTopic::default()
                    .with_name(TopicName(StrBytes::from_string(topic.to_string())))
                    .with_num_partitions(1)
                    .with_replication_factor(replication_factor)]);
            match c
                .call(
                    RequestBody::CreateTopics(request),
                    7,
                    Duration::from_secs(10),
                )
                .await
            {
                Ok(ResponseBody::CreateTopics(r)) => match r.topics.first() {
                    Some(t) if t.error_code == 0 || t.error_code == TOPIC_ALREADY_EXISTS => {
                        return Ok(now());
                    }
                    Some(t) => {
                        last = format!("port {port}: error {} {:?}", t.error_code, t.error_message)
                    }
                    None => last = format!("port {port}: an empty answer"),
                },
                Ok(other) => {
                    last = format!("port {port}: {other:?}");
                    *slot = None;
                }
                Err(e) => {
                    last = format!("port {port}: {e}");
                    *slot = None;
                }
            }
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Err(format!(
        "not serving CreateTopics after 600 s (last: {last})"
    ))
}

/// A snapshot file as it appeared.
#[derive(Debug, Clone, Copy)]
pub struct SnapshotFile {
    pub end_offset: i64,
    pub bytes: u64,
    /// The first look that saw the `.checkpoint` (looks every [`POLL`]).
    pub appeared: Instant,
}

/// The snapshots (`<end offset>-<epoch>.checkpoint`) in `dir`: (end offset, size).
fn snapshots(dir: &Path) -> Result<Vec<(i64, u64)>, String> {
    Ok(std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let end: i64 = name
                .strip_suffix(".checkpoint")?
                .split('-')
                .next()?
                .parse()
                .ok()?;
            Some((end, e.metadata().ok()?.len()))
        })
        .collect())
}

/// Waits for the first snapshot in `data_dir`'s metadata log whose end offset is past
/// `offset` (it holds the record at `offset`), looking every [`POLL`].
async fn first_snapshot_past(data_dir: &Path, offset: i64) -> Result<SnapshotFile, String> {
    let dir = data_dir.join("__cluster_metadata-0");
    let deadline = now() + Duration::from_secs(900);
    loop {
        let found = snapshots(&dir)?
            .into_iter()
            .filter(|&(end, _)| end > offset)
            .min();
        if let Some((end_offset, bytes)) = found {
            return Ok(SnapshotFile {
                end_offset,
                bytes,
                appeared: now(),
            });
        }
        if now() > deadline {
            return Err(format!(
                "no snapshot past offset {offset} in {}",
                dir.display()
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}
