//! Broker and controller registration records: who is in the cluster, with which endpoints and
//! supported features, and the changes to a broker's state (fencing, controlled shutdown, log
//! directories).

use uuid::Uuid;

use crate::metadata::describe::metadata_struct;

metadata_struct! {
    /// One listener of a registered broker (RegisterBrokerRecord.EndPoints).
    #[derive(Eq)]
    pub struct BrokerEndpoint {
        /// Listener name (unique within the registration).
        name: String [0+],
        /// Advertised host.
        host: String [0+],
        /// Advertised port.
        port: u16 [0+],
        /// Security protocol id (`SecurityProtocol.id`: 0 PLAINTEXT … 3 SASL_SSL).
        security_protocol: i16 [0+],
    }
}

metadata_struct! {
    /// One supported feature range of a broker (RegisterBrokerRecord.Features).
    #[derive(Eq)]
    pub struct BrokerFeature {
        /// Feature name (unique within the registration).
        name: String [0+],
        /// Lowest level the broker supports.
        min_supported_version: i16 [0+],
        /// Highest level the broker supports.
        max_supported_version: i16 [0+],
    }
}

metadata_struct! {
    /// RegisterBrokerRecord (key 0): a broker (re-)registered, as BrokerRegistration asked.
    /// v1 adds controlled shutdown, v2 the ZK-migration flag, v3 log directories (tagged), v4
    /// cordoned log directories (tagged, KIP-1066, metadata.version 4.3-IV0).
    #[derive(Eq)]
    pub struct RegisterBrokerRecord {
        /// Broker id.
        broker_id: i32 [0+],
        /// Whether a ZooKeeper broker migrating to KRaft registered (always false since 4.0).
        is_migrating_zk_broker: bool [2+],
        /// Random id of the registering process.
        incarnation_id: Uuid [0+],
        /// Epoch the controller gave this registration (the record's own offset).
        broker_epoch: i64 [0+],
        /// Listeners.
        end_points: Vec<BrokerEndpoint> [0+],
        /// Supported feature ranges.
        features: Vec<BrokerFeature> [0+],
        /// Rack, if configured.
        rack: Option<String> [0+],
        /// Whether the broker starts fenced (a new registration is fenced).
        fenced: bool [0+, default true],
        /// Whether the broker is shutting down in a controlled way.
        in_controlled_shutdown: bool [1+],
        /// Log directory ids of the broker (JBOD).
        log_dirs: Vec<Uuid> [3+, tag 0],
        /// Log directories that take no new replicas; null when the broker sent none.
        cordoned_log_dirs: Option<Vec<Uuid>> [4+, tag 1],
    }
}

metadata_struct! {
    /// UnregisterBrokerRecord (key 1): a broker left the cluster.
    #[derive(Eq)]
    pub struct UnregisterBrokerRecord {
        /// Broker id.
        broker_id: i32 [0+],
        /// The registration's epoch.
        broker_epoch: i64 [0+],
    }
}

metadata_struct! {
    /// FenceBrokerRecord (key 7): a broker fenced (written before metadata.version 3.3-IV2;
    /// read only since then, BrokerRegistrationChangeRecord took over).
    #[derive(Eq)]
    pub struct FenceBrokerRecord {
        /// Broker id.
        id: i32 [0+],
        /// The registration's epoch.
        epoch: i64 [0+],
    }
}

metadata_struct! {
    /// UnfenceBrokerRecord (key 8): a broker unfenced (same history as FenceBrokerRecord).
    #[derive(Eq)]
    pub struct UnfenceBrokerRecord {
        /// Broker id.
        id: i32 [0+],
        /// The registration's epoch.
        epoch: i64 [0+],
    }
}

metadata_struct! {
    /// BrokerRegistrationChangeRecord (key 17): a change of a registered broker's state; every
    /// change is a tagged field, absent meaning "unchanged". v1 adds controlled shutdown, v2
    /// log directories, v3 cordoned log directories.
    #[derive(Eq)]
    pub struct BrokerRegistrationChangeRecord {
        /// Broker id.
        broker_id: i32 [0+],
        /// The registration's epoch.
        broker_epoch: i64 [0+],
        /// 0 unchanged, -1 unfenced, 1 fenced (`BrokerRegistrationFencingChange`).
        fenced: i8 [0+, tag 0],
        /// 0 unchanged, 1 in controlled shutdown (`BrokerRegistrationInControlledShutdownChange`).
        in_controlled_shutdown: i8 [1+, tag 1],
        /// The broker's log directories, when they changed (empty = unchanged).
        log_dirs: Vec<Uuid> [2+, tag 2],
        /// The cordoned log directories, when they changed (null = unchanged).
        cordoned_log_dirs: Option<Vec<Uuid>> [3+, tag 3],
    }
}

/// One listener of a registered controller (RegisterControllerRecord.EndPoints): the same
/// fields at every version as a broker's.
pub type ControllerEndpoint = BrokerEndpoint;

/// One supported feature range of a controller (RegisterControllerRecord.Features): the same
/// fields at every version as a broker's.
pub type ControllerFeature = BrokerFeature;

metadata_struct! {
    /// RegisterControllerRecord (key 27): a controller registered (KIP-919); the
    /// ControllerRegistration request (API 70 v0) carries the same fields.
    #[derive(Eq)]
    pub struct RegisterControllerRecord {
        /// Node id.
        controller_id: i32 [0+],
        /// Random id of the registering process (a restart registers again with a new one).
        incarnation_id: Uuid [0+],
        /// Always false since Kafka 4.0.
        zk_migration_ready: bool [0+],
        /// Endpoints by listener, in registration order.
        end_points: Vec<ControllerEndpoint> [0+],
        /// Supported feature ranges.
        features: Vec<ControllerFeature> [0+],
    }
}

metadata_struct! {
    /// UnregisterControllerRecord (key 29, Kafka 4.4, KIP-1312, metadata.version 4.4-IV2): a
    /// controller's registration removed.
    #[derive(Eq)]
    pub struct UnregisterControllerRecord {
        /// Node id.
        controller_id: i32 [0+],
    }
}
