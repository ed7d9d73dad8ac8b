//! Replica placement (Kafka's `StripedReplicaPlacer`, its constraints rather than its exact
//! stripes): the leader is always an unfenced broker, replicas are distinct and spread over
//! racks, fenced brokers are used only once the unfenced ones run out, brokers in controlled
//! shutdown never; the starting point rotates per partition from a random offset.

use std::collections::BTreeMap;

use crate::codec::versions::Release;
use crate::raft::Rng;

/// A broker placement may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsableBroker {
    /// Broker id.
    pub id: i32,
    /// Rack, if configured.
    pub rack: Option<String>,
    /// Whether it is fenced.
    pub fenced: bool,
}

/// Brokers interleaved rack by rack (r0b0, r1b0, r2b0, r0b1, …), so consecutive entries sit
/// in different racks where racks allow.
fn interleave(brokers: &[&UsableBroker]) -> Vec<i32> {
    let mut racks: BTreeMap<Option<&str>, Vec<i32>> = BTreeMap::new();
    for b in brokers {
        racks.entry(b.rack.as_deref()).or_default().push(b.id);
    }
    for ids in racks.values_mut() {
        ids.sort_unstable();
    }
    let longest = racks.values().map(Vec::len).max().unwrap_or(0);
    let mut out = Vec::with_capacity(brokers.len());
    for i in 0..longest {
        for ids in racks.values() {
            if let Some(id) = ids.get(i) {
                out.push(*id);
            }
        }
    }
    out
}

/// Places `num_partitions` partitions of `replication_factor` replicas over `brokers`; the
/// error is Kafka's InvalidReplicationFactorException message.
pub fn place(
    brokers: &[UsableBroker],
    num_partitions: i32,
    replication_factor: i16,
    rng: &mut Rng,
    release: Release,
) -> Result<Vec<Vec<i32>>, String> {
    Placer::new(brokers).place(num_partitions, replication_factor, rng, release)
}

