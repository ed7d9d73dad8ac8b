//! `queued.max.request.bytes`: one budget for the memory of every request in flight, raw bytes
//! and decoded structures together.
//!
//! A frame larger than [`SMALL_FRAME_BYTES`] reserves its raw size plus its decode budget
//! (`codec::request::decode_budget_bytes`) as soon as its size prefix is read, before its body
//! is buffered, and keeps it until its answer is written; while the budget is spent, further
//! large frames wait unread (the peer's bytes stay in the kernel, as Kafka mutes a channel when
//! its memory pool is empty). A frame whose cost exceeds the whole budget takes all of it and
//! runs alone, so any frame `socket.request.max.bytes` allows is still served. Small frames,
//! which is all the quorum's own traffic (Vote, Fetch, heartbeats), never wait: a client
//! holding the budget with slow large frames cannot stall the quorum.

use std::sync::Arc;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::codec::request::decode_budget_bytes;

/// Frames up to this size never wait for the budget (their decode is bounded by the floor).
pub const SMALL_FRAME_BYTES: usize = 64 * 1024;

/// The budget is counted in units of this many bytes (a semaphore permit each).
const UNIT_BYTES: usize = 1024;

/// The shared request-memory budget of a node.
#[derive(Debug, Clone)]
pub struct RequestMemory {
    /// `None`: unbounded (`queued.max.request.bytes` ≤ 0).
    units: Option<(Arc<Semaphore>, u32)>,
}

/// Frames at least this large give the allocator's free memory back when they are done.
const TRIM_AFTER_FRAME_BYTES: usize = 1024 * 1024;

/// Memory held for one frame until its answer is written.
#[derive(Debug)]
pub struct Reservation {
    permit: Option<OwnedSemaphorePermit>,
    body_len: usize,
    /// The budget's semaphore and size, to see whether this was the last large frame in flight.
    budget: Option<(Arc<Semaphore>, u32)>,
}

impl Reservation {
    /// What the frame may allocate while it is decoded: its decode budget, within what was
    /// reserved for it beyond its raw bytes (a frame costing more than the whole budget got
    /// only the budget).
    pub fn decode_budget_bytes(&self) -> usize {
        let full = decode_budget_bytes(self.body_len);
        match &self.permit {
            Some(p) => full.min((p.num_permits() * UNIT_BYTES).saturating_sub(self.body_len)),
            None => full,
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        drop(self.permit.take());
        let quiet = self
            .budget
            .as_ref()
            .is_none_or(|(s, total)| s.available_permits() == *total as usize);
        if self.body_len >= TRIM_AFTER_FRAME_BYTES && quiet {
            // The arena walk can take milliseconds on a large heap: not on a worker thread.
            match tokio::runtime::Handle::try_current() {
                Ok(rt) => drop(rt.spawn_blocking(release_free_memory)),
                Err(_) => release_free_memory(),
            }
        }
    }
}

/// Gives the memory glibc's allocator holds free back to the system. glibc keeps freed memory
/// at the top of each arena up to twice its mmap threshold, which rises to the size of the
/// largest chunk freed (up to 32 MiB): after a burst of large frames the process would stay
/// tens of MiB above its baseline. Called once no large frame is in flight, so the arena walk
/// stalls nobody.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn release_free_memory() {
    // SAFETY: malloc_trim takes no pointer and glibc serialises it with every allocator call.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release_free_memory() {}

impl RequestMemory {
    /// A budget of `limit_bytes` (`None` for unbounded).
    pub fn new(limit_bytes: Option<usize>) -> Self {
        let units = limit_bytes.map(|b| {
            let n = (b / UNIT_BYTES).clamp(1, u32::MAX as usize) as u32;
            (Arc::new(Semaphore::new(n as usize)), n)
        });
        Self { units }
    }

    /// What a frame body of `body_len` bytes holds while in flight.
    pub fn frame_cost_bytes(body_len: usize) -> usize {
        body_len.saturating_add(decode_budget_bytes(body_len))
    }

    /// Whether a frame of `body_len` must reserve before it is read.
    pub fn needs_reservation(&self, body_len: usize) -> bool {
        self.units.is_some() && body_len > SMALL_FRAME_BYTES
    }

    /// Waits until a frame of `body_len` fits the budget and reserves it. `None` only if the
    /// budget was closed (never, while the node runs).
    pub async fn reserve(&self, body_len: usize) -> Option<Reservation> {
        let Some((semaphore, total)) = &self.units else {
            return Some(Reservation {
                permit: None,
                body_len,
                budget: None,
            });
        };
        let wanted = Self::frame_cost_bytes(body_len).div_ceil(UNIT_BYTES);
        let units = wanted.min(*total as usize) as u32;
        let permit = semaphore.clone().acquire_many_owned(units).await.ok()?;
        Some(Reservation {
            permit: Some(permit),
            body_len,
            budget: self.units.clone(),
        })
    }

    /// Bytes of the budget free now (`None` when unbounded).
    pub fn available_bytes(&self) -> Option<usize> {
        self.units
            .as_ref()
            .map(|(s, _)| s.available_permits() * UNIT_BYTES)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn large_frames_wait_for_the_budget_and_huge_ones_run_alone() {
        let mem = RequestMemory::new(Some(64 << 20));
        assert!(!mem.needs_reservation(SMALL_FRAME_BYTES));
        assert!(mem.needs_reservation(SMALL_FRAME_BYTES + 1));
        let one = mem.reserve(2 << 20).await.unwrap();
        let cost = RequestMemory::frame_cost_bytes(2 << 20);
        assert_eq!(
            mem.available_bytes(),
            Some((64 << 20) - cost.div_ceil(1024) * 1024)
        );
        // A frame costing more than the whole budget waits until it is all free.
        let mem2 = mem.clone();
        let huge = tokio::spawn(async move { mem2.reserve(50 << 20).await.map(|_| ()) });
        tokio::task::yield_now().await;
        assert!(!huge.is_finished());
        drop(one);
        assert!(huge.await.unwrap().is_some());
        assert_eq!(mem.available_bytes(), Some(64 << 20));
    }

    #[tokio::test]
    async fn a_frame_decodes_within_what_was_reserved_for_it() {
        let mem = RequestMemory::new(Some(64 << 20));
        let small = mem.reserve(1 << 20).await.unwrap();
        assert_eq!(small.decode_budget_bytes(), decode_budget_bytes(1 << 20));
        drop(small);
        // 50 MiB would cost 13 times that; it got the whole 64 MiB, so 14 MiB to decode in.
        let huge = mem.reserve(50 << 20).await.unwrap();
        assert_eq!(huge.decode_budget_bytes(), (64 << 20) - (50 << 20));
    }

    #[tokio::test]
    async fn unbounded_never_waits() {
        let mem = RequestMemory::new(None);
        assert!(!mem.needs_reservation(100 << 20));
        assert!(mem.reserve(100 << 20).await.is_some());
        assert_eq!(mem.available_bytes(), None);
    }
}
