//! Kafka's `RaftEventSimulationTest` scenarios, one test each, over `SIM_SEEDS` seeds.
//! Timers are Kafka's simulation timers (election 1 s, fetch 3 s, request 3 s, retry 50 ms);
//! each wait is bounded by `WITHIN_MS` of virtual time.

use super::cluster::Cluster;
use super::invariants::{install_defaults, install_for_data_loss};
use super::{finish, rng_for, run_seeds, Outcome, Stats};

/// Bound on each wait of a scenario (virtual ms).
const WITHIN_MS: u64 = 120_000;
// Runs per scenario when `SIM_SEEDS` is unset: together with the soak's 200 and the voter-change
// scenario's 25, 2 125 seeded runs per `cargo test` (the cheaper scenarios get more seeds).

fn between(c: &mut Cluster, lo: u64, hi: u64) -> usize {
    (lo + c.rng.below(hi - lo + 1)) as usize
}

/// A started cluster with the workload and Kafka's default invariants.
fn cluster(
    name: &str,
    seed: u64,
    trace: bool,
    voters: (u64, u64),
    observers: (u64, u64),
) -> Cluster {
    let mut rng = rng_for(name, seed);
    let v = voters.0 + rng.below(voters.1 - voters.0 + 1);
    let o = observers.0 + rng.below(observers.1 - observers.0 + 1);
    let mut c = Cluster::new(rng, v as usize, o as usize, trace);
    c.note_pub(format!("{v} voters, {o} observers"));
    c
}

fn seeded(c: &mut Cluster) -> Result<(), String> {
    c.start_all()?;
    c.start_appending();
    c.run_until(
        WITHIN_MS,
        "a consistent leader",
        Cluster::has_consistent_leader,
    )?;
    c.run_until(WITHIN_MS, "some high watermark > 10", |c| {
        c.any_reached_hw(10)
    })
}

fn can_elect_initial_leader_run(seed: u64, trace: bool) -> Outcome {
    let mut c = cluster("can_elect_initial_leader", seed, trace, (1, 5), (0, 3));
    install_defaults(&mut c);
    let r = (|| {
        c.start_all()?;
        c.start_appending();
        c.run_until(
            WITHIN_MS,
            "a consistent leader",
            Cluster::has_consistent_leader,
        )?;
        c.run_until(WITHIN_MS, "every high watermark >= 10", |c| {
            c.all_reached_hw(10)
        })
    })();
    finish(&c, r, Stats::default())
}

fn can_elect_new_leader_after_old_leader_failure_run(seed: u64, trace: bool) -> Outcome {
    let mut c = cluster(
        "can_elect_new_leader_after_old_leader_failure",
        seed,
        trace,
        (3, 5),
        (0, 3),
    );
    install_defaults(&mut c);
    let graceful = c.rng.below(2) == 1;
    let r = (|| {
        seeded(&mut c)?;
        let leader = c.latest_leader().ok_or("no leader")?;
        c.note_pub(format!(
            "old leader {leader} goes down (graceful: {graceful})"
        ));
        if graceful {
            c.shutdown(leader)?;
        } else {
            c.kill(leader);
        }
        c.run_until(WITHIN_MS, "every high watermark >= 20", |c| {
            c.all_reached_hw(20)
        })?;
        c.run_until(WITHIN_MS, "the old leader stopped", |c| {
            !c.nodes[&leader].is_running()
        })?;
        let hw = c.max_hw_reached(None);
        c.start(leader)?;
        c.run_until(WITHIN_MS, "every node caught up after the restart", |c| {
            c.all_reached_hw(hw + 10)
        })
    })();
    finish(&c, r, Stats::default())
}

fn can_recover_after_all_nodes_killed_run(seed: u64, trace: bool) -> Outcome {
    let mut c = cluster(
        "can_recover_after_all_nodes_killed",
        seed,
        trace,
        (1, 5),
        (0, 3),
    );
    install_defaults(&mut c);
    let r = (|| {
        seeded(&mut c)?;
        let hw = c.max_hw_reached(None);
        c.kill_all();
        let majority: Vec<i32> = c.node_ids().into_iter().take(c.majority()).collect();
        for id in majority {
            c.start(id)?;
        }
        c.run_until(WITHIN_MS, "the restarted majority makes progress", |c| {
            c.all_reached_hw(hw + 10)
        })
    })();
    finish(&c, r, Stats::default())
}

fn can_elect_new_leader_after_old_leader_partitioned_away_run(seed: u64, trace: bool) -> Outcome {
    let name = "can_elect_new_leader_after_old_leader_partitioned_away";
    let mut c = cluster(name, seed, trace, (3, 5), (0, 3));
    install_defaults(&mut c);
    let r = (|| {
        seeded(&mut c)?;
        let leader = c.latest_leader().ok_or("no leader")?;
        let ids = c.node_ids();
        c.note_pub(format!("partition leader {leader} away"));
        c.net.isolate(leader, ids.iter().copied());
        let others: Vec<i32> = ids.into_iter().filter(|id| *id != leader).collect();
        c.run_until(WITHIN_MS, "the others reach high watermark 20", |c| {
            c.all_of_reached_hw(20, &others)
        })
    })();
    finish(&c, r, Stats::default())
}

