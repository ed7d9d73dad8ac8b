//! Scenario tests mirroring Kafka's `KafkaRaftClientTest`, `KafkaRaftClientPreVoteTest`,
//! `KafkaRaftClientSnapshotTest` and `KafkaRaftClientReconfigTest`; each test is named after
//! the Kafka test it mirrors (tests marked "Not a Kafka test" are ours). `sim/`
//! is the cluster simulation (Kafka's `RaftEventSimulationTest`), `props` the property tests.
mod add_voter;
mod auto_join;
pub(crate) mod context;
mod election;
mod fetch;
mod kraft_upgrade;
pub(crate) mod mem_log;
mod more;
mod observer;
mod props;
mod reconfig;
mod reconfig_ctx;
mod regressions;
mod remove_voter;
mod sim;
mod sim_regressions;
mod update_voter;
mod wire;
