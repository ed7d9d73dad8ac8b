//! Log directory ids held once for the process: a partition keeps a 4-byte index per replica
//! instead of the 16-byte Uuid, which every partition in that directory repeats (a broker has
//! a few directories and holds thousands of partitions).
//!
//! The table only grows: an index, once given, names its Uuid for the life of the process,
//! so two partitions compare equal exactly when their directories do, whichever image (or
//! simulated node) packed them. It holds every directory id this process has seen, a few
//! per broker; nothing of it is part of any image's value.

use std::collections::HashMap;
use std::sync::{PoisonError, RwLock};

use uuid::Uuid;

#[derive(Default)]
struct Table {
    ids: Vec<Uuid>,
    index: HashMap<Uuid, u32>,
}

static TABLE: RwLock<Option<Table>> = RwLock::new(None);

/// The index of each of `dirs`, given one on first sight; an index is a 32-bit word stored as
/// an `i32` beside broker ids (`as` keeps its bits both ways).
pub(super) fn intern(dirs: &[Uuid]) -> Vec<i32> {
    if dirs.is_empty() {
        return Vec::new();
    }
    {
        let table = TABLE.read().unwrap_or_else(PoisonError::into_inner);
        if let Some(t) = table.as_ref() {
            let known: Option<Vec<i32>> = dirs
                .iter()
                .map(|d| t.index.get(d).map(|i| *i as i32))
                .collect();
            if let Some(known) = known {
                return known;
            }
        }
    }
    let mut table = TABLE.write().unwrap_or_else(PoisonError::into_inner);
    let t = table.get_or_insert_with(Table::default);
    dirs.iter()
        .map(|d| {
            let next = t.ids.len() as u32;
            let i = *t.index.entry(*d).or_insert(next);
            if i == next {
                t.ids.push(*d);
            }
            i as i32
        })
        .collect()
}

/// The Uuids of indexes [`intern`] gave.
pub(super) fn resolve(words: &[i32]) -> Vec<Uuid> {
    if words.is_empty() {
        return Vec::new();
    }
    let table = TABLE.read().unwrap_or_else(PoisonError::into_inner);
    let ids = table.as_ref().map_or(&[][..], |t| t.ids.as_slice());
    words
        .iter()
        .map(|w| {
            let id = ids.get(*w as u32 as usize).copied();
            // Only intern makes words, so every one names an entry.
            debug_assert!(id.is_some(), "directory index {w} was never given");
            id.unwrap_or_default()
        })
        .collect()
}

/// The Uuid of one index [`intern`] gave (a leader check asks for one replica's).
pub(super) fn resolve_one(word: i32) -> Option<Uuid> {
    let table = TABLE.read().unwrap_or_else(PoisonError::into_inner);
    let id = table.as_ref()?.ids.get(word as u32 as usize).copied();
    debug_assert!(id.is_some(), "directory index {word} was never given");
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_keeps_its_index_and_resolves_back() {
        let a = Uuid::from_u128(0xfeed_0001);
        let b = Uuid::from_u128(0xfeed_0002);
        let first = intern(&[a, b, a]);
        assert_eq!(first[0], first[2]);
        assert_ne!(first[0], first[1]);
        assert_eq!(intern(&[b]), vec![first[1]]);
        assert_eq!(resolve(&first), vec![a, b, a]);
        assert_eq!(resolve_one(first[1]), Some(b));
    }
}
