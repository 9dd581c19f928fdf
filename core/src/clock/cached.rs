//! A cached reading of `CLOCK_MONOTONIC`, in whole milliseconds, for the generator's hot path.
//!
//! Reading the clock is most of the cost of an ID (25-45 ns on the machines we measured, of
//! 37); a cached reading is one load and one test. A thread, the ticker, publishes the time at every
//! millisecond boundary while IDs are being issued, and parks when they stop:
//!
//! - **An idle process pays nothing.** The ticker starts only when two readings fall within
//!   one millisecond of each other (a burst), and parks after [`IDLE_TICKS`] ticks without a
//!   reader. A process that issues an ID a minute reads the clock itself each time and never
//!   wakes a thread.
//! - **A fork child's clock is right at once.** A child has no ticker (threads do not survive
//!   `fork()`); its fork handler clears the cache, so its first reading is fresh and a burst
//!   starts a ticker of its own.
//! - **A reading lags by at most a tick while the ticker keeps up**, and the generator never
//!   decides on it alone: a wait, a clock that seems behind, a rollover and a lease's validity
//!   all read the clock afresh (`Clock::now_ms`).
//!
//! Every timeline of the library has a whole-millisecond offset from `CLOCK_MONOTONIC` (see
//! `MonotonicClock`), so one cache of raw milliseconds serves them all, and their
//! milliseconds all turn at the same instant, the one the ticker wakes at.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Once;
use std::thread::Thread;
use std::time::Duration;

/// Ticks without a reading after which the ticker parks.
const IDLE_TICKS: u32 = 50;

/// Raw `CLOCK_MONOTONIC` milliseconds plus one, and [`READ`] (0: no ticker is publishing).
/// The ticker publishes each millisecond without the bit; the first reader of it sets the
/// bit, and the ticker, replacing the word, learns from the bit whether anyone read it.
/// One word for the time and the flag: a reader that finds the bit set (every reading but
/// the first of a millisecond) has checked both with one test, and writes nothing.
static NOW: AtomicU64 = AtomicU64::new(0);
/// The bit of [`NOW`] that says the current millisecond was read. Above any time (`CLOCK_MONOTONIC`
/// milliseconds reach 2^63 after 292 million years), so a word with it is never 0.
pub(crate) const READ: u64 = 1 << 63;
/// The last fresh reading taken because the cache was empty, in raw ms.
static LAST_FRESH_MS: AtomicU64 = AtomicU64::new(0);
/// Held while starting or waking the ticker (a spin lock: the fork handler resets it).
static STARTING: AtomicBool = AtomicBool::new(false);
/// Whether the ticker is publishing (or about to).
static RUNNING: AtomicBool = AtomicBool::new(false);
static FORK_HOOK: Once = Once::new();

/// The ticker's thread, once made in this process (guarded by `STARTING`).
struct Ticker(UnsafeCell<Option<Thread>>);
// SAFETY: only touched while `STARTING` is held (or by the single thread of a fork child).
unsafe impl Sync for Ticker {}
static TICKER: Ticker = Ticker(UnsafeCell::new(None));

fn fresh_ms() -> u64 {
    super::std_clocks::monotonic_raw_ns() / 1_000_000
}

/// Raw `CLOCK_MONOTONIC` milliseconds: the cached reading while the ticker runs, else a fresh
/// one (which starts the ticker when readings come fast).
#[inline]
pub(crate) fn raw_ms() -> u64 {
    let word = NOW.load(Ordering::Acquire);
    if word & READ != 0 {
        return (word & !READ) - 1;
    }
    first_of_tick(word)
}

/// [`NOW`] as it is, for the generator's fast path: `(raw ms + 1) | READ` while the ticker
/// runs and this millisecond was read (then the time is in it); anything without [`READ`]
/// sends the caller to [`raw_ms`], which marks the reading or reads the clock itself.
#[inline(always)]
pub(crate) fn word() -> u64 {
    NOW.load(Ordering::Acquire)
}

