//! A Fetch-speaking observer of `__cluster_metadata-0`: it fetches from the leader as a broker
//! does (Fetch v13–17 with the metadata topic id, replica id = a registered broker's id and its
//! directory id, replica epoch −1, 500 ms long polls; [`super::fetch`]), follows the leader
//! epoch (FENCED_LEADER_EPOCH / NOT_LEADER_OR_FOLLOWER carry the current one), truncates on a
//! diverging epoch, and notes when each watched TopicRecord was fetched and when a Fetch
//! answer's high watermark passed it (when a broker may apply it). Batches are decoded with
//! ferrokraft's record code (`dump_bytes`).
//!
//! It starts at the leader's log end: its first Fetch asks past the end in the current epoch
//! and the diverging answer gives the log end (the measurement needs only what is written
//! after it caught up; reading a 1M-partition log first would load the generator, not the
//! controller). A snapshot id in an answer (its offset fell below the log start) moves it to
//! the snapshot's end instead of downloading it, for the same reason.
//!
//! ```text
//!   seek: Fetch(offset ∞, epoch E) ─▶ diverging (end, E) ─▶ next = end
//!   loop: Fetch(next, last epoch, E, wait 500 ms) ─▶ batches ─▶ TopicRecord "prefix…" seen at t
//!                                                 └▶ high watermark > its offset ─▶ committed at t
//! ```

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferrokraft::codec::messages::{RequestBody, ResponseBody};
use ferrokraft::metadata::records::MetadataRecord;
use ferrokraft::tools::dump::{dump_bytes, DumpedRecord};
use uuid::Uuid;

use super::committed::Timeline;
use super::fetch::{
    answer, negotiate, request, Answer, FetchArgs, FENCED_LEADER_EPOCH, METADATA_TOPIC_ID,
    NOT_LEADER_OR_FOLLOWER, UNKNOWN_LEADER_EPOCH,
};
use super::now;
use super::wire::Conn;

/// How long the leader may hold a Fetch (a broker's replica.fetch.wait.max.ms, 500).
pub const MAX_WAIT_MS: i32 = 500;
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
const RETRY: Duration = Duration::from_millis(20);

/// When an observer saw a watched TopicRecord.
#[derive(Debug, Clone, Copy)]
pub struct Seen {
    /// The record's offset.
    pub offset: i64,
    /// When the Fetch answer holding its batch came.
    pub fetched: Instant,
    /// When a Fetch answer's high watermark first passed it.
    pub committed: Option<Instant>,
}

/// What one observer has.
#[derive(Debug, Clone, Default)]
pub struct ObserverState {
    /// Still looking for the log end.
    pub seeking: bool,
    /// The next offset it fetches, and the epoch of the batch before it.
    pub next_offset: i64,
    pub last_epoch: i32,
    /// The last high watermark an answer gave.
    pub high_watermark: i64,
    /// Fetch answers without error.
    pub fetches: u64,
    /// Snapshots it moved past.
    pub snapshots_skipped: u32,
    /// Errors, and the last one.
    pub errors: u32,
    pub last_error: Option<String>,
    /// Watched TopicRecords by topic name.
    pub topics: BTreeMap<String, Seen>,
}

/// One observer, fetching until dropped.
pub struct Observer {
    /// Its replica id.
    pub id: i32,
    state: Arc<Mutex<ObserverState>>,
    stop: Arc<AtomicBool>,
}

impl Drop for Observer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Who an observer is and what it watches.
#[derive(Debug, Clone)]
pub struct Identity {
    /// A registered broker's id and its directory id.
    pub id: i32,
    pub directory_id: Uuid,
    pub cluster_id: String,
    /// TopicRecords whose name starts with this are noted.
    pub watch_prefix: String,
}

impl Observer {
    /// Starts fetching from the leader `timeline` follows (on the current tokio runtime).
    pub fn start(timeline: &Timeline, who: Identity) -> Observer {
        let state = Arc::new(Mutex::new(ObserverState {
            seeking: true,
            high_watermark: -1,
            ..ObserverState::default()
        }));
        let stop = Arc::new(AtomicBool::new(false));
        let o = Observer {
            id: who.id,
            state: state.clone(),
            stop: stop.clone(),
        };
        tokio::spawn(run(timeline.clone(), who, state, stop));
        o
    }

