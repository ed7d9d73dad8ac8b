//! Elections: start-up, votes, pre-votes, BeginQuorumEpoch, EndQuorumEpoch, check-quorum.

use kafka_protocol::messages::ApiKey;

use super::context::*;
use crate::codec::{RequestBody, ResponseBody};
use crate::raft::errors;
use crate::raft::{LogReader, ResponseResult};
use crate::records::view::BatchView;

#[test]
fn test_initialize_single_member_quorum() {
    for rpc in Rpc::ALL {
        let ctx = Builder::new(1, &[1]).with_rpc(rpc).build();
        ctx.assert_leader(1);
        let batches = ctx.log.batches();
        assert_eq!(batches.len(), 1, "one LeaderChange batch");
        let (base, epoch, bytes) = &batches[0];
        assert_eq!((*base, *epoch), (0, 1));
        let view = BatchView::new(bytes).unwrap();
        assert!(view.is_control());
        // A lone voter's high watermark is its own end offset.
        assert_eq!(ctx.core.high_watermark(), Some(1));
    }
}

#[test]
fn test_initialize_as_resigned_leader_from_state_store() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_elected_leader(5, 1)
            .with_rpc(rpc)
            .build();
        ctx.assert_resigned(5);
        // A resigned leader rejects votes in its own epoch.
        let id = ctx.deliver(vote_request_body(5, 2, 0, 0, false));
        assert!(!vote_partition(ctx.response(id)).vote_granted);
        // It sends EndQuorumEpoch to the other voters.
        assert_eq!(ctx.take_sent(ApiKey::EndQuorumEpoch).len(), 2);
    }
}

#[test]
fn test_reject_votes_from_same_epoch_after_resigning_leadership() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2])
            .with_elected_leader(2, 1)
            .with_rpc(rpc)
            .build();
        ctx.assert_resigned(2);
        let id = ctx.deliver(vote_request_body(2, 2, 1, 100, false));
        let p = vote_partition(ctx.response(id));
        assert_eq!(p.error_code, errors::NONE);
        assert!(!p.vote_granted);
        assert_eq!(p.leader_id.0, 1);
    }
}

#[test]
fn test_grant_votes_from_higher_epoch_after_resigning_leadership() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2])
            .with_elected_leader(2, 1)
            .with_rpc(rpc)
            .build();
        let id = ctx.deliver(vote_request_body(3, 2, 2, 100, false));
        assert!(vote_partition(ctx.response(id)).vote_granted);
        ctx.assert_voted(3, 2);
    }
}

#[test]
fn test_initialize_as_candidate_from_state_store() {
    for rpc in Rpc::ALL {
        let ctx = Builder::new(1, &[1, 2, 3])
            .with_voted_candidate(2, 1)
            .with_rpc(rpc)
            .build();
        ctx.assert_candidate(2);
    }
}

#[test]
fn test_handle_valid_vote_request_as_follower() {
    for rpc in Rpc::ALL {
        // An unattached voter with no vote grants an up-to-date candidate, and persists the vote
        // before answering.
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(2)
            .with_rpc(rpc)
            .build();
        ctx.events.clear();
        let id = ctx.deliver(vote_request_body(2, 3, 0, 0, false));
        assert!(vote_partition(ctx.response(id)).vote_granted);
        ctx.assert_voted(2, 3);
        let persist = ctx
            .events
            .iter()
            .position(|e| e.starts_with("persist"))
            .unwrap();
        let respond = ctx
            .events
            .iter()
            .position(|e| e.starts_with("respond"))
            .unwrap();
        assert!(
            persist < respond,
            "the vote is persisted before the response: {:?}",
            ctx.events
        );
    }
}

#[test]
fn test_handle_vote_request_as_follower_with_elected_leader() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_elected_leader(2, 2)
            .with_rpc(rpc)
            .build();
        ctx.assert_follower(2, 2);
        let id = ctx.deliver(vote_request_body(2, 3, 0, 0, false));
        let p = vote_partition(ctx.response(id));
        assert!(!p.vote_granted);
        assert_eq!(p.leader_id.0, 2);
    }
}

