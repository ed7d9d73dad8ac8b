//! Kafka's controller metrics (`kafka.controller:type=KafkaController` and
//! `type=ControllerEventManager`), as the JMX exporter names them
//! (`kafka_controller_kafkacontroller_activecontrollercount`, …), computed from the
//! controller's images by the driver whenever the image moved, and encoded from a
//! `MetricsView` at each scrape.

use std::fmt::Error;

use prometheus_client::encoding::DescriptorEncoder;

use super::exposition::{counter, gauge, histogram};
use super::metrics::MetricsView;
use crate::controller::QuorumController;

/// The controller gauges of one node.
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerGauges {
    /// 1 on the active controller.
    pub active_controller_count: u8,
    /// Registered, unfenced brokers.
    pub active_broker_count: usize,
    /// Registered, fenced brokers.
    pub fenced_broker_count: usize,
    /// Topics.
    pub global_topic_count: usize,
    /// Partitions.
    pub global_partition_count: usize,
    /// Partitions without a leader.
    pub offline_partitions_count: usize,
    /// Partitions led by another replica than their first.
    pub preferred_replica_imbalance_count: usize,
    /// Offset of the last record applied to the image the controller acts on.
    pub last_applied_record_offset: i64,
    /// Offset of the last committed record replayed.
    pub last_committed_record_offset: i64,
    /// Records the image refused or could not decode.
    pub metadata_error_count: u64,
    /// Whether the committed image holds a metadata.version (the node can serve as
    /// controller).
    pub metadata_loaded: bool,
    /// Registered brokers in controlled shutdown.
    pub controlled_shutdown_broker_count: usize,
    /// Leader elections counted in the committed log (`ControllerStats`).
    pub elections: crate::controller::ElectionStats,
    /// The committed metadata.version level (Kafka's minimum, 3.3-IV3, before one is known):
    /// MetadataLoader `CurrentMetadataVersion`.
    pub metadata_version_level: i16,
    /// MetadataLoader `HandleLoadSnapshotCount`.
    pub snapshot_loads: u64,
}

impl Default for ControllerGauges {
    /// Nothing loaded yet: zero counts, Kafka's minimum metadata.version.
    fn default() -> Self {
        Self {
            active_controller_count: 0,
            active_broker_count: 0,
            fenced_broker_count: 0,
            global_topic_count: 0,
            global_partition_count: 0,
            offline_partitions_count: 0,
            preferred_replica_imbalance_count: 0,
            last_applied_record_offset: 0,
            last_committed_record_offset: 0,
            metadata_error_count: 0,
            metadata_loaded: false,
            controlled_shutdown_broker_count: 0,
            elections: Default::default(),
            metadata_version_level: crate::common::release::mv::V3_3_IV3,
            snapshot_loads: 0,
        }
    }
}

impl ControllerGauges {
    /// The gauges of `controller` now.
    pub fn of(controller: &QuorumController) -> Self {
        let committed = controller.committed_image();
        let image = controller.speculative_image().unwrap_or(committed);
        let mut g = ControllerGauges {
            active_controller_count: u8::from(controller.is_active()),
            active_broker_count: image.brokers.values().filter(|b| !b.fenced).count(),
            fenced_broker_count: image.brokers.values().filter(|b| b.fenced).count(),
            controlled_shutdown_broker_count: image
                .brokers
                .values()
                .filter(|b| b.in_controlled_shutdown)
                .count(),
            global_topic_count: image.topics.len(),
            last_applied_record_offset: image.next_offset - 1,
            last_committed_record_offset: committed.next_offset - 1,
            metadata_error_count: committed.refused_records + committed.undecodable_records,
            metadata_loaded: committed.metadata_version().is_some(),
            elections: controller.election_stats(),
            metadata_version_level: committed
                .metadata_version()
                .unwrap_or(crate::common::release::mv::V3_3_IV3),
            snapshot_loads: controller.snapshot_loads(),
            ..Default::default()
        };
        // Kept by replay: a metrics update costs nothing per partition.
        let stats = &image.partition_stats;
        g.global_partition_count = stats.partitions;
        g.offline_partitions_count = stats.offline;
        g.preferred_replica_imbalance_count = stats.imbalanced;
        g
    }
}

