//! Which of several unknown GROUP keys a release's controller names: the first its Java map
//! iterates. Kafka checks the names by walking the config's key set, and the map is a
//! `Properties` (a `ConcurrentHashMap`) in 4.0–4.2, a `HashMap` in 4.3 and 4.4, so the order
//! is the bucket order: `String.hashCode` spread over the table (`h ^ h >>> 16`) and masked
//! by its capacity, which follows how many entries the map holds and how it was filled.
//!
//! ```text
//!   4.0–4.2  Properties(): the consumer group's 2 broker defaults, then the group's config
//!   4.3      HashMap(): 11 broker defaults (putAll), then the group's config (putAll)
//!   4.4      HashMap(): the group's config, one put at a time
//! ```
//!
//! Keys in one bucket keep their insertion order in Java; here they fall back to name order
//! (the config reaches Kafka through other hash maps, and such ties need two unknown keys in
//! one of 16 or more buckets).

use std::collections::BTreeMap;

use crate::common::release::Release;

/// The broker-level group configs a release puts in the map before the group's own.
fn broker_defaults(release: Release) -> &'static [&'static str] {
    match release {
        Release::Kafka4_0 | Release::Kafka4_1 | Release::Kafka4_2 => &[
            "consumer.heartbeat.interval.ms",
            "consumer.session.timeout.ms",
        ],
        Release::Kafka4_3 => &[
            "consumer.session.timeout.ms",
            "consumer.heartbeat.interval.ms",
            "share.session.timeout.ms",
            "share.heartbeat.interval.ms",
            "share.record.lock.duration.ms",
            "share.delivery.count.limit",
            "share.partition.max.record.locks",
            "streams.session.timeout.ms",
            "streams.heartbeat.interval.ms",
            "streams.num.standby.replicas",
            "streams.initial.rebalance.delay.ms",
        ],
        Release::Kafka4_4 => &[],
    }
}

/// Java's `String.hashCode` (over UTF-16 code units).
fn java_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0_i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// The bucket of `key` in a table of `capacity` (a power of two).
fn bucket(key: &str, capacity: usize) -> usize {
    let h = java_hash(key) as u32;
    let spread = (h ^ (h >> 16)) & 0x7fff_ffff;
    spread as usize & (capacity - 1)
}

/// Java's `tableSizeFor`: the power of two at or above `n` (at least 1).
fn table_size_for(n: usize) -> usize {
    n.max(1).next_power_of_two()
}

/// The capacity of a `ConcurrentHashMap(8)` after `putAll` of `first` entries, then `putAll`
/// of a map of `second` entries of which `added` are new.
fn concurrent_capacity(first: usize, second: usize, added: usize) -> usize {
    // new ConcurrentHashMap(8): sizeCtl = tableSizeFor(8 + 4 + 1).
    let mut n = table_size_for(13);
    let presize = |size: usize, n: &mut usize| {
        let c = table_size_for(size + (size >> 1) + 1);
        while c > *n - (*n >> 2) {
            *n *= 2;
        }
    };
    presize(first, &mut n);
    let mut count = 0;
    for _ in 0..first {
        count += 1;
        if count >= n - (n >> 2) {
            n *= 2;
        }
    }
    presize(second, &mut n);
    for _ in 0..added {
        count += 1;
        if count >= n - (n >> 2) {
            n *= 2;
        }
    }
    n
}

/// The capacity of a `HashMap()` after `putAll` of `first` entries (none: the table comes
/// with the first put), then `added` new entries (by `putAll` of `second` when `first` > 0).
fn hash_map_capacity(first: usize, second: usize, added: usize) -> usize {
    let mut cap = if first > 0 {
        // putMapEntries on an empty map: threshold = tableSizeFor(s / 0.75 + 1).
        table_size_for(first * 4 / 3 + 1)
    } else {
        16
    };
    let mut size = 0;
    for _ in 0..first {
        size += 1;
        if size > cap * 3 / 4 {
            cap *= 2;
        }
    }
    if first > 0 {
        while second > cap * 3 / 4 {
            cap *= 2;
        }
    }
    for _ in 0..added {
        size += 1;
        if size > cap * 3 / 4 {
            cap *= 2;
        }
    }
    cap
}

/// The first key of `all` that `unknown` picks, in the iteration order of the map `release`
/// checks the names of.
pub(super) fn first(
    release: Release,
    all: &BTreeMap<String, String>,
    unknown: impl Fn(&str) -> bool,
) -> Option<&String> {
    let defaults = broker_defaults(release);
    // The group's keys that are not broker defaults are the entries it adds.
    let added = all
        .keys()
        .filter(|k| !defaults.contains(&k.as_str()))
        .count();
    let capacity = match release {
        Release::Kafka4_0 | Release::Kafka4_1 | Release::Kafka4_2 => {
            concurrent_capacity(defaults.len(), all.len(), added)
        }
        Release::Kafka4_3 => hash_map_capacity(defaults.len(), all.len(), added),
        Release::Kafka4_4 => hash_map_capacity(0, all.len(), added),
    };
    all.keys()
        .filter(|k| unknown(k))
        .enumerate()
        .min_by_key(|(i, k)| (bucket(k, capacity), *i))
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_string_hashes() {
        // "".hashCode() == 0, "a".hashCode() == 97, "hello".hashCode() == 99162322.
        assert_eq!(java_hash(""), 0);
        assert_eq!(java_hash("a"), 97);
        assert_eq!(java_hash("hello"), 99_162_322);
        // Overflows wrap as Java's int does: "polygenelubricants".hashCode() == MIN_VALUE.
        assert_eq!(java_hash("polygenelubricants"), i32::MIN);
    }

    #[test]
    fn capacities_grow_as_java_maps_do() {
        // 4.4: a HashMap filled one put at a time doubles past 12, then 24 entries.
        assert_eq!(hash_map_capacity(0, 12, 12), 16);
        assert_eq!(hash_map_capacity(0, 13, 13), 32);
        assert_eq!(hash_map_capacity(0, 25, 25), 64);
        // 4.3: 11 defaults fit 16 buckets; a 13-key putAll doubles first.
        assert_eq!(hash_map_capacity(11, 1, 1), 16);
        assert_eq!(hash_map_capacity(11, 2, 2), 32);
        assert_eq!(hash_map_capacity(11, 13, 2), 32);
        // 4.0–4.2: Properties() holds 11 entries in 16 buckets.
        assert_eq!(concurrent_capacity(2, 2, 2), 16);
        assert_eq!(concurrent_capacity(2, 9, 9), 32);
    }
}
