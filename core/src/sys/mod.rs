//! Every system call that needs `unsafe`, behind safe functions: one file per OS family, so
//! that nothing above this module names an OS and a port touches one room. Both files offer
//! the same functions and types, with the same meaning; where a system cannot keep a part
//! of it, the file says so where the difference is made, and `docs/packages.md` says what it
//! means for users of each platform.
//!
//! - `unix.rs` (Linux, macOS and the BSDs): the monotonic clock, the one function that opens
//!   every file the library creates ([`open_in`]), locks (`flock`; Linux's
//!   open-file-description locks and macOS's `flock` that count a record's users), shared
//!   mappings guarded against truncation, the user database, the fork hooks and the fork
//!   gate. Its module docs list where Linux and macOS differ.
//! - `windows.rs`: the same over Win32: `QueryPerformanceCounter`, `CreateFileW` with share
//!   modes that keep a record from being removed or replaced while it is open, `LockFileEx`
//!   byte ranges (held per open file, like Linux's), file mappings (which a file cannot be
//!   truncated under), the token's owner SID as the user. There is no `fork()`: the fork
//!   gate and hooks are empty.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub(crate) use windows::*;

#[cfg(not(any(unix, windows)))]
compile_error!(
    "snowflake-core's `std` feature needs Unix or Windows (its host records, clocks and locks); on other targets build it with `default-features = false`"
);
