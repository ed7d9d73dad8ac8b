//! Fake brokers: each registers with the active controller (BrokerRegistration v4, as a Kafka
//! 4.1 broker sends it) on its own connection, then heartbeats (BrokerHeartbeat v1) at the
//! fleet's interval, reporting the last committed metadata offset the [`Timeline`] has seen
//! as its caught-up offset. A broker's heartbeats can be stopped (it "dies") or turned into a
//! controlled shutdown; every reply's latency and fencing state is kept for the report.
//! When the controller closes the connection or answers NOT_CONTROLLER, the broker connects
//! to the leader the [`Timeline`] found (DescribeQuorum over the voters) and goes on, retrying
//! every [`RETRY`] until one answers (a broker's channel to the controller follows the leader
//! its Raft client learned).
//!
//! ```text
//!   register ─▶ epoch ─▶ loop { heartbeat(offset = hw - 1, want_shut_down) ─▶ stats; sleep }
//!                                   └─ closed / NOT_CONTROLLER ─▶ reconnect to the leader
//! ```

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use ferrokraft::codec::messages::{RequestBody, ResponseBody};
use ferrokraft::codec::versions::Release;
use kafka_protocol::messages::broker_registration_request::{Feature, Listener};
use kafka_protocol::messages::{BrokerHeartbeatRequest, BrokerId, BrokerRegistrationRequest};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::committed::Timeline;
use super::now;
use super::wire::Conn;

/// Fake broker ids start here, clear of the controllers' node ids.
pub const FIRST_BROKER_ID: i32 = 1000;

/// How often a broker in controlled shutdown heartbeats: a real broker sends its next
/// heartbeat 10 ms after a "not yet" answer only once and then waits its interval; the
/// benchmark keeps asking every 10 ms so that the figure is the controller's, not the
/// interval's.
const SHUTDOWN_HEARTBEAT: Duration = Duration::from_millis(10);

const CALL_TIMEOUT: Duration = Duration::from_secs(10);

/// How soon a broker whose heartbeat failed tries again (on another connection).
pub const RETRY: Duration = Duration::from_millis(100);

/// Kafka's NOT_CONTROLLER: the node is not the active controller.
const NOT_CONTROLLER: i16 = 41;

/// What one broker saw.
#[derive(Debug, Default, Clone)]
pub struct BrokerStats {
    /// Heartbeat reply latencies, in microseconds (while recording is on).
    pub latencies_us: Vec<u32>,
    /// Replies that said fenced after one had said unfenced (and no stop or shutdown asked).
    pub fenced_again: u32,
    /// Whether a reply has said unfenced.
    pub unfenced: bool,
    /// When the last heartbeat reply came.
    pub last_reply: Option<Instant>,
    /// When the heartbeat that reply answered was sent: the controller saw it after this.
    pub last_answered_sent: Option<Instant>,
    /// When the reply with shouldShutDown came.
    pub should_shut_down_at: Option<Instant>,
    /// Replies with an error and failed calls.
    pub errors: u32,
    /// The last error, for diagnosis.
    pub last_error: Option<String>,
}

/// One fake broker.
pub struct FakeBroker {
    /// Its broker id.
    pub id: i32,
    /// The epoch its registration was given.
    pub epoch: i64,
    /// The log directory it registered (an observer fetching as this broker sends it).
    pub directory_id: Uuid,
    alive: AtomicBool,
    want_shut_down: AtomicBool,
    stats: Mutex<BrokerStats>,
}

/// The fleet.
pub struct Fleet {
    /// Every broker, by index (id = FIRST_BROKER_ID + index).
    pub brokers: Vec<Arc<FakeBroker>>,
    interval_ms: Arc<AtomicU64>,
    recording: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    /// Once set (`spread_evenly`): from this instant on, broker k of n sends at
    /// start + k · interval / n + j · interval, so every run sees the same arrival pattern.
    spread: Arc<OnceLock<(Instant, usize)>>,
}

