//! Envelope (API 58) against Kafka's own classes: the oracle builds envelopes as a broker's
//! forwarding path does (`EnvelopeOracle build`); we decode and unwrap them, answer, and the
//! oracle reads our envelope responses back as the broker would (`EnvelopeOracle read`).

use std::fmt::Write as _;
use std::io::Write as _;

use bytes::Bytes;
use ferrokraft::codec::envelope::{unwrap_envelope, wrap_response};
use ferrokraft::codec::request::{decode_request, InboundRequest};
use ferrokraft::codec::response::encode_response;
use ferrokraft::codec::{RequestBody, ResponseBody};
use kafka_protocol::messages::describe_quorum_response::{PartitionData, ReplicaState, TopicData};
use kafka_protocol::messages::{
    AddRaftVoterResponse, ApiKey, BrokerId, DescribeQuorumResponse, RemoveRaftVoterResponse,
    TopicName,
};
use kafka_protocol::protocol::StrBytes;

use super::oracle_runner::{oracle, tail};
use super::vectors::{hex, unhex};

/// One envelope the oracle built: the inner API, version and correlation id, and the frame.
struct Built {
    api_key: i16,
    version: i16,
    correlation_id: i32,
    frame: Bytes,
}

fn built_by_kafka() -> Vec<Built> {
    let out = oracle().run(&["envelope".to_string(), "build".to_string()]);
    assert!(
        out.status.success(),
        "oracle envelope build:\n{}",
        tail(&out)
    );
    String::from_utf8(out.stdout)
        .expect("oracle output is UTF-8")
        .lines()
        .map(|line| {
            let f: Vec<&str> = line.split(' ').collect();
            assert_eq!(f.len(), 5, "{line}");
            assert_eq!(f[0], "envelope", "{line}");
            Built {
                api_key: f[1].parse().unwrap(),
                version: f[2].parse().unwrap(),
                correlation_id: f[3].parse().unwrap(),
                frame: Bytes::from(unhex(f[4]).unwrap()),
            }
        })
        .collect()
}

/// What ferrokraft answers to each inner request in this test (not through the Raft core:
/// this test is about the bytes).
fn answer(body: &RequestBody) -> ResponseBody {
    match body {
        RequestBody::DescribeQuorum(_) => ResponseBody::DescribeQuorum(
            DescribeQuorumResponse::default().with_topics(vec![TopicData::default()
                .with_topic_name(TopicName(StrBytes::from_static_str("__cluster_metadata")))
                .with_partitions(vec![PartitionData::default()
                    .with_leader_id(BrokerId(2))
                    .with_leader_epoch(7)
                    .with_high_watermark(1234)
                    .with_current_voters(vec![ReplicaState::default()
                        .with_replica_id(BrokerId(2))
                        .with_log_end_offset(1240)])])]),
        ),
        RequestBody::AddRaftVoter(_) => ResponseBody::AddRaftVoter(
            AddRaftVoterResponse::default()
                .with_error_code(74)
                .with_error_message(Some(StrBytes::from_static_str("fenced"))),
        ),
        RequestBody::RemoveRaftVoter(_) => {
            ResponseBody::RemoveRaftVoter(RemoveRaftVoterResponse::default())
        }
        other => panic!("the oracle forwarded {:?}", other.api_key()),
    }
}

