//! `SnowflakeOptions`: core's options behind an opaque handle, set one option at a time. The
//! handle remembers which keys were set ([`GivenOptions`]), so that
//! `snowflake_generator_from_env` takes the others from `SNOWFLAKE_OPTIONS`.
//!
//! The text form (`"max_wait_ms=0;shared=orders"`) is enough for most programs; a value that
//! holds `;` (a path) needs this object. The typed setters are for bindings over C (PHP) that
//! hand over their own values: core checks them against its option table exactly as it checks
//! Python's and Node's, so every front end accepts and refuses the same values with the same
//! messages.

use crate::error::{ffi_boundary, non_null, SnowflakeStatus};
use crate::{opt_str_arg, str_arg};
use snowflake_core::{GivenOptions, Value};
use std::ffi::c_char;

/// An opaque set of generator options. Made by `snowflake_options_new`, released by
/// `snowflake_options_free`; not for use by two threads at once.
pub struct SnowflakeOptions {
    _private: [u8; 0],
}

/// # Safety
/// `p` is a non-NULL pointer returned by `snowflake_options_new` and not yet freed.
pub(crate) unsafe fn options_handle<'a>(p: *const SnowflakeOptions) -> &'a GivenOptions {
    // SAFETY: guaranteed by the caller; the handle was made from a `Box<GivenOptions>`.
    unsafe { &*p.cast::<GivenOptions>() }
}

/// # Safety
/// `p` is a non-NULL pointer returned by `snowflake_options_new`, not yet freed, and not used
/// by another thread during the call.
unsafe fn options_mut<'a>(p: *mut SnowflakeOptions) -> &'a mut GivenOptions {
    // SAFETY: guaranteed by the caller.
    unsafe { &mut *p.cast::<GivenOptions>() }
}

/// Makes an options object from `text` (`"max_wait_ms=0;shared=orders"`; NULL or `""` for the
/// defaults), into `*out`.
///
/// # Safety
/// `text` is NULL or NUL-terminated; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_options_new(
    text: *const c_char,
    out: *mut *mut SnowflakeOptions,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(out);
        // SAFETY: NULL or NUL-terminated by contract.
        let options = GivenOptions::parse(unsafe { opt_str_arg(text, "text") }?)?;
        // SAFETY: valid for a write by contract.
        unsafe { *out = Box::into_raw(Box::new(options)).cast() };
        Ok(())
    })
}

/// Releases an options object (NULL: nothing).
///
/// # Safety
/// `o` is NULL or a handle from `snowflake_options_new` not yet freed; it is not used
/// afterwards.
#[no_mangle]
pub unsafe extern "C" fn snowflake_options_free(o: *mut SnowflakeOptions) {
    ffi_boundary!({
        if !o.is_null() {
            // SAFETY: made by `Box::into_raw` in `snowflake_options_new`, freed once.
            drop(unsafe { Box::from_raw(o.cast::<GivenOptions>()) });
        }
    })
}

/// Runs `set` on the options of `o` with the key `key`, under the usual checks.
///
/// # Safety
/// `o` is a live handle not used by another thread; `key` is NUL-terminated.
unsafe fn with_key(
    o: *mut SnowflakeOptions,
    key: *const c_char,
    set: impl FnOnce(&mut GivenOptions, &str) -> snowflake_core::Result<()>,
) -> Result<(), SnowflakeStatus> {
    // SAFETY: NUL-terminated by contract.
    let key = unsafe { str_arg(key, "key") }?;
    // SAFETY: a live handle by contract.
    set(unsafe { options_mut(o) }, key)?;
    Ok(())
}

/// Sets option `key` from its text form, as in `key=value` but whole: the value may hold
/// `;`, `=` and spaces (a path). Nothing changes on failure.
///
/// # Safety
/// `o` is a live handle not used by another thread; `key` and `value` are NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn snowflake_options_set(
    o: *mut SnowflakeOptions,
    key: *const c_char,
    value: *const c_char,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(o, key, value);
        // SAFETY: NUL-terminated by contract.
        let value = unsafe { str_arg(value, "value") }?;
        // SAFETY: as the contract says.
        unsafe { with_key(o, key, |opts, key| opts.set_text(key, value)) }
    })
}

/// Sets option `key` to a string value (for a text or path option; a number in a string is
/// refused for a number option with `SNOWFLAKE_STATUS_TYPE`).
///
/// # Safety
/// `o` is a live handle not used by another thread; `key` and `value` are NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn snowflake_options_set_str(
    o: *mut SnowflakeOptions,
    key: *const c_char,
    value: *const c_char,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(o, key, value);
        // SAFETY: NUL-terminated by contract.
        let value = unsafe { str_arg(value, "value") }?;
        // SAFETY: as the contract says.
        unsafe { with_key(o, key, |opts, key| opts.set(key, Value::Text(value))) }
    })
}

/// Sets option `key` to a whole number (`SNOWFLAKE_STATUS_VALUE` outside its range,
/// `SNOWFLAKE_STATUS_TYPE` for an option that is not a number).
///
/// # Safety
/// `o` is a live handle not used by another thread; `key` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn snowflake_options_set_int(
    o: *mut SnowflakeOptions,
    key: *const c_char,
    value: i64,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(o, key);
        // SAFETY: as the contract says.
        unsafe { with_key(o, key, |opts, key| opts.set(key, Value::Int(i128::from(value)))) }
    })
}

/// Sets option `key` to a floating-point number: accepted for a number option only when it
/// is whole (`SNOWFLAKE_STATUS_TYPE` for `1.5` or NaN).
///
/// # Safety
/// `o` is a live handle not used by another thread; `key` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn snowflake_options_set_float(
    o: *mut SnowflakeOptions,
    key: *const c_char,
    value: f64,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(o, key);
        // SAFETY: as the contract says.
        unsafe { with_key(o, key, |opts, key| opts.set(key, Value::Float(value))) }
    })
}

/// Sets option `key` to a boolean.
///
/// # Safety
/// `o` is a live handle not used by another thread; `key` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn snowflake_options_set_bool(
    o: *mut SnowflakeOptions,
    key: *const c_char,
    value: bool,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(o, key);
        // SAFETY: as the contract says.
        unsafe { with_key(o, key, |opts, key| opts.set(key, Value::Bool(value))) }
    })
}

/// Puts option `key` back to its default (and, for `snowflake_generator_from_env`, leaves it
/// to `SNOWFLAKE_OPTIONS` again).
///
/// # Safety
/// `o` is a live handle not used by another thread; `key` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn snowflake_options_unset(
    o: *mut SnowflakeOptions,
    key: *const c_char,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(o, key);
        // SAFETY: as the contract says.
        unsafe { with_key(o, key, |opts, key| opts.set(key, Value::Unset)) }
    })
}

/// For bindings over C: reports a value of a type that has no setter here (a PHP array, say)
/// by its name in the caller's language. Always fails, with the status and message core gives
/// every front end for such a value (`SNOWFLAKE_STATUS_TYPE`, or `SNOWFLAKE_STATUS_VALUE` for
/// an unknown key); nothing changes.
///
/// # Safety
/// `o` is a live handle not used by another thread; `key` and `type_name` are NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn snowflake_options_set_typename(
    o: *mut SnowflakeOptions,
    key: *const c_char,
    type_name: *const c_char,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(o, key, type_name);
        // SAFETY: NUL-terminated by contract.
        let type_name = unsafe { str_arg(type_name, "type_name") }?;
        // SAFETY: as the contract says.
        unsafe { with_key(o, key, |opts, key| opts.set(key, Value::Other(type_name))) }
    })
}
