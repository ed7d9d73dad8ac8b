//! The iteration order of a `java.util.HashMap<String, _>`, for lists Kafka writes by
//! iterating one (a registration's listeners and features): buckets in ascending index, where
//! the index is the spread `String.hashCode()` masked by the table size; entries sharing a
//! bucket keep their insertion order (given here as the input order).

/// `String.hashCode()` over UTF-16 code units.
fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// `HashMap.hash`: the high half folded into the low half.
fn spread(h: i32) -> u32 {
    let h = h as u32;
    h ^ (h >> 16)
}

/// `HashMap.tableSizeFor`: the next power of two (at least 1).
fn table_size_for(n: usize) -> usize {
    n.max(1).next_power_of_two()
}

/// How the map was built, which fixes its table size.
#[derive(Debug, Clone, Copy)]
pub enum Built {
    /// `new HashMap<>()` then `put` each entry (table 16, doubled past 0.75 load).
    Default,
    /// `new HashMap<>(n)` then `put` each entry.
    WithCapacity,
    /// `new HashMap<>(otherMap)` (the copy constructor sizes for n / 0.75 + 1).
    Copy,
}

fn table_size(built: Built, n: usize) -> usize {
    let mut cap = match built {
        Built::Default => 16,
        Built::WithCapacity => table_size_for(n),
        Built::Copy => table_size_for((n as f64 / 0.75 + 1.0) as usize),
    };
    while n as f64 > cap as f64 * 0.75 {
        cap *= 2;
    }
    cap
}

/// Reorders `items` (keyed by `key`) as a Java HashMap built `built` from them in this order
/// iterates them.
pub fn java_hash_map_order<T>(items: &mut [T], built: Built, key: impl Fn(&T) -> &str) {
    let mask = table_size(built, items.len()) as u32 - 1;
    // A stable sort keeps the insertion order within a bucket.
    items.sort_by_key(|item| spread(java_string_hash(key(item))) & mask);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_hash_matches_java() {
        // Values of "…".hashCode() in Java.
        assert_eq!(java_string_hash(""), 0);
        assert_eq!(java_string_hash("a"), 97);
        assert_eq!(java_string_hash("metadata.version"), 1_098_778_905);
    }

    /// The feature order a Kafka 4.1.2 snapshot wrote for a broker registration (read from
    /// tests/kafka_metadata_log.rs's real run).
    #[test]
    fn registration_features_in_kafka_order() {
        let mut names = vec![
            "eligible.leader.replicas.version",
            "group.version",
            "kraft.version",
            "metadata.version",
            "share.version",
            "transaction.version",
        ];
        java_hash_map_order(&mut names, Built::Default, |s| s);
        assert_eq!(
            names,
            [
                "group.version",
                "kraft.version",
                "metadata.version",
                "share.version",
                "transaction.version",
                "eligible.leader.replicas.version"
            ]
        );
        assert_eq!(table_size(Built::Copy, 6), 16);
        assert_eq!(table_size(Built::Copy, 12), 32);
        assert_eq!(table_size(Built::Default, 12), 16);
        assert_eq!(table_size(Built::WithCapacity, 2), 4);
    }
}
