//! Envelope (API 58): a broker forwards a client's request to the active controller wrapped in
//! an EnvelopeRequest, with the client's principal and address beside it, and gets the inner
//! response back wrapped in an EnvelopeResponse.
//!
//! ```text
//!   EnvelopeRequest ─unwrap_envelope─▶ Forwarded { principal, address, header, body }
//!        (an error code instead when a check fails)      │ served like a direct request
//!   EnvelopeResponse ◀──────────wrap_response──────────── inner ResponseBody
//! ```
//!
//! The checks and their order are those of Kafka 4.1.2's controller (`EnvelopeUtils`,
//! `ControllerApis.handleEnvelopeRequest`, `RequestChannel.Request.buildResponseSend`):
//!
//! 1. the principal must deserialize as a version-prefixed DefaultPrincipalData
//!    → else PRINCIPAL_DESERIALIZATION_FAILURE;
//! 2. the client address must be 4 or 16 raw bytes → else INVALID_REQUEST;
//! 3. the inner request header must parse → else UNSUPPORTED_VERSION (Kafka picks this code so
//!    the broker can tell an unreadable inner request from a malformed envelope);
//! 4. the inner API must be forwardable → else INVALID_REQUEST;
//! 5. the inner body must parse at its version → else UNSUPPORTED_VERSION.
//!
//! Kafka first authorizes CLUSTER_ACTION for the envelope's own principal; with an authorizer
//! configured, ferrokraft's controller makes that check (`controller::authorization::refusal`,
//! on the forwarding broker's principal) before it serves the inner request.

use crate::common::errors::NOT_LEADER_OR_FOLLOWER;
pub use crate::common::errors::{
    INVALID_REQUEST, NOT_CONTROLLER, PRINCIPAL_DESERIALIZATION_FAILURE, UNSUPPORTED_VERSION,
};
use crate::common::principal::Principal;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use bytes::{Buf, Bytes, BytesMut};
use kafka_protocol::messages::{DefaultPrincipalData, EnvelopeRequest, EnvelopeResponse};
use kafka_protocol::protocol::{decode_budget, Decodable};

use super::header::{decode_request_header, encode_response_header, RequestHeader};
use super::messages::{RequestBody, ResponseBody};
use super::versions;
use super::CodecError;

/// An envelope's inner request, checked and decoded, ready to be served as a direct one.
#[derive(Debug, Clone, PartialEq)]
pub struct Forwarded {
    /// The original client's principal (Kafka's DefaultPrincipalData; ferrokraft has no
    /// principal the controller authorizes the inner request for).
    pub principal: Principal,
    /// The original client's address.
    pub client_address: IpAddr,
    /// The inner request header (its correlation id goes into the inner response).
    pub header: RequestHeader,
    /// The inner request body.
    pub body: RequestBody,
}

/// Why an envelope is refused: the envelope-level error code and a reason for the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvelopeRejected {
    /// The EnvelopeResponse error code.
    pub error_code: i16,
    /// What was wrong, for the log line.
    pub reason: String,
}

fn rejected(error_code: i16, reason: impl Into<String>) -> EnvelopeRejected {
    EnvelopeRejected {
        error_code,
        reason: reason.into(),
    }
}

/// Checks an envelope in Kafka's order and decodes its inner request.
///
/// An inner request at a version ferrokraft does not advertise (every forwardable API is
/// served, not every version Kafka's client knows) is refused with UNSUPPORTED_VERSION; for a
/// broker this code means "the controller's API versions changed under you": it closes the client's
/// connection so the client reconnects and sees the broker's ApiVersions, which only lists the
/// forwardable APIs its active controller advertises.
pub fn unwrap_envelope(req: &EnvelopeRequest) -> Result<Forwarded, EnvelopeRejected> {
    let principal = decode_principal(req.request_principal.as_ref()).map_err(|reason| {
        rejected(
            PRINCIPAL_DESERIALIZATION_FAILURE,
            format!("failed to deserialize client principal from envelope: {reason}"),
        )
    })?;
    let client_address = decode_address(&req.client_host_address).ok_or_else(|| {
        rejected(
            INVALID_REQUEST,
            format!(
                "failed to parse client address from envelope ({} bytes)",
                req.client_host_address.len()
            ),
        )
    })?;
    let mut data = req.request_data.clone();
    let header = decode_request_header(&mut data).map_err(|e| {
        rejected(
            UNSUPPORTED_VERSION,
            format!("failed to parse request header from envelope: {e}"),
        )
    })?;
    let api_key = header.api_key;
    let version = header.api_version;
    if !super::apis::api(api_key).is_some_and(|a| a.forwardable) {
        return Err(rejected(
            INVALID_REQUEST,
            format!("API {api_key:?} is not enabled or is not eligible for forwarding"),
        ));
    }
    let served = versions::advertised(api_key).filter(|r| r.contains(version));
    if served.is_none() {
        return Err(rejected(
            UNSUPPORTED_VERSION,
            format!("forwarded {api_key:?} v{version} is not served by this controller"),
        ));
    }
    // The inner request gets its own decode budget, sized by its own bytes.
    let budget_bytes = super::request::decode_budget_bytes(data.len());
    let (body, _) = decode_budget::with_budget(budget_bytes, || {
        RequestBody::decode(api_key, version, &mut data)
    });
    let body = body.map_err(|e| {
        rejected(
            UNSUPPORTED_VERSION,
            format!("failed to parse forwarded request: {e}"),
        )
    })?;
    Ok(Forwarded {
        principal,
        client_address,
        header,
        body,
    })
}

