//! One partition's state (Kafka's `PartitionRegistration`), held compactly: an image holds one
//! per partition, so its size is the image's size (#41: 10,000,000 partitions in 2 GiB).
//!
//! ```text
//!   PartitionRecord / PartitionChangeRecord ─replay─▶ PartitionParts (plain Vecs)
//!        ─pack─▶ PartitionRegistration { leader, epochs, lengths, ids }
//!   ids: replicas ‖ isr ‖ removing ‖ adding ‖ elr ‖ last known elr ‖ directories (interned)
//! ```
//!
//! The seven lists live in one array of 32-bit words, inline up to [`INLINE_WORDS`] (a
//! replication factor of 3 with its ISR and directories) and in one heap slice beyond. A
//! directory id is a 16-byte Uuid shared by every partition of its directory, so each is held
//! once in [`directory_ids`]'s table and a partition keeps its 4-byte index; "all migrating"
//! (the all-zero id once per replica, what brokers without directories give) takes no words.
//! Readers see slices and Uuids; a change unpacks to [`PartitionParts`], edits and packs again.

use std::fmt;

use uuid::Uuid;

use super::directory_ids;
use super::topics::NO_LEADER_CHANGE;
use super::ReplayError;
use crate::metadata::records::{PartitionChangeRecord, PartitionRecord};

/// Words held inline: 3 replicas, 3 in sync, 3 directories.
const INLINE_WORDS: usize = 9;

/// The lists in their order in the packed words.
const REPLICAS: usize = 0;
const ISR: usize = 1;
const REMOVING: usize = 2;
const ADDING: usize = 3;
const ELR: usize = 4;
const LAST_KNOWN_ELR: usize = 5;
const DIRECTORIES: usize = 6;
const LISTS: usize = 7;

/// A partition's state unpacked: what a record sets and what a change edits.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionParts {
    /// Replica broker ids, preferred leader first.
    pub replicas: Vec<i32>,
    /// Log directory of each replica; all-zero ids ("migrating") when unknown.
    pub directories: Vec<Uuid>,
    /// In-sync replicas.
    pub isr: Vec<i32>,
    /// Replicas a reassignment removes.
    pub removing_replicas: Vec<i32>,
    /// Replicas a reassignment adds.
    pub adding_replicas: Vec<i32>,
    /// Leader, -1 for none.
    pub leader: i32,
    /// 0 recovered, 1 recovering.
    pub leader_recovery_state: i8,
    /// Leader epoch.
    pub leader_epoch: i32,
    /// Partition epoch.
    pub partition_epoch: i32,
    /// Eligible leader replicas (KIP-966).
    pub elr: Vec<i32>,
    /// Last known ELR.
    pub last_known_elr: Vec<i32>,
}

/// The packed words: inline when they fit.
#[derive(Clone, PartialEq, Eq)]
enum Words {
    Inline([i32; INLINE_WORDS]),
    Heap(Box<[i32]>),
}

/// A partition's state, as a PartitionRecord in a snapshot would carry it.
#[derive(Clone, PartialEq, Eq)]
pub struct PartitionRegistration {
    /// Leader, -1 for none.
    pub leader: i32,
    /// Leader epoch.
    pub leader_epoch: i32,
    /// Partition epoch.
    pub partition_epoch: i32,
    /// 0 recovered, 1 recovering.
    pub leader_recovery_state: i8,
    /// The directories are "migrating", one per replica, and take no words.
    migrating: bool,
    /// Each list's length, in the order of the constants above.
    lengths: [u16; LISTS],
    words: Words,
}

impl PartitionRegistration {
    fn words(&self) -> &[i32] {
        match &self.words {
            Words::Inline(w) => w,
            Words::Heap(w) => w,
        }
    }

    /// List `which` of the packed words.
    fn list(&self, which: usize) -> &[i32] {
        let start: usize = self.lengths[..which].iter().map(|n| usize::from(*n)).sum();
        let end = start + usize::from(self.lengths[which]);
        self.words().get(start..end).unwrap_or_default()
    }

    /// Replica broker ids, preferred leader first.
    pub fn replicas(&self) -> &[i32] {
        self.list(REPLICAS)
    }

    /// In-sync replicas.
    pub fn isr(&self) -> &[i32] {
        self.list(ISR)
    }

    /// Replicas a reassignment removes.
    pub fn removing_replicas(&self) -> &[i32] {
        self.list(REMOVING)
    }

    /// Replicas a reassignment adds.
    pub fn adding_replicas(&self) -> &[i32] {
        self.list(ADDING)
    }

    /// Eligible leader replicas (KIP-966).
    pub fn elr(&self) -> &[i32] {
        self.list(ELR)
    }