    /// A copy of its state.
    pub fn state(&self) -> ObserverState {
        self.state.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

fn note_error(state: &Mutex<ObserverState>, e: String) {
    if let Ok(mut s) = state.lock() {
        s.errors += 1;
        s.last_error = Some(e);
    }
}

async fn connect(timeline: &Timeline) -> Result<(Conn, i16), String> {
    let port = timeline.leader_port().ok_or("no leader known yet")?;
    let mut c = Conn::connect(port, "ferrokraft-bench-observer", CALL_TIMEOUT)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let versions = c
        .api_versions(CALL_TIMEOUT)
        .await
        .map_err(|e| e.to_string())?;
    let version = negotiate(&versions).ok_or("no Fetch version in common")?;
    Ok((c, version))
}

async fn run(
    timeline: Timeline,
    who: Identity,
    state: Arc<Mutex<ObserverState>>,
    stop: Arc<AtomicBool>,
) {
    let mut conn: Option<(Conn, i16)> = None;
    let mut epoch = timeline.leader().map_or(0, |l| l.epoch.max(0));
    while !stop.load(Ordering::Relaxed) {
        if conn.is_none() {
            match connect(&timeline).await {
                Ok(c) => conn = Some(c),
                Err(e) => {
                    note_error(&state, e);
                    tokio::time::sleep(RETRY).await;
                    continue;
                }
            }
        }
        let Some((c, version)) = conn.as_mut() else {
            continue;
        };
        let Ok((seeking, next_offset, last_epoch)) = state
            .lock()
            .map(|s| (s.seeking, s.next_offset, s.last_epoch))
        else {
            return;
        };
        let args = FetchArgs {
            version: *version,
            topic_id: METADATA_TOPIC_ID,
            cluster_id: Some(who.cluster_id.clone()),
            replica_id: who.id,
            directory_id: who.directory_id,
            leader_epoch: epoch,
            fetch_offset: if seeking { i64::MAX / 2 } else { next_offset },
            last_fetched_epoch: if seeking { epoch } else { last_epoch },
            max_wait_ms: if seeking { 0 } else { MAX_WAIT_MS },
        };
        let timeout = CALL_TIMEOUT + Duration::from_millis(MAX_WAIT_MS as u64);
        let reply = c
            .call(RequestBody::Fetch(request(&args)), *version, timeout)
            .await;
        let at = now();
        let a = match reply {
            Ok(ResponseBody::Fetch(r)) => answer(&r),
            Ok(other) => {
                note_error(&state, format!("not a Fetch answer: {other:?}"));
                conn = None;
                continue;
            }
            Err(e) => {
                note_error(&state, format!("Fetch: {e}"));
                conn = None;
                tokio::time::sleep(RETRY).await;
                continue;
            }
        };
        let new_epoch = a.leader_epoch > epoch;
        if new_epoch {
            epoch = a.leader_epoch;
        }
        match a.error {
            0 => apply(&state, a, at, &who.watch_prefix),
            FENCED_LEADER_EPOCH | UNKNOWN_LEADER_EPOCH | NOT_LEADER_OR_FOLLOWER => {
                if !new_epoch {
                    note_error(&state, format!("Fetch error {} in epoch {epoch}", a.error));
                    // Another node leads, or the leader is not ready: ask again there.
                    conn = None;
                    tokio::time::sleep(RETRY).await;
                }
            }
            e => {
                note_error(&state, format!("Fetch error {e}"));
                conn = None;
                tokio::time::sleep(RETRY).await;
            }
        }
    }
}

/// Applies an answer without error to `state`.
fn apply(state: &Mutex<ObserverState>, a: Answer, at: Instant, prefix: &str) {
    let Ok(mut s) = state.lock() else {
        return;
    };
    s.fetches += 1;
    if let Some((end, epoch)) = a.diverging {
        // Seeking: the log end. Otherwise the leader's log diverged from what was fetched.
        s.seeking = false;
        s.next_offset = end;
        s.last_epoch = epoch;
        s.topics.retain(|_, seen| seen.offset < end);
    } else if let Some((end, epoch)) = a.snapshot {
        s.seeking = false;
        s.next_offset = end;
        s.last_epoch = epoch;
        s.snapshots_skipped += 1;
    } else if !s.seeking {
        let (batches, _) = dump_bytes(&a.records);
        let from = s.next_offset;
        for b in batches.iter().filter(|b| b.last_offset >= from) {
            for r in &b.records {
                if let DumpedRecord::Metadata {
                    offset,
                    record: Ok(m),
                    ..
                } = r
                {
                    if let MetadataRecord::Topic(t) = &m.message {
                        if t.name.starts_with(prefix) {
                            s.topics.entry(t.name.clone()).or_insert(Seen {
                                offset: *offset,
                                fetched: at,
                                committed: None,
                            });
                        }
                    }
                }
            }
            s.next_offset = b.last_offset + 1;
            s.last_epoch = b.epoch;
        }
    }
    if a.high_watermark >= 0 {
        s.high_watermark = a.high_watermark;
        for seen in s.topics.values_mut() {
            if seen.committed.is_none() && seen.offset < a.high_watermark {
                seen.committed = Some(at);
            }
        }
    }
}
