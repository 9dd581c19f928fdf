//! A state kept by a host program that runs its own processes and shared memory (a database
//! server: the PostgreSQL extension keeps it in the server's shared memory), and its durable
//! high-water mark, which the host writes its own way (PostgreSQL: into its WAL).
//!
//! The generator is core's, unchanged: one compare-and-swap per ID on the host's word, and
//! no ID at a tick at or past the host's `reserved` end until [`HostMark::extend`] has made
//! the reservation durable. The host keeps the identity unique (one word per layout and node
//! values across its processes) and gives the floor its next run starts from
//! ([`Generator::raise_hosted`]): what it reserved before, or past anything it may have
//! reserved where its record may have lost the last reservations (a promoted standby).
//!
//! The host's processes are outside the host's record of identities (`coord::arbiter`): a
//! server's state lives as long as the server, and the host owns its uniqueness.

use crate::clock::DefaultClock;
use crate::error::Result;
use crate::generator::{Cell, Generator, HighWater};
use crate::layout::{Layout, Node};
use crate::options::Options;
use core::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// The host's durable high-water mark (see the module docs).
pub trait HostMark: Send + Sync + 'static {
    /// Makes the host's reservation reach past `tick` (an end of at least `tick + 1`) durably,
    /// then raises `reserved` to that end; or fails, and nothing is issued at `tick`.
    /// `reserved` is the word given to [`Generator::hosted`]; another process of the host may
    /// have raised it already.
    fn extend(&self, reserved: &AtomicU64, tick: u64) -> Result<()>;
}

/// The words of an identity in the host's memory, which live as long as the process (a
/// server's shared memory is mapped for the life of each of its processes).
#[derive(Clone, Copy)]
pub struct HostState {
    /// The generator's state word; 0 in fresh memory.
    pub word: &'static AtomicU64,
    /// The end (an exclusive tick) of the durable reservation; 0 in fresh memory.
    pub reserved: &'static AtomicU64,
}

struct Mark {
    reserved: &'static AtomicU64,
    host: Arc<dyn HostMark>,
}

impl HighWater for Mark {
    #[inline]
    fn reserved(&self) -> &AtomicU64 {
        self.reserved
    }
    fn extend(&self, tick: u64) -> Result<()> {
        if self.reserved.load(Ordering::Acquire) > tick {
            return Ok(());
        }
        self.host.extend(self.reserved, tick)
    }
}

impl Generator<DefaultClock> {
    /// A generator over a host's state and mark (see the module docs). `layout`, `node` and
    /// `options` are checked as [`Generator::new`] checks them. Every process of the host that
    /// issues with the identity must use the same `state`, and the same options (with another
    /// `max_drift_ms` the IDs stay unique; only their timing changes).
    ///
    /// ```
    /// use core::sync::atomic::AtomicU64;
    /// use std::sync::Arc;
    /// use snowflake_core::{Generator, HostMark, HostState, Layout, Options};
    /// struct Eager;
    /// impl HostMark for Eager {
    ///     fn extend(&self, reserved: &AtomicU64, tick: u64) -> snowflake_core::Result<()> {
    ///         reserved.fetch_max(tick + 1000, core::sync::atomic::Ordering::AcqRel); // durably, in a host
    ///         Ok(())
    ///     }
    /// }
    /// static WORD: AtomicU64 = AtomicU64::new(0);
    /// static RESERVED: AtomicU64 = AtomicU64::new(0);
    /// let layout = Layout::parse("twitter")?;
    /// let node = layout.parse_node("datacenter=1,worker=2")?;
    /// let state = HostState { word: &WORD, reserved: &RESERVED };
    /// let g = Generator::hosted(&layout, node, Options::default(), state, Arc::new(Eager))?;
    /// let (a, b) = (g.next_id()?, g.next_id()?);
    /// assert!(a < b);
    /// # Ok::<(), snowflake_core::Error>(())
    /// ```
    pub fn hosted(
        layout: &Layout,
        node: Node,
        options: Options,
        state: HostState,
        mark: Arc<dyn HostMark>,
    ) -> Result<Self> {
        layout.check_node_named(&node, options.rollover_bit(layout))?;
        let mut g = Generator::build(layout, node, options.policy(), DefaultClock::default())?;
        let cell = Cell::new(Arc::new(()), |_| state.word);
        let mark: Arc<dyn HighWater> = Arc::new(Mark { reserved: state.reserved, host: mark });
        // A host's shared memory is inherited by its forked processes, the state with it.
        g.assemble(cell, Some(mark), true);
        Ok(g)
    }

    /// Raises a hosted generator's state (and its reservation's end, so that the next ID
    /// first extends the durable mark) to the tick of `unix_ms`: the floor of a host's new
    /// run. A state already past it is kept. Errors: a time outside the layout.
    ///
    /// ```
    /// # use core::sync::atomic::{AtomicU64, Ordering};
    /// # use std::sync::Arc;
    /// # use snowflake_core::{Generator, HostMark, HostState, Layout, Options};
    /// # struct Eager;
    /// # impl HostMark for Eager {
    /// #     fn extend(&self, reserved: &AtomicU64, tick: u64) -> snowflake_core::Result<()> {
    /// #         reserved.fetch_max(tick + 1000, Ordering::AcqRel);
    /// #         Ok(())
    /// #     }
    /// # }
    /// static WORD: AtomicU64 = AtomicU64::new(0);
    /// static RESERVED: AtomicU64 = AtomicU64::new(0);
    /// let layout = Layout::parse("twitter")?;
    /// let state = HostState { word: &WORD, reserved: &RESERVED };
    /// let g = Generator::hosted(&layout, layout.parse_node("datacenter=1,worker=2")?, Options::default(), state, Arc::new(Eager))?;
    /// let now_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    /// g.raise_hosted(now_ms + 200)?;
    /// let id = g.next_id()?; // waits for the clock to reach the floor
    /// assert!(layout.decode(id)?.unix_ms >= now_ms + 200);
    /// # Ok::<(), snowflake_core::Error>(())
    /// ```
    pub fn raise_hosted(&self, unix_ms: u64) -> Result<()> {
        let tick = self.layout().tick_of(unix_ms)?;
        self.raise_floor(tick);
        if let Some(m) = self.mark_reserved() {
            m.fetch_max(tick, Ordering::AcqRel);
        }
        Ok(())
    }
}
