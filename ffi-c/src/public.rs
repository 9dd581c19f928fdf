//! `SnowflakePublicIds`: core's [`PublicIds`] (Speck64/128 under a 128-bit key, fixed-width
//! text) behind an opaque handle.

use crate::error::{ffi_boundary, non_null, SnowflakeStatus};
use crate::{opt_str_arg, str_arg, write_c_string};
use snowflake_core::{Encoding, PublicIds};
use std::ffi::c_char;

/// An opaque, immutable public-ID codec holding a key. Made by `snowflake_public_new`,
/// released by `snowflake_public_free`, which also wipes the key schedule. Safe to share
/// between threads.
pub struct SnowflakePublicIds {
    _private: [u8; 0],
}

/// # Safety
/// `p` is a non-NULL pointer returned by `snowflake_public_new` and not yet freed.
unsafe fn codec<'a>(p: *const SnowflakePublicIds) -> &'a PublicIds {
    // SAFETY: guaranteed by the caller; the handle was made from a `Box<PublicIds>`.
    unsafe { &*p.cast::<PublicIds>() }
}

/// Makes a public-ID codec under the `key_len`-byte `key` (it must be 16 bytes:
/// `SNOWFLAKE_STATUS_VALUE` otherwise, naming the length, never the bytes), writing texts in
/// `encoding`: `"base62"` (11 characters; also when `encoding` is NULL), `"base58"`,
/// `"base36"`, `"base32"` or `"hex"` (a decimal text would not be fixed-width:
/// `SNOWFLAKE_STATUS_VALUE`). IDs are encrypted with Speck64/128: their public texts reveal
/// neither time nor order, and `snowflake_public_decode` gives them back. Not authentication:
/// any well-formed text decodes to some ID.
///
/// # Safety
/// `key` is valid for `key_len` bytes of reads; `encoding` is NULL or NUL-terminated; `out` is
/// valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_public_new(
    key: *const u8,
    key_len: usize,
    encoding: *const c_char,
    out: *mut *mut SnowflakePublicIds,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(key, out);
        // SAFETY: `key` holds `key_len` readable bytes by contract.
        let key = unsafe { core::slice::from_raw_parts(key, key_len) };
        // SAFETY: NULL or NUL-terminated by contract.
        let encoding = match unsafe { opt_str_arg(encoding, "encoding") }? {
            "" if encoding.is_null() => Encoding::Base62,
            name => name.parse::<Encoding>()?,
        };
        let ids = PublicIds::from_key_bytes(key, encoding)?;
        // SAFETY: `out` is non-NULL and valid for a write by contract.
        unsafe { *out = Box::into_raw(Box::new(ids)).cast() };
        Ok(())
    })
}

/// Releases a codec (NULL: nothing).
///
/// # Safety
/// `ids` is NULL or a handle from `snowflake_public_new` not yet freed; it is not used
/// afterwards.
#[no_mangle]
pub unsafe extern "C" fn snowflake_public_free(ids: *mut SnowflakePublicIds) {
    ffi_boundary!({
        if !ids.is_null() {
            // SAFETY: made by `Box::into_raw` in `snowflake_public_new`, freed once.
            drop(unsafe { Box::from_raw(ids.cast::<PublicIds>()) });
        }
    })
}

/// Writes the public text of `id` and a NUL into `buf`: 12 bytes for base62 and base58, 14 for
/// base36 and base32, 17 for hex (a 21-byte buffer always fits);
/// `SNOWFLAKE_STATUS_BUFFER_TOO_SMALL` (nothing written) when `len` is too short.
///
/// # Safety
/// `ids` is a live handle; `buf` is valid for `len` bytes of writes.
#[no_mangle]
pub unsafe extern "C" fn snowflake_public_encode(
    ids: *const SnowflakePublicIds,
    id: u64,
    buf: *mut c_char,
    len: usize,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(ids, buf);
        // SAFETY: a live handle by contract.
        let text = unsafe { codec(ids) }.encode(id);
        // SAFETY: `buf` holds `len` bytes by contract.
        unsafe { write_c_string(&text, buf, len) }
    })
}

/// The ID of the public text `text`, into `*out`. `SNOWFLAKE_STATUS_INVALID_ID` for a text of
/// the wrong length, a character outside the encoding's alphabet, or a value above
/// `UINT64_MAX`.
///
/// # Safety
/// `ids` is a live handle; `text` is NUL-terminated; `out` is valid for a write.
#[no_mangle]
pub unsafe extern "C" fn snowflake_public_decode(
    ids: *const SnowflakePublicIds,
    text: *const c_char,
    out: *mut u64,
) -> SnowflakeStatus {
    ffi_boundary!({
        non_null!(ids, text, out);
        // SAFETY: non-NULL, NUL-terminated by contract.
        let text = unsafe { str_arg(text, "text") }?;
        // SAFETY: a live handle by contract.
        let id = unsafe { codec(ids) }.decode(text)?;
        // SAFETY: valid for a write by contract.
        unsafe { *out = id };
        Ok(())
    })
}
