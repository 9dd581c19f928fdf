//! The isolated generator: core's `Generator::isolated` over a clock the JS layer reads
//! (`Date.now()` or the caller's function). It is the one generator of this module because
//! nothing here can meet a host's record: a browser or an edge runtime has no shared memory
//! between its tabs, workers or isolates, so two of these generators with the same layout and
//! node values *can* issue the same IDs. For tests, replays and traces; the JS layer names it
//! `IsolatedGenerator` so that it is never taken for the coordinated one.

use crate::clock::JsClock;
use crate::error::{answer, fail};
use crate::io::{out_u64, Record};
use alloc::boxed::Box;
use alloc::vec::Vec;
use snowflake_core::{Error, Generator, Name, Options, Spelling, Value};

type Isolated = Generator<JsClock>;

fn of(handle: i32) -> &'static Isolated {
    // SAFETY: the JS layer passes only live handles of this type.
    unsafe { &*(handle as usize as *const Isolated) }
}

/// Refused here: the options of a generator that meets the host's record.
fn not_here(name: &str, reason: &'static str) -> Error {
    Error::BadOption { name: Name::snippet(name), reason }
}

/// An isolated generator of `layout` over JS clock `clock` (the system's when `system` is 1),
/// with the node values and options of the I/O buffer's record (node values, then a count and
/// `(name, value)` options in the Node package's camelCase); a handle. An option of the
/// coordinated generators is refused: core without `std` refuses `shared`, `stateFile` and
/// `lease` naming the feature, and this module `processOnly` and `isolated: false`.
#[no_mangle]
pub extern "C" fn sf_gen_new(layout: i32, clock: u32, system: i32) -> i32 {
    let layout = crate::layout::of(layout);
    let mut r = Record::at(0);
    let result = (|| {
        let node = crate::layout::node(layout, &mut r)?;
        let mut options = Options::default();
        for _ in 0..r.u8() {
            let name = r.str();
            let value = r.value();
            match (name, value) {
                ("isolated", Value::Bool(false)) => {
                    return Err(not_here(
                        name,
                        "@libsnowflake/wasm's generator is always isolated: no host record exists in a browser or an edge runtime",
                    ))
                }
                ("processOnly", Value::Bool(true)) => {
                    return Err(not_here(
                        name,
                        "no host record exists in a browser or an edge runtime; this generator is isolated",
                    ))
                }
                _ => options.set_spelled(name, Spelling::Camel, value)?,
            }
        }
        options.check_combinations()?;
        let clock = JsClock::new(clock, system != 0);
        Generator::isolated(layout, node, options, clock)
    })();
    answer(result, |g| Box::into_raw(Box::new(g)) as usize as i32)
}

/// Frees a generator.
#[no_mangle]
pub extern "C" fn sf_gen_free(handle: i32) {
    // SAFETY: a live handle of sf_gen_new, freed once.
    drop(unsafe { Box::from_raw(handle as usize as *mut Isolated) });
}

fn id(result: Result<u64, Error>) -> i32 {
    answer(result, |id| {
        out_u64(0, id);
        0
    })
}

/// The next ID (waiting at most `maxWaitMs`), in word 0 of the out area.
#[no_mangle]
pub extern "C" fn sf_gen_next(handle: i32) -> i32 {
    id(of(handle).next_id())
}

/// The next ID without waiting, in word 0 of the out area.
#[no_mangle]
pub extern "C" fn sf_gen_try_next(handle: i32) -> i32 {
    id(of(handle).try_next_id())
}

/// The next ID at the caller's reading `t`, in word 0 of the out area.
#[no_mangle]
pub extern "C" fn sf_gen_next_at(handle: i32, t: f64) -> i32 {
    id(crate::layout::instant(t).and_then(|t| of(handle).next_id_at(t)))
}

/// `n` increasing IDs in a block of memory whose address is in word 0 of the out area (the JS
/// layer copies them out and frees it with [`sf_ids_free`]); `n`.
#[no_mangle]
pub extern "C" fn sf_gen_next_ids(handle: i32, n: u32) -> i32 {
    let mut ids: Vec<u64> = Vec::new();
    if ids.try_reserve_exact(n as usize).is_err() {
        return fail(&Error::BadOption { name: Name::snippet("n"), reason: "no memory for that many IDs" });
    }
    ids.resize(n as usize, 0);
    match of(handle).fill(&mut ids) {
        Ok(()) => {
            out_u64(0, Box::into_raw(ids.into_boxed_slice()) as *mut u64 as usize as u64);
            n as i32
        }
        Err(e) => fail(&e.into()),
    }
}

/// Frees the block of [`sf_gen_next_ids`].
#[no_mangle]
pub extern "C" fn sf_ids_free(ptr: u32, n: u32) {
    // SAFETY: a block of sf_gen_next_ids of `n` IDs, freed once.
    drop(unsafe { Box::from_raw(core::ptr::slice_from_raw_parts_mut(ptr as usize as *mut u64, n as usize)) });
}
