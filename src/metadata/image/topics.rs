//! Topics and partitions (Kafka's `TopicsDelta`, `TopicDelta`, `PartitionRegistration`).

use std::collections::BTreeMap;
use std::sync::Arc;

use uuid::Uuid;

use super::configs::{resource, ConfigResource};
pub use super::partition::{PartitionParts, PartitionRegistration};
use super::{MetadataImage, ReplayError};
use crate::metadata::records::{
    ClearElrRecord, PartitionChangeRecord, PartitionRecord, RemoveTopicRecord, TopicRecord,
};

/// PartitionChangeRecord.leader: the leader stays (and so does the leader epoch).
pub const NO_LEADER_CHANGE: i32 = -2;

/// What the controller asks of all partitions at once, kept as they change (Kafka's
/// ReplicationControlManager keeps its `imbalancedPartitions` and the controller metrics'
/// counts incrementally too): so that a write, a heartbeat or a metrics update costs what it
/// changes, not the size of the image.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionStats {
    /// Partitions.
    pub partitions: usize,
    /// Partitions without a leader.
    pub offline: usize,
    /// Partitions not led by their preferred (first) replica, leaderless ones included.
    pub imbalanced: usize,
    /// Partitions each broker leads (brokers leading none absent).
    pub leaders: BTreeMap<i32, usize>,
}

impl PartitionStats {
    fn add(&mut self, p: &PartitionRegistration) {
        self.partitions += 1;
        if p.leader < 0 {
            self.offline += 1;
        } else {
            *self.leaders.entry(p.leader).or_insert(0) += 1;
        }
        if !p.has_preferred_leader() {
            self.imbalanced += 1;
        }
    }

    fn remove(&mut self, p: &PartitionRegistration) {
        self.remove_led(p.leader, p.has_preferred_leader());
    }

    /// [`Self::remove`] of a partition that had `leader`, led by its preferred replica or
    /// not (what the counts read of it, kept across an in-place change).
    fn remove_led(&mut self, leader: i32, preferred_leader: bool) {
        self.partitions = self.partitions.saturating_sub(1);
        if leader < 0 {
            self.offline = self.offline.saturating_sub(1);
        } else if let Some(n) = self.leaders.get_mut(&leader) {
            *n -= 1;
            if *n == 0 {
                self.leaders.remove(&leader);
            }
        }
        if !preferred_leader {
            self.imbalanced = self.imbalanced.saturating_sub(1);
        }
    }

    /// The statistics of `topics`, counted afresh (to check the kept ones against).
    pub fn count<'a>(topics: impl IntoIterator<Item = &'a Arc<TopicImage>>) -> Self {
        let mut stats = Self::default();
        for t in topics {
            for p in t.partitions.values() {
                stats.add(p);
            }
        }
        stats
    }
}

/// One topic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicImage {
    /// Name.
    pub name: String,
    /// Id.
    pub id: Uuid,
    /// Partitions by index, each shared like the topic: an image copied from another holds
    /// the same registrations, and a change copies the one partition it changes (Kafka's
    /// TopicImage keeps its partitions in a persistent map for the same reason).
    pub partitions: BTreeMap<i32, Arc<PartitionRegistration>>,
    /// The brokers in its partitions' ISRs, kept by replay.
    pub isr_members: IsrMembers,
    /// What this node's replay did to the topic beyond its value (see [`ReplayHistory`]).
    pub history: ReplayHistory,
}

/// Replay history that shapes Kafka's own tables (the iteration order of a topic's `parts`
/// TimelineHashMap, which ElectLeaders over every partition follows) but is no part of the
/// image's value: it compares equal to any other, so a node that loaded a snapshot and one
/// that replayed the log hold equal images (a Kafka controller loading the snapshot would
/// build its tables afresh too).
#[derive(Debug, Clone, Default)]
pub struct ReplayHistory {
    /// A partition change (or a second PartitionRecord of a partition) was replayed after the
    /// topic's last new partition: Kafka's `parts.put` then checked the table's load for one
    /// more entry, which may have doubled it.
    pub changed_since_last_partition_added: bool,
    /// The partitions being reassigned, in the order their reassignments started (Kafka's
    /// `reassigningTopics` entry of the topic: `Replicas.copyWith` appends, `copyWithout`
    /// keeps the others' order), which ListPartitionReassignments of every partition follows.
    pub reassigning: Vec<i32>,
}

impl ReplayHistory {
    /// Kafka's `updateReassigningTopicsIfNeeded`.
    fn reassigning_changed(&mut self, partition_id: i32, was: bool, is: bool) {
        if !was && is {
            self.reassigning.push(partition_id);
        } else if was && !is {
            self.reassigning.retain(|p| *p != partition_id);
        }
    }
}

