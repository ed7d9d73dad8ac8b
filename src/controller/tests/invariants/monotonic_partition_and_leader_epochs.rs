//! monotonic_partition_and_leader_epochs: per partition, neither the partition epoch nor the
//! leader epoch ever goes back between two committed images of one node.

use crate::metadata::image::MetadataImage;

pub fn check(n: usize, prev: &MetadataImage, image: &MetadataImage) -> Result<(), String> {
    for (tid, t) in &image.topics {
        let Some(old_t) = prev.topics.get(tid) else {
            continue;
        };
        for (i, p) in &t.partitions {
            if let Some(old) = old_t.partitions.get(i) {
                if p.partition_epoch < old.partition_epoch || p.leader_epoch < old.leader_epoch {
                    return Err(format!(
                        "monotonic_partition_and_leader_epochs: node {n}: {}-{i} {old:?} → {p:?}",
                        t.name
                    ));
                }
            }
        }
    }
    Ok(())
}
