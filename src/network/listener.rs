//! The accept loop of one listener.

use std::sync::Arc;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::connection::serve_connection;
use super::quotas::Admission;
use super::{RequestContext, RequestHandler, SocketServer};

/// Accepts connections on `listener` until `shutdown` is cancelled, serving each on its own
/// task tracked by `tracker`. Accepting never waits: a connection the quotas refuse is closed
/// at once, and a full listener makes room by closing its least recently active client
/// connection (`super::quotas`).
pub async fn serve<H: RequestHandler>(
    listener: TcpListener,
    listener_name: String,
    handler: Arc<H>,
    server: Arc<SocketServer>,
    shutdown: CancellationToken,
    tracker: TaskTracker,
) {
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(pair) => pair,
            Err(e) => {
                // Typically EMFILE; back off briefly rather than spin.
                tracing::warn!(listener = %listener_name, "accept failed: {e}");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let slot = match server.quotas.admit(&listener_name, peer.ip()) {
            Admission::Admitted { slot, evicted } => {
                if let Some(ip) = evicted {
                    let victim = std::net::SocketAddr::new(ip, 0);
                    server.warnings.warn(
                        victim,
                        &listener_name,
                        &format_args!(
                            "closed the least recently active connection from {ip} to admit one \
                             from {peer}: the connection limit is reached"
                        ),
                    );
                }
                slot
            }
            Admission::PerIpLimit { limit } => {
                server.warnings.info(
                    peer,
                    &listener_name,
                    &format_args!(
                        // Kafka prints the InetAddress, "/127.0.0.1".
                        "Rejected connection from /{}, address already has the configured \
                         maximum of {limit} connections.",
                        peer.ip()
                    ),
                );
                continue;
            }
            Admission::Full { limit } => {
                server.warnings.warn(
                    peer,
                    &listener_name,
                    &format_args!(
                        "Rejected connection from {peer}: the limit of {limit} connections is \
                         reached and none can be closed for it"
                    ),
                );
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let ctx = RequestContext {
            listener_name: listener_name.clone(),
            peer,
            forwarded: false,
        };
        let handler = handler.clone();
        let shutdown = shutdown.clone();
        let server = server.clone();
        tracker.spawn(async move {
            serve_connection(stream, ctx, handler, &server, &slot, shutdown).await;
            drop(slot);
        });
    }
}
