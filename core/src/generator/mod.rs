//! The generator: a lock-free state machine over one 64-bit word.
//!
//! # The state word
//!
//! The word holds the *next free slot*: a logical tick `L`, the rollover counter `r` (when the
//! layout has a `rollover` field) and the next free sequence number `s < 2^sequence_bits`,
//! packed as `L | r | s` from high to low. Every issue is one compare-and-swap that moves the
//! slot forward past what it hands out, so two callers (threads, or processes sharing the
//! word) can never be handed the same slot. Because the word holds the next free slot (not
//! the last one used) it needs no "nothing issued yet" sentinel, and a 64-bit layout still
//! fits. When a tick fills up the slot carries to `(L + 1, r, 0)`; at the layout's last tick it
//! cannot carry, so that tick's last sequence number is never issued.
//!
//! # The rules (DESIGN §3)
//!
//! Given the clock's tick `t`:
//! - `t > L`: a new tick, starting at `start(t)`;
//! - `t == L`: the next free sequence number (at least `start(t)`);
//! - `t < L` (the tick filled up and carried, or the clock went back): issue at `L` if
//!   `L - t` is within `max_drift_ms`; else, with a `rollover` field and a clock that went back,
//!   bump the counter and restart at `t`; else wait for the clock up to `max_wait_ms`, then fail.
//!
//! The rollover counter never wraps: every value of it is used in one monotonic run, so its
//! IDs cannot meet another value's. After `2^bits - 1` rollbacks the generator waits like one
//! without rollover.

use crate::clock::{Clock, DefaultClock};
use crate::error::{Error, Result};
use crate::layout::{FieldKind, Layout, Node};
use crate::options::{Options, Policy, Provenance, SequenceStart};
use crate::text::Name;
use core::sync::atomic::{AtomicU64, Ordering};
pub(crate) use word::Word;

mod count;
mod pool;
mod stats;
mod word;
pub use crate::limits::AHEAD_SLACK_MS;
pub use pool::Pool;
pub use stats::{StatSpec, StatType, StatValue, STATS};

/// The most IDs one call of a front end's `next_ids` returns as one list or array (Python,
/// Node, PHP): 2^28, 2 GiB of 64-bit IDs. A larger count is refused at once
/// ([`Error::ValueRange`] naming `n`), before anything is allocated or issued, so that no
/// count can make a front end abort (an allocation failure), wrap a length or overflow a
/// buffer; take more in several calls. (The C `snowflake_next_ids` and [`Generator::fill`]
/// fill the caller's own buffer, whatever its length.)
pub const MAX_IDS_PER_CALL: u64 = 1 << 28;

/// A run of IDs taken with one compare-and-swap, within one tick: `first`, `first + stride`,
/// ..., `count` of them, increasing.
///
/// ```
/// let b = snowflake_core::Block { first: 4096, count: 3, stride: 1 };
/// assert_eq!(b.iter().collect::<Vec<_>>(), [4096, 4097, 4098]);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// The first ID.
    pub first: u64,
    /// How many IDs.
    pub count: u64,
    /// The distance between two consecutive IDs: `1 << sequence_shift`.
    pub stride: u64,
}

impl Block {
    /// The `i`-th ID of the block.
    pub const fn get(&self, i: u64) -> Option<u64> {
        if i < self.count {
            Some(self.first + i * self.stride)
        } else {
            None
        }
    }

    /// The IDs, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u64> {
        let b = *self;
        (0..b.count).map(move |i| b.first + i * b.stride)
    }

    /// Writes the first `out.len()` IDs (at most `count`) into `out`; returns how many.
    #[inline]
    pub fn fill(&self, out: &mut [u64]) -> usize {
        let n = out.len().min(self.count as usize);
        let (first, stride) = (self.first, self.stride);
        for (i, slot) in out[..n].iter_mut().enumerate() {
            *slot = first + i as u64 * stride;
        }
        n
    }
}

/// Why [`Generator::fill`] stopped before the end of its buffer: how many IDs it wrote at the
/// start of the buffer (valid and unique), and the error.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FillError {
    /// How many IDs were written, from the start of the buffer.
    pub written: usize,
    /// Why it stopped.
    pub error: Error,
}

impl From<FillError> for Error {
    fn from(e: FillError) -> Error {
        e.error
    }
}

impl core::fmt::Display for FillError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} (after {} IDs)", self.error, self.written)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for FillError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.error)
    }
}

/// What a generator has done. Every field is a row of [`STATS`] too (append a new one to both),
/// from which the front ends show it: C's struct, Python, Node, PHP and the docs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// IDs issued through this generator.
    pub issued: u64,
    /// How many times it waited for the clock.
    pub waits: u64,
    /// Total time spent waiting, in ms.
    pub waited_ms: u64,
    /// How many times it found the clock behind by more than `max_drift_ms` (a step back,
    /// not a full tick).
    pub clock_behind: u64,
    /// How many times it bumped the rollover field.
    pub rollovers: u64,
    /// How far ahead of the clock the shared state is now, in ms (0 when not ahead).
    pub drift_ms: u64,
    /// How many times a lease was claimed: 1 for a lease held since the generator opened,
    /// one more each time a lapsed lease was claimed again (0 without a lease).
    pub lease_claims: u64,
    /// How many times the lease lapsed: not renewed in time, or found taken or deleted.
    pub lease_losses: u64,
    /// The value of the leased field that the generator issues with now (`None` without a
    /// lease). It can change when a lapsed lease is claimed again.
    pub lease_value: Option<u64>,
    /// The layout's last usable instant, in Unix ms ([`Layout::last_unix_ms`]).
    pub last_unix_ms: u64,
    /// How long the layout has left by the generator's clock, in ms (0 once past its end).
    pub ms_left: u64,
    /// With a lease across hosts: this host's clock minus the lease store's (Redis `TIME`, the
    /// database's clock) at the last claim or renewal, in ms (positive: this host is ahead).
    /// `None` without such a lease.
    pub clock_skew_ms: Option<i64>,
    /// How many renewals found the host's clock further from the store's than
    /// `max_clock_skew_ms` (a claim is refused then; a held lease goes on, and counts it).
    pub skewed_renewals: u64,
}

impl Stats {
    /// [`Stats::ms_left`] in years of 365.2425 days.
    ///
    /// ```
    /// use snowflake_core::{Generator, Layout, ManualClock, Options};
    /// let layout = Layout::parse("twitter").unwrap();
    /// let g = Generator::isolated(&layout, Default::default(), Options::default(), ManualClock::new(1_700_000_000_000)).unwrap();
    /// let s = g.stats();
    /// assert_eq!(s.last_unix_ms, layout.last_unix_ms());
    /// assert!(s.years_left() > 56.6 && s.years_left() < 56.7);
    /// ```
    pub fn years_left(&self) -> f64 {
        crate::layout::years_of_ms(self.ms_left)
    }
}

/// A lease's part of [`Stats`], from its high-water mark.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LeaseStats {
    pub claims: u64,
    pub losses: u64,
    pub value: u64,
    pub clock_skew_ms: Option<i64>,
    pub skewed_renewals: u64,
}

/// What [`Stats`] counts. `issued` changes with every ID and lives apart (see `count`); the
/// others change only where a call waits or rolls over.
#[derive(Default)]
struct Counters {
    issued: count::Issued,
    waits: AtomicU64,
    waited_ms: AtomicU64,
    clock_behind: AtomicU64,
    rollovers: AtomicU64,
}

/// How many compare-and-swaps [`Generator::next_id_fast`] tries before it leaves a contended
/// word to the general path.
const FAST_TRIES: u32 = 8;

/// What the one-ID fast path needs, copied out of the layout so that it reads one small
/// struct.
#[derive(Clone, Copy)]
struct Fast {
    on: bool,
    epoch_ms: u64,
    tick_ms: u64,
    seq_bits: u32,
    time_shift: u32,
    seq_shift: u32,
}

/// When [`Generator::take`] may bump the rollover field of a layout that has one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Roll {
    /// Never: wait for the clock, or fail.
    Never,
    /// When the given reading (the caller's clock, taken at its word) is behind the state.
    AtReading,
    /// When a reading of the clock taken after the state was loaded is still behind it.
    IfFresh,
}

/// Why an issue could not happen now.
enum Blocked {
    /// The clock must first reach `until_tick`. `exhausted`: the tick (and the borrowing
    /// allowance) is full, as opposed to a clock that went back.
    Wait { until_tick: u64, logical_tick: u64, exhausted: bool },
    /// The layout's last tick is used up.
    End,
    /// The high-water mark must first be extended past `tick`.
    #[cfg(feature = "std")]
    Extend { tick: u64 },
}

/// Where the state word lives: in this generator (an isolated one, or any without `std`), or
/// somewhere its owner keeps alive (the in-process registry, a shared mapping). The generator
/// does not know which; the coordination layer above it (`crate::coord`) decides.
#[cfg(feature = "std")]
pub(crate) struct Cell {
    word: core::ptr::NonNull<AtomicU64>,
    /// What keeps `word` alive (`None`: a static).
    _owner: Option<std::sync::Arc<dyn Send + Sync>>,
}

// SAFETY: `word` points into memory that `_owner` keeps alive, and is only used atomically.
#[cfg(feature = "std")]
unsafe impl Send for Cell {}
#[cfg(feature = "std")]
unsafe impl Sync for Cell {}

#[cfg(feature = "std")]
impl Cell {
    /// The word `project(&owner)`, kept alive by `owner` (a word inside it, or in memory it
    /// owns, such as a mapping).
    pub(crate) fn new<T: Send + Sync + 'static>(
        owner: std::sync::Arc<T>,
        project: impl FnOnce(&T) -> &AtomicU64,
    ) -> Cell {
        let word = core::ptr::NonNull::from(project(&owner));
        Cell { word, _owner: Some(owner) }
    }

    /// A word of its own, on a cache line of its own.
    pub(crate) fn own() -> Cell {
        Cell::new(std::sync::Arc::new(Line::default()), |l| &l.0)
    }

    /// No word yet: for a generator that the coordination layer gives its state next
    /// ([`Generator::assemble`]), before any ID, so that making it allocates none. A static
    /// word at the end of every layout (all bits set), which nothing writes.
    pub(crate) fn closed() -> Cell {
        static END: AtomicU64 = AtomicU64::new(u64::MAX);
        Cell { word: core::ptr::NonNull::from(&END), _owner: None }
    }
}

/// The type of a generator's state word: a [`Cell`] with `std`, the word itself without.
#[cfg(feature = "std")]
type OwnCell = Cell;
#[cfg(not(feature = "std"))]
type OwnCell = AtomicU64;

/// A state word on a cache line of its own, for a state kept in this process's memory (the
/// others are in a host's record, whose words have lines of their own): a word in a small
/// allocation shares its line with whatever the allocator put beside it, and a thread that
/// writes there takes the line from the issuing threads. The lease bench read a Redis lease's
/// `next_id` at 1.30-1.76x plain in about one run in seven, with its words open all along (the
/// general path ran 8 times in such a run), before its word had a line of its own; one run in
/// 67 since (1.65x, the first run of a fresh build), whose cause was not found.
#[cfg(feature = "std")]
#[derive(Default)]
#[repr(align(64))]
pub(crate) struct Line(pub AtomicU64);

