//! Status codes, the thread-local error detail, and the two macros every `extern "C"`
//! function is built from: [`ffi_boundary!`] (no panic unwinds into C) and [`non_null!`]
//! (no NULL pointer is dereferenced).
//!
//! Failures never write an output; they store the core error's `Display` text (which names
//! the field, the value, how far the clock is behind) in a per-thread buffer that
//! `snowflake_last_error()` returns, so a caller on another thread never sees this one's detail.

use core::fmt::Write as _;
use snowflake_core::{Error, ErrorKind, KindInfo};
use std::cell::{Cell, RefCell};
use std::ffi::{c_char, CStr};

/// The outcome of a call. `SNOWFLAKE_STATUS_OK` (0) is success; every other value is a
/// failure whose detail `snowflake_last_error()` returns. Values are never reused.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnowflakeStatus {
    /// Success; the outputs are written.
    Ok = 0,
    /// A pointer argument that must not be NULL was NULL.
    NullArgument = 1,
    /// A string argument is not valid UTF-8.
    InvalidUtf8 = 2,
    /// An invalid layout spec (`ERR_SNOWFLAKE_LAYOUT`).
    Layout = 3,
    /// A bad node value, option or argument (`ERR_SNOWFLAKE_VALUE`).
    Value = 4,
    /// A malformed encoded ID, or an ID outside the layout (`ERR_SNOWFLAKE_INVALID_ID`).
    InvalidId = 5,
    /// An instant outside the layout's time range (`ERR_SNOWFLAKE_TIME_RANGE`).
    TimeRange = 6,
    /// The clock is behind the generator by more than `max_drift_ms`
    /// (`ERR_SNOWFLAKE_CLOCK_BEHIND`); see `snowflake_last_retry_after_ms()`.
    ClockBehind = 7,
    /// The tick's sequence numbers are used up and waiting would exceed `max_wait_ms`
    /// (`ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED`); see `snowflake_last_retry_after_ms()`.
    SequenceExhausted = 8,
    /// The generator was inherited through `fork()`: make a new one in the child
    /// (`ERR_SNOWFLAKE_FORKED`).
    Forked = 9,
    /// The output buffer is too small; nothing was written.
    BufferTooSmall = 10,
    /// A bug inside the library was caught before it could unwind into the caller.
    Panic = 11,
    /// A shared state (`shared=`) exists with another layout, node values or policy, or is
    /// not this user's (`ERR_SNOWFLAKE_SHARED_MISMATCH`).
    SharedMismatch = 12,
    /// No worker value could be leased (`lease=`), or the lease lapsed and the generator
    /// stopped issuing (`ERR_SNOWFLAKE_LEASE`).
    Lease = 13,
    /// A state file (`state_file=`) is corrupt or belongs to another layout or node
    /// (`ERR_SNOWFLAKE_STATE_FILE`).
    StateFile = 14,
    /// A file, lock, map or network operation failed (`ERR_SNOWFLAKE_IO`).
    Io = 15,
    /// A value of the wrong type: a string for a number, a fraction for a whole number
    /// (`ERR_SNOWFLAKE_TYPE`; from `snowflake_options_set_*`).
    Type = 16,
    /// Another process held a lock of the host's record, a state file or a host lease longer
    /// than `max_wait_ms` allows (a stopped process); the message names it
    /// (`ERR_SNOWFLAKE_BUSY`).
    Busy = 17,
}

impl SnowflakeStatus {
    /// Every status, for turning a raw `u32` from C back into one without undefined behaviour.
    const ALL: [SnowflakeStatus; 18] = [
        SnowflakeStatus::Ok,
        SnowflakeStatus::NullArgument,
        SnowflakeStatus::InvalidUtf8,
        SnowflakeStatus::Layout,
        SnowflakeStatus::Value,
        SnowflakeStatus::InvalidId,
        SnowflakeStatus::TimeRange,
        SnowflakeStatus::ClockBehind,
        SnowflakeStatus::SequenceExhausted,
        SnowflakeStatus::Forked,
        SnowflakeStatus::BufferTooSmall,
        SnowflakeStatus::Panic,
        SnowflakeStatus::SharedMismatch,
        SnowflakeStatus::Lease,
        SnowflakeStatus::StateFile,
        SnowflakeStatus::Io,
        SnowflakeStatus::Type,
        SnowflakeStatus::Busy,
    ];

    /// The status of a raw value, if it is one.
    pub(crate) fn from_raw(raw: u32) -> Option<SnowflakeStatus> {
        SnowflakeStatus::ALL.get(raw as usize).copied()
    }

    /// The status that reports a core error: its kind's number in core's table (`KINDS`).
    pub fn of(kind: ErrorKind) -> SnowflakeStatus {
        SnowflakeStatus::from_raw(kind.info().status).unwrap_or(SnowflakeStatus::Value)
    }

