//! One partition's change (Kafka's `PartitionChangeBuilder`): a target ISR and replica set,
//! an election, and the PartitionChangeRecord that gets there, or none when nothing changes.
//!
//! ```text
//!   current registration + targets ─▶ ELR (with eligible.leader.replicas.version ≥ 1: the
//!   in-sync replicas leaving an ISR that drops below min.insync.replicas)
//!   ─▶ elect (keep an acceptable leader, else the first acceptable in-sync replica in
//!   replica order, or an ELR member when the ISR is empty; then the last known leader;
//!   unclean: any acceptable replica)
//!   ─▶ ISR (emptied only with ELR) ─▶ last known leader ─▶ assignment
//!   ─▶ record, or None if it changes nothing
//! ```

use uuid::Uuid;

use crate::common::uuid::uuid_to_kafka_string;
use crate::metadata::image::{PartitionRegistration, NO_LEADER_CHANGE};
use crate::metadata::records::{MetadataRecord, PartitionChangeRecord};

/// No leader (Kafka's `LeaderConstants.NO_LEADER`).
pub const NO_LEADER: i32 = -1;

/// How a leader is chosen (Kafka's `PartitionChangeBuilder.Election`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Election {
    /// The preferred (first) replica when it can lead, else as `Online`.
    Preferred,
    /// Keep an acceptable leader, else the first acceptable in-sync replica.
    Online,
    /// As `Online`, then any acceptable replica out of the ISR (data may be lost).
    Unclean,
}

/// LeaderRecoveryState values.
pub const RECOVERED: i8 = 0;
/// After an unclean election, until the leader reports RECOVERED.
pub const RECOVERING: i8 = 1;

/// Builds the change of one partition.
pub struct PartitionChangeBuilder<'a> {
    partition: &'a PartitionRegistration,
    topic_id: Uuid,
    partition_id: i32,
    is_acceptable_leader: &'a dyn Fn(i32) -> bool,
    election: Election,
    target_isr: Vec<i32>,
    target_replicas: Vec<i32>,
    target_removing: Vec<i32>,
    target_adding: Vec<i32>,
    target_recovery_state: i8,
    /// metadata.version before 3.6-IV0: an ISR shrink bumps the leader epoch (KAFKA-15021).
    bump_on_isr_shrink: bool,
    /// Eligible leader replicas (KIP-966) are on.
    elr_enabled: bool,
    /// The topic's effective min.insync.replicas (only read with ELR on).
    min_isr: usize,
    /// The last known leader follows KAFKA-19522 ([`crate::common::release::Release::guards_last_known_leader`]).
    guard_last_known_leader: bool,
    target_elr: Vec<i32>,
    /// Replicas that shut down uncleanly (KIP-966): they may have lost data, so they never
    /// become eligible.
    unclean_shutdown_replicas: Vec<i32>,
    /// Where a replica new to the partition goes, when the metadata.version records
    /// directories (Kafka's `DefaultDirProvider`); `None`: directories are left as they are.
    new_replica_dir: Option<Box<dyn Fn(i32) -> Uuid + 'a>>,
}

/// The outcome of an election.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Elected {
    node: i32,
    unclean: bool,
}

impl<'a> PartitionChangeBuilder<'a> {
    /// A change of `partition` in which a broker may lead when `is_acceptable_leader` says
    /// so (registered, unfenced, not shutting down, as the caller sees it).
    pub fn new(
        partition: &'a PartitionRegistration,
        topic_id: Uuid,
        partition_id: i32,
        is_acceptable_leader: &'a dyn Fn(i32) -> bool,
    ) -> Self {
        Self {
            partition,
            topic_id,
            partition_id,
            is_acceptable_leader,
            election: Election::Online,
            target_isr: partition.isr().to_vec(),
            target_replicas: partition.replicas().to_vec(),
            target_removing: partition.removing_replicas().to_vec(),
            target_adding: partition.adding_replicas().to_vec(),
            target_recovery_state: partition.leader_recovery_state,
            bump_on_isr_shrink: false,
            elr_enabled: false,
            min_isr: 1,
            guard_last_known_leader: true,
            target_elr: partition.elr().to_vec(),
            unclean_shutdown_replicas: Vec::new(),
            new_replica_dir: None,
        }
    }

    /// The replica list to reach.
    pub fn target_replicas(mut self, replicas: Vec<i32>) -> Self {
        self.target_replicas = replicas;
        self
    }

