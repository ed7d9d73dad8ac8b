//! The accept loop of one listener.

use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::connection::serve_connection;
use super::{ConnectionLimits, RequestContext, RequestHandler};

/// Accepts connections on `listener` until `shutdown` is cancelled, serving each on its own
/// task tracked by `tracker`. At most `limits.max_connections` are open at once; further
/// connections wait in the kernel's backlog (as Kafka's acceptor waits for a slot).
pub async fn serve<H: RequestHandler>(
    listener: TcpListener,
    listener_name: String,
    handler: Arc<H>,
    limits: ConnectionLimits,
    shutdown: CancellationToken,
    tracker: TaskTracker,
) {
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    loop {
        let permit = tokio::select! {
            () = shutdown.cancelled() => break,
            permit = slots.clone().acquire_owned() => match permit {
                Ok(p) => p,
                Err(_) => break,
            },
        };
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
        let _ = stream.set_nodelay(true);
        let ctx = RequestContext {
            listener_name: listener_name.clone(),
            peer,
            forwarded: false,
        };
        let handler = handler.clone();
        let shutdown = shutdown.clone();
        tracker.spawn(async move {
            serve_connection(stream, ctx, handler, limits, shutdown).await;
            drop(permit);
        });
    }
}
