//! Each envelope check, its error code and Kafka's order (`EnvelopeUtils.handleEnvelopeRequest`).

use bytes::{BufMut, Bytes, BytesMut};
use kafka_protocol::messages::describe_quorum_request::{PartitionData, TopicData};
use kafka_protocol::messages::describe_quorum_response;
use kafka_protocol::messages::{
    AddRaftVoterResponse, ApiKey, CreateDelegationTokenRequest, DefaultPrincipalData,
    DeleteTopicsRequest, DescribeQuorumRequest, DescribeQuorumResponse, EnvelopeRequest,
    RemoveRaftVoterResponse, TopicName, VoteRequest,
};
use kafka_protocol::protocol::{Encodable, StrBytes};

use super::*;
use crate::codec::header::{decode_response_header, encode_request_header};

fn principal_bytes(version: i16, principal_type: &str, name: &str) -> Bytes {
    let mut buf = BytesMut::new();
    buf.put_i16(version);
    DefaultPrincipalData::default()
        .with_type(StrBytes::from_string(principal_type.to_string()))
        .with_name(StrBytes::from_string(name.to_string()))
        .encode(&mut buf, 0)
        .unwrap();
    buf.freeze()
}

/// An inner request as a broker's ForwardingManager embeds it: header, then body.
fn inner<T: Encodable>(api_key: ApiKey, version: i16, body: &T) -> Bytes {
    let mut buf = BytesMut::new();
    encode_request_header(&mut buf, api_key, version, 4242, "adminclient-1");
    body.encode(&mut buf, version).unwrap();
    buf.freeze()
}

fn describe_quorum() -> DescribeQuorumRequest {
    DescribeQuorumRequest::default().with_topics(vec![TopicData::default()
        .with_topic_name(TopicName(StrBytes::from_static_str("__cluster_metadata")))
        .with_partitions(vec![PartitionData::default().with_partition_index(0)])])
}

fn envelope(request_data: Bytes) -> EnvelopeRequest {
    EnvelopeRequest::default()
        .with_request_data(request_data)
        .with_request_principal(Some(principal_bytes(0, "User", "ANONYMOUS")))
        .with_client_host_address(Bytes::from_static(&[10, 1, 2, 3]))
}

fn rejection(req: &EnvelopeRequest) -> i16 {
    match unwrap_envelope(req) {
        Ok(f) => panic!("accepted: {f:?}"),
        Err(r) => r.error_code,
    }
}

#[test]
fn a_forwarded_describe_quorum_unwraps_with_principal_address_and_header() {
    let req = envelope(inner(ApiKey::DescribeQuorum, 2, &describe_quorum()));
    let f = unwrap_envelope(&req).unwrap();
    assert_eq!(f.principal.principal_type, "User");
    assert_eq!(f.principal.name, "ANONYMOUS");
    assert!(!f.principal.token_authenticated);
    assert_eq!(f.client_address, "10.1.2.3".parse::<IpAddr>().unwrap());
    assert_eq!(f.header.api_key, ApiKey::DescribeQuorum);
    assert_eq!(f.header.api_version, 2);
    assert_eq!(f.header.correlation_id, 4242);
    assert_eq!(f.header.client_id, "adminclient-1");
    assert_eq!(f.body, RequestBody::DescribeQuorum(describe_quorum()));
}

#[test]
fn an_ipv6_client_address_is_accepted() {
    let mut req = envelope(inner(ApiKey::DescribeQuorum, 0, &describe_quorum()));
    let mut v6 = [0u8; 16];
    v6[15] = 1;
    req.client_host_address = Bytes::copy_from_slice(&v6);
    let f = unwrap_envelope(&req).unwrap();
    assert_eq!(f.client_address, "::1".parse::<IpAddr>().unwrap());
}

#[test]
fn a_missing_or_undecodable_principal_is_principal_deserialization_failure() {
    let data = inner(ApiKey::DescribeQuorum, 2, &describe_quorum());
    let cases = [
        None,
        Some(Bytes::new()),
        Some(Bytes::from_static(&[0])),
        // Only version 0 of DefaultPrincipalData exists.
        Some(principal_bytes(1, "User", "alice")),
        Some(principal_bytes(-1, "User", "alice")),
        // Version 0, then a type string cut short.
        Some(Bytes::from_static(&[0, 0, 9, b'U'])),
    ];
    for principal in cases {
        let req = envelope(data.clone()).with_request_principal(principal.clone());
        assert_eq!(
            rejection(&req),
            PRINCIPAL_DESERIALIZATION_FAILURE,
            "principal {principal:?}"
        );
    }
}

