//! Errors. Every error is a small `Copy` value whose `Display` names the problem (the field,
//! the value, the limit, how far the clock is behind), and whose [`ErrorKind`] gives the
//! stable code that every binding reports.

use crate::text::Name;
use core::fmt;

/// The result type of this crate.
pub type Result<T, E = Error> = core::result::Result<T, E>;

/// What is wrong with a layout spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LayoutError {
    /// The spec is empty.
    Empty,
    /// A bare word that is not one of the presets.
    UnknownPreset {
        /// The word.
        name: Name,
    },
    /// A field is not written `name:bits`.
    BadField {
        /// The text of the field.
        text: Name,
    },
    /// A field name is not a lowercase identifier of at most 32 bytes.
    BadName {
        /// The name as written.
        name: Name,
    },
    /// A field's width is not a number.
    BadWidth {
        /// The field.
        name: Name,
    },
    /// A field has zero bits.
    ZeroWidth {
        /// The field.
        name: Name,
    },
    /// The widths add up to more than 64 bits.
    TooWide {
        /// The sum of the widths.
        total_bits: u32,
    },
    /// More fields than [`crate::MAX_FIELDS`].
    TooManyFields,
    /// The first field is not `time`.
    TimeNotFirst,
    /// There is no `sequence` field.
    NoSequence,
    /// `sequence` appears twice.
    TwoSequences,
    /// A name appears twice.
    DuplicateName {
        /// The name.
        name: Name,
    },
    /// An option other than `epoch` and `tick`.
    UnknownOption {
        /// The option as written.
        name: Name,
    },
    /// An option given twice.
    DuplicateOption {
        /// The option.
        name: Name,
    },
    /// `epoch=` is neither Unix milliseconds nor an RFC 3339 UTC timestamp.
    BadEpoch {
        /// The value as written.
        text: Name,
    },
    /// `tick=` is not `Nms` or `Ns`.
    BadTick {
        /// The value as written.
        text: Name,
    },
    /// `tick=0ms`.
    TickZero,
    /// The last instant of the layout (epoch + 2^time_bits ticks) does not fit in u64 ms.
    TimeRangeOverflow,
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use LayoutError::*;
        match self {
            Empty => f.write_str("the layout spec is empty"),
            UnknownPreset { name } => write!(
                f,
                "`{name}` is not a preset (twitter, discord, instagram, sonyflake, baidu, mastodon, game) nor a spec like `time:41,worker:10,sequence:12`"
            ),
            BadField { text } => write!(f, "field `{text}` is not written `name:bits`"),
            BadName { name } => write!(
                f,
                "field name `{name}` must be a lowercase letter followed by lowercase letters, digits or `_` (at most 32 bytes)"
            ),
            BadWidth { name } => write!(f, "the width of field `{name}` is not a number of bits"),
            ZeroWidth { name } => write!(f, "field `{name}` has zero width"),
            TooWide { total_bits } => {
                write!(f, "the fields add up to {total_bits} bits; at most 64 fit in an ID")
            }
            TooManyFields => write!(f, "more than {} fields", crate::MAX_FIELDS),
            TimeNotFirst => f.write_str("the first (highest) field must be `time`"),
            NoSequence => f.write_str("the layout has no `sequence` field"),
            TwoSequences => f.write_str("`sequence` appears more than once"),
            DuplicateName { name } => write!(f, "field `{name}` appears more than once"),
            UnknownOption { name } => {
                write!(f, "unknown layout option `{name}` (the options are `epoch=` and `tick=`)")
            }
            DuplicateOption { name } => write!(f, "layout option `{name}` is given twice"),
            BadEpoch { text } => write!(
                f,
                "epoch `{text}` is neither Unix milliseconds nor an RFC 3339 UTC timestamp like 2010-11-04T01:42:54.657Z"
            ),
            BadTick { text } => write!(f, "tick `{text}` is not written `Nms` or `Ns` (e.g. `1ms`, `10ms`, `1s`)"),
            TickZero => f.write_str("the tick must be at least 1ms"),
            TimeRangeOverflow => f.write_str(
                "epoch + 2^time_bits ticks overflows 64-bit milliseconds: use fewer time bits or a shorter tick",
            ),
        }
    }
}

/// What is wrong with an encoded ID string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParseIdError {
    /// The string is empty.
    Empty,
    /// A fixed-width encoding got a string of another length.
    Length {
        /// The length the encoding has.
        expected: u8,
        /// The length given.
        got: usize,
    },
    /// A character outside the encoding's alphabet.
    Char {
        /// Its byte position.
        position: usize,
    },
    /// The value does not fit in 64 bits.
    Overflow,
}

