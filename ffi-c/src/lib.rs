//! # libsnowflake's C ABI
//!
//! The `extern "C"` functions of `libsnowflake.so` / `libsnowflake.a`, declared in the
//! generated `include/snowflake.h` (and `include/snowflake_php.h` for PHP's FFI). The
//! contract is `ffi-c/API.md`; the logic is all in `snowflake-core`: these functions check
//! pointers, convert C strings and structs, forward, and turn errors into a status.
//!
//! Guarantees, for every function:
//! - no panic unwinds into C ([`error::ffi_boundary!`] turns it into
//!   `SNOWFLAKE_STATUS_PANIC`);
//! - every pointer is checked before use ([`error::non_null!`] →
//!   `SNOWFLAKE_STATUS_NULL_ARGUMENT`);
//! - outputs are written only when the status is `SNOWFLAKE_STATUS_OK`;
//! - after a failure, `snowflake_last_error()` on the same thread gives the detail.
//!
//! Handles are opaque (`SnowflakeLayout`, `SnowflakeGenerator`); a generator handle may be
//! used by many threads at once (the core generator is lock-free).
#![warn(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

mod encoding;
mod error;
mod generator;
mod layout;
mod options;
mod public;
mod sql;
mod stat_values;
mod stats_struct;

pub use encoding::{snowflake_decode_str, snowflake_encode};
pub use error::{SnowflakeStatus, SnowflakeStatusRaw};
pub use generator::{
    snowflake_fill, snowflake_generator_free, snowflake_generator_from_env, snowflake_generator_layout,
    snowflake_generator_new, snowflake_generator_open, snowflake_generator_sources,
    snowflake_generator_stats, snowflake_next_id, snowflake_next_id_at, snowflake_next_ids,
    snowflake_reserve, snowflake_reserve_at, snowflake_try_next_id, SnowflakeBlock, SnowflakeGenerator,
};
pub use layout::{
    snowflake_layout_compose, snowflake_layout_decode, snowflake_layout_field, snowflake_layout_field_count,
    snowflake_layout_fingerprint, snowflake_layout_free, snowflake_layout_from_uuid, snowflake_layout_info,
    snowflake_layout_max_id, snowflake_layout_min_id, snowflake_layout_new, snowflake_layout_plan,
    snowflake_layout_redis_script, snowflake_layout_to_string, snowflake_layout_to_uuid, SnowflakeField,
    SnowflakeFieldKind, SnowflakeLayout, SnowflakeParts, SNOWFLAKE_MAX_FIELDS, SNOWFLAKE_UUID_TEXT_SIZE,
};
pub use options::{
    snowflake_options_free, snowflake_options_new, snowflake_options_set, snowflake_options_set_bool,
    snowflake_options_set_float, snowflake_options_set_int, snowflake_options_set_str,
    snowflake_options_set_typename, snowflake_options_unset, SnowflakeOptions,
};
pub use public::{
    snowflake_public_decode, snowflake_public_encode, snowflake_public_free, snowflake_public_new,
    SnowflakePublicIds,
};
pub use sql::snowflake_layout_sql;
pub use stats_struct::SnowflakeStats;

use error::{fail_with, ffi_boundary};
use std::ffi::{c_char, CStr};

/// The library's version, `"MAJOR.MINOR.PATCH"` (static; equal to the `SNOWFLAKE_VERSION`
/// macro of the header the program was compiled with, if both come from one release).
#[no_mangle]
pub extern "C" fn snowflake_version() -> *const c_char {
    ffi_boundary!({ concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast() })
}

/// Static English text describing `status` (`"unknown status"` for a value that is none).
#[no_mangle]
pub extern "C" fn snowflake_status_str(status: SnowflakeStatusRaw) -> *const c_char {
    ffi_boundary!({
        match SnowflakeStatus::from_raw(status) {
            Some(s) => s.text().as_ptr(),
            None => c"unknown status".as_ptr(),
        }
    })
}

/// The stable code of `status`, static: `"ERR_SNOWFLAKE_LAYOUT"`, ... (the same codes as the
/// Python, Node and PHP bindings), `"OK"` for success, `"ERR_SNOWFLAKE_UNKNOWN"` for a value
/// that is no status.
#[no_mangle]
pub extern "C" fn snowflake_status_code(status: SnowflakeStatusRaw) -> *const c_char {
    ffi_boundary!({
        match SnowflakeStatus::from_raw(status) {
            Some(s) => s.code().as_ptr(),
            None => c"ERR_SNOWFLAKE_UNKNOWN".as_ptr(),
        }
    })
}

/// The detail of the last failure on this thread (`""` if none): which field, which value,
/// how far the clock is behind. Valid until the next failing call on this thread; copy it to
/// keep it.
#[no_mangle]
pub extern "C" fn snowflake_last_error() -> *const c_char {
    ffi_boundary!({ error::last_error_ptr() })
}

/// After `SNOWFLAKE_STATUS_CLOCK_BEHIND` or `SNOWFLAKE_STATUS_SEQUENCE_EXHAUSTED` on this
/// thread: in how many milliseconds a retry can succeed. 0 after any other failure.
#[no_mangle]
pub extern "C" fn snowflake_last_retry_after_ms() -> u64 {
    ffi_boundary!({ error::last_retry_after_ms() })
}

/// A NUL-terminated UTF-8 argument as `&str`.
///
/// # Safety
/// `ptr` is non-NULL and points to a NUL-terminated string that outlives `'a`.
unsafe fn str_arg<'a>(ptr: *const c_char, name: &str) -> Result<&'a str, SnowflakeStatus> {
    // SAFETY: guaranteed by the caller.
    let bytes = unsafe { CStr::from_ptr(ptr) }.to_bytes();
    core::str::from_utf8(bytes).map_err(|e| {
        fail_with(
            SnowflakeStatus::InvalidUtf8,
            format_args!("argument `{name}` is not valid UTF-8 (at byte {})", e.valid_up_to()),
        )
    })
}

/// Like [`str_arg`], but NULL reads as `""` (for the optional `node` and `options`).
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string that outlives `'a`.
unsafe fn opt_str_arg<'a>(ptr: *const c_char, name: &str) -> Result<&'a str, SnowflakeStatus> {
    if ptr.is_null() {
        Ok("")
    } else {
        // SAFETY: non-NULL, and guaranteed by the caller.
        unsafe { str_arg(ptr, name) }
    }
}

/// Writes `text` and a NUL into `buf[..len]`, or fails without writing anything.
///
/// # Safety
/// `buf` is non-NULL and valid for `len` bytes of writes.
unsafe fn write_c_string(text: &str, buf: *mut c_char, len: usize) -> error::FfiResult {
    let needed = text.len() + 1;
    if len < needed {
        return Err(fail_with(
            SnowflakeStatus::BufferTooSmall,
            format_args!("the buffer holds {len} bytes; {needed} are needed (the text and its NUL)"),
        ));
    }
    // SAFETY: `buf` holds at least `needed` bytes (checked above); `text` is a distinct
    // Rust-owned string, so the two cannot overlap.
    unsafe {
        core::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), text.len());
        *buf.add(text.len()) = 0;
    }
    Ok(())
}
