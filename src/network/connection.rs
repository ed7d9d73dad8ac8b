//! One client connection: read frames, hand them to the handler, write answers in order.
//!
//! Bad input never takes the node down: an oversized, negative or undecodable frame, an
//! unknown API or version, a body that would decode beyond its memory budget, is logged (once
//! per address and interval, `super::warn_limit`) and the connection is closed, which is what
//! Kafka's socket server does for each of these (InvalidReceiveException /
//! InvalidRequestException → close). A frame above `memory::SMALL_FRAME_BYTES` is read only
//! once the node's request-memory budget holds room for it (`super::memory`).

use std::time::Duration;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::codec::frame::{check_frame, FrameCheck, SIZE_PREFIX_BYTES};
use crate::codec::request::{decode_budget_bytes, decode_request_within};

use super::memory::Reservation;
use super::quotas::ConnectionSlot;
use super::{RequestContext, RequestHandler, SocketServer};

/// The most read from the socket per call; the buffer grows as a frame's bytes actually
/// arrive, so a peer announcing a 100 MiB frame does not make us allocate it up front (a large
/// frame is allocated whole once the memory budget has reserved it).
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// A large frame holding request memory must arrive within this long, plus
/// [`RESERVED_FRAME_MS_PER_MIB`] per MiB of its size: a peer trickling the body of a frame that
/// holds the budget would otherwise keep every other large request waiting (small ones never
/// wait) for as long as it keeps sending.
pub const RESERVED_FRAME_BASE_MS: u64 = 10_000;

/// See [`RESERVED_FRAME_BASE_MS`] (1 MiB/s, the slowest link a controller is expected on).
pub const RESERVED_FRAME_MS_PER_MIB: u64 = 1_000;

/// How long a reserved frame of `body_len` bytes may take to arrive.
pub fn reserved_frame_timeout(body_len: usize) -> Duration {
    let mib = (body_len as u64).div_ceil(1024 * 1024);
    Duration::from_millis(RESERVED_FRAME_BASE_MS + mib * RESERVED_FRAME_MS_PER_MIB)
}

/// What a connection's buffer grows by when no frame size is known yet: an idle connection
/// holds no buffer at all, not a read chunk.
const INITIAL_BUFFER_BYTES: usize = 512;