    /// The replicas a reassignment is removing.
    pub fn target_removing(mut self, removing: Vec<i32>) -> Self {
        self.target_removing = removing;
        self
    }

    /// The replicas a reassignment is adding.
    pub fn target_adding(mut self, adding: Vec<i32>) -> Self {
        self.target_adding = adding;
        self
    }

    /// Record each replica's directory (existing replicas keep theirs, new ones get
    /// `provider`'s), as Kafka does from metadata.version 3.7-IV2; `None` below it.
    pub fn directories_of_new_replicas(
        mut self,
        provider: Option<Box<dyn Fn(i32) -> Uuid + 'a>>,
    ) -> Self {
        self.new_replica_dir = provider;
        self
    }

    /// Kafka's `completeReassignmentIfNeeded`: once the ISR holds every target replica (and
    /// one that stays, when replicas are removed), the reassignment ends: replicas become
    /// the target, the removed ones leave the ISR, the lists are cleared.
    fn complete_reassignment_if_needed(&mut self) {
        if self.target_removing.is_empty() && self.target_adding.is_empty() {
            return;
        }
        let removing = &self.target_removing;
        let isr: Vec<i32> = self
            .target_isr
            .iter()
            .copied()
            .filter(|r| !removing.contains(r))
            .collect();
        let replicas: Vec<i32> = self
            .target_replicas
            .iter()
            .copied()
            .filter(|r| !removing.contains(r))
            .collect();
        if isr.is_empty() || replicas.is_empty() || !replicas.iter().all(|r| isr.contains(r)) {
            return;
        }
        self.target_isr = isr;
        self.target_replicas = replicas;
        self.target_removing.clear();
        self.target_adding.clear();
    }

    /// Track eligible leader replicas (eligible.leader.replicas.version ≥ 1) against the
    /// topic's effective `min_isr`.
    pub fn eligible_leader_replicas(mut self, enabled: bool, min_isr: usize) -> Self {
        self.elr_enabled = enabled;
        self.min_isr = min_isr;
        self
    }

    /// Whether the last known leader follows KAFKA-19522 (the presented release's
    /// [`crate::common::release::Release::guards_last_known_leader`]; on unless told otherwise).
    pub fn guard_last_known_leader(mut self, guard: bool) -> Self {
        self.guard_last_known_leader = guard;
        self
    }

    /// Replicas that shut down uncleanly: left out of the ELR (Kafka's
    /// `setUncleanShutdownReplicas`).
    pub fn unclean_shutdown_replicas(mut self, replicas: Vec<i32>) -> Self {
        self.unclean_shutdown_replicas = replicas;
        self
    }

    /// Bump the leader epoch when the ISR shrinks (metadata.version below 3.6-IV0).
    pub fn bump_leader_epoch_on_isr_shrink(mut self, bump: bool) -> Self {
        self.bump_on_isr_shrink = bump;
        self
    }

    /// How to elect.
    pub fn election(mut self, election: Election) -> Self {
        self.election = election;
        self
    }

    /// The ISR to reach.
    pub fn target_isr(mut self, isr: Vec<i32>) -> Self {
        self.target_isr = isr;
        self
    }

    /// The leader recovery state to reach (AlterPartition's).
    pub fn target_recovery_state(mut self, state: i8) -> Self {
        self.target_recovery_state = state;
        self
    }

    /// An in-sync replica, or an eligible one when the ISR is empty, that may lead.
    fn is_valid_new_leader(&self, replica: i32) -> bool {
        (self.target_isr.contains(&replica)
            || (self.target_isr.is_empty() && self.target_elr.contains(&replica)))
            && (self.is_acceptable_leader)(replica)
    }

    /// Kafka's `maybePopulateTargetElr`: with the target ISR below min.insync.replicas, the
    /// ELR becomes the current ISR and ELR members that leave the ISR (in the iteration
    /// order of Java's `HashSet<Integer>`, which Kafka collects them from); at or above it,
    /// the ELR empties.
    fn populate_target_elr(&mut self) {
        if !self.elr_enabled {
            return;
        }
        if self.target_isr.len() >= self.min_isr {
            self.target_elr.clear();
            return;
        }
        let mut candidates = self.target_elr.clone();
        for r in self.partition.isr() {
            if !candidates.contains(r) {
                candidates.push(*r);
            }
        }
        let initial = self.target_elr.len();
        java_hash_set_order(&mut candidates, initial);
        candidates.retain(|r| {
            !self.target_isr.contains(r) && !self.unclean_shutdown_replicas.contains(r)
        });
        self.target_elr = candidates;
    }

