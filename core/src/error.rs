//! Errors: one [`Error`] type for everything the crate can refuse or fail at, whose `Display`
//! names the problem (the field, the value, the limit, how far the clock is behind, the file),
//! and one table of kinds, [`KINDS`], that gives each [`ErrorKind`] its stable code, C status
//! number, Python class, PHP class and Node class and code. Every front end maps errors through
//! that table; their tests check their classes against it (`tests/vectors/tables.json`).
//!
//! The errors of the hot path are plain data; only the errors of opening a generator across
//! processes (files, Redis) carry text, behind an `Arc`, so an `Error` stays cheap to clone.

use crate::text::{Name, Spelling};
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
    /// A custom spec without `epoch=`: a silent 1970 epoch makes `time:41` end in 2039.
    NoEpoch {
        /// The layout's last instant from a 1970 epoch, in Unix ms.
        last_unix_ms: u64,
        /// Midnight UTC of the day the spec was parsed, in Unix ms, to suggest as the epoch
        /// (`None` without a clock, in `no_std`).
        today_unix_ms: Option<u64>,
    },
}

impl fmt::Display for LayoutError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use LayoutError::*;
        match self {
            Empty => f.write_str("the layout spec is empty"),
            UnknownPreset { name } => write!(
                f,
                "`{name}` is not a preset (twitter, discord, instagram, sonyflake, baidu, mastodon, game, js53) nor a spec like `time:41,worker:10,sequence:12;epoch=2026-01-01T00:00:00Z`"
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
            TooManyFields => write!(f, "more than {} fields", crate::limits::MAX_FIELDS),
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
            NoEpoch { last_unix_ms, today_unix_ms } => {
                let mut buf = [0u8; crate::time::RFC3339_LEN];
                match crate::time::format_rfc3339(*last_unix_ms, &mut buf) {
                    Some(last) => write!(f, "a custom layout must state its epoch (from 1970 it would end on {}): add ", &last[..10])?,
                    None => f.write_str("a custom layout must state its epoch: add ")?,
                }
                match today_unix_ms.and_then(|ms| crate::time::format_rfc3339(ms, &mut buf)) {
                    // The date alone is what a reader checks; the form is one `epoch=` takes.
                    Some(today) => write!(f, "`;epoch={}T00:00:00Z` (today), or any instant before your first ID", &today[..10]),
                    None => f.write_str("`;epoch=` with an instant before your first ID, e.g. `;epoch=2026-01-01T00:00:00Z`"),
                }
            }
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
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The layout spec is invalid.
    Layout(LayoutError),
    /// A node value or option names a field the layout does not have.
    UnknownField {
        /// The name given.
        name: Name,
        /// The layout's node fields (as many as fit), `, ` between them; empty where unknown.
        fields: Name,
        /// How many more node fields there are than `fields` names.
        more: u8,
        /// Which of `fields` (from 1) `name` is a typo of; 0 for none.
        near: u8,
    },
    /// `time` or `sequence` given where a node field is expected.
    NotANodeField {
        /// The name given.
        name: Name,
    },
    /// A number does not fit its field, option or argument.
    ValueRange {
        /// The field, option or argument.
        name: Name,
        /// The value given.
        value: i128,
        /// The smallest value allowed.
        min: u64,
        /// The largest value allowed.
        max: u64,
    },
    /// Node values that name some node fields of the layout but not all (none is the all-zero
    /// default): the missing ones would silently be 0.
    MissingNodeValues {
        /// The missing fields, `, `-separated (as many as fit).
        missing: Name,
        /// How many more are missing than `missing` lists.
        more: u8,
    },
    /// A node spec (`worker=3,datacenter=1`) or options spec (`max_wait_ms=0;...`) is malformed,
    /// or an option has a value it cannot take.
    BadOption {
        /// The option (or the text) at fault.
        name: Name,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// No option has this name.
    UnknownOption {
        /// The name given.
        name: Name,
        /// How the front end spells options (the message lists them so).
        spelling: Spelling,
        /// The options there are (`crate::OPTIONS`' names).
        known: &'static [&'static str],
    },
    /// No option has this name, given as a keyword argument (Python's `max_wait=0`): a
    /// [`ErrorKind::Type`] error, as the language reports an unexpected keyword.
    UnknownKeyword {
        /// The name given.
        name: Name,
        /// The options there are (`crate::OPTIONS`' names).
        known: &'static [&'static str],
    },
    /// An option or node value of the wrong type (a string for a number, a fraction for a
    /// whole number, a boolean for an ID, ...).
    WrongType {
        /// The option, field or argument.
        name: Name,
        /// What it takes.
        expected: &'static str,
        /// What it got (its type, or the value when that is what is wrong: `1.5`, `NaN`).
        got: Name,
    },
    /// An option whose cargo feature this build of the crate does not have.
    MissingFeature {
        /// The option.
        option: Name,
        /// The feature of `snowflake-core` it needs.
        feature: &'static str,
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
    /// A time given as a number that no layout can hold: before 1970 (negative), or beyond
    /// 2^64 - 1 ms (kind [`ErrorKind::TimeRange`]).
    Instant {
        /// The time, in Unix ms.
        unix_ms: i128,
    },
    /// The clock is behind the generator by more than `max_drift_ms`, for longer than
    /// `max_wait_ms` allows.
    ClockBehind {
        /// How far the clock is behind the generator's logical time, in ms.
        behind_ms: u64,
        /// When a retry can succeed, in ms from now.
        retry_after_ms: u64,
    },
    /// `next_id_at` (or `reserve_at`) was given a time behind the generator's state by more
    /// than `max_drift_ms`: an ID at that time could repeat one already issued (kind
    /// [`ErrorKind::ClockBehind`]; the caller's clock is the one behind).
    BehindState {
        /// The time asked for, in Unix ms.
        unix_ms: u64,
        /// How far the state is ahead of that time, in ms.
        behind_ms: u64,
        /// How long until a caller whose clock runs from `unix_ms` can issue, in ms.
        retry_after_ms: u64,
        /// Whether the state is shared beyond the generator (with this process, the host, a
        /// state file or a lease), as opposed to an isolated generator's own.
        shared: bool,
    },
    /// `next_id_at` (or `reserve_at`) was given a time further ahead of the clock than
    /// `max_drift_ms` plus [`crate::AHEAD_SLACK_MS`], on a generator whose state is shared
    /// beyond the call: the state would stay there and lock out every other caller of the
    /// identity until the clock caught up.
    AheadOfClock {
        /// The time asked for, in Unix ms.
        unix_ms: u64,
        /// How far it is ahead of the generator's clock, in ms.
        ahead_ms: u64,
        /// The latest time allowed now, in Unix ms.
        max_unix_ms: u64,
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
    /// No worker value could be leased (none is free, the store cannot be reached or refused the
    /// credentials), or one was claimed again but cannot issue yet.
    #[cfg(feature = "std")]
    LeaseUnavailable {
        /// Why (never with a password in it).
        detail: std::sync::Arc<str>,
        /// When a generator that claims again on its next call can succeed, in ms from now,
        /// when that is known.
        retry_after_ms: Option<u64>,
    },
    /// Another generator that uses the host's state of the layout and node values now (in
    /// this process or another) disagrees on a term (policy, state file, host lease); or, in
    /// this process, one keeps a state of its own (`process_only`) or holds the values as a
    /// lease's; or the state file is not this user's to use, or was removed while in use.
    #[cfg(feature = "std")]
    SharedMismatch {
        /// What differs: `max_drift_ms`, `sequence_start`, `state_file`, `lease`,
        /// `process_only`, `layout` (a name's hash collision), `owner`, `file`, `name`,
        /// `in use`, `ahead`; or `removed` (the file was removed or replaced).
        what: &'static str,
        /// The difference, spelled out.
        detail: std::sync::Arc<str>,
    },
    /// A state file is corrupt, belongs to another layout or node, or is in use by another
    /// process that does not share its state.
    #[cfg(feature = "std")]
    StateFile {
        /// The file.
        path: std::sync::Arc<std::path::Path>,
        /// What is wrong.
        detail: std::sync::Arc<str>,
    },
    /// A file, lock, map or network operation failed.
    #[cfg(feature = "std")]
    Io(std::sync::Arc<IoError>),
    /// Another process held a lock of the host's record, a state file or a host lease longer
    /// than the call may wait (`max_wait_ms`): a stopped process, most likely.
    #[cfg(feature = "std")]
    Busy {
        /// Which lock, on which file, and the process holding it where the kernel says.
        detail: std::sync::Arc<str>,
    },
    /// A UUID that is not the view of an ID of the layout: malformed text, not version 7,
    /// not RFC 9562's variant, or bits the layout's IDs never set.
    InvalidUuid {
        /// What is wrong.
        reason: &'static str,
    },
    /// An ID whose time is past the last instant a UUIDv7 holds (2^48 - 1 Unix ms, in the
    /// year 10889): no UUIDv7 can carry it.
    UuidTimeRange {
        /// The ID's time, in Unix ms.
        unix_ms: u64,
    },
    /// A layout wider than 53 bits, where an ID must be an exact JavaScript number.
    UnsafeNumber {
        /// The layout's width in bits.
        total_bits: u8,
    },
    /// An environment variable of the configuration (`SNOWFLAKE_LAYOUT`, `SNOWFLAKE_NODE`,
    /// `SNOWFLAKE_OPTIONS`) is malformed: its kind is the underlying error's (an invalid
    /// layout, a bad node value or option), its message names the variable and its value.
    #[cfg(feature = "std")]
    Environment {
        /// The variable.
        variable: &'static str,
        /// Its value, cut short, with any password hidden.
        value: std::sync::Arc<str>,
        /// The kind of what is wrong with it.
        kind: ErrorKind,
        /// What is wrong with it.
        message: std::sync::Arc<str>,
    },
}

/// A failure outside the library's own rules (a file, a lock, a map, a network): what was
/// being done, where, and the OS error.
#[cfg(feature = "std")]
#[derive(Debug)]
pub struct IoError {
    /// What was being done (`opening the shared state`, `reserving time in the state file`).
    pub action: &'static str,
    /// The file or address (never with credentials).
    pub target: String,
    /// The OS error.
    pub source: std::io::Error,
    /// What to do about it, when the action suggests a fix (empty, or starting with a space).
    pub hint: &'static str,
}

#[cfg(feature = "std")]
impl IoError {
    /// The OS error number, when there is one.
    pub fn errno(&self) -> Option<i32> {
        self.source.raw_os_error()
    }
}

#[cfg(feature = "std")]
impl PartialEq for IoError {
    fn eq(&self, other: &IoError) -> bool {
        self.action == other.action
            && self.target == other.target
            && self.source.kind() == other.source.kind()
            && self.source.raw_os_error() == other.source.raw_os_error()
    }
}

#[cfg(feature = "std")]
impl Eq for IoError {}

#[cfg(feature = "std")]
impl fmt::Display for IoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}: {}{}", self.action, self.target, self.source, self.hint)
    }
}

