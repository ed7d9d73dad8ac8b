//! AddRaftVoter on the leader (KIP-853; Kafka's `KafkaRaftClient.handleAddVoterRequest` and
//! `AddVoterHandler`):
//!
//! ```text
//!   request ─▶ cluster id, leader, voter key, controller listener   (answered at once on error)
//!           ─▶ pending change? HW known? kraft.version ≥ 1? last VotersRecord committed?
//!              already a voter?                                      (answered at once on error)
//!           ─▶ ApiVersions to the new voter ─▶ kraft.version range covers ours? caught up?
//!           ─▶ append VotersRecord (effective now) ─▶ answer NONE when the HW passes it
//! ```
//!
//! The operation times out after the request timeout of the ApiVersions it sends, as Kafka's
//! (the request's own TimeoutMs is not used).

use kafka_protocol::messages::{AddRaftVoterRequest, ApiVersionsRequest, ApiVersionsResponse};
use kafka_protocol::protocol::StrBytes;

use super::core::RaftCore;
use super::errors;
use super::io::{Destination, InboundRequest};
use super::log::LogReader;
use super::state::{PendingAddVoter, Role};
use super::types::{Endpoint, Endpoints, ReplicaKey, VoterNode};
use super::voter_changes::{add_voter_refusal, add_voter_response, endpoints_from_listeners};
use crate::codec::{RequestBody, ResponseBody};
use crate::common::java::{java_hash_map_order, Built};

/// Name of the kraft.version feature in ApiVersions' SupportedFeatures.
const KRAFT_VERSION_FEATURE: &str = "kraft.version";

/// A replica counts as caught up for AddRaftVoter if it fetched within this long and was
/// caught up at some point (`LeaderState.isReplicaCaughtUp`).
const CAUGHT_UP_FETCH_WINDOW_MS: u64 = 60 * 60 * 1000;

impl RaftCore {
    pub(super) fn handle_add_raft_voter_request(
        &mut self,
        now_ms: u64,
        req: &InboundRequest,
        body: &AddRaftVoterRequest,
    ) {
        let answer = |core: &mut RaftCore, error: i16, message: Option<String>| {
            core.respond(
                req,
                ResponseBody::AddRaftVoter(add_voter_response(error, message)),
            )
        };
        if !self.valid_cluster_id(&body.cluster_id) {
            let message = format!(
                "The given id \"{}\" doesn't match the cluster id \"{}\"",
                body.cluster_id.as_deref().unwrap_or(""),
                self.cfg.cluster_id
            );
            return answer(self, errors::INCONSISTENT_CLUSTER_ID, Some(message));
        }
        // Checked against our own epoch: the request carries none.
        if let Some(error) = self.validate_leader_only_request(self.role.epoch()) {
            return self.respond(req, ResponseBody::AddRaftVoter(add_voter_refusal(error)));
        }
        if body.voter_id < 0 || body.voter_directory_id.is_nil() {
            let message = "Add voter request didn't include a valid voter".to_string();
            return answer(self, errors::INVALID_REQUEST, Some(message));
        }
        let key = ReplicaKey::new(body.voter_id, body.voter_directory_id);
        let endpoints =
            endpoints_from_listeners(body.listeners.iter().map(|l| (&l.name, &l.host, l.port)));
        let Some(address) = endpoints.get(&self.cfg.listener_name).cloned() else {
            let message = format!(
                "Add voter request didn't include the endpoint ({}) for the default listener \
                 ListenerName({})",
                java_endpoints_string(body.listeners.iter().map(|l| (&l.name, &l.host, l.port))),
                self.cfg.listener_name
            );
            return answer(self, errors::INVALID_REQUEST, Some(message));
        };
        let ack_when_committed = body.ack_when_committed;
        if let Err((error, message)) =
            self.start_add_voter(now_ms, req, key, endpoints, address, ack_when_committed)
        {
            answer(self, error, Some(message));
        }
    }

    /// The handler's checks, then the ApiVersions to the new voter. Err is answered at once.
    fn start_add_voter(
        &mut self,
        now_ms: u64,
        req: &InboundRequest,
        key: ReplicaKey,
        endpoints: Endpoints,
        address: Endpoint,
        ack_when_committed: bool,
    ) -> Result<(), (i16, String)> {
        self.voter_change_preconditions(now_ms, "adding")?;
        if self.history.voters().contains_id(key.id) {
            return Err((
                errors::DUPLICATE_VOTER,
                format!(
                    "The voter id for {key} is already part of the set of voters {}.",
                    self.history.voters().java_voter_keys_string()
                ),
            ));
        }
        if !self.requests.is_ready(key.id, now_ms) {
            return Err((
                errors::REQUEST_TIMED_OUT,
                format!("New voter {key} is not ready to receive requests"),
            ));
        }
        let request = RequestBody::ApiVersions(
            ApiVersionsRequest::default()
                .with_client_software_name(StrBytes::from_static_str("ferrokraft"))
                .with_client_software_version(StrBytes::from_static_str(env!("CARGO_PKG_VERSION"))),
        );
        self.send(
            now_ms,
            Destination {
                node_id: key.id,
                endpoint: address,
            },
            request,
        );
        let deadline_ms = now_ms + self.cfg.request_timeout_ms;
        if let Role::Leader(l) = &mut self.role {
            l.add_voter = Some(Box::new(PendingAddVoter {
                request_id: req.request_id,
                api_version: req.api_version,
                voter: VoterNode {
                    key,
                    endpoints,
                    kraft_version_min: 0,
                    kraft_version_max: 0,
                },
                deadline_ms,
                last_offset: None,
                ack_when_committed,
                answered: false,
            }));
        }
        Ok(())
    }

