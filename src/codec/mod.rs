//! The wire codec: frames, headers, and typed bodies for every API we advertise.
//!
//! ```text
//!   socket bytes ─▶ frame::check_frame ─▶ request::decode_request ─▶ InboundRequest
//!   ResponseBody ─▶ response::encode_response ─▶ size-prefixed bytes ─▶ socket
//! ```
//!
//! kafka-protocol supplies the message structs and their versioned encodings; this module adds
//! the framing, the header rules and the single table of what we advertise.
pub mod api_versions;
pub mod apis;
pub mod envelope;
pub mod error;
pub mod error_counts;
pub mod error_response;
pub mod frame;
pub mod header;
pub mod messages;
pub mod reproducers;
pub mod request;
pub mod response;
pub mod versions;

pub use error::CodecError;
pub use messages::{RequestBody, ResponseBody};
