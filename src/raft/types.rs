//! Kafka's KRaft vocabulary: replica keys, offsets with epochs, endpoints, the voter set.

use std::collections::BTreeMap;

use uuid::Uuid;

/// The metadata partition's topic name.
pub const METADATA_TOPIC_NAME: &str = "__cluster_metadata";
/// Its only partition.
pub const METADATA_PARTITION: i32 = 0;
/// Its topic id, `Uuid.ONE_UUID` (AAAAAAAAAAAAAAAAAAAAAQ): Fetch matches on this, not the name.
pub const METADATA_TOPIC_ID: Uuid = Uuid::from_u128(1);

/// Largest batch a leader writes, and the most a Fetch or FetchSnapshot answer carries.
pub const MAX_BATCH_SIZE_BYTES: usize = 8 * 1024 * 1024;
/// MaxWaitMs a follower puts in its Fetch requests (KafkaRaftClient.MAX_FETCH_WAIT_MS).
pub const MAX_FETCH_WAIT_MS: i32 = 500;
/// Observers not heard from this long drop out of DescribeQuorum.
pub const OBSERVER_SESSION_TIMEOUT_MS: u64 = 300_000;

/// A replica's identity: node id plus (KIP-853) metadata directory id; nil = unknown. Its
/// `Debug` is Kafka's `toString` (the directory id in Kafka's base64 form, as
/// meta.properties and Kafka's tools show it), so log lines never show a hex UUID.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReplicaKey {
    /// Node id (-1 = none).
    pub id: i32,
    /// Directory id; nil when unknown (static voters, old RPC versions).
    pub directory_id: Uuid,
}

impl std::fmt::Debug for ReplicaKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// Kafka's `ReplicaKey.toString`, which its error messages carry.
impl std::fmt::Display for ReplicaKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.directory_id.is_nil() {
            write!(f, "ReplicaKey(id={}, directoryId=<undefined>)", self.id)
        } else {
            write!(
                f,
                "ReplicaKey(id={}, directoryId={})",
                self.id,
                crate::common::uuid::uuid_to_kafka_string(&self.directory_id)
            )
        }
    }
}

impl ReplicaKey {
    /// Java's `ReplicaKey.hashCode`: `Objects.hash(id, Optional<Uuid>)`, with Kafka's
    /// `Uuid.hashCode` (the xor of the two halves, folded) and 0 for no directory id.
    pub fn java_hash_code(&self) -> i32 {
        let uuid_hash = if self.directory_id.is_nil() {
            0
        } else {
            let (high, low) = self.directory_id.as_u64_pair();
            let xor = high ^ low;
            ((xor >> 32) as i32) ^ (xor as i32)
        };
        31i32
            .wrapping_mul(31i32.wrapping_add(self.id))
            .wrapping_add(uuid_hash)
    }

    /// A key with a known or unknown directory id.
    pub fn new(id: i32, directory_id: Uuid) -> Self {
        Self { id, directory_id }
    }

    /// A key with no directory id.
    pub fn of_id(id: i32) -> Self {
        Self {
            id,
            directory_id: Uuid::nil(),
        }
    }

    /// Whether `other` names this replica: ids equal, and directory ids equal where both known.
    pub fn matches(&self, other: &ReplicaKey) -> bool {
        self.id == other.id
            && (self.directory_id.is_nil()
                || other.directory_id.is_nil()
                || self.directory_id == other.directory_id)
    }
}

pub use crate::common::offset_epoch::OffsetAndEpoch;

/// A listener address of a replica.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Endpoint {
    /// Host.
    pub host: String,
    /// Port.
    pub port: u16,
}

/// A replica's listeners by (upper-case) listener name.
pub type Endpoints = BTreeMap<String, Endpoint>;