    /// Core's row for this status (`None` for success).
    fn info(self) -> Option<&'static KindInfo> {
        ErrorKind::from_status(self as u32).map(ErrorKind::info)
    }

    /// Static, NUL-terminated English text, from core's table.
    pub fn text(self) -> &'static CStr {
        self.info().map_or(c"success", |k| nul_terminated(k.c_strings.1))
    }

    /// The stable code, NUL-terminated, from core's table (`OK` for success).
    pub fn code(self) -> &'static CStr {
        self.info().map_or(c"OK", |k| nul_terminated(k.c_strings.0))
    }
}

/// A string of core's table that ends with its NUL, as a C string.
fn nul_terminated(text: &'static str) -> &'static CStr {
    CStr::from_bytes_with_nul(text.as_bytes()).unwrap_or(c"")
}

/// A raw status as C passes it (`SnowflakeStatus` is a `uint32_t` in C): a function that
/// *receives* a status takes this, because a value outside the enum in a Rust enum would be
/// undefined behaviour. The header calls it `SnowflakeStatus` (cbindgen.toml renames it).
pub type SnowflakeStatusRaw = u32;

thread_local! {
    static LAST_ERROR: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static LAST_RETRY_AFTER_MS: Cell<u64> = const { Cell::new(0) };
}

/// Stores `detail` (and the retry delay) as this thread's last error. Never panics: it runs
/// inside the panic handler path too.
pub(crate) fn set_detail(detail: core::fmt::Arguments<'_>, retry_after_ms: u64) {
    let _ = LAST_ERROR.try_with(|cell| {
        if let Ok(mut buf) = cell.try_borrow_mut() {
            buf.clear();
            let mut s = String::new();
            let _ = s.write_fmt(detail);
            // A C string ends at the first NUL; the text comes from NUL-terminated input.
            buf.extend(s.bytes().filter(|&b| b != 0));
            buf.push(0);
        }
    });
    let _ = LAST_RETRY_AFTER_MS.try_with(|c| c.set(retry_after_ms));
}

/// Records a core error and returns its status.
#[cold]
pub(crate) fn fail(e: Error) -> SnowflakeStatus {
    // A C user links a library, not a cargo feature: the minimal library's missing leases
    // are said in the terms of the libraries to link.
    #[cfg(not(feature = "full"))]
    if let Error::MissingFeature { option, feature } = &e {
        if feature.starts_with("lease") {
            set_detail(
                format_args!("option `{option}`: libsnowflake_minimal has no leases: link libsnowflake"),
                0,
            );
            return SnowflakeStatus::of(e.kind());
        }
    }
    set_detail(format_args!("{e}"), e.retry_after_ms().unwrap_or(0));
    SnowflakeStatus::of(e.kind())
}

/// Records a failure of the binding itself (a NULL, a short buffer, bad UTF-8).
#[cold]
pub(crate) fn fail_with(status: SnowflakeStatus, detail: core::fmt::Arguments<'_>) -> SnowflakeStatus {
    set_detail(detail, 0);
    status
}

/// A pointer to this thread's last error detail (`""` before any failure).
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR
        .try_with(|cell| match cell.try_borrow() {
            Ok(buf) if !buf.is_empty() => buf.as_ptr().cast::<c_char>(),
            _ => c"".as_ptr(),
        })
        .unwrap_or(c"".as_ptr())
}

pub(crate) fn last_retry_after_ms() -> u64 {
    LAST_RETRY_AFTER_MS.try_with(Cell::get).unwrap_or(0)
}

/// What the body of a status-returning `extern "C"` function evaluates to: `?` works on core
/// errors (recording their detail) and on the binding's own failures.
pub(crate) type FfiResult = Result<(), SnowflakeStatus>;

impl From<Error> for SnowflakeStatus {
    /// Records the error as this thread's last error and gives its status.
    fn from(e: Error) -> SnowflakeStatus {
        fail(e)
    }
}

/// The value an `extern "C"` function returns for the value its body evaluates to.
pub(crate) trait IntoFfi {
    type Output;
    fn into_ffi(self) -> Self::Output;
}

impl IntoFfi for FfiResult {
    type Output = SnowflakeStatus;
    fn into_ffi(self) -> SnowflakeStatus {
        match self {
            Ok(()) => SnowflakeStatus::Ok,
            Err(status) => status,
        }
    }
}

/// What an `extern "C"` function (or its body) returns when an argument is NULL or a panic
/// was caught: the status for functions that return one, a neutral value (0, `""`, nothing)
/// for the few that do not.
pub(crate) trait FfiReturn {
    fn null_argument(name: &str) -> Self;
    fn panicked() -> Self;
}

impl FfiReturn for SnowflakeStatus {
    fn null_argument(name: &str) -> Self {
        fail_with(SnowflakeStatus::NullArgument, format_args!("argument `{name}` is NULL"))
    }
    fn panicked() -> Self {
        SnowflakeStatus::Panic
    }
}

impl IntoFfi for SnowflakeStatus {
    type Output = SnowflakeStatus;
    fn into_ffi(self) -> SnowflakeStatus {
        self
    }
}

