//! Encoding the responses we send and decoding the ones peers send us.

use bytes::{Bytes, BytesMut};
use kafka_protocol::messages::ApiKey;

use super::error::CodecError;
use super::header::{decode_response_header, encode_response_header};
use super::messages::ResponseBody;
use super::request::patch_size_prefix;

/// Encodes `body` as the answer to a request with `correlation_id` at `version`, size prefix
/// included. The header version follows the API (ApiVersions always v0).
pub fn encode_response(
    body: &ResponseBody,
    version: i16,
    correlation_id: i32,
) -> Result<Bytes, CodecError> {
    let mut buf = BytesMut::with_capacity(64);
    buf.extend_from_slice(&[0; 4]);
    encode_response_header(&mut buf, body.api_key(), version, correlation_id);
    body.encode(version, &mut buf)?;
    patch_size_prefix(&mut buf);
    Ok(buf.freeze())
}

/// Decodes a response frame body (without size prefix) to a request of `api_key` at `version`,
/// returning the correlation id and the body.
pub fn decode_response(
    mut frame: Bytes,
    api_key: ApiKey,
    version: i16,
) -> Result<(i32, ResponseBody), CodecError> {
    let correlation_id = decode_response_header(&mut frame, api_key, version)?;
    let body = ResponseBody::decode(api_key, version, &mut frame)?;
    Ok((correlation_id, body))
}