#[test]
fn test_handle_vote_request_as_follower_with_voted_candidate() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_voted_candidate(2, 2)
            .with_rpc(rpc)
            .build();
        let id = ctx.deliver(vote_request_body(2, 3, 0, 0, false));
        assert!(
            !vote_partition(ctx.response(id)).vote_granted,
            "already voted for 2"
        );
        let id = ctx.deliver(vote_request_body(2, 2, 0, 0, false));
        assert!(
            vote_partition(ctx.response(id)).vote_granted,
            "re-grant to the same candidate"
        );
    }
}

#[test]
fn test_handle_invalid_vote_request_with_older_epoch() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(5)
            .with_rpc(rpc)
            .build();
        let id = ctx.deliver(vote_request_body(4, 2, 0, 0, false));
        let p = vote_partition(ctx.response(id));
        assert_eq!(p.error_code, errors::FENCED_LEADER_EPOCH);
        assert_eq!(p.leader_epoch, 5);
        ctx.assert_unattached(5);
    }
}

#[test]
fn test_handle_vote_request_as_observer() {
    for rpc in Rpc::ALL {
        // Node 4 is not a voter, yet grants and persists (observers may vote).
        let mut ctx = Builder::new(4, &[1, 2, 3])
            .with_unknown_leader(2)
            .with_rpc(rpc)
            .build();
        let id = ctx.deliver(vote_request_body(3, 2, 0, 0, false));
        assert!(vote_partition(ctx.response(id)).vote_granted);
        ctx.assert_voted(3, 2);
    }
}

#[test]
fn test_leader_ignore_vote_request_on_same_epoch() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(1)
            .with_rpc(rpc)
            .build();
        ctx.become_leader();
        let epoch = ctx.epoch();
        let id = ctx.deliver(vote_request_body(epoch, 2, 0, 0, false));
        let p = vote_partition(ctx.response(id));
        assert!(!p.vote_granted);
        assert_eq!(p.leader_id.0, 1);
        ctx.assert_leader(epoch);
    }
}

#[test]
fn test_candidate_ignore_vote_request_on_same_epoch() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_voted_candidate(2, 1)
            .with_rpc(rpc)
            .build();
        let id = ctx.deliver(vote_request_body(2, 2, 0, 0, false));
        assert!(!vote_partition(ctx.response(id)).vote_granted);
        ctx.assert_candidate(2);
    }
}

#[test]
fn test_invalid_vote_request() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(5)
            .with_rpc(rpc)
            .build();
        for (epoch, last_epoch, last_offset) in [(5, 0, -5), (5, -1, 0), (5, 5, 0), (5, 6, 0)] {
            let id = ctx.deliver(vote_request_body(epoch, 2, last_epoch, last_offset, false));
            let p = vote_partition(ctx.response(id));
            assert_eq!(
                p.error_code,
                errors::INVALID_REQUEST,
                "{epoch} {last_epoch} {last_offset}"
            );
            assert!(!p.vote_granted);
        }
        ctx.assert_unattached(5);
    }
}

#[test]
fn test_vote_request_cluster_id_validation() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(1)
            .with_rpc(rpc)
            .build();
        let RequestBody::Vote(mut v) = vote_request_body(2, 2, 0, 0, false) else {
            unreachable!()
        };
        v.cluster_id = None;
        let id = ctx.deliver(RequestBody::Vote(v.clone()));
        assert!(
            vote_partition(ctx.response(id)).vote_granted,
            "a null cluster id is accepted"
        );
        v.cluster_id = Some("other".into());
        let id = ctx.deliver(RequestBody::Vote(v));
        let ResponseBody::Vote(r) = ctx.response(id) else {
            unreachable!()
        };
        assert_eq!(r.error_code, errors::INCONSISTENT_CLUSTER_ID);
        assert!(r.topics.is_empty());
    }
}

