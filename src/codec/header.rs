//! Request and response headers.
//!
//! The request header is read by hand rather than through kafka-protocol because Kafka reads the
//! client id leniently (malformed UTF-8 becomes U+FFFD, a null id becomes ""), and because an
//! ApiVersions request at a version we don't know must still yield its correlation id.
//! Header versions follow the API's flexible versions: request v1/v2, response v0/v1, and the
//! ApiVersions response header is always v0.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use kafka_protocol::messages::ApiKey;

use super::error::CodecError;

/// A parsed request header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHeader {
    /// The API key as sent.
    pub api_key: ApiKey,
    /// The API version as sent (may be one we do not support).
    pub api_version: i16,
    /// Echoed in the response.
    pub correlation_id: i32,
    /// The client id ("" when null), decoded leniently as Kafka does.
    pub client_id: String,
    /// 1 or 2.
    pub header_version: i16,
}

fn malformed(api_key: i16, reason: impl Into<String>) -> CodecError {
    CodecError::MalformedHeader {
        api_key,
        reason: reason.into(),
    }
}

fn read_uvarint(buf: &mut Bytes, api_key: i16) -> Result<u32, CodecError> {
    let mut value: u32 = 0;
    for shift in (0..35).step_by(7) {
        if !buf.has_remaining() {
            return Err(malformed(api_key, "truncated varint"));
        }
        let byte = buf.get_u8();
        value |= u32::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(malformed(api_key, "varint longer than 5 bytes"))
}

/// Reads the request header from the front of `buf`, leaving the body.
pub fn decode_request_header(buf: &mut Bytes) -> Result<RequestHeader, CodecError> {
    if buf.remaining() < 2 {
        return Err(malformed(-1, "frame shorter than an api key"));
    }
    let raw_key = buf.get_i16();
    let api_key =
        ApiKey::try_from(raw_key).map_err(|()| CodecError::UnknownApiKey { api_key: raw_key })?;
    if buf.remaining() < 2 + 4 + 2 {
        return Err(malformed(raw_key, "header cut short"));
    }
    let api_version = buf.get_i16();
    let correlation_id = buf.get_i32();
    let header_version = api_key.request_header_version(api_version);
    let client_id_len = buf.get_i16();
    let client_id = if client_id_len < 0 {
        String::new()
    } else {
        let len = client_id_len as usize;
        if buf.remaining() < len {
            return Err(malformed(raw_key, "client id longer than the frame"));
        }
        String::from_utf8_lossy(&buf.split_to(len)).into_owned()
    };
    if header_version >= 2 {
        // Header tagged fields: none are defined for requests; skip them.
        let count = read_uvarint(buf, raw_key)?;
        for _ in 0..count {
            let _tag = read_uvarint(buf, raw_key)?;
            let size = read_uvarint(buf, raw_key)? as usize;
            if buf.remaining() < size {
                return Err(malformed(raw_key, "tagged field longer than the frame"));
            }
            buf.advance(size);
        }
    }
    Ok(RequestHeader {
        api_key,
        api_version,
        correlation_id,
        client_id,
        header_version,
    })
}

/// Writes a request header (for requests we send), choosing v1 or v2 from the API version.
pub fn encode_request_header(
    buf: &mut BytesMut,
    api_key: ApiKey,
    api_version: i16,
    correlation_id: i32,
    client_id: &str,
) {
    buf.put_i16(api_key as i16);
    buf.put_i16(api_version);
    buf.put_i32(correlation_id);
    let id = client_id.as_bytes();
    let len = id.len().min(i16::MAX as usize);
    buf.put_i16(len as i16);
    buf.put_slice(&id[..len]);
    if api_key.request_header_version(api_version) >= 2 {
        buf.put_u8(0); // no tagged fields
    }
}

/// Writes a response header for a response to `api_key` at `api_version`.
pub fn encode_response_header(
    buf: &mut BytesMut,
    api_key: ApiKey,
    api_version: i16,
    correlation_id: i32,
) {
    buf.put_i32(correlation_id);
    if api_key.response_header_version(api_version) >= 1 {
        buf.put_u8(0); // no tagged fields
    }
}

/// Reads a response header (for responses peers send us), returning the correlation id.
pub fn decode_response_header(
    buf: &mut Bytes,
    api_key: ApiKey,
    api_version: i16,
) -> Result<i32, CodecError> {
    if buf.remaining() < 4 {
        return Err(malformed(api_key as i16, "response header cut short"));
    }
    let correlation_id = buf.get_i32();
    if api_key.response_header_version(api_version) >= 1 {
        let count = read_uvarint(buf, api_key as i16)?;
        for _ in 0..count {
            let _tag = read_uvarint(buf, api_key as i16)?;
            let size = read_uvarint(buf, api_key as i16)? as usize;
            if buf.remaining() < size {
                return Err(malformed(
                    api_key as i16,
                    "tagged field longer than the frame",
                ));
            }
            buf.advance(size);
        }
    }
    Ok(correlation_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_header_round_trips_at_v1_and_v2() {
        for (key, version, expect_header) in [
            (ApiKey::BeginQuorumEpoch, 0, 1),
            (ApiKey::BeginQuorumEpoch, 1, 2),
            (ApiKey::Vote, 0, 2),
        ] {
            let mut buf = BytesMut::new();
            encode_request_header(&mut buf, key, version, 77, "raft-client-1");
            let mut bytes = buf.freeze();
            let header = decode_request_header(&mut bytes).unwrap();
            assert_eq!(header.api_key, key);
            assert_eq!(header.api_version, version);
            assert_eq!(header.correlation_id, 77);
            assert_eq!(header.client_id, "raft-client-1");
            assert_eq!(header.header_version, expect_header);
            assert!(bytes.is_empty());
        }
    }

    #[test]
    fn null_and_malformed_client_ids_are_read_leniently() {
        let mut bytes = Bytes::from_static(&[0, 18, 0, 3, 0, 0, 0, 9, 0xff, 0xff, 0]);
        let header = decode_request_header(&mut bytes).unwrap();
        assert_eq!(header.client_id, "");
        let mut bytes = Bytes::from_static(&[0, 18, 0, 3, 0, 0, 0, 9, 0, 2, 0xc3, 0x28, 0]);
        let header = decode_request_header(&mut bytes).unwrap();
        assert_eq!(header.client_id, "\u{fffd}(");
    }

    #[test]
    fn unknown_api_key_is_its_own_error() {
        let mut bytes = Bytes::from_static(&[0x7f, 0x00, 0, 0, 0, 0, 0, 1, 0, 0]);
        assert!(matches!(
            decode_request_header(&mut bytes),
            Err(CodecError::UnknownApiKey { api_key: 0x7f00 })
        ));
    }

    #[test]
    fn api_versions_response_header_is_always_v0() {
        let mut buf = BytesMut::new();
        encode_response_header(&mut buf, ApiKey::ApiVersions, 4, 5);
        assert_eq!(&buf[..], &[0, 0, 0, 5]);
        let mut buf = BytesMut::new();
        encode_response_header(&mut buf, ApiKey::Vote, 0, 5);
        assert_eq!(&buf[..], &[0, 0, 0, 5, 0]);
    }
}
