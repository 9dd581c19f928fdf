//! A pool that banks the unused rest of the current tick for later bursts (the
//! pre-generation pool of game servers), without running ahead of the clock.

use super::{Block, Generator};
use crate::clock::Clock;
use crate::error::Result;

/// Banks the rest of quiet ticks so that a burst (a wave of player registrations) draws from
/// the bank before it has to wait for the clock. Call [`Pool::bank`] when idle (each frame of
/// a game loop, say) and [`Pool::next_id`] when an ID is needed. Banked IDs are older than
/// fresh ones and are handed out first, so a pool's IDs increase. Not `Sync`: one pool per
/// thread, over a shared generator. `N` is how many ticks' remainders it keeps.
///
/// ```
/// use snowflake_core::{Generator, Layout, ManualClock, Options, Pool};
/// let layout = Layout::parse("game").unwrap(); // 64 IDs per ms
/// let clock = ManualClock::new(1_700_000_000_000);
/// let generator = Generator::isolated(&layout, Default::default(), Options::default(), &clock).unwrap();
/// let mut pool: Pool<'_, _, 8> = Pool::new(&generator);
/// generator.next_id().unwrap();
/// assert_eq!(pool.bank().unwrap(), 63); // the rest of this millisecond
/// clock.advance(1);
/// assert_eq!(pool.bank().unwrap(), 64);
/// let ids: Vec<u64> = (0..200).map(|_| pool.next_id().unwrap()).collect();
/// assert!(ids.windows(2).all(|w| w[0] < w[1]));
/// ```
pub struct Pool<'g, C: Clock, const N: usize = 16> {
    generator: &'g Generator<C>,
    blocks: [Block; N],
    head: usize,
    len: usize,
    used: u64,
    /// The fork generation the bank was filled in: a child of fork() must not hand out the
    /// parent's banked IDs (a shared generator keeps working in a child; its bank must not).
    #[cfg(feature = "std")]
    fork_generation: u64,
}

impl<'g, C: Clock, const N: usize> Pool<'g, C, N> {
    /// An empty pool over `generator`.
    pub fn new(generator: &'g Generator<C>) -> Self {
        Pool {
            generator,
            blocks: [Block { first: 0, count: 0, stride: 1 }; N],
            head: 0,
            len: 0,
            used: 0,
            #[cfg(feature = "std")]
            fork_generation: crate::sys::fork_generation(),
        }
    }

    /// Banks the rest of the current tick, if the pool has room for another block; returns how
    /// many IDs it banked (0 when the tick is used up or the bank full).
    pub fn bank(&mut self) -> Result<u64> {
        self.forget_after_fork();
        if self.len == N {
            return Ok(0);
        }
        match self.generator.reserve_rest_of_tick()? {
            Some(block) => {
                self.blocks[(self.head + self.len) % N] = block;
                self.len += 1;
                Ok(block.count)
            }
            None => Ok(0),
        }
    }

    /// How many IDs are banked.
    pub fn banked(&self) -> u64 {
        #[cfg(feature = "std")]
        if self.fork_generation != crate::sys::current_fork_generation() {
            return 0;
        }
        (0..self.len).map(|i| self.blocks[(self.head + i) % N].count).sum::<u64>() - self.used
    }

    /// Forgets the bank if this is a child of fork() of the process that filled it.
    fn forget_after_fork(&mut self) {
        #[cfg(feature = "std")]
        if self.fork_generation != crate::sys::current_fork_generation() {
            self.fork_generation = crate::sys::current_fork_generation();
            self.len = 0;
            self.used = 0;
        }
    }

    /// An ID from the bank, or else from the generator.
    pub fn next_id(&mut self) -> Result<u64> {
        self.forget_after_fork();
        if self.len > 0 {
            let block = self.blocks[self.head];
            let id = block.first + self.used * block.stride;
            self.used += 1;
            if self.used == block.count {
                self.head = (self.head + 1) % N;
                self.len -= 1;
                self.used = 0;
            }
            return Ok(id);
        }
        self.generator.next_id()
    }
}