#[test]
fn test_invalid_voter_replica_vote_request() {
    // The epoch bump happens before the voter-key check.
    let mut ctx = Builder::new(1, &[1, 2, 3]).with_unknown_leader(1).build();
    let RequestBody::Vote(mut v) = vote_request_body(3, 2, 0, 0, false) else {
        unreachable!()
    };
    v.voter_id = kafka_protocol::messages::BrokerId(9);
    let id = ctx.deliver_request(RequestBody::Vote(v), 2);
    let p = vote_partition(ctx.response(id));
    assert_eq!(p.error_code, errors::INVALID_VOTER_KEY);
    ctx.assert_unattached(3);
}

#[test]
fn test_reject_pre_vote_if_remote_log_is_not_up_to_date() {
    let mut ctx = Builder::new(1, &[1, 2, 3])
        .with_unknown_leader(2)
        .append_to_log(1, 3)
        .build();
    let id = ctx.deliver_request(vote_request_body(2, 2, 1, 1, true), 2);
    assert!(!vote_partition(ctx.response(id)).vote_granted);
    let id = ctx.deliver_request(vote_request_body(2, 2, 1, 3, true), 2);
    assert!(vote_partition(ctx.response(id)).vote_granted);
    // Pre-votes never persist a vote.
    ctx.assert_unattached(2);
    assert!(ctx.stored.as_ref().unwrap().voted_key.is_none());
}

#[test]
fn test_follower_grants_pre_vote_if_has_not_fetched_yet() {
    let mut ctx = Builder::new(1, &[1, 2, 3])
        .with_elected_leader(2, 2)
        .build();
    let id = ctx.deliver_request(vote_request_body(2, 3, 0, 0, true), 2);
    assert!(vote_partition(ctx.response(id)).vote_granted);
    ctx.assert_follower(2, 2);
}

#[test]
fn test_handle_pre_vote_request_as_candidate() {
    let mut ctx = Builder::new(1, &[1, 2, 3])
        .with_voted_candidate(2, 1)
        .build();
    let id = ctx.deliver_request(vote_request_body(2, 2, 0, 0, true), 2);
    assert!(
        vote_partition(ctx.response(id)).vote_granted,
        "candidates grant up-to-date pre-votes"
    );
}

#[test]
fn test_leader_reject_pre_vote_request_on_same_epoch() {
    let mut ctx = Builder::new(1, &[1, 2, 3]).with_unknown_leader(1).build();
    ctx.become_leader();
    let id = ctx.deliver_request(vote_request_body(ctx.epoch(), 2, ctx.epoch(), 10, true), 2);
    assert!(!vote_partition(ctx.response(id)).vote_granted);
}

#[test]
fn test_voter_become_prospective_after_fetch_timeout() {
    let mut ctx = Builder::new(1, &[1, 2, 3])
        .with_elected_leader(2, 2)
        .build();
    ctx.advance(FETCH_TIMEOUT_MS);
    ctx.assert_prospective(2);
    let votes = ctx.take_sent(ApiKey::Vote);
    assert_eq!(votes.len(), 2);
    for v in &votes {
        let RequestBody::Vote(r) = &v.request else {
            unreachable!()
        };
        let p = &r.topics[0].partitions[0];
        assert!(p.pre_vote);
        assert_eq!(p.replica_epoch, 2, "pre-votes carry the current epoch");
    }
}

#[test]
fn test_follower_as_observer_does_not_become_candidate_after_fetch_timeout() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(4, &[1, 2, 3])
            .with_elected_leader(2, 2)
            .with_rpc(rpc)
            .build();
        ctx.advance(FETCH_TIMEOUT_MS);
        ctx.assert_follower(2, 2);
        assert!(ctx.take_sent(ApiKey::Vote).is_empty());
    }
}

#[test]
fn test_unattached_as_observer_does_not_become_candidate_after_election_timeout() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(4, &[1, 2, 3])
            .with_unknown_leader(2)
            .with_rpc(rpc)
            .build();
        ctx.advance(3 * ELECTION_TIMEOUT_MS);
        ctx.assert_unattached(2);
        assert!(ctx.take_sent(ApiKey::Vote).is_empty());
    }
}