#[cfg(feature = "std")]
impl std::error::Error for IoError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

#[cfg(feature = "std")]
impl Error {
    /// An [`Error::Io`]: `action` on `target` failed with `source`.
    pub fn io(action: &'static str, target: impl fmt::Display, source: std::io::Error) -> Error {
        Error::io_with_hint(action, target, source, "")
    }

    /// An [`Error::Io`] whose message ends with `hint`, what to do (starting with a space).
    pub fn io_with_hint(
        action: &'static str,
        target: impl fmt::Display,
        source: std::io::Error,
        hint: &'static str,
    ) -> Error {
        Error::Io(std::sync::Arc::new(IoError { action, target: target.to_string(), source, hint }))
    }

    /// An [`Error::SharedMismatch`].
    pub fn shared_mismatch(what: &'static str, detail: impl fmt::Display) -> Error {
        Error::SharedMismatch { what, detail: detail.to_string().into() }
    }

    /// An [`Error::Busy`].
    pub fn busy(detail: impl fmt::Display) -> Error {
        Error::Busy { detail: detail.to_string().into() }
    }

    /// An [`Error::StateFile`].
    pub fn state_file(path: &std::path::Path, detail: impl fmt::Display) -> Error {
        Error::StateFile { path: path.into(), detail: detail.to_string().into() }
    }

