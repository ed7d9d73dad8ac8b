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

/// Writes the index of each of `dirs` into `words` (as long), giving one on first sight; an
/// index is a 32-bit word stored as an `i32` beside broker ids (`as` keeps its bits both
/// ways).
pub(super) fn intern_into(dirs: &[Uuid], words: &mut [i32]) {
    debug_assert_eq!(dirs.len(), words.len());
    if dirs.is_empty() {
        return;
    }
    {
        let table = TABLE.read().unwrap_or_else(PoisonError::into_inner);
        if let Some(t) = table.as_ref() {
            let mut known = 0;
            for (d, w) in dirs.iter().zip(words.iter_mut()) {
                let Some(i) = t.index.get(d) else { break };
                *w = *i as i32;
                known += 1;
            }
            if known == dirs.len() {
                return;
            }
        }
    }
    let mut table = TABLE.write().unwrap_or_else(PoisonError::into_inner);
    let t = table.get_or_insert_with(Table::default);
    for (d, w) in dirs.iter().zip(words.iter_mut()) {
        let next = t.ids.len() as u32;
        let i = *t.index.entry(*d).or_insert(next);
        if i == next {
            t.ids.push(*d);
        }
        *w = i as i32;
    }
}

/// The Uuids of indexes [`intern_into`] gave.
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
            // Only intern_into makes words, so every one names an entry.
            debug_assert!(id.is_some(), "directory index {w} was never given");
            id.unwrap_or_default()
        })
        .collect()
}

/// The Uuid of one index [`intern_into`] gave (a leader check asks for one replica's).
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
        let mut first = [0; 3];
        intern_into(&[a, b, a], &mut first);
        assert_eq!(first[0], first[2]);
        assert_ne!(first[0], first[1]);
        let mut again = [0; 1];
        intern_into(&[b], &mut again);
        assert_eq!(again, [first[1]]);
        assert_eq!(resolve(&first), vec![a, b, a]);
        assert_eq!(resolve_one(first[1]), Some(b));
    }
}