#[test]
fn test_pre_vote_not_supported_by_remote() {
    let mut ctx = Builder::new(1, &[1, 2, 3]).with_unknown_leader(2).build();
    ctx.advance(2 * ELECTION_TIMEOUT_MS);
    ctx.assert_prospective(2);
    let votes = ctx.take_sent(ApiKey::Vote);
    ctx.deliver_result(votes[0].correlation_id, ResponseResult::UnsupportedVersion);
    ctx.assert_candidate(3);
}

#[test]
fn test_prospective_transitions_to_unattached_on_election_failure() {
    let mut ctx = Builder::new(1, &[1, 2, 3]).with_unknown_leader(2).build();
    ctx.advance(2 * ELECTION_TIMEOUT_MS);
    ctx.assert_prospective(2);
    for v in ctx.take_sent(ApiKey::Vote) {
        ctx.deliver_response(
            v.correlation_id,
            ResponseBody::Vote(vote_response_body(0, -1, 2, false)),
        );
    }
    ctx.assert_unattached(2);
}

#[test]
fn test_prospective_with_leader_transitions_to_follower() {
    let mut ctx = Builder::new(1, &[1, 2, 3])
        .with_elected_leader(2, 2)
        .build();
    ctx.advance(FETCH_TIMEOUT_MS);
    ctx.assert_prospective(2);
    ctx.advance(2 * ELECTION_TIMEOUT_MS);
    ctx.assert_follower(2, 2);
}

#[test]
fn test_candidate_election_timeout() {
    // A candidate that does not win by its election timeout goes back to pre-vote (4.1).
    let mut ctx = Builder::new(1, &[1, 2, 3])
        .with_voted_candidate(2, 1)
        .build();
    ctx.advance(2 * ELECTION_TIMEOUT_MS);
    ctx.assert_prospective(2);
}

#[test]
fn test_election_won_writes_leader_change_and_begins_epoch() {
    let mut ctx = Builder::new(1, &[1, 2, 3])
        .with_unknown_leader(2)
        .append_to_log(1, 2)
        .build();
    ctx.become_leader();
    ctx.assert_leader(3);
    let (base, epoch, bytes) = ctx.log.batches().last().cloned().unwrap();
    assert_eq!((base, epoch), (2, 3));
    assert!(BatchView::new(&bytes).unwrap().is_control());
    assert_eq!(
        ctx.take_sent(ApiKey::BeginQuorumEpoch).len(),
        2,
        "BeginQuorumEpoch to both other voters"
    );
    assert_eq!(ctx.stored.as_ref().unwrap().leader_id, Some(1));
    assert_eq!(
        ctx.core.high_watermark(),
        None,
        "a new leader's high watermark starts unknown"
    );
}

#[test]
fn test_begin_quorum_epoch_heartbeat() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(1)
            .with_rpc(rpc)
            .build();
        ctx.become_leader();
        let first = ctx.take_sent(ApiKey::BeginQuorumEpoch);
        assert_eq!(first.len(), 2);
        for s in first {
            ctx.deliver_response(
                s.correlation_id,
                ResponseBody::BeginQuorumEpoch(Default::default()),
            );
        }
        ctx.advance(FETCH_TIMEOUT_MS / 2);
        assert_eq!(
            ctx.take_sent(ApiKey::BeginQuorumEpoch).len(),
            2,
            "resent to every voter each fetch.timeout/2"
        );
    }
}

#[test]
fn test_leader_should_resign_leadership_if_not_get_fetch_request_from_majority_voters() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(1)
            .with_rpc(rpc)
            .build();
        ctx.become_leader();
        let epoch = ctx.epoch();
        ctx.advance(FETCH_TIMEOUT_MS * 3 / 2 - 1);
        ctx.assert_leader(epoch);
        ctx.advance(1);
        ctx.assert_resigned(epoch);
    }
}

#[test]
fn test_leader_should_not_resign_leadership_if_only_one_voters() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1]).with_rpc(rpc).build();
        ctx.advance(FETCH_TIMEOUT_MS * 10);
        ctx.assert_leader(1);
    }
}

