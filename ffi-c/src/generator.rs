//! `SnowflakeGenerator`: core's lock-free [`Generator`] behind an opaque handle. Every
//! function takes the handle as `const`: issuing is one compare-and-swap on shared state, so
//! any number of threads may call them on one handle at once.

use crate::error::{fail_with, ffi_boundary, non_null, SnowflakeStatus};
use crate::layout::{handle as layout_handle, SnowflakeLayout};
use crate::options::{options_handle, SnowflakeOptions};
use crate::stats_struct::{write_fitting, SnowflakeStats, MIN_SIZE};
use crate::{opt_str_arg, str_arg, write_c_string};
use snowflake_core::{Block, Environment, Generator, GivenOptions, Options};
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

/// Makes a generator for `layout` with the node values `node` (`"datacenter=1,worker=3"`:
/// every node field of the layout, or none, NULL or `""`, for all zeros) and `options` in their text form, NULL or `""` for the defaults
/// (no drift, wait up to 1000 ms, sequence from 0), for example
/// `"max_drift_ms=50;max_wait_ms=0"` or `"shared=orders;max_wait_ms=0"`. Every option
/// is in `API.md` and in core's option table; a value that holds `;` goes through
/// `snowflake_options_set` and `snowflake_generator_open` instead.
///
/// Every generator of the host with the same layout and node values shares one state (the
/// host's record of them, in every process of the user), so making one per request, or one
/// per process, cannot repeat an ID; another way of issuing with them (`process_only`, a
/// lease, another user's process) is refused while one lives. `isolated=true` alone keeps a
/// state of its own, for tests. A generator with `process_only=true` or a lease fails in a
/// child of `fork()` with `SNOWFLAKE_STATUS_FORKED`: make a new one there (with its own
/// worker value).
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
        // SAFETY: NULL or NUL-terminated by contract.
        let options = Options::parse(unsafe { opt_str_arg(options, "options") }?)?;
        // SAFETY: as the contract says.
        unsafe { open(layout, node, options, out) }
    })
}

/// Makes a generator for `layout` with the node values `node` (as in
/// `snowflake_generator_new`) and the options set in `options` (NULL: the defaults). The
/// options object is only read: free it when you like.
///
/// # Safety
/// `layout` is a live handle; `node` is NULL or NUL-terminated; `options` is NULL or a live
/// handle; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_generator_open(
    layout: *const SnowflakeLayout,
    node: *const c_char,
    options: *const SnowflakeOptions,
    out: *mut *mut SnowflakeGenerator,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(layout, out);
        let options = match options.is_null() {
            true => Options::default(),
            // SAFETY: a live handle by contract.
            false => unsafe { options_handle(options) }.options().clone(),
        };
        // SAFETY: as the contract says.
        unsafe { open(layout, node, options, out) }
    })
}

/// Makes a generator from the configuration the code gives and the environment fills: the
/// layout `layout`, else `SNOWFLAKE_LAYOUT`, else `twitter`; the node values `node`, else
/// `SNOWFLAKE_NODE`, else all zeros; each option set on `options`, else its value in
/// `SNOWFLAKE_OPTIONS`, else its default. NULL leaves a part to the environment, and so does an
/// empty `node` (`""`: no node values, as in every language):
/// `snowflake_generator_from_env(NULL, NULL, NULL, &g)` takes everything from it, which a
/// deployment sets with no code (a Kubernetes pod's `SNOWFLAKE_NODE=worker=3`).
///
/// A malformed variable (or an empty `SNOWFLAKE_LAYOUT` or `SNOWFLAKE_NODE`) fails with the
/// status of what is wrong (`SNOWFLAKE_STATUS_LAYOUT`, `SNOWFLAKE_STATUS_VALUE`, ...) and a
/// message that names the variable and its value. `snowflake_generator_sources` says where
/// each value came from.
///
/// # Safety
/// `layout` is NULL or a live handle; `node` is NULL or NUL-terminated; `options` is NULL or
/// a live handle; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_generator_from_env(
    layout: *const SnowflakeLayout,
    node: *const c_char,
    options: *const SnowflakeOptions,
    out: *mut *mut SnowflakeGenerator,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(out);
        let env = Environment::read()?;
        // SAFETY: NULL or a live handle by contract.
        let given_layout = (!layout.is_null()).then(|| unsafe { layout_handle(layout) }.layout);
        let (layout, layout_source) = env.layout(given_layout)?;
        let node = match node.is_null() {
            true => None,
            // SAFETY: NUL-terminated by contract.
            false => Some(layout.parse_node(unsafe { str_arg(node, "node") }?)?),
        };
        let none;
        let options = match options.is_null() {
            true => {
                none = GivenOptions::new();
                &none
            }
            // SAFETY: a live handle by contract.
            false => unsafe { options_handle(options) },
        };
        let g = env.open(&layout, layout_source, node.as_ref(), options)?;
        // SAFETY: valid for a write by contract.
        unsafe { *out = Box::into_raw(Box::new(g)).cast() };
        Ok(())
    })
}

