//! The wire as the scenario context models it. Every request a scenario delivers to the core,
//! every answer the core gives, and every answer a scenario gives to the core's own requests
//! crosses the codec at the version the two sides would use, so a scenario run at old RPC
//! versions sees exactly what a peer of that age sends and receives: fields the version cannot
//! carry are gone, a request the version cannot carry at all (a pre-vote below Vote v2) comes
//! back as UNSUPPORTED_VERSION, and an answer of the core that cannot be encoded at the
//! request's version fails the scenario.
//!
//! Kafka's `RaftClientTestContext` parameterises its scenarios the same way (`withKip853Rpc`,
//! later `withRaftProtocol`): one run with the pre-KIP-853 versions, one with the new ones.

use bytes::BytesMut;
use kafka_protocol::messages::ApiKey;

use crate::codec::versions::advertised;
use crate::codec::{RequestBody, ResponseBody};
use crate::network::adapt::adapt_request;

/// The RPC versions a scenario speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rpc {
    /// Before KIP-853 (Kafka ≤ 3.8): Vote, BeginQuorumEpoch, EndQuorumEpoch and FetchSnapshot
    /// v0, Fetch v16, DescribeQuorum v1. No directory ids, no endpoints in answers, no pre-vote.
    Kip595,
    /// KIP-853 (Kafka 3.9): Vote v1, BeginQuorumEpoch/EndQuorumEpoch/FetchSnapshot v1, Fetch v17,
    /// DescribeQuorum v2. No pre-vote.
    Kip853,
    /// The newest versions we advertise (Kafka 4.1): Vote v2 (KIP-996 pre-vote), Fetch v18.
    Newest,
}

impl Rpc {
    /// Every version set, oldest first, for scenarios Kafka runs at old and new versions.
    pub const ALL: [Rpc; 3] = [Rpc::Kip595, Rpc::Kip853, Rpc::Newest];

    /// The version of `api` both sides use.
    pub fn version(self, api: ApiKey) -> i16 {
        let newest = advertised(api).map_or(0, |r| r.max_version);
        match (self, api) {
            (Rpc::Newest, _) => newest,
            (Rpc::Kip595, ApiKey::Fetch) => 16,
            (Rpc::Kip595, ApiKey::DescribeQuorum) => 1,
            (
                Rpc::Kip595,
                ApiKey::Vote
                | ApiKey::BeginQuorumEpoch
                | ApiKey::EndQuorumEpoch
                | ApiKey::FetchSnapshot,
            ) => 0,
            (Rpc::Kip853, ApiKey::Fetch) => 17,
            (Rpc::Kip853, ApiKey::Vote) => 1,
            (Rpc::Kip853 | Rpc::Kip595, _) => newest,
        }
    }

    /// Whether a pre-vote can travel (Vote v2): otherwise the sender's client reports
    /// UNSUPPORTED_VERSION and the prospective replica goes straight to candidate.
    pub fn has_pre_vote(self) -> bool {
        self.version(ApiKey::Vote) >= 2
    }
}

/// `body` as the receiver decodes it when the sender fits it to `version` (as Kafka's request
/// builders do) and encodes it. `None` when the version cannot carry it.
pub fn request_over_the_wire(body: &RequestBody, version: i16) -> Option<RequestBody> {
    let api = body.api_key();
    let fitted = adapt_request(body.clone(), version);
    let mut buf = BytesMut::new();
    fitted.encode(version, &mut buf).ok()?;
    let mut bytes = buf.freeze();
    let decoded = RequestBody::decode(api, version, &mut bytes);
    Some(decoded.unwrap_or_else(|e| panic!("{api:?} v{version} does not decode back: {e}")))
}

/// `body` as the receiver decodes it after the sender encoded it at `version`; an error when
/// it cannot be encoded (a field set that the version lacks).
pub fn response_over_the_wire(body: &ResponseBody, version: i16) -> Result<ResponseBody, String> {
    let api = body.api_key();
    let mut buf = BytesMut::new();
    body.encode(version, &mut buf)
        .map_err(|e| format!("{api:?} response v{version}: {e}"))?;
    let mut bytes = buf.freeze();
    ResponseBody::decode(api, version, &mut bytes)
        .map_err(|e| format!("{api:?} response v{version} does not decode back: {e}"))
}