    /// An [`Error::LeaseUnavailable`].
    pub fn lease_unavailable(detail: impl fmt::Display) -> Error {
        Error::LeaseUnavailable { detail: detail.to_string().into(), retry_after_ms: None }
    }

    /// An [`Error::LeaseUnavailable`] that a later call may not meet: retry in `retry_after_ms`.
    pub fn lease_retry(detail: impl fmt::Display, retry_after_ms: u64) -> Error {
        Error::LeaseUnavailable { detail: detail.to_string().into(), retry_after_ms: Some(retry_after_ms) }
    }
}

/// One detail field of the errors ([`Error::details`]): its name in the JS packages' error
/// objects, its TypeScript type there (a count above 2^53 comes as a decimal string, as
/// [`Details`]'s implementations write it), and what it holds. The Node package's `index.d.ts`
/// (bindings-node/scripts/dts.js) and the WASM package's `snowflake.d.ts` (scripts/tables.py)
/// write their `SnowflakeError` from this table, through `tests/vectors/tables.json`.
#[derive(Debug, Clone, Copy)]
pub struct DetailField {
    /// The field's name on the JS packages' error objects (camelCase).
    pub name: &'static str,
    /// Its TypeScript type there.
    pub ts: &'static str,
    /// Which error codes carry it, and what it holds (the `.d.ts` doc comment).
    pub doc: &'static str,
}

const fn detail(name: &'static str, ts: &'static str, doc: &'static str) -> DetailField {
    DetailField { name, ts, doc }
}

/// Every detail field [`Error::details`] writes, in the order of the error kinds: the names it
/// uses are checked against this table when core compiles (`field!`).
pub const DETAIL_FIELDS: &[DetailField] = &[
    detail("field", "string", "ERR_SNOWFLAKE_VALUE, ERR_INVALID_ARG_TYPE: the node field or option at fault."),
    detail("value", "number | string", "ERR_SNOWFLAKE_VALUE: the value given (a decimal string beyond 2^53)."),
    detail("min", "number | string", "ERR_SNOWFLAKE_VALUE: the smallest value allowed."),
    detail("max", "number | string", "ERR_SNOWFLAKE_VALUE: the largest value allowed."),
    detail("option", "string", "ERR_SNOWFLAKE_VALUE: the option at fault."),
    detail("reason", "string", "ERR_SNOWFLAKE_VALUE: why the option's value is refused."),
    detail("expected", "string", "ERR_INVALID_ARG_TYPE: what the option or field takes."),
    detail("got", "string", "ERR_INVALID_ARG_TYPE: what it got."),
    detail("feature", "string", "ERR_SNOWFLAKE_VALUE: the cargo feature an option needs that this build lacks."),
    detail("expectedLength", "number", "ERR_SNOWFLAKE_INVALID_ID: the length the encoding's IDs have."),
    detail("length", "number", "ERR_SNOWFLAKE_INVALID_ID: the length of the string given."),
    detail("position", "number", "ERR_SNOWFLAKE_INVALID_ID: where the string has a character its encoding lacks."),
    detail("id", "string", "ERR_SNOWFLAKE_INVALID_ID: the ID, in decimal."),
    detail("bits", "number", "ERR_SNOWFLAKE_INVALID_ID: the layout's width, which the ID does not fit."),
    detail(
        "unixMs",
        "number | string",
        "ERR_SNOWFLAKE_TIME_RANGE, ERR_SNOWFLAKE_CLOCK_BEHIND, ERR_SNOWFLAKE_VALUE: the instant at fault, in Unix ms.",
    ),
    detail("firstUnixMs", "number | string", "ERR_SNOWFLAKE_TIME_RANGE: the first instant of the layout's range, in Unix ms."),
    detail("lastUnixMs", "number | string", "ERR_SNOWFLAKE_TIME_RANGE: the last instant of the layout's range, in Unix ms."),
    detail("behindMs", "number", "ERR_SNOWFLAKE_CLOCK_BEHIND: how far the clock is behind the generator, in ms."),
    detail(
        "retryAfterMs",
        "number",
        "ERR_SNOWFLAKE_CLOCK_BEHIND, ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED, ERR_SNOWFLAKE_LEASE: when a retry can succeed, in ms.",
    ),
    detail("aheadMs", "number", "ERR_SNOWFLAKE_VALUE: how far the instant given runs ahead of the clock, in ms."),
    detail("maxUnixMs", "number | string", "ERR_SNOWFLAKE_VALUE: the latest instant allowed, in Unix ms."),
    detail("action", "string", "ERR_SNOWFLAKE_IO: what failed (open, map, lock, ...)."),
    detail("path", "string", "ERR_SNOWFLAKE_IO, ERR_SNOWFLAKE_STATE_FILE: the file."),
    detail("errno", "number", "ERR_SNOWFLAKE_IO: the operating system's error number."),
    detail("what", "string", "ERR_SNOWFLAKE_SHARED_MISMATCH: what differs (`layout`, `node`, ...)."),
    detail(
        "detail",
        "string",
        "ERR_SNOWFLAKE_SHARED_MISMATCH, ERR_SNOWFLAKE_STATE_FILE, ERR_SNOWFLAKE_LEASE: how, in words.",
    ),
];