impl fmt::Display for ParseIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseIdError::Empty => f.write_str("the ID string is empty"),
            ParseIdError::Length { expected, got } => {
                write!(f, "the ID string has {got} characters; this encoding has exactly {expected}")
            }
            ParseIdError::Char { position } => {
                write!(f, "character {position} of the ID string is not in the encoding's alphabet")
            }
            ParseIdError::Overflow => f.write_str("the ID string is larger than 2^64 - 1"),
        }
    }
}

/// Every error of this crate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The layout spec is invalid.
    Layout(LayoutError),
    /// A node value or option names a field the layout does not have.
    UnknownField {
        /// The name given.
        name: Name,
    },
    /// `time` or `sequence` given where a node field is expected.
    NotANodeField {
        /// The name given.
        name: Name,
    },
    /// A value does not fit its field (or an option its range).
    ValueRange {
        /// The field or option.
        name: Name,
        /// The value given.
        value: u64,
        /// The largest value allowed.
        max: u64,
    },
    /// A node spec (`worker=3,datacenter=1`) or options spec (`max_wait_ms=0;...`) is malformed.
    BadOption {
        /// The option (or the text) at fault.
        name: Name,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// An encoded ID string is malformed.
    InvalidId(ParseIdError),
    /// An ID does not belong to the layout (bits set above its width).
    IdRange {
        /// The ID.
        id: u64,
        /// The layout's width in bits.
        bits: u8,
    },
    /// The instant is before the layout's epoch or after its last instant.
    TimeRange {
        /// The instant, in Unix ms.
        unix_ms: u64,
        /// The layout's epoch.
        first_unix_ms: u64,
        /// The layout's last instant.
        last_unix_ms: u64,
    },
    /// The clock is behind the generator by more than `max_drift_ms`, for longer than
    /// `max_wait_ms` allows.
    ClockBehind {
        /// How far the clock is behind the generator's logical time, in ms.
        behind_ms: u64,
        /// When a retry can succeed, in ms from now.
        retry_after_ms: u64,
    },
    /// Every sequence number of the current tick (and of the ticks `max_drift_ms` allows to
    /// borrow) is taken, and waiting for the next one would take longer than `max_wait_ms`.
    SequenceExhausted {
        /// When a retry can succeed, in ms from now.
        retry_after_ms: u64,
    },
    /// The generator was inherited by a child process through `fork()`; issuing from it could
    /// repeat the parent's IDs.
    Forked,
    /// Another generator in this process has the same layout and node values but a
    /// different `rollover` field, so the two could issue the same IDs.
    Conflict,
    /// In a child of `fork()`: a generator with this layout and node values was made before
    /// the fork, so the parent (or a sibling) may still issue its IDs; the child needs node
    /// values of its own (or a shared state).
    ForkedIdentity,
    /// The generator's worker-id lease lapsed (not renewed in time, taken by another holder,
    /// or released): it stops issuing rather than risk an ID another holder issues too.
    LeaseLost,
    /// Reserving more time in the generator's state file failed (the OS error number): it
    /// stops issuing rather than issue IDs a restart could repeat.
    StateFile {
        /// The OS error number (`errno`).
        errno: i32,
    },
}

impl From<LayoutError> for Error {
    fn from(e: LayoutError) -> Error {
        Error::Layout(e)
    }
}

impl From<ParseIdError> for Error {
    fn from(e: ParseIdError) -> Error {
        Error::InvalidId(e)
    }
}

/// The family of an error: what bindings map to an exception class, a status code, or a
/// Node `code`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An invalid layout spec.
    Layout,
    /// A bad node value, option, or argument.
    Value,
    /// A malformed encoded ID, or an ID outside the layout.
    InvalidId,
    /// An instant outside the layout's time range.
    TimeRange,
    /// The clock is behind the generator.
    ClockBehind,
    /// The current tick's sequence is used up.
    SequenceExhausted,
    /// The generator was inherited through `fork()`.
    Forked,
    /// A shared state exists with another layout, node or policy (or is not ours to use).
    SharedMismatch,
    /// A worker-id lease could not be claimed, or lapsed.
    Lease,
    /// A state file is corrupt or belongs to another layout or node.
    StateFile,
    /// A file, lock, map or network operation failed.
    Io,
}

impl ErrorKind {
    /// The stable code that every binding reports (`ERR_SNOWFLAKE_CLOCK_BEHIND`, ...).
    ///
    /// ```
    /// assert_eq!(snowflake_core::ErrorKind::ClockBehind.code(), "ERR_SNOWFLAKE_CLOCK_BEHIND");
    /// ```
    pub const fn code(self) -> &'static str {
        match self {
            ErrorKind::Layout => "ERR_SNOWFLAKE_LAYOUT",
            ErrorKind::Value => "ERR_SNOWFLAKE_VALUE",
            ErrorKind::InvalidId => "ERR_SNOWFLAKE_INVALID_ID",
            ErrorKind::TimeRange => "ERR_SNOWFLAKE_TIME_RANGE",
            ErrorKind::ClockBehind => "ERR_SNOWFLAKE_CLOCK_BEHIND",
            ErrorKind::SequenceExhausted => "ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED",
            ErrorKind::Forked => "ERR_SNOWFLAKE_FORKED",
            ErrorKind::SharedMismatch => "ERR_SNOWFLAKE_SHARED_MISMATCH",
            ErrorKind::Lease => "ERR_SNOWFLAKE_LEASE",
            ErrorKind::StateFile => "ERR_SNOWFLAKE_STATE_FILE",
            ErrorKind::Io => "ERR_SNOWFLAKE_IO",
        }
    }
}

