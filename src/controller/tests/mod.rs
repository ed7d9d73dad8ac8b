//! Controller tests, one file per manager, named after the Kafka test each mirrors
//! (`ClusterControlManagerTest`, `BrokerHeartbeatManagerTest`, `ReplicationControlManagerTest`,
//! `ProducerIdControlManagerTest`, `QuorumControllerTest`).

mod cluster;
mod configuration;
pub(crate) mod context;
mod elr;
mod heartbeats;
pub(crate) mod invariants;
mod producer_ids;
mod quorum_controller;
mod replication;
mod sim;
pub(crate) mod sim_support;
mod topic_admin;
