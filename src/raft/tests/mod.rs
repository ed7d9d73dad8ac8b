//! Scenario tests mirroring Kafka's `KafkaRaftClientTest`, `KafkaRaftClientPreVoteTest` and
//! `KafkaRaftClientSnapshotTest`; each test is named after the Kafka test it mirrors. `sim/`
//! is the cluster simulation (Kafka's `RaftEventSimulationTest`), `props` the property tests.
mod context;
mod election;
mod fetch;
mod mem_log;
mod more;
mod props;
mod reconfig;
mod regressions;
mod sim;
mod sim_regressions;
