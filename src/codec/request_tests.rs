//! The decode budget: what Kafka's clients send at their largest decodes within it, and the
//! frames of minimal array elements found by fuzzing (#19) are refused before their memory is
//! allocated.

use bytes::Bytes;
use kafka_protocol::messages::alter_partition_request::{BrokerState, PartitionData, TopicData};
use kafka_protocol::messages::create_topics_request::{CreatableReplicaAssignment, CreatableTopic};
use kafka_protocol::messages::delete_topics_request::DeleteTopicState;
use kafka_protocol::messages::elect_leaders_request::TopicPartitions;
use kafka_protocol::messages::incremental_alter_configs_request::{
    AlterConfigsResource, AlterableConfig,
};
use kafka_protocol::messages::{
    AlterPartitionRequest, BrokerId, CreateTopicsRequest, DeleteTopicsRequest, ElectLeadersRequest,
    IncrementalAlterConfigsRequest, TopicName,
};
use kafka_protocol::protocol::StrBytes;
use uuid::Uuid;

use super::super::reproducers::{
    describe_quorum_minimal_topics, describe_quorum_unknown_tags, fetch_minimal_topics,
    vote_minimal_topics,
};
use super::*;

fn body_of(body: &RequestBody, version: i16) -> Bytes {
    let framed = encode_request(body, version, 7, "adminclient-1").expect("encodes");
    framed.slice(4..)
}

fn name(s: String) -> TopicName {
    TopicName(StrBytes::from_string(s))
}

/// Shapes Kafka's own clients and brokers send at their largest: thousands of topics with
/// short names, a broker's AlterPartition after a peer failed, deletes by id, elections.
fn kafka_shaped_requests() -> Vec<(&'static str, RequestBody, i16)> {
    let short_topics = (0..20_000)
        .map(|i| {
            CreatableTopic::default()
                .with_name(name(format!("t{i}")))
                .with_num_partitions(1)
                .with_replication_factor(3)
        })
        .collect();
    let assigned_topics = (0..2_000)
        .map(|i| {
            let assignments = (0..10)
                .map(|p| {
                    CreatableReplicaAssignment::default()
                        .with_partition_index(p)
                        .with_broker_ids(vec![BrokerId(1), BrokerId(2), BrokerId(3)])
                })
                .collect();
            CreatableTopic::default()
                .with_name(name(format!("t{i}")))
                .with_num_partitions(-1)
                .with_replication_factor(-1)
                .with_assignments(assignments)
        })
        .collect();
    let isr: Vec<BrokerState> = (1..=3)
        .map(|b| {
            BrokerState::default()
                .with_broker_id(BrokerId(b))
                .with_broker_epoch(5)
        })
        .collect();
    let alter_partition = AlterPartitionRequest::default()
        .with_broker_id(BrokerId(1))
        .with_broker_epoch(5)
        .with_topics(
            (0..1_000)
                .map(|_| {
                    TopicData::default()
                        .with_topic_id(Uuid::new_v4())
                        .with_partitions(
                            (0..50)
                                .map(|p| {
                                    PartitionData::default()
                                        .with_partition_index(p)
                                        .with_leader_epoch(3)
                                        .with_new_isr_with_epochs(isr.clone())
                                        .with_partition_epoch(9)
                                })
                                .collect(),
                        )
                })
                .collect(),
        );
    let deletes = DeleteTopicsRequest::default().with_topics(
        (0..20_000)
            .map(|_| DeleteTopicState::default().with_topic_id(Uuid::new_v4()))
            .collect(),
    );
    let elections = ElectLeadersRequest::default().with_topic_partitions(Some(
        (0..20_000)
            .map(|i| {
                TopicPartitions::default()
                    .with_topic(name(format!("t{i}")))
                    .with_partitions(vec![0])
            })
            .collect(),
    ));
    let configs = IncrementalAlterConfigsRequest::default().with_resources(
        (0..10_000)
            .map(|i| {
                AlterConfigsResource::default()
                    .with_resource_type(2)
                    .with_resource_name(StrBytes::from_string(format!("t{i}")))
                    .with_configs(vec![AlterableConfig::default()
                        .with_name(StrBytes::from_static_str("retention.ms"))
                        .with_value(Some(StrBytes::from_static_str("1")))])
            })
            .collect(),
    );
    vec![
        (
            "CreateTopics, 20,000 short names",
            RequestBody::CreateTopics(CreateTopicsRequest::default().with_topics(short_topics)),
            7,
        ),
        (
            "CreateTopics, 2,000 topics x 10 assigned partitions",
            RequestBody::CreateTopics(CreateTopicsRequest::default().with_topics(assigned_topics)),
            7,
        ),
        (
            "AlterPartition, 50,000 partitions",
            RequestBody::AlterPartition(alter_partition),
            3,
        ),
        (
            "DeleteTopics, 20,000 ids",
            RequestBody::DeleteTopics(deletes),
            6,
        ),
        (
            "ElectLeaders, 20,000 short names",
            RequestBody::ElectLeaders(elections),
            2,
        ),
        (
            "IncrementalAlterConfigs, 10,000 topics",
            RequestBody::IncrementalAlterConfigs(configs),
            1,
        ),
    ]
}

