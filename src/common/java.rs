//! The iteration order of a `java.util.HashMap<String, _>`, for lists Kafka writes by
//! iterating one (a registration's listeners and features): buckets in ascending index, where
//! the index is the spread `String.hashCode()` masked by the table size; entries sharing a
//! bucket keep their insertion order (given here as the input order); and how Java prints an
//! IP address, as Kafka's authorizer and logs see it.

/// `String.hashCode()` over UTF-16 code units.
pub fn java_string_hash(s: &str) -> i32 {
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
    /// `new HashMap<>(capacity)` with a capacity other than the entry count.
    Capacity(usize),
}

fn table_size(built: Built, n: usize) -> usize {
    let mut cap = match built {
        Built::Default => 16,
        Built::WithCapacity => table_size_for(n),
        Built::Copy => table_size_for((n as f64 / 0.75 + 1.0) as usize),
        Built::Capacity(capacity) => table_size_for(capacity),
    };
    while n as f64 > cap as f64 * 0.75 {
        cap *= 2;
    }
    cap
}

/// Reorders `items` (keyed by `key`) as a Java HashMap built `built` from them in this order
/// iterates them.
pub fn java_hash_map_order<T>(items: &mut [T], built: Built, key: impl Fn(&T) -> &str) {
    java_hash_map_order_by_hash(items, built, |item| java_string_hash(key(item)));
}

/// [`java_hash_map_order`] for keys whose Java `hashCode()` is given by `hash`.
pub fn java_hash_map_order_by_hash<T>(items: &mut [T], built: Built, hash: impl Fn(&T) -> i32) {
    let mask = table_size(built, items.len()) as u32 - 1;
    // A stable sort keeps the insertion order within a bucket.
    items.sort_by_key(|item| spread(hash(item)) & mask);
}

/// Kafka's `BaseHashTable.findSlot`: Fibonacci hashing of `hash`, the top bits that index a
/// table of `table_len` (a power of two) slots.
fn timeline_slot(hash: i32, table_len: usize) -> u64 {
    let log2size = 32 - (table_len as u32).leading_zeros();
    let shift = 65 - log2size;
    (i64::from(hash).wrapping_mul(-7_046_029_254_386_353_131) as u64) >> shift
}

/// The table length of a Kafka `TimelineHashMap`/`TimelineHashSet` created with expected
/// size 0 after `n` insertions: 2 slots, doubled whenever one more entry would pass a 0.75
/// load.
fn timeline_table_len(n: usize) -> usize {
    let mut len = 2usize;
    for size in 0..n {
        if (size + 1) as f64 * 0.75 > len as f64 {
            len *= 2;
        }
    }
    len
}

/// Reorders `items` as a Kafka `TimelineHashMap` (or set) created empty and filled with them
/// in this order iterates them: slot by slot, the entries sharing a slot last inserted first
/// (a slot keeps insertion order, rehashes too, and the iterator pops each slot's list from
/// its end). Removals are not modelled: a table that once held more entries is larger.
pub fn timeline_hash_order<T>(items: &mut [T], hash: impl Fn(&T) -> i32) {
    order_in_table(items, hash, timeline_table_len(items.len()));
}

/// [`timeline_hash_order`] for a map that was also `put` to (an entry replaced) after its
/// last insertion: `BaseHashTable.baseAddOrReplace` checks the load for one more entry before
/// it looks for the key, so a replacement in a full table doubles it as an insertion would
/// (Kafka 4.1.2: partitions 0-4 of a topic iterate 2,0,4,1,3, and 0,2,4,1,3 once one of them
/// changed).
pub fn timeline_hash_order_put_after<T>(items: &mut [T], hash: impl Fn(&T) -> i32) {
    order_in_table(items, hash, timeline_table_len(items.len() + 1));
}

fn order_in_table<T>(items: &mut [T], hash: impl Fn(&T) -> i32, len: usize) {
    // Reversed, then a stable sort: within a slot, the last inserted first.
    items.reverse();
    items.sort_by_key(|item| timeline_slot(hash(item), len));
}

