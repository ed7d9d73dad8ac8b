//! Outbound connections against a minimal peer that answers ApiVersions on every connection.

use std::sync::Arc;
use std::time::Duration;

use kafka_protocol::messages::ApiVersionsRequest;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::{PeerConfig, PeerRequest, PeerResponse, Peers};
use crate::codec::api_versions::api_versions_response;
use crate::codec::request::{decode_request, InboundRequest};
use crate::codec::response::encode_response;
use crate::codec::versions::Release;
use crate::codec::{RequestBody, ResponseBody};
use crate::raft::types::Endpoint;
use crate::raft::{Destination, ResponseResult};

/// Serves one connection: every ApiVersions request answered, anything else ends it.
async fn serve(mut stream: TcpStream) {
    loop {
        let mut size = [0u8; 4];
        if stream.read_exact(&mut size).await.is_err() {
            return;
        }
        let mut frame = vec![0u8; u32::from_be_bytes(size) as usize];
        if stream.read_exact(&mut frame).await.is_err() {
            return;
        }
        let Ok(InboundRequest::Request {
            header,
            body: RequestBody::ApiVersions(_),
        }) = decode_request(frame.into())
        else {
            return;
        };
        let body = ResponseBody::ApiVersions(api_versions_response(
            Release::default(),
            header.api_version,
            &[],
            0,
        ));
        let Ok(answer) = encode_response(&body, header.api_version, header.correlation_id) else {
            return;
        };
        if stream.write_all(&answer).await.is_err() {
            return;
        }
    }
}

/// A peer on `listener`; aborting the task closes the listener and its connections.
fn start_peer(listener: TcpListener) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut connections = tokio::task::JoinSet::new();
        while let Ok((stream, _)) = listener.accept().await {
            connections.spawn(serve(stream));
        }
    })
}

fn api_versions(correlation_id: u64, destination: &Destination) -> PeerRequest {
    PeerRequest {
        correlation_id,
        destination: destination.clone(),
        request: RequestBody::ApiVersions(ApiVersionsRequest::default()),
    }
}

async fn outcome(rx: &mut mpsc::UnboundedReceiver<PeerResponse>) -> PeerResponse {
    tokio::time::timeout(Duration::from_secs(10), rx.recv())
        .await
        .expect("an outcome within the request timeout")
        .expect("the sink is open")
}

/// A peer killed and restarted on the same address while its connection sat idle (a voter
/// replaced with a fresh directory, then added back: the leader's ApiVersions to it must
/// reach the new process). The first request after the restart is answered, not failed on
/// the dead connection (Kafka's NetworkClient notices the disconnect when it happens).
#[tokio::test]
async fn a_peer_restarted_while_idle_answers_the_next_request() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("address").port();
    let destination = Destination {
        node_id: 3,
        endpoint: Endpoint {
            host: "127.0.0.1".into(),
            port,
        },
    };
    let (tx, mut rx) = mpsc::unbounded_channel();
    let mut peers = Peers::new(
        PeerConfig {
            client_id: "raft-client-1".into(),
            request_timeout_ms: 5_000,
            tls: None,
            sasl: None,
            channel: None,
        },
        Arc::new(move |r| {
            let _ = tx.send(r);
        }),
    );

    let first = start_peer(listener);
    peers.send(api_versions(1, &destination));
    let answer = outcome(&mut rx).await;
    assert_eq!(answer.correlation_id, 1);
    assert!(
        matches!(answer.result, ResponseResult::Answered(_)),
        "{:?}",
        answer.result
    );

    first.abort();
    let _ = first.await;
    let restarted = start_peer(
        TcpListener::bind(("127.0.0.1", port))
            .await
            .expect("rebind"),
    );
    // The closing reaches the idle connection's watcher within the loopback's delivery.
    tokio::time::sleep(Duration::from_millis(100)).await;
    peers.send(api_versions(2, &destination));
    let answer = outcome(&mut rx).await;
    assert_eq!(answer.correlation_id, 2);
    assert!(
        matches!(answer.result, ResponseResult::Answered(_)),
        "the restarted peer answers: {:?}",
        answer.result
    );
    restarted.abort();
}