/// Kafka's `DefaultKafkaPrincipalBuilder.deserialize`: an int16 version, then DefaultPrincipalData
/// at that version (only 0 exists). Trailing bytes are ignored, as there.
fn decode_principal(bytes: Option<&Bytes>) -> Result<Principal, String> {
    let Some(bytes) = bytes else {
        return Err("no principal".to_string());
    };
    let mut buf = bytes.clone();
    if buf.remaining() < 2 {
        return Err(format!("{} bytes, shorter than a version", buf.remaining()));
    }
    let version = buf.get_i16();
    if version != 0 {
        return Err(format!("invalid principal data version {version}"));
    }
    let data = DefaultPrincipalData::decode(&mut buf, version).map_err(|e| format!("{e:#}"))?;
    Ok(Principal {
        principal_type: data._type.to_string(),
        name: data.name.to_string(),
        token_authenticated: data.token_authenticated,
    })
}

/// Java's `InetAddress.getByAddress`: 4 bytes IPv4, 16 bytes IPv6, nothing else.
fn decode_address(bytes: &[u8]) -> Option<IpAddr> {
    if let Ok(v4) = <[u8; 4]>::try_from(bytes) {
        return Some(IpAddr::V4(Ipv4Addr::from(v4)));
    }
    let v6 = <[u8; 16]>::try_from(bytes).ok()?;
    Some(IpAddr::V6(Ipv6Addr::from(v6)))
}

/// The inner response bytes an envelope carries: response header and body, no size prefix.
pub fn encode_response_payload(
    body: &ResponseBody,
    version: i16,
    correlation_id: i32,
) -> Result<Bytes, CodecError> {
    let mut buf = BytesMut::with_capacity(64);
    encode_response_header(&mut buf, body.api_key(), version, correlation_id);
    body.encode(version, &mut buf)?;
    Ok(buf.freeze())
}

/// Wraps the inner response. An inner "not the controller" becomes an envelope-level
/// NOT_CONTROLLER without data, so the broker looks for the new active controller and retries
/// instead of handing the error to its client; for DescribeQuorum that is NOT_LEADER_OR_FOLLOWER
/// anywhere in the response, for the others NOT_CONTROLLER.
pub fn wrap_response(
    inner: &ResponseBody,
    version: i16,
    correlation_id: i32,
) -> Result<EnvelopeResponse, CodecError> {
    let not_controller = match inner {
        ResponseBody::DescribeQuorum(_) => NOT_LEADER_OR_FOLLOWER,
        _ => NOT_CONTROLLER,
    };
    if error_codes(inner).contains(&not_controller) {
        return Ok(EnvelopeResponse::default().with_error_code(NOT_CONTROLLER));
    }
    let payload = encode_response_payload(inner, version, correlation_id)?;
    Ok(EnvelopeResponse::default().with_response_data(Some(payload)))
}

/// The error codes Kafka counts in a response (`AbstractResponse.errorCounts`) for the APIs that
/// can arrive forwarded; other bodies never do (`unwrap_envelope` refuses them).
fn error_codes(body: &ResponseBody) -> Vec<i16> {
    match body {
        ResponseBody::DescribeQuorum(r) => std::iter::once(r.error_code)
            .chain(
                r.topics
                    .iter()
                    .flat_map(|t| t.partitions.iter().map(|p| p.error_code)),
            )
            .collect(),
        ResponseBody::AddRaftVoter(r) => vec![r.error_code],
        ResponseBody::CreateTopics(r) => r.topics.iter().map(|t| t.error_code).collect(),
        ResponseBody::DeleteTopics(r) => r.responses.iter().map(|t| t.error_code).collect(),
        ResponseBody::CreatePartitions(r) => r.results.iter().map(|t| t.error_code).collect(),
        ResponseBody::IncrementalAlterConfigs(r) => {
            r.responses.iter().map(|t| t.error_code).collect()
        }
        ResponseBody::AlterConfigs(r) => r.responses.iter().map(|t| t.error_code).collect(),
        ResponseBody::AlterPartitionReassignments(r) => std::iter::once(r.error_code)
            .chain(
                r.responses
                    .iter()
                    .flat_map(|t| t.partitions.iter().map(|p| p.error_code)),
            )
            .collect(),
        ResponseBody::ListPartitionReassignments(r) => vec![r.error_code],
        ResponseBody::UpdateFeatures(r) => std::iter::once(r.error_code)
            .chain(r.results.iter().map(|x| x.error_code))
            .collect(),
        ResponseBody::ElectLeaders(r) => std::iter::once(r.error_code)
            .chain(
                r.replica_election_results
                    .iter()
                    .flat_map(|t| t.partition_result.iter().map(|p| p.error_code)),
            )
            .collect(),
        ResponseBody::RemoveRaftVoter(r) => vec![r.error_code],
        ResponseBody::UnregisterBroker(r) => vec![r.error_code],
        ResponseBody::UnregisterController(r) => vec![r.error_code],
        _ => Vec::new(),
    }
}

#[cfg(test)]
#[path = "envelope_tests.rs"]
mod tests;
