//! Cluster-wide records: features, configs, quotas, producer ids, transactions of records,
//! and the records that carry nothing (NoOp) or only history (ZK migration).

use crate::metadata::describe::metadata_struct;

metadata_struct! {
    /// FeatureLevelRecord (key 12): a finalized feature level (0 removes the feature, except
    /// metadata.version).
    #[derive(Eq)]
    pub struct FeatureLevelRecord {
        /// Feature name.
        name: String [0+],
        /// Finalized level.
        feature_level: i16 [0+],
    }
}

metadata_struct! {
    /// ConfigRecord (key 4): one dynamic config set (or removed, with a null value).
    #[derive(Eq)]
    pub struct ConfigRecord {
        /// Resource type (`ConfigResource.Type`: 2 topic, 4 broker, 8 broker logger, …).
        resource_type: i8 [0+],
        /// Resource name (empty for the cluster default).
        resource_name: String [0+],
        /// Config key.
        name: String [0+],
        /// Value; null removes the key.
        value: Option<String> [0+],
    }
}

metadata_struct! {
    /// One part of a client-quota entity (ClientQuotaRecord.Entity).
    #[derive(Eq)]
    pub struct ClientQuotaEntity {
        /// Entity type: `user`, `client-id` or `ip`.
        entity_type: String [0+],
        /// Entity name; null for the default entity.
        entity_name: Option<String> [0+],
    }
}

metadata_struct! {
    /// ClientQuotaRecord (key 14): one quota of a client entity set or removed.
    pub struct ClientQuotaRecord {
        /// The entity.
        entity: Vec<ClientQuotaEntity> [0+],
        /// Quota key.
        key: String [0+],
        /// Quota value.
        value: f64 [0+],
        /// Whether the quota is removed.
        remove: bool [0+],
    }
}

metadata_struct! {
    /// ProducerIdsRecord (key 15): a block of producer ids handed to a broker.
    #[derive(Eq)]
    pub struct ProducerIdsRecord {
        /// Broker that asked.
        broker_id: i32 [0+],
        /// Its registration epoch.
        broker_epoch: i64 [0+, default -1],
        /// First producer id not handed out yet.
        next_producer_id: i64 [0+],
    }
}

metadata_struct! {
    /// NoOpRecord (key 20): nothing; an idle active controller writes one to advance the log.
    #[derive(Eq)]
    pub struct NoOpRecord {}
}

metadata_struct! {
    /// ZkMigrationStateRecord (key 21): ZooKeeper migration state (history: read only in 4.x).
    #[derive(Eq)]
    pub struct ZkMigrationStateRecord {
        /// Migration state (a `ZkMigrationState` id).
        zk_migration_state: i8 [0+],
    }
}

metadata_struct! {
    /// BeginTransactionRecord (key 23): the records up to an End/AbortTransactionRecord apply
    /// together (KIP-868).
    #[derive(Eq)]
    pub struct BeginTransactionRecord {
        /// What the transaction is for; null when not given.
        name: Option<String> [0+, tag 0],
    }
}

metadata_struct! {
    /// EndTransactionRecord (key 24): the open metadata transaction applies.
    #[derive(Eq)]
    pub struct EndTransactionRecord {}
}

metadata_struct! {
    /// AbortTransactionRecord (key 25): the open metadata transaction is dropped.
    #[derive(Eq)]
    pub struct AbortTransactionRecord {
        /// Why; null when not given.
        reason: Option<String> [0+, tag 0],
    }
}
