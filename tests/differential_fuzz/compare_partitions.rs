//! Normalisations for the steps of gen_partitions.rs (see compare.rs for the others).
//!
//! - ListPartitionReassignments of every partition: Kafka walks `reassigningTopics`, a
//!   `TimelineHashMap<Uuid, int[]>` keyed by topic id (`ReplicationControlManager
//!   .listPartitionReassignments`), so its topics come in the hash order of its random
//!   `Uuid`s, which changes from run to run; ferrokraft goes in its own topic-id order. The
//!   topics are compared sorted by name; each topic's partitions keep their order. A listing
//!   of named topics keeps the request's order on both sides and is compared as it is.

use ferrokraft::codec::ResponseBody;

use crate::gen::Step;
use crate::gen_partitions::PartStep;

/// The rendering of an answer this module normalises (None: compare.rs's rendering).
pub fn render(step: &Step, body: &ResponseBody) -> Option<String> {
    match (step, body) {
        (
            Step::Part(PartStep::ListReassignments { topics: None }),
            ResponseBody::ListPartitionReassignments(r),
        ) => {
            let mut r = r.clone();
            r.topics
                .sort_by(|a, b| a.name.0.as_str().cmp(b.name.0.as_str()));
            Some(format!("{r:?}"))
        }
        _ => None,
    }
}