    /// Last known ELR.
    pub fn last_known_elr(&self) -> &[i32] {
        self.list(LAST_KNOWN_ELR)
    }

    /// Log directory of each replica; all-zero ids ("migrating") when unknown.
    pub fn directories(&self) -> Vec<Uuid> {
        if self.migrating {
            return vec![Uuid::nil(); self.replicas().len()];
        }
        directory_ids::resolve(self.list(DIRECTORIES))
    }

    /// The directory of replica `index` (None past the last).
    pub fn directory(&self, index: usize) -> Option<Uuid> {
        if self.migrating {
            return (index < self.replicas().len()).then_some(Uuid::nil());
        }
        directory_ids::resolve_one(*self.list(DIRECTORIES).get(index)?)
    }

    /// The state unpacked, to edit and pack again with [`Self::from_parts`].
    pub fn to_parts(&self) -> PartitionParts {
        PartitionParts {
            replicas: self.replicas().to_vec(),
            directories: self.directories(),
            isr: self.isr().to_vec(),
            removing_replicas: self.removing_replicas().to_vec(),
            adding_replicas: self.adding_replicas().to_vec(),
            leader: self.leader,
            leader_recovery_state: self.leader_recovery_state,
            leader_epoch: self.leader_epoch,
            partition_epoch: self.partition_epoch,
            elr: self.elr().to_vec(),
            last_known_elr: self.last_known_elr().to_vec(),
        }
    }

    /// Packs `parts`. A list longer than 65,535 entries (no broker count comes near) is cut
    /// there; debug and simulation builds check it does not happen.
    pub fn from_parts(parts: PartitionParts) -> Self {
        let migrating = parts.directories.len() == parts.replicas.len()
            && parts.directories.iter().all(Uuid::is_nil);
        Self::pack(
            Scalars {
                leader: parts.leader,
                leader_epoch: parts.leader_epoch,
                partition_epoch: parts.partition_epoch,
                leader_recovery_state: parts.leader_recovery_state,
            },
            [
                &parts.replicas,
                &parts.isr,
                &parts.removing_replicas,
                &parts.adding_replicas,
                &parts.elr,
                &parts.last_known_elr,
            ],
            if migrating { &[] } else { &parts.directories },
            migrating,
        )
    }

    /// Packs the six id lists (in the order of the constants above) and the directories
    /// (none when `migrating`) straight into the words: the registration of each partition
    /// replayed is built here, and an intermediate list per registration made a part of
    /// CreateTopics' time in the allocator (#41).
    fn pack(
        scalars: Scalars,
        ids: [&[i32]; LISTS - 1],
        directories: &[Uuid],
        migrating: bool,
    ) -> Self {
        let limit = usize::from(u16::MAX);
        let mut lengths = [0u16; LISTS];
        for (which, list) in ids.iter().enumerate() {
            debug_assert!(list.len() <= limit, "a list of {}", list.len());
            lengths[which] = list.len().min(limit) as u16;
        }
        debug_assert!(
            directories.len() <= limit,
            "{} directories",
            directories.len()
        );
        let directories = &directories[..directories.len().min(limit)];
        lengths[DIRECTORIES] = directories.len() as u16;
        let total: usize = lengths.iter().map(|n| usize::from(*n)).sum();
        let fill = |words: &mut [i32]| {
            let mut at = 0;
            for (which, list) in ids.iter().enumerate() {
                let n = usize::from(lengths[which]);
                words[at..at + n].copy_from_slice(&list[..n]);
                at += n;
            }
            directory_ids::intern_into(directories, &mut words[at..]);
        };
        let words = if total <= INLINE_WORDS {
            let mut inline = [0; INLINE_WORDS];
            fill(&mut inline[..total]);
            Words::Inline(inline)
        } else {
            let mut heap = vec![0; total].into_boxed_slice();
            fill(&mut heap);
            Words::Heap(heap)
        };
        Self {
            leader: scalars.leader,
            leader_epoch: scalars.leader_epoch,
            partition_epoch: scalars.partition_epoch,
            leader_recovery_state: scalars.leader_recovery_state,
            migrating,
            lengths,
            words,
        }
    }

    /// Edits the lists (unpacked) and packs them again.
    pub fn edit(&mut self, f: impl FnOnce(&mut PartitionParts)) {
        let mut parts = self.to_parts();
        f(&mut parts);
        *self = Self::from_parts(parts);
    }
}

impl From<PartitionParts> for PartitionRegistration {
    fn from(parts: PartitionParts) -> Self {
        Self::from_parts(parts)
    }
}