/// Serves one connection until the peer closes it, it misbehaves, it idles out, it is closed
/// to make room for another (`slot.evicted()`), or `shutdown`. `stream` is the TCP stream of a
/// PLAINTEXT listener or the TLS stream of an SSL one, after its handshake.
pub async fn serve_connection<H: RequestHandler, S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    ctx: RequestContext,
    handler: std::sync::Arc<H>,
    server: &SocketServer,
    slot: &ConnectionSlot,
    shutdown: CancellationToken,
) {
    let limits = server.limits;
    let mut buf = BytesMut::new();
    // Bytes the frame being read still needs, once its size prefix is known.
    let mut frame_needs: Option<usize> = None;
    let idle = limits.idle_timeout_ms.map(Duration::from_millis);
    // Memory reserved for the frame being read, if it is a large one, and the time its body
    // has left to arrive.
    let mut reservation: Option<Reservation> = None;
    let mut body_deadline: Option<(std::pin::Pin<Box<tokio::time::Sleep>>, usize)> = None;
    let evicted = slot.evicted();
    let refuse = |e: &dyn std::fmt::Display| {
        let message = format_args!("closing connection: {e}");
        server.warnings.warn(ctx.peer, &ctx.listener_name, &message);
    };
    loop {
        // Serve every whole frame already buffered, in order.
        loop {
            let check = match check_frame(&buf, limits.request_max_bytes) {
                Ok(c) => c,
                Err(e) => return refuse(&e),
            };
            let body_len = match check {
                FrameCheck::Incomplete {
                    buffered_needed: None,
                } => {
                    frame_needs = None;
                    break;
                }
                FrameCheck::Incomplete {
                    buffered_needed: Some(total),
                } => {
                    frame_needs = Some(total - buf.len());
                    total - SIZE_PREFIX_BYTES
                }
                FrameCheck::Complete { body_len } => body_len,
            };
            if reservation.is_none() && server.memory.needs_reservation(body_len) {
                let reserved = tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = evicted.cancelled() => return,
                    r = server.memory.reserve(body_len) => r,
                };
                let Some(r) = reserved else { return };
                reservation = Some(r);
                if !matches!(check, FrameCheck::Complete { .. }) {
                    let timer = tokio::time::sleep(reserved_frame_timeout(body_len));
                    body_deadline = Some((Box::pin(timer), body_len));
                }
                // Reserved: hold the whole frame in one allocation rather than doubling.
                buf.reserve((SIZE_PREFIX_BYTES + body_len).saturating_sub(buf.len()));
            }
            let FrameCheck::Complete { body_len } = check else {
                break;
            };
            buf.advance(SIZE_PREFIX_BYTES);
            let frame = buf.split_to(body_len).freeze();
            let budget_bytes = reservation.as_ref().map_or_else(
                || decode_budget_bytes(body_len),
                Reservation::decode_budget_bytes,
            );
            let request = match decode_request_within(frame, budget_bytes) {
                Ok(r) => r,
                Err(e) => return refuse(&e),
            };
            slot.record_request(request.header().api_key);
            let answered = tokio::select! {
                () = shutdown.cancelled() => return,
                () = evicted.cancelled() => return,
                a = handler.handle(&ctx, request) => a,
            };
            let Some(response) = answered else {
                return;
            };
            // The request's memory is free once it is answered; the response's own bytes are
            // its to hold while they are written.
            reservation = None;
            body_deadline = None;
            // A peer that stops reading gets as long as an idle one (Kafka's idle timer counts
            // writes too), then is closed.
            let written = tokio::select! {
                () = shutdown.cancelled() => return,
                () = evicted.cancelled() => return,
                w = read_within(idle, write_flushed(&mut stream, &response)) => w,
            };
            match written {
                Ok(Ok(())) => {}
                Ok(Err(e)) => {
                    tracing::debug!(peer = %ctx.peer, "write failed: {e}");
                    return;
                }
                Err(_) => {
                    tracing::debug!(peer = %ctx.peer, "closing a connection that stopped reading after {idle:?}");
                    return;
                }
            }
        }
        // Grow with what actually arrived (doubling), never by what a size prefix announces:
        // four bytes must not buy 64 KiB.
        let want = frame_needs.map_or(INITIAL_BUFFER_BYTES, |n| {
            n.min(READ_CHUNK_BYTES)
                .min(buf.len().max(INITIAL_BUFFER_BYTES))
        });
        if buf.capacity() - buf.len() < want {
            buf.reserve(want);
        }
        let body_late = async {
            match body_deadline.as_mut() {
                Some((timer, body_len)) => {
                    timer.await;
                    *body_len
                }
                None => std::future::pending().await,
            }
        };
        let read = tokio::select! {
            () = shutdown.cancelled() => return,
            () = evicted.cancelled() => return,
            body_len = body_late => {
                let late = format_args!(
                    "a {body_len}-byte request holding request memory did not arrive within {} ms",
                    reserved_frame_timeout(body_len).as_millis()
                );
                return refuse(&late);
            }
            r = read_within(idle, stream.read_buf(&mut buf)) => r,
        };
        match read {
            Err(_) => {
                tracing::debug!(peer = %ctx.peer, "closing idle connection after {idle:?}");
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

/// Writes `bytes` and flushes them: a TLS stream may hold the last record until flushed.
async fn write_flushed<S: AsyncWrite + Unpin>(stream: &mut S, bytes: &[u8]) -> std::io::Result<()> {
    stream.write_all(bytes).await?;
    stream.flush().await
}

/// `io`, or `Err` once `idle` passes first (never, without an idle limit).
async fn read_within<F: std::future::Future>(
    idle: Option<Duration>,
    io: F,
) -> Result<F::Output, tokio::time::error::Elapsed> {
    match idle {
        Some(d) => tokio::time::timeout(d, io).await,
        None => Ok(io.await),
    }
}
