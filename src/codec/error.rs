//! Errors of the wire codec. A `CodecError` is a local verdict on bytes a peer sent (or on a
//! message we failed to encode); protocol outcomes such as UNSUPPORTED_VERSION are not errors
//! here but responses built by the caller.

use kafka_protocol::messages::ApiKey;

/// What went wrong turning bytes into a request or a response into bytes.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    /// The 4-byte size prefix is negative.
    #[error("invalid frame size {size}: negative")]
    NegativeSize {
        /// The size the peer announced.
        size: i32,
    },
    /// The 4-byte size prefix exceeds `socket.request.max.bytes`.
    #[error("invalid frame size {size}: larger than socket.request.max.bytes={max_bytes}")]
    FrameTooLarge {
        /// The size the peer announced.
        size: i32,
        /// The configured limit.
        max_bytes: usize,
    },
    /// The request header could not be read.
    #[error("error parsing request header (api key guess {api_key}): {reason}")]
    MalformedHeader {
        /// The first two bytes, if present, else -1.
        api_key: i16,
        /// Why parsing failed.
        reason: String,
    },
    /// The API key is not one Kafka defines.
    #[error("unknown API key {api_key}")]
    UnknownApiKey {
        /// The key as sent.
        api_key: i16,
    },
    /// The API is known but this listener does not serve it, or not at this version.
    #[error("received request api key {api_key:?} with version {version} which is not enabled")]
    ApiNotEnabled {
        /// The requested API.
        api_key: ApiKey,
        /// The requested version.
        version: i16,
    },
    /// The body did not decode at the version given in its header.
    #[error("error getting request for apiKey: {api_key:?}, apiVersion: {version}: {reason}")]
    MalformedBody {
        /// The API of the body.
        api_key: ApiKey,
        /// The version the body was decoded at.
        version: i16,
        /// The decoder's complaint.
        reason: String,
    },
    /// The body would allocate more than its decode budget (a frame of many minimal array
    /// elements); refused before the memory is allocated.
    #[error("{api_key:?} v{version} request of {body_len} bytes would decode to more than {budget_bytes} bytes")]
    DecodeBudget {
        /// The API of the body.
        api_key: ApiKey,
        /// The version the body was decoded at.
        version: i16,
        /// The frame body's length.
        body_len: usize,
        /// What it was allowed to allocate.
        budget_bytes: usize,
    },
    /// A message could not be encoded at the requested version (a field that the version
    /// cannot carry, or a value out of range).
    #[error("cannot encode {api_key:?} v{version}: {reason}")]
    Encode {
        /// The API being encoded.
        api_key: ApiKey,
        /// The version asked for.
        version: i16,
        /// The encoder's complaint.
        reason: String,
    },
}