/// `name` when it is a row of [`DETAIL_FIELDS`]; evaluated as a constant (`field!`), so that a
/// name missing from the table stops the build.
const fn detail_name(name: &'static str) -> &'static str {
    let mut i = 0;
    while i < DETAIL_FIELDS.len() {
        let (a, b) = (DETAIL_FIELDS[i].name.as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return name;
            }
        }
        i += 1;
    }
    panic!("a detail field that is not a row of DETAIL_FIELDS")
}

macro_rules! field {
    ($name:literal) => {
        const { detail_name($name) }
    };
}

/// Where an error's detail fields go ([`Error::details`]): the JS bindings' error objects (the
/// Node addon's, the WASM package's), each field named as those packages name it.
pub trait Details {
    /// A text field.
    fn str(&mut self, name: &str, value: &str);
    /// A count, a time or a bound.
    fn u64(&mut self, name: &str, value: u64);
    /// A value that may be negative or beyond 64 bits (what a caller gave).
    fn i128(&mut self, name: &str, value: i128);
    /// An ID (a `bigint` in JavaScript).
    fn id(&mut self, name: &str, value: u64);
}

impl Error {
    /// The error's detail fields, beside its code and message: the one list of them, for every
    /// binding that shows them as fields of its error objects.
    pub fn details(&self, d: &mut dyn Details) {
        match self {
            Error::UnknownField { name, .. } | Error::NotANodeField { name } => {
                d.str(field!("field"), name.as_str())
            }
            Error::ValueRange { name, value, min, max } => {
                d.str(field!("field"), name.as_str());
                d.i128(field!("value"), *value);
                d.u64(field!("min"), *min);
                d.u64(field!("max"), *max);
            }
            Error::BadOption { name, reason } => {
                d.str(field!("option"), name.as_str());
                d.str(field!("reason"), reason);
            }
            Error::UnknownOption { name, .. } => d.str(field!("option"), name.as_str()),
            Error::WrongType { name, expected, got } => {
                d.str(field!("field"), name.as_str());
                d.str(field!("expected"), expected);
                d.str(field!("got"), got.as_str());
            }
            Error::MissingFeature { option, feature } => {
                d.str(field!("option"), option.as_str());
                d.str(field!("feature"), feature);
            }
            Error::InvalidId(ParseIdError::Length { expected, got }) => {
                d.u64(field!("expectedLength"), u64::from(*expected));
                d.u64(field!("length"), *got as u64);
            }
            Error::InvalidId(ParseIdError::Char { position }) => d.u64(field!("position"), *position as u64),
            Error::IdRange { id, bits } => {
                d.id(field!("id"), *id);
                d.u64(field!("bits"), u64::from(*bits));
            }
            Error::TimeRange { unix_ms, first_unix_ms, last_unix_ms } => {
                d.u64(field!("unixMs"), *unix_ms);
                d.u64(field!("firstUnixMs"), *first_unix_ms);
                d.u64(field!("lastUnixMs"), *last_unix_ms);
            }
            Error::ClockBehind { behind_ms, retry_after_ms } => {
                d.u64(field!("behindMs"), *behind_ms);
                d.u64(field!("retryAfterMs"), *retry_after_ms);
            }
            Error::BehindState { unix_ms, behind_ms, retry_after_ms, .. } => {
                d.u64(field!("unixMs"), *unix_ms);
                d.u64(field!("behindMs"), *behind_ms);
                d.u64(field!("retryAfterMs"), *retry_after_ms);
            }
            Error::AheadOfClock { unix_ms, ahead_ms, max_unix_ms } => {
                d.u64(field!("unixMs"), *unix_ms);
                d.u64(field!("aheadMs"), *ahead_ms);
                d.u64(field!("maxUnixMs"), *max_unix_ms);
            }
            Error::Instant { unix_ms } => d.i128(field!("unixMs"), *unix_ms),
            Error::SequenceExhausted { retry_after_ms } => d.u64(field!("retryAfterMs"), *retry_after_ms),
            #[cfg(feature = "std")]
            Error::Io(io) => {
                d.str(field!("action"), io.action);
                d.str(field!("path"), &io.target);
                if let Some(errno) = io.errno() {
                    d.u64(field!("errno"), errno.unsigned_abs().into());
                }
            }
            #[cfg(feature = "std")]
            Error::SharedMismatch { what, detail } => {
                d.str(field!("what"), what);
                d.str(field!("detail"), detail);
            }
            #[cfg(feature = "std")]
            Error::StateFile { path, detail } => {
                d.str(field!("path"), &path.to_string_lossy());
                d.str(field!("detail"), detail);
            }
            #[cfg(feature = "std")]
            Error::LeaseUnavailable { detail, retry_after_ms } => {
                d.str(field!("detail"), detail);
                if let Some(ms) = retry_after_ms {
                    d.u64(field!("retryAfterMs"), *ms);
                }
            }
            _ => {}
        }
    }
}

#[cfg(feature = "std")]
impl Error {
    /// An [`Error::Environment`]: `error` in variable `variable`, whose value is `value`
    /// (already cut short and without secrets).
    pub fn environment(
        variable: &'static str,
        value: impl Into<std::sync::Arc<str>>,
        error: &Error,
    ) -> Error {
        Error::Environment {
            variable,
            value: value.into(),
            kind: error.kind(),
            message: error.to_string().into(),
        }
    }
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

/// The family of an error: what front ends map to an exception class, a status code, or a
/// Node `code`, through [`KINDS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An invalid layout spec.
    Layout,
    /// A bad node value, option, or argument.
    Value,
    /// A value of the wrong type.
    Type,
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
    /// (C) A pointer argument that must not be NULL was NULL.
    NullArgument,
    /// (C) A string argument is not valid UTF-8.
    InvalidUtf8,
    /// (C) An output buffer is too small.
    BufferTooSmall,
    /// (C) A bug inside the library was caught before it could unwind into the caller.
    Panic,
    /// Another process held a lock too long (a stopped holder).
    Busy,
}