impl Error {
    /// The family of this error.
    ///
    /// ```
    /// use snowflake_core::{ErrorKind, Layout};
    /// let err = Layout::parse("time:41,sequence:0").unwrap_err();
    /// assert_eq!(err.kind(), ErrorKind::Layout);
    /// ```
    pub const fn kind(&self) -> ErrorKind {
        match self {
            Error::Layout(_) => ErrorKind::Layout,
            Error::UnknownField { .. }
            | Error::NotANodeField { .. }
            | Error::ValueRange { .. }
            | Error::BadOption { .. }
            | Error::Conflict => ErrorKind::Value,
            Error::InvalidId(_) | Error::IdRange { .. } => ErrorKind::InvalidId,
            Error::TimeRange { .. } => ErrorKind::TimeRange,
            Error::ClockBehind { .. } => ErrorKind::ClockBehind,
            Error::SequenceExhausted { .. } => ErrorKind::SequenceExhausted,
            Error::Forked | Error::ForkedIdentity => ErrorKind::Forked,
            Error::LeaseLost => ErrorKind::Lease,
            Error::StateFile { .. } => ErrorKind::Io,
        }
    }

    /// For clock errors, when a retry can succeed, in ms from now.
    pub const fn retry_after_ms(&self) -> Option<u64> {
        match self {
            Error::ClockBehind { retry_after_ms, .. } | Error::SequenceExhausted { retry_after_ms } => {
                Some(*retry_after_ms)
            }
            _ => None,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Layout(e) => write!(f, "invalid layout: {e}"),
            Error::UnknownField { name } => write!(f, "the layout has no field `{name}`"),
            Error::NotANodeField { name } => {
                write!(f, "`{name}` is set by the generator, not a node value")
            }
            Error::ValueRange { name, value, max } => {
                write!(f, "{name} = {value} is out of range: the largest allowed is {max}")
            }
            Error::BadOption { name, reason } => write!(f, "`{name}`: {reason}"),
            Error::InvalidId(e) => write!(f, "invalid ID string: {e}"),
            Error::IdRange { id, bits } => {
                write!(f, "ID {id} has bits set above the layout's {bits} bits")
            }
            Error::TimeRange { unix_ms, first_unix_ms, last_unix_ms } => {
                if unix_ms < first_unix_ms {
                    write!(
                        f,
                        "time {unix_ms} (Unix ms) is before the layout's epoch {first_unix_ms}"
                    )
                } else {
                    write!(
                        f,
                        "time {unix_ms} (Unix ms) is past the layout's last instant {last_unix_ms}"
                    )
                }
            }
            Error::ClockBehind { behind_ms, retry_after_ms } => write!(
                f,
                "the clock is {behind_ms} ms behind the generator (it moved back, or more IDs were borrowed ahead than max_drift_ms allows); retry in {retry_after_ms} ms"
            ),
            Error::SequenceExhausted { retry_after_ms } => write!(
                f,
                "every sequence number of the current tick is taken; retry in {retry_after_ms} ms (or raise max_wait_ms / max_drift_ms)"
            ),
            Error::Forked => f.write_str(
                "this generator was inherited through fork(): it would repeat the parent's IDs; create a new generator in the child with its own worker value (or use a shared generator)",
            ),
            Error::Conflict => f.write_str(
                "another generator in this process has the same layout and node values with a different rollover field; the two could issue the same IDs",
            ),
            Error::ForkedIdentity => f.write_str(
                "a generator with this layout and node values was made before this process was forked: the parent (or a sibling) may still issue its IDs; give this process node values of its own (e.g. its own worker value), or use a shared state (shared=...)",
            ),
            Error::LeaseLost => f.write_str(
                "the worker-id lease lapsed (not renewed in time, or taken by another holder): this generator stops issuing; open a new one to claim a value again",
            ),
            Error::StateFile { errno } => write!(
                f,
                "could not reserve more time in the state file (OS error {errno}); no ID was issued"
            ),
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {}
#[cfg(feature = "std")]
impl std::error::Error for LayoutError {}
#[cfg(feature = "std")]
impl std::error::Error for ParseIdError {}