impl Default for PartitionRegistration {
    fn default() -> Self {
        Self::from_parts(PartitionParts::default())
    }
}

/// As the unpacked state reads (the packing is no part of the value).
impl fmt::Debug for PartitionRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PartitionRegistration")
            .field("replicas", &self.replicas())
            .field("directories", &self.directories())
            .field("isr", &self.isr())
            .field("removing_replicas", &self.removing_replicas())
            .field("adding_replicas", &self.adding_replicas())
            .field("leader", &self.leader)
            .field("leader_recovery_state", &self.leader_recovery_state)
            .field("leader_epoch", &self.leader_epoch)
            .field("partition_epoch", &self.partition_epoch)
            .field("elr", &self.elr())
            .field("last_known_elr", &self.last_known_elr())
            .finish()
    }
}

/// The fields of a registration that are not lists.
struct Scalars {
    leader: i32,
    leader_epoch: i32,
    partition_epoch: i32,
    leader_recovery_state: i8,
}

/// PartitionChangeRecord.leader_recovery_state: unchanged.
const NO_RECOVERY_STATE_CHANGE: i8 = -1;

fn leader_recovery_state(value: i8, record: &'static str) -> Result<i8, ReplayError> {
    match value {
        0 | 1 => Ok(value),
        v => Err(ReplayError::BadValue {
            record,
            field: "leader_recovery_state",
            value: i64::from(v),
        }),
    }
}

impl PartitionRegistration {
    /// Whether its preferred replica (the first) leads (Kafka's `hasPreferredLeader`); a
    /// leaderless partition has not.
    pub fn has_preferred_leader(&self) -> bool {
        self.leader == self.replicas().first().copied().unwrap_or(-1)
    }

    /// Whether a reassignment is in progress (Kafka's `isReassignmentInProgress`).
    pub fn is_reassigning(&self) -> bool {
        !self.adding_replicas().is_empty() || !self.removing_replicas().is_empty()
    }

    /// The state a PartitionRecord sets (whole, replacing any earlier state). Kafka keeps
    /// "migrating" (the all-zero id) for every replica when no directory is known: a
    /// missing or empty list, or one holding only that id, becomes one per replica.
    pub fn from_record(r: &PartitionRecord) -> Result<Self, ReplayError> {
        if !r.directories.is_empty() && r.directories.len() != r.replicas.len() {
            return Err(ReplayError::ReplicaDirectories {
                topic_id: r.topic_id,
                partition_id: r.partition_id,
                replicas: r.replicas.len(),
                directories: r.directories.len(),
            });
        }
        let migrating = r.directories.iter().all(Uuid::is_nil);
        Ok(Self::pack(
            Scalars {
                leader: r.leader,
                leader_epoch: r.leader_epoch,
                partition_epoch: r.partition_epoch,
                leader_recovery_state: leader_recovery_state(
                    r.leader_recovery_state,
                    "PartitionRecord",
                )?,
            },
            [
                &r.replicas,
                &r.isr,
                &r.removing_replicas,
                &r.adding_replicas,
                // Null (the feature off) and empty are the same to the image.
                r.eligible_leader_replicas.as_deref().unwrap_or_default(),
                r.last_known_elr.as_deref().unwrap_or_default(),
            ],
            if migrating { &[] } else { &r.directories },
            migrating,
        ))
    }

    /// This state after a PartitionChangeRecord: null fields stay, a leader other than -2
    /// (-1 "no leader" included) bumps the leader epoch, and every change bumps the partition
    /// epoch.
    pub fn merge(&self, r: PartitionChangeRecord) -> Result<Self, ReplayError> {
        let mut next = self.clone();
        next.apply_change(r)?;
        Ok(next)
    }