/// Writes where each of the generator's values came from, and a NUL, into `buf`:
/// `layout=SOURCE;node=SOURCE;max_drift_ms=SOURCE;…` (every option of core's table, in its
/// order), each SOURCE `code`, `default`, or the environment variable's name
/// (`SNOWFLAKE_LAYOUT`, `SNOWFLAKE_NODE`, `SNOWFLAKE_OPTIONS`). A generator made by
/// `snowflake_generator_new` or `_open` has every value from the code. 2048 bytes always fit;
/// `SNOWFLAKE_STATUS_BUFFER_TOO_SMALL` (nothing written) when `len` is less than the text's
/// length + 1.
///
/// # Safety
/// `g` is a live handle; `buf` is valid for `len` bytes of writes.
#[no_mangle]
pub unsafe extern "C" fn snowflake_generator_sources(
    g: *const SnowflakeGenerator,
    buf: *mut c_char,
    len: usize,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(g, buf);
        // SAFETY: a live handle by contract.
        let text = unsafe { generator(g) }.provenance().to_string();
        // SAFETY: `buf` holds `len` bytes by contract.
        unsafe { write_c_string(&text, buf, len) }
    })
}

/// Writes the canonical text of the generator's layout (as `snowflake_layout_to_string` does)
/// and a NUL into `buf`: the layout `snowflake_generator_from_env` resolved. 1024 bytes always
/// fit; `SNOWFLAKE_STATUS_BUFFER_TOO_SMALL` (nothing written) when `len` is less than the
/// text's length + 1.
///
/// # Safety
/// `g` is a live handle; `buf` is valid for `len` bytes of writes.
#[no_mangle]
pub unsafe extern "C" fn snowflake_generator_layout(
    g: *const SnowflakeGenerator,
    buf: *mut c_char,
    len: usize,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(g, buf);
        // SAFETY: a live handle by contract.
        let text = unsafe { generator(g) }.layout().to_string();
        // SAFETY: `buf` holds `len` bytes by contract.
        unsafe { write_c_string(&text, buf, len) }
    })
}

/// # Safety
/// `layout` is a live handle; `node` is NULL or NUL-terminated; `out` is valid for a write.
unsafe fn open(
    layout: *const SnowflakeLayout,
    node: *const c_char,
    options: Options,
    out: *mut *mut SnowflakeGenerator,
) -> Result<(), SnowflakeStatus> {
    // SAFETY: a live handle by contract.
    let layout = &unsafe { layout_handle(layout) }.layout;
    // SAFETY: NULL or NUL-terminated by contract.
    let node = layout.parse_node(unsafe { opt_str_arg(node, "node") }?)?;
    let g = Generator::new(layout, node, options)?;
    // SAFETY: valid for a write by contract.
    unsafe { *out = Box::into_raw(Box::new(g)).cast() };
    Ok(())
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
    // The common case inline, outside the panic boundary (`next_id_fast` never fails or
    // panics); everything else in a function of its own, so this one needs no stack frame.
    if !g.is_null() && !out.is_null() {
        // SAFETY: a live handle by contract.
        if let Some(id) = unsafe { generator(g) }.next_id_fast() {
            // SAFETY: valid for a write by contract.
            unsafe { *out = id };
            return SnowflakeStatus::Ok;
        }
    }
    // SAFETY: the caller's contract, passed on.
    unsafe { next_id_slow(g, out) }
}

