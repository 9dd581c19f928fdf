//! Clocks. The generator reads the time through [`Clock`], so tests, simulations and game
//! engines can drive it; with `std` come the system clock and a monotonic clock.

use core::sync::atomic::{AtomicU64, Ordering};

/// A source of Unix time in milliseconds.
///
/// `wait_until_ms` is how the generator waits for the clock (when a tick is full, or the
/// clock is behind); the default spins on `now_ms`.
pub trait Clock {
    /// The current time, in Unix milliseconds, read afresh: what the generator decides a
    /// wait, a clock that went back, a rollover or a lease's validity on.
    fn now_ms(&self) -> u64;

    /// The current time from a cache that may lag by up to a tick (see [`MonotonicClock`]):
    /// the generator's first, cheap reading for an ID, never the ground of a decision. By
    /// default, [`Clock::now_ms`]: a clock that wraps another forwards this method too, or
    /// loses only speed.
    #[inline]
    fn now_ms_cached(&self) -> u64 {
        self.now_ms()
    }

    /// Returns once `now_ms() >= unix_ms`.
    fn wait_until_ms(&self, unix_ms: u64) {
        while self.now_ms() < unix_ms {
            core::hint::spin_loop();
        }
    }

    /// `Some(offset_ms)` when [`Clock::now_ms_cached`] is the process's cached
    /// `CLOCK_MONOTONIC` milliseconds plus `offset_ms` (a [`MonotonicClock`]'s): the generator's
    /// fast path then reads the cache itself, with the offset and the layout's epoch folded
    /// into one addition. `None` by default; a clock that wraps another forwards it, or loses
    /// only speed. (An implementation detail of the fast path, hence hidden.)
    #[doc(hidden)]
    #[inline]
    fn monotonic_offset_ms(&self) -> Option<i64> {
        None
    }
}

impl<T: Clock + ?Sized> Clock for &T {
    fn now_ms(&self) -> u64 {
        (**self).now_ms()
    }
    fn now_ms_cached(&self) -> u64 {
        (**self).now_ms_cached()
    }
    fn wait_until_ms(&self, unix_ms: u64) {
        (**self).wait_until_ms(unix_ms)
    }
    fn monotonic_offset_ms(&self) -> Option<i64> {
        (**self).monotonic_offset_ms()
    }
}

#[cfg(feature = "std")]
impl<T: Clock + ?Sized> Clock for std::sync::Arc<T> {
    fn now_ms(&self) -> u64 {
        (**self).now_ms()
    }
    fn now_ms_cached(&self) -> u64 {
        (**self).now_ms_cached()
    }
    fn wait_until_ms(&self, unix_ms: u64) {
        (**self).wait_until_ms(unix_ms)
    }
    fn monotonic_offset_ms(&self) -> Option<i64> {
        (**self).monotonic_offset_ms()
    }
}

/// A clock that moves only when told to (or when the generator waits on it, which moves it
/// forward to the instant waited for, as if that time had passed): for tests, replays and
/// engines that keep their own time.
///
/// ```
/// use snowflake_core::{Clock, ManualClock};
/// let clock = ManualClock::new(1_000);
/// clock.advance(5);
/// assert_eq!(clock.now_ms(), 1_005);
/// clock.wait_until_ms(2_000);
/// assert_eq!(clock.now_ms(), 2_000);
/// ```
#[derive(Debug, Default)]
pub struct ManualClock {
    now: AtomicU64,
}

impl ManualClock {
    /// A clock that reads `unix_ms`.
    pub const fn new(unix_ms: u64) -> ManualClock {
        ManualClock { now: AtomicU64::new(unix_ms) }
    }
    /// Sets the time (also backwards).
    pub fn set(&self, unix_ms: u64) {
        self.now.store(unix_ms, Ordering::SeqCst);
    }
    /// Moves the time forward by `ms`.
    pub fn advance(&self, ms: u64) {
        self.now.fetch_add(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }
    fn wait_until_ms(&self, unix_ms: u64) {
        self.now.fetch_max(unix_ms, Ordering::SeqCst);
    }
}

#[cfg(feature = "std")]
mod cached;
#[cfg(feature = "std")]
pub(crate) use cached::{word as cache_word, READ as CACHE_READ};

#[cfg(feature = "std")]
mod std_clocks {
    use super::Clock;
    use std::sync::OnceLock;
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    fn system_ns() -> u64 {
        // A clock set before 1970 reads as 1970: the layout's epoch check then refuses it.
        SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
    }

    /// How long before the instant a wait stops sleeping and spins: a sleep overshoots by the
    /// timer slack (50 µs by default on Linux) plus the wake-up.
    const SPIN_NS: u64 = 100_000;

    /// Waits until `now_ns() >= target_ms`: sleeps until [`SPIN_NS`] before it, then spins, so
    /// that a new tick is seen as soon as it starts. Sleeping most of the wait (rather than
    /// spinning the last milliseconds) matters where cores are shared, as they are for a
    /// fleet of workers: a spinning thread is preempted for a whole time slice at a random
    /// moment and misses whole ticks. Measured by the Python binding's work on `twitter`,
    /// two cores at a load average of 4: 44-66% of capacity spinning the last 2 ms, 81-99%
    /// sleeping until just before the tick.
    fn wait_until(now_ns: impl Fn() -> u64, target_ms: u64) {
        let target = target_ms.saturating_mul(1_000_000);
        loop {
            let now = now_ns();
            if now >= target {
                return;
            }
            let left = target - now;
            if left > SPIN_NS {
                std::thread::sleep(Duration::from_nanos(left - SPIN_NS));
            } else {
                std::hint::spin_loop();
            }
        }
    }

