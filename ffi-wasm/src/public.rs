//! `PublicIds`: core's public IDs (Speck64/128 under a 16-byte key, fixed-width text).

use crate::error::answer;
use crate::io::{self, out_u64};
use alloc::boxed::Box;
use snowflake_core::{Encoding, PublicIds};

fn of(handle: i32) -> &'static PublicIds {
    // SAFETY: the JS layer passes only live handles of this type.
    unsafe { &*(handle as usize as *const PublicIds) }
}

/// Public IDs under the key of the I/O buffer's first `key_len` bytes, written in the encoding
/// named after it (up to `len`; none: base62); a handle. The key's bytes are wiped from the
/// buffer, and from the copy made here.
#[no_mangle]
pub extern "C" fn sf_public_new(key_len: i32, len: i32) -> i32 {
    let (mut key, key_len) = io::copy::<64>(0, key_len.max(0) as usize);
    let (name, name_len) = io::copy::<32>(key_len, (len.max(0) as usize).saturating_sub(key_len));
    io::wipe(key_len);
    let encoding = match &name[..name_len] {
        [] => Ok(Encoding::Base62),
        name => core::str::from_utf8(name).unwrap_or("").parse::<Encoding>(),
    };
    let result = encoding.and_then(|e| PublicIds::from_key_bytes(&key[..key_len], e));
    key.fill(0);
    answer(result, |p| Box::into_raw(Box::new(p)) as usize as i32)
}

/// Frees public IDs (core wipes the round keys on drop).
#[no_mangle]
pub extern "C" fn sf_public_free(handle: i32) {
    // SAFETY: a live handle of sf_public_new, freed once.
    drop(unsafe { Box::from_raw(handle as usize as *mut PublicIds) });
}

/// The public text of `id`, in the I/O buffer.
#[no_mangle]
pub extern "C" fn sf_public_encode(handle: i32, id: u64) -> i32 {
    io::put_str(of(handle).encode(id).as_str())
}

/// The ID of the I/O buffer's public text, in word 0 of the out area.
#[no_mangle]
pub extern "C" fn sf_public_decode(handle: i32, len: i32) -> i32 {
    answer(of(handle).decode(io::text(len)), |id| {
        out_u64(0, id);
        0
    })
}

/// The texts' encoding's name, in the I/O buffer.
#[no_mangle]
pub extern "C" fn sf_public_encoding(handle: i32) -> i32 {
    io::put_str(of(handle).encoding().name())
}