/// Appends `kafka.controller` series of `m`: KafkaController gauges, ControllerEventManager
/// histograms.
pub fn encode_controller(enc: &mut DescriptorEncoder, m: &MetricsView) -> Result<(), Error> {
    let g = &m.controller;
    let k = "kafka_controller_kafkacontroller_";
    let rows: [(&str, &str, f64); 15] = [
        (
            "activecontrollercount",
            "1 on the active controller, else 0.",
            f64::from(g.active_controller_count),
        ),
        (
            "activebrokercount",
            "Registered brokers that are not fenced.",
            g.active_broker_count as f64,
        ),
        (
            "fencedbrokercount",
            "Registered brokers that are fenced.",
            g.fenced_broker_count as f64,
        ),
        (
            "controlledshutdownbrokercount",
            "Registered brokers in controlled shutdown.",
            g.controlled_shutdown_broker_count as f64,
        ),
        (
            "globaltopiccount",
            "Topics in the cluster.",
            g.global_topic_count as f64,
        ),
        (
            "globalpartitioncount",
            "Partitions in the cluster.",
            g.global_partition_count as f64,
        ),
        (
            "offlinepartitionscount",
            "Partitions without a leader.",
            g.offline_partitions_count as f64,
        ),
        (
            "preferredreplicaimbalancecount",
            "Partitions not led by their preferred replica.",
            g.preferred_replica_imbalance_count as f64,
        ),
        (
            "lastappliedrecordoffset",
            "Offset of the last record applied by the controller.",
            g.last_applied_record_offset as f64,
        ),
        (
            "lastcommittedrecordoffset",
            "Offset of the last committed record replayed.",
            g.last_committed_record_offset as f64,
        ),
        (
            "lastappliedrecordtimestamp",
            "When the controller last applied a record (ms since the epoch; 0 none yet).",
            m.last_applied_timestamp_ms as f64,
        ),
        (
            "lastappliedrecordlagms",
            "Milliseconds since the controller last applied a record.",
            m.last_applied_lag_ms as f64,
        ),
        (
            "metadataerrorcount",
            "Metadata records the controller could not apply.",
            g.metadata_error_count as f64,
        ),
        (
            "newactivecontrollerscount",
            "Times this node became the active controller.",
            m.new_active_controllers as f64,
        ),
        (
            "timedoutbrokerheartbeatcount",
            "Broker heartbeats answered without reaching the controller (its queue was full).",
            m.timed_out_heartbeats as f64,
        ),
    ];
    for (name, help, value) in rows {
        gauge(enc, &format!("{k}{name}"), help, value)?;
    }
    // ControllerStats meters, as the JMX exporter's rules make a `…PerSec` Count: counters.
    let s = "kafka_controller_controllerstats_";
    counter(
        enc,
        &format!("{s}uncleanleaderelections"),
        "Unclean leader elections in the committed metadata log (UncleanLeaderElectionsPerSec).",
        g.elections.unclean,
    )?;
    counter(
        enc,
        &format!("{s}electionfromeligibleleaderreplicas"),
        "Leaders elected from the eligible leader replicas (ElectionFromEligibleLeaderReplicasPerSec).",
        g.elections.from_elr,
    )?;
    // MetadataLoader and SnapshotEmitter gauges (`kafka.server`).
    let l = "kafka_server_metadataloader_";
    gauge(
        enc,
        &format!("{l}currentmetadataversion"),
        "The metadata.version level of the committed image.",
        f64::from(g.metadata_version_level),
    )?;
    gauge(
        enc,
        &format!("{l}currentcontrollerid"),
        "The active controller's id as the Raft layer knows it (-1: none).",
        f64::from(m.current_leader),
    )?;
    gauge(
        enc,
        &format!("{l}handleloadsnapshotcount"),
        "Snapshots loaded into the metadata image.",
        g.snapshot_loads as f64,
    )?;
    let s = "kafka_server_snapshotemitter_";
    gauge(
        enc,
        &format!("{s}latestsnapshotgeneratedbytes"),
        "Size of the last snapshot this node wrote (bytes).",
        m.latest_snapshot_bytes as f64,
    )?;
    gauge(
        enc,
        &format!("{s}latestsnapshotgeneratedagems"),
        "Milliseconds since this node last wrote a snapshot (since start before the first).",
        m.latest_snapshot_age_ms as f64,
    )?;
    let e = "kafka_controller_controllereventmanager_";
    histogram(
        enc,
        &format!("{e}eventqueuetimems"),
        "Time a controller request waited in the raft thread's queue (ms).",
        &[(Vec::new(), m.event_queue.clone())],
    )?;
    histogram(
        enc,
        &format!("{e}eventqueueprocessingtimems"),
        "Time spent handling a controller request (ms).",
        &[(Vec::new(), m.event_processing.clone())],
    )?;
    Ok(())
}
