//! Instants between Python and core: core counts Unix milliseconds (u64); Python users also
//! hold timezone-aware `datetime`s. Conversions are exact integer arithmetic on `timedelta`s
//! (never through a float `timestamp()`, which rounds some milliseconds away).

use crate::error::{raise, type_error};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{IntoPyDict, PyInt, PyType};

struct DatetimeModule {
    datetime: Py<PyType>,
    timedelta: Py<PyType>,
    /// 1970-01-01T00:00:00Z
    epoch: Py<PyAny>,
    one_ms: Py<PyAny>,
}

fn datetime_module(py: Python<'_>) -> PyResult<&DatetimeModule> {
    static CELL: PyOnceLock<DatetimeModule> = PyOnceLock::new();
    CELL.get_or_try_init(py, || {
        let m = py.import("datetime")?;
        let datetime = m.getattr("datetime")?.cast_into::<PyType>()?;
        let timedelta = m.getattr("timedelta")?.cast_into::<PyType>()?;
        let utc = m.getattr("timezone")?.getattr("utc")?;
        let epoch = datetime.call1((1970, 1, 1, 0, 0, 0, 0, utc))?;
        let one_ms = timedelta.call((), Some(&[("milliseconds", 1)].into_py_dict(py)?))?;
        Ok(DatetimeModule {
            datetime: datetime.unbind(),
            timedelta: timedelta.unbind(),
            epoch: epoch.unbind(),
            one_ms: one_ms.unbind(),
        })
    })
}

/// Unix milliseconds from an `int` or a timezone-aware `datetime` (a naive one is refused:
/// its meaning depends on the machine's time zone).
pub fn unix_ms(value: &Bound<'_, PyAny>) -> PyResult<u64> {
    if value.is_instance_of::<PyInt>() {
        // Core's rule for a caller's time: a bool is a SnowflakeTypeError; before 1970 or
        // above 2^64 - 1 a TimeRangeError (as in every language).
        if let Ok(ms) = value.extract::<u64>() {
            if !value.is_instance_of::<pyo3::types::PyBool>() {
                return Ok(ms);
            }
        }
        let mut text = None;
        return Ok(crate::value::value_of(value, &mut text)?.instant("time").map_err(crate::error::Error)?);
    }
    let py = value.py();
    let m = datetime_module(py)?;
    if !value.is_instance(m.datetime.bind(py))? {
        return Err(type_error("time", "Unix milliseconds (int) or a timezone-aware datetime", value));
    }
    if value.call_method0("utcoffset")?.is_none() {
        // A naive datetime has no time zone, so it names no instant.
        return Err(crate::error::Error(snowflake_core::Error::WrongType {
            name: snowflake_core::Name::snippet("time"),
            expected:
                "a timezone-aware datetime such as datetime.now(timezone.utc) (a naive one names no instant)",
            got: snowflake_core::Name::snippet("a naive datetime"),
        })
        .into());
    }
    let ms = value.sub(m.epoch.bind(py))?.floor_div(m.one_ms.bind(py))?;
    match ms.extract::<u64>() {
        Ok(ms) => Ok(ms),
        Err(_) => Err(raise(
            snowflake_core::ErrorKind::TimeRange,
            format!("{value} is before 1970-01-01T00:00:00Z, before every layout's epoch"),
        )),
    }
}

/// The timezone-aware UTC `datetime` of `unix_ms`.
pub fn to_datetime(py: Python<'_>, unix_ms: u64) -> PyResult<Bound<'_, PyAny>> {
    let m = datetime_module(py)?;
    let delta = m.timedelta.bind(py).call((), Some(&[("milliseconds", unix_ms)].into_py_dict(py)?))?;
    m.epoch.bind(py).add(delta)
}
