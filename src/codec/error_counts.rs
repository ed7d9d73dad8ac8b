//! Which error codes a response carries, counted as Kafka's `AbstractResponse.errorCounts()`
//! counts them for the `ErrorsPerSec` meters (`RequestChannel.updateErrorMetrics` marks one
//! meter per entry, NONE included).
//!
//! ```text
//!   ResponseBody ─error_counts─▶ [(code, n)] ─▶ server handler ─▶ network stats ─▶ /metrics
//! ```
//!
//! The rule differs per API and is Kafka 4.1's, per response class: most count every
//! per-item code (a CreateTopics of three topics counts three), the Raft quorum APIs count the
//! top-level code and every partition's, FetchSnapshot counts a top-level NONE not at all,
//! the voter-change APIs and UnregisterBroker count nothing on success.

use crate::codec::ResponseBody;
use crate::common::errors::NONE;

/// Counts of error codes, in no particular order; a code appears once.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ErrorCounts(pub Vec<(i16, u32)>);

impl ErrorCounts {
    fn add(&mut self, code: i16) {
        match self.0.iter_mut().find(|(c, _)| *c == code) {
            Some((_, n)) => *n += 1,
            None => self.0.push((code, 1)),
        }
    }

    fn one(code: i16) -> Self {
        Self(vec![(code, 1)])
    }

    fn of(codes: impl IntoIterator<Item = i16>) -> Self {
        let mut counts = Self::default();
        for code in codes {
            counts.add(code);
        }
        counts
    }

    /// Kafka's `errors.put(top, 1)` followed by one update per partition: a top-level entry
    /// always, then every partition's.
    fn top_and(top: i16, codes: impl IntoIterator<Item = i16>) -> Self {
        let mut counts = Self::one(top);
        for code in codes {
            counts.add(code);
        }
        counts
    }

    /// The count of `code`.
    pub fn get(&self, code: i16) -> u32 {
        self.0
            .iter()
            .find(|(c, _)| *c == code)
            .map_or(0, |(_, n)| *n)
    }
}

/// The error codes `body` carries, as Kafka counts them for its `ErrorsPerSec` meters.
pub fn error_counts(body: &ResponseBody) -> ErrorCounts {
    use ResponseBody as R;
    match body {
        R::Fetch(r) => ErrorCounts::top_and(
            r.error_code,
            r.responses
                .iter()
                .flat_map(|t| t.partitions.iter().map(|p| p.error_code)),
        ),
        R::Vote(r) => ErrorCounts::top_and(
            r.error_code,
            r.topics
                .iter()
                .flat_map(|t| t.partitions.iter().map(|p| p.error_code)),
        ),
        R::BeginQuorumEpoch(r) => ErrorCounts::top_and(
            r.error_code,
            r.topics
                .iter()
                .flat_map(|t| t.partitions.iter().map(|p| p.error_code)),
        ),
        R::EndQuorumEpoch(r) => ErrorCounts::top_and(
            r.error_code,
            r.topics
                .iter()
                .flat_map(|t| t.partitions.iter().map(|p| p.error_code)),
        ),
        R::DescribeQuorum(r) => ErrorCounts::top_and(
            r.error_code,
            r.topics
                .iter()
                .flat_map(|t| t.partitions.iter().map(|p| p.error_code)),
        ),
        R::FetchSnapshot(r) => {
            // A top-level NONE is not counted (Kafka's FetchSnapshotResponse).
            let top = (r.error_code != NONE).then_some(r.error_code);
            ErrorCounts::of(
                top.into_iter().chain(
                    r.topics
                        .iter()
                        .flat_map(|t| t.partitions.iter().map(|p| p.error_code)),
                ),
            )
        }
        R::AddRaftVoter(r) => only_failure(r.error_code),
        R::RemoveRaftVoter(r) => only_failure(r.error_code),
        R::UpdateRaftVoter(r) => only_failure(r.error_code),
        R::UnregisterBroker(r) => only_failure(r.error_code),
        R::ApiVersions(r) => ErrorCounts::one(r.error_code),
        R::SaslHandshake(r) => ErrorCounts::one(r.error_code),
        R::SaslAuthenticate(r) => ErrorCounts::one(r.error_code),
        R::Envelope(r) => ErrorCounts::one(r.error_code),
        R::DescribeCluster(r) => ErrorCounts::one(r.error_code),
        R::ControllerRegistration(r) => ErrorCounts::one(r.error_code),
        R::BrokerRegistration(r) => ErrorCounts::one(r.error_code),
        R::BrokerHeartbeat(r) => ErrorCounts::one(r.error_code),
        // Not a Kafka 4.1 API; counted as the single-code responses are.
        R::UnregisterController(r) => ErrorCounts::one(r.error_code),
        R::CreateDelegationToken(r) => ErrorCounts::one(r.error_code),
        R::RenewDelegationToken(r) => ErrorCounts::one(r.error_code),
        R::ExpireDelegationToken(r) => ErrorCounts::one(r.error_code),
        R::DescribeDelegationToken(r) => ErrorCounts::one(r.error_code),
        R::DescribeAcls(r) => ErrorCounts::one(r.error_code),
        R::AllocateProducerIds(r) => ErrorCounts::one(r.error_code),
        R::AssignReplicasToDirs(r) => ErrorCounts::one(r.error_code),
        R::ListPartitionReassignments(r) => ErrorCounts::one(r.error_code),
        R::CreateTopics(r) => ErrorCounts::of(r.topics.iter().map(|t| t.error_code)),
        R::DeleteTopics(r) => ErrorCounts::of(r.responses.iter().map(|t| t.error_code)),
        R::CreatePartitions(r) => ErrorCounts::of(r.results.iter().map(|t| t.error_code)),
        R::DescribeConfigs(r) => ErrorCounts::of(r.results.iter().map(|t| t.error_code)),
        R::AlterConfigs(r) => ErrorCounts::of(r.responses.iter().map(|t| t.error_code)),
        R::IncrementalAlterConfigs(r) => ErrorCounts::of(r.responses.iter().map(|t| t.error_code)),
        R::AlterUserScramCredentials(r) => ErrorCounts::of(r.results.iter().map(|t| t.error_code)),
        R::DescribeUserScramCredentials(r) => {
            ErrorCounts::of(r.results.iter().map(|t| t.error_code))
        }
        R::AlterClientQuotas(r) => ErrorCounts::of(r.entries.iter().map(|t| t.error_code)),
        R::CreateAcls(r) => ErrorCounts::of(r.results.iter().map(|t| t.error_code)),
        R::DeleteAcls(r) => ErrorCounts::of(r.filter_results.iter().map(|t| t.error_code)),
        R::AlterPartition(r) => ErrorCounts::top_and(
            r.error_code,
            r.topics
                .iter()
                .flat_map(|t| t.partitions.iter().map(|p| p.error_code)),
        ),
        R::ElectLeaders(r) => ErrorCounts::top_and(
            r.error_code,
            r.replica_election_results
                .iter()
                .flat_map(|t| t.partition_result.iter().map(|p| p.error_code)),
        ),
        R::AlterPartitionReassignments(r) => ErrorCounts::top_and(
            r.error_code,
            r.responses
                .iter()
                .flat_map(|t| t.partitions.iter().map(|p| p.error_code)),
        ),
        R::UpdateFeatures(r) => {
            ErrorCounts::top_and(r.error_code, r.results.iter().map(|t| t.error_code))
        }
    }
}

