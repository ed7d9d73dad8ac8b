//! Fitting a request the core built (with every field of the newest version) to the version a
//! peer negotiated, the way Kafka's request builders do: fields the version cannot carry are
//! cleared or moved (Fetch below v15 carries the replica id at the top level). A field that is
//! essential and cannot be carried (PreVote below Vote v2) makes the encode fail, which the
//! caller reports as UNSUPPORTED_VERSION, as Kafka's client does.

use kafka_protocol::messages::fetch_request::ReplicaState;
use kafka_protocol::messages::BrokerId;
use uuid::Uuid;

use crate::codec::RequestBody;

/// Returns `body` adapted to `version`.
pub fn adapt_request(mut body: RequestBody, version: i16) -> RequestBody {
    match &mut body {
        RequestBody::Fetch(f) => {
            if version < 15 {
                f.replica_id = f.replica_state.replica_id;
                f.replica_state = ReplicaState::default();
            } else {
                f.replica_id = BrokerId(-1);
            }
            if version < 12 {
                f.cluster_id = None;
            }
            for t in &mut f.topics {
                if version >= 13 {
                    t.topic = Default::default();
                } else {
                    t.topic_id = Uuid::nil();
                }
                for p in &mut t.partitions {
                    if version < 17 {
                        p.replica_directory_id = Uuid::nil();
                    }
                    if version < 18 {
                        p.high_watermark = i64::MAX;
                    }
                }
            }
        }
        RequestBody::Vote(v) if version < 1 => {
            v.voter_id = BrokerId(-1);
            for t in &mut v.topics {
                for p in &mut t.partitions {
                    p.replica_directory_id = Uuid::nil();
                    p.voter_directory_id = Uuid::nil();
                }
            }
        }
        RequestBody::BeginQuorumEpoch(b) if version < 1 => {
            b.voter_id = BrokerId(-1);
            b.leader_endpoints.clear();
            for t in &mut b.topics {
                for p in &mut t.partitions {
                    p.voter_directory_id = Uuid::nil();
                }
            }
        }
        RequestBody::EndQuorumEpoch(e) => {
            if version < 1 {
                e.leader_endpoints.clear();
            }
            for t in &mut e.topics {
                for p in &mut t.partitions {
                    if version < 1 {
                        p.preferred_candidates.clear();
                    } else {
                        p.preferred_successors.clear();
                    }
                }
            }
        }
        RequestBody::FetchSnapshot(s) if version < 1 => {
            for t in &mut s.topics {
                for p in &mut t.partitions {
                    p.replica_directory_id = Uuid::nil();
                }
            }
        }
        _ => {}
    }
    body
}
