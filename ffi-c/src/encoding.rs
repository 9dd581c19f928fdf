//! Encoded IDs: core's [`encode`] / [`decode_str`] with the encoding named by a C string.

use crate::error::{ffi_boundary, non_null, SnowflakeStatus};
use crate::{str_arg, write_c_string};
use snowflake_core::{decode_str, encode, Encoding, Error};
use std::ffi::c_char;

/// # Safety
/// `name` is non-NULL and NUL-terminated.
unsafe fn encoding_arg(name: *const c_char) -> Result<Encoding, SnowflakeStatus> {
    // SAFETY: guaranteed by the caller.
    let name = unsafe { str_arg(name, "encoding") }?;
    name.parse::<Encoding>().map_err(SnowflakeStatus::from)
}

/// Writes `id` (`UINT64_MAX - id` when `reverse`, so that the newest sorts first) in
/// `encoding` — `"decimal"`, `"hex"` (16 characters), `"base32"` (Crockford, 13), `"base36"`
/// (13), `"base58"` (11) or `"base62"` (11) — and a NUL into `buf`. The fixed-width forms sort
/// like the numbers. A 21-byte buffer always fits; `SNOWFLAKE_STATUS_BUFFER_TOO_SMALL`
/// (nothing written) when `len` is too short; `SNOWFLAKE_STATUS_VALUE` for an unknown encoding.
///
/// # Safety
/// `encoding` is NUL-terminated; `buf` is valid for `len` bytes of writes.
#[no_mangle]
pub unsafe extern "C" fn snowflake_encode(
    id: u64,
    encoding: *const c_char,
    reverse: bool,
    buf: *mut c_char,
    len: usize,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(encoding, buf);
        // SAFETY: non-NULL, NUL-terminated by contract.
        let encoding = unsafe { encoding_arg(encoding) }?;
        let text = encode(id, encoding, reverse);
        // SAFETY: `buf` holds `len` bytes by contract.
        unsafe { write_c_string(&text, buf, len) }
    })
}

/// Parses `text` in `encoding` (the inverse of `snowflake_encode` with the same `reverse`),
/// strictly: wrong length, a character outside the alphabet, or a value above `UINT64_MAX` is
/// `SNOWFLAKE_STATUS_INVALID_ID`. Crockford base32 accepts lower case and `I`/`L`/`O`.
///
/// # Safety
/// `text` and `encoding` are NUL-terminated; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_decode_str(
    text: *const c_char,
    encoding: *const c_char,
    reverse: bool,
    out: *mut u64,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(text, encoding, out);
        // SAFETY: non-NULL, NUL-terminated by contract.
        let text = unsafe { str_arg(text, "text") }?;
        // SAFETY: non-NULL, NUL-terminated by contract.
        let encoding = unsafe { encoding_arg(encoding) }?;
        let id = decode_str(text, encoding, reverse).map_err(Error::from)?;
        // SAFETY: valid for a write by contract.
        unsafe { *out = id };
        Ok(())
    })
}
