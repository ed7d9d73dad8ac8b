//! Measurement 4: active-controller failover with the large image. Three voters of one
//! implementation; the fleet registers with the leader and heartbeats; the size's partitions
//! are created (the image the new leader must hold); once every voter has the image, the
//! leader is SIGKILLed; the killed voter is started again and caught up before the next trial
//! (`Params::failover_trials`; the report gives medians). Figures, all from the SIGKILL:
//!
//! - to the first CreateTopics (1 partition, RF 3 when the fleet has 3 brokers) answered
//!   without error by a surviving voter (each is asked in turn; the others say NOT_CONTROLLER
//!   or are not ready);
//! - to the commit of the new epoch's first record (the new leader's LeaderChange), its offset
//!   read from the new leader's log and its commit from the high-watermark [`Timeline`], which
//!   follows the leader across the voters;
//! - to the last fake broker's first heartbeat answered by the new leader: the fleet follows
//!   the leader the Timeline finds (closed connection or NOT_CONTROLLER ─▶ reconnect).
//!
//! ```text
//!   3 voters ─▶ fleet registers ─▶ CreateTopics (N partitions) ─▶ voters caught up
//!     ─▶ SIGKILL leader ─┬▶ CreateTopics answered by a survivor
//!                        ├▶ new epoch's LeaderChange committed (new leader's log + HW)
//!                        └▶ every broker heartbeating with the new leader
//! ```

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use ferrokraft::metadata::records::MetadataRecord;

use super::cold_start::serving;
use super::committed::{first_offset_after_epoch, records_from, LeaderView, Timeline, POLL};
use super::fleet::Fleet;
use super::now;
use super::phases::{brokers_for, create_topics, ms_between, short, tail, HEARTBEAT_INTERVAL};
use super::procs::{Env, Kind, Quorum, Setup, Timers};
use super::Params;

/// Measurement 4 for one implementation.
#[derive(Debug, Clone)]
pub struct FailoverRun {
    pub kind: Kind,
    /// Partitions in the image.
    pub partitions: usize,
    pub brokers: usize,
    /// Per trial: the killed leader's epoch and the new leader's.
    pub epochs: Vec<(i32, i32)>,
    /// Per trial: from the SIGKILL to a CreateTopics answered without error.
    pub to_create_ms: Vec<f64>,
    /// Per trial: from the SIGKILL to the commit of the new epoch's first record.
    pub to_epoch_committed_ms: Vec<f64>,
    /// Per trial: from the SIGKILL to the last broker's first heartbeat answered by the new
    /// leader.
    pub to_fleet_ms: Vec<f64>,
    /// Brokers fenced after the first SIGKILL (must be 0: the fleet followed).
    pub spurious_fencings: usize,
}

const VOTERS: usize = 3;

/// Measurement 4 at `partitions` on three fresh voters of `kind`.
pub fn failover_run(
    rt: &tokio::runtime::Runtime,
    env: &Env,
    dir: &Path,
    kind: Kind,
    partitions: usize,
    p: &Params,
) -> Result<FailoverRun, String> {
    let name = format!("{}-failover-{partitions}", short(kind));
    let setup = Setup {
        voters: VOTERS,
        timers: Timers::DEFAULT,
        linger_ms: None,
        workload: None,
    };
    let mut q = Quorum::create(env, dir, &name, kind, &setup)?;
    q.kafka_heap = Some(p.kafka_heap.clone());
    q.start_all()?;
    let out = rt.block_on(async {
        let timeline = Timeline::following(q.nodes.iter().map(|n| n.port).collect());
        let out = steps(&mut q, &timeline, kind, partitions, p).await;
        timeline.stop();
        out
    });
    out.map_err(|e| {
        let logs: Vec<String> = (0..q.nodes.len())
            .map(|i| format!("node {}:\n{}", i + 1, tail(&q.log_text(i))))
            .collect();
        format!(
            "{} failover at {partitions}: {e}\n{}",
            kind.label(),
            logs.join("\n---\n")
        )
    })
}

