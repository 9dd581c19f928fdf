//! Every system call that needs `unsafe`, behind safe functions: the monotonic clock, file
//! locks, shared mappings, the user id, and the fork hooks. Nothing else in the crate calls
//! `libc` with `unsafe`, so this file is where to look for what the library asks of the OS.
//!
//! # fork()
//!
//! A child of `fork()` gets a copy of the parent's memory, generators included, and only the
//! thread that forked. [`fork_generation`] counts the forks this process's ancestry has made
//! since the library was loaded: a child handler registered with `pthread_atfork` bumps it,
//! so anything that must not be used across a fork records the generation it was made in and
//! compares (one relaxed load). Modules that need to act around a fork (release a lock, drop
//! a cache) register their own handlers with [`at_fork`].

use std::fs::File;
use std::io;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Once;

/// `CLOCK_MONOTONIC` in nanoseconds: one clock for every process of the host, never going
/// back.
#[inline]
pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid out-pointer; CLOCK_MONOTONIC always exists on Linux and the BSDs.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The effective user id.
pub(crate) fn euid() -> u32 {
    // SAFETY: no arguments; cannot fail.
    unsafe { libc::geteuid() }
}

/// An exclusive `flock(2)` on an open file, released when dropped (or when every descriptor
/// of the open file is closed, e.g. when the process dies).
pub(crate) struct Flock<'a>(&'a File);

impl<'a> Flock<'a> {
    /// Waits for the lock.
    pub(crate) fn exclusive(file: &'a File) -> io::Result<Flock<'a>> {
        Flock::take(file, true).map(|l| l.expect("a blocking lock is taken"))
    }

    /// Takes the lock without waiting: `None` when another open file holds it.
    pub(crate) fn try_exclusive(file: &'a File) -> io::Result<Option<Flock<'a>>> {
        Flock::take(file, false)
    }

    fn take(file: &'a File, wait: bool) -> io::Result<Option<Flock<'a>>> {
        let how = if wait { libc::LOCK_EX } else { libc::LOCK_EX | libc::LOCK_NB };
        loop {
            // SAFETY: a valid descriptor, borrowed for as long as the lock is held.
            if unsafe { libc::flock(file.as_raw_fd(), how) } == 0 {
                return Ok(Some(Flock(file)));
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                return Ok(None);
            }
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Keeps the lock for the life of the open file (the kernel releases it at exit).
    pub(crate) fn keep(self) {
        std::mem::forget(self);
    }
}

impl Drop for Flock<'_> {
    fn drop(&mut self) {
        // SAFETY: a valid descriptor.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// A shared, writable mapping of the first `len` bytes of a file. Words in it are only
/// accessed as atomics, or as bytes written under the file's lock.
pub(crate) struct Map {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the mapping is only accessed through atomics, or through bytes that are written
// under the file's lock and read after it (see `shared`).
unsafe impl Send for Map {}
unsafe impl Sync for Map {}

impl Map {
    /// Maps `len` bytes of `file` (which must be at least that long), shared and writable.
    pub(crate) fn shared(file: &File, len: usize) -> io::Result<Map> {
        // SAFETY: a fresh shared mapping of an open file; the kernel checks the rest.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Map { ptr: ptr.cast(), len })
    }

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

impl Drop for Map {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `shared`, unmapped once.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

static FORK_GENERATION: AtomicU64 = AtomicU64::new(0);
static FORK_HOOK: Once = Once::new();

extern "C" fn bump_fork_generation() {
    FORK_GENERATION.fetch_add(1, Ordering::SeqCst);
}

/// Registers `pthread_atfork` handlers: `prepare` runs in the forking thread before the fork,
/// `parent` and `child` after it in each process. Each must be async-signal-safe in spirit:
/// no allocation, no lock that another thread may hold.
pub(crate) fn at_fork(prepare: extern "C" fn(), parent: extern "C" fn(), child: extern "C" fn()) {
    // SAFETY: the handlers are `extern "C"` functions that live as long as the process.
    unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) };
}

/// How many times this process's ancestry has forked since the library was loaded (0 in the
/// first process); installs the hook on first use.
pub(crate) fn fork_generation() -> u64 {
    FORK_HOOK.call_once(|| {
        // SAFETY: a plain `extern "C"` function that only touches an atomic.
        unsafe { libc::pthread_atfork(None, None, Some(bump_fork_generation)) };
    });
    current_fork_generation()
}

/// [`fork_generation`] without the installation check, for hot paths of objects that
/// installed it when they were made.
#[inline]
pub(crate) fn current_fork_generation() -> u64 {
    FORK_GENERATION.load(Ordering::Relaxed)
}
