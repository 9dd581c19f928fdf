//! Core errors to Python exceptions: the one place where that mapping lives.
//!
//! The exception classes are plain Python (`libsnowflake/_errors.py`), because
//! `LayoutError` and friends must inherit from both `SnowflakeError` and `ValueError`, which a
//! Rust-declared exception cannot. They are looked up once, on the first error.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyType;
use snowflake_core::ErrorKind;

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

/// The exception class of each error family, by its name in `libsnowflake._errors`.
const fn class_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Layout => "LayoutError",
        ErrorKind::Value => "ValueRangeError",
        ErrorKind::InvalidId => "InvalidIdError",
        ErrorKind::TimeRange => "TimeRangeError",
        ErrorKind::ClockBehind => "ClockBehindError",
        ErrorKind::SequenceExhausted => "SequenceExhaustedError",
        ErrorKind::Forked => "ForkedProcessError",
        ErrorKind::SharedMismatch => "SharedMismatchError",
        ErrorKind::Lease => "LeaseError",
        ErrorKind::StateFile => "StateFileError",
        ErrorKind::Io => "SnowflakeOSError",
        // ErrorKind is non_exhaustive: a family added to core later is still a SnowflakeError.
        _ => "SnowflakeError",
    }
}

/// The class `name` of `libsnowflake._errors`.
pub fn class<'py>(py: Python<'py>, name: &'static str) -> PyResult<Bound<'py, PyType>> {
    static MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();
    let module = MODULE.get_or_try_init(py, || py.import("libsnowflake._errors").map(Bound::unbind))?;
    Ok(module.bind(py).getattr(name)?.cast_into::<PyType>()?)
}

/// An exception of class `name` (of `libsnowflake._errors`) with `message`, for the errors
/// the binding finds itself (e.g. a child re-creating its parent's generator).
pub fn raise(name: &'static str, message: String) -> PyErr {
    Python::attach(|py| match class(py, name) {
        Ok(cls) => PyErr::from_type(cls, (message,)),
        Err(e) => e,
    })
}

impl From<Error> for PyErr {
    fn from(Error(e): Error) -> PyErr {
        use snowflake_core::Error as E;
        let message = e.to_string();
        Python::attach(|py| {
            let cls = match class(py, class_name(e.kind())) {
                Ok(cls) => cls,
                Err(err) => return err,
            };
            match e {
                E::ClockBehind { behind_ms, retry_after_ms } => {
                    PyErr::from_type(cls, (message, behind_ms, retry_after_ms))
                }
                E::SequenceExhausted { retry_after_ms } => PyErr::from_type(cls, (message, retry_after_ms)),
                _ => PyErr::from_type(cls, (message,)),
            }
        })
    }
}

/// An error of opening a generator that works with other processes (`shared=`,
/// `state_file=`, `lease=`): core's errors map as above, the others by their family.
#[derive(Debug)]
pub struct OpenError(pub snowflake_core::OpenError);

impl From<OpenError> for PyErr {
    fn from(OpenError(e): OpenError) -> PyErr {
        match e {
            snowflake_core::OpenError::Core(e) => Error(e).into(),
            e => raise(class_name(e.kind()), e.to_string()),
        }
    }
}

/// A `TypeError` naming what was expected.
pub fn type_error(what: &str, got: &Bound<'_, PyAny>) -> PyErr {
    let type_name = got.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
    PyTypeError::new_err(format!("{what}, not {type_name}"))
}
