//! `PublicIds`: core's public IDs (Speck64/128 under a 128-bit key, fixed-width text).

use crate::encoding::encoding_arg;
use crate::error::Error;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use snowflake_core::PublicIds;

/// Public IDs: each ID encrypted with Speck64/128 under ``key`` (16 bytes) and written in a
/// fixed-width ``encoding`` (``"base62"``, 11 characters, by default; or ``"base58"``,
/// ``"base36"``, ``"base32"``, ``"hex"``), so that IDs shown to the world reveal neither their
/// time, nor their order, nor how many were made in between. :meth:`decode` gives the ID back.
///
/// This is **not authentication**: any well-formed text decodes to *some* ID; look the ID up as
/// for any ID. A key of another length raises :class:`ValueRangeError`; a text of the wrong
/// width or alphabet :class:`InvalidIdError` (both ``ValueError``\ s).
#[pyclass(name = "PublicIds", module = "libsnowflake", frozen)]
pub struct PyPublicIds(PublicIds);

#[pymethods]
impl PyPublicIds {
    #[new]
    #[pyo3(signature = (key, encoding = "base62"))]
    fn new(key: &[u8], encoding: &str) -> Result<Self, Error> {
        Ok(PyPublicIds(PublicIds::from_key_bytes(key, encoding_arg(encoding)?)?))
    }

    /// The public text of ``id`` (``0 <= id < 2**64``).
    #[pyo3(signature = (id))]
    fn encode(&self, id: &Bound<'_, PyAny>) -> PyResult<String> {
        let id = crate::generator::whole_arg(id, "id", u64::MAX)?;
        Ok(self.0.encode(id).as_str().to_owned())
    }

    /// The ID of a public text.
    #[pyo3(signature = (text))]
    fn decode(&self, text: &str) -> Result<u64, Error> {
        Ok(self.0.decode(text)?)
    }

    /// The texts' encoding.
    #[getter]
    fn encoding(&self) -> &'static str {
        self.0.encoding().name()
    }

    fn __repr__(&self) -> String {
        // Never the key.
        format!("PublicIds(<key>, encoding='{}')", self.0.encoding())
    }

    /// Not picklable: a pickle would carry the key's round keys in the clear.
    fn __reduce__(&self) -> PyResult<()> {
        Err(PyTypeError::new_err("PublicIds holds a secret key and cannot be pickled"))
    }
}
