//! Topic and partition records: creation, deletion, and every later change of a partition's
//! replicas, leader and ISR.

use uuid::Uuid;

use crate::metadata::describe::metadata_struct;

metadata_struct! {
    /// TopicRecord (key 2): a topic created; its PartitionRecords follow.
    #[derive(Eq)]
    pub struct TopicRecord {
        /// Topic name.
        name: String [0+],
        /// Topic id.
        topic_id: Uuid [0+],
    }
}

metadata_struct! {
    /// RemoveTopicRecord (key 9): a topic deleted, with its partitions and configs.
    #[derive(Eq)]
    pub struct RemoveTopicRecord {
        /// Topic id.
        topic_id: Uuid [0+],
    }
}

metadata_struct! {
    /// PartitionRecord (key 3): a partition's full state. v1 adds per-replica directories
    /// (metadata.version 3.7-IV2), v2 eligible leader replicas (tagged, 4.0-IV1).
    #[derive(Eq)]
    pub struct PartitionRecord {
        /// Partition index.
        partition_id: i32 [0+, default -1],
        /// Topic id.
        topic_id: Uuid [0+],
        /// Replica broker ids, preferred leader first.
        replicas: Vec<i32> [0+],
        /// In-sync replicas.
        isr: Vec<i32> [0+],
        /// Replicas being removed by a reassignment.
        removing_replicas: Vec<i32> [0+],
        /// Replicas being added by a reassignment.
        adding_replicas: Vec<i32> [0+],
        /// Leader broker id, -1 for none.
        leader: i32 [0+, default -1],
        /// 0 recovered, 1 recovering (after an unclean election).
        leader_recovery_state: i8 [0+, tag 0],
        /// Leader epoch.
        leader_epoch: i32 [0+, default -1],
        /// Partition epoch (bumped on every change).
        partition_epoch: i32 [0+, default -1],
        /// Log directory of each replica, in `replicas` order.
        directories: Vec<Uuid> [1+],
        /// Eligible leader replicas (KIP-966); null when the feature is off.
        eligible_leader_replicas: Option<Vec<i32>> [2+, tag 1],
        /// Last known ELR members; null when the feature is off.
        last_known_elr: Option<Vec<i32>> [2+, tag 2],
    }
}

metadata_struct! {
    /// PartitionChangeRecord (key 5): a change to one partition. Every change is a tagged field
    /// whose default means "unchanged" (leader -2, recovery state -1, arrays null). v1 adds
    /// directories, v2 eligible leader replicas.
    #[derive(Eq)]
    pub struct PartitionChangeRecord {
        /// Partition index.
        partition_id: i32 [0+, default -1],
        /// Topic id.
        topic_id: Uuid [0+],
        /// New ISR.
        isr: Option<Vec<i32>> [0+, tag 0],
        /// New leader: -1 none, -2 unchanged.
        leader: i32 [0+, tag 1, default -2],
        /// New replicas.
        replicas: Option<Vec<i32>> [0+, tag 2],
        /// New removing replicas.
        removing_replicas: Option<Vec<i32>> [0+, tag 3],
        /// New adding replicas.
        adding_replicas: Option<Vec<i32>> [0+, tag 4],
        /// New leader recovery state: -1 unchanged.
        leader_recovery_state: i8 [0+, tag 5, default -1],
        /// New replica directories.
        directories: Option<Vec<Uuid>> [1+, tag 8],
        /// New eligible leader replicas.
        eligible_leader_replicas: Option<Vec<i32>> [2+, tag 6],
        /// New last known ELR.
        last_known_elr: Option<Vec<i32>> [2+, tag 7],
    }
}

metadata_struct! {
    /// ClearElrRecord (key 28): clear the eligible leader replicas of one topic, or of every
    /// topic when the name is empty.
    #[derive(Eq)]
    pub struct ClearElrRecord {
        /// Topic name; empty for all topics.
        topic_name: String [0+],
    }
}
