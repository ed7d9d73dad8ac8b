//! A tiny HTTP endpoint for operators: `GET /metrics` (OpenMetrics text) and `GET /ready`.
//!
//! Requests are read up to a small limit with a timeout; anything else gets 404/400. The
//! handler only reads shared state; it never blocks the Raft thread.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio_util::sync::CancellationToken;

/// Largest request head accepted.
const MAX_REQUEST_BYTES: usize = 8 * 1024;
/// Time a client has to send its request.
const READ_TIMEOUT: Duration = Duration::from_secs(5);

/// What the endpoint serves.
pub trait HttpSource: Send + Sync + 'static {
    /// The Prometheus text.
    fn metrics(&self) -> String;
    /// Readiness and a one-line reason.
    fn ready(&self) -> (bool, String);
}

/// Serves `listener` until `shutdown`.
pub async fn serve<S: HttpSource>(
    listener: TcpListener,
    source: Arc<S>,
    shutdown: CancellationToken,
) {
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => return,
            a = listener.accept() => a,
        };
        let Ok((stream, _)) = accepted else { continue };
        let source = source.clone();
        tokio::spawn(async move {
            let _ = tokio::time::timeout(READ_TIMEOUT, answer(stream, source)).await;
        });
    }
}

async fn answer<S: HttpSource>(mut stream: TcpStream, source: Arc<S>) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && !buf.windows(2).any(|w| w == b"\n\n") {
        let n = stream.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
        if buf.len() > MAX_REQUEST_BYTES {
            return respond(&mut stream, 400, "text/plain", "request too large\n").await;
        }
    }
    let head = String::from_utf8_lossy(&buf);
    let mut parts = head.lines().next().unwrap_or("").split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if method != "GET" {
        return respond(&mut stream, 405, "text/plain", "only GET\n").await;
    }
    match path {
        "/metrics" => {
            respond(
                &mut stream,
                200,
                // What prometheus-client writes (counters end in `_total`, `# EOF`).
                "application/openmetrics-text; version=1.0.0; charset=utf-8",
                &source.metrics(),
            )
            .await
        }
        "/ready" => {
            let (ready, reason) = source.ready();
            respond(
                &mut stream,
                if ready { 200 } else { 503 },
                "text/plain",
                &format!("{reason}\n"),
            )
            .await
        }
        _ => respond(&mut stream, 404, "text/plain", "try /metrics or /ready\n").await,
    }
}

async fn respond(
    stream: &mut TcpStream,
    code: u16,
    content_type: &str,
    body: &str,
) -> std::io::Result<()> {
    let status = match code {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Service Unavailable",
    };
    let head = format!(
        "HTTP/1.1 {code} {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body.as_bytes()).await?;
    stream.shutdown().await
}