/// Kafka's envelopes unwrap to the inner request Kafka serialized, with the principal and
/// client address Kafka wrote; our envelope responses parse in Kafka as the inner response.
#[test]
fn kafka_envelopes_unwrap_and_our_answers_read_back_in_kafka() {
    let built = built_by_kafka();
    assert_eq!(
        built.len(),
        5,
        "DescribeQuorum v0-2, AddRaftVoter v0, RemoveRaftVoter v0"
    );
    let mut answers = String::new();
    let mut expected = Vec::new();
    for b in &built {
        let InboundRequest::Request { header, body } = decode_request(b.frame.clone()).unwrap()
        else {
            panic!("envelope decoded as an unsupported ApiVersions");
        };
        assert_eq!(header.api_key, ApiKey::Envelope);
        assert_eq!(header.client_id, "broker-100-forwarding");
        let RequestBody::Envelope(envelope) = body else {
            panic!("not an envelope: {:?}", body.api_key());
        };
        let forwarded = unwrap_envelope(&envelope).unwrap();
        assert_eq!(forwarded.principal.principal_type, "User");
        assert_eq!(forwarded.principal.name, "alice");
        assert_eq!(forwarded.client_address.to_string(), "192.0.2.7");
        assert_eq!(forwarded.header.api_key as i16, b.api_key);
        assert_eq!(forwarded.header.api_version, b.version);
        assert_eq!(forwarded.header.correlation_id, b.correlation_id);
        assert_eq!(forwarded.header.client_id, "adminclient-1");
        match &forwarded.body {
            RequestBody::DescribeQuorum(r) => {
                assert_eq!(r.topics.len(), 1);
                assert_eq!(r.topics[0].topic_name.0.as_str(), "__cluster_metadata");
            }
            RequestBody::AddRaftVoter(r) => {
                assert_eq!(r.voter_id, 3);
                assert_eq!(r.timeout_ms, 30000);
                assert_eq!(r.listeners.len(), 1);
                assert_eq!(r.listeners[0].port, 9093);
            }
            RequestBody::RemoveRaftVoter(r) => assert_eq!(r.voter_id, 1),
            other => panic!("unexpected inner {:?}", other.api_key()),
        }

        let inner = answer(&forwarded.body);
        let wrapped = wrap_response(&inner, b.version, b.correlation_id).unwrap();
        let frame = encode_response(&ResponseBody::Envelope(wrapped), 0, 4242).unwrap();
        writeln!(
            answers,
            "{} {} {} {}",
            b.api_key,
            b.version,
            b.correlation_id,
            hex(&frame[4..])
        )
        .unwrap();
        expected.push((b.api_key, b.version, inner));
    }

    // One more: an inner NOT_LEADER_OR_FOLLOWER becomes an envelope-level NOT_CONTROLLER.
    let not_leader =
        ResponseBody::DescribeQuorum(DescribeQuorumResponse::default().with_topics(vec![
            TopicData::default().with_partitions(vec![PartitionData::default().with_error_code(6)]),
        ]));
    let wrapped = wrap_response(&not_leader, 2, 99).unwrap();
    let frame = encode_response(&ResponseBody::Envelope(wrapped), 0, 4242).unwrap();
    writeln!(answers, "55 2 99 {}", hex(&frame[4..])).unwrap();

    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(answers.as_bytes()).unwrap();
    let out = oracle().run(&[
        "envelope".to_string(),
        "read".to_string(),
        file.path().display().to_string(),
    ]);
    assert!(
        out.status.success(),
        "oracle envelope read:\n{}",
        tail(&out)
    );
    let read = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = read.lines().collect();
    assert_eq!(lines.len(), expected.len() + 1, "{read}");
    for (line, (api_key, version, _)) in lines.iter().zip(&expected) {
        assert!(
            line.starts_with(&format!("{api_key} {version} ")) && line.contains(" inner="),
            "Kafka did not read our envelope response as the inner response: {line}"
        );
        match api_key {
            55 => {
                for field in ["leaderId=2", "leaderEpoch=7", "highWatermark=1234"] {
                    assert!(line.contains(field), "{field} missing: {line}");
                }
            }
            80 => assert!(line.contains("errorCode=74"), "{line}"),
            81 => assert!(line.contains("errorCode=0"), "{line}"),
            _ => unreachable!(),
        }
    }
    assert_eq!(
        lines[expected.len()],
        "55 2 99 envelope_error=NOT_CONTROLLER data=null"
    );
}
