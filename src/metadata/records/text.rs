//! Records as Kafka's log lines show them: the generated `toString` form
//! (`TopicRecord(name='foo', topicId=AAAAAAAAAAAAAAAAAAAAAQ)`), fields in declaration order,
//! built by each field's `Field::to_kafka_string`.

use super::{max_version, MetadataRecord};
use crate::metadata::field::Field;

impl MetadataRecord {
    /// The record as Kafka's controller logs it (at the highest version known).
    pub fn to_kafka_string(&self) -> String {
        let mut out = String::new();
        let version = max_version(self.api_key()).unwrap_or(0);
        self.body_kafka_string(version, &mut out);
        out
    }
}

/// Renders any field value (for the variant dispatch in `records/mod.rs`).
pub(super) fn field_kafka_string(f: &impl Field, version: u16, out: &mut String) {
    f.to_kafka_string(version, out);
}

#[cfg(test)]
mod tests {
    use super::super::{FenceBrokerRecord, PartitionRecord, TopicRecord};
    use super::*;

    #[test]
    fn records_read_as_kafka_logs_them() {
        let topic = MetadataRecord::Topic(TopicRecord {
            name: "orders".into(),
            topic_id: uuid::Uuid::from_u128(1),
            ..Default::default()
        });
        assert_eq!(
            topic.to_kafka_string(),
            "TopicRecord(name='orders', topicId=AAAAAAAAAAAAAAAAAAAAAQ)"
        );
        let fence = MetadataRecord::FenceBroker(FenceBrokerRecord {
            id: 3,
            epoch: 7,
            ..Default::default()
        });
        assert_eq!(fence.to_kafka_string(), "FenceBrokerRecord(id=3, epoch=7)");
        let partition = MetadataRecord::Partition(PartitionRecord {
            partition_id: 0,
            replicas: vec![1, 2],
            isr: vec![1],
            leader: 1,
            eligible_leader_replicas: None,
            ..Default::default()
        });
        let text = partition.to_kafka_string();
        assert!(
            text.starts_with("PartitionRecord(partitionId=0, topicId=AAAAAAAAAAAAAAAAAAAAAA, replicas=[1, 2], isr=[1], removingReplicas=[], addingReplicas=[], leader=1,"),
            "{text}"
        );
        assert!(text.contains("eligibleLeaderReplicas=null"), "{text}");
    }
}