#[test]
fn test_handle_begin_quorum_request() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_voted_candidate(2, 1)
            .with_rpc(rpc)
            .build();
        let id = ctx.deliver(begin_epoch_request_body(3, 2));
        ctx.assert_follower(3, 2);
        let ResponseBody::BeginQuorumEpoch(r) = ctx.response(id) else {
            unreachable!()
        };
        assert_eq!(r.topics[0].partitions[0].error_code, errors::NONE);
        let expected = usize::from(rpc.version(ApiKey::BeginQuorumEpoch) >= 1);
        assert_eq!(
            r.node_endpoints.len(),
            expected,
            "{rpc:?}: v1 carries the leader endpoint, v0 cannot"
        );
        assert_eq!(ctx.stored.as_ref().unwrap().leader_id, Some(2));
    }
}

#[test]
fn test_handle_end_quorum_request() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_elected_leader(2, 2)
            .with_rpc(rpc)
            .build();
        // First preferred successor: elects at once.
        ctx.deliver(end_epoch_request_body(2, 2, &[1, 3]));
        ctx.advance(0);
        ctx.assert_prospective(2);
    }
}

#[test]
fn test_handle_end_quorum_request_with_lower_priority_to_become_leader() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3, 4])
            .with_elected_leader(2, 2)
            .with_rpc(rpc)
            .build();
        ctx.deliver(end_epoch_request_body(2, 2, &[3, 1, 4]));
        // Position 1 of 3: (max >> 2) << 0 = 25 ms with max 100.
        ctx.advance(ELECTION_BACKOFF_MAX_MS / 4 - 1);
        ctx.assert_follower(2, 2);
        ctx.advance(1);
        ctx.assert_prospective(2);
    }
}

#[test]
fn test_end_quorum_epoch_retries_while_resigned() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_elected_leader(2, 1)
            .with_rpc(rpc)
            .build();
        let sent = ctx.take_sent(ApiKey::EndQuorumEpoch);
        assert_eq!(sent.len(), 2);
        let ack = kafka_protocol::messages::EndQuorumEpochResponse::default().with_topics(vec![
            kafka_protocol::messages::end_quorum_epoch_response::TopicData::default()
                .with_topic_name(topic_name())
                .with_partitions(vec![
                    kafka_protocol::messages::end_quorum_epoch_response::PartitionData::default()
                        .with_leader_id(kafka_protocol::messages::BrokerId(1))
                        .with_leader_epoch(2),
                ]),
        ]);
        ctx.deliver_response(sent[0].correlation_id, ResponseBody::EndQuorumEpoch(ack));
        ctx.advance(REQUEST_TIMEOUT_MS);
        ctx.advance(RETRY_BACKOFF_MS);
        let again = ctx.take_sent(ApiKey::EndQuorumEpoch);
        assert_eq!(again.len(), 1, "only the unacknowledged voter is retried");
        assert_eq!(again[0].destination, sent[1].destination);
    }
}

#[test]
fn test_end_quorum_epoch_sent_based_on_fetch_offset() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_unknown_leader(1)
            .with_rpc(rpc)
            .build();
        ctx.become_leader();
        let epoch = ctx.epoch();
        let end = ctx.log.end_offset().offset;
        ctx.propose(&["a", "b"]);
        // Voter 3 is further along than voter 2.
        ctx.deliver(fetch_request_body(epoch, 2, end, epoch, 0));
        ctx.deliver(fetch_request_body(epoch, 3, end + 2, epoch, 0));
        ctx.core.begin_shutdown(ctx.now_ms, &ctx.log, 5000);
        ctx.drain();
        ctx.assert_resigned(epoch);
        let sent = ctx.take_sent(ApiKey::EndQuorumEpoch);
        let RequestBody::EndQuorumEpoch(r) = &sent[0].request else {
            unreachable!()
        };
        assert_eq!(r.topics[0].partitions[0].preferred_successors, vec![3, 2]);
    }
}

