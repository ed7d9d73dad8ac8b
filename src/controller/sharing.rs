//! Topics held once again after their records commit.
//!
//! The active controller's speculative image starts as a copy of the committed one that
//! shares every topic; a write copies the topics it changes (and, inside them, the partitions
//! it changes), and a new topic is built in both images from the same records, once when it is
//! written and once when it commits. Without this, a leader would hold every topic it created
//! or changed twice for as long as it leads.
//!
//! ```text
//!   written record (Topic, Partition, PartitionChange) at offset o ─▶ (o, topic id) queued
//!   committed image past o ─▶ speculative image takes the committed image's topic if equal
//!                             (not equal: a later write changed it; its own entry comes later)
//! ```
//!
//! The comparison keeps this safe whatever the queue holds: a topic is only ever replaced
//! by an equal value, so the speculative image's state never changes here.

use std::collections::VecDeque;

use uuid::Uuid;

use crate::metadata::image::MetadataImage;
use crate::metadata::record::MetadataRecord;

/// The topics this epoch wrote, in offset order, waiting for their records to commit.
#[derive(Debug, Default)]
pub(super) struct TopicSharing {
    /// (offset of the last record written for the topic, topic id); consecutive records of
    /// one topic are one entry.
    written: VecDeque<(i64, Uuid)>,
}

impl TopicSharing {
    /// Notes a record written at `offset`: a topic's partitions, or the topic itself.
    pub(super) fn written(&mut self, offset: i64, record: &MetadataRecord) {
        let topic_id = match record {
            MetadataRecord::Topic(r) => r.topic_id,
            MetadataRecord::Partition(r) => r.topic_id,
            MetadataRecord::PartitionChange(r) => r.topic_id,
            // A removed topic is in neither image once committed; ClearElr (a downgrade of
            // eligible.leader.replicas.version) leaves its topics copied until their next change.
            _ => return,
        };
        match self.written.back_mut() {
            Some(last) if last.1 == topic_id => last.0 = offset,
            _ => self.written.push_back((offset, topic_id)),
        }
    }

    /// Shares with `committed` every queued topic whose records it has replayed.
    pub(super) fn share_committed(
        &mut self,
        speculative: &mut MetadataImage,
        committed: &MetadataImage,
    ) {
        // Records inside an open transaction wait for its end to reach the image.
        if committed.open_transaction.is_some() {
            return;
        }
        while let Some(&(offset, topic_id)) = self.written.front() {
            if offset >= committed.next_offset {
                break;
            }
            self.written.pop_front();
            speculative.share_topic_with(committed, topic_id);
        }
    }
}