    /// [`Self::merge`] in place: the record is checked whole before anything changes, and
    /// the fields it leaves null stay as they are.
    pub fn apply_change(&mut self, r: PartitionChangeRecord) -> Result<(), ReplayError> {
        if let (Some(replicas), Some(dirs)) = (&r.replicas, &r.directories) {
            if !dirs.is_empty() && dirs.len() != replicas.len() {
                return Err(ReplayError::ReplicaDirectories {
                    topic_id: r.topic_id,
                    partition_id: r.partition_id,
                    replicas: replicas.len(),
                    directories: dirs.len(),
                });
            }
        }
        let leader_recovery_state = match r.leader_recovery_state {
            NO_RECOVERY_STATE_CHANGE => self.leader_recovery_state,
            v => leader_recovery_state(v, "PartitionChangeRecord")?,
        };
        if r.leader != NO_LEADER_CHANGE {
            self.leader = r.leader;
            self.leader_epoch += 1;
        }
        self.leader_recovery_state = leader_recovery_state;
        self.partition_epoch += 1;
        let lists_change = r.replicas.is_some()
            || r.directories.is_some()
            || r.isr.is_some()
            || r.removing_replicas.is_some()
            || r.adding_replicas.is_some()
            || r.eligible_leader_replicas.is_some()
            || r.last_known_elr.is_some();
        // A stored all-zero list of another length is resized below, as on any change.
        let resize = !self.migrating
            && usize::from(self.lengths[DIRECTORIES]) != self.replicas().len()
            && self.directories().iter().all(Uuid::is_nil);
        if !lists_change && !resize {
            return Ok(());
        }
        self.edit(|p| {
            if let Some(replicas) = r.replicas {
                p.replicas = replicas;
            }
            // Without new directories the old ones stay, resized only while all are
            // "migrating" (Kafka does the same, even if a reassignment changed the replica
            // count).
            if let Some(dirs) = r.directories {
                p.directories = dirs;
            }
            if p.directories.iter().all(Uuid::is_nil) && p.directories.len() != p.replicas.len() {
                p.directories = vec![Uuid::nil(); p.replicas.len()];
            }
            let replace = |field: &mut Vec<i32>, value: Option<Vec<i32>>| {
                if let Some(v) = value {
                    *field = v;
                }
            };
            replace(&mut p.isr, r.isr);
            replace(&mut p.removing_replicas, r.removing_replicas);
            replace(&mut p.adding_replicas, r.adding_replicas);
            replace(&mut p.elr, r.eligible_leader_replicas);
            replace(&mut p.last_known_elr, r.last_known_elr);
        });
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(replicas: &[i32], dirs: Vec<Uuid>) -> PartitionParts {
        PartitionParts {
            replicas: replicas.to_vec(),
            directories: dirs,
            isr: replicas.to_vec(),
            leader: replicas.first().copied().unwrap_or(-1),
            leader_epoch: 3,
            partition_epoch: 7,
            ..Default::default()
        }
    }

    #[test]
    fn packing_keeps_every_list_and_directory() {
        let dirs: Vec<Uuid> = (1..=5u128).map(Uuid::from_u128).collect();
        let mut p = parts(&[1, 2, 3, 4, 5], dirs.clone());
        p.removing_replicas = vec![4, 5];
        p.adding_replicas = vec![1];
        p.elr = vec![9];
        p.last_known_elr = vec![8, 7];
        let packed = PartitionRegistration::from_parts(p.clone());
        assert!(matches!(packed.words, Words::Heap(_)));
        assert_eq!(packed.to_parts(), p);
        assert_eq!(packed.directory(4), Some(dirs[4]));
        assert_eq!(packed.directory(5), None);
    }

    #[test]
    fn three_replicas_with_directories_stay_inline() {
        let dirs: Vec<Uuid> = (10..13u128).map(Uuid::from_u128).collect();
        let p = parts(&[4, 5, 6], dirs);
        let packed = PartitionRegistration::from_parts(p.clone());
        assert!(matches!(packed.words, Words::Inline(_)));
        assert_eq!(packed.to_parts(), p);
        assert!(std::mem::size_of::<PartitionRegistration>() <= 72);
    }

    #[test]
    fn migrating_directories_take_no_words_but_other_lengths_are_kept() {
        let p = parts(&[1, 2], vec![Uuid::nil(); 2]);
        let packed = PartitionRegistration::from_parts(p.clone());
        assert!(packed.migrating);
        assert_eq!(packed.to_parts(), p);
        // All zero but not one per replica: kept as given.
        let odd = parts(&[1, 2], vec![Uuid::nil(); 3]);
        let packed = PartitionRegistration::from_parts(odd.clone());
        assert!(!packed.migrating);
        assert_eq!(packed.to_parts(), odd);
        // Empty stays empty.
        let none = parts(&[1, 2], Vec::new());
        assert_eq!(
            PartitionRegistration::from_parts(none.clone()).to_parts(),
            none
        );
    }

    #[test]
    fn equal_states_compare_equal_whatever_their_history() {
        let dirs: Vec<Uuid> = (20..23u128).map(Uuid::from_u128).collect();
        let a = PartitionRegistration::from_parts(parts(&[1, 2, 3], dirs.clone()));
        let mut b = PartitionRegistration::from_parts(parts(&[1, 2], Vec::new()));
        b.edit(|p| {
            p.replicas = vec![1, 2, 3];
            p.isr = vec![1, 2, 3];
            p.directories = dirs;
        });
        assert_eq!(a, b);
        b.edit(|p| p.isr = vec![1, 2]);
        assert_ne!(a, b);
    }
}