/// A voter: key, listeners, supported kraft.version range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoterNode {
    /// Its key.
    pub key: ReplicaKey,
    /// Its controller listeners.
    pub endpoints: Endpoints,
    /// Lowest kraft.version it supports.
    pub kraft_version_min: i16,
    /// Highest kraft.version it supports.
    pub kraft_version_max: i16,
}

/// The voters of the quorum, by id.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VoterSet {
    voters: BTreeMap<i32, VoterNode>,
}

impl VoterSet {
    /// A voter set from nodes; later duplicates replace earlier ones.
    pub fn new(nodes: impl IntoIterator<Item = VoterNode>) -> Self {
        Self {
            voters: nodes.into_iter().map(|n| (n.key.id, n)).collect(),
        }
    }

    /// Static voters (`controller.quorum.voters`): no directory ids, kraft.version [0, 0].
    pub fn from_static(listener_name: &str, voters: &[(i32, String, u16)]) -> Self {
        Self::new(voters.iter().map(|(id, host, port)| {
            VoterNode {
                key: ReplicaKey::of_id(*id),
                endpoints: [(
                    listener_name.to_ascii_uppercase(),
                    Endpoint {
                        host: host.clone(),
                        port: *port,
                    },
                )]
                .into_iter()
                .collect(),
                kraft_version_min: 0,
                kraft_version_max: 0,
            }
        }))
    }

    /// Number of voters.
    pub fn len(&self) -> usize {
        self.voters.len()
    }

    /// Whether every voter's supported kraft.version range holds `level`
    /// (`VoterSet.supportsVersion`).
    pub fn supports_kraft_version(&self, level: i16) -> bool {
        self.voters
            .values()
            .all(|v| (v.kraft_version_min..=v.kraft_version_max).contains(&level))
    }

    /// Whether there are no voters.
    pub fn is_empty(&self) -> bool {
        self.voters.is_empty()
    }

