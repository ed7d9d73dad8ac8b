//! Auto-join under faults: a kraft.version 1 quorum of one voter (as `format --standalone`
//! makes it) and three observers with `controller.quorum.auto.join.enable`, the workload
//! running, nodes killed and restarted; every observer becomes a voter by its own
//! AddRaftVoter, one change at a time, with Kafka's invariants and overlapping voter sets
//! checked after every event.

use super::cluster::Cluster;
use super::invariants::{install_defaults, OverlappingVoterSets};
use super::{finish, rng_for, run_seeds, Outcome, Stats};

const NAME: &str = "auto_join::observers_become_voters_under_faults";
const WITHIN_MS: u64 = 300_000;
/// Kill-and-restart rounds while the observers join.
const FAULTS: u64 = 4;

/// The voter ids the node with the highest epoch leading reports.
fn leader_voters(c: &Cluster) -> Vec<i32> {
    c.leader_with_max_epoch()
        .and_then(|(id, _, _)| c.nodes[&id].core())
        .map(|core| core.voters().ids().collect())
        .unwrap_or_default()
}

fn observers_become_voters_under_faults_run(seed: u64, trace: bool) -> Outcome {
    let mut c = Cluster::new(rng_for(NAME, seed), 1, 3, trace);
    c.dynamic = true;
    c.auto_join = true;
    install_defaults(&mut c);
    c.add_invariant(Box::new(OverlappingVoterSets::default()));
    let r = (|| {
        c.start_all()?;
        c.start_appending();
        c.run_until(
            WITHIN_MS,
            "a consistent leader",
            Cluster::has_consistent_leader,
        )?;
        for _ in 0..FAULTS {
            let ids = c.node_ids();
            let id = ids[c.rng.below(ids.len() as u64) as usize];
            c.kill(id);
            let down_for = c.rng.below(5_000);
            c.run_for(down_for)?;
            c.start(id)?;
            let up_for = c.rng.below(5_000);
            c.run_for(up_for)?;
        }
        let all = c.node_ids();
        c.run_until(WITHIN_MS, "every node a voter", |c| {
            let mut voters = leader_voters(c);
            voters.sort_unstable();
            voters == all
        })?;
        c.note_pub(format!("voters {:?}", leader_voters(&c)));
        let target = c.max_log_end_offset() + 10;
        c.run_until(WITHIN_MS, "progress with every node voting", |c| {
            c.any_reached_hw(target)
        })
    })();
    finish(&c, r, Stats::default())
}

#[test]
fn observers_become_voters_under_faults() {
    run_seeds(NAME, 10, observers_become_voters_under_faults_run);
}