impl Drop for Fleet {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The BrokerRegistration of broker `id`.
fn registration(id: i32, cluster_id: &str, directory_id: Uuid) -> BrokerRegistrationRequest {
    let features = Release::Kafka4_1
        .supported_features()
        .iter()
        .map(|f| {
            Feature::default()
                .with_name(StrBytes::from_static_str(f.name))
                .with_min_supported_version(f.min_version)
                .with_max_supported_version(f.max_version)
        })
        .collect();
    BrokerRegistrationRequest::default()
        .with_broker_id(BrokerId(id))
        .with_cluster_id(StrBytes::from_string(cluster_id.to_string()))
        .with_incarnation_id(Uuid::new_v4())
        .with_listeners(vec![Listener::default()
            .with_name(StrBytes::from_static_str("PLAINTEXT"))
            .with_host(StrBytes::from_static_str("127.0.0.1"))
            // Never bound: controllers do not connect to brokers.
            .with_port(10_000 + (id - FIRST_BROKER_ID) as u16 % 50_000)
            .with_security_protocol(0)])
        .with_features(features)
        .with_rack(None)
        .with_log_dirs(vec![directory_id])
        .with_previous_broker_epoch(-1)
}

/// Registers broker `id` with the controller on `port`; a controller that is not active yet
/// (NOT_CONTROLLER: a new leader still catching up to its epoch start) is asked again every
/// [`RETRY`] for up to a minute, as a broker retries its registration.
async fn register(
    port: u16,
    id: i32,
    cluster_id: &str,
    directory_id: Uuid,
) -> Result<(Conn, i64), String> {
    let deadline = now() + Duration::from_secs(60);
    loop {
        let mut conn = Conn::connect(port, &format!("fake-broker-{id}"), CALL_TIMEOUT)
            .await
            .map_err(|e| format!("broker {id}: connect: {e}"))?;
        let body = RequestBody::BrokerRegistration(registration(id, cluster_id, directory_id));
        match conn.call(body, 4, CALL_TIMEOUT).await {
            Ok(ResponseBody::BrokerRegistration(r)) if r.error_code == 0 => {
                return Ok((conn, r.broker_epoch))
            }
            Ok(ResponseBody::BrokerRegistration(r))
                if r.error_code == NOT_CONTROLLER && now() < deadline =>
            {
                tokio::time::sleep(RETRY).await;
            }
            Ok(other) => return Err(format!("broker {id}: registration refused: {other:?}")),
            Err(e) => return Err(format!("broker {id}: registration: {e}")),
        }
    }
}

impl Fleet {
    /// Registers `count` brokers with the controller on `port`, `parallel` at a time, and
    /// starts their heartbeats every `interval`.
    pub async fn register(
        port: u16,
        cluster_id: &str,
        count: usize,
        parallel: usize,
        interval: Duration,
        timeline: &Timeline,
    ) -> Result<Fleet, String> {
        let fleet = Fleet {
            brokers: Vec::with_capacity(count),
            interval_ms: Arc::new(AtomicU64::new(interval.as_millis() as u64)),
            recording: Arc::new(AtomicBool::new(false)),
            stop: Arc::new(AtomicBool::new(false)),
            spread: Arc::new(OnceLock::new()),
        };
        let mut fleet = fleet;
        let ids: Vec<i32> = (0..count as i32).map(|i| FIRST_BROKER_ID + i).collect();
        for chunk in ids.chunks(parallel.max(1)) {
            let mut tasks = Vec::new();
            for &id in chunk {
                let cluster_id = cluster_id.to_string();
                let directory_id = Uuid::new_v4();
                tasks.push(tokio::spawn(async move {
                    register(port, id, &cluster_id, directory_id)
                        .await
                        .map(|(conn, epoch)| (conn, epoch, directory_id))
                }));
            }
            for (task, &id) in tasks.into_iter().zip(chunk) {
                let (conn, epoch, directory_id) = task.await.map_err(|e| e.to_string())??;
                let broker = Arc::new(FakeBroker {
                    id,
                    epoch,
                    directory_id,
                    alive: AtomicBool::new(true),
                    want_shut_down: AtomicBool::new(false),
                    stats: Mutex::new(BrokerStats::default()),
                });
                fleet.spawn_heartbeats(broker.clone(), conn, port, timeline.clone());
                fleet.brokers.push(broker);
            }
        }
        Ok(fleet)
    }

    fn spawn_heartbeats(&self, b: Arc<FakeBroker>, conn: Conn, port: u16, timeline: Timeline) {
        let interval_ms = self.interval_ms.clone();
        let recording = self.recording.clone();
        let stop = self.stop.clone();
        let spread = self.spread.clone();
        let index = (b.id - FIRST_BROKER_ID) as u32;
        tokio::spawn(async move {
            let mut conn = Some(conn);
            while !stop.load(Ordering::Relaxed) {
                let started = now();
                let shutting = b.want_shut_down.load(Ordering::Relaxed);
                let mut failed = false;
                if b.alive.load(Ordering::Relaxed) {
                    if conn.is_none() {
                        let to = timeline.leader_port().unwrap_or(port);
                        conn = Conn::connect(to, &format!("fake-broker-{}", b.id), CALL_TIMEOUT)
                            .await
                            .ok();
                    }
                    match conn.as_mut() {
                        Some(c) => {
                            let record = recording.load(Ordering::Relaxed);
                            if !b.heartbeat(c, &timeline, shutting, record).await {
                                conn = None;
                                failed = true;
                            }
                        }
                        None => failed = true,
                    }
                }
                let interval = Duration::from_millis(interval_ms.load(Ordering::Relaxed));
                let wait = if failed {
                    RETRY
                } else if shutting {
                    SHUTDOWN_HEARTBEAT
                } else {
                    interval
                };
                match spread.get() {
                    Some(&(start, n)) if !failed && !shutting => {
                        tokio::time::sleep_until(next_slot(start, n, index, interval).into()).await
                    }
                    _ => {
                        tokio::time::sleep(wait.saturating_sub(now().duration_since(started))).await
                    }
                }
            }
        });
    }

