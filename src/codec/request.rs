//! Turning a frame body into a request we can serve, with Kafka's controller-side rules:
//!
//! - an unknown API key, an API this listener does not serve, or a version outside the
//!   advertised range is refused (Kafka's `SocketServer` throws InvalidRequestException and
//!   closes the connection);
//! - except ApiVersions, which is accepted at *any* version: an unknown version is answered at
//!   v0 with UNSUPPORTED_VERSION and our API list, so the client retries (KIP-511);
//! - a body that does not decode is refused the same way; trailing bytes are ignored, as in Kafka.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::ApiKey;
use kafka_protocol::protocol::decode_budget;

use super::error::CodecError;
use super::header::{decode_request_header, encode_request_header, RequestHeader};
use super::messages::RequestBody;
use super::versions;

/// A request we can hand to the node.
// Moved once from the codec to the handler; boxing the large variant would buy nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum InboundRequest {
    /// A request at a version we serve.
    Request {
        /// Its header.
        header: RequestHeader,
        /// Its decoded body.
        body: RequestBody,
    },
    /// An ApiVersions request at a version we do not know: answer v0 + UNSUPPORTED_VERSION.
    UnsupportedApiVersions {
        /// Its header (the version is the unknown one).
        header: RequestHeader,
    },
}

impl InboundRequest {
    /// The header of the request.
    pub fn header(&self) -> &RequestHeader {
        match self {
            Self::Request { header, .. } | Self::UnsupportedApiVersions { header } => header,
        }
    }
}

/// Bytes a request may allocate while decoding, per byte of its frame, on top of
/// [`DECODE_BUDGET_FLOOR_BYTES`]. The largest legitimate shapes (tens of thousands of topics
/// with two- to six-character names in one CreateTopics or ElectLeaders) decode to about 8 bytes
/// per wire byte (see the tests); frames of minimal array elements would take 16 to 55.
pub const DECODE_BYTES_PER_WIRE_BYTE: usize = 12;

/// Bytes any request may allocate while decoding, whatever its size.
pub const DECODE_BUDGET_FLOOR_BYTES: usize = 256 * 1024;

/// The most a frame body of `body_len` bytes may allocate while it is decoded.
pub fn decode_budget_bytes(body_len: usize) -> usize {
    body_len
        .saturating_mul(DECODE_BYTES_PER_WIRE_BYTE)
        .saturating_add(DECODE_BUDGET_FLOOR_BYTES)
}

/// Decodes one frame body (without its size prefix), allocating at most
/// [`decode_budget_bytes`] for it: a body that would need more is refused before the memory is
/// allocated ([`CodecError::DecodeBudget`]).
pub fn decode_request(frame: Bytes) -> Result<InboundRequest, CodecError> {
    decode_request_measured(frame).0
}

/// [`decode_request`] with at most `budget_bytes` to allocate (the listener passes what the
/// request-memory budget reserved for the frame, if less than [`decode_budget_bytes`]).
pub fn decode_request_within(
    frame: Bytes,
    budget_bytes: usize,
) -> Result<InboundRequest, CodecError> {
    decode_measured(frame, budget_bytes).0
}

/// [`decode_request`], also returning the bytes its decode charged to the budget.
pub fn decode_request_measured(frame: Bytes) -> (Result<InboundRequest, CodecError>, usize) {
    let budget_bytes = decode_budget_bytes(frame.len());
    decode_measured(frame, budget_bytes)
}

fn decode_measured(
    frame: Bytes,
    budget_bytes: usize,
) -> (Result<InboundRequest, CodecError>, usize) {
    let body_len = frame.len();
    let (result, used) = decode_budget::with_budget(budget_bytes, || decode_unbudgeted(frame));
    let result = match result {
        Err(CodecError::MalformedBody {
            api_key, version, ..
        }) if used.exhausted => Err(CodecError::DecodeBudget {
            api_key,
            version,
            body_len,
            budget_bytes,
        }),
        other => other,
    };
    (result, used.charged_bytes)
}

fn decode_unbudgeted(mut frame: Bytes) -> Result<InboundRequest, CodecError> {
    let header = decode_request_header(&mut frame)?;
    let api_key = header.api_key;
    let version = header.api_version;
    let Some(range) = versions::advertised(api_key) else {
        return Err(CodecError::ApiNotEnabled { api_key, version });
    };
    if !range.contains(version) {
        if api_key == ApiKey::ApiVersions && version > range.max_version {
            return Ok(InboundRequest::UnsupportedApiVersions { header });
        }
        return Err(CodecError::ApiNotEnabled { api_key, version });
    }
    let body = RequestBody::decode(api_key, version, &mut frame)?;
    Ok(InboundRequest::Request { header, body })
}

/// Encodes a request we send, with its size prefix.
pub fn encode_request(
    body: &RequestBody,
    version: i16,
    correlation_id: i32,
    client_id: &str,
) -> Result<Bytes, CodecError> {
    let mut buf = BytesMut::with_capacity(64);
    buf.extend_from_slice(&[0; 4]);
    encode_request_header(&mut buf, body.api_key(), version, correlation_id, client_id);
    body.encode(version, &mut buf)?;
    patch_size_prefix(&mut buf);
    Ok(buf.freeze())
}

/// Writes the frame length into the 4 reserved bytes at the front of `buf`.
pub(crate) fn patch_size_prefix(buf: &mut BytesMut) {
    let body_len = (buf.len() - 4) as u32;
    buf[..4].copy_from_slice(&body_len.to_be_bytes());
}

/// Kafka's request-parse checks of the three ACL APIs (`CreateAclsRequest.validate`,
/// `DeleteAclsRequest`/`DescribeAclsRequest.normalizeAndValidate`): an enum sent as UNKNOWN (0)
/// fails the parse, and Kafka closes the connection. `Err` holds the reason to log.
pub fn parse_check(body: &RequestBody) -> Result<(), String> {
    use crate::common::acl::{AclOperation, AclPermissionType, PatternType, ResourceType};
    let unknown = |pattern: i8, resource: i8, op: i8, perm: i8| {
        pattern == PatternType::Unknown.code()
            || resource == ResourceType::Unknown.code()
            || op == AclOperation::Unknown.code()
            || perm == AclPermissionType::Unknown.code()
    };
    match body {
        RequestBody::CreateAcls(req)
            if req.creations.iter().any(|c| {
                unknown(
                    c.resource_pattern_type,
                    c.resource_type,
                    c.operation,
                    c.permission_type,
                )
            }) =>
        {
            Err("CreatableAcls contain unknown elements".to_string())
        }
        RequestBody::DeleteAcls(req)
            if req.filters.iter().any(|f| {
                unknown(
                    f.pattern_type_filter,
                    f.resource_type_filter,
                    f.operation,
                    f.permission_type,
                )
            }) =>
        {
            Err("Filters contain UNKNOWN elements".to_string())
        }
        RequestBody::DescribeAcls(req)
            if unknown(
                req.pattern_type_filter,
                req.resource_type_filter,
                req.operation,
                req.permission_type,
            ) =>
        {
            Err("DescribeAclsRequest contains UNKNOWN elements".to_string())
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
#[path = "request_tests.rs"]
mod tests;