/// `snowflake_next_id` past its common case: NULL arguments, waits, errors, a fork.
///
/// # Safety
/// As `snowflake_next_id`.
#[cold]
#[inline(never)]
unsafe fn next_id_slow(g: *const SnowflakeGenerator, out: *mut u64) -> SnowflakeStatus {
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

/// The next ID at the caller's clock reading `unix_ms` (deterministic; never waits). It
/// continues the state every generator with this layout and node values shares: a time behind
/// it by more than `max_drift_ms` is `SNOWFLAKE_STATUS_CLOCK_BEHIND` (an ID there could repeat
/// one already issued), and one more than `max_drift_ms` + 1 s ahead of the clock
/// `SNOWFLAKE_STATUS_VALUE` (the state would stay there and lock every other caller out).
/// Replays and backfills need `isolated=true` and node values of their own.
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

/// Fills `buf[0..n]` with increasing IDs, taking a whole block per tick with one
/// compare-and-swap (the fast path). Waits like `snowflake_next_id`. On failure, the first
/// IDs of `buf` may have been written (valid and unique; `snowflake_fill` says how many) and
/// the rest is left as it was.
///
/// # Safety
/// `g` is a live handle; `buf` is valid for `n` writes of `uint64_t`.
#[no_mangle]
pub unsafe extern "C" fn snowflake_next_ids(
    g: *const SnowflakeGenerator,
    buf: *mut u64,
    n: usize,
) -> SnowflakeStatus {
    let mut written = 0;
    // SAFETY: as the contract says; `written` is a local.
    unsafe { snowflake_fill(g, buf, n, &mut written) }
}

/// Like `snowflake_next_ids`, and writes into `*written` how many IDs it wrote from the start
/// of `buf`: `n` on success, fewer when it failed partway (those IDs are valid and unique and
/// will never be issued again). `*written` is written whatever the status (0 when an argument
/// is NULL).
///
/// # Safety
/// `g` is a live handle; `buf` is valid for `n` writes of `uint64_t`; `written` is valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_fill(
    g: *const SnowflakeGenerator,
    buf: *mut u64,
    n: usize,
    written: *mut usize,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(written);
        // SAFETY: valid for a write by contract.
        unsafe { *written = 0 };
        non_null!(g, buf);
        if n == 0 {
            return Ok(());
        }
        // SAFETY: non-NULL and valid for `n` writes by contract.
        let out = unsafe { core::slice::from_raw_parts_mut(buf, n) };
        // SAFETY: a live handle by contract.
        let result = unsafe { generator(g) }.fill(out);
        // SAFETY: valid for a write by contract.
        unsafe { *written = result.as_ref().map_or_else(|e| e.written, |()| n) };
        result.map_err(|e| SnowflakeStatus::from(e.error))
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

/// What the generator has done, into `*out`. The caller sets `out->size` to
/// `sizeof(SnowflakeStats)` first; the library writes only the fields that end within it (a
/// program built against an older, shorter struct gets the fields it knows, and nothing past
/// them), and never `size` itself. A `size` below the first version's struct (`size` and
/// `issued` to `drift_ms`: 56 bytes on 64-bit platforms), such as the 0 of a struct whose size
/// was never set, gives `SNOWFLAKE_STATUS_BUFFER_TOO_SMALL` and writes nothing.
///
/// # Safety
/// `g` is a live handle; `out` is valid for reads of its `size` field and for writes of
/// `out->size` bytes.
#[no_mangle]
pub unsafe extern "C" fn snowflake_generator_stats(
    g: *const SnowflakeGenerator,
    out: *mut SnowflakeStats,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(g, out);
        // SAFETY: `out` is valid for a read of its first field by contract.
        let size = unsafe { core::ptr::addr_of!((*out).size).read() };
        if size < MIN_SIZE {
            return Err(fail_with(
                SnowflakeStatus::BufferTooSmall,
                format_args!(
                    "snowflake_generator_stats: out->size is {size}, less than the {MIN_SIZE} bytes of the \
                     first SnowflakeStats; set out->size = sizeof(SnowflakeStats) before the call"
                ),
            ));
        }
        // SAFETY: a live handle by contract.
        let s = unsafe { generator(g) }.stats();
        // SAFETY: `out` is valid for writes of `size` bytes by contract.
        unsafe { write_fitting(out, size, &s) };
        Ok(())
    })
}
