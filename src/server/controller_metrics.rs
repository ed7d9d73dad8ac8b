//! Kafka's controller metrics (`kafka.controller:type=KafkaController` and
//! `type=ControllerEventManager`), as the JMX exporter names them
//! (`kafka_controller_kafkacontroller_activecontrollercount`, …), computed from the
//! controller's images by the driver whenever the image moved.

use std::fmt::Write;

use crate::controller::QuorumController;

/// The controller gauges of one node.
#[derive(Debug, Clone, Default, PartialEq)]
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
    /// Average time of a controller call (ms) over the window.
    pub event_queue_processing_time_ms: f64,
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
            global_topic_count: image.topics.len(),
            last_applied_record_offset: image.next_offset - 1,
            last_committed_record_offset: committed.next_offset - 1,
            metadata_error_count: committed.refused_records + committed.undecodable_records,
            metadata_loaded: committed.metadata_version().is_some(),
            ..Default::default()
        };
        // Kept by replay: a metrics update costs nothing per partition.
        let stats = &image.partition_stats;
        g.global_partition_count = stats.partitions;
        g.offline_partitions_count = stats.offline;
        g.preferred_replica_imbalance_count = stats.imbalanced;
        g
    }

    /// Appends the Prometheus text of these gauges.
    pub fn render(&self, out: &mut String) {
        let k = "kafka_controller_kafkacontroller_";
        let rows: [(&str, &str, f64); 10] = [
            (
                "activecontrollercount",
                "1 on the active controller, else 0.",
                f64::from(self.active_controller_count),
            ),
            (
                "activebrokercount",
                "Registered brokers that are not fenced.",
                self.active_broker_count as f64,
            ),
            (
                "fencedbrokercount",
                "Registered brokers that are fenced.",
                self.fenced_broker_count as f64,
            ),
            (
                "globaltopiccount",
                "Topics in the cluster.",
                self.global_topic_count as f64,
            ),
            (
                "globalpartitioncount",
                "Partitions in the cluster.",
                self.global_partition_count as f64,
            ),
            (
                "offlinepartitionscount",
                "Partitions without a leader.",
                self.offline_partitions_count as f64,
            ),
            (
                "preferredreplicaimbalancecount",
                "Partitions not led by their preferred replica.",
                self.preferred_replica_imbalance_count as f64,
            ),
            (
                "lastappliedrecordoffset",
                "Offset of the last record applied by the controller.",
                self.last_applied_record_offset as f64,
            ),
            (
                "lastcommittedrecordoffset",
                "Offset of the last committed record replayed.",
                self.last_committed_record_offset as f64,
            ),
            (
                "metadataerrorcount",
                "Metadata records the controller could not apply.",
                self.metadata_error_count as f64,
            ),
        ];
        for (name, help, value) in rows {
            let _ = writeln!(out, "# HELP {k}{name} {help}");
            let _ = writeln!(out, "# TYPE {k}{name} gauge");
            let _ = writeln!(out, "{k}{name} {value}");
        }
        let e = "kafka_controller_controllereventmanager_eventqueueprocessingtimems";
        let _ = writeln!(
            out,
            "# HELP {e} Average time spent handling a controller event (ms)."
        );
        let _ = writeln!(out, "# TYPE {e} gauge");
        if self.event_queue_processing_time_ms.is_nan() {
            let _ = writeln!(out, "{e} NaN");
        } else {
            let _ = writeln!(out, "{e} {}", self.event_queue_processing_time_ms);
        }
    }
}
