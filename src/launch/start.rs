//! Opening a formatted node: lock and check the directory, recover the log, restore the
//! election state, and build the Raft configuration from `server.properties`.

use std::path::Path;

use crate::codec::versions::Release;
use crate::config::Config;
use crate::raft::types::{Endpoint, VoterSet};
use crate::raft::{RaftConfig, RaftCore};
use crate::storage::StorageError;
use crate::storage::{open_formatted, FormattedDir};

use crate::node::registration::{registered_features, Registrations};
use crate::server::store::{RaftStore, StoreError};

/// Why the node could not open its state.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The metadata directory is missing, unformatted, locked, or for another node/cluster.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The log or quorum-state could not be opened.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The configuration cannot run yet.
    #[error("{0}")]
    Unsupported(String),
}

/// A node's opened state, ready to run.
#[derive(Debug)]
pub struct Opened {
    /// The locked directory (keep for the process lifetime).
    pub dir: FormattedDir,
    /// The Raft core.
    pub core: RaftCore,
    /// Its store.
    pub store: RaftStore,
    /// The voters.
    pub voters: VoterSet,
    /// The cluster id from meta.properties.
    pub cluster_id: String,
    /// This node's own controller registration (KIP-919), the client side.
    pub registrations: Registrations,
    /// The controller layer: the metadata image, and the active controller when leading.
    pub controller: crate::controller::QuorumController,
    /// The Kafka release the node presents ([`effective_release`]).
    pub release: Release,
}

/// The release a node presents: `ferrokraft.kafka.release` when set; otherwise the release
/// whose `kafka-storage format` defaults to the directory's bootstrap metadata.version (a
/// directory Kafka 4.3.2 formatted with its defaults presents 4.3), else the newest; 4.1
/// when the directory has no bootstrap level.
pub fn effective_release(
    configured: Option<Release>,
    bootstrap_metadata_version: Option<i16>,
) -> Release {
    configured.unwrap_or(match bootstrap_metadata_version {
        Some(level) => Release::for_bootstrap_level(level),
        None => Release::default(),
    })
}

/// The static voter set from `controller.quorum.voters`, on the first controller listener.
pub fn static_voters(config: &Config) -> VoterSet {
    let listener = config
        .controller_listener_names
        .first()
        .cloned()
        .unwrap_or_default();
    VoterSet::from_static(
        &listener,
        &config
            .quorum_voters
            .iter()
            .map(|v| (v.id, v.host.clone(), v.port))
            .collect::<Vec<_>>(),
    )
}