    /// Waits up to `timeout` for every running broker to be told it is unfenced.
    pub async fn wait_unfenced(&self, timeout: Duration) -> Result<(), String> {
        let deadline = now() + timeout;
        loop {
            let fenced: Vec<i32> = self
                .brokers
                .iter()
                .filter(|b| b.alive.load(Ordering::Relaxed) && !b.stats().unfenced)
                .map(|b| b.id)
                .collect();
            if fenced.is_empty() {
                return Ok(());
            }
            if now() > deadline {
                let why = self
                    .brokers
                    .iter()
                    .find_map(|b| b.stats().last_error)
                    .unwrap_or_default();
                return Err(format!(
                    "{} brokers still fenced after {timeout:?} (first {}); last error: {why}",
                    fenced.len(),
                    fenced[0]
                ));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The broker with id `id`.
    pub fn broker(&self, id: i32) -> Option<&Arc<FakeBroker>> {
        self.brokers.get((id - FIRST_BROKER_ID) as usize)
    }

    /// Sets every broker's heartbeat interval.
    pub fn set_interval(&self, interval: Duration) {
        self.interval_ms
            .store(interval.as_millis() as u64, Ordering::Relaxed);
    }

    /// From the next interval on, the brokers send evenly spread over it, each in its own
    /// slot (the registration order otherwise decides how heartbeats bunch, and with it how
    /// much the controller can batch: runs of one variant differed by up to 40 % in CPU).
    pub fn spread_evenly(&self) {
        let interval = Duration::from_millis(self.interval_ms.load(Ordering::Relaxed));
        let _ = self
            .spread
            .set((now() + interval, self.brokers.len().max(1)));
    }

    /// Starts (or stops) keeping heartbeat latencies; starting clears what was kept.
    pub fn record_latencies(&self, on: bool) {
        if on {
            for b in &self.brokers {
                if let Ok(mut s) = b.stats.lock() {
                    s.latencies_us.clear();
                }
            }
        }
        self.recording.store(on, Ordering::Relaxed);
    }

    /// Every kept latency, in microseconds.
    pub fn latencies_us(&self) -> Vec<u32> {
        self.brokers
            .iter()
            .flat_map(|b| b.stats().latencies_us)
            .collect()
    }

    /// Replies that fenced a broker again after it had been unfenced, over the fleet.
    pub fn fenced_again(&self) -> u32 {
        self.brokers.iter().map(|b| b.stats().fenced_again).sum()
    }
}

/// Broker `index` of `n`'s next send time after now: its slot start + index · interval / n,
/// repeated every interval.
fn next_slot(start: Instant, n: usize, index: u32, interval: Duration) -> Instant {
    let slot = start + interval.mul_f64(f64::from(index) / n as f64);
    let at = now();
    if at < slot {
        return slot;
    }
    let periods = (at - slot).as_nanos() / interval.as_nanos().max(1) + 1;
    slot + interval * periods as u32
}

impl FakeBroker {
    /// A copy of its stats.
    pub fn stats(&self) -> BrokerStats {
        self.stats.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// Stops its heartbeats (it dies).
    pub fn stop(&self) {
        self.alive.store(false, Ordering::Relaxed);
    }

    /// Asks for a controlled shutdown from its next heartbeat on.
    pub fn begin_shutdown(&self) {
        self.want_shut_down.store(true, Ordering::Relaxed);
    }

    /// One heartbeat; false when the connection should be made again (to the leader).
    async fn heartbeat(&self, c: &mut Conn, t: &Timeline, shutting: bool, record: bool) -> bool {
        let request = BrokerHeartbeatRequest::default()
            .with_broker_id(BrokerId(self.id))
            .with_broker_epoch(self.epoch)
            // The last committed offset: what a caught-up broker has applied.
            .with_current_metadata_offset((t.high_watermark() - 1).max(0))
            .with_want_fence(false)
            .with_want_shut_down(shutting);
        let sent = now();
        let reply = c
            .call(RequestBody::BrokerHeartbeat(request), 1, CALL_TIMEOUT)
            .await;
        let at = now();
        let Ok(mut s) = self.stats.lock() else {
            return true;
        };
        match reply {
            Ok(ResponseBody::BrokerHeartbeat(r)) if r.error_code == 0 => {
                s.last_reply = Some(at);
                s.last_answered_sent = Some(sent);
                if record {
                    let us = at.duration_since(sent).as_micros();
                    s.latencies_us.push(us.min(u128::from(u32::MAX)) as u32);
                }
                if r.is_fenced && s.unfenced && !shutting {
                    s.fenced_again += 1;
                }
                s.unfenced |= !r.is_fenced;
                if shutting && r.should_shut_down && s.should_shut_down_at.is_none() {
                    s.should_shut_down_at = Some(at);
                    // A broker told to shut down stops.
                    self.alive.store(false, Ordering::Relaxed);
                }
                true
            }
            Ok(other) => {
                s.errors += 1;
                s.last_error = Some(format!("{other:?}"));
                // Not the active controller (any more): find the one that is.
                !matches!(other, ResponseBody::BrokerHeartbeat(r) if r.error_code == NOT_CONTROLLER)
            }
            Err(e) => {
                s.errors += 1;
                s.last_error = Some(e.to_string());
                false
            }
        }
    }
}
