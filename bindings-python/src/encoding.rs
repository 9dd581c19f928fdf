//! `encode` / `decode_str`: core's sortable string forms of IDs.

use crate::error::Error;
use pyo3::prelude::*;
use snowflake_core::{Encoding, Name};

pub(crate) fn encoding_arg(name: &str) -> Result<Encoding, Error> {
    Encoding::from_name(name).ok_or(Error(snowflake_core::Error::BadOption {
        name: Name::snippet(name),
        reason: "unknown encoding (decimal, hex, base32, base36, base58, base62)",
    }))
}

/// ``id`` as text in ``encoding``: ``"decimal"``, or the fixed-width, zero-padded and
/// sortable ``"hex"`` (16 characters), ``"base32"`` (Crockford, 13), ``"base36"`` (13),
/// ``"base58"`` (Bitcoin alphabet, 11) or ``"base62"`` (11). String order is numeric order;
/// with ``reverse=True`` it encodes ``2**64 - 1 - id``, so the newest ID sorts first.
#[pyfunction]
#[pyo3(signature = (id, encoding = "base62", *, reverse = false))]
pub fn encode(id: &Bound<'_, PyAny>, encoding: &str, reverse: bool) -> PyResult<String> {
    let id = crate::value::whole_arg(id, "id", u64::MAX)?;
    Ok(snowflake_core::encode(id, encoding_arg(encoding)?, reverse).as_str().to_owned())
}

/// The ID that ``s`` encodes in ``encoding`` (the inverse of :func:`encode` with the same
/// ``reverse``). Strict: a wrong length, a character outside the alphabet or a value above
/// ``2**64 - 1`` raises :class:`InvalidIdError` (a ``ValueError``), never a wrap. Crockford
/// base32 also accepts lower case and reads ``I``/``L`` as 1 and ``O`` as 0.
#[pyfunction]
#[pyo3(signature = (s, encoding = "base62", *, reverse = false))]
pub fn decode_str(s: &str, encoding: &str, reverse: bool) -> Result<u64, Error> {
    Ok(snowflake_core::decode_str(s, encoding_arg(encoding)?, reverse)?)
}