/// Opens the node's state and builds its core at `now_ms` with jitter seed `rng_seed`.
pub fn open(config: &Config, now_ms: u64, rng_seed: u64) -> Result<Opened, StartError> {
    if config.quorum_voters.is_empty() && config.quorum_bootstrap_servers.is_empty() {
        return Err(StartError::Unsupported(
            "set controller.quorum.voters or controller.quorum.bootstrap.servers".into(),
        ));
    }
    let dir = open_formatted(&config.metadata_log_dir, config.node_id, None)?;
    let voters = static_voters(config);
    let partition_dir: &Path = &dir.partition_dir;
    let store = RaftStore::open_node(
        partition_dir,
        crate::log::LogConfig {
            segment_bytes: config.metadata_log_segment_bytes,
            segment_ms: config.metadata_log_segment_ms,
        },
        0,
        voters.ids().collect(),
        config.node_id,
        config.recovery_accept_data_loss,
    )?;
    let mut store = store;
    let mut bootstrap_metadata_version = None;
    if let Some(b) = &dir.bootstrap {
        let values = b.record_values();
        bootstrap_metadata_version = values.iter().find_map(|v| {
            crate::records::feature_level::parse_feature_level_record(v)
                .filter(|(name, _)| name == crate::common::release::METADATA_VERSION_FEATURE)
                .map(|(_, level)| level)
        });
        store.set_bootstrap_records(values.into_iter().map(Into::into).collect());
    }
    let release = effective_release(config.kafka_release, bootstrap_metadata_version);
    if config.kafka_release.is_none() && release != Release::default() {
        tracing::info!(
            "Presenting Kafka {}'s controller: the directory was formatted at metadata.version \
             level {} (set ferrokraft.kafka.release to choose)",
            release.name(),
            bootstrap_metadata_version.unwrap_or_default()
        );
    }
    if config.quorum_auto_join_enable && !release.has_auto_join() {
        tracing::warn!(
            "controller.quorum.auto.join.enable is set but Kafka {}'s controller does not \
             auto-join (Kafka 4.2 and later do); set ferrokraft.kafka.release to a later release",
            release.name()
        );
    }
    let stored = store.read_election_state()?;
    // KIP-853: voters recorded in the latest snapshot (the bootstrap 0-0 checkpoint written by
    // `format --standalone/--initial-controllers`) override controller.quorum.voters.
    let snapshot_voters = store.latest_snapshot_voters();
    let listener_name = config
        .controller_listener_names
        .first()
        .cloned()
        .unwrap_or_default();
    let local_endpoints: Vec<(String, Endpoint)> = config
        .advertised_listeners
        .iter()
        .filter(|l| config.controller_listener_names.contains(&l.name))
        .map(|l| {
            let host = if l.host.is_empty() {
                "localhost".to_string()
            } else {
                l.host.clone()
            };
            (l.name.clone(), Endpoint { host, port: l.port })
        })
        .collect();
    let registrations = Registrations::new(
        config.node_id,
        crate::common::uuid::random_kafka_uuid(),
        local_endpoints
            .iter()
            .map(|(name, e)| {
                // SecurityProtocol ids: what Kafka's ControllerRegistrationManager writes for
                // each advertised controller listener.
                let protocol = config.security_protocol(name).id();
                (name.clone(), e.host.clone(), e.port, protocol)
            })
            .collect(),
        &registered_features(release),
    );
    let raft_config = RaftConfig {
        node_id: config.node_id,
        // Like Kafka 4.x, the replica key always carries the metadata directory's id (Fetch
        // v17+, Vote, DescribeQuorum); static voters (kraft.version 0) have none, and a voter
        // key without a directory id matches any. A leader upgrading kraft.version 0 → 1
        // writes the directory ids it learned this way into the first VotersRecord.
        directory_id: dir.directory_id,
        cluster_id: dir.meta.cluster_id.clone(),
        listener_name,
        local_endpoints: local_endpoints.into_iter().collect(),
        voters: voters.clone(),
        snapshot_voters,
        bootstrap_servers: config
            .quorum_bootstrap_servers
            .iter()
            .map(|b| Endpoint {
                host: b.host.clone(),
                port: b.port,
            })
            .collect(),
        election_timeout_ms: config.quorum_election_timeout_ms,
        fetch_timeout_ms: config.quorum_fetch_timeout_ms,
        election_backoff_max_ms: config.quorum_election_backoff_max_ms,
        request_timeout_ms: config.quorum_request_timeout_ms,
        retry_backoff_ms: config.quorum_retry_backoff_ms,
        append_linger_ms: config.quorum_append_linger_ms,
        auto_join: config.quorum_auto_join_enable && release.has_auto_join(),
        fetch_max_bytes: config
            .quorum_fetch_max_bytes
            .unwrap_or_else(|| release.default_quorum_fetch_max_bytes()),
        fetch_snapshot_max_bytes: config
            .quorum_fetch_snapshot_max_bytes
            .unwrap_or_else(|| release.default_quorum_fetch_max_bytes()),
        leader_reads_fetch_max_bytes: release.has_fetch_max_bytes_keys(),
        rng_seed,
    };
    let core = RaftCore::new(raft_config, stored, &store, now_ms);
    let cluster_id = dir.meta.cluster_id.clone();
    let mut controller_config =
        crate::config::controller_config(config, &cluster_id, rng_seed.rotate_left(17));
    controller_config.kraft_version = core.kraft_version();
    controller_config.release = release;
    if let Some(authorizer) = controller_config.authorizer.as_mut() {
        authorizer.cidr_host_patterns = release.checks_acl_host_patterns();
    }
    let controller = crate::controller::QuorumController::new(
        controller_config,
        store.bootstrap_records().to_vec(),
    )
    .with_log_levels(crate::logging::initial_levels());
    Ok(Opened {
        dir,
        core,
        store,
        voters,
        cluster_id,
        registrations,
        controller,
        release,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_release_follows_the_key_else_the_bootstrap_metadata_version() {
        assert_eq!(
            effective_release(Some(Release::Kafka4_1), Some(33)),
            Release::Kafka4_1
        );
        assert_eq!(
            effective_release(Some(Release::Kafka4_4), Some(27)),
            Release::Kafka4_4
        );
        assert_eq!(effective_release(None, Some(33)), Release::Kafka4_4);
        assert_eq!(effective_release(None, Some(30)), Release::Kafka4_3);
        assert_eq!(effective_release(None, Some(29)), Release::Kafka4_2);
        assert_eq!(effective_release(None, Some(27)), Release::Kafka4_1);
        assert_eq!(effective_release(None, Some(25)), Release::Kafka4_0);
        // No release defaults to 4.2-IV0 or 3.9-IV0: the newest reads them.
        assert_eq!(effective_release(None, Some(28)), Release::Kafka4_4);
        assert_eq!(effective_release(None, Some(21)), Release::Kafka4_4);
        assert_eq!(effective_release(None, None), Release::Kafka4_1);
    }
}
