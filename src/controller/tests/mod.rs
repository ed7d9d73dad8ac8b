//! Controller tests, one file per manager, named after the Kafka test each mirrors
//! (`ClusterControlManagerTest`, `BrokerHeartbeatManagerTest`, `ReplicationControlManagerTest`,
//! `ProducerIdControlManagerTest`, `QuorumControllerTest`; `elect_leaders.rs`: the election and
//! balancing cases of ReplicationControlManagerTest and QuorumControllerTest, `unclean_elections.rs`
//! the unclean ones; `broker_logger.rs`:
//! the BROKER_LOGGER cases of ControllerApisTest).

mod acl_authorization;
mod acls;
mod acls_cidr;
mod broker_logger;
mod client_quotas;
mod cluster;
mod configs_4_4;
mod configs_group;
mod configuration;
pub(crate) mod context;
mod delegation_tokens;
mod describe_configs;
mod elect_leaders;
mod elr;
mod features;
mod heartbeats;
pub(crate) mod invariants;
mod kafka_4_4;
mod mutation_quotas;
mod producer_ids;
mod quorum_controller;
mod reassignments;
mod replication;
mod scram;
mod sim;
pub(crate) mod sim_support;
mod topic_admin;
mod unclean_elections;
