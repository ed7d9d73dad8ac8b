//! broker_epochs_unique_and_increasing: in a committed image distinct brokers have distinct
//! epochs (each is the offset of its registration), and a broker's epoch never goes back.

use crate::metadata::image::MetadataImage;

/// Distinct epochs in `image`.
pub fn unique(n: usize, image: &MetadataImage) -> Result<(), String> {
    let mut epochs: Vec<i64> = image.brokers.values().map(|b| b.broker_epoch).collect();
    epochs.sort_unstable();
    let before = epochs.len();
    epochs.dedup();
    if epochs.len() != before {
        return Err(format!(
            "broker_epochs_unique: node {n}: {:?}",
            image.brokers
        ));
    }
    Ok(())
}

/// No broker's epoch went back from `prev` to `image`.
pub fn increasing(n: usize, prev: &MetadataImage, image: &MetadataImage) -> Result<(), String> {
    for (id, b) in &image.brokers {
        if prev
            .brokers
            .get(id)
            .is_some_and(|old| b.broker_epoch < old.broker_epoch)
        {
            return Err(format!("broker_epochs_increasing: node {n}: broker {id}"));
        }
    }
    Ok(())
}