#[cfg(feature = "std")]
impl core::ops::Deref for Cell {
    type Target = AtomicU64;
    #[inline]
    fn deref(&self) -> &AtomicU64 {
        // SAFETY: see the type: the owner outlives `self`.
        unsafe { self.word.as_ref() }
    }
}

#[cfg(not(feature = "std"))]
type Cell = AtomicU64;

/// A high-water mark kept outside the process (a state file, a lease file, a Redis key): the
/// generator issues only at ticks below [`HighWater::reserved`], and asks [`HighWater::extend`]
/// to move it before it goes further. The generator knows nothing else of it.
#[cfg(feature = "std")]
pub(crate) trait HighWater: Send + Sync {
    /// The end of the reservation, an exclusive tick.
    fn reserved(&self) -> &AtomicU64;
    /// Makes the reservation reach past `tick`, durably, before returning; or fails, and the
    /// generator issues nothing at `tick`.
    fn extend(&self, tick: u64) -> Result<()>;
    /// Whether the generator may issue at the clock reading `now_ms` (a lease that lapsed
    /// may not, until it is claimed again here).
    fn check(&self, _now_ms: u64) -> Result<()> {
        Ok(())
    }
    /// Whether the mark's claim can change while the generator lives (a Redis lease that
    /// heals): then the generator reads [`HighWater::claim`] around each take.
    fn heals(&self) -> bool {
        false
    }
    /// The current claim: its generation (even; a seqlock that is odd while the claim
    /// changes) and the node bits it adds to every ID (the leased field's value).
    fn claim(&self) -> (u64, u64) {
        (0, 0)
    }
    /// Whether the claim of `generation` is still the current one: a slot taken while the
    /// claim changed is discarded (never issued), since it was checked against another
    /// claim's reservation.
    fn same_claim(&self, _generation: u64) -> bool {
        true
    }
    /// A lease's counts, when the mark is a lease.
    fn lease_stats(&self) -> Option<LeaseStats> {
        None
    }
    /// The words [`Generator::next_id_fast`] reads instead of calling [`HighWater::check`],
    /// [`HighWater::claim`] and [`HighWater::same_claim`]; `None` keeps the fast path off.
    fn fast(&self) -> Option<FastMark<'_>> {
        None
    }
}

/// What the one-ID fast path of a generator with a high-water mark reads (see
/// [`HighWater::fast`]): loads and compares, no call.
#[cfg(feature = "std")]
pub(crate) struct FastMark<'a> {
    /// The fast path issues only at (cheap) clock readings below this; 0 closes it. The mark
    /// keeps it at or below what [`HighWater::check`] would accept, with room for a cheap
    /// reading's lag, and lowers it before that stops being so.
    pub open_until: &'a AtomicU64,
    /// The last tick [`Generator::next_id_lean`] may issue at; 0 closes it. It reads the
    /// claim's words without the seqlock, so the mark keeps it so:
    /// - at or below what `open_until`, the reservation and the layout's end allow, set
    ///   after the words it comes from (and it is 0 while the claim's IDs have not started);
    /// - 0 in a child of `fork()` (`sys::zero_in_child`; a mark that cannot have that keeps
    ///   it 0);
    /// - stored 0 before a claim's words change, and set again only after the state word has
    ///   moved strictly up ([`Word::step_past`]) once they all changed.
    ///
    /// The lean path reads the state word first, then the claim's words and this one: its
    /// compare-and-swap succeeds only if no claim moved the state in between, so what it read
    /// is one claim's (a new claim's node bits come with a 0 here, or with its own tick).
    pub last_tick: &'a AtomicU64,
    /// The claim's seqlock (odd while it changes) and the node bits it adds to every ID, as
    /// [`HighWater::claim`] gives them.
    pub generation: &'a AtomicU64,
    pub node_bits: &'a AtomicU64,
    /// Two words that must be equal for the claim to be current (a host lease's claim epoch:
    /// this process's, and the host's), or none.
    pub same: Option<(&'a AtomicU64, &'a AtomicU64)>,
    /// The word [`Generator::next_id_plain`] reads for a lease whose claim is of its first
    /// value (see [`PlainWord`]), once that claim was made.
    pub plain: Option<PlainWord<'a>>,
}

/// A lease's word for [`Generator::next_id_plain`]: `last_tick`'s value while the claim is of
/// the lease's first value (and, for a host lease, no more than `bounds`), and 0 for good
/// once this process claims another value; with the node bits of that first value. The plain
/// path reads it in place of a validity's last tick, and adds those bits: its node bits never
/// change, so it needs no state word read first (see `plan_plain`).
#[cfg(feature = "std")]
pub(crate) struct PlainWord<'a> {
    pub last_tick: &'a AtomicU64,
    pub node_bits: u64,
    /// The validity's last tick that the word is kept at or below too (a host lease's: the
    /// host's record, whose every check tells the lease), or none (a lease of one process).
    pub bounds: Option<&'a AtomicU64>,
}

/// [`FastMark`]'s words, kept by the generator beside the mark they point into.
#[cfg(feature = "std")]
#[derive(Clone, Copy)]
struct MarkWords {
    open_until: core::ptr::NonNull<AtomicU64>,
    last_tick: core::ptr::NonNull<AtomicU64>,
    reserved: core::ptr::NonNull<AtomicU64>,
    generation: core::ptr::NonNull<AtomicU64>,
    node_bits: core::ptr::NonNull<AtomicU64>,
    same: Option<(core::ptr::NonNull<AtomicU64>, core::ptr::NonNull<AtomicU64>)>,
}

// SAFETY: the words are atomics, in memory the generator's `mark` keeps alive (see `assemble`).
#[cfg(feature = "std")]
unsafe impl Send for MarkWords {}
#[cfg(feature = "std")]
unsafe impl Sync for MarkWords {}

/// A bound on the clock readings a generator may issue at, kept by the coordination layer: a
/// host's record checks every so often that its file is still the one at its path (see
/// `coord::arbiter`). A reading at or past [`Validity::valid_until`] is first renewed with a
/// fresh reading, or the generator stops with the error of [`Validity::renew`].
#[cfg(feature = "std")]
pub(crate) trait Validity: Send + Sync {
    /// Readings below this may be issued at.
    fn valid_until(&self) -> &AtomicU64;
    /// Checks again, and moves [`Validity::valid_until`] past `fresh_ms` (a reading taken
    /// before the check), or fails.
    fn renew(&self, fresh_ms: u64) -> Result<()>;
    /// The same bound for [`Generator::next_id_plain`], in `layout`'s ticks: the last tick
    /// (1 or later) all of whose readings are below [`Validity::valid_until`], and below the
    /// layout's last tick; 0 for none. `None` where it is not kept for `layout`.
    fn last_valid_tick(&self, _layout: &Layout) -> Option<&AtomicU64> {
        None
    }
    /// Whether a child of `fork()` finds [`Validity::last_valid_tick`] at 0 (a record the
    /// process uses alone: `sys::zero_in_child`), which closes the plain path there as the
    /// general path's fork check would.
    fn closed_in_child(&self) -> bool {
        false
    }
    /// Told before a generator issues at a caller's reading (`next_id_at`, `reserve_at`),
    /// which may run ahead of the clock, up to [`Validity::valid_until`]. Every other reading
    /// is the generator's clock's, on the timeline of the record's (a clock given with
    /// [`Generator::map_clock`] keeps it).
    fn readings_may_lead(&self) {}
}

/// A word of 0: [`Plain::last_tick`] of a generator that the plain path does not serve.
#[cfg(feature = "std")]
static PLAIN_CLOSED: AtomicU64 = AtomicU64::new(0);

/// What [`Generator::next_id_plain`] reads beside the state word: the default generator's
/// fast path (the host's record, the cached monotonic clock, a layout of 1 ms ticks with the
/// sequence lowest, no state file, no rollover field, no spread start), that of `lease=local`
/// and `process_only`, whose record's last tick reads 0 in a child of `fork()`
/// ([`Validity::closed_in_child`]), and that of a lease across hosts of one process while its
/// claim is of its first value ([`FastMark::plain`]; the lean path serves it otherwise).
#[cfg(feature = "std")]
#[derive(Clone, Copy)]
struct Plain {
    /// Added to the clock cache's word (see `clock::cached`), the tick before the reading's:
    /// the clock's offset, the cache's `+ 1` and its read bit, the layout's epoch and that
    /// one tick, folded into one addition.
    bias: u64,
    /// The validity's [`Validity::last_valid_tick`] (or a lease's first value's word, see
    /// [`FastMark::plain`]), or [`PLAIN_CLOSED`].
    last_tick: core::ptr::NonNull<AtomicU64>,
    /// The node bits of every ID it issues: the generator's, and a lease's first value's.
    node_bits: u64,
}

// SAFETY: `last_tick` points at an atomic in memory the generator's `valid` keeps alive, or at
// a static.
#[cfg(feature = "std")]
unsafe impl Send for Plain {}
#[cfg(feature = "std")]
unsafe impl Sync for Plain {}

#[cfg(feature = "std")]
impl Plain {
    fn closed() -> Plain {
        Plain { bias: 0, last_tick: (&PLAIN_CLOSED).into(), node_bits: 0 }
    }
}

/// A word above every tick: [`Lean::last_tick`] of a generator without a validity.
#[cfg(feature = "std")]
static LEAN_OPEN: AtomicU64 = AtomicU64::new(u64::MAX);

/// What [`Generator::next_id_lean`] reads: the plain path's steps for a generator the plain
/// path does not serve (a lease across hosts, a state file, an isolated generator), with
/// what the general path checks beside them: the fork, the layout's end, and a lease's claim.
#[cfg(feature = "std")]
#[derive(Clone, Copy)]
struct Lean {
    /// Whether it applies: a layout of 1 ms ticks with the sequence lowest, the process's
    /// cached clock, no rollover field or spread start, and a lease (if any) that gives the
    /// fast path its words.
    on: bool,
    /// As [`Plain::bias`].
    bias: u64,
    /// The layout's last tick less one: a reading whose tick before is at or past it declines
    /// (the general path's `t >= max_tick`).
    limit: u64,
    /// The validity's [`Validity::last_valid_tick`], or [`LEAN_OPEN`] without a validity.
    last_tick: core::ptr::NonNull<AtomicU64>,
    /// Whether `last_tick` is a validity's (not [`LEAN_OPEN`]): a lease's path reads it only then.
    valid: bool,
}

// SAFETY: as `Plain`'s.
#[cfg(feature = "std")]
unsafe impl Send for Lean {}
#[cfg(feature = "std")]
unsafe impl Sync for Lean {}

#[cfg(feature = "std")]
impl Lean {
    fn closed() -> Lean {
        Lean { on: false, bias: 0, limit: 0, last_tick: (&LEAN_OPEN).into(), valid: false }
    }
}

/// What a generator says about itself and its general path reads, which its fast paths do
/// not: 1.2 KB of its 1.6, kept in a box where there is an allocator, so that a generator
/// made per request moves less on its way to its caller (a front end moves it several times).
struct About {
    layout: Layout,
    node: Node,
    /// Where the layout, node values and options came from (the code's, unless the
    /// environment's configuration made the generator).
    provenance: Provenance,
}