#[test]
fn test_vote_request_timeout() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_voted_candidate(2, 1)
            .with_rpc(rpc)
            .build();
        ctx.poll();
        let first = ctx.take_sent(ApiKey::Vote);
        assert_eq!(first.len(), 2);
        ctx.advance(REQUEST_TIMEOUT_MS);
        ctx.advance(RETRY_BACKOFF_MS);
        assert_eq!(
            ctx.take_sent(ApiKey::Vote).len(),
            2,
            "unanswered votes are resent after the request timeout"
        );
    }
}

#[test]
fn test_vote_response_ignored_after_becoming_follower() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_voted_candidate(2, 1)
            .with_rpc(rpc)
            .build();
        ctx.poll();
        let votes = ctx.take_sent(ApiKey::Vote);
        ctx.deliver(begin_epoch_request_body(3, 2));
        ctx.assert_follower(3, 2);
        ctx.deliver_response(
            votes[0].correlation_id,
            ResponseBody::Vote(vote_response_body(0, -1, 2, true)),
        );
        ctx.assert_follower(3, 2);
    }
}

#[test]
fn test_cluster_authorization_failed_in_vote() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1, 2, 3])
            .with_voted_candidate(2, 1)
            .with_rpc(rpc)
            .build();
        ctx.poll();
        let votes = ctx.take_sent(ApiKey::Vote);
        let resp = kafka_protocol::messages::VoteResponse::default()
            .with_error_code(errors::CLUSTER_AUTHORIZATION_FAILED);
        ctx.deliver_response(votes[0].correlation_id, ResponseBody::Vote(resp));
        assert!(ctx.core.fatal_error().is_some());
    }
}

#[test]
fn test_graceful_shutdown_single_member_quorum() {
    for rpc in Rpc::ALL {
        let mut ctx = Builder::new(1, &[1]).with_rpc(rpc).build();
        ctx.core.begin_shutdown(ctx.now_ms, &ctx.log, 5000);
        let mut done = false;
        while let Some(o) = ctx.core.poll_output() {
            done |= matches!(o, crate::raft::Output::ShutdownComplete);
        }
        assert!(done);
    }
}

#[test]
fn follower_grants_pre_votes_after_its_leader_resigns() {
    // KAFKA-20895 (open in Kafka 4.1.2; docs/interop.md): after EndQuorumEpoch from our leader,
    // a follower that had fetched grants an up-to-date pre-vote, so graceful handover is
    // immediate. The reordering case is `regressions::kafka_20895_…`.
    let mut ctx = Builder::new(1, &[1, 2, 3])
        .with_elected_leader(2, 2)
        .build();
    ctx.poll();
    let f = ctx.take_sent(ApiKey::Fetch);
    let ok = kafka_protocol::messages::FetchResponse::default().with_responses(vec![
        kafka_protocol::messages::fetch_response::FetchableTopicResponse::default()
            .with_topic_id(crate::raft::types::METADATA_TOPIC_ID)
            .with_partitions(vec![
                kafka_protocol::messages::fetch_response::PartitionData::default()
                    .with_current_leader(
                        kafka_protocol::messages::fetch_response::LeaderIdAndEpoch::default()
                            .with_leader_id(kafka_protocol::messages::BrokerId(2))
                            .with_leader_epoch(2),
                    )
                    .with_records(Some(bytes::Bytes::new())),
            ]),
    ]);
    ctx.deliver_response(f[0].correlation_id, ResponseBody::Fetch(ok));
    let id = ctx.deliver_request(vote_request_body(2, 3, 0, 0, true), 2);
    assert!(
        !vote_partition(ctx.response(id)).vote_granted,
        "has fetched: rejects (Kafka rule)"
    );
    ctx.deliver_request(end_epoch_request_body(2, 2, &[3, 1]), 1);
    let id = ctx.deliver_request(vote_request_body(2, 3, 0, 0, true), 2);
    assert!(
        vote_partition(ctx.response(id)).vote_granted,
        "leader resigned: grants"
    );
}