    /// Voter ids in ascending order.
    pub fn ids(&self) -> impl Iterator<Item = i32> + '_ {
        self.voters.keys().copied()
    }

    /// The voters in ascending id order.
    pub fn nodes(&self) -> impl Iterator<Item = &VoterNode> {
        self.voters.values()
    }

    /// The voter keys as Kafka prints `VoterSet.voterKeys()` in its error messages: a Java
    /// `HashSet<ReplicaKey>` (16 buckets, doubled past a 0.75 load; filled in id order) shown
    /// as `[ReplicaKey(id=…, directoryId=…), …]` in bucket order.
    pub fn java_voter_keys_string(&self) -> String {
        let keys: Vec<ReplicaKey> = self.voters.values().map(|v| v.key).collect();
        let mut buckets = 16usize;
        while keys.len() as f64 > buckets as f64 * 0.75 {
            buckets *= 2;
        }
        let bucket = |k: &ReplicaKey| {
            let h = k.java_hash_code() as u32;
            ((h ^ (h >> 16)) as usize) & (buckets - 1)
        };
        let mut ordered = keys;
        // Stable: a bucket keeps insertion order.
        ordered.sort_by_key(bucket);
        let shown: Vec<String> = ordered.iter().map(ToString::to_string).collect();
        format!("[{}]", shown.join(", "))
    }

    /// The voter with `id`, if any.
    pub fn get(&self, id: i32) -> Option<&VoterNode> {
        self.voters.get(&id)
    }

    /// Whether `key` is a voter (id matches; directory ids compared when both known).
    pub fn is_voter(&self, key: &ReplicaKey) -> bool {
        self.voters.get(&key.id).is_some_and(|v| v.key.matches(key))
    }

    /// Whether `id` is a voter regardless of directory id.
    pub fn contains_id(&self, id: i32) -> bool {
        self.voters.contains_key(&id)
    }

    /// Votes needed for a majority.
    pub fn majority(&self) -> usize {
        self.voters.len() / 2 + 1
    }

    /// The address of voter `id` on `listener`.
    pub fn endpoint(&self, id: i32, listener: &str) -> Option<&Endpoint> {
        self.voters.get(&id)?.endpoints.get(listener)
    }

    /// The set with `node` added; `None` when its id is already a voter (`VoterSet.addVoter`).
    pub fn add_voter(&self, node: VoterNode) -> Option<VoterSet> {
        if self.voters.contains_key(&node.key.id) {
            return None;
        }
        let mut voters = self.voters.clone();
        voters.insert(node.key.id, node);
        Some(Self { voters })
    }

    /// The set without `key`; `None` unless a voter has exactly that key (id and directory id)
    /// and it is not the last voter (`VoterSet.removeVoter`).
    pub fn remove_voter(&self, key: &ReplicaKey) -> Option<VoterSet> {
        let old = self.voters.get(&key.id)?;
        if old.key != *key || self.voters.len() <= 1 {
            return None;
        }
        let mut voters = self.voters.clone();
        voters.remove(&key.id);
        Some(Self { voters })
    }

    /// The set with the voter of `node`'s id replaced by `node`; `None` unless that voter is
    /// `node.key` in Kafka's strict sense (`VoterSet.updateVoter`).
    pub fn update_voter(&self, node: VoterNode) -> Option<VoterSet> {
        let old = self.voters.get(&node.key.id)?;
        if !old.is_voter_key(&node.key) {
            return None;
        }
        let mut voters = self.voters.clone();
        voters.insert(node.key.id, node);
        Some(Self { voters })
    }

    /// Like [`Self::update_voter`] but matching on the id only: static voters have no
    /// directory id to compare (`VoterSet.updateVoterIgnoringDirectoryId`).
    pub fn update_voter_ignoring_directory_id(&self, node: VoterNode) -> Option<VoterSet> {
        if !self.voters.contains_key(&node.key.id) {
            return None;
        }
        let mut voters = self.voters.clone();
        voters.insert(node.key.id, node);
        Some(Self { voters })
    }

    /// Whether the entry for `node`'s key differs from `node` (`VoterSet.voterNodeNeedsUpdate`).
    pub fn voter_node_needs_update(&self, node: &VoterNode) -> bool {
        self.voters
            .get(&node.key.id)
            .is_some_and(|old| old.is_voter_key(&node.key) && old != node)
    }
}

