//! The socket server keys (Kafka's SocketServerConfigs): the largest request, and the
//! connection and request-memory limits (`connections.rs`).

use super::connections::{self, ConnectionConfig};
use super::listeners::Listener;
use super::properties::{invalid, parse_num, ConfigError, Properties};

/// `socket.request.max.bytes` (between 1 and 2147483647) and the connection limits.
pub(super) fn parse(
    props: &Properties,
    listeners: &[Listener],
) -> Result<(usize, ConnectionConfig), ConfigError> {
    let socket_request_max_bytes: usize = parse_num(
        props,
        "socket.request.max.bytes",
        crate::codec::frame::DEFAULT_REQUEST_MAX_BYTES,
    )?;
    if socket_request_max_bytes == 0 || socket_request_max_bytes > i32::MAX as usize {
        return Err(invalid(
            "socket.request.max.bytes",
            &socket_request_max_bytes.to_string(),
            "must be between 1 and 2147483647",
        ));
    }
    let connections = connections::parse(props, listeners, socket_request_max_bytes)?;
    Ok((socket_request_max_bytes, connections))
}
