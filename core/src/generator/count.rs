//! The count of IDs a generator issued ([`super::Stats::issued`]), kept off the line the
//! threads that share a generator fight over, and without a second locked instruction per ID.
//!
//! One counter that every call adds to would be a second atomic read-modify-write per ID on a
//! line shared by every thread that issues, beside the state word's compare-and-swap: under
//! contention each ID would move two cache lines between cores instead of one, and even alone
//! a locked add costs about as much as the compare-and-swap. So the count is split in slots
//! of a cache line each, and a live thread holds a slot of its own (the same index in every
//! generator): it adds to it with a plain load and store, which no other thread can race, as
//! no other live thread holds that slot. A thread's slot is freed when it exits, and taken
//! by a later thread after that (a lock-free bitmap: a child of `fork()` keeps its parent's
//! bits, and only loses the slots of threads it does not have). Past [`SLOTS`] live threads
//! that issue, the others share one more slot, with atomic adds. Reading the count
//! (`stats()`) sums the slots: it is exact. Without `std` (no threads to tell apart) it is
//! one atomic counter.

use core::sync::atomic::{AtomicU64, Ordering};

/// Slots held by one thread each; threads beyond these share the last slot.
#[cfg(feature = "std")]
pub(crate) const SLOTS: usize = 16;

/// Words per slot: a 64-byte cache line.
#[cfg(feature = "std")]
const STRIDE: usize = 8;

/// IDs issued: slot `i` is word `i * STRIDE`, so that no two slots share a cache line (the
/// words are a line apart, wherever the allocation starts: an ordinary allocation, no
/// aligned one, as a generator is made per request in some front ends). Slot [`SLOTS`] is
/// the shared one.
#[cfg(feature = "std")]
pub(crate) struct Issued(std::boxed::Box<[AtomicU64]>);

/// The words of generators that went, kept for the next ones (a generator made per request
/// would allocate and zero 1 KB each time, off the allocator's fast sizes); `try_lock`: never
/// a wait (a child of `fork()` whose parent's thread held the lock allocates anew).
#[cfg(feature = "std")]
static SPARE: std::sync::Mutex<Vec<std::boxed::Box<[AtomicU64]>>> = std::sync::Mutex::new(Vec::new());

/// How many [`SPARE`] keeps.
#[cfg(feature = "std")]
const SPARE_MAX: usize = 8;

#[cfg(feature = "std")]
impl Default for Issued {
    fn default() -> Issued {
        if let Some(words) = SPARE.try_lock().ok().and_then(|mut spare| spare.pop()) {
            for w in words.iter() {
                w.store(0, Ordering::Relaxed);
            }
            return Issued(words);
        }
        Issued(core::iter::repeat_with(|| AtomicU64::new(0)).take((SLOTS + 1) * STRIDE).collect())
    }
}

#[cfg(feature = "std")]
impl Drop for Issued {
    fn drop(&mut self) {
        let words = core::mem::take(&mut self.0);
        if let Ok(mut spare) = SPARE.try_lock() {
            if spare.len() < SPARE_MAX {
                spare.push(words);
            }
        }
    }
}

#[cfg(feature = "std")]
impl Issued {
    /// Counts `n` IDs issued by the calling thread.
    #[inline(always)]
    pub(crate) fn add(&self, n: u64) {
        let at = MY_WORD.get();
        if at < SLOTS * STRIDE {
            self.add_own(at, n);
        } else {
            self.add_slow(n);
        }
    }