impl VoterNode {
    /// Kafka's `VoterNode.isVoter`: ids equal and, when this voter has a directory id, the
    /// same directory id (a key without one does not match it). Stricter than
    /// [`ReplicaKey::matches`], which the voter changes must not use.
    pub fn is_voter_key(&self, key: &ReplicaKey) -> bool {
        self.key.id == key.id
            && (self.key.directory_id.is_nil() || self.key.directory_id == key.directory_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_and_epoch_compare_epoch_first() {
        assert!(OffsetAndEpoch::new(5, 2) > OffsetAndEpoch::new(100, 1));
        assert!(OffsetAndEpoch::new(6, 2) > OffsetAndEpoch::new(5, 2));
    }

    /// Log lines print keys with `{:?}` too: the directory id in Kafka's form, never hex.
    #[test]
    fn replica_keys_print_directory_ids_as_kafka_does() {
        let id = uuid::Uuid::from_u128(0x0123_4567_89ab_cdef_0123_4567_89ab_cdef);
        let key = ReplicaKey {
            id: 3,
            directory_id: id,
        };
        let kafka = crate::common::uuid::uuid_to_kafka_string(&id);
        assert_eq!(
            format!("{key:?}"),
            format!("ReplicaKey(id=3, directoryId={kafka})")
        );
        assert_eq!(format!("{key:?}"), key.to_string());
        assert!(!format!("{:?}", vec![key]).contains(&id.to_string()));
    }

    #[test]
    fn replica_keys_match_on_unknown_directory() {
        let a = Uuid::from_u128(7);
        assert!(ReplicaKey::new(1, a).matches(&ReplicaKey::of_id(1)));
        assert!(!ReplicaKey::new(1, a).matches(&ReplicaKey::new(1, Uuid::from_u128(8))));
        assert!(!ReplicaKey::of_id(1).matches(&ReplicaKey::of_id(2)));
    }

    fn node(id: i32, dir: u128, port: u16) -> VoterNode {
        VoterNode {
            key: ReplicaKey::new(id, Uuid::from_u128(dir)),
            endpoints: [(
                "C".to_string(),
                Endpoint {
                    host: "h".into(),
                    port,
                },
            )]
            .into_iter()
            .collect(),
            kraft_version_min: 0,
            kraft_version_max: 1,
        }
    }

    #[test]
    fn voter_changes_follow_kafkas_voter_set_rules() {
        let set = VoterSet::new([node(1, 11, 1), node(2, 12, 2)]);
        // Add: a new id only.
        assert!(set.add_voter(node(2, 99, 2)).is_none());
        assert_eq!(set.add_voter(node(3, 13, 3)).map(|s| s.len()), Some(3));
        // Remove: exact key, never the last voter.
        assert!(set
            .remove_voter(&ReplicaKey::new(2, Uuid::from_u128(99)))
            .is_none());
        assert!(set.remove_voter(&ReplicaKey::of_id(2)).is_none());
        let one = set
            .remove_voter(&ReplicaKey::new(2, Uuid::from_u128(12)))
            .unwrap();
        assert!(one
            .remove_voter(&ReplicaKey::new(1, Uuid::from_u128(11)))
            .is_none());
        // Update: the voter's directory id must match; ignoring it matches on the id.
        assert!(set.update_voter(node(2, 99, 7)).is_none());
        assert!(set
            .update_voter_ignoring_directory_id(node(2, 99, 7))
            .is_some());
        let updated = set.update_voter(node(2, 12, 7)).unwrap();
        assert_eq!(updated.endpoint(2, "C").map(|e| e.port), Some(7));
        // Needs update: same key, different listeners or range.
        assert!(!set.voter_node_needs_update(&node(2, 12, 2)));
        assert!(set.voter_node_needs_update(&node(2, 12, 7)));
        assert!(
            !set.voter_node_needs_update(&node(2, 99, 7)),
            "another replica"
        );
        assert!(!set.voter_node_needs_update(&node(5, 15, 5)), "not a voter");
    }

    #[test]
    fn majority_of_voters() {
        let v = |n: i32| {
            VoterSet::from_static(
                "C",
                &(1..=n).map(|i| (i, "h".to_string(), 1)).collect::<Vec<_>>(),
            )
        };
        assert_eq!(v(1).majority(), 1);
        assert_eq!(v(2).majority(), 2);
        assert_eq!(v(3).majority(), 2);
        assert_eq!(v(5).majority(), 3);
    }

    /// Kafka 4.1.2's own output (a `HashSet<ReplicaKey>` of these two keys printed by the
    /// 4.1.2 jars): ferrokraft's error messages name voters the same way, in the same order.
    #[test]
    fn voter_keys_print_as_kafkas_hash_set() {
        let dir = |s: &str| crate::common::uuid::parse_kafka_uuid(s).unwrap();
        let mut one = node(1, 0, 1);
        one.key = ReplicaKey::new(1, dir("3nUKPmAlQDWd0e7QDIJuvw"));
        let mut two = node(2, 0, 2);
        two.key = ReplicaKey::new(2, dir("AAAAAAAAAAAAAAAAAAAAAQ"));
        assert_eq!(
            VoterSet::new([one, two]).java_voter_keys_string(),
            "[ReplicaKey(id=2, directoryId=AAAAAAAAAAAAAAAAAAAAAQ), ReplicaKey(id=1, directoryId=3nUKPmAlQDWd0e7QDIJuvw)]"
        );
        assert_eq!(
            ReplicaKey::of_id(1).to_string(),
            "ReplicaKey(id=1, directoryId=<undefined>)"
        );
    }
}