/// [`About`]'s place: a box with `std`, inline without.
#[cfg(feature = "std")]
type Kept<T> = std::boxed::Box<T>;
#[cfg(not(feature = "std"))]
type Kept<T> = T;

#[cfg(feature = "std")]
fn keep<T>(value: T) -> Kept<T> {
    std::boxed::Box::new(value)
}
#[cfg(not(feature = "std"))]
fn keep<T>(value: T) -> Kept<T> {
    value
}

/// A Snowflake ID generator. `Send + Sync`: share one between threads (behind an `Arc` or a
/// `static`).
///
/// ```
/// use snowflake_core::{Generator, Layout, Options};
/// let layout = Layout::parse("twitter").unwrap();
/// let node = layout.parse_node("datacenter=1,worker=3").unwrap();
/// let generator = Generator::new(&layout, node, Options::default()).unwrap();
/// let (a, b) = (generator.next_id().unwrap(), generator.next_id().unwrap());
/// assert!(a < b);
/// let parts = layout.decode(a).unwrap();
/// assert_eq!(layout.node_values(&parts.node).collect::<Vec<_>>(), [("datacenter", 1), ("worker", 3)]);
/// ```
pub struct Generator<C: Clock = DefaultClock> {
    /// First, so that it is dropped first: a state file's reservation is closed (its last
    /// record written, its lock released) before the state's owner goes (a run lock, which
    /// the next process waits for, and then finds the state file free).
    #[cfg(feature = "std")]
    mark: Option<std::sync::Arc<dyn HighWater>>,
    /// The bound on clock readings, and what renews it: the bound is read on the fast path
    /// through the cell (no virtual call).
    #[cfg(feature = "std")]
    valid: Option<(Cell, std::sync::Arc<dyn Validity>)>,
    /// Where a rollover generator records the highest tick it leaves behind when it bumps its
    /// counter (the host's record: the next holder of the identity starts above it).
    #[cfg(feature = "std")]
    high: Option<Cell>,
    cell: Cell,
    clock: C,
    /// The layout, node values and provenance (see [`About`]).
    about: Kept<About>,
    policy: Policy,
    node_bits: u64,
    seq_cap: u64,
    stride: u64,
    /// The one-ID fast path's constants (see [`Generator::next_id_fast`]): whether it applies
    /// (no rollover field, sequences from 0), and the layout's numbers it needs.
    fast: Fast,
    /// The default generator's fast path (see [`Generator::next_id_plain`]), planned by
    /// [`Generator::plan_plain`] whenever what it depends on changes.
    #[cfg(feature = "std")]
    plain: Plain,
    /// The fast path of the generators the plain one does not serve (see
    /// [`Generator::next_id_lean`]), planned with it.
    #[cfg(feature = "std")]
    lean: Lean,
    roll_bits: u32,
    roll_shift: u32,
    word: Word,
    drift_ticks: u64,
    max_tick: u64,
    counters: Counters,
    /// The fork generation the generator was made in, when its state must not be used in a
    /// child of `fork()` (any state but a shared mapping).
    #[cfg(feature = "std")]
    fork_generation: Option<u64>,
    /// Whether `mark` heals (see [`HighWater::heals`]), asked once.
    #[cfg(feature = "std")]
    heals: bool,
    /// The mark's words for the fast path (see [`HighWater::fast`]): they point into `mark`,
    /// which lives as long as the generator.
    #[cfg(feature = "std")]
    fast_mark: Option<MarkWords>,
    /// The node field a lease claimed (its value is in `node`, or comes from the mark's
    /// claim when the mark heals).
    #[cfg(feature = "std")]
    lease_field: Option<usize>,
    /// Whether the state outlives the call beyond this generator's caller (every generator
    /// but an isolated one): a caller's time far ahead of the clock is then refused.
    shared_state: bool,
}

impl<C: Clock> core::fmt::Debug for Generator<C> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Generator({}, node=", self.about.layout)?;
        let mut sep = "";
        for (name, v) in self.about.layout.node_values(&self.about.node) {
            write!(f, "{sep}{name}={v}")?;
            sep = ",";
        }
        write!(f, ", {})", self.policy)
    }
}

impl<C: Clock> Generator<C> {
    /// A generator with its own state and `clock`: for tests, replays and traces. It shares
    /// nothing, so two isolated generators with the same node values *can* issue the same IDs.
    pub fn isolated(layout: &Layout, node: Node, options: Options, clock: C) -> Result<Self> {
        layout.check_node_named(&node, options.rollover_bit(layout))?;
        Generator::build(layout, node, options.policy(), clock)
    }

    /// A generator over `cell` (and `mark`), for the coordination layer, which has checked
    /// `layout`, `node` and `options` with [`Generator::build`] first. `forks`: whether the
    /// state stays valid in a child of `fork()` (a shared mapping) or must refuse there.
    #[cfg(feature = "std")]
    pub(crate) fn assemble(
        &mut self,
        cell: Cell,
        mark: Option<std::sync::Arc<dyn HighWater>>,
        survives_fork: bool,
    ) {
        self.cell = cell;
        self.shared_state = true;
        self.heals = mark.as_ref().is_some_and(|m| m.heals());
        // A high-water mark is checked on the general path, unless it gives the fast path the
        // words to check it with.
        self.fast_mark = mark.as_ref().and_then(|m| {
            m.fast().map(|f| MarkWords {
                open_until: f.open_until.into(),
                last_tick: f.last_tick.into(),
                reserved: m.reserved().into(),
                generation: f.generation.into(),
                node_bits: f.node_bits.into(),
                same: f.same.map(|(a, b)| (a.into(), b.into())),
            })
        });
        self.fast.on &= mark.is_none() || self.fast_mark.is_some();
        self.mark = mark;
        self.fork_generation = if survives_fork { None } else { Some(crate::sys::fork_generation()) };
        self.plan_plain();
    }

    /// Opens [`Generator::next_id_plain`] to this generator where it applies, with the
    /// numbers it needs; closes it elsewhere (it then finds a last tick of 0, and leaves every
    /// call to [`Generator::next_id_general`]).
    #[cfg(feature = "std")]
    fn plan_plain(&mut self) {
        self.plain = Plain::closed();
        self.lean = Lean::closed();
        let f = &self.fast;
        // What both paths leave out: a rollover field or a spread start (`on`), ticks other
        // than 1 ms (the reading is the tick), a sequence above other fields, a clock other
        // than the process's cache. (`on` is off too for a high-water mark that gives the
        // fast path no words to check it with.)
        if !f.on || f.tick_ms != 1 || f.seq_shift != 0 {
            return;
        }
        let Some(offset_ms) = self.clock.monotonic_offset_ms() else { return };
        // The cache's word is `(raw + 1) | READ`; the reading is `raw + offset_ms`; its tick,
        // less one, is `reading - epoch_ms - 1`. Wrapping: a reading before the epoch comes out
        // far above any last tick, and goes to the general path, as does the epoch's tick 0.
        let bias = (offset_ms as u64)
            .wrapping_sub(1)
            .wrapping_sub(crate::clock::CACHE_READ)
            .wrapping_sub(f.epoch_ms)
            .wrapping_sub(1);
        let (last_tick, closed_in_child) = match &self.valid {
            Some((_, v)) => match v.last_valid_tick(&self.about.layout) {
                Some(last) => (last, v.closed_in_child()),
                // A validity not kept in ticks: only the general path checks it.
                None => return,
            },
            None => (&LEAN_OPEN, false),
        };
        // The plain path leaves out, beyond: a check for fork() (a state of this process
        // alone, unless its last tick reads 0 in a child: `lease=local`, `process_only`), a
        // high-water mark (a state file, a lease), and the layout's end apart from the
        // validity's last tick, which a host's record keeps below it.
        let fork_closes = self.fork_generation.is_none() || closed_in_child;
        if fork_closes && self.mark.is_none() && self.valid.is_some() {
            self.plain = Plain { bias, last_tick: last_tick.into(), node_bits: self.node_bits };
            return;
        }
        self.lean = Lean {
            on: true,
            bias,
            limit: self.max_tick.saturating_sub(1),
            last_tick: last_tick.into(),
            valid: self.valid.is_some(),
        };
        // A lease, while this process's claim is of its first value, is served by the plain
        // path too (the lean one where that declines): the lease's word bounds what the lean
        // path's last tick does (the lease's validity and reservation, the layout's end, and
        // the fork: 0 in a child; a host lease's, the host's record too), and closes for good
        // before this process claims another value. The node bits it adds are then fixed, so
        // reading the word before the state word is safe, as it is for a validity: a reading
        // of the word while it was open issues at a tick that claim covered (its validity,
        // and a reservation stored while the value was ours), from a slot the state word
        // gives once, and a claim of the same value again starts the state word above every
        // tick the word allowed before.
        //
        // A host lease's claim can change in another process of the host (the lean path
        // compares the epochs; this one does not). The old claim's IDs stay unique all the
        // same: every process of the host takes its slots from the one state word, whatever
        // value it adds, and a value the host lost is claimed elsewhere only past what its
        // holder may issue (its validity ends before the store's TTL; a store that lost the
        // claim starts the next holder past any reservation window). The process joins the
        // new claim at its next general call, within 50 ms: the word is bounded by the host's
        // record, which that call checks, and the lease then compares the epochs.
        #[cfg(feature = "lease-remote")]
        if let Some(w) = self.mark.as_ref().and_then(|m| m.fast()).and_then(|f| f.plain) {
            // The word stands for the validity's last tick too only where it is kept below it.
            if self.valid.is_none() || w.bounds.is_some_and(|b| core::ptr::eq(b, last_tick)) {
                self.plain =
                    Plain { bias, last_tick: w.last_tick.into(), node_bits: self.node_bits | w.node_bits };
            }
        }
    }

    /// Raises the state to the start of tick `floor`, if it is below (a hosted state's new run).
    #[cfg(feature = "std")]
    pub(crate) fn raise_floor(&self, floor: u64) {
        self.word.raise_to(&self.cell, floor);
    }

    /// The end of the high-water mark's reservation, when there is one.
    #[cfg(feature = "std")]
    pub(crate) fn mark_reserved(&self) -> Option<&AtomicU64> {
        self.mark.as_ref().map(|m| m.reserved())
    }

    /// This generator, recording in `high` the highest tick it leaves behind when it bumps its
    /// rollover counter.
    #[cfg(feature = "std")]
    pub(crate) fn set_high(&mut self, high: Cell) {
        self.high = Some(high);
    }