/// One row of the error table: how every front end reports a kind of error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KindInfo {
    /// The kind.
    pub kind: ErrorKind,
    /// The stable code every front end reports (`ERR_SNOWFLAKE_CLOCK_BEHIND`).
    pub code: &'static str,
    /// The C `SnowflakeStatus` number (never reused).
    pub status: u32,
    /// The HTTP status `snowflake serve` answers it with: 400 for the caller's input, 503 for a
    /// refusal that a retry overcomes (the clock, the sequence, the lease, a lock held too
    /// long), 500 for anything else. docs/serve.md's table is written from it.
    pub http_status: u16,
    /// The C enumerator's suffix (`SNOWFLAKE_STATUS_` + this).
    pub c_name: &'static str,
    /// Static English text for `snowflake_status_str`.
    pub text: &'static str,
    /// `code` and `text` with a NUL at the end, for C.
    pub c_strings: (&'static str, &'static str),
    /// The Python class, in `libsnowflake` (a subclass of `SnowflakeError`).
    pub python: &'static str,
    /// The built-in Python exception the class also derives from (`ValueError`, `TypeError`,
    /// `OSError`), or `""`.
    pub python_builtin: &'static str,
    /// The PHP class, in namespace `Snowflake\`.
    pub php: &'static str,
    /// The PHP class it extends (`SnowflakeException`, `ClockException`, `\TypeError`).
    pub php_parent: &'static str,
    /// The JS constructor of Node's error (`Error`, `TypeError`, `RangeError`).
    pub node_class: &'static str,
    /// Node's `code` (the stable code, or Node's own `ERR_INVALID_ARG_TYPE` for wrong types).
    pub node_code: &'static str,
    /// What it means, in one line.
    pub doc: &'static str,
}

macro_rules! kind {
    ($kind:ident, $code:literal, $status:literal, $http:literal, $c:literal, $text:literal, $py:literal, $pyb:literal, $php:literal, $phpp:literal, $node:literal, $node_code:expr, $doc:literal) => {
        KindInfo {
            kind: ErrorKind::$kind,
            code: $code,
            status: $status,
            http_status: $http,
            c_name: $c,
            text: $text,
            c_strings: (concat!($code, "\0"), concat!($text, "\0")),
            python: $py,
            python_builtin: $pyb,
            php: $php,
            php_parent: $phpp,
            node_class: $node,
            node_code: $node_code,
            doc: $doc,
        }
    };
}

