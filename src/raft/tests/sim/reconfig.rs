//! Voter changes under faults (KIP-853): a kraft.version 1 cluster of 3 voters and 2
//! observers, with the workload running, gets a series of AddRaftVoter / RemoveRaftVoter
//! requests at its leader (as `kafka-metadata-quorum add-controller` / `remove-controller`
//! send them) while nodes are killed and restarted; voters whose listeners differ from their
//! entry send UpdateRaftVoter meanwhile. Besides Kafka's invariants,
//! `OverlappingVoterSets` checks that consecutive voter sets keep overlapping majorities and
//! that committed voter changes are never lost.

use super::cluster::Cluster;
use super::invariants::{install_defaults, OverlappingVoterSets};
use super::{finish, rng_for, run_seeds, Outcome, Stats};
use crate::codec::ResponseBody;
use crate::raft::tests::context::{CLUSTER_ID, LISTENER};
use crate::raft::tests::reconfig_ctx::{
    add_voter_request, dir, dynamic_voters, key, listeners, remove_voter_request, ANOTHER_LISTENER,
};
use crate::raft::types::Endpoint;
use crate::raft::RaftConfig;

const NAME: &str = "reconfig::can_change_voters_under_faults";
const WITHIN_MS: u64 = 120_000;
/// Voter changes attempted per run.
const CHANGES: u64 = 8;
/// How long one request may wait for its answer (the leader answers within its request
/// timeout, or the request is lost with its leader).
const ANSWER_WITHIN_MS: u64 = 10_000;

/// kraft.version 1: a directory id per node and the initial voters in a bootstrap snapshot.
/// Even nodes advertise one more listener than the snapshot knows, so as voters they send
/// UpdateRaftVoter and the leader appends their new entry, racing the admin's changes.
pub fn make_dynamic(cfg: &mut RaftConfig, initial_voters: &[i32]) {
    cfg.directory_id = dir(cfg.node_id);
    cfg.snapshot_voters = Some((Some(dynamic_voters(initial_voters)), 1));
    if cfg.node_id % 2 == 0 {
        cfg.local_endpoints.insert(
            ANOTHER_LISTENER.to_string(),
            Endpoint {
                host: "127.0.0.1".into(),
                port: 8990 + cfg.node_id as u16,
            },
        );
    }
}

fn leader(c: &Cluster) -> Option<i32> {
    c.leader_with_max_epoch().map(|(id, _, _)| id)
}

/// One change at the current leader: remove a random voter, or add a random non-voter;
/// sometimes a second one right behind it, as two admin clients racing would. Returns the
/// first answer's error code, or None when no answer came (leader lost).
fn change_voters(c: &mut Cluster, op: u64) -> Result<Option<i16>, String> {
    let racing = c.rng.below(3) == 0;
    if racing {
        send_change(c, op + 1_000_000)?;
    }
    send_change(c, op)?;
    let _ = c.run_until(ANSWER_WITHIN_MS, "admin answers", |c| {
        c.admin_answers.contains_key(&op)
            && (!racing || c.admin_answers.contains_key(&(op + 1_000_000)))
    });
    let error = c.admin_answers.get(&op).map(|body| match body {
        ResponseBody::AddRaftVoter(r) => r.error_code,
        ResponseBody::RemoveRaftVoter(r) => r.error_code,
        _ => -1,
    });
    c.note_pub(format!("admin: answer {error:?}"));
    Ok(error)
}

fn send_change(c: &mut Cluster, op: u64) -> Result<(), String> {
    // A down node may hold the only other vote of a small voter set: bring it back if no
    // leader shows up (losing liveness without a majority is expected, not a bug).
    if c.run_until(20_000, "a leader", |c| leader(c).is_some())
        .is_err()
    {
        c.note_pub("no leader: restarting every node".into());
        c.start_all()?;
        c.run_until(WITHIN_MS, "a leader after restarting", |c| {
            leader(c).is_some()
        })?;
    }
    let Some(leader) = leader(c) else {
        return Ok(());
    };
    let voters: Vec<i32> = c.nodes[&leader]
        .core()
        .map(|core| core.voters().ids().collect())
        .unwrap_or_default();
    let others: Vec<i32> = c
        .node_ids()
        .into_iter()
        .filter(|id| !voters.contains(id))
        .collect();
    let remove = !voters.is_empty() && (others.is_empty() || c.rng.below(2) == 0);
    let body = if remove && voters.len() > 1 {
        let id = voters[c.rng.below(voters.len() as u64) as usize];
        c.note_pub(format!("admin: remove voter {id} via leader {leader}"));
        remove_voter_request(Some(CLUSTER_ID), key(id))
    } else if let Some(id) =
        (!others.is_empty()).then(|| others[c.rng.below(others.len() as u64) as usize])
    {
        c.note_pub(format!("admin: add voter {id} via leader {leader}"));
        add_voter_request(Some(CLUSTER_ID), key(id), &listeners(id, &[LISTENER]))
    } else {
        return Ok(());
    };
    c.admin_request(leader, op, body);
    Ok(())
}

fn can_change_voters_under_faults_run(seed: u64, trace: bool) -> Outcome {
    let mut c = Cluster::new(rng_for(NAME, seed), 3, 2, trace);
    c.dynamic = true;
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
        c.run_until(WITHIN_MS, "some high watermark > 10", |c| {
            c.any_reached_hw(10)
        })?;
        let mut succeeded = 0;
        for op in 0..CHANGES {
            // A fault now and then: kill a node (at most one down at a time).
            let down = c
                .node_ids()
                .into_iter()
                .find(|id| !c.nodes[id].is_running());
            match down {
                Some(id) if c.rng.below(2) == 0 => c.start(id)?,
                None if c.rng.below(4) == 0 => {
                    let ids = c.node_ids();
                    let id = ids[c.rng.below(ids.len() as u64) as usize];
                    c.kill(id);
                }
                _ => {}
            }
            if change_voters(&mut c, op)? == Some(0) {
                succeeded += 1;
            }
            let pause = c.rng.below(2_000);
            c.run_for(pause)?;
        }
        c.note_pub(format!("{succeeded} voter changes succeeded"));
        c.start_all()?;
        c.run_until(
            WITHIN_MS,
            "a consistent leader after the changes",
            Cluster::has_consistent_leader,
        )?;
        let target = c.max_log_end_offset() + 10;
        c.run_until(WITHIN_MS, "progress after the changes", |c| {
            c.any_reached_hw(target)
        })
    })();
    finish(&c, r, Stats::default())
}

#[test]
fn can_change_voters_under_faults() {
    run_seeds(NAME, 25, can_change_voters_under_faults_run);
}