/// A Kafka `TimelineHashMap` (or set) keyed by `Integer`, as far as its current iteration
/// order goes, kept by replaying its `put`s and `remove`s: `BaseHashTable.baseAddOrReplace`
/// doubles the table when one more entry would pass a 0.75 load (checked before it looks
/// for the key, so a replacement in a full table doubles it too), a key new to its slot goes
/// to the slot's end, a replaced one keeps its place, a removal never shrinks the table, a
/// rehash moves the slots' entries in slot order; the iterator (`CurrentIterator`) goes slot
/// by slot and pops each slot's entries from its end.
#[derive(Debug, Clone)]
pub struct TimelineTable {
    slots: Vec<Vec<i32>>,
    size: usize,
}

impl Default for TimelineTable {
    /// `new TimelineHashMap<>(registry, 0)`: 2 slots.
    fn default() -> Self {
        TimelineTable {
            slots: vec![Vec::new(); 2],
            size: 0,
        }
    }
}

impl TimelineTable {
    /// `put(key, …)`, a new key or a replaced one.
    pub fn put(&mut self, key: i32) {
        if (self.size + 1) as f64 * 0.75 > self.slots.len() as f64 {
            let len = self.slots.len() * 2;
            let old = std::mem::replace(&mut self.slots, vec![Vec::new(); len]);
            for k in old.into_iter().flatten() {
                let s = timeline_slot(k, len) as usize;
                self.slots[s].push(k);
            }
        }
        let s = timeline_slot(key, self.slots.len()) as usize;
        if !self.slots[s].contains(&key) {
            self.slots[s].push(key);
            self.size += 1;
        }
    }

    /// `remove(key)`.
    pub fn remove(&mut self, key: i32) {
        let s = timeline_slot(key, self.slots.len()) as usize;
        if let Some(i) = self.slots[s].iter().position(|k| *k == key) {
            self.slots[s].remove(i);
            self.size -= 1;
        }
    }

    /// The keys in iteration order.
    pub fn keys(&self) -> Vec<i32> {
        self.slots
            .iter()
            .flat_map(|slot| slot.iter().rev().copied())
            .collect()
    }
}

/// Java's `InetAddress.getHostAddress`: dotted IPv4 (an IPv4-mapped IPv6 address too, as Java
/// makes it an Inet4Address), IPv6 as eight uncompressed hex groups.
pub fn java_host_address(ip: std::net::IpAddr) -> String {
    match ip {
        std::net::IpAddr::V4(v4) => v4.to_string(),
        std::net::IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => v6
                .segments()
                .iter()
                .map(|s| format!("{s:x}"))
                .collect::<Vec<_>>()
                .join(":"),
        },
    }
}

/// How Scala prints an immutable `Set[Int]` built from `ids` in that order (Kafka's
/// `KafkaConfig` messages print `javaSet.asScala.toSet`): up to four elements Scala keeps
/// them in insertion order (`Set(1000, 17, 2)`); from five on the set is a CHAMP `HashSet`,
/// iterated by the bits of each element's improved hash, five at a time from the lowest:
/// a trie node's single entries in bit order, then its sub-nodes in bit order
/// (`HashSet(5, 1, 6, 2, 7, 3)` for 1, 2, 3, 5, 6, 7). Both checked against Kafka 4.1.2.
pub fn scala_int_set_string(ids: &[i32]) -> String {
    let mut unique: Vec<i32> = Vec::new();
    for id in ids {
        if !unique.contains(id) {
            unique.push(*id);
        }
    }
    let (name, ordered) = if unique.len() <= 4 {
        ("Set", unique)
    } else {
        ("HashSet", champ_order(unique, 0))
    };
    let items: Vec<String> = ordered.iter().map(i32::to_string).collect();
    format!("{name}({})", items.join(", "))
}

/// Scala 2.13's `Hashing.improve` of an `Int`'s hash code (the int itself).
fn scala_improve(hcode: i32) -> u32 {
    let mut h = hcode.wrapping_add(!(hcode << 9));
    h ^= ((h as u32) >> 14) as i32;
    h = h.wrapping_add(h << 4);
    (h ^ ((h as u32) >> 10) as i32) as u32
}