impl FfiReturn for FfiResult {
    fn null_argument(name: &str) -> Self {
        Err(SnowflakeStatus::null_argument(name))
    }
    fn panicked() -> Self {
        Err(SnowflakeStatus::Panic)
    }
}

macro_rules! plain_return {
    ($($t:ty => $v:expr),* $(,)?) => {$(
        impl IntoFfi for $t {
            type Output = $t;
            fn into_ffi(self) -> $t {
                self
            }
        }
        impl FfiReturn for $t {
            fn null_argument(name: &str) -> Self {
                fail_with(SnowflakeStatus::NullArgument, format_args!("argument `{name}` is NULL"));
                $v
            }
            fn panicked() -> Self {
                $v
            }
        }
    )*};
}

plain_return! {
    () => (),
    u64 => 0,
    usize => 0,
    *const c_char => c"".as_ptr(),
}

/// Records a caught panic as this thread's last error.
#[cold]
pub(crate) fn record_panic(payload: &(dyn std::any::Any + Send)) {
    let msg = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)");
    set_detail(format_args!("internal error in libsnowflake (please report it): {msg}"), 0);
}

/// The body of every `extern "C"` function: runs it under `catch_unwind`, so that a panic
/// becomes `SNOWFLAKE_STATUS_PANIC` (or the neutral return value) instead of unwinding into
/// C, which would be undefined behaviour. `return` inside the body returns from the function.
macro_rules! ffi_boundary {
    ($body:block) => {
        match ::std::panic::catch_unwind(::std::panic::AssertUnwindSafe(|| $body)) {
            Ok(value) => $crate::error::IntoFfi::into_ffi(value),
            Err(payload) => {
                $crate::error::record_panic(&*payload);
                $crate::error::FfiReturn::panicked()
            }
        }
    };
}

/// Returns `SNOWFLAKE_STATUS_NULL_ARGUMENT` (or the neutral value) naming the first of the
/// listed pointer arguments that is NULL. Every pointer an `extern "C"` function dereferences
/// is listed here first.
macro_rules! non_null {
    ($($ptr:ident),+ $(,)?) => {
        $(
            if $ptr.is_null() {
                return $crate::error::FfiReturn::null_argument(stringify!($ptr));
            }
        )+
    };
}

pub(crate) use {ffi_boundary, non_null};

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn last() -> String {
        // SAFETY: `last_error_ptr` always returns a NUL-terminated string.
        unsafe { CStr::from_ptr(last_error_ptr()) }.to_string_lossy().into_owned()
    }

    #[test]
    fn a_panic_becomes_a_status_with_its_message() {
        fn explode(n: u32) -> SnowflakeStatus {
            if n > 0 {
                panic!("boom {n}");
            }
            SnowflakeStatus::Ok
        }
        let status: SnowflakeStatus = ffi_boundary!({ explode(42) });
        assert_eq!(status, SnowflakeStatus::Panic);
        assert!(last().contains("boom 42"), "{}", last());
        let n: u64 = ffi_boundary!({ u64::from(explode(1) as u32) });
        assert_eq!(n, 0);
    }

    #[test]
    fn null_pointers_are_named() {
        fn f(spec: *const c_char, out: *mut u64) -> SnowflakeStatus {
            ffi_boundary!({
                non_null!(spec, out);
                SnowflakeStatus::Ok
            })
        }
        let mut x = 0u64;
        assert_eq!(f(c"a".as_ptr(), core::ptr::null_mut()), SnowflakeStatus::NullArgument);
        assert_eq!(last(), "argument `out` is NULL");
        assert_eq!(f(core::ptr::null(), &mut x), SnowflakeStatus::NullArgument);
        assert_eq!(last(), "argument `spec` is NULL");
        assert_eq!(f(c"a".as_ptr(), &mut x), SnowflakeStatus::Ok);
    }

    #[test]
    fn statuses_round_trip_and_are_cores_table() {
        for (i, s) in SnowflakeStatus::ALL.iter().enumerate() {
            assert_eq!(*s as u32, i as u32);
            assert_eq!(SnowflakeStatus::from_raw(i as u32), Some(*s));
        }
        assert_eq!(SnowflakeStatus::from_raw(SnowflakeStatus::ALL.len() as u32), None);
        // Every kind of core's table is a status with its number, and back.
        assert_eq!(snowflake_core::KINDS.len(), SnowflakeStatus::ALL.len() - 1);
        for k in snowflake_core::KINDS {
            let s = SnowflakeStatus::of(k.kind);
            assert_eq!(s as u32, k.status, "{:?}", k.kind);
            assert_eq!(s.code().to_str().unwrap(), k.code);
            assert_eq!(s.text().to_str().unwrap(), k.text);
            assert_eq!(format!("{s:?}").to_lowercase(), k.c_name.replace('_', "").to_lowercase());
        }
    }

    #[test]
    fn the_detail_is_per_thread() {
        fail(Error::Forked);
        let here = last();
        std::thread::spawn(|| assert_eq!(last(), "")).join().unwrap();
        assert_eq!(last(), here);
    }
}
