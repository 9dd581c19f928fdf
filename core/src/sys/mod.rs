//! Every system call that needs `unsafe`, behind safe functions: one file per OS family, so
//! that nothing above this module names an OS and a port touches one room.
//!
//! - `unix.rs` (Linux and the BSDs, macOS): the monotonic clock, the one function that opens
//!   every file the library creates ([`open_in`]), locks (`flock`, and Linux's
//!   open-file-description locks that count a file's users), shared mappings guarded
//!   against truncation, the user database, the fork hooks and the fork gate.

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub(crate) use unix::*;
