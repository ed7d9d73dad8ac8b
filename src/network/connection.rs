//! One client connection: read frames, hand them to the handler, write answers in order.
//!
//! Bad input never takes the node down: an oversized, negative or undecodable frame, an
//! unknown API or version, is logged once with the peer address and the connection is closed,
//! which is what Kafka's socket server does for each of these (InvalidReceiveException /
//! InvalidRequestException → close).

use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

use crate::codec::frame::{check_frame, FrameCheck, SIZE_PREFIX_BYTES};
use crate::codec::request::decode_request;

use super::{ConnectionLimits, RequestContext, RequestHandler};

/// Bytes read from the socket per call; the buffer grows as a frame's bytes actually arrive,
/// so a peer announcing a 100 MiB frame does not make us allocate it up front.
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// Serves one connection until the peer closes it, it misbehaves, it idles out, or `shutdown`.
pub async fn serve_connection<H: RequestHandler>(
    mut stream: TcpStream,
    ctx: RequestContext,
    handler: Arc<H>,
    limits: ConnectionLimits,
    shutdown: CancellationToken,
) {
    let mut buf = BytesMut::with_capacity(READ_CHUNK_BYTES);
    let idle = Duration::from_millis(limits.idle_timeout_ms);
    loop {
        // Serve every whole frame already buffered, in order.
        loop {
            match check_frame(&buf, limits.request_max_bytes) {
                Err(e) => {
                    tracing::warn!(peer = %ctx.peer, listener = %ctx.listener_name, "closing connection: {e}");
                    return;
                }
                Ok(FrameCheck::Incomplete { .. }) => break,
                Ok(FrameCheck::Complete { body_len }) => {
                    buf.advance(SIZE_PREFIX_BYTES);
                    let frame = buf.split_to(body_len).freeze();
                    let request = match decode_request(frame) {
                        Ok(r) => r,
                        Err(e) => {
                            tracing::warn!(peer = %ctx.peer, listener = %ctx.listener_name, "closing connection: {e}");
                            return;
                        }
                    };
                    let Some(response) = handler.handle(&ctx, request).await else {
                        return;
                    };
                    if let Err(e) = stream.write_all(&response).await {
                        tracing::debug!(peer = %ctx.peer, "write failed: {e}");
                        return;
                    }
                }
            }
        }
        buf.reserve(READ_CHUNK_BYTES);
        let read = tokio::select! {
            () = shutdown.cancelled() => return,
            r = tokio::time::timeout(idle, stream.read_buf(&mut buf)) => r,
        };
        match read {
            Err(_) => {
                tracing::debug!(peer = %ctx.peer, "closing idle connection after {} ms", limits.idle_timeout_ms);
                return;
            }
            Ok(Ok(0)) => return,
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                tracing::debug!(peer = %ctx.peer, "read failed: {e}");
                return;
            }
        }
    }
}
