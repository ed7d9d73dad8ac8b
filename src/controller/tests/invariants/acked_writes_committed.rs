//! acked_writes_committed (as Kafka's QuorumControllerIntegrationTest asserts of every
//! completed write): the records behind every success reply are in the committed log.

use std::collections::BTreeSet;

use uuid::Uuid;

use crate::metadata::record::MetadataRecord;
use crate::records::framer::BatchFramer;

/// What a success reply promised, checked against the committed log.
#[derive(Debug, Clone)]
pub enum Promise {
    Registered { broker: i32, epoch: i64 },
    Topic(Uuid),
    TopicRemoved(Uuid),
    ProducerIds { next: i64 },
}

/// What a committed log holds, as far as promises go.
#[derive(Debug, Default)]
pub struct CommittedIndex {
    registrations: BTreeSet<(i32, i64)>,
    topics: BTreeSet<Uuid>,
    removed_topics: BTreeSet<Uuid>,
    producer_ids: BTreeSet<i64>,
}

impl CommittedIndex {
    /// Adds the metadata records of `batches` (whole batches back to back).
    pub fn add_batches(&mut self, batches: &[u8]) {
        for (_, batch) in BatchFramer::trusted(batches) {
            if batch.is_control() {
                continue;
            }
            for r in batch.records().flatten() {
                match MetadataRecord::decode(r.value) {
                    Ok(MetadataRecord::RegisterBroker(b)) => {
                        self.registrations.insert((b.broker_id, b.broker_epoch));
                    }
                    Ok(MetadataRecord::Topic(t)) => {
                        self.topics.insert(t.topic_id);
                    }
                    Ok(MetadataRecord::RemoveTopic(t)) => {
                        self.removed_topics.insert(t.topic_id);
                    }
                    Ok(MetadataRecord::ProducerIds(p)) => {
                        self.producer_ids.insert(p.next_producer_id);
                    }
                    _ => {}
                }
            }
        }
    }

    /// The promise's records are in this committed log.
    pub fn holds(&self, promise: &Promise) -> bool {
        match promise {
            Promise::Registered { broker, epoch } => {
                self.registrations.contains(&(*broker, *epoch))
            }
            Promise::Topic(id) => self.topics.contains(id),
            Promise::TopicRemoved(id) => self.removed_topics.contains(id),
            Promise::ProducerIds { next } => self.producer_ids.contains(next),
        }
    }
}
