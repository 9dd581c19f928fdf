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

use std::io;
use std::sync::atomic::AtomicU64;

// The variables that configure the library, read through `env_var` and `env_fingerprint`.

/// The variables that configure this library: the layout, the node values, the options,
/// whether node values are required (`crate::env` names and reads the four), and the directory
/// of the host's records (`crate::coord`). [`config_vars`] gives their values in this order.
pub(crate) const CONFIG_VARS: [&str; 5] = [
    "SNOWFLAKE_LAYOUT",
    "SNOWFLAKE_NODE",
    "SNOWFLAKE_OPTIONS",
    "SNOWFLAKE_REQUIRE_NODE",
    "SNOWFLAKE_SHM_DIR",
];

/// The values of [`CONFIG_VARS`] at one moment.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ConfigVars {
    /// [`env_fingerprint`] of the process's variables then (`None` where there is none).
    pub(crate) fingerprint: Option<u64>,
    /// Each of [`CONFIG_VARS`]' values, in its order (`None`: unset).
    pub(crate) values: [Option<std::ffi::OsString>; CONFIG_VARS.len()],
}

/// The values of [`CONFIG_VARS`], read again only when the process's variables change (by
/// [`env_fingerprint`], which covers their text; where there is none, every time): a generator
/// made per request asks for them at each step, and reading them was a seventh of its time.
/// (`try_lock`: never a wait, so that a child of `fork()` whose parent's thread held the lock
/// is not stuck on it; a thread that finds it taken reads the variables itself.)
pub(crate) fn config_vars() -> std::sync::Arc<ConfigVars> {
    use std::sync::{Arc, Mutex};
    static LAST: Mutex<Option<Arc<ConfigVars>>> = Mutex::new(None);
    // `try_with`: a thread whose locals are being destroyed reads the environment itself.
    if let Some(vars) = MAKING.try_with(|m| m.borrow().clone()).ok().flatten() {
        return vars;
    }
    let fingerprint = env_fingerprint();
    if let (Some(_), Ok(last)) = (fingerprint, LAST.try_lock()) {
        if let Some(vars) = last.as_ref().filter(|v| v.fingerprint == fingerprint) {
            return vars.clone();
        }
    }
    let vars = Arc::new(ConfigVars { fingerprint, values: CONFIG_VARS.map(env_var) });
    if let (Some(_), Ok(mut last)) = (fingerprint, LAST.try_lock()) {
        *last = Some(vars.clone());
    }
    vars
}