    /// Adds `n` to the word at `at`, a slot the calling thread holds.
    #[inline(always)]
    fn add_own(&self, at: usize, n: u64) {
        debug_assert!(at < SLOTS * STRIDE);
        // SAFETY: callers pass a slot's word, below `SLOTS * STRIDE`, of the
        // `(SLOTS + 1) * STRIDE` words (a bounds check would cost as much as the add).
        let word = unsafe { self.0.get_unchecked(at) };
        // This thread's alone (see the module docs): no other writer to race.
        word.store(word.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
    }

    /// [`Issued::add`] for a thread that holds no slot: its first call takes one; past
    /// [`SLOTS`] live threads (or while the thread exits) the shared slot, atomically.
    #[cold]
    #[inline(never)]
    fn add_slow(&self, n: u64) {
        if MY_WORD.get() == UNSET {
            take_slot();
        }
        let at = MY_WORD.get();
        if at < SLOTS * STRIDE {
            self.add_own(at, n);
        } else {
            self.0[SLOTS * STRIDE].fetch_add(n, Ordering::Relaxed);
        }
    }

    /// The sum.
    pub(crate) fn total(&self) -> u64 {
        self.0.iter().step_by(STRIDE).map(|s| s.load(Ordering::Relaxed)).fold(0, u64::wrapping_add)
    }
}

/// The slots held by live threads, a bit each.
#[cfg(feature = "std")]
static TAKEN: AtomicU64 = AtomicU64::new(0);

/// [`MY_WORD`] before the thread's first count.
#[cfg(feature = "std")]
const UNSET: usize = usize::MAX;

#[cfg(feature = "std")]
std::thread_local! {
    /// The calling thread's slot, as the index of its word (`slot * STRIDE`): [`UNSET`]
    /// before its first count, `SLOTS * STRIDE` (the shared slot) when it holds none. A
    /// constant initial value and no destructor: reading it is one load, with no check of
    /// whether it was made or dropped (which the thread's slot, given back on exit, needs:
    /// that is [`RELEASE`]'s).
    static MY_WORD: core::cell::Cell<usize> = const { core::cell::Cell::new(UNSET) };
    /// Gives the thread's slot back when the thread exits; made when it takes one.
    static RELEASE: Release = const { Release };
}

/// Frees the thread's slot when the thread exits.
#[cfg(feature = "std")]
struct Release;

#[cfg(feature = "std")]
impl Drop for Release {
    fn drop(&mut self) {
        let at = MY_WORD.get();
        // From here on the thread counts in the shared slot (a destructor of another thread
        // local may still issue).
        MY_WORD.set(SLOTS * STRIDE);
        if at < SLOTS * STRIDE {
            // Release: the next holder's first load sees this thread's last store.
            TAKEN.fetch_and(!(1 << (at / STRIDE)), Ordering::AcqRel);
        }
    }
}

/// Takes a free slot for the calling thread, or leaves it on the shared one: past [`SLOTS`]
/// live threads, or when its slot could not be given back at exit (its thread locals are
/// being dropped).
#[cfg(feature = "std")]
fn take_slot() {
    MY_WORD.set(SLOTS * STRIDE);
    // The destructor first: a slot is taken only by a thread that will give it back.
    if RELEASE.try_with(|_| ()).is_err() {
        return;
    }
    let mut taken = TAKEN.load(Ordering::Acquire);
    loop {
        let free = (!taken).trailing_zeros() as usize;
        if free >= SLOTS {
            return;
        }
        match TAKEN.compare_exchange_weak(taken, taken | 1 << free, Ordering::AcqRel, Ordering::Acquire) {
            Ok(_) => {
                MY_WORD.set(free * STRIDE);
                return;
            }
            Err(now) => taken = now,
        }
    }
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

#[cfg(all(test, feature = "std"))]
mod tests {
    use super::{Issued, SLOTS};
    use std::sync::Arc;

    /// More live threads than slots (the rest share one, atomically), then threads that come
    /// after others exited (their slots taken again): the sum is exact each time.
    #[test]
    fn the_count_is_exact_past_the_slots_and_across_thread_exits() {
        let issued = Arc::new(Issued::default());
        let threads = 3 * SLOTS;
        let start = Arc::new(std::sync::Barrier::new(threads));
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let (issued, start) = (issued.clone(), start.clone());
                std::thread::spawn(move || {
                    start.wait(); // every thread alive at once
                    for _ in 0..10_000 {
                        issued.add(1);
                    }
                })
            })
            .collect();
        handles.into_iter().for_each(|h| h.join().unwrap());
        assert_eq!(issued.total(), threads as u64 * 10_000);
        for round in 0..4 {
            let issued = issued.clone();
            std::thread::spawn(move || issued.add(round)).join().unwrap();
        }
        issued.add(7);
        assert_eq!(issued.total(), threads as u64 * 10_000 + 6 + 7);
    }
}