fn can_make_progress_if_majority_is_reachable_run(seed: u64, trace: bool) -> Outcome {
    let mut c = cluster(
        "can_make_progress_if_majority_is_reachable",
        seed,
        trace,
        (5, 5),
        (0, 3),
    );
    install_defaults(&mut c);
    let r = (|| {
        seeded(&mut c)?;
        let (minority, majority) = ([0, 1], [2, 3, 4]);
        for a in minority {
            for b in majority {
                c.net
                    .set_filter(a, b, Some(super::network::LinkFilter::DropRequests));
                c.net
                    .set_filter(b, a, Some(super::network::LinkFilter::DropRequests));
            }
        }
        c.note_pub("split voters {0,1} | {2,3,4} (requests dropped)".into());
        let partition_end = c.max_log_end_offset();
        c.run_until(WITHIN_MS, "high watermark doubles", |c| {
            c.any_reached_hw(2 * partition_end)
        })?;
        let minority_hw = c.max_hw_reached(Some(&minority));
        let majority_hw = c.max_hw_reached(Some(&majority));
        if majority_hw <= minority_hw {
            return Err(format!(
                "majority high watermark {majority_hw} <= minority {minority_hw}"
            ));
        }
        c.net.heal_all();
        let restored_end = c.max_log_end_offset();
        c.run_until(WITHIN_MS, "everyone catches up after healing", |c| {
            c.all_reached_hw(2 * restored_end)
        })
    })();
    finish(&c, r, Stats::default())
}

fn can_make_progress_after_back_to_back_leader_failures_run(seed: u64, trace: bool) -> Outcome {
    let name = "can_make_progress_after_back_to_back_leader_failures";
    let mut c = cluster(name, seed, trace, (3, 5), (0, 3));
    install_defaults(&mut c);
    let r = (|| {
        seeded(&mut c)?;
        let ids = c.node_ids();
        let leader = c.latest_leader().ok_or("no leader")?;
        c.net.isolate(leader, ids.iter().copied());
        c.note_pub(format!("partition leader {leader} away"));
        c.run_until(WITHIN_MS, "a new leader", |c| {
            c.latest_leader().is_some_and(|l| l != leader)
        })?;
        let new_leader = c.latest_leader().ok_or("no leader")?;
        c.net.reconnect(leader);
        c.net.isolate(new_leader, ids.iter().copied());
        c.note_pub(format!(
            "reconnect {leader}, partition new leader {new_leader} away"
        ));
        let target = c.max_hw_reached(None) + 10;
        c.run_until(WITHIN_MS, "progress without both leaders", |c| {
            c.any_reached_hw(target)
        })
    })();
    finish(&c, r, Stats::default())
}

fn can_recover_from_single_node_committed_data_loss_run(seed: u64, trace: bool) -> Outcome {
    let name = "can_recover_from_single_node_committed_data_loss";
    let mut c = cluster(name, seed, trace, (3, 5), (0, 2));
    install_for_data_loss(&mut c);
    let r = (|| {
        c.start_all()?;
        c.start_appending();
        c.run_until(WITHIN_MS, "some high watermark > 10", |c| {
            c.any_reached_hw(10)
        })?;
        let ids = c.node_ids();
        let victim = ids[between(&mut c, 0, ids.len() as u64 - 1)];
        c.kill_and_wipe(victim);
        c.run_until(
            WITHIN_MS,
            "a consistent leader other than the wiped node",
            |c| c.latest_leader() != Some(victim) && c.has_consistent_leader(),
        )?;
        let hw = c.max_hw_reached(None);
        c.start(victim)?;
        c.run_until(WITHIN_MS, "every node caught up", |c| {
            c.all_reached_hw(hw + 10)
        })
    })();
    finish(&c, r, Stats::default())
}

#[test]
fn can_elect_initial_leader() {
    run_seeds(
        "scenarios::can_elect_initial_leader",
        400,
        can_elect_initial_leader_run,
    );
}

#[test]
fn can_elect_new_leader_after_old_leader_failure() {
    run_seeds(
        "scenarios::can_elect_new_leader_after_old_leader_failure",
        250,
        can_elect_new_leader_after_old_leader_failure_run,
    );
}

#[test]
fn can_recover_after_all_nodes_killed() {
    run_seeds(
        "scenarios::can_recover_after_all_nodes_killed",
        300,
        can_recover_after_all_nodes_killed_run,
    );
}

#[test]
fn can_elect_new_leader_after_old_leader_partitioned_away() {
    run_seeds(
        "scenarios::can_elect_new_leader_after_old_leader_partitioned_away",
        250,
        can_elect_new_leader_after_old_leader_partitioned_away_run,
    );
}

#[test]
fn can_make_progress_if_majority_is_reachable() {
    run_seeds(
        "scenarios::can_make_progress_if_majority_is_reachable",
        150,
        can_make_progress_if_majority_is_reachable_run,
    );
}

#[test]
fn can_make_progress_after_back_to_back_leader_failures() {
    run_seeds(
        "scenarios::can_make_progress_after_back_to_back_leader_failures",
        250,
        can_make_progress_after_back_to_back_leader_failures_run,
    );
}

#[test]
fn can_recover_from_single_node_committed_data_loss() {
    run_seeds(
        "scenarios::can_recover_from_single_node_committed_data_loss",
        300,
        can_recover_from_single_node_committed_data_loss_run,
    );
}