std::thread_local! {
    /// The variables a generator is being made from on this thread ([`with_config_vars`]).
    static MAKING: std::cell::RefCell<Option<std::sync::Arc<ConfigVars>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` with [`config_vars`] giving `vars` on this thread: a generator made from the
/// variables read at the start of a request finds its record's directory among them, read at
/// the same moment as the rest of its configuration, without a second pass over the
/// environment.
pub(crate) fn with_config_vars<T>(vars: &std::sync::Arc<ConfigVars>, f: impl FnOnce() -> T) -> T {
    struct Restore(Option<std::sync::Arc<ConfigVars>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let previous = self.0.take();
            let _ = MAKING.try_with(|m| *m.borrow_mut() = previous);
        }
    }
    match MAKING.try_with(|m| m.replace(Some(vars.clone()))) {
        Ok(previous) => {
            let _restore = Restore(previous);
            f()
        }
        // A thread whose locals are being destroyed: the variables are read as they are.
        Err(_) => f(),
    }
}

// What both files' `open_in` and `Dir::open` report: the same on every OS.

/// What identifies a file on the host: its device and inode (Unix), its volume's serial number
/// and its file index (Windows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FileId(u64, u64);

/// What [`open_in`] found of a file.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Meta {
    pub id: FileId,
    /// Its owner's user id ([`euid`]'s kind of id).
    pub owner: u32,
    /// Whether users other than its owner may write it (group or others; on Windows, left to
    /// the directory's ACL: false).
    pub shared_write: bool,
}

/// Why a file or directory was refused (an I/O failure aside): each says what was found, so
/// that the caller's error names it. Windows makes only `Io`, `NotRegular`, `Owner` and
/// `Links` (its directories' ACLs are what keep others out).
#[derive(Debug)]
#[cfg_attr(windows, allow(dead_code))]
pub(crate) enum Refusal {
    /// The system call failed.
    Io(io::Error),
    /// Not a regular file (a directory, a device, a FIFO, a socket): `what` names it.
    NotRegular(&'static str),
    /// Another user's file where this user's was expected.
    Owner { uid: u32 },
    /// A file that others may write (`mode`), or a directory that others may write without
    /// the sticky bit.
    Writable { mode: u32 },
    /// A file with other names (hard links) than the one opened.
    Links(u64),
    /// A directory that belongs to another user (neither this one nor root).
    DirOwner { uid: u32, mode: u32 },
    /// A directory that others may write, without the sticky bit (anyone could swap its
    /// files).
    DirWritable { mode: u32 },
}

impl From<io::Error> for Refusal {
    fn from(e: io::Error) -> Refusal {
        Refusal::Io(e)
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Io(e) => write!(f, "{e}"),
            Refusal::NotRegular(what) => write!(f, "it is {what}, not a regular file"),
            Refusal::Owner { uid } => write!(f, "it belongs to {}, not to this user ({})", user_name(*uid), user_name(euid())),
            Refusal::Writable { mode } => write!(f, "others may write it (mode {:o})", mode & 0o7777),
            Refusal::Links(n) => write!(f, "it has {n} names (hard links): another may change it through one of them"),
            Refusal::DirWritable { mode } => write!(
                f,
                "the directory may be written by others and is not sticky (mode {:o}): any user could replace the files in it; make it this user's alone, or sticky (chmod +t) like /tmp and /dev/shm",
                mode & 0o7777
            ),
            Refusal::DirOwner { uid, mode } => write!(
                f,
                "the directory belongs to {} (mode {:o}): files of this user's must be in a directory of its own, of root's, or a sticky one like /tmp",
                user_name(*uid),
                mode & 0o7777
            ),
        }
    }
}

/// A shared mapping's bytes, made and released by each OS's `Map` (which derefs to this): the
/// same accessors everywhere. Words in it are only accessed as atomics, or as bytes written
/// under the file's lock and read after it (see `coord::arbiter`).
pub(crate) struct View {
    ptr: *mut u8,
    len: usize,
}

impl View {
    /// The 8-byte word at `at` (8-aligned, inside the mapping), as an atomic.
    pub(crate) fn word(&self, at: usize) -> &AtomicU64 {
        assert!(at.is_multiple_of(8) && at + 8 <= self.len, "word {at} outside the mapping");
        // SAFETY: aligned (the mapping is page-aligned), inside the mapping, which outlives
        // the borrow; every access to it is atomic.
        unsafe { &*(self.ptr.add(at) as *const AtomicU64) }
    }

    /// The bytes `at..at + n`.
    pub(crate) fn bytes(&self, at: usize, n: usize) -> &[u8] {
        assert!(at + n <= self.len, "bytes {at}+{n} outside the mapping");
        // SAFETY: inside the mapping; header bytes are written only under the file lock,
        // by `set_bytes`, and never while a borrow of them is alive in this process.
        unsafe { std::slice::from_raw_parts(self.ptr.add(at), n) }
    }

    /// Writes `src` at `at`, zero-filling up to `n` bytes (under the file's lock).
    pub(crate) fn set_bytes(&self, at: usize, n: usize, src: &[u8]) {
        assert!(at + n <= self.len, "bytes {at}+{n} outside the mapping");
        let len = src.len().min(n);
        // SAFETY: inside the mapping; see `bytes`.
        unsafe {
            std::ptr::write_bytes(self.ptr.add(at), 0, n);
            std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.add(at), len);
        }
    }
}

impl std::ops::Deref for Map {
    type Target = View;

    fn deref(&self) -> &View {
        &self.view
    }
}

/// Reads at most `max` bytes from the start of a file through `read_at` (the OS's positioned
/// read): each file's `read_bounded`.
fn read_up_to(
    max: usize,
    mut read_at: impl FnMut(&mut [u8], u64) -> io::Result<usize>,
) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; max];
    let mut n = 0;
    while n < max {
        match read_at(&mut buf[n..], n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(n);
    Ok(buf)
}

#[cfg(not(any(unix, windows)))]
compile_error!(
    "snowflake-core's `std` feature needs Unix or Windows (its host records, clocks and locks); on other targets build it with `default-features = false`"
);

/// How far apart [`boot_and_monotonic_ns`]'s two monotonic readings may be (on both sides of
/// the boot time), in ns: a pair further apart (a preemption between them) is read again. Two
/// processes on the same clocks read time bases at most this far apart.
pub(crate) const BOOT_PAIR_NS: u64 = 20_000;
