//! What the controller is configured with (`server.properties` keys, Kafka's defaults).

/// The controller's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerConfig {
    /// This node's id.
    pub node_id: i32,
    /// The cluster id from meta.properties.
    pub cluster_id: String,
    /// `broker.session.timeout.ms` (9000).
    pub broker_session_timeout_ms: u64,
    /// `num.partitions` (1): partitions of a topic created with -1.
    pub num_partitions: i32,
    /// `default.replication.factor` (1).
    pub default_replication_factor: i16,
    /// `min.insync.replicas` (1): the cluster default the activation writes with ELR on.
    pub min_insync_replicas: i32,
    /// `delete.topic.enable` (true): whether DeleteTopics may remove topics.
    pub delete_topic_enable: bool,
    /// `auto.leader.rebalance.enable` (true): the active controller moves leadership back to
    /// preferred replicas on its own.
    pub auto_leader_rebalance_enable: bool,
    /// `leader.imbalance.check.interval.seconds` (300): how long after a write the balancing
    /// check runs when leaders are imbalanced.
    pub leader_imbalance_check_interval_seconds: u64,
    /// `unclean.leader.election.interval.ms` (300,000): how long after a write the active
    /// controller tries unclean elections of leaderless partitions (Kafka's
    /// `uncleanLeaderElectionCheckIntervalMs`).
    pub unclean_leader_election_interval_ms: u64,
    /// The voters named in `controller.quorum.voters` (Kafka's `quorumNodeIds`: an unregistered
    /// one blocks feature upgrades; empty for a dynamic quorum).
    pub quorum_node_ids: Vec<i32>,
    /// The kraft.version in effect (brokers must support it to register).
    pub kraft_version: i16,
    /// Seed of topic ids and placement offsets.
    pub rng_seed: u64,
    /// The Kafka release this node presents itself as: the feature levels it supports (an
    /// UpdateFeatures beyond them is refused, as by that release's controller).
    pub release: crate::codec::versions::Release,
    /// The StandardAuthorizer's settings when `authorizer.class.name` names it; `None`: no
    /// authorizer (every check passes, the ACL APIs answer SECURITY_DISABLED).
    pub authorizer: Option<crate::metadata::authorizer::AuthorizerConfig>,
    /// The `delegation.token.*` settings when `delegation.token.secret.key` is set; `None`:
    /// token requests are answered DELEGATION_TOKEN_AUTH_DISABLED.
    pub delegation_tokens: Option<super::delegation_tokens::DelegationTokenConfig>,
    /// `controller.quota.window.num` and `controller.quota.window.size.seconds`: the burst
    /// of the controller mutation quotas.
    pub mutation_quota: super::mutation_quotas::MutationQuotaConfig,
    /// The node's configuration as given (DescribeConfigs of its own BROKER resource lists
    /// it, as Kafka's controller lists its `KafkaConfig`).
    pub static_properties: crate::common::static_properties::StaticProperties,
}

impl ControllerConfig {
    /// The delay of the balancing check (Kafka's `leaderImbalanceCheckIntervalNs`), `None`
    /// when balancing is off.
    pub fn leader_imbalance_check_interval_ms(&self) -> Option<u64> {
        self.auto_leader_rebalance_enable.then(|| {
            self.leader_imbalance_check_interval_seconds
                .saturating_mul(1000)
        })
    }

    /// Kafka's defaults for node `node_id` of cluster `cluster_id`.
    pub fn new(node_id: i32, cluster_id: impl Into<String>) -> Self {
        Self {
            node_id,
            cluster_id: cluster_id.into(),
            broker_session_timeout_ms: 9000,
            num_partitions: 1,
            default_replication_factor: 1,
            min_insync_replicas: 1,
            delete_topic_enable: true,
            quorum_node_ids: Vec::new(),
            auto_leader_rebalance_enable: true,
            leader_imbalance_check_interval_seconds: 300,
            unclean_leader_election_interval_ms: 300_000,
            kraft_version: 0,
            rng_seed: 0,
            release: Default::default(),
            authorizer: None,
            delegation_tokens: None,
            mutation_quota: Default::default(),
            static_properties: Default::default(),
        }
    }
}
