//! The controller's settings from the node's configuration: what `ControllerConfig` takes from
//! a [`Config`] (the controller knows nothing of `server.properties`).

use super::Config;
use crate::controller::ControllerConfig;

/// The controller's settings for this node of cluster `cluster_id`, from its configuration.
pub fn controller_config(config: &Config, cluster_id: &str, rng_seed: u64) -> ControllerConfig {
    ControllerConfig {
        node_id: config.node_id,
        cluster_id: cluster_id.to_string(),
        broker_session_timeout_ms: config.broker_session_timeout_ms,
        num_partitions: config.num_partitions,
        default_replication_factor: config.default_replication_factor,
        min_insync_replicas: config.min_insync_replicas,
        delete_topic_enable: config.delete_topic_enable,
        quorum_node_ids: config.quorum_voters.iter().map(|v| v.id).collect(),
        auto_leader_rebalance_enable: config.auto_leader_rebalance_enable,
        leader_imbalance_check_interval_seconds: config.leader_imbalance_check_interval_seconds,
        unclean_leader_election_interval_ms: config.unclean_leader_election_interval_ms,
        kraft_version: 0,
        rng_seed,
        release: config.kafka_release.unwrap_or_default(),
        authorizer: config.authorizer.clone(),
        delegation_tokens: config.delegation_tokens.clone(),
        mutation_quota: config.mutation_quota,
        static_properties: config.properties.clone(),
    }
}