    /// The new voter's ApiVersions answer, or `Err(error)` when there was none
    /// (`AddVoterHandler.handleApiVersionsResponse`).
    pub(super) fn handle_api_versions_response(
        &mut self,
        now_ms: u64,
        log: &dyn LogReader,
        from: i32,
        result: Result<&ApiVersionsResponse, i16>,
    ) {
        // A failed or error answer backs the node off, as Kafka's request manager does when
        // the handler reports the response unsuccessful.
        match result {
            Ok(r) if r.error_code == errors::NONE => self.requests.on_success(from),
            _ => self
                .requests
                .on_error(from, now_ms + self.cfg.retry_backoff_ms),
        }
        let Role::Leader(l) = &self.role else {
            return;
        };
        let Some(pending) = &l.add_voter else {
            return;
        };
        if pending.last_offset.is_some() || pending.voter.key.id != from {
            tracing::info!(
                node_id = self.local.id,
                "ApiVersions answer from node {from} is not expected"
            );
            return;
        }
        let voter = pending.voter.clone();
        let response = match result {
            Ok(r) if r.error_code == errors::NONE => r,
            Ok(r) => return self.abort_api_versions(r.error_code),
            Err(error) => return self.abort_api_versions(error),
        };
        let kraft_version = self.history.kraft_version();
        let range = response
            .supported_features
            .iter()
            .find(|f| f.name.as_str() == KRAFT_VERSION_FEATURE)
            .map(|f| (f.min_version, f.max_version));
        let Some((min, max)) =
            range.filter(|(min, max)| *min <= kraft_version && *max >= kraft_version)
        else {
            let (min, max) = range.unwrap_or((0, 0));
            return self.complete_add_voter(
                errors::INVALID_REQUEST,
                Some(format!(
                    "Aborted add voter operation for {} since the kraft.version range (min: {min}, max: {max}) doesn't support the finalized version {kraft_version}",
                    voter.key
                )),
            );
        };
        if !self.is_replica_caught_up(&voter.key, now_ms) {
            return self.complete_add_voter(
                errors::REQUEST_TIMED_OUT,
                Some(format!(
                    "Aborted add voter operation for {} since it is lagging behind",
                    voter.key
                )),
            );
        }
        let node = VoterNode {
            kraft_version_min: min,
            kraft_version_max: max,
            ..voter
        };
        let Some(voters) = self.history.voters().add_voter(node) else {
            // Only one change runs at a time, so the id cannot have become a voter meanwhile.
            tracing::error!(
                node_id = self.local.id,
                "cannot add {:?} to the voters",
                voter.key
            );
            return self.complete_add_voter(errors::UNKNOWN_SERVER_ERROR, None);
        };
        // The offset is set before appending: a lone leader commits within the append.
        let offset = {
            self.drain_pending(now_ms, log);
            self.log_end(log).offset
        };
        if let Role::Leader(l) = &mut self.role {
            if let Some(p) = &mut l.add_voter {
                p.last_offset = Some(offset);
            }
        }
        tracing::info!(
            node_id = self.local.id,
            "Adding voter {:?} with a VotersRecord at offset {offset}",
            voter.key
        );
        if self.append_voters_record(now_ms, log, &voters).is_none() {
            return self.complete_add_voter(errors::UNKNOWN_SERVER_ERROR, None);
        }
        self.answer_add_voter_early();
    }

    fn abort_api_versions(&mut self, error: i16) {
        self.complete_add_voter(
            errors::REQUEST_TIMED_OUT,
            // Kafka's text, "for since" included.
            Some(format!(
                "Aborted add voter operation for since API_VERSIONS returned an error {}",
                errors::error_name(error)
            )),
        );
    }

    /// `LeaderState.isReplicaCaughtUp`: the new voter, fetching as an observer, was caught up
    /// at some point and fetched within the last hour.
    fn is_replica_caught_up(&self, key: &ReplicaKey, now_ms: u64) -> bool {
        let Role::Leader(l) = &self.role else {
            return false;
        };
        l.observers.get(key).is_some_and(|s| {
            s.last_caught_up_ms.is_some()
                && s.last_fetch_ms
                    .is_some_and(|t| t + CAUGHT_UP_FETCH_WINDOW_MS > now_ms)
        })
    }
}

/// Kafka's `Endpoints.toString` of an AddRaftVoter request's listeners, as its refusal of a
/// request without the default listener prints them:
/// `Endpoints(endpoints={ListenerName(A)=host/<unresolved>:port, …})`, in the iteration order
/// of the `HashMap` Kafka fills (sized for the request's listener count; a repeated name keeps
/// its first place and takes the last address).
fn java_endpoints_string<'a>(
    listeners: impl Iterator<Item = (&'a StrBytes, &'a StrBytes, u16)>,
) -> String {
    let mut entries: Vec<(String, String)> = Vec::new();
    for (name, host, port) in listeners {
        let name = name.to_ascii_uppercase();
        let address = format!("{host}/<unresolved>:{port}");
        match entries.iter_mut().find(|(n, _)| *n == name) {
            Some(entry) => entry.1 = address,
            None => entries.push((name, address)),
        }
    }
    java_hash_map_order(&mut entries, Built::WithCapacity, |(name, _)| name);
    let shown: Vec<String> = entries
        .iter()
        .map(|(name, address)| format!("ListenerName({name})={address}"))
        .collect();
    format!("Endpoints(endpoints={{{}}})", shown.join(", "))
}