/// The iteration order of a CHAMP trie node holding `elems` at bit `shift`.
fn champ_order(elems: Vec<i32>, shift: u32) -> Vec<i32> {
    let mut by_fragment: std::collections::BTreeMap<u32, Vec<i32>> = Default::default();
    for e in elems {
        let fragment = if shift >= 32 {
            0
        } else {
            (scala_improve(e) >> shift) & 31
        };
        by_fragment.entry(fragment).or_default().push(e);
    }
    let mut out: Vec<i32> = by_fragment
        .values()
        .filter(|g| g.len() == 1)
        .map(|g| g[0])
        .collect();
    for group in by_fragment.into_values().filter(|g| g.len() > 1) {
        if shift >= 32 {
            // Full hash collision: Scala keeps such elements in a collision node, in order.
            out.extend(group);
        } else {
            out.extend(champ_order(group, shift + 5));
        }
    }
    out
}

/// Java's `Double.toString`: plain decimals with at least one fractional digit for
/// 10^-3 <= |x| < 10^7, else `d.dddE±n`; the shortest digits that read back as `x`.
pub fn java_double_string(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0.0" } else { "0.0" }.to_string();
    }
    let a = x.abs();
    if (1e-3..1e7).contains(&a) {
        let s = format!("{x}");
        return if s.contains('.') { s } else { format!("{s}.0") };
    }
    // Rust's `{:e}` gives the shortest digits as `d.ddde<n>`.
    let s = format!("{x:e}");
    let (mantissa, exponent) = s.split_once('e').unwrap_or((s.as_str(), "0"));
    let mantissa = if mantissa.contains('.') {
        mantissa.to_string()
    } else {
        format!("{mantissa}.0")
    };
    format!("{mantissa}E{exponent}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_as_java_prints_them() {
        for (x, java) in [
            (0.5, "0.5"),
            (1.0, "1.0"),
            (0.8, "0.8"),
            (0.001, "0.001"),
            (1.0e-4, "1.0E-4"),
            (1.0e7, "1.0E7"),
            (9_999_999.0, "9999999.0"),
            (f64::MAX, "1.7976931348623157E308"),
            (-2.5e-5, "-2.5E-5"),
        ] {
            assert_eq!(java_double_string(x), java, "{x}");
        }
    }

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

    /// Orders printed by Kafka 4.1.2's own `TimelineHashMap` (a `SnapshotRegistry`-backed map
    /// created with expected size 0) filled in the input order.
    #[test]
    fn timeline_hash_order_matches_kafka() {
        let mut names = vec![
            "foo",
            "bar",
            "baz",
            "__consumer_offsets",
            "t0",
            "t1",
            "t2",
            "t3",
            "t4",
            "t5",
            "t6",
            "t7",
            "t8",
            "t9",
            "orders",
            "payments",
        ];
        timeline_hash_order(&mut names, |n| java_string_hash(n));
        assert_eq!(
            names.join(","),
            "t8,baz,t0,bar,foo,t5,__consumer_offsets,t2,t7,orders,t4,t9,t1,t6,payments,t3"
        );
        let ids = |n: i32| {
            let mut v: Vec<i32> = (0..n).collect();
            timeline_hash_order(&mut v, |i| *i);
            v
        };
        let put_after = |n: i32| {
            let mut v: Vec<i32> = (0..n).collect();
            timeline_hash_order_put_after(&mut v, |i| *i);
            v
        };
        // Printed by Kafka 4.1.2 after `put(0, ...)` on the filled map.
        assert_eq!(put_after(1), [0]);
        assert_eq!(put_after(3), [2, 0, 1]);
        assert_eq!(put_after(5), [0, 2, 4, 1, 3]);
        assert_eq!(put_after(6), [5, 0, 2, 4, 1, 3]);
        assert_eq!(put_after(12), [0, 5, 10, 2, 7, 4, 9, 1, 6, 11, 3, 8]);
        assert_eq!(ids(1), [0]);
        assert_eq!(ids(3), [2, 0, 1]);
        assert_eq!(ids(5), [2, 0, 4, 1, 3]);
        assert_eq!(ids(12), [0, 5, 10, 2, 7, 4, 9, 1, 6, 11, 3, 8]);
        assert_eq!(
            ids(40),
            [
                34, 0, 13, 26, 5, 39, 18, 31, 10, 23, 36, 2, 15, 28, 7, 20, 33, 12, 25, 38, 4, 17,
                30, 9, 22, 1, 35, 14, 27, 6, 19, 32, 11, 24, 37, 3, 16, 29, 8, 21
            ]
        );
    }
}