    /// The wall clock (`CLOCK_REALTIME`): follows every step NTP or an operator makes,
    /// backwards too; the generator's policies (`max_drift_ms`, `max_wait_ms`, `rollover`)
    /// decide what happens then.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct SystemClock;

    impl Clock for SystemClock {
        #[inline]
        fn now_ms(&self) -> u64 {
            system_ns() / 1_000_000
        }
        fn wait_until_ms(&self, unix_ms: u64) {
            wait_until(system_ns, unix_ms)
        }
    }

    /// A monotonic clock (`CLOCK_MONOTONIC`) anchored to the wall clock: it never goes back,
    /// so a step of the wall clock while it runs changes nothing, and it starts from the wall
    /// clock's time, so IDs still carry real time. The default clock of
    /// [`crate::Generator::new`].
    ///
    /// `MonotonicClock::default()` is anchored once per process. Shared generators (several
    /// processes drawing from one state) anchor theirs once per shared state, in the shared
    /// file: `CLOCK_MONOTONIC` is one clock for the whole host, so every process reads the same
    /// time even if the wall clock was stepped between their starts.
    ///
    /// An anchor is a whole number of milliseconds, so every monotonic clock's milliseconds
    /// turn at the same instant, and [`Clock::now_ms`] answers from one process-wide cache that
    /// a thread refreshes at each millisecond while IDs are being issued (a load instead of
    /// a system call; see the `cached` module) for [`Clock::now_ms_cached`]; [`Clock::now_ms`]
    /// reads the clock.
    #[derive(Clone, Copy, Debug)]
    pub struct MonotonicClock {
        offset_ms: i64,
    }

    /// `CLOCK_MONOTONIC` in nanoseconds (Windows: `QueryPerformanceCounter`'s): the same
    /// clock in every process of the host.
    #[inline]
    pub(crate) fn monotonic_raw_ns() -> u64 {
        crate::sys::monotonic_ns()
    }

    impl MonotonicClock {
        /// The process's clock: anchored the first time any process-anchored clock is made.
        pub fn process() -> MonotonicClock {
            static OFFSET: OnceLock<i64> = OnceLock::new();
            MonotonicClock::with_offset_ns(*OFFSET.get_or_init(MonotonicClock::current_offset_ns))
        }

        /// A clock reading `CLOCK_MONOTONIC + offset_ns`, the offset rounded to whole
        /// milliseconds.
        pub const fn with_offset_ns(offset_ns: i64) -> MonotonicClock {
            MonotonicClock { offset_ms: (offset_ns + 500_000).div_euclid(1_000_000) }
        }

        /// The offset that anchors `CLOCK_MONOTONIC` to the wall clock now.
        pub fn current_offset_ns() -> i64 {
            system_ns() as i64 - monotonic_raw_ns() as i64
        }

        /// The offset of this clock from `CLOCK_MONOTONIC` (whole milliseconds).
        pub const fn offset_ns(&self) -> i64 {
            self.offset_ms * 1_000_000
        }

        /// The time in Unix nanoseconds, on the timeline of [`Clock::now_ms`]: for callers
        /// that wait for a tick in their own way (the Python binding sleeps, detached from
        /// the interpreter, until just before the tick starts).
        ///
        /// ```
        /// use snowflake_core::{Clock, MonotonicClock};
        /// let clock = MonotonicClock::process();
        /// let (ns, ms) = (clock.now_ns(), clock.now_ms());
        /// assert!(ns / 1_000_000 <= ms && ms - ns / 1_000_000 < 1_000);
        /// ```
        #[inline]
        pub fn now_ns(&self) -> u64 {
            (monotonic_raw_ns() as i64 + self.offset_ms * 1_000_000).max(0) as u64
        }
    }

    impl Default for MonotonicClock {
        fn default() -> MonotonicClock {
            MonotonicClock::process()
        }
    }

    impl Clock for MonotonicClock {
        #[inline]
        fn now_ms(&self) -> u64 {
            self.now_ns() / 1_000_000
        }
        #[inline]
        fn now_ms_cached(&self) -> u64 {
            (super::cached::raw_ms() as i64 + self.offset_ms).max(0) as u64
        }
        fn wait_until_ms(&self, unix_ms: u64) {
            wait_until(|| self.now_ns(), unix_ms)
        }
        #[inline]
        fn monotonic_offset_ms(&self) -> Option<i64> {
            Some(self.offset_ms)
        }
    }
}

#[cfg(feature = "std")]
pub use std_clocks::{MonotonicClock, SystemClock};

/// The clock of generators built without one: [`MonotonicClock`] with `std`.
#[cfg(feature = "std")]
pub type DefaultClock = MonotonicClock;
/// The clock of generators built without one: without `std`, a [`ManualClock`] that the
/// application sets.
#[cfg(not(feature = "std"))]
pub type DefaultClock = ManualClock;
