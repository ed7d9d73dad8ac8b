//! The checker's pure parts: what the producer acked against what the consumers read, who
//! led which epoch according to every node's own logs, and which ERRORs the Kafka processes
//! logged.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::clients::{Acked, Consumed};
use crate::support::cluster::{log_entries, AllowedError, ALLOWED_KAFKA_ERRORS};

/// VerifiableProducer's values are `<prefix>.<n>`, `n` counting sends.
fn sequence(value: &str) -> Option<u64> {
    value.rsplit('.').next()?.parse().ok()
}

/// Per partition, the acked messages in offset order must have been sent in that order (one
/// idempotent producer, so its retries may not reorder a partition), and no offset may be
/// acked twice.
pub fn reordered(acked: &[Acked]) -> Vec<String> {
    let mut by_partition: BTreeMap<i32, Vec<&Acked>> = BTreeMap::new();
    for a in acked {
        by_partition.entry(a.partition).or_default().push(a);
    }
    let mut bad = Vec::new();
    for (p, mut msgs) in by_partition {
        msgs.sort_by_key(|a| a.offset);
        for w in msgs.windows(2) {
            if w[0].offset == w[1].offset {
                bad.push(format!(
                    "partition {p} offset {} acked twice ({} and {})",
                    w[0].offset, w[0].value, w[1].value
                ));
            } else if sequence(&w[0].value) >= sequence(&w[1].value) {
                bad.push(format!(
                    "partition {p}: {} at offset {} before {} at offset {}",
                    w[0].value, w[0].offset, w[1].value, w[1].offset
                ));
            }
        }
    }
    bad
}

/// Records a consumer read during the faults whose (partition, offset) holds another value in
/// the final read, or is missing from it: a read of data that was later lost.
pub fn phantom_reads(during: &[Consumed], last: &[Consumed]) -> Vec<String> {
    let at: BTreeMap<(i32, i64), &str> = last
        .iter()
        .map(|c| ((c.partition, c.offset), c.value.as_str()))
        .collect();
    during
        .iter()
        .filter(|c| at.get(&(c.partition, c.offset)) != Some(&c.value.as_str()))
        .map(|c| {
            format!(
                "{}@{}/{} read during the faults, {:?} at the end",
                c.value,
                c.partition,
                c.offset,
                at.get(&(c.partition, c.offset))
            )
        })
        .collect()
}

/// Which node declared itself leader of which epoch, from each node's logs (ferrokraft's
/// "Transitioned to leader in epoch N"; Kafka's "Completed transition to
/// Leader(localVoterNode=…, epoch=N, …"): `node → its logs' text`. The campaign checks this
/// reading against every (epoch, leader) it saw through DescribeQuorum.
pub fn leaders_by_epoch(logs: &[(i32, String)]) -> BTreeMap<i64, BTreeSet<i32>> {
    let mut out: BTreeMap<i64, BTreeSet<i32>> = BTreeMap::new();
    for (id, text) in logs {
        for line in text.lines() {
            let epoch = if let Some(rest) = line.split("Transitioned to leader in epoch ").nth(1) {
                rest.split_whitespace().next().and_then(|e| e.parse().ok())
            } else if let Some(rest) = line.split("Completed transition to Leader(").nth(1) {
                rest.split("epoch=")
                    .nth(1)
                    .and_then(|e| e.split(|ch: char| !ch.is_ascii_digit()).next())
                    .and_then(|e| e.parse().ok())
            } else {
                None
            };
            if let Some(e) = epoch {
                out.entry(e).or_default().insert(*id);
            }
        }
    }
    out
}

/// (epoch, leader) pairs seen through DescribeQuorum that the logs do not show: the logs'
/// reading missed a kind of node (or a node lied).
pub fn unseen_in_logs(
    leaders: &BTreeMap<i64, BTreeSet<i32>>,
    observed: &BTreeSet<(i64, i32)>,
) -> Vec<(i64, i32)> {
    observed
        .iter()
        .filter(|(e, l)| !leaders.get(e).is_some_and(|ids| ids.contains(l)))
        .copied()
        .collect()
}

/// Epochs that had more than one leader.
pub fn two_leaders(leaders: &BTreeMap<i64, BTreeSet<i32>>) -> Vec<String> {
    leaders
        .iter()
        .filter(|(_, ids)| ids.len() > 1)
        .map(|(e, ids)| format!("epoch {e} led by {ids:?}"))
        .collect()
}

/// The ERROR and FATAL entries of a Kafka log that neither the common allow-list nor
/// `allowed` explains (exceptions logged at INFO or WARN are the faults doing their work).
pub fn unexplained_errors(text: &str, allowed: &[AllowedError]) -> Vec<String> {
    log_entries(text)
        .into_iter()
        .filter(|e| {
            let first = e.lines().next().unwrap_or("");
            first.contains("] ERROR ") || first.contains("] FATAL ")
        })
        .filter(|e| {
            !ALLOWED_KAFKA_ERRORS
                .iter()
                .chain(allowed)
                .any(|a| a.contains.iter().all(|c| e.contains(c)))
        })
        .map(|e| e.lines().take(8).collect::<Vec<_>>().join("\n"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acked(partition: i32, offset: i64, n: u64) -> Acked {
        Acked {
            partition,
            offset,
            value: format!("7.{n}"),
        }
    }

    #[test]
    fn reordering_and_double_acks_are_found() {
        assert!(reordered(&[acked(0, 0, 1), acked(1, 0, 2), acked(0, 1, 3)]).is_empty());
        assert_eq!(reordered(&[acked(0, 0, 5), acked(0, 1, 4)]).len(), 1);
        assert_eq!(reordered(&[acked(0, 3, 5), acked(0, 3, 6)]).len(), 1);
    }

    #[test]
    fn leaders_are_read_from_both_kinds_of_log() {
        let logs = vec![
            (
                1,
                "2026 INFO ferrokraft::raft: Transitioned to leader in epoch 4 (leader Some(1))"
                    .to_string(),
            ),
            (
                2,
                "[2026-12-02 05:58:27,448] INFO [RaftManager id=2] Completed transition to Leader(localVoterNode=VoterNode(voterKey=ReplicaKey(id=2, directoryId=bh9uog6OTt6TYS0n26t_Ng), listeners=Endpoints(endpoints={ListenerName(CONTROLLER)=10.223.0.2/<unresolved>:44415}), supportedKRaftVersion=SupportedVersionRange[min_version:0, max_version:1]), epoch=4, epochStartOffset=110, highWatermark=Optional.empty) from Candidate(epoch=4)".to_string(),
            ),

            (3, "Transitioned to follower in epoch 4 (leader Some(1))".to_string()),
        ];
        let l = leaders_by_epoch(&logs);
        assert_eq!(l[&4], BTreeSet::from([1, 2]));
        assert_eq!(two_leaders(&l).len(), 1);
    }
}
