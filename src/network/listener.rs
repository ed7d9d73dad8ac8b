//! The accept loop of one listener.
//!
//! ```text
//!   accept ─quotas─▶ task: [SSL: TLS handshake ≤ 10 s, else warn + close] ─▶ serve_connection
//!                          (with the listener's SASL settings, if it is a SASL one)
//!                          [SSL: close_notify ≤ 1 s] ─▶ slot released
//! ```

use std::sync::Arc;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::connection::serve_connection;
use super::quotas::Admission;
use super::tls::HANDSHAKE_TIMEOUT;
use super::{RequestContext, RequestHandler, SocketServer};
use crate::common::principal::Principal;
use crate::common::security_protocol::SecurityProtocol;
use crate::security::ssl_principal::{subject_rfc2253, SslPrincipalMapper};

/// How long a closing TLS connection may take to send its close_notify.
const CLOSE_NOTIFY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

/// Accepts connections on `listener` until `shutdown` is cancelled, serving each on its own
/// task tracked by `tracker`. Accepting never waits: a connection the quotas refuse is closed
/// at once, and a full listener makes room by closing its least recently active client
/// connection (`super::quotas`). On an SSL listener (`tls`) each connection first completes its
/// TLS handshake on its own task, holding its connection slot meanwhile, so the quotas apply to
/// handshakes too.
#[allow(clippy::too_many_arguments)] // one per thing a listener is made of; a struct would only rename them
pub async fn serve<H: RequestHandler>(
    listener: TcpListener,
    listener_name: String,
    tls: Option<TlsAcceptor>,
    sasl: Option<super::sasl::ListenerSasl>,
    ssl_principal: Option<Arc<SslPrincipalMapper>>,
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
            principal: crate::common::principal::Principal::anonymous(),
            forwarded_by: None,
            security_protocol: match (tls.is_some(), sasl.is_some()) {
                (false, false) => SecurityProtocol::Plaintext,
                (true, false) => SecurityProtocol::Ssl,
                (false, true) => SecurityProtocol::SaslPlaintext,
                (true, true) => SecurityProtocol::SaslSsl,
            },
        };
        let handler = handler.clone();
        let shutdown = shutdown.clone();
        let server = server.clone();
        let tls = tls.clone();
        let sasl = sasl.clone();
        let ssl_principal = ssl_principal.clone();
        let mut ctx = ctx;
        tracker.spawn(async move {
            let sasl = sasl.as_ref();
            match tls {
                None => {
                    serve_connection(stream, ctx, handler, &server, &slot, sasl, shutdown).await
                }
                Some(acceptor) => {
                    if let Some(mut tls_stream) =
                        handshake(acceptor, stream, &ctx, &server, &slot, &shutdown).await
                    {
                        if let Some(mapper) = &ssl_principal {
                            match client_principal(&tls_stream, mapper) {
                                Ok(principal) => ctx.principal = principal,
                                Err(reason) => {
                                    server.warnings.warn(
                                        ctx.peer,
                                        &ctx.listener_name,
                                        &format_args!(
                                            "closing connection from {}: no principal for its \
                                             certificate: {reason}",
                                            ctx.peer
                                        ),
                                    );
                                    return;
                                }
                            }
                        }
                        serve_connection(
                            &mut tls_stream,
                            ctx,
                            handler,
                            &server,
                            &slot,
                            sasl,
                            shutdown,
                        )
                        .await;
                        // close_notify, so that the peer sees a clean end rather than a
                        // truncated session; a peer that does not read gets no more time.
                        let _ =
                            tokio::time::timeout(CLOSE_NOTIFY_TIMEOUT, tls_stream.shutdown()).await;
                    }
                }
            }
            drop(slot);
        });
    }
}

/// The principal of an SSL client (Kafka's DefaultKafkaPrincipalBuilder): `User:` and its
/// certificate's subject mapped by `ssl.principal.mapping.rules`; `User:ANONYMOUS` when it
/// presented none. An error when no rule applies (Kafka fails such a connection).
fn client_principal(
    tls_stream: &tokio_rustls::server::TlsStream<TcpStream>,
    mapper: &SslPrincipalMapper,
) -> Result<Principal, String> {
    let (_, connection) = tls_stream.get_ref();
    let Some(cert) = connection.peer_certificates().and_then(|c| c.first()) else {
        return Ok(Principal::anonymous());
    };
    let dn = subject_rfc2253(cert.as_ref())?;
    Ok(Principal::user(&mapper.name(&dn)?))
}

/// The server side of a TLS handshake, within [`HANDSHAKE_TIMEOUT`]. A failure (a plaintext
/// client, garbage, a certificate the trust store does not vouch for, an expired one, a
/// handshake cut short) is warned about once per address and interval, and the connection is
/// closed; `None` then.
async fn handshake(
    acceptor: TlsAcceptor,
    stream: TcpStream,
    ctx: &RequestContext,
    server: &SocketServer,
    slot: &super::quotas::ConnectionSlot,
    shutdown: &CancellationToken,
) -> Option<tokio_rustls::server::TlsStream<TcpStream>> {
    let evicted = slot.evicted();
    let outcome = tokio::select! {
        () = shutdown.cancelled() => return None,
        () = evicted.cancelled() => return None,
        r = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)) => r,
    };
    let reason = match outcome {
        Ok(Ok(tls_stream)) => return Some(tls_stream),
        Ok(Err(e)) => e.to_string(),
        Err(_) => format!(
            "it did not complete within {} s",
            HANDSHAKE_TIMEOUT.as_secs()
        ),
    };
    server.warnings.warn(
        ctx.peer,
        &ctx.listener_name,
        &format_args!(
            "closing connection from {}: TLS handshake failed: {reason}",
            ctx.peer
        ),
    );
    None
}
