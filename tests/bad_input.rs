//! Bad input against a running node: each case is answered or the connection closed, as
//! Kafka's socket server does, and a fresh connection still gets ApiVersions.

// Integration tests drive real processes and sockets: unwrapping and wall-clock deadlines are fine.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::disallowed_methods)]

use std::net::SocketAddr;
use std::time::Duration;

use bytes::{BufMut, Bytes, BytesMut};
use ferrokraft::codec::header::encode_request_header;
use ferrokraft::codec::messages::ResponseBody;
use ferrokraft::codec::response::decode_response;
use ferrokraft::config::{Config, Properties};
use kafka_protocol::messages::describe_quorum_request::{PartitionData, TopicData};
use kafka_protocol::messages::{
    ApiKey, DefaultPrincipalData, DescribeQuorumRequest, EnvelopeRequest, EnvelopeResponse,
    TopicName,
};
use kafka_protocol::protocol::{Encodable, StrBytes};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

struct TestNode {
    addr: SocketAddr,
    shutdown: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl TestNode {
    async fn start(extra: &[(&str, &str)]) -> Self {
        let mut props: Properties = [
            ("process.roles", "controller"),
            ("node.id", "1"),
            ("controller.quorum.voters", "1@127.0.0.1:9093"),
            ("listeners", "CONTROLLER://127.0.0.1:0"),
            ("controller.listener.names", "CONTROLLER"),
            ("log.dirs", "/nonexistent-not-used"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        for (k, v) in extra {
            props.insert(k.to_string(), v.to_string());
        }
        let config = Config::from_properties(&props).unwrap();
        let bound = ferrokraft::launch::bind(&config).await.unwrap();
        let addr = bound.local_addrs()[0].1;
        let shutdown = CancellationToken::new();
        let token = shutdown.clone();
        let task =
            tokio::spawn(async move { ferrokraft::launch::run(&config, bound, token).await });
        TestNode {
            addr,
            shutdown,
            task,
        }
    }

    async fn stop(self) {
        self.shutdown.cancel();
        tokio::time::timeout(Duration::from_secs(5), self.task)
            .await
            .expect("node stops within 5 s")
            .unwrap();
    }
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = (body.len() as i32).to_be_bytes().to_vec();
    out.extend_from_slice(body);
    out
}

fn request_bytes(api_key: ApiKey, version: i16, correlation_id: i32, body: &[u8]) -> Vec<u8> {
    let mut buf = BytesMut::new();
    encode_request_header(&mut buf, api_key, version, correlation_id, "bad-input-test");
    buf.put_slice(body);
    frame(&buf)
}

/// An ApiVersions v3 request body (client software name/version, tagged fields).
fn api_versions_v3_body() -> Vec<u8> {
    let mut b = vec![];
    b.push(5); // compact string "test" (len+1)
    b.extend_from_slice(b"test");
    b.push(4);
    b.extend_from_slice(b"1.0");
    b.push(0);
    b
}

async fn read_frame(stream: &mut TcpStream) -> Option<Bytes> {
    let mut size = [0u8; 4];
    match tokio::time::timeout(Duration::from_secs(5), stream.read_exact(&mut size)).await {
        Ok(Ok(_)) => {}
        _ => return None,
    }
    let len = i32::from_be_bytes(size) as usize;
    let mut body = vec![0; len];
    stream.read_exact(&mut body).await.ok()?;
    Some(Bytes::from(body))
}

/// True when the server closed the connection (EOF) within 5 s.
async fn closed_by_server(stream: &mut TcpStream) -> bool {
    let mut b = [0u8; 1];
    matches!(
        tokio::time::timeout(Duration::from_secs(5), stream.read(&mut b)).await,
        Ok(Ok(0)) | Ok(Err(_))
    )
}

async fn assert_api_versions_ok(addr: SocketAddr) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(&request_bytes(
        ApiKey::ApiVersions,
        3,
        42,
        &api_versions_v3_body(),
    ))
    .await
    .unwrap();
    let resp = read_frame(&mut s).await.expect("ApiVersions answered");
    let (corr, body) = decode_response(resp, ApiKey::ApiVersions, 3).unwrap();
    assert_eq!(corr, 42);
    let ResponseBody::ApiVersions(r) = body else {
        panic!("not ApiVersions")
    };
    assert_eq!(r.error_code, 0);
    assert!(r.api_keys.iter().any(|k| k.api_key == ApiKey::Vote as i16));
}

async fn assert_closes(addr: SocketAddr, bytes: &[u8]) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(bytes).await.unwrap();
    assert!(
        closed_by_server(&mut s).await,
        "connection should be closed by the node"
    );
    assert_api_versions_ok(addr).await;
}

#[tokio::test]
async fn frame_larger_than_socket_request_max_bytes_closes() {
    let node = TestNode::start(&[("socket.request.max.bytes", "1024")]).await;
    assert_closes(node.addr, &2048i32.to_be_bytes()).await;
    node.stop().await;
}

#[tokio::test]
async fn negative_size_closes() {
    let node = TestNode::start(&[]).await;
    assert_closes(node.addr, &(-5i32).to_be_bytes()).await;
    node.stop().await;
}

#[tokio::test]
async fn zero_size_closes() {
    let node = TestNode::start(&[]).await;
    assert_closes(node.addr, &0i32.to_be_bytes()).await;
    node.stop().await;
}

#[tokio::test]
async fn frame_cut_short_waits_then_completes() {
    let node = TestNode::start(&[]).await;
    let bytes = request_bytes(ApiKey::ApiVersions, 3, 7, &api_versions_v3_body());
    let mut s = TcpStream::connect(node.addr).await.unwrap();
    // Partial input is not an error: send in three pieces with pauses.
    s.write_all(&bytes[..2]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    s.write_all(&bytes[2..9]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    s.write_all(&bytes[9..]).await.unwrap();
    let resp = read_frame(&mut s).await.expect("answered once whole");
    let (corr, _) = decode_response(resp, ApiKey::ApiVersions, 3).unwrap();
    assert_eq!(corr, 7);
    node.stop().await;
}

#[tokio::test]
async fn frame_cut_short_then_peer_closes_is_harmless() {
    let node = TestNode::start(&[]).await;
    let bytes = request_bytes(ApiKey::ApiVersions, 3, 7, &api_versions_v3_body());
    let mut s = TcpStream::connect(node.addr).await.unwrap();
    s.write_all(&bytes[..bytes.len() - 3]).await.unwrap();
    drop(s);
    assert_api_versions_ok(node.addr).await;
    node.stop().await;
}

#[tokio::test]
async fn unknown_api_key_closes() {
    let node = TestNode::start(&[]).await;
    let mut body = vec![0x03, 0xE7, 0, 0, 0, 0, 0, 1, 0, 0]; // key 999
    body.push(0);
    assert_closes(node.addr, &frame(&body)).await;
    node.stop().await;
}

#[tokio::test]
async fn api_not_served_on_controller_listener_closes() {
    let node = TestNode::start(&[]).await;
    // Produce (key 0) v9 is a real Kafka API, but not one a controller listener serves.
    assert_closes(node.addr, &request_bytes(ApiKey::Produce, 9, 1, &[0; 16])).await;
    node.stop().await;
}

#[tokio::test]
async fn known_key_at_unsupported_version_closes() {
    let node = TestNode::start(&[]).await;
    assert_closes(node.addr, &request_bytes(ApiKey::Vote, 9, 1, &[0; 16])).await;
    node.stop().await;
}

#[tokio::test]
async fn api_versions_at_unknown_version_gets_unsupported_version_at_v0() {
    let node = TestNode::start(&[]).await;
    let mut s = TcpStream::connect(node.addr).await.unwrap();
    s.write_all(&request_bytes(ApiKey::ApiVersions, 77, 5, &[1, 2, 3]))
        .await
        .unwrap();
    let resp = read_frame(&mut s).await.expect("answered");
    let (corr, body) = decode_response(resp, ApiKey::ApiVersions, 0).unwrap();
    assert_eq!(corr, 5);
    let ResponseBody::ApiVersions(r) = body else {
        panic!()
    };
    assert_eq!(r.error_code, 35, "UNSUPPORTED_VERSION");
    assert!(r
        .api_keys
        .iter()
        .any(|k| k.api_key == ApiKey::ApiVersions as i16 && k.max_version == 4));
    // The connection stays usable: the client retries at a version we listed.
    s.write_all(&request_bytes(
        ApiKey::ApiVersions,
        3,
        6,
        &api_versions_v3_body(),
    ))
    .await
    .unwrap();
    let resp = read_frame(&mut s).await.expect("retry answered");
    assert_eq!(decode_response(resp, ApiKey::ApiVersions, 3).unwrap().0, 6);
    node.stop().await;
}

#[tokio::test]
async fn trailing_bytes_after_a_body_are_ignored_as_in_kafka() {
    let node = TestNode::start(&[]).await;
    let mut body = api_versions_v3_body();
    body.extend_from_slice(&[9, 9, 9, 9]);
    let mut s = TcpStream::connect(node.addr).await.unwrap();
    s.write_all(&request_bytes(ApiKey::ApiVersions, 3, 11, &body))
        .await
        .unwrap();
    let resp = read_frame(&mut s).await.expect("answered");
    assert_eq!(decode_response(resp, ApiKey::ApiVersions, 3).unwrap().0, 11);
    node.stop().await;
}

#[tokio::test]
async fn array_length_beyond_the_frame_closes_without_allocating_it() {
    let node = TestNode::start(&[]).await;
    // DescribeQuorum v0: topics array (int32 length) claiming 2^31-1 entries in a 4-byte body.
    assert_closes(
        node.addr,
        &request_bytes(ApiKey::DescribeQuorum, 0, 1, &i32::MAX.to_be_bytes()),
    )
    .await;
    // Vote v2 (flexible): compact array length as a 5-byte uvarint near u32::MAX.
    let mut body = vec![0u8]; // null cluster id (compact nullable string)
    body.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
    assert_closes(node.addr, &request_bytes(ApiKey::Vote, 2, 2, &body)).await;
    node.stop().await;
}

/// Kafka reads a string with `new String(bytes, UTF_8)`, which replaces what is not UTF-8
/// with U+FFFD: the request is served, not refused (found by the differential fuzz's
/// bad-input comparison with Kafka 4.1.2's parser, #36).
#[tokio::test]
async fn invalid_utf8_in_a_body_string_is_read_leniently_as_kafka_does() {
    let node = TestNode::start(&[]).await;
    // Vote v0 (as in raft_requests_get_a_retriable_not_ready_error_not_a_hang) whose cluster
    // id is the 2 bytes C3 28 (invalid UTF-8; compact string length 3): read, then answered
    // as any Vote on this node (BROKER_NOT_AVAILABLE), not closed.
    let body = [3u8, 0xc3, 0x28, 1, 0];
    let mut s = TcpStream::connect(node.addr).await.unwrap();
    s.write_all(&request_bytes(ApiKey::Vote, 0, 7, &body))
        .await
        .unwrap();
    let resp = read_frame(&mut s).await.expect("answered, not closed");
    let (correlation_id, answer) = decode_response(resp, ApiKey::Vote, 0).unwrap();
    assert_eq!(correlation_id, 7);
    let ResponseBody::Vote(v) = answer else {
        panic!("{answer:?}")
    };
    assert_eq!(v.error_code, 8, "BROKER_NOT_AVAILABLE");
    node.stop().await;
}

#[tokio::test]
async fn invalid_utf8_in_the_client_id_is_read_leniently_as_kafka_does() {
    let node = TestNode::start(&[]).await;
    let mut body = vec![0, 18, 0, 3, 0, 0, 0, 13, 0, 2, 0xc3, 0x28, 0];
    body.extend_from_slice(&api_versions_v3_body());
    let mut s = TcpStream::connect(node.addr).await.unwrap();
    s.write_all(&frame(&body)).await.unwrap();
    let resp = read_frame(&mut s).await.expect("answered");
    assert_eq!(decode_response(resp, ApiKey::ApiVersions, 3).unwrap().0, 13);
    node.stop().await;
}

#[tokio::test]
async fn silent_client_does_not_block_others_and_idles_out() {
    let node = TestNode::start(&[("connections.max.idle.ms", "300")]).await;
    let mut silent = TcpStream::connect(node.addr).await.unwrap();
    assert_api_versions_ok(node.addr).await;
    assert!(
        closed_by_server(&mut silent).await,
        "idle connection closed"
    );
    node.stop().await;
}

#[tokio::test]
async fn five_hundred_connections_at_once_are_all_answered() {
    let node = TestNode::start(&[]).await;
    let mut tasks = Vec::new();
    for i in 0..500 {
        let addr = node.addr;
        tasks.push(tokio::spawn(async move {
            let mut s = TcpStream::connect(addr).await.unwrap();
            s.write_all(&request_bytes(
                ApiKey::ApiVersions,
                3,
                i,
                &api_versions_v3_body(),
            ))
            .await
            .unwrap();
            let resp = read_frame(&mut s).await.expect("answered");
            decode_response(resp, ApiKey::ApiVersions, 3).unwrap().0
        }));
    }
    for (i, t) in tasks.into_iter().enumerate() {
        assert_eq!(t.await.unwrap(), i as i32);
    }
    node.stop().await;
}

#[tokio::test]
async fn pipelined_requests_are_answered_in_order() {
    let node = TestNode::start(&[]).await;
    let mut s = TcpStream::connect(node.addr).await.unwrap();
    let mut all = Vec::new();
    for corr in 100..110 {
        all.extend(request_bytes(
            ApiKey::ApiVersions,
            3,
            corr,
            &api_versions_v3_body(),
        ));
    }
    s.write_all(&all).await.unwrap();
    for corr in 100..110 {
        let resp = read_frame(&mut s).await.expect("answered");
        assert_eq!(
            decode_response(resp, ApiKey::ApiVersions, 3).unwrap().0,
            corr
        );
    }
    node.stop().await;
}

#[tokio::test]
async fn raft_requests_get_a_retriable_not_ready_error_not_a_hang() {
    let node = TestNode::start(&[]).await;
    let mut s = TcpStream::connect(node.addr).await.unwrap();
    // Vote v0 (flexible from v0): null cluster id (compact nullable string 0), empty topics
    // (compact array 1), no tagged fields. It decodes, and is answered BROKER_NOT_AVAILABLE.
    let body = [0u8, 1, 0];
    s.write_all(&request_bytes(ApiKey::Vote, 0, 3, &body))
        .await
        .unwrap();
    let resp = read_frame(&mut s).await.expect("answered");
    let (corr, r) = decode_response(resp, ApiKey::Vote, 0).unwrap();
    assert_eq!(corr, 3);
    let ResponseBody::Vote(v) = r else { panic!() };
    assert_eq!(v.error_code, 8, "BROKER_NOT_AVAILABLE");
    node.stop().await;
}

// ------------------------------------------------------------------------------------------
// Envelope (API 58): the inner request is served as a direct one; a refused envelope gets an
// envelope-level error code and the connection stays open, as in Kafka.

fn encoded<T: Encodable>(message: &T, version: i16) -> Vec<u8> {
    let mut buf = BytesMut::new();
    message.encode(&mut buf, version).unwrap();
    buf.to_vec()
}

fn describe_quorum_v2() -> DescribeQuorumRequest {
    DescribeQuorumRequest::default().with_topics(vec![TopicData::default()
        .with_topic_name(TopicName(StrBytes::from_static_str("__cluster_metadata")))
        .with_partitions(vec![PartitionData::default().with_partition_index(0)])])
}

/// An envelope around `inner` (header + body) from principal User:ANONYMOUS at 10.0.0.9.
fn envelope_bytes(correlation_id: i32, inner: Vec<u8>, principal: Option<Vec<u8>>) -> Vec<u8> {
    let envelope = EnvelopeRequest::default()
        .with_request_data(Bytes::from(inner))
        .with_request_principal(principal.map(Bytes::from))
        .with_client_host_address(Bytes::from_static(&[10, 0, 0, 9]));
    request_bytes(ApiKey::Envelope, 0, correlation_id, &encoded(&envelope, 0))
}

fn anonymous_principal() -> Vec<u8> {
    let mut b = 0i16.to_be_bytes().to_vec();
    b.extend(encoded(
        &DefaultPrincipalData::default()
            .with_type(StrBytes::from_static_str("User"))
            .with_name(StrBytes::from_static_str("ANONYMOUS")),
        0,
    ));
    b
}

async fn envelope_response(s: &mut TcpStream, correlation_id: i32) -> EnvelopeResponse {
    let resp = read_frame(s).await.expect("envelope answered");
    let (corr, body) = decode_response(resp, ApiKey::Envelope, 0).unwrap();
    assert_eq!(corr, correlation_id);
    let ResponseBody::Envelope(r) = body else {
        panic!("not an envelope response")
    };
    r
}

#[tokio::test]
async fn an_envelope_is_answered_as_its_inner_request_is_directly() {
    let node = TestNode::start(&[]).await;
    let mut s = TcpStream::connect(node.addr).await.unwrap();
    let body = encoded(&describe_quorum_v2(), 2);
    s.write_all(&request_bytes(ApiKey::DescribeQuorum, 2, 5, &body))
        .await
        .unwrap();
    let direct = read_frame(&mut s).await.expect("answered");
    let (_, direct) = decode_response(direct, ApiKey::DescribeQuorum, 2).unwrap();

    let inner = request_bytes(ApiKey::DescribeQuorum, 2, 77, &body)[4..].to_vec();
    s.write_all(&envelope_bytes(6, inner, Some(anonymous_principal())))
        .await
        .unwrap();
    let wrapped = envelope_response(&mut s, 6).await;
    assert_eq!(wrapped.error_code, 0);
    let data = wrapped.response_data.expect("inner response");
    let (inner_corr, forwarded) = decode_response(data, ApiKey::DescribeQuorum, 2).unwrap();
    assert_eq!(inner_corr, 77, "the inner correlation id comes back inside");
    // This node has no Raft core: both answers are the same not-ready error.
    assert_eq!(forwarded, direct);
    let ResponseBody::DescribeQuorum(r) = forwarded else {
        panic!("not DescribeQuorum")
    };
    assert_eq!(r.error_code, 8, "BROKER_NOT_AVAILABLE");
    node.stop().await;
}

#[tokio::test]
async fn a_refused_envelope_gets_its_error_code_and_the_connection_stays_open() {
    let node = TestNode::start(&[]).await;
    let mut s = TcpStream::connect(node.addr).await.unwrap();
    let inner = request_bytes(
        ApiKey::DescribeQuorum,
        2,
        77,
        &encoded(&describe_quorum_v2(), 2),
    );
    s.write_all(&envelope_bytes(1, inner[4..].to_vec(), None))
        .await
        .unwrap();
    let r = envelope_response(&mut s, 1).await;
    assert_eq!(r.error_code, 97, "PRINCIPAL_DESERIALIZATION_FAILURE");
    assert_eq!(r.response_data, None);

    let vote = request_bytes(ApiKey::Vote, 0, 78, &[0u8, 1, 0]);
    s.write_all(&envelope_bytes(
        2,
        vote[4..].to_vec(),
        Some(anonymous_principal()),
    ))
    .await
    .unwrap();
    assert_eq!(
        envelope_response(&mut s, 2).await.error_code,
        42,
        "INVALID_REQUEST: Vote is not forwardable"
    );

    s.write_all(&envelope_bytes(3, vec![0, 55], Some(anonymous_principal())))
        .await
        .unwrap();
    assert_eq!(
        envelope_response(&mut s, 3).await.error_code,
        35,
        "UNSUPPORTED_VERSION: the inner header does not parse"
    );
    node.stop().await;
}

#[tokio::test]
async fn an_envelope_whose_own_body_does_not_decode_closes_like_any_malformed_body() {
    let node = TestNode::start(&[]).await;
    // request_data claims 100 bytes; the frame ends after 3.
    assert_closes(
        node.addr,
        &request_bytes(ApiKey::Envelope, 0, 1, &[101, 1, 2, 3]),
    )
    .await;
    node.stop().await;
}
