//! Scenario tests mirroring Kafka's `KafkaRaftClientTest`, `KafkaRaftClientPreVoteTest` and
//! `KafkaRaftClientSnapshotTest`; each test is named after the Kafka test it mirrors.
mod context;
mod election;
mod fetch;
mod mem_log;
mod regressions;