/// Waits up to `timeout` for the leader the timeline follows to satisfy `ok`.
async fn wait_leader(
    timeline: &Timeline,
    timeout: Duration,
    what: &str,
    ok: impl Fn(&LeaderView) -> bool,
) -> Result<LeaderView, String> {
    let deadline = now() + timeout;
    loop {
        if let Some(v) = timeline.leader().filter(|v| ok(v)) {
            return Ok(v);
        }
        if now() > deadline {
            return Err(format!(
                "{what} not within {timeout:?} (leader {:?})",
                timeline.leader()
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}

async fn steps(
    q: &mut Quorum,
    timeline: &Timeline,
    kind: Kind,
    partitions: usize,
    p: &Params,
) -> Result<FailoverRun, String> {
    // A leader whose epoch start committed (its controller can become active).
    let first = wait_leader(timeline, Duration::from_secs(120), "a leader", |v| {
        v.high_watermark > 0
    })
    .await?;
    let port_of = |q: &Quorum, id: i32| -> Result<(u16, usize), String> {
        let i = usize::try_from(id - 1).map_err(|_| format!("leader id {id}"))?;
        q.nodes
            .get(i)
            .map(|n| (n.port, i))
            .ok_or_else(|| format!("leader id {id}"))
    };
    let (port, i) = port_of(q, first.leader_id)?;
    let brokers = brokers_for(partitions);
    let fleet = Fleet::register(
        port,
        &q.cluster_id,
        brokers,
        64,
        HEARTBEAT_INTERVAL,
        timeline,
    )
    .await?;
    fleet.wait_unfenced(Duration::from_secs(60)).await?;
    let create = create_topics(port, &q.nodes[i].dir.clone(), timeline, partitions, p).await?;
    // Every voter holds the image, and the leader has not changed meanwhile.
    let before = wait_leader(
        timeline,
        Duration::from_secs(120),
        "every voter caught up",
        |v| {
            v.leader_id == first.leader_id
                && v.high_watermark > create.last_offset
                && v.min_voter_log_end_offset >= v.high_watermark
        },
    )
    .await?;
    let from = timeline.high_watermark();
    let mut run = FailoverRun {
        kind,
        partitions: create.partitions,
        brokers,
        epochs: Vec::new(),
        to_create_ms: Vec::new(),
        to_epoch_committed_ms: Vec::new(),
        to_fleet_ms: Vec::new(),
        spurious_fencings: 0,
    };
    let mut before = before;
    let mut last_dir = q.nodes[i].dir.clone();
    for trial in 0..p.failover_trials.max(1) {
        if trial > 0 {
            // The killed voter is back and every voter holds the log again.
            before = wait_leader(
                timeline,
                Duration::from_secs(180),
                "every voter caught up again",
                |v| v.min_voter_log_end_offset >= v.high_watermark && v.high_watermark > 0,
            )
            .await?;
        }
        let (_, old) = port_of(q, before.leader_id)?;
        let live: Vec<u16> = q
            .nodes
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != old)
            .map(|(_, n)| n.port)
            .collect();
        let killed = now();
        q.kill(old);
        let rf = brokers.min(3) as i16;
        let served = serving(&live, &format!("failover-{trial}"), rf).await?;
        let new = wait_leader(timeline, Duration::from_secs(60), "a new leader", |v| {
            v.epoch > before.epoch
        })
        .await?;
        let (_, n) = port_of(q, new.leader_id)?;
        last_dir = q.nodes[n].dir.clone();
        let (epoch_start, new_epoch) = first_offset_after_epoch(&last_dir, before.epoch)?
            .ok_or_else(|| {
                format!(
                    "no batch after epoch {} in the new leader's log",
                    before.epoch
                )
            })?;
        let epoch_committed = timeline
            .wait_commit(epoch_start, Duration::from_secs(60))
            .await?;
        let fleet_at = fleet_followed(&fleet, killed, Duration::from_secs(60)).await?;
        run.epochs.push((before.epoch, new_epoch));
        run.to_create_ms.push(ms_between(killed, served));
        run.to_epoch_committed_ms
            .push(ms_between(killed, epoch_committed));
        run.to_fleet_ms.push(ms_between(killed, fleet_at));
        q.start(old)?;
    }
    run.spurious_fencings = records_from(&last_dir, from)?
        .iter()
        .filter(|(_, r)| matches!(r, MetadataRecord::BrokerRegistrationChange(c) if c.fenced == 1))
        .count()
        + fleet.fenced_again() as usize;
    Ok(run)
}

/// When the last broker of `fleet` had its first heartbeat answered after `after`. The
/// brokers' last replies are looked at every [`POLL`], far shorter than the heartbeat
/// interval, so the first reply after `after` a look finds is the first there was.
async fn fleet_followed(
    fleet: &Fleet,
    after: Instant,
    timeout: Duration,
) -> Result<Instant, String> {
    let deadline = now() + timeout;
    let mut first: BTreeMap<i32, Instant> = BTreeMap::new();
    loop {
        for b in &fleet.brokers {
            if let Some(at) = b.stats().last_reply.filter(|t| *t > after) {
                first.entry(b.id).or_insert(at);
            }
        }
        if first.len() == fleet.brokers.len() {
            return first
                .values()
                .max()
                .copied()
                .ok_or_else(|| "an empty fleet".into());
        }
        if now() > deadline {
            let stuck: Vec<String> = fleet
                .brokers
                .iter()
                .filter(|b| !first.contains_key(&b.id))
                .map(|b| format!("{}: {:?}", b.id, b.stats().last_error))
                .collect();
            return Err(format!(
                "brokers not heartbeating with the new leader after {timeout:?}: {stuck:?}"
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}
