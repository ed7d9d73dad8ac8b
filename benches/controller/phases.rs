//! The measurements at one size, and what they share. Each runs against one active
//! controller (a single-voter quorum of one implementation) with the fake-broker [`Fleet`]
//! and the high-watermark [`Timeline`], and reads its figure from the committed log
//! ([`records_from`] + [`Timeline::commit_time`]). Measurement 4 (three voters) is in
//! failover.rs, 5 in cold_start.rs, 6 in heartbeats.rs, 7 in propagation.rs.
//!
//! ```text
//!   sizes:      start ─▶ register brokers ─▶ 1 CreateTopics ─▶ 2 a broker dies ─▶
//!               3 controlled shutdown ─▶ 7 propagation to observers ─▶ 5 cold starts ─▶
//!               RSS, spurious fencings ─▶ stop
//!   failover:   3 voters ─▶ register brokers ─▶ CreateTopics (the image) ─▶ 4 SIGKILL leader
//!   heartbeats: start ─▶ register N brokers ─▶ heartbeat for S seconds ─▶ p50/p99, CPU
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ferrokraft::codec::messages::{RequestBody, ResponseBody};
use ferrokraft::metadata::records::MetadataRecord;
use kafka_protocol::messages::create_topics_request::CreatableTopic;
use kafka_protocol::messages::{CreateTopicsRequest, TopicName};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::cold_start::{cold_starts, ColdStartResult};
use super::committed::{records_from, Timeline};
use super::fleet::{Fleet, FIRST_BROKER_ID};
use super::probe::describe_once;
use super::procs::{cpu_seconds, rss_kib, Env, Kind, Quorum, Setup, Timers};
use super::propagation::{propagation, PropagationResult};
use super::wire::Conn;
use super::{now, Params};

/// Kafka's broker.session.timeout.ms default, which both controllers run with.
pub const SESSION_TIMEOUT: Duration = Duration::from_millis(9000);
/// Kafka's broker.heartbeat.interval.ms default.
pub const HEARTBEAT_INTERVAL: Duration = Duration::from_millis(2000);
/// The heartbeat interval while a controlled shutdown waits for every active broker to
/// report the offset that moved the leaderships (see [`shutdown`]).
const SHUTDOWN_PHASE_INTERVAL: Duration = Duration::from_millis(50);

/// One running controller (restartable: the cold-start measurement kills and starts it).
pub struct Controller {
    quorum: Mutex<Quorum>,
    port: u16,
    dir: PathBuf,
    /// Its cluster id.
    pub cluster_id: String,
    /// Which implementation it is.
    pub kind: Kind,
}

impl Controller {
    /// Formats and starts a single-voter controller of `kind` under `dir/name` and waits for
    /// it to lead.
    pub fn start(
        env: &Env,
        dir: &Path,
        name: &str,
        kind: Kind,
        kafka_heap: &str,
    ) -> Result<Controller, String> {
        Self::start_with(env, dir, name, kind, kafka_heap, &[])
    }

