//! kraft.version 1 voter sets (KIP-853), mirroring Kafka's `KafkaRaftClientReconfigTest`
//! bootstrap cases: voters from the bootstrap snapshot, VotersRecord effective on append and
//! rewound on truncation. Voter changes are in `add_voter.rs`, `remove_voter.rs`, `update_voter.rs`.

use bytes::Bytes;
use kafka_protocol::messages::ApiKey;

use super::context::*;
use super::reconfig_ctx::{dynamic_voters, kraft1};
use crate::codec::ResponseBody;
use crate::raft::voters::voter_set_to_record;
use crate::raft::LogReader;
use crate::records::batch::build_control_batch;
use crate::records::control::{ControlRecord, ControlRecordType};
use crate::records::view::BatchView;

fn control_types(bytes: &[u8]) -> Vec<ControlRecordType> {
    let view = BatchView::new(bytes).unwrap();
    view.records()
        .map(|r| r.unwrap().control_type().unwrap())
        .collect()
}

#[test]
fn test_leader_writes_bootstrap_records() {
    let mut ctx = kraft1(1, &[1, 2, 3], &[1, 2, 3])
        .with_unknown_leader(1)
        .build();
    ctx.become_leader();
    let (_, _, batch) = ctx.log.batches().last().cloned().unwrap();
    assert_eq!(
        control_types(&batch),
        vec![
            ControlRecordType::LeaderChange,
            ControlRecordType::KRaftVersion,
            ControlRecordType::KRaftVoters
        ]
    );
    assert_eq!(ctx.core.kraft_version(), 1);
}

#[test]
fn test_leader_does_not_bootstrap_records_with_kraft_version0() {
    let mut ctx = Builder::new(1, &[1, 2, 3]).with_unknown_leader(1).build();
    ctx.become_leader();
    let (_, _, batch) = ctx.log.batches().last().cloned().unwrap();
    assert_eq!(control_types(&batch), vec![ControlRecordType::LeaderChange]);
    assert_eq!(ctx.core.kraft_version(), 0);
}

#[test]
fn test_static_voters_ignored_with_bootstrap_snapshot() {
    // Static config says 1,2,3; the bootstrap snapshot says 1,2: the snapshot wins.
    let ctx = kraft1(1, &[1, 2, 3], &[1, 2])
        .with_unknown_leader(1)
        .build();
    assert_eq!(ctx.core.voters().ids().collect::<Vec<_>>(), vec![1, 2]);
}

#[test]
fn test_second_leader_does_not_rewrite_voters_it_already_has() {
    let mut ctx = kraft1(1, &[1, 2, 3], &[1, 2, 3])
        .with_unknown_leader(1)
        .build();
    ctx.become_leader();
    // Resign and win again: the log already has our VotersRecord, unchanged.
    let epoch = ctx.epoch();
    ctx.deliver_request(begin_epoch_request_body(epoch + 1, 2), 1);
    ctx.assert_follower(epoch + 1, 2);
    ctx.advance(FETCH_TIMEOUT_MS);
    ctx.become_leader_again();
    let (_, _, batch) = ctx.log.batches().last().cloned().unwrap();
    assert_eq!(control_types(&batch), vec![ControlRecordType::LeaderChange]);
}

#[test]
fn test_follower_reads_kraft_bootstrap_records_and_rewinds_on_truncation() {
    let mut ctx = kraft1(1, &[1, 2, 3], &[1, 2, 3])
        .with_elected_leader(5, 2)
        .build();
    ctx.poll();
    let f = ctx.take_sent(ApiKey::Fetch);
    // The leader's epoch-start batch adds voter 4.
    let voters = dynamic_voters(&[1, 2, 3, 4]);
    let batch = build_control_batch(
        0,
        5,
        START_MS as i64,
        &[
            ControlRecord::kraft_version(1),
            ControlRecord::Voters(voter_set_to_record(&voters)),
        ],
    )
    .unwrap();
    let resp = kafka_protocol::messages::FetchResponse::default().with_responses(vec![
        kafka_protocol::messages::fetch_response::FetchableTopicResponse::default()
            .with_topic_id(crate::raft::types::METADATA_TOPIC_ID)
            .with_partitions(vec![
                kafka_protocol::messages::fetch_response::PartitionData::default()
                    .with_high_watermark(-1)
                    .with_current_leader(
                        kafka_protocol::messages::fetch_response::LeaderIdAndEpoch::default()
                            .with_leader_id(kafka_protocol::messages::BrokerId(2))
                            .with_leader_epoch(5),
                    )
                    .with_records(Some(Bytes::from(batch))),
            ]),
    ]);
    ctx.deliver_response(f[0].correlation_id, ResponseBody::Fetch(resp));
    assert_eq!(
        ctx.core.voters().ids().collect::<Vec<_>>(),
        vec![1, 2, 3, 4],
        "effective on append"
    );
    assert_eq!(ctx.log.end_offset().offset, 2);
    // The leader then says our epoch-5 records diverge: truncation rewinds the voter set.
    let f = ctx.take_sent(ApiKey::Fetch);
    let mut diverging = kafka_protocol::messages::FetchResponse::default().with_responses(vec![
        kafka_protocol::messages::fetch_response::FetchableTopicResponse::default()
            .with_topic_id(crate::raft::types::METADATA_TOPIC_ID)
            .with_partitions(vec![
                kafka_protocol::messages::fetch_response::PartitionData::default()
                    .with_high_watermark(-1)
                    .with_current_leader(
                        kafka_protocol::messages::fetch_response::LeaderIdAndEpoch::default()
                            .with_leader_id(kafka_protocol::messages::BrokerId(2))
                            .with_leader_epoch(5),
                    )
                    .with_records(Some(Bytes::new())),
            ]),
    ]);
    diverging.responses[0].partitions[0].diverging_epoch.epoch = 0;
    diverging.responses[0].partitions[0]
        .diverging_epoch
        .end_offset = 0;
    ctx.deliver_response(f[0].correlation_id, ResponseBody::Fetch(diverging));
    assert_eq!(
        ctx.core.voters().ids().collect::<Vec<_>>(),
        vec![1, 2, 3],
        "rewound to the snapshot's voters"
    );
}