#[test]
fn a_client_address_of_neither_4_nor_16_bytes_is_invalid_request() {
    let data = inner(ApiKey::DescribeQuorum, 2, &describe_quorum());
    for len in [0, 3, 5, 15, 17] {
        let req = envelope(data.clone()).with_client_host_address(Bytes::from(vec![1; len]));
        assert_eq!(rejection(&req), INVALID_REQUEST, "{len} address bytes");
    }
}

#[test]
fn an_unparsable_inner_header_is_unsupported_version() {
    let cases: [&[u8]; 4] = [
        &[],
        &[0, 55],
        // Unknown API key.
        &[0x7f, 0x00, 0, 0, 0, 0, 0, 1, 0, 0],
        // Client id longer than the data.
        &[0, 55, 0, 2, 0, 0, 0, 1, 0, 40, b'a'],
    ];
    for data in cases {
        let req = envelope(Bytes::from_static(data));
        assert_eq!(rejection(&req), UNSUPPORTED_VERSION, "inner {data:?}");
    }
}

#[test]
fn an_inner_api_that_is_not_forwardable_is_invalid_request() {
    let vote = inner(ApiKey::Vote, 2, &VoteRequest::default());
    assert_eq!(rejection(&envelope(vote)), INVALID_REQUEST);
    // UpdateRaftVoter is sent controller to controller, never forwarded.
    let mut data = BytesMut::new();
    encode_request_header(&mut data, ApiKey::UpdateRaftVoter, 0, 1, "c");
    assert_eq!(rejection(&envelope(data.freeze())), INVALID_REQUEST);
    // An envelope inside an envelope.
    let nested = inner(ApiKey::Envelope, 0, &envelope(Bytes::new()));
    assert_eq!(rejection(&envelope(nested)), INVALID_REQUEST);
}

#[test]
fn an_inner_body_that_does_not_parse_or_a_version_not_served_is_unsupported_version() {
    let mut cut = BytesMut::from(&inner(ApiKey::DescribeQuorum, 2, &describe_quorum())[..]);
    cut.truncate(cut.len() - 3);
    assert_eq!(rejection(&envelope(cut.freeze())), UNSUPPORTED_VERSION);
    let mut v9 = BytesMut::new();
    encode_request_header(&mut v9, ApiKey::DescribeQuorum, 9, 1, "c");
    assert_eq!(rejection(&envelope(v9.freeze())), UNSUPPORTED_VERSION);
}

#[test]
fn every_forwardable_api_is_served() {
    // Since the delegation-token APIs (#16) nothing a broker forwards is refused as unserved;
    // a version beyond the advertised range still is (the test above).
    for api in crate::codec::apis::APIS.iter().filter(|a| a.forwardable) {
        assert!(
            versions::advertised(api.api_key).is_some(),
            "{:?} not served",
            api.api_key
        );
    }
    let token = inner(
        ApiKey::CreateDelegationToken,
        3,
        &CreateDelegationTokenRequest::default(),
    );
    assert!(unwrap_envelope(&envelope(token)).is_ok());
    let delete = inner(ApiKey::DeleteTopics, 6, &DeleteTopicsRequest::default());
    assert!(unwrap_envelope(&envelope(delete)).is_ok());
}

#[test]
fn checks_run_in_kafkas_order() {
    // Everything wrong at once: the principal is reported first, then the address, then the
    // header, and forwardability only after the header parsed.
    let vote = inner(ApiKey::Vote, 2, &VoteRequest::default());
    let all_bad = envelope(vote.clone())
        .with_request_principal(None)
        .with_client_host_address(Bytes::new());
    assert_eq!(rejection(&all_bad), PRINCIPAL_DESERIALIZATION_FAILURE);
    let bad_address =
        envelope(Bytes::from_static(&[0x7f, 0])).with_client_host_address(Bytes::new());
    assert_eq!(rejection(&bad_address), INVALID_REQUEST);
    assert_eq!(
        rejection(&envelope(Bytes::from_static(&[0x7f, 0]))),
        UNSUPPORTED_VERSION
    );
    assert_eq!(rejection(&envelope(vote)), INVALID_REQUEST);
}

