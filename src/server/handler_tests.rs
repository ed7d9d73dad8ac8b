//! What the handler tells the request metrics about an answer: the API and version a request
//! counts under (a forwarded one's inner API), a replica's Fetch, the response's error codes.

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::{
    ApiKey, ApiVersionsRequest, BrokerId, CreateTopicsRequest, DefaultPrincipalData,
    EnvelopeRequest, FetchRequest,
};
use kafka_protocol::protocol::{Encodable, StrBytes};

use super::*;
use crate::codec::header::encode_request_header;
use crate::codec::request::decode_request;
use crate::common::errors;

fn ctx() -> RequestContext {
    RequestContext {
        listener_name: "CONTROLLER".to_string(),
        peer: "127.0.0.1:5000".parse().unwrap(),
        forwarded: false,
        principal: crate::common::principal::Principal::anonymous(),
        forwarded_by: None,
        security_protocol: crate::common::security_protocol::SecurityProtocol::Plaintext,
    }
}

/// A node without a raft thread: it answers at once (not ready, for the raft's APIs).
fn handler() -> Handler {
    Handler::new(
        1,
        "cluster".to_string(),
        VoterSet::new([]),
        None,
        Release::Kafka4_1,
    )
}

/// A request frame body (header and body) decoded as the connection decodes it.
fn request<T: Encodable>(api: ApiKey, version: i16, body: &T) -> WireRequest {
    let mut buf = BytesMut::new();
    encode_request_header(&mut buf, api, version, 7, "client");
    body.encode(&mut buf, version).unwrap();
    decode_request(buf.freeze()).unwrap()
}

fn envelope_of<T: Encodable>(api: ApiKey, version: i16, body: &T) -> EnvelopeRequest {
    let mut inner = BytesMut::new();
    encode_request_header(&mut inner, api, version, 4242, "adminclient-1");
    body.encode(&mut inner, version).unwrap();
    let mut principal = BytesMut::new();
    principal.put_i16(0);
    DefaultPrincipalData::default()
        .with_type(StrBytes::from_static_str("User"))
        .with_name(StrBytes::from_static_str("ANONYMOUS"))
        .encode(&mut principal, 0)
        .unwrap();
    EnvelopeRequest::default()
        .with_request_data(inner.freeze())
        .with_request_principal(Some(principal.freeze()))
        .with_client_host_address(Bytes::from_static(&[10, 1, 2, 3]))
}

fn answered(request: WireRequest) -> Answered {
    let pending = handler().handle(&ctx(), request);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(pending).expect("an answer")
}

#[test]
fn a_forwarded_request_counts_under_its_inner_api_and_version() {
    let envelope = envelope_of(ApiKey::CreateTopics, 7, &CreateTopicsRequest::default());
    let a = answered(request(ApiKey::Envelope, 0, &envelope));
    assert_eq!((a.api, a.version), (ApiKey::CreateTopics, 7));
    // The inner response's codes (no topics: none), not the envelope's NONE.
    assert_eq!(a.errors.get(errors::NONE), 0, "{:?}", a.errors);
    assert_eq!(a.throttle_ms, 0);
    assert!(!a.follower_fetch);
}

#[test]
fn a_refused_envelope_counts_as_envelope_with_its_error() {
    // ApiVersions is not forwardable: the envelope itself is refused.
    let envelope = envelope_of(ApiKey::ApiVersions, 3, &ApiVersionsRequest::default());
    let a = answered(request(ApiKey::Envelope, 0, &envelope));
    assert_eq!((a.api, a.version), (ApiKey::Envelope, 0));
    assert_eq!(a.errors.get(errors::INVALID_REQUEST), 1, "{:?}", a.errors);
}

#[test]
fn a_replicas_fetch_is_a_follower_fetch_and_a_direct_answer_counts_its_codes() {
    let mut fetch = FetchRequest::default();
    fetch.replica_state.replica_id = BrokerId(2);
    let a = answered(request(ApiKey::Fetch, 17, &fetch));
    assert_eq!((a.api, a.version), (ApiKey::Fetch, 17));
    assert!(a.follower_fetch);
    // Not ready: Fetch's top-level code is counted.
    assert_eq!(
        a.errors.0.iter().map(|(_, n)| n).sum::<u32>(),
        1,
        "{:?}",
        a.errors
    );
    let mut consumer = FetchRequest::default();
    consumer.replica_state.replica_id = BrokerId(-1);
    assert!(!answered(request(ApiKey::Fetch, 17, &consumer)).follower_fetch);
    let versions = answered(request(
        ApiKey::ApiVersions,
        2,
        &ApiVersionsRequest::default(),
    ));
    assert_eq!(versions.errors.get(errors::NONE), 1);
}