#[test]
fn kafka_shaped_requests_decode_within_budget() {
    for (what, body, version) in kafka_shaped_requests() {
        let frame = body_of(&body, version);
        let wire = frame.len();
        let (decoded, charged) = decode_request_measured(frame);
        let decoded = decoded.unwrap_or_else(|e| panic!("{what}: {e}"));
        eprintln!("{what}: {charged} bytes charged for {wire} wire bytes");
        let InboundRequest::Request { body: got, .. } = decoded else {
            panic!("{what}: not a request");
        };
        assert_eq!(got, body, "{what}");
        // Well inside the budget's rate, not only inside the floor.
        let per_wire_byte = charged as f64 / wire as f64;
        assert!(
            per_wire_byte < (DECODE_BYTES_PER_WIRE_BYTE as f64) * 0.9,
            "{what}: {charged} bytes charged for {wire} wire bytes ({per_wire_byte:.1}x)"
        );
        assert!(
            wire > DECODE_BUDGET_FLOOR_BYTES / 4,
            "{what}: big enough to test the rate ({wire})"
        );
    }
}

fn assert_refused_by_budget(what: &str, frame: Bytes) {
    let wire = frame.len();
    let (decoded, charged) = decode_request_measured(frame);
    match decoded {
        Err(CodecError::DecodeBudget {
            body_len,
            budget_bytes,
            ..
        }) => {
            assert_eq!(body_len, wire, "{what}");
            assert_eq!(budget_bytes, decode_budget_bytes(wire), "{what}");
            assert!(
                charged <= budget_bytes,
                "{what}: charged {charged} over {budget_bytes}"
            );
        }
        Err(other) => panic!("{what}: expected DecodeBudget, got {other}"),
        Ok(_) => panic!("{what}: decoded ({charged} bytes charged for {wire} wire bytes)"),
    }
}

#[test]
fn minimal_element_frames_are_refused_before_allocating() {
    // 8 MiB each, the sizes the fuzzer found first.
    assert_refused_by_budget(
        "DescribeQuorum v0",
        describe_quorum_minimal_topics(2_796_202),
    );
    assert_refused_by_budget("Fetch v4", fetch_minimal_topics(1_398_101));
    // A Vote topic with one partition costs about 6 bytes per wire byte: it decodes, within
    // the budget's bound.
    let vote = vote_minimal_topics(299_593);
    let wire = vote.len();
    let (decoded, charged) = decode_request_measured(vote);
    assert!(decoded.is_ok(), "Vote v0 decodes");
    assert!(
        charged <= decode_budget_bytes(wire),
        "Vote v0: {charged} for {wire}"
    );
    assert!(
        charged > 4 * wire,
        "Vote v0: every element charged ({charged} for {wire})"
    );
}

#[test]
fn unknown_tagged_fields_are_charged() {
    // DescribeQuorum v0 with one topic whose tag section holds many empty unknown tags: 3 wire
    // bytes per tag, a map entry each in memory.
    assert_refused_by_budget(
        "DescribeQuorum v0 with unknown tags",
        describe_quorum_unknown_tags(200_000),
    );
}

#[test]
fn small_requests_fit_the_floor() {
    // A small frame of minimal elements decodes: the floor covers it, so a handful of topics
    // is answered by the handler (with Kafka's error), not closed by the codec.
    let (decoded, charged) = decode_request_measured(describe_quorum_minimal_topics(1_000));
    assert!(decoded.is_ok(), "{decoded:?}");
    assert!(charged > 1_000 * 50, "each element charged ({charged})");
}

/// Kafka's reading of malformed bodies, found by the differential fuzz's bad-input comparison
/// with Kafka 4.1.2's parser (#36): a tag known only at another version is kept as unknown and
/// written back; a string that is not UTF-8 is read as Java reads it.
#[test]
fn bodies_are_read_as_kafkas_parser_reads_them() {
    use kafka_protocol::messages::create_acls_request::AclCreation;
    use kafka_protocol::messages::{ApiKey, BrokerHeartbeatRequest, CreateAclsRequest};
    let plain = |body: &RequestBody, version: i16| {
        let mut out = bytes::BytesMut::new();
        body.encode(version, &mut out).expect("encodes");
        out.to_vec()
    };
    let read = |api: ApiKey, version: i16, body: &[u8]| {
        RequestBody::decode(api, version, &mut Bytes::copy_from_slice(body))
            .expect("Kafka reads it")
    };
    // BrokerHeartbeat v1 with an unknown tag 1 (CordonedLogDirs is tag 1 from v2 only).
    let mut v1 = plain(
        &RequestBody::BrokerHeartbeat(BrokerHeartbeatRequest::default()),
        1,
    );
    assert_eq!(v1.pop(), Some(0), "no tagged fields");
    v1.extend_from_slice(&[1, 1, 0]); // one tagged field: tag 1, 0 bytes
    let decoded = read(ApiKey::BrokerHeartbeat, 1, &v1);
    assert_eq!(
        plain(&decoded, 1),
        v1,
        "the unknown tag written back, as Kafka does"
    );
    // CreateAcls v1 whose resource name is C3 28: read as "\u{FFFD}(".
    let body = RequestBody::CreateAcls(CreateAclsRequest::default().with_creations(vec![
        AclCreation::default().with_resource_name(StrBytes::from_static_str("ab")),
    ]));
    let mut acls = plain(&body, 1);
    let at = acls.windows(2).position(|w| w == b"ab").expect("the name");
    acls[at..at + 2].copy_from_slice(&[0xc3, 0x28]);
    let RequestBody::CreateAcls(req) = read(ApiKey::CreateAcls, 1, &acls) else {
        panic!("CreateAcls")
    };
    assert_eq!(req.creations[0].resource_name.as_str(), "\u{FFFD}(");
}
