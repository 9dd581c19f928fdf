//! `SnowflakeGenerator`: core's lock-free [`Generator`] behind an opaque handle. Every
//! function takes the handle as `const`: issuing is one compare-and-swap on shared state, so
//! any number of threads may call them on one handle at once.

use crate::error::{ffi_boundary, non_null, SnowflakeStatus};
use crate::layout::{handle as layout_handle, SnowflakeLayout};
use crate::opt_str_arg;
#[cfg(unix)]
use snowflake_core::Coordination;
#[cfg(not(unix))]
use snowflake_core::Options;
use snowflake_core::{Block, Generator, Layout, Node};
use std::ffi::c_char;

/// An opaque generator. Made by `snowflake_generator_new`, released by
/// `snowflake_generator_free`; every other function may be called from many threads at once.
pub struct SnowflakeGenerator {
    _private: [u8; 0],
}

/// # Safety
/// `p` is a non-NULL pointer returned by `snowflake_generator_new` and not yet freed.
unsafe fn generator<'a>(p: *const SnowflakeGenerator) -> &'a Generator {
    // SAFETY: guaranteed by the caller; the handle was made from a `Box<Generator>`.
    unsafe { &*p.cast::<Generator>() }
}

/// A run of IDs of one tick, taken with one compare-and-swap: `first`, `first + stride`, ...,
/// `count` of them, increasing.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SnowflakeBlock {
    /// The first ID.
    pub first: u64,
    /// How many IDs.
    pub count: u64,
    /// The distance between consecutive IDs (`1 << sequence_shift`).
    pub stride: u64,
}

impl From<Block> for SnowflakeBlock {
    fn from(b: Block) -> SnowflakeBlock {
        SnowflakeBlock { first: b.first, count: b.count, stride: b.stride }
    }
}

/// What a generator has done.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct SnowflakeStats {
    /// IDs issued through this handle.
    pub issued: u64,
    /// How many times it waited for the clock.
    pub waits: u64,
    /// Total time spent waiting, in ms.
    pub waited_ms: u64,
    /// How many times it found the clock behind by more than `max_drift_ms`.
    pub clock_behind: u64,
    /// How many times it bumped the rollover field.
    pub rollovers: u64,
    /// How far ahead of the clock the state is now, in ms.
    pub drift_ms: u64,
}

/// Makes a generator for `layout` with the node values `node` (`"datacenter=1,worker=3"`;
/// fields left out are 0) and `options`, NULL or `""` for the defaults (no drift, wait up to
/// 1000 ms, sequence from 0):
///
/// - `max_drift_ms=50;max_wait_ms=0;sequence_start=spread:16;rollover=worker;isolated=true`
///   (how it behaves when a tick is full or the clock goes back);
/// - `shared=<name>`: every process of the host opening that name draws from one state in
///   shared memory (`$SNOWFLAKE_SHM_DIR`, default `/dev/shm`), and keeps working after fork();
/// - `state_file=<path>` (+ `state_window_ms=`): a durable high-water mark, so a restart after
///   the clock stepped back never repeats an ID;
/// - `lease=local` (+ `lease_dir=`, `lease_field=`) or `lease=redis://host:port/db`
///   (+ `lease_ttl_ms=`): claim a free worker value instead of giving one.
///
/// Without `shared=`, every generator of the process with the same layout and node values
/// shares one state (unless `isolated=true`), so making one per request cannot repeat an ID;
/// after `fork()` such a generator fails in the child with `SNOWFLAKE_STATUS_FORKED`: make a
/// new one there (with its own worker value).
///
/// # Safety
/// `layout` is a live handle; `node` and `options` are NULL or NUL-terminated; `out` is valid
/// for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_generator_new(
    layout: *const SnowflakeLayout,
    node: *const c_char,
    options: *const c_char,
    out: *mut *mut SnowflakeGenerator,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(layout, out);
        // SAFETY: a live handle by contract.
        let layout = &unsafe { layout_handle(layout) }.layout;
        // SAFETY: NULL or NUL-terminated by contract.
        let node = layout.parse_node(unsafe { opt_str_arg(node, "node") }?)?;
        // SAFETY: NULL or NUL-terminated by contract.
        let options = unsafe { opt_str_arg(options, "options") }?;
        let g = open(layout, node, options)?;
        // SAFETY: valid for a write by contract.
        unsafe { *out = Box::into_raw(Box::new(g)).cast() };
        Ok(())
    })
}

#[cfg(unix)]
fn open(layout: &Layout, node: Node, options: &str) -> Result<Generator, SnowflakeStatus> {
    let (options, coordination) = Coordination::parse_options(options)?;
    Ok(Generator::open(layout, node, options, &coordination)?)
}

/// Without unix there is no shared memory, lease or fork: the process-local options only.
#[cfg(not(unix))]
fn open(layout: &Layout, node: Node, options: &str) -> Result<Generator, SnowflakeStatus> {
    Ok(Generator::new(layout, node, Options::parse(options)?)?)
}

/// Releases a generator (NULL: nothing). No other thread may be using it.
///
/// # Safety
/// `g` is NULL or a handle from `snowflake_generator_new` not yet freed; it is not used
/// afterwards.
#[no_mangle]
pub unsafe extern "C" fn snowflake_generator_free(g: *mut SnowflakeGenerator) {
    ffi_boundary!({
        if !g.is_null() {
            // SAFETY: made by `Box::into_raw` in `snowflake_generator_new`, freed once.
            drop(unsafe { Box::from_raw(g.cast::<Generator>()) });
        }
    })
}

