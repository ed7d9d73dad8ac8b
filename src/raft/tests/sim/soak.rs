//! Random-fault soak: a fault phase of crashes (also part-way through a drain), graceful
//! shutdowns, restarts, partitions (symmetric, one-way, requests-only, splits), drops,
//! duplicates and slow messages; then everything heals and liveness is required: a leader
//! with a known high watermark, and the high watermark past every log end at the heal,
//! within `LIVENESS_BOUND_MS`, in every seed.

use super::cluster::{
    Cluster, ELECTION_TIMEOUT_MS, FETCH_TIMEOUT_MS, REQUEST_TIMEOUT_MS, SHUTDOWN_TIMEOUT_MS,
};
use super::invariants::install_defaults;
use super::network::{LinkFilter, NetConfig};
use super::{finish, rng_for, run_seeds, Outcome, Stats};
use crate::raft::{LogReader, Role};

/// After the heal: in-flight requests expire (request timeout), followers of a dead leader
/// notice (fetch timeout), then elections of at most 2 × election timeout each; we allow ten
/// rounds. 3 s + 3 s + 10 × 2 s = 26 s.
pub const LIVENESS_BOUND_MS: u64 =
    REQUEST_TIMEOUT_MS + FETCH_TIMEOUT_MS + 10 * 2 * ELECTION_TIMEOUT_MS;
/// Runs when `SIM_SEEDS` is unset.
pub const DEFAULT_SEEDS: u64 = 200;

fn random_net(c: &mut Cluster) -> NetConfig {
    let max_delay = 1 + c.rng.below(60);
    NetConfig {
        min_delay_ms: 1,
        max_delay_ms: max_delay,
        slow_ppm: c.rng.below(50_000),
        slow_max_delay_ms: 100 + c.rng.below(4_000),
        drop_ppm: c.rng.below(100_000),
        duplicate_ppm: c.rng.below(50_000),
        refused_ppm: c.rng.below(1_000_001),
    }
}

fn pick(c: &mut Cluster, ids: &[i32]) -> Option<i32> {
    (!ids.is_empty()).then(|| ids[c.rng.below(ids.len() as u64) as usize])
}

fn inject_fault(c: &mut Cluster) -> Result<(), String> {
    let ids = c.node_ids();
    let running: Vec<i32> = c.running().map(|n| n.id).collect();
    let down: Vec<i32> = ids
        .iter()
        .copied()
        .filter(|id| !c.nodes[id].is_running())
        .collect();
    match c.rng.below(10) {
        0 => {
            if let Some(id) = pick(c, &running) {
                c.kill(id);
            }
        }
        1 => {
            if let Some(id) = pick(c, &running) {
                c.shutdown(id)?;
            }
        }
        2 | 3 => {
            if let Some(id) = pick(c, &down) {
                c.start(id)?;
            }
        }
        4 => {
            if let Some(id) = pick(c, &ids) {
                c.note_pub(format!("isolate {id}"));
                c.net.isolate(id, ids.iter().copied());
            }
        }
        5 => {
            if let (Some(a), Some(b)) = (pick(c, &ids), pick(c, &ids)) {
                let filter = if c.rng.below(2) == 0 {
                    LinkFilter::DropAll
                } else {
                    LinkFilter::DropRequests
                };
                c.note_pub(format!("one-way {filter:?} {a} -> {b}"));
                c.net.set_filter(a, b, Some(filter));
            }
        }
        6 => {
            let mut side: Vec<i32> = Vec::new();
            for id in &ids {
                if c.rng.below(2) == 0 {
                    side.push(*id);
                }
            }
            c.note_pub(format!("split {side:?} from the rest"));
            for a in &ids {
                for b in &ids {
                    if side.contains(a) != side.contains(b) {
                        c.net.set_filter(*a, *b, Some(LinkFilter::DropAll));
                    }
                }
            }
        }
        7 => {
            c.note_pub("heal partitions".into());
            c.net.heal_all();
        }
        8 => {
            c.net.cfg = random_net(c);
            c.note_pub(format!("network now {:?}", c.net.cfg));
        }
        _ => {
            if let Some(id) = pick(c, &ids) {
                c.note_pub(format!("reconnect {id}"));
                c.net.reconnect(id);
            }
        }
    }
    Ok(())
}

