//! The count of IDs a generator issued ([`super::Stats::issued`]), kept off the line the
//! threads that share a generator fight over.
//!
//! One counter that every call adds to would be a second atomic read-modify-write per ID on a
//! line shared by every thread that issues, beside the state word's compare-and-swap: under
//! contention each ID would move two cache lines between cores instead of one. So the count
//! is split in slots of a cache line each, and a thread adds to the slot of its own index
//! (given once per thread, round-robin): threads meet on a slot only when more than
//! [`SLOTS`] of them issue at once. Each add is still atomic, so the sum is exact whatever
//! the threads do; reading it (`stats()`) sums the slots. Without `std` (no threads to tell
//! apart) it is one counter.

use core::sync::atomic::{AtomicU64, Ordering};

/// Slots per generator: threads beyond this many share slots (still exact, a little slower).
#[cfg(feature = "std")]
pub(crate) const SLOTS: usize = 16;

#[cfg(feature = "std")]
#[repr(align(64))]
#[derive(Default)]
struct Slot(AtomicU64);

/// IDs issued, by slot.
#[cfg(feature = "std")]
#[derive(Default)]
pub(crate) struct Issued(std::boxed::Box<[Slot; SLOTS]>);

#[cfg(feature = "std")]
impl Issued {
    /// Counts `n` IDs issued by the calling thread.
    #[inline(always)]
    pub(crate) fn add(&self, n: u64) {
        self.0[thread_slot()].0.fetch_add(n, Ordering::Relaxed);
    }

    /// The sum.
    pub(crate) fn total(&self) -> u64 {
        self.0.iter().map(|s| s.0.load(Ordering::Relaxed)).fold(0, u64::wrapping_add)
    }
}

/// The calling thread's slot, given at its first call.
#[cfg(feature = "std")]
#[inline(always)]
fn thread_slot() -> usize {
    use std::cell::Cell;
    use std::sync::atomic::AtomicUsize;
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    std::thread_local! {
        static SLOT: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    SLOT.with(|s| {
        let slot = s.get();
        if slot < SLOTS {
            return slot;
        }
        let slot = NEXT.fetch_add(1, Ordering::Relaxed) % SLOTS;
        s.set(slot);
        slot
    })
}

/// Without `std`: one counter.
#[cfg(not(feature = "std"))]
#[derive(Default)]
pub(crate) struct Issued(AtomicU64);

#[cfg(not(feature = "std"))]
impl Issued {
    #[inline(always)]
    pub(crate) fn add(&self, n: u64) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn total(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}
