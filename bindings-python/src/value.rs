//! Python values handed to core: core's [`Value`] of an object, and whole-number arguments
//! (IDs, counts), so that every argument goes through core's one set of type and range rules.

use crate::error::Error;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt, PyString};
use snowflake_core::Value;

/// The text of a `str`, read in place where CPython keeps it: the UTF-8 form it caches in
/// the object (an ASCII string's is its data), so that a layout, a node field's name or an
/// option handed over per request is not copied (PyO3's `to_cow`, under the 3.9 stable ABI,
/// makes a `bytes` and a `String` of each). `PyUnicode_AsUTF8AndSize` is in the stable ABI
/// from 3.10 and in CPython's API since 3.3, so this wheel (abi3, for 3.9 and later) declares
/// it itself; on Windows, whose `python3.dll` exports only the stable ABI of its version, the
/// text is copied. A `str` that is no valid UTF-8 (a lone surrogate) raises
/// `UnicodeEncodeError`, as from `to_cow`.
pub fn text_of<'a>(s: &'a Bound<'_, PyString>) -> PyResult<std::borrow::Cow<'a, str>> {
    #[cfg(not(windows))]
    {
        extern "C" {
            fn PyUnicode_AsUTF8AndSize(
                unicode: *mut pyo3::ffi::PyObject,
                size: *mut pyo3::ffi::Py_ssize_t,
            ) -> *const std::os::raw::c_char;
        }
        let mut len: pyo3::ffi::Py_ssize_t = 0;
        // SAFETY: `s` is a live `str` (the GIL is held through `Bound`); the result is NULL
        // with an exception set, or `len` bytes of UTF-8 that the object keeps for as long as
        // it lives, which `'a` bounds.
        unsafe {
            let data = PyUnicode_AsUTF8AndSize(s.as_ptr(), &mut len);
            if data.is_null() {
                return Err(PyErr::fetch(s.py()));
            }
            let bytes = std::slice::from_raw_parts(data.cast::<u8>(), len as usize);
            Ok(std::borrow::Cow::Borrowed(std::str::from_utf8_unchecked(bytes)))
        }
    }
    #[cfg(windows)]
    s.to_cow()
}

/// Core's `Value` of a Python object: how an option or node value is handed over.
pub fn value_of<'a>(v: &'a Bound<'_, PyAny>, text: &'a mut Option<String>) -> PyResult<Value<'a>> {
    if v.is_none() {
        return Ok(Value::Unset);
    }
    if let Ok(b) = v.cast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if v.is_instance_of::<PyInt>() {
        // Beyond i128 a value is out of every range anyway: say so by its sign.
        return Ok(Value::Int(v.extract::<i128>().unwrap_or_else(|_| {
            if v.lt(0).unwrap_or(false) {
                i128::MIN
            } else {
                i128::MAX
            }
        })));
    }
    if v.is_instance_of::<PyFloat>() {
        // A float is not an integer type in Python, whatever its value.
        return Ok(Value::Other("float"));
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(Value::Text(text.insert(text_of(s)?.into_owned())));
    }
    // os.PathLike (pathlib.Path): its str (bytes paths are not supported).
    let fspath = v.py().import("os")?.getattr("fspath")?;
    if let Ok(p) = fspath.call1((v,)) {
        if let Ok(s) = p.cast::<PyString>() {
            return Ok(Value::Text(text.insert(s.to_cow()?.into_owned())));
        }
    }
    let type_name = v.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "object".into());
    Ok(Value::Other(text.insert(type_name)))
}

/// A whole-number argument in `0..=max` (an ID, a count): a plain `int` in range is read at
/// once; anything else goes through core's rules (`Value::whole`), so a bool or float is a
/// `SnowflakeTypeError` and an int out of range a `ValueRangeError`, each naming `name`.
pub fn whole_arg(v: &Bound<'_, PyAny>, name: &str, max: u64) -> PyResult<u64> {
    if v.is_exact_instance_of::<PyInt>() {
        if let Ok(n) = v.extract::<u64>() {
            if n <= max {
                return Ok(n);
            }
        }
    }
    let mut text = None;
    Ok(value_of(v, &mut text)?.whole(name, 0, max).map_err(Error)?)
}