/// The next ID, into `*out`. Waits for the clock (at most `max_wait_ms`) when the tick is full
/// or the clock is behind, then fails with `SNOWFLAKE_STATUS_SEQUENCE_EXHAUSTED` or
/// `SNOWFLAKE_STATUS_CLOCK_BEHIND` (see `snowflake_last_retry_after_ms()`).
///
/// # Safety
/// `g` is a live handle; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_next_id(g: *const SnowflakeGenerator, out: *mut u64) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(g, out);
        // SAFETY: a live handle by contract.
        let id = unsafe { generator(g) }.next_id()?;
        // SAFETY: valid for a write by contract.
        unsafe { *out = id };
        Ok(())
    })
}

/// Like `snowflake_next_id` but never blocks: fails at once where it would wait.
///
/// # Safety
/// `g` is a live handle; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_try_next_id(
    g: *const SnowflakeGenerator,
    out: *mut u64,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(g, out);
        // SAFETY: a live handle by contract.
        let id = unsafe { generator(g) }.try_next_id()?;
        // SAFETY: valid for a write by contract.
        unsafe { *out = id };
        Ok(())
    })
}

/// The next ID at the caller's clock reading `unix_ms` (deterministic; never waits).
///
/// # Safety
/// `g` is a live handle; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_next_id_at(
    g: *const SnowflakeGenerator,
    unix_ms: u64,
    out: *mut u64,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(g, out);
        // SAFETY: a live handle by contract.
        let id = unsafe { generator(g) }.next_id_at(unix_ms)?;
        // SAFETY: valid for a write by contract.
        unsafe { *out = id };
        Ok(())
    })
}

/// How many blocks `snowflake_next_ids` keeps on the stack before it allocates: one block per
/// tick, so this covers `n` up to three ticks' capacity.
const INLINE_BLOCKS: usize = 4;

/// Fills `buf[0..n]` with increasing IDs, taking a whole block per tick with one
/// compare-and-swap (the fast path). Waits like `snowflake_next_id`. On failure nothing is
/// written to `buf` (the IDs already taken are dropped, never reissued).
///
/// # Safety
/// `g` is a live handle; `buf` is valid for `n` writes of `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn snowflake_next_ids(
    g: *const SnowflakeGenerator,
    buf: *mut u64,
    n: usize,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(g, buf);
        // SAFETY: a live handle by contract.
        let g = unsafe { generator(g) };
        // Core's `next_ids` fills the buffer block by block; taking every block first and
        // filling after keeps C's rule that a failed call writes nothing. Same CAS count.
        let mut inline = [Block { first: 0, count: 0, stride: 0 }; INLINE_BLOCKS];
        let mut spill: Vec<Block> = Vec::new();
        let (mut blocks, mut left) = (0, n as u64);
        while left > 0 {
            let b = g.reserve(left)?;
            if blocks < INLINE_BLOCKS {
                inline[blocks] = b;
            } else {
                spill.push(b);
            }
            blocks += 1;
            left -= b.count;
        }
        if n > 0 {
            // SAFETY: non-NULL and valid for `n` writes by contract.
            let out = unsafe { core::slice::from_raw_parts_mut(buf, n) };
            let mut done = 0;
            for b in inline[..blocks.min(INLINE_BLOCKS)].iter().chain(&spill) {
                done += b.fill(&mut out[done..]);
            }
        }
        Ok(())
    })
}

/// Up to `n` IDs of one tick taken with one compare-and-swap, into `*out` (at least one; fewer
/// than `n` when the tick has less room). Waits like `snowflake_next_id`.
/// `SNOWFLAKE_STATUS_VALUE` when `n` is 0.
///
/// # Safety
/// `g` is a live handle; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_reserve(
    g: *const SnowflakeGenerator,
    n: u64,
    out: *mut SnowflakeBlock,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(g, out);
        // SAFETY: a live handle by contract.
        let b = unsafe { generator(g) }.reserve(n)?;
        // SAFETY: valid for a write by contract.
        unsafe { *out = b.into() };
        Ok(())
    })
}

/// Like `snowflake_reserve` at the caller's clock reading `unix_ms`, without waiting.
///
/// # Safety
/// `g` is a live handle; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_reserve_at(
    g: *const SnowflakeGenerator,
    unix_ms: u64,
    n: u64,
    out: *mut SnowflakeBlock,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(g, out);
        // SAFETY: a live handle by contract.
        let b = unsafe { generator(g) }.reserve_at(unix_ms, n)?;
        // SAFETY: valid for a write by contract.
        unsafe { *out = b.into() };
        Ok(())
    })
}

/// What the generator has done, into `*out`.
///
/// # Safety
/// `g` is a live handle; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_generator_stats(
    g: *const SnowflakeGenerator,
    out: *mut SnowflakeStats,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(g, out);
        // SAFETY: a live handle by contract.
        let s = unsafe { generator(g) }.stats();
        let stats = SnowflakeStats {
            issued: s.issued,
            waits: s.waits,
            waited_ms: s.waited_ms,
            clock_behind: s.clock_behind,
            rollovers: s.rollovers,
            drift_ms: s.drift_ms,
        };
        // SAFETY: valid for a write by contract.
        unsafe { *out = stats };
        Ok(())
    })
}