impl TopicImage {
    /// The partitions being reassigned in the order Kafka lists them (the order their
    /// reassignments started; by id when the image was not replayed from their start, as a
    /// Kafka controller that loaded a snapshot lists them).
    pub fn reassigning_in_kafka_order(&self) -> Vec<i32> {
        let mut now: Vec<i32> = self
            .partitions
            .iter()
            .filter(|(_, p)| p.is_reassigning())
            .map(|(id, _)| *id)
            .collect();
        let mut replayed = self.history.reassigning.clone();
        replayed.sort_unstable();
        if replayed == now {
            now = self.history.reassigning.clone();
        }
        now
    }
}

impl PartialEq for ReplayHistory {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for ReplayHistory {}

impl TopicImage {
    /// Whether some partition's ISR holds `broker_id`: a broker's fencing or shutdown visits
    /// only the topics where it is in sync (Kafka keeps `BrokersToIsrs` for the same), not
    /// every partition of the image.
    pub fn isr_holds(&self, broker_id: i32) -> bool {
        self.isr_members.holds(broker_id)
    }
}

/// Brokers in some ISR of a topic, each with the number of its partitions whose ISR holds it;
/// sorted by broker id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IsrMembers(Vec<(i32, u32)>);

impl IsrMembers {
    /// Whether some ISR holds `broker_id`.
    pub fn holds(&self, broker_id: i32) -> bool {
        self.0.binary_search_by_key(&broker_id, |(b, _)| *b).is_ok()
    }

    /// Counts the members of one partition's ISR in.
    fn add(&mut self, isr: &[i32]) {
        for b in isr {
            match self.0.binary_search_by_key(b, |(id, _)| *id) {
                Ok(i) => self.0[i].1 += 1,
                Err(i) => self.0.insert(i, (*b, 1)),
            }
        }
    }

    /// Counts the members of one partition's former ISR out.
    fn remove(&mut self, isr: &[i32]) {
        for b in isr {
            if let Ok(i) = self.0.binary_search_by_key(b, |(id, _)| *id) {
                self.0[i].1 -= 1;
                if self.0[i].1 == 0 {
                    self.0.remove(i);
                }
            }
        }
    }

    /// The members counted afresh over `partitions` (to check the kept ones against).
    pub fn count<'a>(partitions: impl IntoIterator<Item = &'a Arc<PartitionRegistration>>) -> Self {
        let mut members = Self::default();
        for p in partitions {
            members.add(p.isr());
        }
        members
    }
}

/// The form under which a name holding '.' or '_' collides with others (the two are the same
/// in metric names): Kafka's `Topic.unifyCollisionChars`; `None` for a name with neither.
pub fn collision_form(name: &str) -> Option<String> {
    (name.contains('.') || name.contains('_')).then(|| name.replace('.', "_"))
}

impl MetadataImage {
    /// Holds `other`'s copy of topic `id` when the two are equal, so that a topic both
    /// images built from the same records (or one copied on a change the other has since
    /// replayed) is held once again; whether the topic is shared now. Only where the value
    /// lives changes, never the value: the comparison costs the partitions not shared yet.
    pub fn share_topic_with(&mut self, other: &MetadataImage, id: Uuid) -> bool {
        let (Some(mine), Some(theirs)) = (self.topics.get_mut(&id), other.topics.get(&id)) else {
            return false;
        };
        if Arc::ptr_eq(mine, theirs) {
            return true;
        }
        if **mine != **theirs {
            return false;
        }
        *mine = Arc::clone(theirs);
        true
    }

    /// A topic other than `name` whose name collides with it, the first in name order.
    pub fn colliding_topic(&self, name: &str) -> Option<&str> {
        let names = self.topics_by_collision_form.get(&collision_form(name)?)?;
        names.iter().map(String::as_str).find(|n| *n != name)
    }

    pub(super) fn replay_topic(&mut self, r: TopicRecord) -> Result<(), ReplayError> {
        // A TopicRecord starts the topic with no partitions; its PartitionRecords follow.
        self.topic_ids.insert(r.name.clone(), r.topic_id);
        if let Some(form) = collision_form(&r.name) {
            self.topics_by_collision_form
                .entry(form)
                .or_default()
                .insert(r.name.clone());
        }
        let replaced = self.topics.insert(
            r.topic_id,
            Arc::new(TopicImage {
                name: r.name,
                id: r.topic_id,
                partitions: BTreeMap::new(),
                isr_members: IsrMembers::default(),
                history: ReplayHistory::default(),
            }),
        );
        for p in replaced.iter().flat_map(|t| t.partitions.values()) {
            self.partition_stats.remove(p);
        }
        Ok(())
    }