/// The brokers of one request, interleaved and their racks gathered once: a request placing
/// many topics pays for the brokers once, not per topic.
pub struct Placer<'a> {
    /// Every usable broker, fenced or not.
    registered: usize,
    /// The unfenced brokers with their racks, interleaved rack by rack.
    unfenced: Vec<(i32, Option<&'a str>)>,
    /// The fenced ones, likewise.
    fenced: Vec<(i32, Option<&'a str>)>,
    /// The racks of each group, to know when none is left that a partition does not use yet.
    unfenced_racks: Vec<Option<&'a str>>,
    fenced_racks: Vec<Option<&'a str>>,
}

impl<'a> Placer<'a> {
    /// Interleaves `brokers` for the placements that follow.
    pub fn new(brokers: &'a [UsableBroker]) -> Self {
        let rack_of: BTreeMap<i32, Option<&str>> =
            brokers.iter().map(|b| (b.id, b.rack.as_deref())).collect();
        let group = |fenced: bool| -> Vec<(i32, Option<&'a str>)> {
            let members: Vec<&UsableBroker> =
                brokers.iter().filter(|b| b.fenced == fenced).collect();
            interleave(&members)
                .into_iter()
                .map(|id| (id, rack_of.get(&id).copied().flatten()))
                .collect()
        };
        fn racks<'a>(group: &[(i32, Option<&'a str>)]) -> Vec<Option<&'a str>> {
            let mut r: Vec<Option<&'a str>> = group.iter().map(|(_, rack)| *rack).collect();
            r.sort_unstable();
            r.dedup();
            r
        }
        let (unfenced, fenced) = (group(false), group(true));
        Placer {
            registered: brokers.len(),
            unfenced_racks: racks(&unfenced),
            fenced_racks: racks(&fenced),
            unfenced,
            fenced,
        }
    }

    /// Places `num_partitions` partitions of `replication_factor` replicas; the error is
    /// Kafka's InvalidReplicationFactorException message.
    pub fn place(
        &self,
        num_partitions: i32,
        replication_factor: i16,
        rng: &mut Rng,
        release: Release,
    ) -> Result<Vec<Vec<i32>>, String> {
        // From Kafka 4.3 the placer names cordoned log directories (KIP-1066) in its refusals.
        let cordoned = release.has_cordoned_log_dirs();
        if replication_factor <= 0 {
            return Err(format!(
                "Invalid replication factor {replication_factor}: the replication factor must be positive."
            ));
        }
        let (unfenced, fenced) = (&self.unfenced, &self.fenced);
        let (unfenced_racks, fenced_racks) = (&self.unfenced_racks, &self.fenced_racks);
        if unfenced.is_empty() {
            return Err(if cordoned {
                "All brokers are currently fenced, or have all their log directories cordoned."
                    .into()
            } else {
                "All brokers are currently fenced.".into()
            });
        }
        let rf = usize::try_from(replication_factor).unwrap_or(0);
        if rf > self.registered {
            return Err(format!(
                "The target replication factor of {replication_factor} cannot be reached because \
                 only {} broker(s) are registered{}.",
                self.registered,
                if cordoned {
                    " or some brokers have all their log directories cordoned"
                } else {
                    ""
                }
            ));
        }
        let offset = rng.below(unfenced.len() as u64) as usize;
        let fenced_offset = rng.below(fenced.len().max(1) as u64) as usize;
        let mut out = Vec::with_capacity(usize::try_from(num_partitions).unwrap_or(0));
        for p in 0..usize::try_from(num_partitions).unwrap_or(0) {
            // Candidates in preference order: the unfenced rotated to this partition's start
            // (its first is the leader), then the fenced, rotated too. Indexed, not built: a
            // placement costs its replicas, not the number of brokers.
            let start = (offset + p) % unfenced.len();
            let fstart = (fenced_offset + p) % fenced.len().max(1);
            let candidate = |i: usize| -> (i32, Option<&str>) {
                if i < unfenced.len() {
                    unfenced[(start + i) % unfenced.len()]
                } else {
                    fenced[(fstart + i - unfenced.len()) % fenced.len()]
                }
            };
            let total = unfenced.len() + fenced.len();
            let mut replicas: Vec<i32> = Vec::with_capacity(rf);
            let mut used: Vec<Option<&str>> = Vec::with_capacity(rf);
            let (leader, leader_rack) = candidate(0);
            replicas.push(leader);
            used.push(leader_rack);
            while replicas.len() < rf {
                let free = |i: &usize| !replicas.contains(&candidate(*i).0);
                let new_rack = |i: &usize| !used.contains(&candidate(*i).1);
                // Whether a group has a rack this partition does not use yet (else looking for one
                // would visit every broker of the group in vain).
                let open =
                    |group_racks: &[Option<&str>]| group_racks.iter().any(|r| !used.contains(r));
                // A new rack among the unfenced, else any unfenced, then the same for the fenced.
                let unfenced_count = unfenced.len();
                let pick = open(unfenced_racks)
                    .then(|| (0..unfenced_count).filter(free).find(new_rack))
                    .flatten()
                    .or_else(|| (0..unfenced_count).find(free))
                    .or_else(|| {
                        open(fenced_racks)
                            .then(|| (unfenced_count..total).filter(free).find(new_rack))
                            .flatten()
                    })
                    .or_else(|| (unfenced_count..total).find(free));
                match pick {
                    Some(i) => {
                        let (id, rack) = candidate(i);
                        replicas.push(id);
                        used.push(rack);
                    }
                    None => break,
                }
            }
            out.push(replicas);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn broker(id: i32, rack: Option<&str>, fenced: bool) -> UsableBroker {
        UsableBroker {
            id,
            rack: rack.map(str::to_string),
            fenced,
        }
    }

    /// StripedReplicaPlacerTest: the constraints every placement keeps.
    #[test]
    fn placements_keep_stripedreplicaplacer_constraints() {
        let brokers = vec![
            broker(1, Some("a"), false),
            broker(2, Some("a"), false),
            broker(3, Some("b"), false),
            broker(4, Some("b"), true),
            broker(5, Some("c"), false),
        ];
        let mut rng = Rng::new(7);
        let placed = place(&brokers, 30, 3, &mut rng, Release::default()).unwrap();
        assert_eq!(placed.len(), 30);
        let mut leaders = std::collections::BTreeSet::new();
        for replicas in &placed {
            assert_eq!(replicas.len(), 3);
            let mut unique = replicas.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), 3, "distinct replicas: {replicas:?}");
            assert_ne!(replicas[0], 4, "a fenced broker never leads");
            assert!(
                !replicas.contains(&4),
                "unfenced brokers suffice: {replicas:?}"
            );
            let racks: std::collections::BTreeSet<_> = replicas
                .iter()
                .map(|id| brokers.iter().find(|b| b.id == *id).unwrap().rack.clone())
                .collect();
            assert_eq!(racks.len(), 3, "one replica per rack: {replicas:?}");
            leaders.insert(replicas[0]);
        }
        assert_eq!(
            leaders.len(),
            4,
            "leadership spread over every unfenced broker"
        );
    }

    #[test]
    fn fenced_brokers_fill_in_and_errors_are_kafkas() {
        let brokers = vec![broker(1, None, false), broker(2, None, true)];
        let placed = place(&brokers, 2, 2, &mut Rng::new(1), Release::default()).unwrap();
        for r in placed {
            assert_eq!(r, vec![1, 2]);
        }
        assert_eq!(
            place(&brokers, 1, 3, &mut Rng::new(1), Release::default()).unwrap_err(),
            "The target replication factor of 3 cannot be reached because only 2 broker(s) are registered."
        );
        assert_eq!(
            place(
                &[broker(1, None, true)],
                1,
                1,
                &mut Rng::new(1),
                Release::default()
            )
            .unwrap_err(),
            "All brokers are currently fenced."
        );
        assert_eq!(
            place(&brokers, 1, 0, &mut Rng::new(1), Release::default()).unwrap_err(),
            "Invalid replication factor 0: the replication factor must be positive."
        );
    }

    /// The placement as it was first written (every candidate list built and every rack
    /// looked up per replica): the model the indexed one must agree with.
    fn naive_place(
        brokers: &[UsableBroker],
        n: usize,
        rf: usize,
        offset: usize,
        fenced_offset: usize,
    ) -> Vec<Vec<i32>> {
        let rack_of: BTreeMap<i32, Option<&str>> =
            brokers.iter().map(|b| (b.id, b.rack.as_deref())).collect();
        let unfenced: Vec<&UsableBroker> = brokers.iter().filter(|b| !b.fenced).collect();
        let fenced: Vec<&UsableBroker> = brokers.iter().filter(|b| b.fenced).collect();
        let unfenced = interleave(&unfenced);
        let fenced = interleave(&fenced);
        let mut out = Vec::new();
        for p in 0..n {
            let start = (offset + p) % unfenced.len();
            let mut candidates: Vec<i32> = (0..unfenced.len())
                .map(|i| unfenced[(start + i) % unfenced.len()])
                .collect();
            if !fenced.is_empty() {
                let fstart = (fenced_offset + p) % fenced.len();
                candidates.extend((0..fenced.len()).map(|i| fenced[(fstart + i) % fenced.len()]));
            }
            let mut replicas = vec![candidates[0]];
            while replicas.len() < rf {
                let used: Vec<Option<&str>> = replicas.iter().map(|r| rack_of[r]).collect();
                let u = unfenced.len();
                let free = |i: &usize| !replicas.contains(&candidates[*i]);
                let pick = (0..u)
                    .filter(free)
                    .find(|i| !used.contains(&rack_of[&candidates[*i]]))
                    .or_else(|| (0..u).find(free))
                    .or_else(|| {
                        (u..candidates.len())
                            .filter(free)
                            .find(|i| !used.contains(&rack_of[&candidates[*i]]))
                    })
                    .or_else(|| (u..candidates.len()).find(free));
                match pick {
                    Some(i) => replicas.push(candidates[i]),
                    None => break,
                }
            }
            out.push(replicas);
        }
        out
    }

    proptest::proptest! {
        #[test]
        fn indexed_placement_agrees_with_the_naive_one(
            shape in proptest::collection::vec((0u8..4, proptest::bool::weighted(0.3)), 1..12),
            racked in proptest::bool::ANY,
            n in 1usize..20,
            rf in 1usize..5,
            seed in 0u64..1000,
        ) {
            let brokers: Vec<UsableBroker> = shape
                .iter()
                .enumerate()
                .map(|(i, (rack, fenced))| UsableBroker {
                    id: i as i32,
                    rack: racked.then(|| format!("r{rack}")),
                    fenced: *fenced,
                })
                .collect();
            let unfenced = brokers.iter().filter(|b| !b.fenced).count();
            proptest::prop_assume!(unfenced > 0 && rf <= brokers.len());
            let fenced = brokers.len() - unfenced;
            let placed = place(&brokers, n as i32, rf as i16, &mut Rng::new(seed), Release::default()).unwrap();
            // The same two draws the placer makes, in its order.
            let mut rng = Rng::new(seed);
            let offset = rng.below(unfenced as u64) as usize;
            let fenced_offset = rng.below(fenced.max(1) as u64) as usize;
            proptest::prop_assert_eq!(placed, naive_place(&brokers, n, rf, offset, fenced_offset));
        }
    }
}