/// The error table, by C status number (0 is success, which is no error).
#[rustfmt::skip]
pub const KINDS: &[KindInfo] = &[
    kind!(NullArgument, "ERR_SNOWFLAKE_NULL_ARGUMENT", 1, 500, "NULL_ARGUMENT", "a pointer argument is NULL",
        "SnowflakeError", "", "InternalException", "SnowflakeException", "Error", "ERR_SNOWFLAKE_NULL_ARGUMENT",
        "(C) a pointer argument that must not be NULL was NULL"),
    kind!(InvalidUtf8, "ERR_SNOWFLAKE_INVALID_UTF8", 2, 400, "INVALID_UTF8", "a string argument is not valid UTF-8",
        "ValueRangeError", "ValueError", "ValueException", "SnowflakeException", "Error", "ERR_SNOWFLAKE_INVALID_UTF8",
        "(C) a string argument is not valid UTF-8"),
    kind!(Layout, "ERR_SNOWFLAKE_LAYOUT", 3, 400, "LAYOUT", "invalid layout",
        "LayoutError", "ValueError", "LayoutException", "SnowflakeException", "Error", "ERR_SNOWFLAKE_LAYOUT",
        "an invalid layout spec; the message names the problem"),
    kind!(Value, "ERR_SNOWFLAKE_VALUE", 4, 400, "VALUE", "invalid value, option or argument",
        "ValueRangeError", "ValueError", "ValueException", "SnowflakeException", "RangeError", "ERR_SNOWFLAKE_VALUE",
        "a node value, option or argument out of range, unknown, or malformed"),
    kind!(InvalidId, "ERR_SNOWFLAKE_INVALID_ID", 5, 400, "INVALID_ID", "invalid ID",
        "InvalidIdError", "ValueError", "InvalidIdException", "SnowflakeException", "Error", "ERR_SNOWFLAKE_INVALID_ID",
        "a malformed encoded ID, or an ID with bits above the layout's width"),
    kind!(TimeRange, "ERR_SNOWFLAKE_TIME_RANGE", 6, 400, "TIME_RANGE", "time outside the layout's range",
        "TimeRangeError", "", "TimeRangeException", "SnowflakeException", "Error", "ERR_SNOWFLAKE_TIME_RANGE",
        "an instant before the layout's epoch or past its last instant"),
    kind!(ClockBehind, "ERR_SNOWFLAKE_CLOCK_BEHIND", 7, 503, "CLOCK_BEHIND", "the clock is behind the generator",
        "ClockBehindError", "", "ClockBehindException", "ClockException", "Error", "ERR_SNOWFLAKE_CLOCK_BEHIND",
        "the clock is behind the generator by more than max_drift_ms for longer than max_wait_ms; retry after retry_after_ms"),
    kind!(SequenceExhausted, "ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED", 8, 503, "SEQUENCE_EXHAUSTED", "the sequence of the current tick is exhausted",
        "SequenceExhaustedError", "", "SequenceExhaustedException", "ClockException", "Error", "ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED",
        "the tick's sequence numbers are used up and waiting would exceed max_wait_ms; retry after retry_after_ms"),
    kind!(Forked, "ERR_SNOWFLAKE_FORKED", 9, 500, "FORKED", "the generator was inherited through fork()",
        "ForkedProcessError", "", "ForkedException", "SnowflakeException", "Error", "ERR_SNOWFLAKE_FORKED",
        "a generator inherited through fork(), or one made in a child with its parent's node values"),
    kind!(BufferTooSmall, "ERR_SNOWFLAKE_BUFFER_TOO_SMALL", 10, 500, "BUFFER_TOO_SMALL", "the output buffer is too small",
        "SnowflakeError", "", "InternalException", "SnowflakeException", "Error", "ERR_SNOWFLAKE_BUFFER_TOO_SMALL",
        "(C) an output buffer is too small; nothing was written"),
    kind!(Panic, "ERR_SNOWFLAKE_PANIC", 11, 500, "PANIC", "internal error (a panic was caught)",
        "SnowflakeError", "", "InternalException", "SnowflakeException", "Error", "ERR_SNOWFLAKE_PANIC",
        "(C) a bug inside the library, caught before it could unwind into the caller"),
    kind!(SharedMismatch, "ERR_SNOWFLAKE_SHARED_MISMATCH", 12, 500, "SHARED_MISMATCH", "another generator of the host's state disagrees",
        "SharedMismatchError", "ValueError", "SharedMismatchException", "SnowflakeException", "Error", "ERR_SNOWFLAKE_SHARED_MISMATCH",
        "another generator of the host's state of these layout and node values disagrees on a policy, state file or lease, or (in this process) keeps a state of its own or leases them; or the state is not this user's, or was removed while in use"),
    kind!(Lease, "ERR_SNOWFLAKE_LEASE", 13, 503, "LEASE", "no worker id could be leased, or the lease lapsed",
        "LeaseError", "", "LeaseException", "SnowflakeException", "Error", "ERR_SNOWFLAKE_LEASE",
        "no worker value could be leased, or the lease lapsed and the generator stopped issuing"),
    kind!(StateFile, "ERR_SNOWFLAKE_STATE_FILE", 14, 500, "STATE_FILE", "the state file is corrupt or another generator's",
        "StateFileError", "", "StateFileException", "SnowflakeException", "Error", "ERR_SNOWFLAKE_STATE_FILE",
        "a state file is corrupt, belongs to another layout or node, or is in use by another process"),
    kind!(Io, "ERR_SNOWFLAKE_IO", 15, 500, "IO", "a file, lock, map or network operation failed",
        "SnowflakeOSError", "OSError", "IoException", "SnowflakeException", "Error", "ERR_SNOWFLAKE_IO",
        "a file, lock, map or network operation failed; the message names the path and the OS error"),
    kind!(Type, "ERR_SNOWFLAKE_TYPE", 16, 400, "TYPE", "a value of the wrong type",
        "SnowflakeTypeError", "TypeError", "TypeException", "\\TypeError", "TypeError", "ERR_INVALID_ARG_TYPE",
        "an option, node value or ID of the wrong type (a string for a number, a fraction, a boolean)"),
    kind!(Busy, "ERR_SNOWFLAKE_BUSY", 17, 503, "BUSY", "a lock was held by another process too long",
        "BusyError", "", "BusyException", "SnowflakeException", "Error", "ERR_SNOWFLAKE_BUSY",
        "another process held a lock of the host's record, a state file or a host lease longer than max_wait_ms allows (a stopped process); the message names it; retry"),
];

/// The refusals only `snowflake serve` makes, beside the library's [`KINDS`]: (stable code,
/// HTTP status, what it means). HTTP has them and no library call does; their codes are
/// kept here, beside the library's, so that none is ever a library kind's too.
pub const HTTP_KINDS: &[(&str, u16, &str)] = &[
    ("ERR_SNOWFLAKE_UNAUTHORIZED", 401, "no bearer token, or a wrong one"),
    ("ERR_SNOWFLAKE_NOT_FOUND", 404, "no such path"),
    ("ERR_SNOWFLAKE_METHOD", 405, "a method the path does not take"),
    ("ERR_SNOWFLAKE_TIMEOUT", 408, "the request's headers or body did not arrive within request_timeout_ms"),
    ("ERR_SNOWFLAKE_TOO_LARGE", 413, "a request body over max_body_bytes"),
    ("ERR_SNOWFLAKE_UNAVAILABLE", 503, "a connection past max_connections"),
];