    /// [`Controller::start`] with `props` added to its properties.
    pub fn start_with(
        env: &Env,
        dir: &Path,
        name: &str,
        kind: Kind,
        kafka_heap: &str,
        props: &[(&str, String)],
    ) -> Result<Controller, String> {
        let setup = Setup {
            voters: 1,
            timers: Timers::DEFAULT,
            linger_ms: None,
            workload: None,
        };
        let mut quorum = Quorum::create(env, dir, name, kind, &setup)?;
        quorum.kafka_heap = Some(kafka_heap.to_string());
        for (key, value) in props {
            quorum.set_prop(0, key, value)?;
        }
        quorum.start_all()?;
        let deadline = now() + Duration::from_secs(60);
        while describe_once(quorum.nodes[0].port, Duration::from_millis(500)).is_none() {
            if now() > deadline || !quorum.running(0) {
                return Err(format!(
                    "{} did not lead within 60 s:\n{}",
                    kind.label(),
                    tail(&quorum.log_text(0))
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(Controller {
            port: quorum.nodes[0].port,
            dir: quorum.nodes[0].dir.clone(),
            cluster_id: quorum.cluster_id.clone(),
            kind,
            quorum: Mutex::new(quorum),
        })
    }

    fn with<T>(&self, f: impl FnOnce(&mut Quorum) -> T) -> Result<T, String> {
        let mut q = self
            .quorum
            .lock()
            .map_err(|_| "the quorum lock is poisoned")?;
        Ok(f(&mut q))
    }

    /// Its listener port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its data directory (holding `__cluster_metadata-0`).
    pub fn data_dir(&self) -> &Path {
        &self.dir
    }

    /// Its resident set, in KiB.
    pub fn rss_kib(&self) -> u64 {
        self.with(|q| q.pid(0).and_then(rss_kib).map_or(0, |(rss, _)| rss))
            .unwrap_or(0)
    }

    /// Its process id, while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.with(|q| q.pid(0)).ok().flatten()
    }

    /// The CPU seconds it has used.
    pub fn cpu_seconds(&self) -> f64 {
        self.with(|q| q.pid(0).and_then(cpu_seconds).unwrap_or(0.0))
            .unwrap_or(0.0)
    }

    /// SIGKILLs it, sets `key` for its next start, and starts it again; the time of the exec.
    pub fn restart_with(&self, key: &str, value: &str) -> Result<Instant, String> {
        self.with(|q| {
            q.kill(0);
            q.set_prop(0, key, value)?;
            let at = now();
            q.start(0)?;
            Ok(at)
        })?
    }

    /// Its log, the last lines (for errors).
    pub fn log_tail(&self) -> String {
        self.with(|q| tail(&q.log_text(0))).unwrap_or_default()
    }
}

/// The last 20 lines of `text`.
pub fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(20)..].join("\n")
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// Signed milliseconds from `from` to `to`.
pub fn ms_between(from: Instant, to: Instant) -> f64 {
    if to >= from {
        to.duration_since(from).as_secs_f64() * 1e3
    } else {
        -(from.duration_since(to).as_secs_f64() * 1e3)
    }
}

/// Measurement 1.
#[derive(Debug, Clone, Default)]
pub struct CreateResult {
    /// Partitions created.
    pub partitions: usize,
    /// From the first CreateTopics sent to the commit of the last PartitionRecord.
    pub seconds: f64,
    /// Offset of that record.
    pub last_offset: i64,
}

impl CreateResult {
    /// Committed partitions per second.
    pub fn rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.partitions as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// Measurement 2.
#[derive(Debug, Clone, Default)]
pub struct FenceResult {
    /// Partitions the dead broker led.
    pub leaders_moved: usize,
    /// PartitionChangeRecords written for it.
    pub changes: usize,
    /// From its session's expiry (the last answered heartbeat's send time + session timeout)
    /// to the commit of the fencing record.
    pub fence_ms: f64,
    /// From its session's expiry to the commit of the last PartitionChangeRecord.
    pub moved_ms: f64,
}

/// Measurement 3.
#[derive(Debug, Clone, Default)]
pub struct ShutdownResult {
    /// Partitions the broker led when it asked.
    pub led: usize,
    /// PartitionChangeRecords written for it.
    pub changes: usize,
    /// From the request to the commit of the last PartitionChangeRecord.
    pub moved_ms: f64,
    /// From the request to the heartbeat reply with shouldShutDown.
    pub should_shut_down_ms: f64,
}

/// Everything measured at one size for one implementation.
#[derive(Debug, Clone)]
pub struct SizeRun {
    pub kind: Kind,
    pub partitions: usize,
    pub brokers: usize,
    pub create: CreateResult,
    pub fence: FenceResult,
    pub shutdown: ShutdownResult,
    pub cold_start: ColdStartResult,
    pub propagation: PropagationResult,
    /// RSS (KiB) idle after start, after the topics, at the end.
    pub rss_idle_kib: u64,
    pub rss_created_kib: u64,
    pub rss_end_kib: u64,
    /// Brokers fenced that were neither stopped nor shut down (must be 0).
    pub spurious_fencings: usize,
    pub kafka_heap: String,
}

/// The fake brokers for `partitions` partitions: 3 for 10k, 30 for 100k, 300 for 1M.
pub fn brokers_for(partitions: usize) -> usize {
    (partitions / 3333).clamp(3, 300)
}

/// Runs measurements 1–3 at `partitions` on a fresh controller of `kind`.
pub fn size_run(
    rt: &tokio::runtime::Runtime,
    env: &Env,
    dir: &Path,
    kind: Kind,
    partitions: usize,
    p: &Params,
) -> Result<SizeRun, String> {
    let name = format!("{}-{partitions}", short(kind));
    against(rt, env, dir, &name, kind, p, async |ctrl, timeline| {
        size_phases(ctrl, timeline, kind, partitions, p).await
    })
    .map_err(|e| format!("{} at {partitions}: {e}", kind.label()))
}

/// Starts a controller of `kind` as `name`, runs `steps` against it with a high-watermark
/// [`Timeline`], and stops both; an error carries the end of the controller's log.
pub fn against<T>(
    rt: &tokio::runtime::Runtime,
    env: &Env,
    dir: &Path,
    name: &str,
    kind: Kind,
    p: &Params,
    steps: impl AsyncFnOnce(&Controller, &Timeline) -> Result<T, String>,
) -> Result<T, String> {
    against_with(rt, env, dir, name, kind, p, &[], steps)
}

/// [`against`] a controller with `props` added to its properties.
#[allow(clippy::too_many_arguments)] // against's arguments and the properties
pub fn against_with<T>(
    rt: &tokio::runtime::Runtime,
    env: &Env,
    dir: &Path,
    name: &str,
    kind: Kind,
    p: &Params,
    props: &[(&str, String)],
    steps: impl AsyncFnOnce(&Controller, &Timeline) -> Result<T, String>,
) -> Result<T, String> {
    let mut props = props.to_vec();
    if let Some(linger) = p.linger_ms {
        props.push(("controller.quorum.append.linger.ms", linger.to_string()));
    }
    let ctrl = Controller::start_with(env, dir, name, kind, &p.kafka_heap, &props)?;
    rt.block_on(async {
        let timeline = Timeline::start(ctrl.port());
        let out = steps(&ctrl, &timeline).await;
        timeline.stop();
        out
    })
    .map_err(|e| format!("{e}\n{}", ctrl.log_tail()))
}

/// `count` fake brokers registered with `ctrl`, heartbeating at Kafka's default interval.
pub async fn fleet_of(
    ctrl: &Controller,
    timeline: &Timeline,
    count: usize,
) -> Result<Fleet, String> {
    Fleet::register(
        ctrl.port(),
        &ctrl.cluster_id,
        count,
        64,
        HEARTBEAT_INTERVAL,
        timeline,
    )
    .await
}

pub fn short(kind: Kind) -> &'static str {
    match kind {
        Kind::Ferrokraft => "fk",
        _ => "kafka",
    }
}

async fn size_phases(
    ctrl: &Controller,
    timeline: &Timeline,
    kind: Kind,
    partitions: usize,
    p: &Params,
) -> Result<SizeRun, String> {
    let brokers = brokers_for(partitions);
    let fleet = fleet_of(ctrl, timeline, brokers).await?;
    fleet.wait_unfenced(Duration::from_secs(60)).await?;
    let rss_idle_kib = ctrl.rss_kib();
    let create = create_topics(ctrl.port(), ctrl.data_dir(), timeline, partitions, p).await?;
    let rss_created_kib = ctrl.rss_kib();
    let dead = FIRST_BROKER_ID;
    let fence = broker_dies(ctrl, timeline, &fleet, dead).await?;
    let leaving = FIRST_BROKER_ID + 1;
    let shutdown = shutdown(ctrl, timeline, &fleet, leaving).await?;
    let rss_end_kib = ctrl.rss_kib();
    let propagation = propagation(ctrl.port(), &ctrl.cluster_id, timeline, &fleet, p).await?;
    let cold_start = cold_starts(ctrl, timeline).await?;
    let spurious_fencings = records_from(ctrl.data_dir(), 0)?
        .iter()
        .filter(|(_, r)| {
            matches!(r, MetadataRecord::BrokerRegistrationChange(c)
                if c.fenced == 1 && c.broker_id != dead && c.broker_id != leaving)
        })
        .count()
        + fleet.fenced_again() as usize;
    Ok(SizeRun {
        kind,
        partitions,
        brokers,
        create,
        fence,
        shutdown,
        cold_start,
        propagation,
        rss_idle_kib,
        rss_created_kib,
        rss_end_kib,
        spurious_fencings,
        kafka_heap: p.kafka_heap.clone(),
    })
}

/// Measurement 1: `partitions` partitions in topics of `p.partitions_per_topic`, RF 3,
/// `p.topics_per_request` topics a request, `p.in_flight` requests in flight.
pub async fn create_topics(
    port: u16,
    data_dir: &Path,
    timeline: &Timeline,
    partitions: usize,
    p: &Params,
) -> Result<CreateResult, String> {
    let per_topic = p.partitions_per_topic.max(1);
    let topics = partitions.div_ceil(per_topic as usize);
    let names: Vec<String> = (0..topics).map(|i| format!("bench-{i}")).collect();
    let chunks: Vec<Vec<String>> = names
        .chunks(p.topics_per_request.max(1))
        .map(|c| c.to_vec())
        .collect();
    let queue = Arc::new(Mutex::new(chunks.into_iter()));
    let from = timeline.high_watermark().max(0);
    let started = now();
    let mut workers = Vec::new();
    for w in 0..p.in_flight.max(1) {
        let queue = queue.clone();
        workers.push(tokio::spawn(async move {
            let mut conn = Conn::connect(port, &format!("bench-admin-{w}"), Duration::from_secs(5))
                .await
                .map_err(|e| format!("connect: {e}"))?;
            loop {
                let Some(chunk) = queue.lock().ok().and_then(|mut q| q.next()) else {
                    return Ok::<(), String>(());
                };
                let request = CreateTopicsRequest::default()
                    .with_timeout_ms(120_000)
                    .with_topics(
                        chunk
                            .iter()
                            .map(|n| {
                                CreatableTopic::default()
                                    .with_name(TopicName(StrBytes::from_string(n.clone())))
                                    .with_num_partitions(per_topic)
                                    .with_replication_factor(3)
                            })
                            .collect(),
                    );
                let reply = conn
                    .call(
                        RequestBody::CreateTopics(request),
                        7,
                        Duration::from_secs(180),
                    )
                    .await
                    .map_err(|e| format!("CreateTopics: {e}"))?;
                let ResponseBody::CreateTopics(r) = reply else {
                    return Err(format!("not a CreateTopics answer: {reply:?}"));
                };
                if let Some(bad) = r.topics.iter().find(|t| t.error_code != 0) {
                    return Err(format!(
                        "CreateTopics {}: error {} {:?}",
                        bad.name.0, bad.error_code, bad.error_message
                    ));
                }
            }
        }));
    }
    for w in workers {
        w.await.map_err(|e| e.to_string())??;
    }
    let records = records_from(data_dir, from)?;
    let created: Vec<i64> = records
        .iter()
        .filter(|(_, r)| matches!(r, MetadataRecord::Partition(_)))
        .map(|(o, _)| *o)
        .collect();
    let Some(&last_offset) = created.last() else {
        return Err("no PartitionRecord in the log".into());
    };
    if created.len() != topics * per_topic as usize {
        return Err(format!(
            "{} PartitionRecords in the log, {} asked for",
            created.len(),
            topics * per_topic as usize
        ));
    }
    let committed = timeline
        .wait_commit(last_offset, Duration::from_secs(60))
        .await?;
    Ok(CreateResult {
        partitions: created.len(),
        seconds: secs(committed.duration_since(started)),
        last_offset,
    })
}

/// A partition: (topic id, index).
type PartitionKey = (Uuid, i32);

/// Each partition's (leader, ISR), from the whole log.
fn partition_states(dir: &Path) -> Result<BTreeMap<PartitionKey, (i32, Vec<i32>)>, String> {
    let mut out: BTreeMap<PartitionKey, (i32, Vec<i32>)> = BTreeMap::new();
    for (_, r) in records_from(dir, 0)? {
        match r {
            MetadataRecord::Partition(p) => {
                out.insert((p.topic_id, p.partition_id), (p.leader, p.isr));
            }
            MetadataRecord::PartitionChange(c) => {
                if let Some(state) = out.get_mut(&(c.topic_id, c.partition_id)) {
                    if c.leader != -2 {
                        state.0 = c.leader;
                    }
                    if let Some(isr) = c.isr {
                        state.1 = isr;
                    }
                }
            }
            _ => {}
        }
    }
    Ok(out)
}

/// Measurement 2: broker `id` stops heartbeating. The controller fences it once its session
/// expires and writes a PartitionChangeRecord for every partition whose ISR holds it (moving
/// the leaderships it had); the figure runs from the expiry to the commit of the last one.
/// Both controllers write a NoOpRecord every 500 ms, so "the log went quiet" cannot mark the
/// end: the log is read again, further and further apart, until every such partition has
/// its change.
async fn broker_dies(
    ctrl: &Controller,
    timeline: &Timeline,
    fleet: &Fleet,
    id: i32,
) -> Result<FenceResult, String> {
    let states = partition_states(ctrl.data_dir())?;
    let led = states.values().filter(|(l, _)| *l == id).count();
    let in_isr: BTreeSet<PartitionKey> = states
        .iter()
        .filter(|(_, (_, isr))| isr.contains(&id))
        .map(|(k, _)| *k)
        .collect();
    let broker = fleet.broker(id).ok_or_else(|| format!("no broker {id}"))?;
    let from = timeline.high_watermark().max(0);
    broker.stop();
    // A heartbeat already in flight may still be answered.
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The session runs from when the controller saw the last heartbeat: after it was sent
    // and before its reply came. The send time is taken, so a controller cannot look faster
    // than it is by the reply's way back.
    let last_seen = broker
        .stats()
        .last_answered_sent
        .ok_or_else(|| format!("broker {id} never had a reply"))?;
    let expiry = last_seen + SESSION_TIMEOUT;
    let mut wait = Duration::from_secs(1);
    let deadline = expiry + Duration::from_secs(900);
    let (fenced, last) = loop {
        tokio::time::sleep(
            (now() + wait)
                .max(expiry + wait)
                .saturating_duration_since(now()),
        )
        .await;
        let records = records_from(ctrl.data_dir(), from)?;
        let fenced = records.iter().find_map(|(o, r)| match r {
            MetadataRecord::BrokerRegistrationChange(c) if c.broker_id == id && c.fenced == 1 => {
                Some(*o)
            }
            _ => None,
        });
        let changed: Vec<(i64, PartitionKey)> = records
            .iter()
            .filter_map(|(o, r)| match r {
                MetadataRecord::PartitionChange(c)
                    if in_isr.contains(&(c.topic_id, c.partition_id)) =>
                {
                    Some((*o, (c.topic_id, c.partition_id)))
                }
                _ => None,
            })
            .collect();
        let covered: BTreeSet<PartitionKey> = changed.iter().map(|(_, k)| *k).collect();
        if let Some(fenced) = fenced {
            if covered.len() == in_isr.len() {
                // Kafka writes the fencing record after the changes, in the same batch.
                let last = changed
                    .iter()
                    .map(|(o, _)| *o)
                    .max()
                    .map_or(fenced, |o| o.max(fenced));
                break (fenced, (last, changed.len()));
            }
        }
        if now() > deadline {
            return Err(format!(
                "broker {id}: fenced {fenced:?}, {} of {} partitions changed",
                covered.len(),
                in_isr.len()
            ));
        }
        wait = (wait * 2).min(Duration::from_secs(30));
    };
    let fence_at = timeline
        .wait_commit(fenced, Duration::from_secs(60))
        .await?;
    let moved_at = timeline
        .wait_commit(last.0, Duration::from_secs(60))
        .await?;
    Ok(FenceResult {
        leaders_moved: led,
        changes: last.1,
        fence_ms: ms_between(expiry, fence_at),
        moved_ms: ms_between(expiry, moved_at),
    })
}

/// Measurement 3: broker `id` asks for a controlled shutdown. Its leaderships move at once;
/// shouldShutDown comes once every active broker has reported an offset past the move, so the
/// fleet heartbeats every [`SHUTDOWN_PHASE_INTERVAL`] meanwhile (at the 2 s default, the
/// figure would be the interval's, for either controller).
async fn shutdown(
    ctrl: &Controller,
    timeline: &Timeline,
    fleet: &Fleet,
    id: i32,
) -> Result<ShutdownResult, String> {
    let led = partition_states(ctrl.data_dir())?
        .values()
        .filter(|(l, _)| *l == id)
        .count();
    let broker = fleet.broker(id).ok_or_else(|| format!("no broker {id}"))?;
    fleet.set_interval(SHUTDOWN_PHASE_INTERVAL);
    tokio::time::sleep(HEARTBEAT_INTERVAL).await;
    let from = timeline.high_watermark().max(0);
    let asked = now();
    broker.begin_shutdown();
    let deadline = asked + Duration::from_secs(600);
    let told = loop {
        if let Some(t) = broker.stats().should_shut_down_at {
            break t;
        }
        if now() > deadline {
            return Err(format!("broker {id} was never told to shut down"));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    fleet.set_interval(HEARTBEAT_INTERVAL);
    let records = records_from(ctrl.data_dir(), from)?;
    let changes: Vec<i64> = records
        .iter()
        .filter(|(_, r)| matches!(r, MetadataRecord::PartitionChange(_)))
        .map(|(o, _)| *o)
        .collect();
    let moved_ms = match changes.last() {
        Some(&last) => ms_between(
            asked,
            timeline.wait_commit(last, Duration::from_secs(10)).await?,
        ),
        None => 0.0,
    };
    Ok(ShutdownResult {
        led,
        changes: changes.len(),
        moved_ms,
        should_shut_down_ms: ms_between(asked, told),
    })
}