    pub(super) fn replay_partition(&mut self, r: PartitionRecord) -> Result<(), ReplayError> {
        let topic = Arc::make_mut(
            self.topics
                .get_mut(&r.topic_id)
                .ok_or(ReplayError::UnknownTopic(r.topic_id))?,
        );
        let id = r.partition_id;
        let registration = PartitionRegistration::from_record(&r)?;
        self.partition_stats.add(&registration);
        topic.isr_members.add(registration.isr());
        let is = registration.is_reassigning();
        if let Some(old) = topic.partitions.insert(id, Arc::new(registration)) {
            self.partition_stats.remove(&old);
            topic.isr_members.remove(old.isr());
            topic.history.changed_since_last_partition_added = true;
            topic
                .history
                .reassigning_changed(id, old.is_reassigning(), is);
        } else {
            topic.history.changed_since_last_partition_added = false;
            topic.history.reassigning_changed(id, false, is);
        }
        Ok(())
    }

    pub(super) fn replay_partition_change(
        &mut self,
        r: PartitionChangeRecord,
    ) -> Result<(), ReplayError> {
        let topic = Arc::make_mut(
            self.topics
                .get_mut(&r.topic_id)
                .ok_or(ReplayError::UnknownTopic(r.topic_id))?,
        );
        let partition_id = r.partition_id;
        topic.history.changed_since_last_partition_added = true;
        let TopicImage {
            partitions,
            isr_members,
            history,
            ..
        } = topic;
        let partition = Arc::make_mut(partitions.get_mut(&partition_id).ok_or(
            ReplayError::UnknownPartition {
                topic_id: r.topic_id,
                partition_id,
            },
        )?);
        // In place: a change rewrites the fields it carries, not the whole registration.
        let (leader, preferred_leader) = (partition.leader, partition.has_preferred_leader());
        let old_isr = r.isr.as_ref().map(|_| partition.isr().to_vec());
        let was_reassigning = partition.is_reassigning();
        partition.apply_change(r)?;
        history.reassigning_changed(partition_id, was_reassigning, partition.is_reassigning());
        self.partition_stats.remove_led(leader, preferred_leader);
        self.partition_stats.add(partition);
        if let Some(old_isr) = old_isr {
            isr_members.remove(&old_isr);
            isr_members.add(partition.isr());
        }
        Ok(())
    }

    /// RemoveTopicRecord: the topic, its partitions and its dynamic configs go.
    pub(super) fn replay_remove_topic(&mut self, r: &RemoveTopicRecord) -> Result<(), ReplayError> {
        let topic = self
            .topics
            .remove(&r.topic_id)
            .ok_or(ReplayError::UnknownTopic(r.topic_id))?;
        for p in topic.partitions.values() {
            self.partition_stats.remove(p);
        }
        if self.topic_ids.get(&topic.name) == Some(&r.topic_id) {
            self.topic_ids.remove(&topic.name);
            if let Some(form) = collision_form(&topic.name) {
                if let Some(names) = self.topics_by_collision_form.get_mut(&form) {
                    names.remove(&topic.name);
                    if names.is_empty() {
                        self.topics_by_collision_form.remove(&form);
                    }
                }
            }
        }
        self.configs.remove(&ConfigResource {
            resource_type: resource::TOPIC,
            resource_name: topic.name.clone(),
        });
        Ok(())
    }

    /// ClearElrRecord: empty the ELR and last known ELR of one topic's partitions (all topics
    /// when the name is empty). Only partitions that had some change, and their partition
    /// epoch goes up by one, as any partition change does.
    pub(super) fn replay_clear_elr(&mut self, r: &ClearElrRecord) -> Result<(), ReplayError> {
        let ids: Vec<Uuid> = if r.topic_name.is_empty() {
            self.topics.keys().copied().collect()
        } else {
            vec![*self
                .topic_ids
                .get(&r.topic_name)
                .ok_or_else(|| ReplayError::UnknownTopicName(r.topic_name.clone()))?]
        };
        for id in ids {
            let Some(topic) = self.topics.get_mut(&id) else {
                continue;
            };
            // Copied from a shared topic only if one of its partitions changes.
            if !topic
                .partitions
                .values()
                .any(|p| !p.elr().is_empty() || !p.last_known_elr().is_empty())
            {
                continue;
            }
            for p in Arc::make_mut(topic).partitions.values_mut() {
                if !p.elr().is_empty() || !p.last_known_elr().is_empty() {
                    let p = Arc::make_mut(p);
                    p.edit(|p| {
                        p.elr.clear();
                        p.last_known_elr.clear();
                    });
                    p.partition_epoch += 1;
                }
            }
        }
        Ok(())
    }
}