impl ErrorKind {
    /// This kind's row of [`KINDS`].
    pub const fn info(self) -> &'static KindInfo {
        let mut i = 0;
        while i < KINDS.len() {
            if KINDS[i].kind as u8 == self as u8 {
                return &KINDS[i];
            }
            i += 1;
        }
        panic!("every kind has a row in KINDS")
    }

    /// The stable code that every binding reports (`ERR_SNOWFLAKE_CLOCK_BEHIND`, ...).
    ///
    /// ```
    /// assert_eq!(snowflake_core::ErrorKind::ClockBehind.code(), "ERR_SNOWFLAKE_CLOCK_BEHIND");
    /// ```
    pub const fn code(self) -> &'static str {
        self.info().code
    }

    /// The SQLSTATE that SQL inside PostgreSQL raises this kind with (the PostgreSQL extension
    /// and the functions of `snowflake sql` alike, so that a handler written for one catches the
    /// other's): the standard class that fits, the kind's stable code at the start of the
    /// message telling kinds of one class apart.
    ///
    /// ```
    /// use snowflake_core::ErrorKind;
    /// assert_eq!(ErrorKind::Value.sqlstate(), "22023");
    /// assert_eq!(ErrorKind::ClockBehind.sqlstate(), "55000");
    /// ```
    pub const fn sqlstate(self) -> &'static str {
        match self {
            // invalid_parameter_value
            ErrorKind::Layout | ErrorKind::Value | ErrorKind::InvalidUtf8 => "22023",
            // datatype_mismatch
            ErrorKind::Type => "42804",
            // numeric_value_out_of_range: an ID outside the layout
            ErrorKind::InvalidId => "22003",
            // datetime_field_overflow
            ErrorKind::TimeRange => "22008",
            // object_not_in_prerequisite_state: retry later
            ErrorKind::ClockBehind | ErrorKind::SequenceExhausted | ErrorKind::Forked => "55000",
            // lock_not_available
            ErrorKind::Busy => "55P03",
            ErrorKind::SharedMismatch | ErrorKind::Lease | ErrorKind::StateFile => "55000",
            // system_error
            ErrorKind::Io => "58000",
            // internal_error
            ErrorKind::NullArgument | ErrorKind::BufferTooSmall | ErrorKind::Panic => "XX000",
        }
    }

    /// The kind with C status number `status`.
    pub fn from_status(status: u32) -> Option<ErrorKind> {
        KINDS.iter().find(|k| k.status == status).map(|k| k.kind)
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
            | Error::MissingNodeValues { .. }
            | Error::BadOption { .. }
            | Error::UnknownOption { .. }
            | Error::MissingFeature { .. }
            | Error::UnsafeNumber { .. }
            | Error::Conflict => ErrorKind::Value,
            Error::WrongType { .. } | Error::UnknownKeyword { .. } => ErrorKind::Type,
            Error::InvalidId(_) | Error::IdRange { .. } | Error::InvalidUuid { .. } => ErrorKind::InvalidId,
            Error::TimeRange { .. } | Error::Instant { .. } | Error::UuidTimeRange { .. } => {
                ErrorKind::TimeRange
            }
            Error::ClockBehind { .. } | Error::BehindState { .. } => ErrorKind::ClockBehind,
            Error::AheadOfClock { .. } => ErrorKind::Value,
            Error::SequenceExhausted { .. } => ErrorKind::SequenceExhausted,
            Error::Forked | Error::ForkedIdentity => ErrorKind::Forked,
            Error::LeaseLost => ErrorKind::Lease,
            #[cfg(feature = "std")]
            Error::LeaseUnavailable { .. } => ErrorKind::Lease,
            #[cfg(feature = "std")]
            Error::SharedMismatch { .. } => ErrorKind::SharedMismatch,
            #[cfg(feature = "std")]
            Error::StateFile { .. } => ErrorKind::StateFile,
            #[cfg(feature = "std")]
            Error::Io(_) => ErrorKind::Io,
            #[cfg(feature = "std")]
            Error::Busy { .. } => ErrorKind::Busy,
            #[cfg(feature = "std")]
            Error::Environment { kind, .. } => *kind,
        }
    }

    /// For clock errors (and a lease that a later call can claim again), when a retry can
    /// succeed, in ms from now.
    pub const fn retry_after_ms(&self) -> Option<u64> {
        match self {
            Error::ClockBehind { retry_after_ms, .. }
            | Error::BehindState { retry_after_ms, .. }
            | Error::SequenceExhausted { retry_after_ms } => Some(*retry_after_ms),
            #[cfg(feature = "std")]
            Error::LeaseUnavailable { retry_after_ms, .. } => *retry_after_ms,
            _ => None,
        }
    }
}

/// A duration for a message: ms below 10 s, then seconds, hours, days and years (of 365.2425
/// days), so that "53 years" reads as such.
struct Span(u64);

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const S: u64 = 1000;
        const H: u64 = 3600 * S;
        const D: u64 = 24 * H;
        const Y: u64 = 31_556_952_000;
        match self.0 {
            ms if ms < 10 * S => write!(f, "{ms} ms"),
            ms if ms < 2 * H => write!(f, "{} s", ms / S),
            ms if ms < 2 * D => write!(f, "{} hours", ms / H),
            ms if ms < 2 * Y => write!(f, "{} days", ms / D),
            ms => write!(f, "{} years", ms / Y),
        }
    }
}

/// An instant in messages: Unix milliseconds (what the APIs take) and its UTC date (what a
/// reader understands), e.g. `1731212943359 (2024-11-10T04:29:03.359Z)`.
struct Instant(u64);

impl fmt::Display for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut buf = [0u8; crate::time::RFC3339_LEN];
        match crate::time::format_rfc3339(self.0, &mut buf) {
            Some(date) => write!(f, "{} ({date})", self.0),
            None => write!(f, "{} (Unix ms)", self.0),
        }
    }
}

/// Option names as a front end spells them, for the unknown-option message.
struct NameList(&'static [&'static str], Spelling);