/// Heals everything: benign network, no partitions, every node running.
fn heal(c: &mut Cluster) -> Result<(), String> {
    c.note_pub("=== heal".into());
    c.net.cfg = NetConfig::benign();
    c.net.heal_all();
    c.crash_mid_drain_ppm = 0;
    // Let graceful shutdowns finish (they are bounded by their timeout), then start all.
    c.run_for(SHUTDOWN_TIMEOUT_MS + 1)?;
    c.start_all()
}

fn soak_run(seed: u64, trace: bool) -> Outcome {
    let mut rng = rng_for("soak", seed);
    let voters = 1 + rng.below(5) as usize;
    let observers = rng.below(4) as usize;
    let mut c = Cluster::new(rng, voters, observers, trace);
    c.note_pub(format!("{voters} voters, {observers} observers"));
    install_defaults(&mut c);
    let mut extra = Stats::default();
    let r = (|| {
        c.append_period_ms = 5 + c.rng.below(20);
        c.crash_mid_drain_ppm = c.rng.below(3_000);
        c.net.cfg = random_net(&mut c);
        c.start_all()?;
        c.start_appending();
        let fault_phase = 3_000 + c.rng.below(15_000);
        let end = c.now + fault_phase;
        while c.now < end {
            let gap = 100 + c.rng.below(1_500);
            c.run_for(gap)?;
            inject_fault(&mut c)?;
        }
        heal(&mut c)?;
        let healed_at = c.now;
        let target = c
            .nodes
            .values()
            .map(|n| n.disk.log.end_offset().offset)
            .max()
            .unwrap_or(0);
        let mut leader_at = None;
        c.run_until(
            LIVENESS_BOUND_MS,
            "a leader commits past every pre-heal log end",
            |c| {
                let max_epoch = c
                    .running()
                    .filter_map(|n| n.core())
                    .map(|k| k.epoch())
                    .max();
                let leader = c.running().find_map(|n| {
                    let core = n.core()?;
                    (matches!(core.role(), Role::Leader(_))
                        && Some(core.epoch()) == max_epoch
                        && core.high_watermark().is_some())
                    .then(|| core.high_watermark().unwrap_or(0))
                });
                if leader.is_some() && leader_at.is_none() {
                    leader_at = Some(c.now);
                }
                leader.is_some_and(|hw| hw > target)
            },
        )?;
        extra.time_to_leader_ms = leader_at.map(|t| t - healed_at);
        extra.time_to_progress_ms = Some(c.now - healed_at);
        let hw = c.max_hw_reached(None);
        c.run_until(LIVENESS_BOUND_MS, "every node catches up", |c| {
            c.all_reached_hw(hw)
        })
    })();
    finish(&c, r, extra)
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

#[test]
fn random_fault_soak() {
    let stats = run_seeds("soak::random_fault_soak", DEFAULT_SEEDS, soak_run);
    for (what, mut v) in [
        (
            "time to leader",
            stats
                .iter()
                .filter_map(|s| s.time_to_leader_ms)
                .collect::<Vec<_>>(),
        ),
        (
            "time to progress",
            stats
                .iter()
                .filter_map(|s| s.time_to_progress_ms)
                .collect::<Vec<_>>(),
        ),
    ] {
        v.sort_unstable();
        eprintln!(
            "sim soak {what} after heal (virtual ms, {} runs, bound {LIVENESS_BOUND_MS}): min {} median {} p99 {} max {}",
            v.len(),
            percentile(&v, 0.0),
            percentile(&v, 0.5),
            percentile(&v, 0.99),
            percentile(&v, 1.0)
        );
    }
}
