//! ferrokraft patch: a per-thread budget for the memory a decode may allocate.
//!
//! Legal frames made of many minimal array elements decode into structs tens of times their
//! wire size. The caller opens a budget with [`with_budget`]; every array decoder charges the
//! capacity it allocates (elements times their in-memory size) and every unknown tagged field
//! charges a map entry, and the decode fails with a normal error once the budget is spent, so
//! memory is refused before it is allocated. Outside [`with_budget`] nothing is charged.
use std::cell::Cell;

use anyhow::{bail, Result};

/// What one unknown tagged field costs at most: a B-tree leaf node of `(i32, Bytes)` entries,
/// charged in full for each insertion (an upper bound; legitimate requests carry none).
pub const TAGGED_FIELD_BYTES: usize = 512;

thread_local! {
    /// `Some(bytes left)` while a budget is open on this thread.
    static REMAINING: Cell<Option<usize>> = const { Cell::new(None) };
    /// Whether the open budget ran out.
    static EXHAUSTED: Cell<bool> = const { Cell::new(false) };
}

/// The outcome of a decode run under a budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetUse {
    /// Bytes charged (up to the budget).
    pub charged_bytes: usize,
    /// Whether a charge was refused (the decode then failed).
    pub exhausted: bool,
}

/// Runs `decode` with at most `budget_bytes` of charged allocations; budgets do not nest (an
/// inner call replaces the outer budget for its duration and restores it after).
pub fn with_budget<R>(budget_bytes: usize, decode: impl FnOnce() -> R) -> (R, BudgetUse) {
    let saved = (REMAINING.with(Cell::get), EXHAUSTED.with(Cell::get));
    REMAINING.with(|r| r.set(Some(budget_bytes)));
    EXHAUSTED.with(|e| e.set(false));
    let result = decode();
    let left = REMAINING.with(Cell::get).unwrap_or(0);
    let used = BudgetUse {
        charged_bytes: budget_bytes.saturating_sub(left),
        exhausted: EXHAUSTED.with(Cell::get),
    };
    REMAINING.with(|r| r.set(saved.0));
    EXHAUSTED.with(|e| e.set(saved.1));
    (result, used)
}

/// Charges `bytes` against the open budget, failing once it is spent.
pub fn charge(bytes: usize) -> Result<()> {
    let Some(left) = REMAINING.with(Cell::get) else {
        return Ok(());
    };
    match left.checked_sub(bytes) {
        Some(rest) => {
            REMAINING.with(|r| r.set(Some(rest)));
            Ok(())
        }
        None => {
            REMAINING.with(|r| r.set(Some(0)));
            EXHAUSTED.with(|e| e.set(true));
            bail!("decoded request would exceed its memory budget ({bytes} more bytes, {left} left)")
        }
    }
}

/// What the allocator adds to each allocation (glibc's chunk header, rounded up).
pub const ALLOCATION_OVERHEAD_BYTES: usize = 16;

/// Charges one allocation with room for `elements` values of `T` (nothing for none).
pub fn charge_elements<T>(elements: usize) -> Result<()> {
    if elements == 0 {
        return Ok(());
    }
    charge(
        elements
            .saturating_mul(std::mem::size_of::<T>())
            .saturating_add(ALLOCATION_OVERHEAD_BYTES),
    )
}
