//! no_leader_fenced: once a broker's fencing is committed, no committed partition names it
//! leader (Kafka fences and moves leaderships in one atomic batch).

use crate::metadata::image::MetadataImage;

pub fn check(n: usize, image: &MetadataImage) -> Result<(), String> {
    for t in image.topics.values() {
        for (i, p) in &t.partitions {
            if p.leader >= 0 && image.brokers.get(&p.leader).is_none_or(|b| b.fenced) {
                return Err(format!("no_leader_fenced: node {n}: {}-{i} {p:?}", t.name));
            }
        }
    }
    Ok(())
}