/// The first reading of a millisecond (`word` without [`READ`]): marks it read, so that the
/// ticker keeps running; or, with no ticker publishing (0), a fresh reading.
#[cold]
fn first_of_tick(word: u64) -> u64 {
    if word == 0 {
        return uncached();
    }
    // Only onto the word read: one the ticker replaced meanwhile (a new millisecond, or 0 as
    // it parks) is left as it is, and that reading goes unmarked (the next one marks it).
    let _ = NOW.compare_exchange(word, word | READ, Ordering::AcqRel, Ordering::Relaxed);
    word - 1
}

#[cold]
fn uncached() -> u64 {
    let now = fresh_ms();
    let last = LAST_FRESH_MS.swap(now, Ordering::Relaxed);
    // Two readings within a millisecond: a burst, which is what the ticker is for.
    if now.saturating_sub(last) <= 1 {
        start();
    }
    now
}

/// Starts (or wakes) the ticker, unless it runs.
fn start() {
    if RUNNING.load(Ordering::Acquire)
        || STARTING.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_err()
    {
        return;
    }
    {
        // Inside the fork gate: a fork never finds this `Once` half-run.
        let _gate = crate::sys::ForkGate::enter();
        FORK_HOOK.call_once(|| crate::sys::at_fork(noop, noop, forget_in_child));
    }
    if !RUNNING.swap(true, Ordering::AcqRel) {
        // SAFETY: `STARTING` is held.
        let slot = unsafe { &mut *TICKER.0.get() };
        match slot {
            Some(thread) => thread.unpark(),
            None => {
                let spawned = std::thread::Builder::new().name("snowflake-clock".into()).spawn(tick);
                match spawned {
                    Ok(handle) => *slot = Some(handle.thread().clone()),
                    // No thread to be had: every reading stays fresh, as without the cache.
                    Err(_) => RUNNING.store(false, Ordering::Release),
                }
            }
        }
    }
    STARTING.store(false, Ordering::Release);
}

/// The ticker: publishes the time at each millisecond boundary; parks when nobody reads it.
fn tick() {
    let mut idle = 0;
    loop {
        let now_ns = super::std_clocks::monotonic_raw_ns();
        if NOW.swap(now_ns / 1_000_000 + 1, Ordering::AcqRel) & READ != 0 {
            idle = 0;
        } else {
            idle += 1;
            if idle > IDLE_TICKS {
                NOW.store(0, Ordering::Release);
                RUNNING.store(false, Ordering::Release);
                // A reader that saw the cache empty before `RUNNING` fell restarts us: unpark
                // tokens are kept, so no wake-up is lost between these lines and `park`.
                std::thread::park();
                idle = 0;
                continue;
            }
        }
        // Wake just after the next boundary.
        let into_ms = now_ns % 1_000_000;
        std::thread::sleep(Duration::from_nanos(1_000_000 - into_ms + 1_000));
    }
}

extern "C" fn noop() {}

/// In a child of `fork()`: no ticker thread exists here; the cached time would stay where the
/// parent left it. Clear it, so the first reading is fresh and a burst starts a new ticker.
extern "C" fn forget_in_child() {
    NOW.store(0, Ordering::SeqCst);
    RUNNING.store(false, Ordering::SeqCst);
    STARTING.store(false, Ordering::SeqCst);
    LAST_FRESH_MS.store(0, Ordering::SeqCst);
    // SAFETY: the only thread of the child; the parent's handle names no thread here (it is
    // forgotten, not dropped, as its owner may be mid-update).
    unsafe { std::mem::forget((*TICKER.0.get()).take()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_follow_the_clock_and_the_ticker_parks_when_idle() {
        for _ in 0..3 {
            let a = raw_ms();
            assert!(a <= fresh_ms());
        }
        // A burst starts the ticker.
        let start = std::time::Instant::now();
        while NOW.load(Ordering::Acquire) == 0 && start.elapsed() < Duration::from_secs(5) {
            raw_ms();
        }
        assert!(NOW.load(Ordering::Acquire) != 0, "a burst of readings starts the ticker");
        // It keeps up: a cached reading is never ahead of a fresh one.
        let until = std::time::Instant::now() + Duration::from_millis(20);
        while std::time::Instant::now() < until {
            assert!(raw_ms() <= fresh_ms());
        }
        // Without readers it parks and empties the cache.
        let start = std::time::Instant::now();
        while NOW.load(Ordering::Acquire) != 0 && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(NOW.load(Ordering::Acquire), 0, "an idle ticker parks");
    }
}
