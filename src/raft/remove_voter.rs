//! RemoveRaftVoter on the leader (KIP-853; Kafka's `KafkaRaftClient.handleRemoveVoterRequest`
//! and `RemoveVoterHandler`): the same cluster/leader/key checks as AddRaftVoter, one change
//! at a time, then a VotersRecord without the voter (effective when appended), answered once
//! committed. A leader that removed itself resigns after the commit (see `voter_changes.rs`).

use kafka_protocol::messages::RemoveRaftVoterRequest;

use super::core::RaftCore;
use super::errors;
use super::io::InboundRequest;
use super::log::LogReader;
use super::state::{PendingRemoveVoter, Role};
use super::types::ReplicaKey;
use super::voter_changes::{remove_voter_refusal, remove_voter_response};
use crate::codec::ResponseBody;

impl RaftCore {
    pub(super) fn handle_remove_raft_voter_request(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        req: &InboundRequest,
        body: &RemoveRaftVoterRequest,
    ) {
        let result = if !self.valid_cluster_id(&body.cluster_id) {
            Err((
                errors::INCONSISTENT_CLUSTER_ID,
                Some(format!(
                    "The given id \"{}\" doesn't match the cluster id \"{}\"",
                    body.cluster_id.as_deref().unwrap_or(""),
                    self.cfg.cluster_id
                )),
            ))
        } else if let Some(error) = self.validate_leader_only_request(self.role.epoch()) {
            Err((error, None))
        } else if body.voter_id < 0 || body.voter_directory_id.is_nil() {
            Err((
                errors::INVALID_REQUEST,
                Some("Remove voter request didn't include a valid voter".to_string()),
            ))
        } else {
            let key = ReplicaKey::new(body.voter_id, body.voter_directory_id);
            self.start_remove_voter(now_ms, log, req, key)
                .map_err(|(error, message)| (error, Some(message)))
        };
        if let Err((error, message)) = result {
            // Not the leader: Kafka's KafkaRaftClient answers without a message.
            let body = match message {
                Some(message) => remove_voter_response(error, Some(message)),
                None => remove_voter_refusal(error),
            };
            self.respond(req, ResponseBody::RemoveRaftVoter(body));
        }
    }

    fn start_remove_voter(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        req: &InboundRequest,
        key: ReplicaKey,
    ) -> Result<(), (i16, String)> {
        self.voter_change_preconditions(now_ms, "removing")?;
        // Exact key match, and never the last voter (`VoterSet.removeVoter`).
        let Some(voters) = self.history.voters().remove_voter(&key) else {
            return Err((
                errors::VOTER_NOT_FOUND,
                format!(
                    "Cannot remove voter {key} from the set of voters {}",
                    self.history.voters().java_voter_keys_string()
                ),
            ));
        };
        // The state exists before the append: a leader left alone commits within it.
        self.drain_pending(now_ms, log);
        let offset = self.log_end(log).offset;
        let deadline_ms = now_ms + self.cfg.request_timeout_ms;
        if let Role::Leader(l) = &mut self.role {
            l.remove_voter = Some(PendingRemoveVoter {
                request_id: req.request_id,
                api_version: req.api_version,
                last_offset: offset,
                deadline_ms,
            });
        }
        tracing::info!(
            node_id = self.local.id,
            "Removing voter {key:?} with a VotersRecord at offset {offset}"
        );
        if self.append_voters_record(now_ms, log, &voters).is_none() {
            self.complete_remove_voter(errors::UNKNOWN_SERVER_ERROR, None);
        }
        Ok(())
    }
}
