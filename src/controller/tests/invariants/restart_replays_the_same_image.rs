//! restart_replays_the_same_image: a node that replays the committed log (after a restart, or
//! simply to the same offset as its peers) holds the same image.

use crate::metadata::image::MetadataImage;

/// The parts of two images that replaying the same records must make equal.
pub fn same_image(a: &MetadataImage, b: &MetadataImage) -> bool {
    a.brokers == b.brokers
        && a.topics == b.topics
        && a.features == b.features
        && a.next_producer_id == b.next_producer_id
}
