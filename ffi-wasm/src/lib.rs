//! # snowflake-wasm
//!
//! The WebAssembly module of `@libsnowflake/wasm`: snowflake-core without `std`, for browsers,
//! workers and edge runtimes, which load no native code. Plain exports over core, one file per
//! core module as the other bindings are; the JS layer (`bindings-wasm/`) converts JS values
//! and forwards, as a binding does: every answer, check and error comes from core.
//!
//! How values cross (no wasm-bindgen: a few dozen plain functions do not need it):
//! - text both ways, and the small records of node values and options, in one I/O buffer
//!   ([`io::sf_io`]), whose length a call takes or returns;
//! - numbers in the out area ([`io::sf_out`]): 64-bit words, IDs as `u64`, instants and
//!   decoded parts as `f64` (exact: the JS layer reads the `u64` word of a field above 2^53);
//! - objects (layouts, generators, public IDs) as handles: the address of a boxed value,
//!   freed by `*_free` (the JS layer calls it from a `FinalizationRegistry`, or `free()`).
//!
//! Every export returns an `i32`: 0 or more on success (a length, a count or a handle), and on
//! failure minus the length of the error written to the I/O buffer as JSON: `code` and `name`
//! from core's table of kinds ([`snowflake_core::KINDS`]: the Node package's codes and
//! classes), `message` (core's `Display`) and the detail fields of the Node package's errors.
//!
//! What it does not do: no host record, no shared state, state file or lease (core without
//! `std` has none of them; it refuses those options naming the `std` feature). Its only
//! generator is isolated ([`generator`]), for tests and replays.
#![cfg_attr(target_arch = "wasm32", no_std)]
#![warn(missing_docs)]

extern crate alloc;

mod clock;
mod encoding;
mod error;
mod generator;
mod io;
mod layout;
mod public;
#[cfg(target_arch = "wasm32")]
mod wasm_rt;

/// The library version, written to the I/O buffer (its length returned).
#[no_mangle]
pub extern "C" fn sf_version() -> i32 {
    io::put_str(snowflake_core::VERSION)
}