#[test]
fn the_inner_response_travels_with_its_header_and_correlation_id() {
    let resp = ResponseBody::RemoveRaftVoter(RemoveRaftVoterResponse::default());
    let wrapped = wrap_response(&resp, 0, 4242).unwrap();
    assert_eq!(wrapped.error_code, 0);
    let mut data = wrapped.response_data.clone().unwrap();
    let corr = decode_response_header(&mut data, ApiKey::RemoveRaftVoter, 0).unwrap();
    assert_eq!(corr, 4242);
    let body = ResponseBody::decode(ApiKey::RemoveRaftVoter, 0, &mut data).unwrap();
    assert_eq!(body, resp);
    assert!(data.is_empty());
}

#[test]
fn an_inner_describe_quorum_not_leader_becomes_envelope_not_controller() {
    let top = DescribeQuorumResponse::default().with_error_code(NOT_LEADER_OR_FOLLOWER);
    let partition = DescribeQuorumResponse::default().with_topics(vec![
        describe_quorum_response::TopicData::default()
            .with_partitions(vec![describe_quorum_response::PartitionData::default()
                .with_error_code(NOT_LEADER_OR_FOLLOWER)]),
    ]);
    for resp in [top, partition] {
        let wrapped = wrap_response(&ResponseBody::DescribeQuorum(resp), 2, 1).unwrap();
        assert_eq!(wrapped.error_code, NOT_CONTROLLER);
        assert_eq!(wrapped.response_data, None);
    }
    // Any other DescribeQuorum error goes to the client inside the envelope.
    let other = DescribeQuorumResponse::default().with_error_code(3);
    let wrapped = wrap_response(&ResponseBody::DescribeQuorum(other), 2, 1).unwrap();
    assert_eq!(wrapped.error_code, 0);
    assert!(wrapped.response_data.is_some());
}

#[test]
fn only_not_controller_lifts_voter_change_errors_to_the_envelope() {
    let not_controller = AddRaftVoterResponse::default().with_error_code(NOT_CONTROLLER);
    let wrapped = wrap_response(&ResponseBody::AddRaftVoter(not_controller), 0, 1).unwrap();
    assert_eq!(wrapped.error_code, NOT_CONTROLLER);
    assert_eq!(wrapped.response_data, None);
    // Kafka's raft layer answers a non-leader with NOT_LEADER_OR_FOLLOWER, which for these
    // APIs stays inside: the admin client sees it.
    let not_leader = RemoveRaftVoterResponse::default().with_error_code(NOT_LEADER_OR_FOLLOWER);
    let wrapped = wrap_response(&ResponseBody::RemoveRaftVoter(not_leader), 0, 1).unwrap();
    assert_eq!(wrapped.error_code, 0);
    assert!(wrapped.response_data.is_some());
}

proptest::proptest! {
    /// Peer bytes in any of the three fields yield a decision, never a panic.
    #[test]
    fn random_envelope_fields_never_panic(
        principal in proptest::option::of(proptest::collection::vec(proptest::num::u8::ANY, 0..64)),
        address in proptest::collection::vec(proptest::num::u8::ANY, 0..20),
        data in proptest::collection::vec(proptest::num::u8::ANY, 0..96),
    ) {
        let req = EnvelopeRequest::default()
            .with_request_principal(principal.map(Bytes::from))
            .with_client_host_address(Bytes::from(address))
            .with_request_data(Bytes::from(data));
        let _ = unwrap_envelope(&req);
    }

    /// A valid principal and address with a random inner request: refused with one of the
    /// inner-request codes or decoded, never a panic.
    #[test]
    fn random_inner_requests_get_an_inner_request_code(
        data in proptest::collection::vec(proptest::num::u8::ANY, 0..96),
    ) {
        if let Err(r) = unwrap_envelope(&envelope(Bytes::from(data))) {
            proptest::prop_assert!(
                r.error_code == UNSUPPORTED_VERSION || r.error_code == INVALID_REQUEST,
                "{r:?}"
            );
        }
    }
}