/// One entry for a failure, none for NONE.
fn only_failure(code: i16) -> ErrorCounts {
    if code == NONE {
        ErrorCounts::default()
    } else {
        ErrorCounts::one(code)
    }
}

/// The throttle time a response carries from the controller mutation quota (the only quota
/// the controller applies): CreateTopics, DeleteTopics and CreatePartitions.
pub fn mutation_throttle_ms(body: &ResponseBody) -> i32 {
    match body {
        ResponseBody::CreateTopics(r) => r.throttle_time_ms,
        ResponseBody::DeleteTopics(r) => r.throttle_time_ms,
        ResponseBody::CreatePartitions(r) => r.throttle_time_ms,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::errors;
    use kafka_protocol::messages::*;

    #[test]
    fn per_item_apis_count_every_item_none_included() {
        let topic =
            |code| create_topics_response::CreatableTopicResult::default().with_error_code(code);
        let body = ResponseBody::CreateTopics(CreateTopicsResponse::default().with_topics(vec![
            topic(errors::NONE),
            topic(errors::NONE),
            topic(errors::TOPIC_ALREADY_EXISTS),
        ]));
        let c = error_counts(&body);
        assert_eq!(c.get(errors::NONE), 2);
        assert_eq!(c.get(errors::TOPIC_ALREADY_EXISTS), 1);
        assert_eq!(c.0.len(), 2);
    }

    #[test]
    fn quorum_apis_count_the_top_level_code_and_every_partition() {
        let partition = vote_response::PartitionData::default();
        let body = ResponseBody::Vote(VoteResponse::default().with_topics(vec![
            vote_response::TopicData::default().with_partitions(vec![partition]),
        ]));
        // Top-level NONE plus one partition NONE.
        assert_eq!(error_counts(&body).get(errors::NONE), 2);
        let heartbeat = ResponseBody::BrokerHeartbeat(BrokerHeartbeatResponse::default());
        assert_eq!(error_counts(&heartbeat), ErrorCounts::one(errors::NONE));
    }

    #[test]
    fn some_apis_count_nothing_on_success() {
        let ok = ResponseBody::AddRaftVoter(AddRaftVoterResponse::default());
        assert_eq!(error_counts(&ok), ErrorCounts::default());
        let failed = ResponseBody::UnregisterBroker(
            UnregisterBrokerResponse::default().with_error_code(errors::BROKER_ID_NOT_REGISTERED),
        );
        assert_eq!(
            error_counts(&failed).get(errors::BROKER_ID_NOT_REGISTERED),
            1
        );
        let snapshot = ResponseBody::FetchSnapshot(FetchSnapshotResponse::default());
        assert_eq!(error_counts(&snapshot), ErrorCounts::default());
    }

    #[test]
    fn the_mutation_quota_apis_carry_their_throttle() {
        let body =
            ResponseBody::DeleteTopics(DeleteTopicsResponse::default().with_throttle_time_ms(7));
        assert_eq!(mutation_throttle_ms(&body), 7);
        let other = ResponseBody::Fetch(FetchResponse::default().with_throttle_time_ms(7));
        assert_eq!(mutation_throttle_ms(&other), 0);
    }
}