    /// This generator, issuing only at clock readings that `validity` allows. Its state word
    /// lives in memory that another process may lose (a file removed, truncated): a word of 0
    /// there is never a state to issue from, and a wait first checks again.
    #[cfg(feature = "std")]
    pub(crate) fn set_validity<V: Validity + 'static>(&mut self, validity: std::sync::Arc<V>) {
        let bound = Cell::new(validity.clone(), |v| v.valid_until());
        self.valid = Some((bound, validity));
        self.plan_plain();
    }

    /// Checks the reading `now_ms` against the validity bound, renewing it if need be.
    #[inline]
    fn check_valid(&self, now_ms: u64) -> Result<()> {
        #[cfg(feature = "std")]
        if let Some((bound, validity)) = &self.valid {
            if now_ms >= bound.load(Ordering::Acquire) {
                let fresh_ms = self.clock.now_ms();
                validity.renew(fresh_ms)?;
                let until = bound.load(Ordering::Acquire);
                if now_ms >= until {
                    // Only a caller's reading (`next_id_at`) can be this far ahead of the
                    // clock: no check of the record covers it, so it is refused, as a time
                    // too far ahead is on every state that outlives the call (the record's
                    // bound is the tighter one: what a record made anew starts past).
                    return Err(Error::AheadOfClock {
                        unix_ms: now_ms,
                        ahead_ms: now_ms.saturating_sub(fresh_ms),
                        max_unix_ms: until - 1,
                    });
                }
            }
        }
        #[cfg(not(feature = "std"))]
        let _ = now_ms;
        Ok(())
    }

    /// Refuses a caller's time further ahead of the clock than `max_drift_ms` +
    /// [`AHEAD_SLACK_MS`] (in whole ticks), for a state that outlives the call.
    fn check_ahead(&self, unix_ms: u64) -> Result<()> {
        let (epoch, tick) = (self.about.layout.epoch_ms(), self.about.layout.tick_ms());
        let now_ms = self.clock.now_ms();
        let ahead_ticks = self.policy.max_drift_ms.saturating_add(AHEAD_SLACK_MS) / tick;
        let max_tick = (now_ms.saturating_sub(epoch) / tick).saturating_add(ahead_ticks);
        // The last instant of that tick.
        let max_unix_ms =
            max_tick.saturating_add(1).saturating_mul(tick).saturating_add(epoch).saturating_sub(1);
        if unix_ms > max_unix_ms {
            return Err(Error::AheadOfClock {
                unix_ms,
                ahead_ms: unix_ms.saturating_sub(now_ms),
                max_unix_ms,
            });
        }
        Ok(())
    }

    /// The state word's format.
    pub(crate) const fn word_format(&self) -> Word {
        self.word
    }

    /// Marks `field` as claimed by a lease, whose value is `node`'s. With a mark that heals,
    /// the value comes from the mark's claim instead: the generator's own node bits leave
    /// the field at 0.
    #[cfg(feature = "std")]
    pub(crate) fn set_leased(&mut self, node: Node, field: usize, from_mark: bool) {
        self.about.node = node;
        self.node_bits = if from_mark {
            self.about.layout.node_bits(&node.with(field, 0))
        } else {
            self.about.layout.node_bits(&node)
        };
        self.lease_field = Some(field);
    }

    /// The generator's clock, replaced (the coordination layer gives a shared state's
    /// generators the clock anchored in the shared file).
    #[cfg(feature = "std")]
    pub(crate) fn set_clock(&mut self, clock: C) {
        self.clock = clock;
        self.plan_plain();
    }

    /// Checks `layout`, `node` and `options` together and makes an isolated generator.
    pub(crate) fn build(layout: &Layout, node: Node, policy: Policy, clock: C) -> Result<Self> {
        #[cfg(feature = "std")]
        let own = Cell::own();
        #[cfg(not(feature = "std"))]
        let own = AtomicU64::new(0);
        #[allow(unused_mut)]
        let mut g = Generator::build_in(layout, node, policy, clock, own)?;
        // A generator of its own state (an isolated one) goes the lean way where it applies;
        // the coordination layer plans again as it adds a state, a validity or a mark.
        #[cfg(feature = "std")]
        g.plan_plain();
        Ok(g)
    }

    /// [`Generator::build`] over `cell`, for a generator that [`Generator::assemble`] completes
    /// (which plans its paths).
    #[cfg(feature = "std")]
    pub(crate) fn build_over(
        layout: &Layout,
        node: Node,
        policy: Policy,
        clock: C,
        cell: Cell,
    ) -> Result<Self> {
        Generator::build_in(layout, node, policy, clock, cell)
    }

    fn build_in(layout: &Layout, node: Node, policy: Policy, clock: C, cell: OwnCell) -> Result<Self> {
        let seq = layout.sequence();
        let seq_cap = layout.capacity_per_tick();
        if let SequenceStart::Spread(k) = policy.sequence_start {
            if k == 0 || k > seq_cap {
                return Err(Error::ValueRange {
                    name: Name::snippet("sequence_start spread"),
                    value: i128::from(k),
                    min: 1,
                    max: seq_cap,
                });
            }
        }
        for (i, f) in layout.node_fields() {
            if node.get(i) > f.max() {
                return Err(Error::ValueRange {
                    name: Name::snippet(f.name()),
                    value: i128::from(node.get(i)),
                    min: 0,
                    max: f.max(),
                });
            }
        }
        let (mut roll_bits, mut roll_shift) = (0, 0);
        if let Some(r) = policy.rollover {
            let (i, f) = layout.field(r.as_str()).ok_or_else(|| layout.unknown_field(r.as_str()))?;
            if f.kind() != FieldKind::Node {
                return Err(Error::NotANodeField { name: r });
            }
            if node.get(i) != 0 {
                return Err(Error::BadOption {
                    name: r,
                    reason: "the rollover field is set by the generator: give it no node value",
                });
            }
            roll_bits = u32::from(f.bits());
            roll_shift = u32::from(f.shift());
        }
        let g = Generator {
            #[cfg(feature = "std")]
            mark: None,
            #[cfg(feature = "std")]
            valid: None,
            #[cfg(feature = "std")]
            high: None,
            cell,
            clock,
            about: keep(About { layout: *layout, node, provenance: Provenance::CODE }),
            policy,
            node_bits: layout.node_bits(&node),
            seq_cap,
            stride: 1 << seq.shift(),
            #[cfg(feature = "std")]
            plain: Plain::closed(),
            #[cfg(feature = "std")]
            lean: Lean::closed(),
            fast: Fast {
                on: roll_bits == 0 && policy.sequence_start == SequenceStart::Zero,
                epoch_ms: layout.epoch_ms(),
                tick_ms: layout.tick_ms(),
                seq_bits: seq.bits().into(),
                time_shift: layout.time().shift().into(),
                seq_shift: seq.shift().into(),
            },
            roll_bits,
            roll_shift,
            word: Word::new(seq.bits().into(), roll_bits, layout.max_tick()),
            drift_ticks: policy.max_drift_ms / layout.tick_ms(),
            max_tick: layout.max_tick(),
            counters: Counters::default(),
            #[cfg(feature = "std")]
            fork_generation: Some(crate::sys::fork_generation()),
            #[cfg(feature = "std")]
            heals: false,
            #[cfg(feature = "std")]
            fast_mark: None,
            #[cfg(feature = "std")]
            lease_field: None,
            shared_state: false,
        };
        Ok(g)
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.about.layout
    }
    /// The node values.
    pub fn node(&self) -> &Node {
        &self.about.node
    }
    /// The policy: what the generator does when the clock does not let it issue at once.
    pub const fn policy(&self) -> &Policy {
        &self.policy
    }
    /// The clock.
    pub const fn clock(&self) -> &C {
        &self.clock
    }
    /// Where the layout, node values and each option came from: the code, an environment
    /// variable, or the default ([`Provenance::CODE`] for a generator made by `new`; the
    /// environment's configuration records its own).
    pub fn provenance(&self) -> &Provenance {
        &self.about.provenance
    }
    /// This generator, recording `provenance` as where its values came from.
    pub fn with_provenance(mut self, provenance: Provenance) -> Self {
        self.set_provenance(provenance);
        self
    }

    /// Records `provenance` in place.
    pub(crate) fn set_provenance(&mut self, provenance: Provenance) {
        self.about.provenance = provenance;
    }

    #[inline]
    fn start(&self, tick: u64) -> u64 {
        self.policy.sequence_start.start(tick)
    }

    /// One compare-and-swap: takes up to `want` slots at clock tick `t`. Returns the tick, the
    /// rollover value, the first sequence number and the count.
    #[inline]
    fn take(
        &self,
        mut t: u64,
        want: u64,
        allow_ahead: bool,
        may_roll: Roll,
        zero_checked: bool,
    ) -> core::result::Result<(u64, u64, u64, u64), Blocked> {
        #[cfg(not(feature = "std"))]
        let _ = zero_checked;
        let cell: &AtomicU64 = &self.cell;
        let mut cur = cell.load(Ordering::Acquire);
        loop {
            // A mapped state that reads 0 may have been lost (its file truncated and grown
            // again): the check before a wait says so, or finds the record whole, and then 0
            // is a state (tick 0 with nothing issued: a layout whose epoch is this tick).
            #[cfg(feature = "std")]
            if cur == 0 && self.valid.is_some() && !zero_checked {
                return Err(Blocked::Wait { until_tick: u64::MAX, logical_tick: u64::MAX, exhausted: false });
            }
            let (l, r, s) = self.word.unpack(cur);
            let (tick, roll, seq) = if t > l {
                (t, r, self.start(t))
            } else if t == l {
                (l, r, s.max(self.start(l)))
            } else {
                let ahead = l - t;
                // A carry out of a full tick leaves s == 0 one tick past the allowance.
                let exhausted = s == 0 && ahead == self.drift_ticks.saturating_add(1);
                if allow_ahead && ahead <= self.drift_ticks {
                    (l, r, s.max(self.start(l)))
                } else if may_roll != Roll::Never
                    && allow_ahead
                    && !exhausted
                    && self.roll_bits > 0
                    && r < (1 << self.roll_bits) - 1
                {
                    // The reading `t` may be older than the state just loaded: a thread
                    // preempted since its reading finds the state moved ahead by the others,
                    // with the clock. Only a reading taken after the load may judge.
                    if may_roll == Roll::IfFresh {
                        let fresh = self.about.layout.tick_of(self.clock.now_ms()).unwrap_or(t);
                        if fresh > t {
                            t = fresh;
                            continue;
                        }
                    }
                    // Recorded before the bump: the state's tick is about to go below it.
                    #[cfg(feature = "std")]
                    if let Some(high) = &self.high {
                        high.fetch_max(l.saturating_add(1), Ordering::AcqRel);
                    }
                    (t, r + 1, self.start(t))
                } else {
                    let until_tick = if allow_ahead { l - self.drift_ticks } else { l };
                    return Err(Blocked::Wait { until_tick, logical_tick: l, exhausted });
                }
            };
            if tick > self.max_tick {
                return Err(Blocked::End);
            }
            let room = if tick == self.max_tick { self.seq_cap - 1 } else { self.seq_cap };
            if seq >= room {
                return Err(Blocked::End);
            }
            #[cfg(feature = "std")]
            if let Some(mark) = &self.mark {
                if tick >= mark.reserved().load(Ordering::Acquire) {
                    return Err(Blocked::Extend { tick });
                }
            }
            let n = want.min(room - seq);
            let next = if seq + n == self.seq_cap {
                self.word.pack(tick + 1, roll, 0)
            } else {
                self.word.pack(tick, roll, seq + n)
            };
            match cell.compare_exchange_weak(cur, next, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    if roll != r {
                        self.counters.rollovers.fetch_add(1, Ordering::Relaxed);
                    }
                    return Ok((tick, roll, seq, n));
                }
                Err(now) => {
                    // Lost to another thread or process: a pause before trying again, so
                    // that the winner keeps the state's cache line for its next IDs (see
                    // `take_one_at`).
                    core::hint::spin_loop();
                    cur = now;
                }
            }
        }
    }

    /// [`Generator::take`] as a block of IDs, counted; extends a durable reservation first
    /// where one is needed.
    #[inline]
    fn take_block(
        &self,
        t: u64,
        want: u64,
        allow_ahead: bool,
        may_roll: Roll,
        zero_checked: bool,
    ) -> Result<core::result::Result<Block, Blocked>> {
        loop {
            // A lease that heals: the claim (its node bits) read before the take, and checked
            // unchanged after it.
            #[cfg(feature = "std")]
            let (generation, claimed_bits) = match (&self.mark, self.heals) {
                (Some(mark), true) => mark.claim(),
                _ => (0, 0),
            };
            #[cfg(not(feature = "std"))]
            let claimed_bits = 0;
            return Ok(match self.take(t, want, allow_ahead, may_roll, zero_checked) {
                Ok((tick, roll, seq, count)) => {
                    #[cfg(feature = "std")]
                    if self.heals && !self.mark.as_ref().is_some_and(|m| m.same_claim(generation)) {
                        continue; // the slots are dropped, never issued
                    }
                    self.counters.issued.add(count);
                    let first = self.about.layout.compose_raw(tick, self.node_bits | claimed_bits, seq)
                        | (roll << self.roll_shift);
                    Ok(Block { first, count, stride: self.stride })
                }
                #[cfg(feature = "std")]
                Err(Blocked::Extend { tick }) => {
                    if let Some(mark) = &self.mark {
                        mark.extend(tick)?;
                    }
                    continue;
                }
                Err(blocked) => Err(blocked),
            });
        }
    }

    #[inline]
    fn check_fork(&self) -> Result<()> {
        #[cfg(feature = "std")]
        if self.fork_generation.is_some_and(|g| g != crate::sys::current_fork_generation()) {
            return Err(Error::Forked);
        }
        Ok(())
    }

    /// Takes up to `want` IDs at the caller's reading `caller_ms`, or else at the clock's;
    /// waits for the clock (`wait`) at most `max_wait_ms`.
    #[inline]
    fn block_at(&self, caller_ms: Option<u64>, want: u64, max_wait_ms: u64, wait: bool) -> Result<Block> {
        self.check_fork()?;
        if let (Some(unix_ms), true) = (caller_ms, self.shared_state) {
            self.check_ahead(unix_ms)?;
        }
        let live = caller_ms.is_none();
        #[cfg(feature = "std")]
        if let (false, Some((_, validity))) = (live, &self.valid) {
            validity.readings_may_lead();
        }
        // A generator guarded by a high-water mark (a lease's validity) reads the clock afresh;
        // the others take the clock's cheap reading first, which may lag by a tick.
        #[cfg(feature = "std")]
        let fresh_first = self.mark.is_some();
        #[cfg(not(feature = "std"))]
        let fresh_first = false;
        let mut now_ms = match caller_ms {
            Some(ms) => ms,
            None if fresh_first => self.clock.now_ms(),
            None => self.clock.now_ms_cached(),
        };
        // Whether `now_ms` is a fresh reading (or the caller's), which waits are timed from.
        let mut fresh = !live || fresh_first;
        let mut deadline = now_ms.saturating_add(max_wait_ms);
        // Whether a fresh reading, taken after the state was found ahead, confirmed that the
        // clock is behind: only then may the rollover field be bumped. A thread preempted
        // between its reading and its compare-and-swap finds the state moved ahead by the
        // others, with the clock: that is no clock behind, and the reading taken after says so.
        // The caller's clock is taken at its word.
        let mut confirmed = !live;
        // Whether a state word of 0 was found with the record whole (see `take`).
        #[cfg(feature = "std")]
        let mut zero_checked = false;
        #[cfg(not(feature = "std"))]
        let zero_checked = false;
        loop {
            let t = self.about.layout.tick_of(now_ms)?;
            self.check_valid(now_ms)?;
            #[cfg(feature = "std")]
            if let Some(mark) = &self.mark {
                mark.check(now_ms)?;
            }
            let roll = match (confirmed, live) {
                (false, _) => Roll::Never,
                (true, true) => Roll::IfFresh,
                (true, false) => Roll::AtReading,
            };
            match self.take_block(t, want, true, roll, zero_checked)? {
                Ok(block) => return Ok(block),
                Err(Blocked::End) => {
                    let layout = &self.about.layout;
                    return Err(layout.time_range_error(layout.last_unix_ms().saturating_add(1)));
                }
                #[cfg(feature = "std")]
                Err(Blocked::Extend { .. }) => unreachable!("take_block extends the mark"),
                Err(Blocked::Wait { until_tick, logical_tick, exhausted }) => {
                    // A state that may have been lost (removed, truncated: it then reads far
                    // ahead, or 0) is checked before anything is judged from it.
                    #[cfg(feature = "std")]
                    if let Some((_, validity)) = &self.valid {
                        validity.renew(self.clock.now_ms())?;
                        if until_tick == u64::MAX {
                            if zero_checked {
                                return Err(Error::shared_mismatch(
                                    "removed",
                                    "the host's record of this layout and node values reads as empty: it was truncated or overwritten while in use; this generator stops issuing (a new one joins the record anew)",
                                ));
                            }
                            // The record is whole at its name: its 0 is a state.
                            zero_checked = true;
                            continue;
                        }
                    }
                    if live {
                        // Before judging, read the clock again, and again while it moves (the
                        // loop repeats only when time has passed, or once to confirm).
                        let reading = self.clock.now_ms();
                        if !fresh {
                            fresh = true;
                            deadline = reading.saturating_add(max_wait_ms);
                        }
                        if reading > now_ms {
                            now_ms = reading;
                            continue;
                        }
                        if !confirmed {
                            confirmed = true;
                            continue;
                        }
                    }
                    let target = self.about.layout.unix_ms_of(until_tick);
                    if !exhausted {
                        self.counters.clock_behind.fetch_add(1, Ordering::Relaxed);
                    }
                    if !wait || target > deadline {
                        let retry_after_ms = target.saturating_sub(now_ms);
                        let behind_ms = self.about.layout.unix_ms_of(logical_tick).saturating_sub(now_ms);
                        return Err(if exhausted {
                            Error::SequenceExhausted { retry_after_ms }
                        } else if live {
                            Error::ClockBehind { behind_ms, retry_after_ms }
                        } else {
                            // The caller's time is behind: waiting is no answer, another
                            // generator is (for a replay) or a later time.
                            Error::BehindState {
                                unix_ms: now_ms,
                                behind_ms,
                                retry_after_ms,
                                shared: self.shared_state,
                            }
                        });
                    }
                    self.clock.wait_until_ms(target);
                    let after = self.clock.now_ms();
                    self.counters.waits.fetch_add(1, Ordering::Relaxed);
                    self.counters.waited_ms.fetch_add(after.saturating_sub(now_ms), Ordering::Relaxed);
                    now_ms = after;
                }
            }
        }
    }

    /// The next ID. Waits for the clock (at most `max_wait_ms`) when the tick is full or the
    /// clock is behind, then fails with [`Error::SequenceExhausted`] or [`Error::ClockBehind`].
    #[inline(always)]
    pub fn next_id(&self) -> Result<u64> {
        match self.next_id_fast() {
            Some(id) => Ok(id),
            None => self.one_at_clock(self.policy.max_wait_ms, true),
        }
    }

    /// The next ID without ever blocking: fails at once where [`Generator::next_id`] would wait.
    #[inline(always)]
    pub fn try_next_id(&self) -> Result<u64> {
        match self.next_id_fast() {
            Some(id) => Ok(id),
            None => self.one_at_clock(0, false),
        }
    }

    /// One ID by the general rules, where the fast path declined: a call of its own, so that
    /// `next_id`, inlined into its callers, is the fast path and this call.
    #[inline(never)]
    fn one_at_clock(&self, max_wait_ms: u64, wait: bool) -> Result<u64> {
        self.block_at(None, 1, max_wait_ms, wait).map(|b| b.first)
    }

    /// One ID in the common case, with the fewest steps: the clock's (cheap) reading is the
    /// state's tick with room left, or a later tick; one compare-and-swap. `None` sends the
    /// caller to [`Generator::next_id`] (or [`Generator::try_next_id`]), whose general path
    /// handles everything else (a full tick, a clock behind, a rollover field, a spread
    /// start, a reservation to extend, a lease to check, renew or claim again, the layout's
    /// last tick, a run of lost compare-and-swaps, a fork) by the same rules. A lease is
    /// checked here with loads only: its validity (kept by the lease below what its renewals
    /// allow, with room for the cheap reading's lag), its claim, and its reservation. It never
    /// waits, fails or panics, so a front end may call it before its error and panic boundary
    /// (the C library does).
    ///
    /// ```
    /// use snowflake_core::{Generator, Layout, Options};
    /// let g = Generator::new(&Layout::parse("twitter")?, Default::default(),
    ///     Options { isolated: true, ..Options::default() })?;
    /// let id = match g.next_id_fast() { Some(id) => id, None => g.next_id()? };
    /// assert!(g.next_id()? > id);
    /// # Ok::<(), snowflake_core::Error>(())
    /// ```
    #[inline(always)]
    pub fn next_id_fast(&self) -> Option<u64> {
        #[cfg(feature = "std")]
        if let Some(id) = self.next_id_plain() {
            return Some(id);
        }
        self.next_id_general()
    }

    /// The fast path of the default generator (see `plan_plain` for where it applies): the
    /// same rules as [`Generator::next_id_general`], with what cannot change folded into
    /// fewer steps. Its cost beside a peer's (ferroid's lock-free generator, which has no
    /// host's record, no validity, no count, and a layout fixed at compile time) is what
    /// issue 44 measured; every step below says what it keeps.
    ///
    /// - The reading: the clock cache's word, taken only with its read bit set (the ticker
    ///   runs, and this millisecond was read, so the ticker stays up): anything else goes to
    ///   the general path, whose reading marks it or reads the clock itself.
    /// - One comparison of the tick with the host record's last valid tick (kept below the
    ///   layout's last tick): the validity every 50 ms, a reading before the epoch (it wraps
    ///   far above), the layout's end, and whether this path applies at all (0 where not).
    /// - The slot: the state word itself when it is at the reading's tick (its next free
    ///   slot; the next is one more, which carries into the next tick after the last), else
    ///   the tick's first when the word is below it; a word past the tick (full, or ahead of
    ///   the clock) goes to the general path, as a word of 0 does (a lost record).
    /// - One compare-and-swap, the count in this thread's own slot, the ID composed.
    #[cfg(feature = "std")]
    #[inline(always)]
    fn next_id_plain(&self) -> Option<u64> {
        let word = crate::clock::cache_word();
        if word & crate::clock::CACHE_READ == 0 {
            return None;
        }
        let before = word.wrapping_add(self.plain.bias);
        // SAFETY: see `Plain`: a word the generator's `valid` keeps alive, or a static.
        if before >= unsafe { self.plain.last_tick.as_ref() }.load(Ordering::Acquire) {
            return None;
        }
        let t = before + 1;
        let seq = self.take_one_at(t)?;
        self.counters.issued.add(1);
        Some((t << self.fast.time_shift) | self.plain.node_bits | seq)
    }

    /// The slot of tick `t` that [`Generator::next_id_plain`] describes, taken with one
    /// compare-and-swap (the plain and lean paths share it); its sequence. `None` sends the
    /// caller to the general path, also for a compare-and-swap lost to another thread: the
    /// general path tries again (a loop here would be unrolled, and the path too big to inline).
    ///
    /// A lost compare-and-swap pauses first (`spin_loop`, as ferroid's generator does), and so
    /// does each one the general path loses: threads that share a generator take turns on the
    /// state's cache line, and a thread that tries again at once takes the line from the one
    /// that just won it, before that one's next ID. On a 2-CPU AMD EPYC VM, two threads sharing
    /// one generator read 1.07-1.19x ferroid without the pause and 0.84-0.89x with it in most
    /// runs (not all: two read 1.12 and 1.14x; `scripts/bench-ablate.sh`, its
    /// `no-pause-on-lost-swap` build). One thread never loses, and pays nothing.
    #[cfg(feature = "std")]
    #[inline(always)]
    fn take_one_at(&self, t: u64) -> Option<u64> {
        self.take_from(self.cell.load(Ordering::Acquire), t)
    }

    /// [`Generator::take_one_at`] from the state word `cur`, read already: its slot at tick
    /// `t`, taken with one compare-and-swap from `cur`.
    #[cfg(feature = "std")]
    #[inline(always)]
    fn take_from(&self, cur: u64, t: u64) -> Option<u64> {
        let base = t << self.fast.seq_bits;
        let (slot, seq) = if cur >= base {
            let seq = cur - base;
            if seq >= self.seq_cap {
                return None;
            }
            (cur, seq)
        } else if cur == 0 {
            return None;
        } else {
            (base, 0)
        };
        if self.cell.compare_exchange(cur, slot + 1, Ordering::AcqRel, Ordering::Acquire).is_err() {
            core::hint::spin_loop();
            return None;
        }
        Some(seq)
    }

    /// The plain path's steps for the generators it does not serve (see [`Lean`]): the one
    /// comparison with the last valid tick, and one with the layout's end; then, with a lease,
    /// its claim ([`Generator::next_id_claimed`]), else the fork check; one compare-and-swap.
    /// Anything else goes on to the general path's rules.
    #[cfg(feature = "std")]
    #[inline(always)]
    fn next_id_lean(&self) -> Option<u64> {
        let l = &self.lean;
        if !l.on {
            return None;
        }
        let word = crate::clock::cache_word();
        if word & crate::clock::CACHE_READ == 0 {
            return None;
        }
        let before = word.wrapping_add(l.bias);
        // A lease's tick word bounds the layout's end too. (Only a lease across hosts gives
        // the fast path its words: a build without one, such as the minimal C library, leaves
        // this branch out.)
        #[cfg(feature = "lease-remote")]
        if let Some(m) = &self.fast_mark {
            return self.next_id_claimed(m, before);
        }
        // SAFETY: see `Lean`: a word the generator's `valid` keeps alive, or a static.
        if before >= l.limit || before >= unsafe { l.last_tick.as_ref() }.load(Ordering::Acquire) {
            return None;
        }
        if self.fork_generation.is_some_and(|g| g != crate::sys::current_fork_generation()) {
            return None;
        }
        let t = before + 1;
        let seq = self.take_one_at(t)?;
        self.counters.issued.add(1);
        Some((t << self.fast.time_shift) | self.node_bits | seq)
    }

    /// The lean path under a lease (`before`: the reading's tick less one), with no seqlock:
    /// the state word is read first, then the claim's node bits, its last tick (see
    /// [`FastMark::last_tick`]: the lease's validity and reservation, the layout's end and the
    /// fork, in one word) and, for a host lease, the host's record's last valid tick and
    /// whether this process's claim is the host's. A claim that
    /// changes moves the state word after its words and before its tick reopens, so the
    /// compare-and-swap from the word read first succeeds only if those reads were one
    /// claim's, and current when the word was read.
    #[cfg(feature = "lease-remote")]
    #[inline(always)]
    fn next_id_claimed(&self, m: &MarkWords, before: u64) -> Option<u64> {
        let cur = self.cell.load(Ordering::Acquire);
        // SAFETY: see `MarkWords`: `self.mark` keeps the words alive.
        let (bits, last) = unsafe { (m.node_bits.as_ref(), m.last_tick.as_ref()) };
        let bits = bits.load(Ordering::Acquire);
        if before >= last.load(Ordering::Acquire) {
            return None;
        }
        // The host's record (a host lease's validity), which a Redis lease does not have.
        // SAFETY: see `Lean`.
        if self.lean.valid && before >= unsafe { self.lean.last_tick.as_ref() }.load(Ordering::Acquire) {
            return None;
        }
        if let Some((a, b)) = m.same {
            // SAFETY: as above.
            if unsafe { a.as_ref().load(Ordering::Acquire) != b.as_ref().load(Ordering::Acquire) } {
                return None;
            }
        }
        let t = before + 1;
        // The ID but its sequence, composed before the compare-and-swap: fewer values live
        // across it (a value kept on the stack there is a store the locked instruction waits on).
        let high = (t << self.fast.time_shift) | self.node_bits | bits;
        let seq = self.take_from(cur, t)?;
        self.counters.issued.add(1);
        Some(high | seq)
    }

    /// With a high-water mark whose words the fast path reads (a lease), its claim at the
    /// reading `now_ms` (tick `t`), read as `take_block` reads it: `None` where the fast path
    /// must decline (the lease's fast window closed, its claim changing or no longer current,
    /// or `t` at or past the reservation's end, which the general path extends); else the
    /// claim's generation (0 without a mark), and the node bits the claim adds.
    #[cfg(feature = "std")]
    #[inline(always)]
    fn mark_claim(&self, now_ms: u64, t: u64) -> Option<(u64, u64)> {
        let Some(m) = &self.fast_mark else { return Some((0, 0)) };
        // SAFETY: see `MarkWords`: `self.mark` keeps the words alive.
        let (open_until, generation) = unsafe { (m.open_until.as_ref(), m.generation.as_ref()) };
        if now_ms >= open_until.load(Ordering::Acquire) {
            return None;
        }
        if let Some((a, b)) = m.same {
            // SAFETY: as above.
            if unsafe { a.as_ref().load(Ordering::Acquire) != b.as_ref().load(Ordering::Acquire) } {
                return None;
            }
        }
        let g = generation.load(Ordering::SeqCst);
        if !g.is_multiple_of(2) {
            return None;
        }
        // SAFETY: as above.
        let bits = unsafe { m.node_bits.as_ref().load(Ordering::SeqCst) };
        // The reservation's end: read before the compare-and-swap, as the claim is, so a slot
        // past it is never taken here.
        // SAFETY: as above.
        if t >= unsafe { m.reserved.as_ref() }.load(Ordering::Acquire) {
            return None;
        }
        Some((g, bits))
    }

    /// After a compare-and-swap took a slot: whether the claim that [`Generator::mark_claim`]
    /// read is still the current one. A claim that changed since is dropped, and its slot is
    /// never issued (as `take_block` does).
    #[cfg(feature = "std")]
    #[inline(always)]
    fn mark_kept(&self, generation: u64) -> bool {
        match &self.fast_mark {
            None => true,
            // SAFETY: see `MarkWords`: `self.mark` keeps the words alive.
            Some(m) => unsafe { m.generation.as_ref() }.load(Ordering::SeqCst) == generation,
        }
    }

    /// The fast path of every other generator (and of the default one where its plain path
    /// declines): see [`Generator::next_id_fast`]. Where the lean path applies, it is tried
    /// first.
    #[inline(always)]
    fn next_id_general(&self) -> Option<u64> {
        #[cfg(feature = "std")]
        if let Some(id) = self.next_id_lean() {
            return Some(id);
        }
        let f = &self.fast;
        // Off for a rollover field, a spread start or a high-water mark that offers no words
        // for it (see `assemble`).
        if !f.on {
            return None;
        }
        #[cfg(feature = "std")]
        if self.fork_generation.is_some_and(|g| g != crate::sys::current_fork_generation()) {
            return None;
        }
        let now_ms = self.clock.now_ms_cached();
        #[cfg(feature = "std")]
        if let Some((bound, _)) = &self.valid {
            if now_ms >= bound.load(Ordering::Relaxed) {
                return None;
            }
        }
        let since = now_ms.checked_sub(f.epoch_ms)?;
        // (checked: a zero tick, which no layout has, gives the general path, never a panic)
        let t = if f.tick_ms == 1 { since } else { since.checked_div(f.tick_ms)? };
        if t >= self.max_tick {
            return None;
        }
        // With a mark (a lease): its claim, once its validity and currency are checked with
        // loads, and the reservation's end (the general path extends it).
        #[cfg(feature = "std")]
        let (generation, claim_bits) = self.mark_claim(now_ms, t)?;
        #[cfg(not(feature = "std"))]
        let claim_bits = 0;
        let base = t << f.seq_bits;
        let cell: &AtomicU64 = &self.cell;
        let mut cur = cell.load(Ordering::Acquire);
        // A compare-and-swap lost to another thread (or process) is tried again with the word
        // it found, on the same reading: the other caller took a slot, which changes nothing
        // the reading decided. Only a word that moved past the reading's tick (or a run of
        // losses) goes to the general path, which judges it by its rules.
        for _ in 0..FAST_TRIES {
            // A fresh state, or one lost (see `set_validity`): the general path decides.
            if cur == 0 {
                return None;
            }
            // The slot to take: the word's own when it is at the reading's tick `t` (the next
            // free one; after the tick's last, one more is the next tick's first), the tick's
            // first when the word is below `t` (a new tick; the capacity is at least 2).
            let (slot, seq) = if cur >= base {
                let seq = cur - base;
                // Past `t`: the tick is full (it carried), or the clock is behind.
                if seq >= self.seq_cap {
                    return None;
                }
                (cur, seq)
            } else {
                (base, 0)
            };
            match cell.compare_exchange(cur, slot + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => {
                    #[cfg(feature = "std")]
                    if !self.mark_kept(generation) {
                        return None;
                    }
                    self.counters.issued.add(1);
                    return Some((t << f.time_shift) | self.node_bits | claim_bits | (seq << f.seq_shift));
                }
                Err(found) => cur = found,
            }
        }
        None
    }

    /// The next ID at the caller's clock reading `unix_ms` (deterministic: this is how the
    /// shared test vectors run). Never waits: where the clock would have to move, it fails.
    ///
    /// It continues the generator's state like [`Generator::next_id`], so:
    /// - a time behind the state by more than `max_drift_ms` is refused
    ///   ([`Error::BehindState`]): IDs at that time may have been issued already;
    /// - where the state outlives the call (every generator but an isolated one: it is shared
    ///   in the process, on the host, kept in a state file or held under a lease), a time
    ///   further ahead of the generator's clock than `max_drift_ms` + [`AHEAD_SLACK_MS`] is
    ///   refused too ([`Error::AheadOfClock`]): the state would stay there, and lock out every
    ///   other caller of the identity until the clock caught up.
    ///
    /// Replays and backfills of other times need an isolated generator
    /// ([`Generator::isolated`], or the `isolated` option) with node values of their own.
    ///
    /// ```
    /// use snowflake_core::{Clock, Error, Generator, Layout, ManualClock, Options, SystemClock};
    /// let layout = Layout::parse("twitter")?;
    /// let node = layout.parse_node("datacenter=31,worker=7")?;
    /// // An engine's own clock (a generator of it starts above what the host's record saw).
    /// let now = SystemClock.now_ms() + 60_000;
    /// let clock = ManualClock::new(now);
    /// let g = Generator::with_clock(&layout, node, Options::default(), &clock)?;
    /// let id = g.next_id_at(now + 500)?; // half a second ahead: taken
    /// assert!(matches!(g.next_id_at(now), Err(Error::BehindState { .. })));
    /// assert!(matches!(g.next_id_at(3_471_292_800_000), Err(Error::AheadOfClock { .. }))); // 2080
    /// let replay = Generator::isolated(&layout, node, Options::default(), &clock)?;
    /// assert_eq!(replay.next_id_at(now + 500)?, id); // its own state: the same ID
    /// # Ok::<(), snowflake_core::Error>(())
    /// ```
    #[inline]
    pub fn next_id_at(&self, unix_ms: u64) -> Result<u64> {
        self.block_at(Some(unix_ms), 1, 0, false).map(|b| b.first)
    }

    /// Up to `n` IDs of one tick, taken with one compare-and-swap (at least one; fewer than
    /// `n` when the tick has less room). Waits like [`Generator::next_id`].
    pub fn reserve(&self, n: u64) -> Result<Block> {
        if n == 0 {
            return Err(Error::ValueRange { name: Name::snippet("n"), value: 0, min: 1, max: u64::MAX });
        }
        self.block_at(None, n, self.policy.max_wait_ms, true)
    }

    /// Like [`Generator::reserve`] at the caller's clock reading `unix_ms`, without waiting
    /// (refused as [`Generator::next_id_at`] says).
    pub fn reserve_at(&self, unix_ms: u64, n: u64) -> Result<Block> {
        if n == 0 {
            return Err(Error::ValueRange { name: Name::snippet("n"), value: 0, min: 1, max: u64::MAX });
        }
        self.block_at(Some(unix_ms), n, 0, false)
    }

    /// Fills `out` with increasing IDs, a block (one compare-and-swap) per tick: the one loop
    /// behind every front end's `next_ids`. Waits like [`Generator::next_id`], for each tick.
    ///
    /// When it fails partway it says how many IDs it wrote ([`FillError::written`]): those
    /// are valid and unique; the rest of `out` is left as it was. Nothing taken is ever
    /// issued again.
    ///
    /// ```
    /// use snowflake_core::{Generator, Layout, ManualClock, Options};
    /// let layout = Layout::parse("game").unwrap(); // 64 IDs a tick
    /// let clock = ManualClock::new(1_700_000_000_000);
    /// let g = Generator::isolated(&layout, Default::default(), Options::parse("max_wait_ms=0").unwrap(), &clock).unwrap();
    /// let mut ids = [0u64; 100];
    /// let stopped = g.fill(&mut ids).unwrap_err();
    /// assert_eq!(stopped.written, 64); // the tick is full and the generator may not wait
    /// assert!(ids[..64].windows(2).all(|w| w[0] < w[1]) && ids[64] == 0);
    /// ```
    pub fn fill(&self, out: &mut [u64]) -> core::result::Result<(), FillError> {
        let mut written = 0;
        while written < out.len() {
            let want = (out.len() - written) as u64;
            match self.block_at(None, want, self.policy.max_wait_ms, true) {
                Ok(block) => written += block.fill(&mut out[written..]),
                Err(error) => return Err(FillError { written, error }),
            }
        }
        Ok(())
    }

    /// Takes the rest of the current tick without running ahead of the clock: `None` when the
    /// tick has no room left (or the state is ahead of the clock). For [`crate::Pool`].
    pub fn reserve_rest_of_tick(&self) -> Result<Option<Block>> {
        self.check_fork()?;
        // A fresh reading: the cheap one may lag a tick behind the state, and then there
        // would be nothing to bank (banking is rare; its reading need not be cheap).
        let now_ms = self.clock.now_ms();
        let t = self.about.layout.tick_of(now_ms)?;
        self.check_valid(now_ms)?;
        #[cfg(feature = "std")]
        if let Some(mark) = &self.mark {
            mark.check(now_ms)?;
        }
        Ok(self.take_block(t, u64::MAX, false, Roll::Never, false)?.ok())
    }

    /// What this generator has done, and how far ahead of the clock its state is.
    pub fn stats(&self) -> Stats {
        let c = &self.counters;
        let (l, _, _) = self.word.unpack(self.cell.load(Ordering::Acquire));
        let now_ms = self.clock.now_ms();
        let now_tick = self.about.layout.tick_of(now_ms).unwrap_or(0);
        #[cfg(feature = "std")]
        let lease = match (self.mark.as_ref().and_then(|m| m.lease_stats()), self.lease_field) {
            (Some(s), _) => Some(s),
            (None, Some(field)) => Some(LeaseStats {
                claims: 1,
                losses: 0,
                value: self.about.node.get(field),
                clock_skew_ms: None,
                skewed_renewals: 0,
            }),
            (None, None) => None,
        };
        #[cfg(not(feature = "std"))]
        let lease: Option<LeaseStats> = None;
        Stats {
            issued: c.issued.total(),
            waits: c.waits.load(Ordering::Relaxed),
            waited_ms: c.waited_ms.load(Ordering::Relaxed),
            clock_behind: c.clock_behind.load(Ordering::Relaxed),
            rollovers: c.rollovers.load(Ordering::Relaxed),
            drift_ms: l.saturating_sub(now_tick) * self.about.layout.tick_ms(),
            lease_claims: lease.map_or(0, |s| s.claims),
            lease_losses: lease.map_or(0, |s| s.losses),
            lease_value: lease.map(|s| s.value),
            last_unix_ms: self.about.layout.last_unix_ms(),
            ms_left: self.about.layout.ms_left(now_ms),
            clock_skew_ms: lease.and_then(|s| s.clock_skew_ms),
            skewed_renewals: lease.map_or(0, |s| s.skewed_renewals),
        }
    }
}

