//! One client connection: read frames, hand them to the handler, write answers in order.
//!
//! Bad input never takes the node down: an oversized, negative or undecodable frame, an
//! unknown API or version, a body that would decode beyond its memory budget, is logged (once
//! per address and interval, `super::warn_limit`) and the connection is closed, which is what
//! Kafka's socket server does for each of these (InvalidReceiveException /
//! InvalidRequestException → close). A frame above `memory::SMALL_FRAME_BYTES` is read only
//! once the node's request-memory budget holds room for it (`super::memory`).

use std::time::Duration;

use super::stats::RequestClock;

use bytes::{Buf, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use crate::codec::frame::{check_frame, FrameCheck, SIZE_PREFIX_BYTES};
use crate::codec::request::{decode_budget_bytes, decode_request_within};

use super::memory::Reservation;
use super::quotas::ConnectionSlot;
use super::sasl::{encode_reply, frame_token, nonce, now_ms, ListenerSasl};
use super::{RequestContext, RequestHandler, SocketServer};
use crate::security::authenticator::{SaslServerAuthenticator, Step};

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
/// PLAINTEXT listener or the TLS stream of an SSL one, after its handshake. On a SASL
/// listener (`sasl`) every frame goes through the connection's authenticator first
/// (`super::sasl`): only ApiVersions reaches the handler before the client authenticates.
///
/// Long on purpose: one `select!` loop whose arms (read a frame, write the next answer in
/// order, idle timeout, eviction, shutdown) share the connection's buffers and in-flight
/// queue; split apart, each piece would need all of that state passed around.
pub async fn serve_connection<H: RequestHandler, S: AsyncRead + AsyncWrite + Unpin>(
    mut stream: S,
    mut ctx: RequestContext,
    handler: std::sync::Arc<H>,
    server: &SocketServer,
    slot: &ConnectionSlot,
    sasl: Option<&ListenerSasl>,
    shutdown: CancellationToken,
) {
    let limits = server.limits;
    let mut auth = sasl.map(|s| SaslServerAuthenticator::new(s.settings.clone()));
    let scram = super::HandlerCredentials(handler.as_ref());
    let mut buf = BytesMut::new();
    // Bytes the frame being read still needs, once its size prefix is known.
    let mut frame_needs: Option<usize> = None;
    let idle = limits.idle_timeout_ms.map(Duration::from_millis);
    // Memory reserved for the frame being read, if it is a large one, and the time its body
    // has left to arrive.
    let mut reservation: Option<Reservation> = None;
    let mut body_deadline: Option<(std::pin::Pin<Box<tokio::time::Sleep>>, usize)> = None;
    let evicted = slot.evicted();
    // The context changes once a SASL client authenticates; these do not.
    let (peer, listener_name) = (ctx.peer, ctx.listener_name.clone());
    // Counted open until this task ends, however it ends.
    let _counted = server.stats.connection_opened(&listener_name);
    // Request times are read from the clock only when request metrics are kept.
    let timed = server.stats.times_requests();
    let stamp = || timed.then(super::stats::request_clock);
    // When the last read returned: a frame it completed was received then (Kafka's request
    // start time), however long it waits behind the frames before it.
    let mut read_at = stamp();
    // When the previous response was written: a frame read before then waited behind it
    // until then (its queue time), one read after it did not wait.
    let mut last_done_at: Option<RequestClock> = None;
    let refuse = |e: &dyn std::fmt::Display| {
        let message = format_args!("closing connection: {e}");
        server.warnings.warn(peer, &listener_name, &message);
    };
    loop {
        // Serve every whole frame already buffered, in order.
        loop {
            // Before authentication a frame may be no larger than sasl.server.max.receive.size
            // (Kafka: "invalid receive size", closed).
            let max_bytes = match (sasl, &auth) {
                (Some(s), Some(a)) if !a.is_complete() => {
                    s.max_receive_size.min(limits.request_max_bytes)
                }
                _ => limits.request_max_bytes,
            };
            let check = match check_frame(&buf, max_bytes) {
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
            let now = now_ms();
            if let Some(a) = auth.as_mut() {
                if a.session_expired(now) {
                    // Kafka's SocketServer closes an expired session on its next request.
                    tracing::debug!(peer = %ctx.peer, "closing a connection whose SASL session expired");
                    return;
                }
                if a.needs_scram_nonce() {
                    a.set_scram_nonce(nonce());
                }
            }
            let step = match auth.as_mut() {
                Some(a) if a.expects_raw_token() => Some(a.on_token(&frame, now, &scram)),
                _ => None,
            };
            let request = match step {
                Some(step) => {
                    reservation = None;
                    body_deadline = None;
                    if !write_step(&mut stream, step, &mut ctx, server, sasl, idle, &shutdown).await
                    {
                        return;
                    }
                    continue;
                }
                None => match decode_request_within(frame, budget_bytes) {
                    Ok(r) => r,
                    Err(e) => return refuse(&e),
                },
            };
            let request = match auth.as_mut() {
                Some(a) => match a.on_request(request, now, &scram) {
                    Step::Forward(r) => r,
                    step => {
                        reservation = None;
                        body_deadline = None;
                        if !write_step(&mut stream, step, &mut ctx, server, sasl, idle, &shutdown)
                            .await
                        {
                            return;
                        }
                        continue;
                    }
                },
                None => request,
            };
            slot.record_request(request.header().api_key);
            // The handler's synchronous part runs in this call (Kafka's `apis.handle`); the
            // future is the rest (Kafka's controller future): local and remote time.
            // Taken from the two reads above, not read again: what lies between them and the
            // handler (decoding, the quota slot) takes microseconds, below the histograms'
            // whole milliseconds.
            let dequeued_at = read_at.max(last_done_at);
            let pending = handler.handle(&ctx, request);
            let local_done_at = stamp();
            let answered = tokio::select! {
                () = shutdown.cancelled() => return,
                () = evicted.cancelled() => return,
                a = pending => a,
            };
            let Some(response) = answered else {
                return;
            };
            let response_at = stamp();
            // The request's memory is free once it is answered; the response's own bytes are
            // its to hold while they are written.
            reservation = None;
            body_deadline = None;
            // A peer that stops reading gets as long as an idle one (Kafka's idle timer counts
            // writes too), then is closed.
            let written = tokio::select! {
                () = shutdown.cancelled() => return,
                () = evicted.cancelled() => return,
                w = read_within(idle, write_flushed(&mut stream, &response.bytes)) => w,
            };
            match written {
                Ok(Ok(())) => {
                    let ms = |from: Option<RequestClock>, to: Option<RequestClock>| match (from, to)
                    {
                        (Some(from), Some(to)) => {
                            to.saturating_duration_since(from).as_secs_f64() * 1000.0
                        }
                        _ => 0.0,
                    };
                    let done_at = stamp();
                    last_done_at = done_at;
                    let times = super::stats::RequestTimes {
                        queue_ms: ms(read_at, dequeued_at),
                        local_ms: ms(dequeued_at, local_done_at),
                        remote_ms: ms(local_done_at, response_at),
                        throttle_ms: response.throttle_ms,
                        // Nothing queues between the encoded response and its write here
                        // (Kafka's response queue to its network thread has no counterpart),
                        // so the part is 0 and costs no clock read.
                        response_queue_ms: 0.0,
                        send_ms: ms(response_at, done_at),
                        total_ms: ms(read_at, done_at),
                        done_at,
                    };
                    server.stats.request_done(
                        response.api,
                        response.version,
                        response.follower_fetch,
                        times,
                        body_len + SIZE_PREFIX_BYTES,
                        &response.errors.0,
                    );
                }
                Ok(Err(e)) => {
                    server
                        .stats
                        .response_errors(response.api, &response.errors.0);
                    tracing::debug!(peer = %ctx.peer, "write failed: {e}");
                    return;
                }
                Err(_) => {
                    server
                        .stats
                        .response_errors(response.api, &response.errors.0);
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
            Ok(Ok(_)) => read_at = stamp(),
            Ok(Err(e)) => {
                tracing::debug!(peer = %ctx.peer, "read failed: {e}");
                return;
            }
        }
    }
}

/// Carries out an authenticator's step other than `Forward`: whether the connection reads on
/// (false: it is to be closed).
async fn write_step<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    step: Step,
    ctx: &mut RequestContext,
    server: &SocketServer,
    sasl: Option<&ListenerSasl>,
    idle: Option<Duration>,
    shutdown: &CancellationToken,
) -> bool {
    let mut encode_failed = false;
    let mut encoded = |reply: &crate::security::authenticator::Reply| {
        let bytes = encode_reply(reply);
        if bytes.is_none() {
            tracing::warn!(peer = %ctx.peer, "closing connection: a SASL answer did not encode: {reply:?}");
            encode_failed = true;
        }
        bytes
    };
    let bytes = match step {
        Step::Forward(_) => return false,
        Step::Respond(reply) => encoded(&reply),
        Step::RespondRaw(token) => Some(frame_token(&token)),
        Step::Authenticated {
            reply,
            raw,
            principal,
        } => {
            tracing::debug!(peer = %ctx.peer, %principal, "Successfully authenticated");
            server.stats.authenticated(&ctx.listener_name, true);
            ctx.principal = principal;
            match (reply, raw) {
                (Some(reply), _) => encoded(&reply),
                (None, Some(token)) => Some(frame_token(&token)),
                (None, None) => None,
            }
        }
        Step::Fail { reply, reason } => {
            // Kafka logs this at INFO ("Failed authentication with /<address> (<reason>)");
            // once per address and interval here, as every bad peer.
            server.stats.authenticated(&ctx.listener_name, false);
            {
                let message =
                    format_args!("Failed authentication with /{} ({reason})", ctx.peer.ip());
                server.warnings.info(ctx.peer, &ctx.listener_name, &message);
            }
            let delay = sasl.map_or(Duration::ZERO, ListenerSasl::failure_delay);
            tokio::select! {
                () = shutdown.cancelled() => return false,
                () = tokio::time::sleep(delay) => {}
            }
            if let Some(bytes) = reply.as_ref().and_then(encode_reply) {
                let _ = read_within(idle, write_flushed(stream, &bytes)).await;
            }
            return false;
        }
        Step::Close { reason } => {
            tracing::debug!(peer = %ctx.peer, "closing connection during SASL authentication: {reason}");
            return false;
        }
    };
    let Some(bytes) = bytes else {
        // Nothing to send (a raw-token exchange ending without a token) reads on; an answer
        // that does not encode would leave the client waiting, so it closes.
        return !encode_failed;
    };
    let written = tokio::select! {
        () = shutdown.cancelled() => return false,
        w = read_within(idle, write_flushed(stream, &bytes)) => w,
    };
    matches!(written, Ok(Ok(())))
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