    /// The last known leader election (Kafka's `canElectLastKnownLeader`, with the last known
    /// leader kept in LastKnownElr): no ISR, no ELR, and exactly one last known member, which
    /// must be an acceptable leader under KAFKA-19522 (Kafka 4.0 elects it even when fenced).
    fn can_elect_last_known_leader(&self) -> bool {
        self.elr_enabled
            && self.target_elr.is_empty()
            && self.target_isr.is_empty()
            && self.partition.last_known_elr().len() == 1
            && (!self.guard_last_known_leader
                || (self.is_acceptable_leader)(self.partition.last_known_elr()[0]))
    }

    fn elect(&self) -> Elected {
        let clean = |node| Elected {
            node,
            unclean: false,
        };
        if self.election == Election::Preferred {
            if let Some(&preferred) = self.target_replicas.first() {
                if self.is_valid_new_leader(preferred) {
                    return clean(preferred);
                }
            }
        }
        if self.is_valid_new_leader(self.partition.leader) {
            return clean(self.partition.leader);
        }
        if let Some(&r) = self
            .target_replicas
            .iter()
            .find(|r| self.is_valid_new_leader(**r))
        {
            return clean(r);
        }
        if self.can_elect_last_known_leader() {
            return Elected {
                node: self.partition.last_known_elr()[0],
                unclean: true,
            };
        }
        if self.election == Election::Unclean {
            if let Some(&r) = self
                .target_replicas
                .iter()
                .find(|r| (self.is_acceptable_leader)(**r))
            {
                return Elected {
                    node: r,
                    unclean: true,
                };
            }
        }
        clean(NO_LEADER)
    }

    /// The record that makes the change, or `None` when the partition would not change.
    pub fn build(mut self) -> Option<PartitionChangeRecord> {
        let mut record = PartitionChangeRecord {
            partition_id: self.partition_id,
            topic_id: self.topic_id,
            leader: NO_LEADER_CHANGE,
            leader_recovery_state: -1,
            ..Default::default()
        };
        self.complete_reassignment_if_needed();
        self.populate_target_elr();
        let elected = self.elect();
        // Kafka's PartitionChangeBuilder logs the elections from the ELR and the unclean ones
        // at INFO (clean ones at DEBUG).
        let mut election_kind = None;
        if elected.node != self.partition.leader {
            if elected.unclean {
                election_kind = Some("an unclean election");
            } else if self.target_elr.contains(&elected.node) {
                election_kind = Some("ELR");
            }
            if self.target_elr.contains(&elected.node) {
                // An eligible replica leads: it alone is in sync, and leaves the ELR.
                self.target_isr = vec![elected.node];
                self.target_elr.retain(|r| *r != elected.node);
            }
            record.leader = elected.node;
            if elected.unclean {
                // The new leader alone is in sync, and it must recover first.
                record.isr = Some(vec![elected.node]);
                self.target_isr = vec![elected.node];
                self.target_recovery_state = RECOVERING;
            }
        }
        // A replica leaving the assignment must not keep following the old epoch.
        if record.leader == NO_LEADER_CHANGE
            && !self
                .partition
                .replicas()
                .iter()
                .all(|r| self.target_replicas.contains(r))
        {
            record.leader = self.partition.leader;
        }
        // An unclean election (which set the ISR) or ELR off clears the ELR.
        if record.isr.is_some() || !self.elr_enabled {
            self.target_elr.clear();
        }
        if self.target_elr != self.partition.elr() {
            record.eligible_leader_replicas = Some(self.target_elr.clone());
        }
        // Without ELR the ISR never becomes empty: the last member stays, leaderless, and
        // leads again once it is back (Kafka keeps it so no committed data is skipped). With
        // ELR it may empty: the ELR then says who can lead.
        if record.isr.is_none()
            && (!self.target_isr.is_empty() || self.elr_enabled)
            && self.target_isr != self.partition.isr()
        {
            record.isr = Some(self.target_isr.clone());
        }
        if self.bump_on_isr_shrink && record.leader == NO_LEADER_CHANGE {
            if let Some(isr) = &record.isr {
                if !self.partition.isr().iter().all(|r| isr.contains(r)) {
                    record.leader = self.partition.leader;
                }
            }
        }
        self.update_last_known_leader(&mut record);
        if !self.target_replicas.is_empty() {
            // Directories follow the replicas wherever the partition records them (a
            // completed reassignment drops some in any change of the partition).
            let current = self.partition.directories();
            if self.new_replica_dir.is_some() || !current.is_empty() {
                let directories: Vec<Uuid> = self
                    .target_replicas
                    .iter()
                    .map(|r| {
                        self.partition
                            .replicas()
                            .iter()
                            .position(|x| x == r)
                            .and_then(|i| current.get(i).copied())
                            .or_else(|| self.new_replica_dir.as_ref().map(|f| f(*r)))
                            .unwrap_or_else(Uuid::nil)
                    })
                    .collect();
                if directories != current {
                    record.directories = Some(directories);
                }
            }
            if self.target_replicas != self.partition.replicas() {
                record.replicas = Some(self.target_replicas.clone());
            }
        }
        if self.target_removing != self.partition.removing_replicas() {
            record.removing_replicas = Some(self.target_removing.clone());
        }
        if self.target_adding != self.partition.adding_replicas() {
            record.adding_replicas = Some(self.target_adding.clone());
        }
        if self.target_recovery_state != self.partition.leader_recovery_state {
            record.leader_recovery_state = self.target_recovery_state;
        }
        let no_op = record.leader == NO_LEADER_CHANGE
            && record.isr.is_none()
            && record.replicas.is_none()
            && record.removing_replicas.is_none()
            && record.adding_replicas.is_none()
            && record.leader_recovery_state == -1
            && record.directories.is_none()
            && record.eligible_leader_replicas.is_none()
            && record.last_known_elr.is_none();
        if let (Some(kind), false) = (election_kind, no_op) {
            tracing::info!(
                "Setting new leader for topicId {}, partition {} to {} using {kind}. Previous \
                 partition: {}, change record: {}",
                uuid_to_kafka_string(&self.topic_id),
                self.partition_id,
                elected.node,
                crate::controller::change_log::registration_text(self.partition),
                MetadataRecord::PartitionChange(record.clone()).to_kafka_string()
            );
        }
        (!no_op).then_some(record)
    }