impl<C: Clock> Generator<C> {
    /// This generator reading the time through `wrap(clock)`: the same state, node values,
    /// options and coordination. For bindings that wrap the clock of a generator made by
    /// `Generator::open` (the Python binding waits detached from its interpreter); `wrap`
    /// must keep the clock's timeline (a host's record bounds what a process issued by its
    /// clock's readings, see `Validity::readings_may_lead`).
    ///
    /// ```
    /// use snowflake_core::{Generator, Layout, ManualClock, Options};
    /// let layout = Layout::parse("twitter").unwrap();
    /// let g = Generator::isolated(&layout, Default::default(), Options::default(), ManualClock::new(1_700_000_000_000)).unwrap();
    /// let a = g.next_id().unwrap();
    /// let g = g.map_clock(std::sync::Arc::new);
    /// assert!(g.next_id().unwrap() > a);
    /// ```
    pub fn map_clock<D: Clock>(self, wrap: impl FnOnce(C) -> D) -> Generator<D> {
        #[allow(unused_mut)]
        let mut g = Generator {
            #[cfg(feature = "std")]
            mark: self.mark,
            #[cfg(feature = "std")]
            valid: self.valid,
            #[cfg(feature = "std")]
            high: self.high,
            cell: self.cell,
            clock: wrap(self.clock),
            about: self.about,
            policy: self.policy,
            node_bits: self.node_bits,
            seq_cap: self.seq_cap,
            stride: self.stride,
            fast: self.fast,
            #[cfg(feature = "std")]
            plain: self.plain,
            #[cfg(feature = "std")]
            lean: self.lean,
            roll_bits: self.roll_bits,
            roll_shift: self.roll_shift,
            word: self.word,
            drift_ticks: self.drift_ticks,
            max_tick: self.max_tick,
            counters: self.counters,
            #[cfg(feature = "std")]
            fork_generation: self.fork_generation,
            #[cfg(feature = "std")]
            heals: self.heals,
            #[cfg(feature = "std")]
            fast_mark: self.fast_mark,
            #[cfg(feature = "std")]
            lease_field: self.lease_field,
            shared_state: self.shared_state,
        };
        // The new clock may not read the process's cache, or read it with another offset.
        #[cfg(feature = "std")]
        g.plan_plain();
        g
    }
}

