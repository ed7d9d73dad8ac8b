//! Checks shared by every handler, in Kafka's order (KafkaRaftClient's `hasValidClusterId`,
//! `validateVoterOnlyRequest`, `validateLeaderOnlyRequest`, `isValidVoterKey`, RaftUtil's topic
//! matching).

use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::core::RaftCore;
use super::errors;
use super::state::Role;
use super::types::{METADATA_PARTITION, METADATA_TOPIC_NAME};

impl RaftCore {
    /// A null cluster id is accepted; otherwise it must be ours.
    pub(super) fn valid_cluster_id(&self, cluster_id: &Option<StrBytes>) -> bool {
        match cluster_id {
            None => true,
            Some(id) => id.as_str() == self.cfg.cluster_id,
        }
    }

    /// Voter-only requests (Vote, BeginQuorumEpoch, EndQuorumEpoch).
    pub(super) fn validate_voter_only_request(
        &self,
        remote_id: i32,
        remote_epoch: i32,
    ) -> Option<i16> {
        if remote_epoch < self.role.epoch() {
            Some(errors::FENCED_LEADER_EPOCH)
        } else if remote_id < 0 {
            Some(errors::INVALID_REQUEST)
        } else {
            None
        }
    }

    /// Leader-only requests (Fetch, FetchSnapshot, voter changes).
    pub(super) fn validate_leader_only_request(&self, remote_epoch: i32) -> Option<i16> {
        let local = self.role.epoch();
        if remote_epoch < local {
            Some(errors::FENCED_LEADER_EPOCH)
        } else if remote_epoch > local {
            Some(errors::UNKNOWN_LEADER_EPOCH)
        } else if !matches!(self.role, Role::Leader(_)) {
            Some(errors::NOT_LEADER_OR_FOLLOWER)
        } else if self.shutdown_deadline_ms.is_some() {
            Some(errors::BROKER_NOT_AVAILABLE)
        } else {
            None
        }
    }

    /// The receiver named in a request (VoterId, VoterDirectoryId) must be us.
    pub(super) fn is_valid_voter_key(&self, voter_id: i32, voter_directory_id: Uuid) -> bool {
        if voter_id < 0 {
            return true;
        }
        if voter_id != self.local.id {
            return false;
        }
        voter_directory_id.is_nil() || voter_directory_id == self.local.directory_id
    }
}

/// Exactly one topic named `__cluster_metadata` with exactly one partition, index 0.
pub(super) fn is_metadata_partition<T, P>(
    topics: &[T],
    name: impl Fn(&T) -> &str,
    partitions: impl Fn(&T) -> &[P],
    index: impl Fn(&P) -> i32,
) -> bool {
    let [topic] = topics else {
        return false;
    };
    let [partition] = partitions(topic) else {
        return false;
    };
    name(topic) == METADATA_TOPIC_NAME && index(partition) == METADATA_PARTITION
}