#[cfg(test)]
mod host_address_tests {
    use super::java_host_address;

    #[test]
    fn java_host_address_matches_get_host_address() {
        use std::net::{Ipv4Addr, Ipv6Addr};
        assert_eq!(
            java_host_address(Ipv4Addr::new(10, 0, 0, 1).into()),
            "10.0.0.1"
        );
        assert_eq!(
            java_host_address(Ipv6Addr::LOCALHOST.into()),
            "0:0:0:0:0:0:0:1"
        );
        assert_eq!(
            java_host_address("fe80::1:abcd".parse().expect("ip")),
            "fe80:0:0:0:0:0:1:abcd"
        );
        assert_eq!(
            java_host_address("::ffff:192.168.1.2".parse().expect("ip")),
            "192.168.1.2"
        );
    }
}

#[cfg(test)]
mod scala_set_tests {
    use super::scala_int_set_string;

    /// What Kafka 4.1.2 printed for these `controller.quorum.voters` (kafka.Kafka refusing a
    /// node id outside them).
    #[test]
    fn sets_print_as_scala_prints_them() {
        assert_eq!(scala_int_set_string(&[1, 2, 3]), "Set(1, 2, 3)");
        assert_eq!(scala_int_set_string(&[1000, 17, 2]), "Set(1000, 17, 2)");
        assert_eq!(
            scala_int_set_string(&[1, 2, 3, 4, 5]),
            "HashSet(5, 1, 2, 3, 4)"
        );
        assert_eq!(
            scala_int_set_string(&[1, 2, 3, 5, 6, 7]),
            "HashSet(5, 1, 6, 2, 7, 3)"
        );
        assert_eq!(
            scala_int_set_string(&[100, 200, 300, 400, 500, 33, 1000]),
            "HashSet(500, 33, 1000, 300, 400, 200, 100)"
        );
    }
}

#[cfg(test)]
mod timeline_table_tests {
    use super::TimelineTable;

    fn run(ops: &str) -> Vec<i32> {
        let mut t = TimelineTable::default();
        for op in ops.split_whitespace() {
            let k: i32 = op[1..].parse().unwrap();
            if op.starts_with('+') {
                t.put(k)
            } else {
                t.remove(k)
            }
        }
        t.keys()
    }

    /// Orders printed by Kafka 4.1.2's own `TimelineHashMap<Integer, Integer>` (created with
    /// expected size 0) after these puts (+) and removes (-); the model agreed on 500 random
    /// such sequences.
    #[test]
    fn timeline_table_iterates_as_kafkas_timeline_hash_map() {
        assert_eq!(
            run("+35 +6 +3 +4 +29 +16 +4 +37 +21 +1 -3 -31 +10 -2 +2 +3 +6 -38"),
            vec![10, 2, 4, 1, 35, 6, 3, 37, 16, 29, 21]
        );
        assert_eq!(
            run("+21 +5 -7 +14 +39 +4 +3 +4 +34 +37 -27 +4 +2"),
            vec![34, 39, 5, 2, 4, 14, 37, 3, 21]
        );
        assert_eq!(run("-5 +1 +9 +4 +5 +4 -5 -4 +5 +39 +2 +2 +8 +2 -25 -34 +2 +5 -22 +30 -5 +40 +5 +4 +10 +8"), vec![5, 39, 10, 2, 4, 30, 9, 1, 40, 8]);
        // 1 and 3 share a slot of the first 2-slot table (the last put first); a put that
        // replaces an entry of a full table doubles it, which parts them (Kafka 4.1.2).
        assert_eq!(run("+1 +2"), vec![2, 1]);
        assert_eq!(run("+1 +3"), vec![3, 1]);
        assert_eq!(run("+1 +3 +1"), vec![1, 3]);
        assert_eq!(run("+1 +2 -2 +3"), vec![3, 1]);
    }
}