    /// Kafka's `maybeUpdateLastKnownLeader`: with ELR on, LastKnownElr holds the leader a
    /// partition had when it lost it, and is cleared once it has a leader again. Under
    /// KAFKA-19522 "lost" is a change to no leader while none is recorded and "again" a change
    /// that names a leader; Kafka 4.0 records it whenever the ISR empties (even `[-1]` for a
    /// partition already leaderless) and also clears it while a leader stays.
    fn update_last_known_leader(&self, record: &mut PartitionChangeRecord) {
        if !self.elr_enabled {
            return;
        }
        let known = &self.partition.last_known_elr();
        if self.guard_last_known_leader {
            if record.leader == NO_LEADER && known.is_empty() {
                record.last_known_elr = Some(vec![self.partition.leader]);
            } else if record.leader >= 0 && !known.is_empty() {
                record.last_known_elr = Some(Vec::new());
            }
            return;
        }
        let emptied = record.isr.as_ref().is_some_and(Vec::is_empty);
        if emptied && (known.len() != 1 || known[0] != self.partition.leader) {
            record.last_known_elr = Some(vec![self.partition.leader]);
        } else if (record.leader >= 0
            || (self.partition.leader != NO_LEADER && record.leader != NO_LEADER))
            && !known.is_empty()
        {
            record.last_known_elr = Some(Vec::new());
        }
    }
}

/// Orders distinct `items` as a `java.util.HashSet<Integer>` built with the copy constructor
/// from the first `initial` of them (table of at least 16 buckets), the rest added one by
/// one, iterates: by bucket (`Integer.hashCode` spread and masked), ties in insertion order.
fn java_hash_set_order(items: &mut [i32], initial: usize) {
    let mut table = ((initial as f64 / 0.75) as usize + 1)
        .next_power_of_two()
        .max(16);
    while items.len() as f64 > table as f64 * 0.75 {
        table *= 2;
    }
    let bucket = |v: i32| {
        let h = v as u32;
        ((h ^ (h >> 16)) as usize) & (table - 1)
    };
    // A stable sort keeps insertion order within a bucket.
    items.sort_by_key(|v| bucket(*v));
}