#[cfg(all(test, feature = "shared"))]
mod tests {
    use super::{Generator, PLAIN_CLOSED};
    use crate::{Clock, Layout, Options};

    fn plain_open(g: &Generator) -> bool {
        !core::ptr::eq(g.plain.last_tick.as_ptr(), &PLAIN_CLOSED)
    }

    /// The plain path of a generator of this process alone (`process_only`, `lease=local`) has
    /// no fork check: its last tick, open here, must read 0 in a child of `fork()` before
    /// `fork()` returns there (the general path's check then refuses).
    #[cfg(unix)]
    fn plain_closed_in_a_child(g: &Generator, what: &str) {
        // SAFETY: see `Plain`; the generator keeps the word alive.
        let last_tick = || unsafe { g.plain.last_tick.as_ref() }.load(core::sync::atomic::Ordering::Acquire);
        assert!(last_tick() > 0, "{what}: open in the parent");
        // SAFETY: the child reads one word and exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let code = match (last_tick(), g.next_id()) {
                (0, Err(crate::Error::Forked)) => 0,
                (0, _) => 2,
                _ => 1,
            };
            // SAFETY: the child's end, with no destructor run.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: our child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status), "{what}");
        assert_eq!(
            libc::WEXITSTATUS(status),
            0,
            "{what}: 1 = the last tick open in the child, 2 = next_id did not refuse"
        );
        assert!(last_tick() > 0 || g.next_id().is_ok(), "{what}: the parent's stays");
    }

    #[cfg(not(unix))]
    fn plain_closed_in_a_child(_: &Generator, _: &str) {}

    /// The list of words a child finds at 0 holds 64: the records alone past it keep the lean
    /// path, with its fork check, and every one issues.
    #[cfg(unix)]
    #[test]
    fn records_alone_past_the_childs_list_take_the_lean_path() {
        let l = Layout::parse("time:41,worker:10,sequence:12;epoch=1288834974657").unwrap();
        let opts = Options::parse("process_only=true").unwrap();
        let gens: Vec<Generator> = (900..970)
            .map(|w| Generator::new(&l, l.parse_node(&format!("worker={w}")).unwrap(), opts.clone()).unwrap())
            .collect();
        let plain = gens.iter().filter(|g| plain_open(g)).count();
        assert!(plain <= 64, "{plain} of 70 on the plain path");
        assert!(gens.iter().all(|g| plain_open(g) != g.lean.on), "each on one path");
        let mut ids: Vec<u64> = gens.iter().flat_map(|g| (0..100).map(|_| g.next_id().unwrap())).collect();
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "no ID repeats");
    }

    /// Calls `next_id` until `path` serves one (the clock's cache running, a record checked, a
    /// lease's fast window open: a state, waited for), then two threads share `g`, each taking
    /// the path where it serves and `next_id` where not. Nothing repeats, each thread's IDs
    /// increase, and the count is exact. The IDs of the wait are kept up to a bound (the rest
    /// are counted): a ticker starved on a loaded machine makes the wait long, not the test's
    /// memory large.
    fn serves_and_repeats_nothing(g: &Generator, path: fn(&Generator) -> Option<u64>, what: &str) {
        let mut ids = vec![];
        let mut not_kept = 0u64;
        let start = std::time::Instant::now();
        let served = loop {
            if let Some(id) = path(g) {
                break id;
            }
            let id = g.next_id().unwrap();
            if ids.len() < 1_000_000 {
                ids.push(id);
            } else {
                not_kept += 1;
            }
            assert!(start.elapsed() < std::time::Duration::from_secs(180), "{what}: the path never opened");
        };
        ids.push(served);
        let per_thread = 300_000;
        let taken = std::sync::atomic::AtomicU64::new(0);
        std::thread::scope(|s| {
            let threads: Vec<_> = (0..2)
                .map(|_| {
                    let taken = &taken;
                    s.spawn(move || {
                        (0..per_thread)
                            .map(|_| match path(g) {
                                Some(id) => {
                                    taken.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                    id
                                }
                                None => g.next_id().unwrap(),
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            for t in threads {
                let mine = t.join().unwrap();
                assert!(mine.windows(2).all(|w| w[0] < w[1]), "{what}: each thread's IDs increase");
                ids.extend(mine);
            }
        });
        assert!(taken.into_inner() > 0, "{what}: the path served no thread");
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "{what}: no ID repeats");
        assert_eq!(g.stats().issued, n as u64 + not_kept, "{what}: every ID counted once");
    }

    /// The lean path serves what the plain one does not, where the layout and the clock allow:
    /// an isolated generator (and a lease across hosts: `lease.rs`). Where it serves, nothing
    /// repeats beside `next_id` on two threads. It never serves the default generator, nor
    /// `process_only` and `lease=local` (the plain path does), nor a tick other than 1 ms, a
    /// sequence above other fields, rollover, a spread start, a state file, or a clock other
    /// than the process's cache.
    #[test]
    fn the_lean_path_serves_what_the_plain_one_does_not_and_repeats_nothing() {
        let l = Layout::parse("time:41,worker:4,sequence:18;epoch=1288834974657").unwrap();
        let isolated = Generator::new(
            &l,
            l.parse_node("worker=1").unwrap(),
            Options { isolated: true, ..Options::default() },
        )
        .unwrap();
        assert!(isolated.lean.on && !plain_open(&isolated));
        serves_and_repeats_nothing(&isolated, Generator::next_id_lean, "isolated");
        let mut alone = vec![(
            "process_only",
            Generator::new(
                &l,
                l.parse_node("worker=2").unwrap(),
                Options::parse("process_only=true").unwrap(),
            ),
        )];
        if cfg!(feature = "lease-local") {
            alone.push((
                "lease=local",
                Generator::new(&l, Default::default(), Options::parse("lease=local").unwrap()),
            ));
        }
        for (what, g) in alone {
            let g = g.unwrap();
            assert!(plain_open(&g) && !g.lean.on, "{what}");
            serves_and_repeats_nothing(&g, Generator::next_id_plain, what);
            plain_closed_in_a_child(&g, what);
        }
        // (worker=3 is the plain path's test's, with another sequence_start: the tests of this
        // module run at once, in one process, and one identity must agree on its terms.)
        let default = Generator::new(&l, l.parse_node("worker=10").unwrap(), Options::default()).unwrap();
        assert!(plain_open(&default) && !default.lean.on);
        let dir = std::env::temp_dir().join(format!("snowflake-lean-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let state = format!("state_file={}", dir.join("state").display());
        let rollover = format!(
            "time:41,worker:4,sequence:18;epoch={}",
            1_288_834_974_657 + u64::from(std::process::id())
        );
        let mut closed = vec![
            ("time:41,worker:4,sequence:18;epoch=1288834974657;tick=2ms", "worker=4", "isolated=true"),
            ("time:41,sequence:18,worker:4;epoch=1288834974657", "worker=5", "process_only=true"),
            (rollover.as_str(), "", "rollover=worker"),
            (
                "time:41,worker:4,sequence:18;epoch=1288834974657",
                "worker=6",
                "sequence_start=spread:16;process_only=true",
            ),
        ];
        if cfg!(feature = "state-file") {
            closed.push(("time:41,worker:4,sequence:18;epoch=1288834974657", "worker=7", state.as_str()));
        }
        for (spec, node, options) in closed {
            let l = Layout::parse(spec).unwrap();
            let g =
                Generator::new(&l, l.parse_node(node).unwrap(), Options::parse(options).unwrap()).unwrap();
            assert!(!g.lean.on, "{spec} {node} {options}");
            for _ in 0..1000 {
                g.next_id().unwrap();
                assert!(g.next_id_lean().is_none(), "{spec} {node} {options}");
            }
        }
        let manual = Generator::isolated(
            &l,
            l.parse_node("worker=8").unwrap(),
            Options::default(),
            crate::ManualClock::new(1_700_000_000_000),
        )
        .unwrap();
        assert!(!manual.lean.on);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The default generator takes the plain path once the clock's cache runs and its record
    /// was checked (its first calls take the general one); a generator it does not serve never
    /// does; and IDs from both paths, on two threads sharing the default one, never repeat.
    /// (`process_only` and `lease=local` take it too: the lean path's test.)
    #[test]
    fn the_plain_path_serves_the_default_generator_alone_and_repeats_nothing() {
        let l = Layout::parse("time:41,worker:4,sequence:18;epoch=1288834974657").unwrap();
        let g = Generator::new(&l, l.parse_node("worker=9").unwrap(), Options::default()).unwrap();
        assert!(plain_open(&g));
        let others = [
            Generator::new(
                &l,
                l.parse_node("worker=1").unwrap(),
                Options { isolated: true, ..Options::default() },
            ),
            Generator::new(
                &l,
                l.parse_node("worker=3").unwrap(),
                Options::parse("sequence_start=spread:16").unwrap(),
            ),
            Generator::new(&Layout::parse("sonyflake").unwrap(), Default::default(), Options::default()),
        ];
        for other in others {
            let other = other.unwrap();
            assert!(!plain_open(&other), "{other:?}");
            assert!(other.next_id_plain().is_none());
            other.next_id().unwrap();
        }
        // Until the ticker publishes and a check of the record sets the bound, the general
        // path (and the rules behind it) serve.
        serves_and_repeats_nothing(&g, Generator::next_id_plain, "the default generator");
    }

    /// Each thing the plain path does not serve closes it on its own (the review of the fast
    /// path asked for each alone): a tick other than 1 ms, a sequence that is not the lowest
    /// field, rollover, a state file, `lease=local` with any of these.
    #[test]
    fn each_exclusion_alone_closes_the_plain_path() {
        let dir = std::env::temp_dir().join(format!("snowflake-plain-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let state = format!("state_file={}", dir.join("state").display());
        let rollover = format!(
            "time:41,worker:4,sequence:18;epoch={}",
            1_288_834_974_657 + u64::from(std::process::id())
        );
        let mut cases = vec![
            ("time:41,worker:4,sequence:18;epoch=1288834974657;tick=2ms", "worker=1", ""),
            ("time:41,sequence:18,worker:4;epoch=1288834974657", "worker=2", ""),
            // An epoch of this run's own: rollover is refused beside records of other node
            // values of its layout that it could reach (other tests', or an earlier run's).
            (rollover.as_str(), "", "rollover=worker"),
        ];
        if cfg!(feature = "state-file") {
            cases.push(("time:41,worker:4,sequence:18;epoch=1288834974657", "worker=4", state.as_str()));
        }
        if cfg!(feature = "lease-local") {
            cases.push(("time:41,worker:4,sequence:18;epoch=1288834974657;tick=2ms", "", "lease=local"));
        }
        for (spec, node, options) in cases {
            let l = Layout::parse(spec).unwrap();
            let g =
                Generator::new(&l, l.parse_node(node).unwrap(), Options::parse(options).unwrap()).unwrap();
            assert!(!plain_open(&g), "{spec} {node} {options}");
            for _ in 0..1000 {
                g.next_id().unwrap();
                assert!(g.next_id_plain().is_none(), "{spec} {node} {options}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A layout that ends 3 s from now: the plain path (the default generator) and the lean
    /// one (an isolated generator) serve until their bound, never at the layout's last tick or
    /// past it; the IDs increase to the end, each decodes, and once the clock (its cache too)
    /// is past the end, every call is an error. (Both at once: each takes 3 s.)
    #[test]
    fn the_plain_and_lean_paths_stop_short_of_the_layouts_end() {
        std::thread::scope(|s| {
            s.spawn(|| stops_short_of_the_layouts_end("", "worker=5", Generator::next_id_plain, plain_open));
            s.spawn(|| {
                stops_short_of_the_layouts_end("isolated=true", "worker=6", Generator::next_id_lean, |g| {
                    g.lean.on
                })
            });
        });
    }

    fn stops_short_of_the_layouts_end(
        options: &str,
        node: &str,
        path: fn(&Generator) -> Option<u64>,
        open: fn(&Generator) -> bool,
    ) {
        let now =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
        let epoch = now + 3_000 - (1 << 20);
        let l = Layout::parse(&format!("time:20,worker:4,sequence:12;epoch={epoch}")).unwrap();
        let g = Generator::new(&l, l.parse_node(node).unwrap(), Options::parse(options).unwrap()).unwrap();
        assert!(open(&g), "{options}");
        let start = std::time::Instant::now();
        let (mut last, mut plain, mut n) = (0u64, 0u64, 0u64);
        let end = loop {
            let id = match path(&g) {
                Some(id) => {
                    plain += 1;
                    Ok(id)
                }
                None => g.next_id(),
            };
            let id = match id {
                Ok(id) => id,
                Err(e) => break e,
            };
            assert!(id > last, "{id} after {last}");
            let parts = l.decode(id).unwrap();
            assert!(parts.unix_ms <= l.last_unix_ms(), "{id} is past the layout's end");
            last = id;
            n += 1;
            assert!(start.elapsed() < std::time::Duration::from_secs(180), "the layout never ended");
        };
        // The first error may come from a fresh reading while the clock's cache, which the
        // next call reads first, still lags before the end (its ticker starved by load): that
        // call may still issue at the last tick, never past it nor below the state. Once the
        // cache too reads past the end, every call is an error: wait for that state.
        loop {
            let cache_past_end = g.clock.now_ms_cached() > l.last_unix_ms();
            match g.next_id() {
                Ok(id) => {
                    assert!(
                        !cache_past_end,
                        "an ID after the end: {id}, which followed {end} (the last ID {last})"
                    );
                    assert!(id > last, "{id} after {last}");
                    assert!(
                        l.decode(id).unwrap().unix_ms <= l.last_unix_ms(),
                        "{id} is past the layout's end"
                    );
                    last = id;
                }
                Err(_) if cache_past_end => break,
                Err(_) => {}
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(180),
                "the clock's cache never passed the end"
            );
        }
        assert!(plain > 0, "{options}: the path never served ({n} IDs)");
        assert!(l.decode(last).unwrap().unix_ms + 1000 >= l.last_unix_ms(), "ended early: {end}");
    }
}
