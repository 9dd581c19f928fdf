//! `PublicIds`: core's public IDs (Speck64/128 under a 128-bit key, fixed-width text).

use crate::encoding::encoding_arg;
use crate::error::{type_error, Error};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use snowflake_core::PublicIds;

/// A `str` argument, or a SnowflakeTypeError naming it.
fn str_arg(v: &Bound<'_, PyAny>, name: &str) -> PyResult<String> {
    match v.cast::<PyString>() {
        Ok(s) => Ok(s.to_cow()?.into_owned()),
        Err(_) => Err(type_error(name, "a str", v)),
    }
}

/// Public IDs: each ID encrypted with Speck64/128 under ``key`` (16 bytes) and written in a
/// fixed-width ``encoding`` (``"base62"``, 11 characters, by default; or ``"base58"``,
/// ``"base36"``, ``"base32"``, ``"hex"``), so that IDs shown to the world reveal neither their
/// time, nor their order, nor how many were made in between. :meth:`decode` gives the ID back.
///
/// This is **not authentication**: any well-formed text decodes to *some* ID; look the ID up as
/// for any ID. A key of another length raises :class:`ValueRangeError`, a key that is not
/// ``bytes`` (a ``str``, a ``bytearray``, ``None``) :class:`SnowflakeTypeError`; a text of the
/// wrong width or alphabet :class:`InvalidIdError` (both ``ValueError``\ s).
#[pyclass(name = "PublicIds", module = "libsnowflake", frozen)]
pub struct PyPublicIds(PublicIds);

#[pymethods]
impl PyPublicIds {
    #[new]
    #[pyo3(signature = (key, encoding = None), text_signature = "(key, encoding='base62')")]
    fn new(key: &Bound<'_, PyAny>, encoding: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        // `bytes` only (a `bytearray` could change under the cipher): anything else is a
        // SnowflakeTypeError naming the argument, as for every argument of this package.
        let key = key.cast::<PyBytes>().map_err(|_| type_error("key", "16 bytes (a bytes object)", key))?;
        let encoding = match encoding {
            Some(e) => str_arg(e, "encoding")?,
            None => "base62".into(),
        };
        Ok(PyPublicIds(PublicIds::from_key_bytes(key.as_bytes(), encoding_arg(&encoding)?).map_err(Error)?))
    }

    /// The public text of ``id`` (``0 <= id < 2**64``).
    #[pyo3(signature = (id))]
    fn encode(&self, id: &Bound<'_, PyAny>) -> PyResult<String> {
        let id = crate::value::whole_arg(id, "id", u64::MAX)?;
        Ok(self.0.encode(id).as_str().to_owned())
    }

    /// The ID of a public text.
    #[pyo3(signature = (text))]
    fn decode(&self, text: &Bound<'_, PyAny>) -> PyResult<u64> {
        Ok(self.0.decode(&str_arg(text, "text")?).map_err(Error)?)
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
