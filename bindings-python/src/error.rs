//! Core errors to Python exceptions: the one place where that mapping lives.
//!
//! The exception classes are plain Python (`libsnowflake/_errors.py`, generated from core's
//! table of kinds by `scripts/tables.py`), because `LayoutError` and friends must inherit from
//! both `SnowflakeError` and `ValueError`, which a Rust-declared exception cannot. Each error
//! is raised as the class its kind names in that table.

use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;

/// A core error on its way to Python: every binding function returns `Result<T, Error>` and
/// `?` turns core errors into it; PyO3 then raises it through `From<Error> for PyErr`.
#[derive(Debug)]
pub struct Error(pub snowflake_core::Error);

impl From<snowflake_core::Error> for Error {
    fn from(e: snowflake_core::Error) -> Error {
        Error(e)
    }
}

impl From<snowflake_core::ParseIdError> for Error {
    fn from(e: snowflake_core::ParseIdError) -> Error {
        Error(e.into())
    }
}

/// The class `name` of `libsnowflake._errors`.
pub fn class<'py>(py: Python<'py>, name: &str) -> PyResult<Bound<'py, PyType>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let module = MODULE.get_or_try_init(py, || py.import("libsnowflake._errors").map(Bound::unbind))?;
    Ok(module.bind(py).getattr(name)?.cast_into::<PyType>()?)
}

/// An exception of `kind`'s class with `message`, for the few errors the binding finds itself
/// (a `datetime` before 1970).
pub fn raise(kind: snowflake_core::ErrorKind, message: String) -> PyErr {
    Python::attach(|py| match class(py, kind.info().python) {
        Ok(cls) => PyErr::from_type(cls, (message,)),
        Err(e) => e,
    })
}

impl From<Error> for PyErr {
    fn from(Error(e): Error) -> PyErr {
        use snowflake_core::Error as E;
        let message = e.to_string();
        Python::attach(|py| {
            // The class of the error's kind, from core's table (libsnowflake/_errors.py is
            // generated from the same table).
            let cls = match class(py, e.kind().info().python) {
                Ok(cls) => cls,
                Err(err) => return err,
            };
            match &e {
                E::ClockBehind { behind_ms, retry_after_ms }
                | E::BehindState { behind_ms, retry_after_ms, .. } => {
                    PyErr::from_type(cls, (message, *behind_ms, *retry_after_ms))
                }
                E::SequenceExhausted { retry_after_ms } => PyErr::from_type(cls, (message, *retry_after_ms)),
                E::Io(io) => {
                    // An OSError whose errno and filename are those of the failed operation.
                    let err = PyErr::from_type(cls, (message,));
                    let value = err.value(py);
                    let _ = value.setattr("errno", io.errno());
                    let _ = value.setattr("strerror", io.source.to_string());
                    let _ = value.setattr("filename", io.target.as_str());
                    let _ = value.setattr("action", io.action);
                    err
                }
                _ => PyErr::from_type(cls, (message,)),
            }
        })
    }
}

/// Core's `WrongType` (a `SnowflakeTypeError`, a `TypeError`) for an argument that is not an
/// option: `name` must be `expected`, not the type of `got`.
pub fn type_error(name: &str, expected: &'static str, got: &Bound<'_, PyAny>) -> PyErr {
    let type_name = got.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
    Error(snowflake_core::Error::WrongType {
        name: snowflake_core::Name::snippet(name),
        expected,
        got: snowflake_core::Name::snippet(&type_name),
    })
    .into()
}
