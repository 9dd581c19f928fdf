//! [`Value`]: a value as a front end hands it over (Python's `int`, JS's `number`, PHP's
//! `float`, ...), and the one range check that every option, node value, ID and count goes
//! through, so that every front end accepts and refuses the same values with the same words.

use crate::error::{Error, Result};
use crate::text::{format_name, Name};

/// A value handed over by a front end, in its own terms: core checks it against the option's
/// type, so every front end accepts and refuses the same values with the same messages.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    /// No value: the option keeps its default (Python's `None`, JS `undefined`/`null`, PHP `null`).
    Unset,
    /// A whole number (Python `int`, JS `bigint`, PHP `int`, C `int64_t`).
    Int(i128),
    /// A floating-point number (JS `number`, Python `float`, PHP `float`): accepted for an
    /// integer option only when it is a whole number.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A string (for a text or path option; a number in a string is not a number).
    Text(&'a str),
    /// A path that is not valid UTF-8 (Python's `bytes` paths, `os.PathLike`).
    #[cfg(feature = "std")]
    Path(&'a std::path::Path),
    /// A value of another type, by the front end's name for it (`list`, `object`, ...).
    Other(&'a str),
}

impl Value<'_> {
    /// The whole number from `min` to `max` this value is, for the option, field or argument
    /// `name`: a fraction, a boolean or a string is [`Error::WrongType`], a number out of range
    /// [`Error::ValueRange`]. How every front end reads node values, IDs and counts.
    ///
    /// ```
    /// use snowflake_core::{Error, Value};
    /// assert_eq!(Value::Float(3.0).whole("worker", 0, 31), Ok(3));
    /// assert!(matches!(Value::Int(-1).whole("worker", 0, 31), Err(Error::ValueRange { value: -1, .. })));
    /// assert!(matches!(Value::Bool(true).whole("id", 0, u64::MAX), Err(Error::WrongType { .. })));
    /// ```
    pub fn whole(&self, name: &str, min: u64, max: u64) -> Result<u64> {
        let n = match *self {
            Value::Int(n) => n,
            Value::Float(f) if f.is_finite() && f == (f as i128) as f64 => f as i128,
            Value::Float(f) => {
                return Err(Error::WrongType {
                    name: Name::snippet(name),
                    expected: "a whole number",
                    got: format_name(format_args!("{f}")),
                })
            }
            ref other => {
                return Err(Error::WrongType {
                    name: Name::snippet(name),
                    expected: "a whole number",
                    got: Name::snippet(other.type_name()),
                })
            }
        };
        check_range(name, n, min, max)
    }

    /// The instant in Unix milliseconds this value is, for the argument `name` (a caller's
    /// clock reading): a whole number; one before 1970 or past 2^64 - 1 is
    /// [`Error::Instant`] (kind `TimeRange`, as a time before the layout's epoch is); a
    /// fraction, a boolean or a string is [`Error::WrongType`]. How every front end reads the
    /// time of `next_id_at`.
    ///
    /// ```
    /// use snowflake_core::{ErrorKind, Value};
    /// assert_eq!(Value::Float(1e12).instant("unix_ms"), Ok(1_000_000_000_000));
    /// assert_eq!(Value::Int(-1).instant("unix_ms").unwrap_err().kind(), ErrorKind::TimeRange);
    /// assert_eq!(Value::Text("1e3").instant("unix_ms").unwrap_err().kind(), ErrorKind::Type);
    /// ```
    pub fn instant(&self, name: &str) -> Result<u64> {
        match self.whole(name, 0, u64::MAX) {
            Err(Error::ValueRange { value, .. }) => Err(Error::Instant { unix_ms: value }),
            other => other,
        }
    }

    pub(crate) fn type_name(&self) -> &str {
        match self {
            Value::Unset => "nothing",
            Value::Int(_) => "an integer",
            // JS's numbers are all floats: `1` is a number, not "a fractional number".
            Value::Float(f) if *f % 1.0 == 0.0 => "a number",
            Value::Float(_) => "a fractional number",
            Value::Bool(_) => "a boolean",
            Value::Text(_) => "a string",
            #[cfg(feature = "std")]
            Value::Path(_) => "a path",
            Value::Other(name) => name,
        }
    }
}

/// `value` as a `u64` when it is from `min` to `max`, else [`Error::ValueRange`] for `name`.
pub(crate) fn check_range(name: &str, value: i128, min: u64, max: u64) -> Result<u64> {
    if value < i128::from(min) || value > i128::from(max) {
        return Err(Error::ValueRange { name: Name::snippet(name), value, min, max });
    }
    Ok(value as u64)
}