impl fmt::Display for NameList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, name) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{}", self.1.spell(name))?;
        }
        Ok(())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Layout(e) => write!(f, "invalid layout: {e}"),
            Error::UnknownField { name, near, fields, more } => {
                write!(f, "the layout has no field `{name}`")?;
                if let Some(near) = fields.as_str().split(", ").nth(usize::from(*near).wrapping_sub(1)) {
                    write!(f, ": did you mean `{near}`?")?;
                }
                match (fields.as_str().is_empty(), more) {
                    (true, _) => Ok(()),
                    (false, 0) => write!(f, " (its node fields: {fields})"),
                    (false, n) => write!(f, " (its node fields: {fields} and {n} more)"),
                }
            }
            Error::NotANodeField { name } => {
                write!(f, "`{name}` is set by the generator, not a node value")
            }
            Error::ValueRange { name, value, min, max } => {
                if *value < i128::from(*min) {
                    write!(f, "{name} = {value} is out of range: the smallest allowed is {min}")
                } else {
                    write!(f, "{name} = {value} is out of range: the largest allowed is {max}")
                }
            }
            Error::MissingNodeValues { missing, more } => {
                write!(f, "the node values give no value for `{missing}`")?;
                if *more > 0 {
                    write!(f, " (and {more} more)")?;
                }
                f.write_str(": name every node field of the layout, or none for all zeros (a forgotten field would be 0, shared with whoever else forgot it)")
            }
            Error::BadOption { name, reason } => write!(f, "`{name}`: {reason}"),
            Error::UnknownOption { name, spelling, known } => {
                write!(f, "unknown option `{name}`; the options are {}", NameList(known, *spelling))
            }
            Error::UnknownKeyword { name, known } => {
                write!(f, "unexpected keyword argument `{name}`; the options are {}", NameList(known, Spelling::Snake))
            }
            Error::WrongType { name, expected, got } => write!(f, "`{name}` must be {expected}, not {got}"),
            Error::MissingFeature { option, feature } => write!(
                f,
                "option `{option}` needs the `{feature}` feature, which this build of snowflake-core does not have"
            ),
            Error::InvalidId(e) => write!(f, "invalid ID string: {e}"),
            Error::IdRange { id, bits } => {
                write!(f, "ID {id} has bits set above the layout's {bits} bits")
            }
            Error::TimeRange { unix_ms, first_unix_ms, last_unix_ms } => {
                if unix_ms < first_unix_ms {
                    write!(
                        f,
                        "time {} is before the layout's epoch {}",
                        Instant(*unix_ms),
                        Instant(*first_unix_ms)
                    )
                } else {
                    write!(
                        f,
                        "time {} is past the layout's last instant {}: the layout has run out of time",
                        Instant(*unix_ms),
                        Instant(*last_unix_ms)
                    )
                }
            }
            Error::Instant { unix_ms } if *unix_ms < 0 => {
                write!(f, "time {unix_ms} (Unix ms) is before 1970-01-01T00:00:00Z, before every layout's epoch")
            }
            Error::Instant { unix_ms } => {
                write!(f, "time {unix_ms} (Unix ms) is past 2^64 - 1 ms, past every layout's last instant")
            }
            Error::ClockBehind { behind_ms, retry_after_ms } => write!(
                f,
                "the clock is {behind_ms} ms behind the generator (it moved back, or more IDs were borrowed ahead than max_drift_ms allows); retry in {retry_after_ms} ms"
            ),
            Error::BehindState { unix_ms, behind_ms, shared: true, .. } => write!(
                f,
                "time {unix_ms} (Unix ms) is {} behind this identity's state: its IDs have been issued up to {}, so an ID at that time could repeat one of them. next_id_at continues the state that every generator with this layout and node values shares (in this process, on this host, in a state file or under a lease); replays and backfills need a generator with `isolated` set to true and node values of their own",
                Span(*behind_ms),
                unix_ms.saturating_add(*behind_ms)
            ),
            Error::BehindState { unix_ms, behind_ms, shared: false, .. } => write!(
                f,
                "time {unix_ms} (Unix ms) is {} behind this isolated generator's state (it has issued IDs up to {}): its IDs only increase, so an ID at that time could repeat one of them; replay another run with a new isolated generator (and node values of its own)",
                Span(*behind_ms),
                unix_ms.saturating_add(*behind_ms)
            ),
            Error::AheadOfClock { unix_ms, ahead_ms, max_unix_ms } => write!(
                f,
                "time {unix_ms} (Unix ms) is {} ahead of the clock: a generator whose state outlives the call (shared in this process, on this host, in a state file or under a lease) takes times at most {} ahead now (up to {max_unix_ms}: max_drift_ms + {} ms, or {} ms in the host's record), or its state would stay there and lock every caller of this identity out until the clock caught up; replays and backfills need a generator with `isolated` set to true and node values of their own",
                Span(*ahead_ms),
                Span(max_unix_ms.saturating_sub(unix_ms.saturating_sub(*ahead_ms))),
                crate::limits::AHEAD_SLACK_MS,
                crate::limits::RECORD_AHEAD_MS
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
                "the worker-id lease lapsed (not renewed in time, or taken by another holder): this generator stopped issuing, and claims a value again on its next call",
            ),
            #[cfg(feature = "std")]
            Error::LeaseUnavailable { detail, .. } => write!(f, "no worker id to lease: {detail}"),
            #[cfg(feature = "std")]
            Error::SharedMismatch { what: "removed", detail } => write!(f, "the shared state was lost: {detail}"),
            #[cfg(feature = "std")]
            Error::SharedMismatch { what, detail } => match *what {
                "max_drift_ms" | "sequence_start" | "state_file" | "lease" | "process_only" => {
                    write!(f, "generators of one layout and node values disagree on {what}: {detail}")
                }
                _ => f.write_str(detail),
            },
            #[cfg(feature = "std")]
            Error::StateFile { path, detail } => write!(f, "state file {}: {detail}", path.display()),
            #[cfg(feature = "std")]
            Error::Io(e) => e.fmt(f),
            #[cfg(feature = "std")]
            Error::Busy { detail } => f.write_str(detail),
            Error::InvalidUuid { reason } => write!(f, "invalid UUID: {reason}"),
            Error::UuidTimeRange { unix_ms } => write!(
                f,
                "time {unix_ms} (Unix ms) is past the last instant a UUIDv7 holds, 281474976710655 (10889-08-02T05:31:50.655Z)"
            ),
            Error::UnsafeNumber { total_bits } => write!(
                f,
                "IDs of this layout have up to {total_bits} bits; a JavaScript number holds whole numbers exactly only up to 53 bits (Number.MAX_SAFE_INTEGER): take IDs as bigint, or use a layout of at most 53 bits such as the js53 preset"
            ),
            #[cfg(feature = "std")]
            Error::Environment { variable, value, message, .. } => {
                write!(f, "environment variable {variable}=\"{value}\": {message}")
            }
        }
    }
}

#[cfg(feature = "std")]
impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(&e.source),
            _ => None,
        }
    }
}
#[cfg(feature = "std")]
impl std::error::Error for LayoutError {}
#[cfg(feature = "std")]
impl std::error::Error for ParseIdError {}
