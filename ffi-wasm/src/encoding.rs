//! `encode` / `decodeStr`: core's fixed-width, sortable encodings, and core's strict reading
//! of an ID given as a decimal string.

use crate::error::answer;
use crate::io::{self, out_u64};
use snowflake_core::{Encoding, Error};

fn encoding(name: &str) -> Result<Encoding, Error> {
    name.parse::<Encoding>()
}

/// `id` in the encoding named by the I/O buffer's first `name_len` bytes; the text in the
/// I/O buffer.
#[no_mangle]
pub extern "C" fn sf_encode(id: u64, name_len: i32, reverse: i32) -> i32 {
    answer(encoding(io::text(name_len)), |e| {
        io::put_str(snowflake_core::encode(id, e, reverse != 0).as_str())
    })
}

/// Parses the text after the encoding's name (the I/O buffer's first `name_len` bytes, the
/// text up to `len`); the ID in word 0 of the out area.
#[no_mangle]
pub extern "C" fn sf_decode_str(name_len: i32, len: i32, reverse: i32) -> i32 {
    let all = io::text(len);
    let split = (name_len.max(0) as usize).min(all.len());
    let (name, text) = if all.is_char_boundary(split) { all.split_at(split) } else { ("", "") };
    let result =
        encoding(name).and_then(|e| snowflake_core::decode_str(text, e, reverse != 0).map_err(Error::from));
    answer(result, |id| {
        out_u64(0, id);
        0
    })
}

/// The error for an option of `encode`/`decodeStr` other than `reverse`, named by the I/O
/// buffer's text (as the Node package's: core's `BadOption`).
#[no_mangle]
pub extern "C" fn sf_encode_option_error(len: i32) -> i32 {
    crate::error::fail(&Error::BadOption {
        name: snowflake_core::Name::snippet(io::text(len)),
        reason: "unknown option (reverse)",
    })
}
