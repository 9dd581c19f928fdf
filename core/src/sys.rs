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
//! compares (one relaxed load). Modules that need to act around a fork (mark what the child
//! inherited, drop a cache) register their own handlers with [`at_fork`].
//!
//! Locks are the other hazard: a lock that another thread of the parent held at the instant
//! of the fork stays held in the child forever, as its holder does not exist there. So every
//! critical section that a child may need too (the in-process registries, opening, extending
//! and closing state files and leases) runs inside the [`ForkGate`]: `fork()` closes the gate
//! and waits until no thread is inside, so a child never inherits one of those locks held,
//! nor a `flock` taken for a moment. The locks a process holds for its whole use of a file
//! ([`HeldLock`]: a state file kept alone, a lease, the run lock) are not the child's either:
//! the child's copies of their descriptors are pointed elsewhere, so a child that outlives
//! its parent does not keep the parent's lock.

use std::cell::Cell;
use std::fs::File;
use std::io;
use std::marker::PhantomData;
use std::os::unix::io::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, Once};

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

/// Opens (or creates) a file of this user's alone (mode 0600) for reading and writing,
/// without truncating it and closed on `exec`: how every lock, state and lease file of the
/// coordination layer is opened. `flags` adds open flags (e.g. `O_NOFOLLOW`).
pub(crate) fn open_private(path: &std::path::Path, flags: i32) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_CLOEXEC | flags)
        .open(path)
}

/// An exclusive `flock(2)` on an open file, released when dropped (or when every descriptor
/// of the open file is closed, e.g. when the process dies). Taken for a moment, inside the
/// [`ForkGate`]; see [`HeldLock`] for a lock held as long as a file is used.
pub(crate) struct Flock<'a>(&'a File);

impl<'a> Flock<'a> {
    /// Waits for the lock.
    pub(crate) fn exclusive(file: &'a File) -> io::Result<Flock<'a>> {
        loop {
            // SAFETY: a valid descriptor, borrowed for as long as the lock is held.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } == 0 {
                return Ok(Flock(file));
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

impl Drop for Flock<'_> {
    fn drop(&mut self) {
        // SAFETY: a valid descriptor.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// Users of a file, counted by the kernel: each user holds a read lock on byte `at` through
/// its own open file description (Linux's `F_OFD_SETLK`). The lock lives as long as some
/// descriptor of that description is open: a child of `fork()` that inherits it counts with
/// its parent, and a process that dies, however it dies, stops counting. Independent of
/// `flock(2)`, so a file can be both set up under a [`Flock`] and used.
pub(crate) mod users {
    use std::fs::File;
    use std::io;

    #[cfg(target_os = "linux")]
    fn lock(file: &File, at: i64, command: i32, kind: i32) -> io::Result<libc::flock> {
        use std::os::unix::io::AsRawFd;
        // SAFETY: a zeroed `flock` is a valid value; the fields that matter are set below.
        let mut l: libc::flock = unsafe { std::mem::zeroed() };
        l.l_type = kind as libc::c_short;
        l.l_whence = libc::SEEK_SET as libc::c_short;
        l.l_start = at as libc::off_t;
        l.l_len = 1;
        loop {
            // SAFETY: a valid descriptor and a valid `flock` (l_pid 0, as OFD locks need).
            if unsafe { libc::fcntl(file.as_raw_fd(), command, &mut l) } == 0 {
                return Ok(l);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }

    /// Counts this open file as a user, for as long as it stays open.
    #[cfg(target_os = "linux")]
    pub(crate) fn join(file: &File, at: i64) -> io::Result<()> {
        lock(file, at, libc::F_OFD_SETLK, libc::F_RDLCK).map(|_| ())
    }

    /// Whether another open file (of this process or another) counts as a user.
    #[cfg(target_os = "linux")]
    pub(crate) fn others(file: &File, at: i64) -> io::Result<bool> {
        Ok(lock(file, at, libc::F_OFD_GETLK, libc::F_WRLCK)?.l_type != libc::F_UNLCK as libc::c_short)
    }

    /// Without open-file-description locks, users are not counted.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn join(_: &File, _: i64) -> io::Result<()> {
        Ok(())
    }

    /// Without open-file-description locks, another user is always assumed.
    #[cfg(not(target_os = "linux"))]
    pub(crate) fn others(_: &File, _: i64) -> io::Result<bool> {
        Ok(true)
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
static FORK_HOOKS: Once = Once::new();

/// Registers `pthread_atfork` handlers: `prepare` runs in the forking thread before the fork,
/// `parent` and `child` after it in each process. Each must be async-signal-safe in spirit:
/// no allocation, no lock that another thread may hold; a child handler must not enter the
/// [`ForkGate`] (it opens only after the handlers). Call it inside the gate, so that no fork
/// can come between a `Once` and its registration.
pub(crate) fn at_fork(prepare: extern "C" fn(), parent: extern "C" fn(), child: extern "C" fn()) {
    // SAFETY: the handlers are `extern "C"` functions that live as long as the process.
    unsafe { libc::pthread_atfork(Some(prepare), Some(parent), Some(child)) };
}

/// Installs this module's fork handlers: the fork generation and the gate. Done when the
/// library is loaded (see `INSTALL_AT_LOAD`), before any thread of ours exists, and again
/// (a no-op) on first use where the loader did not run it.
fn install_fork_hooks() {
    FORK_HOOKS.call_once(|| at_fork(gate_prepare, gate_parent, gate_child));
}

/// Runs [`install_fork_hooks`] when the library is loaded (ELF `.init_array`), so that no fork
/// can find the `Once` above half-run.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
#[used]
#[link_section = ".init_array"]
static INSTALL_AT_LOAD: extern "C" fn() = {
    extern "C" fn install_at_load() {
        install_fork_hooks();
    }
    install_at_load
};

/// How many times this process's ancestry has forked since the library was loaded (0 in the
/// first process); installs the hook on first use.
pub(crate) fn fork_generation() -> u64 {
    install_fork_hooks();
    current_fork_generation()
}

/// [`fork_generation`] without the installation check, for hot paths of objects that
/// installed it when they were made.
#[inline]
pub(crate) fn current_fork_generation() -> u64 {
    FORK_GENERATION.load(Ordering::Relaxed)
}

// ---------------------------------------------------------------------------------------------
// The fork gate.

/// How many forks are under way (their `prepare` ran, their `parent` not yet).
static GATE_CLOSERS: AtomicUsize = AtomicUsize::new(0);
/// How many threads are inside the gate.
static GATE_INSIDE: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// How deep this thread is inside the gate (nested entries count once in `GATE_INSIDE`).
    static GATE_DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// A critical section that a child of `fork()` must never find half-done: `fork()` waits at
/// the gate until no thread is inside, and no thread enters while a fork is under way. Every
/// lock that a child may take (the registries' mutexes, a reservation's locks, a `flock` on a
/// state file) is taken only inside the gate, so none is ever inherited held.
///
/// Entering is two atomic operations; a thread already inside enters again at once (nested
/// sections never wait for a fork that waits for them). What runs inside must never wait for
/// another thread that could be outside the gate (the clock's waits, a lock held by a caller,
/// the Python GIL): a fork would wait for it, and it for the fork. Blocking on another
/// process's `flock` for the moment of a write is fine; waiting a whole run for one is not
/// (the run lock polls, outside the gate).
pub(crate) struct ForkGate(PhantomData<*const ()>);

fn backoff(round: &mut u32) {
    *round += 1;
    match *round {
        0..=64 => std::hint::spin_loop(),
        65..=128 => std::thread::yield_now(),
        _ => std::thread::sleep(std::time::Duration::from_micros(50)),
    }
}

impl ForkGate {
    /// Enters the gate, waiting while a fork is under way.
    pub(crate) fn enter() -> ForkGate {
        install_fork_hooks();
        let depth = GATE_DEPTH.with(Cell::get);
        if depth == 0 {
            let mut round = 0;
            loop {
                // Sequentially consistent, with `gate_prepare`: either this thread sees the
                // fork coming and steps back, or the fork sees this thread inside and waits.
                if GATE_CLOSERS.load(Ordering::SeqCst) == 0 {
                    GATE_INSIDE.fetch_add(1, Ordering::SeqCst);
                    if GATE_CLOSERS.load(Ordering::SeqCst) == 0 {
                        break;
                    }
                    GATE_INSIDE.fetch_sub(1, Ordering::SeqCst);
                }
                backoff(&mut round);
            }
        }
        GATE_DEPTH.with(|d| d.set(depth + 1));
        ForkGate(PhantomData)
    }
}

impl Drop for ForkGate {
    fn drop(&mut self) {
        let depth = GATE_DEPTH.with(|d| {
            let left = d.get() - 1;
            d.set(left);
            left
        });
        if depth == 0 {
            GATE_INSIDE.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// Closes the gate and waits until no other thread is inside.
extern "C" fn gate_prepare() {
    GATE_CLOSERS.fetch_add(1, Ordering::SeqCst);
    let own = usize::from(GATE_DEPTH.with(Cell::get) > 0);
    let mut round = 0;
    while GATE_INSIDE.load(Ordering::SeqCst) > own {
        backoff(&mut round);
    }
}

extern "C" fn gate_parent() {
    GATE_CLOSERS.fetch_sub(1, Ordering::SeqCst);
}

extern "C" fn gate_child() {
    FORK_GENERATION.fetch_add(1, Ordering::SeqCst);
    detach_held_locks();
    // The only thread of the child is the one that forked.
    GATE_INSIDE.store(usize::from(GATE_DEPTH.with(Cell::get) > 0), Ordering::SeqCst);
    GATE_CLOSERS.store(0, Ordering::SeqCst);
}

// ---------------------------------------------------------------------------------------------
// Locks held for as long as a file is used.

/// The descriptors of this process's [`HeldLock`]s that a child must not keep (touched only
/// inside the gate, so never locked at a fork).
static DETACHED_IN_CHILD: Mutex<Vec<RawFd>> = Mutex::new(Vec::new());

/// Whether a child of `fork()` keeps a [`HeldLock`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum InChild {
    /// The child's copy of the descriptor is pointed at a pipe: the lock is the parent's
    /// alone, released when the parent releases it or dies, whatever its children do. For
    /// locks that only guard what a child cannot use (a state kept by one process, a lease,
    /// the run lock: a child refuses to issue from them).
    Dropped,
    /// The child keeps the descriptor, and with it the lock, for as long as it lives: for a
    /// shared lock that guards what the child goes on using (a shared state's state file).
    /// Never released with `LOCK_UN`, which would release it for the children too.
    Kept,
}

/// A `flock(2)` held on a file for as long as this value lives: exclusive or shared, taken
/// without waiting, released when dropped (by the process that took it) or when the process
/// dies, however it dies.
pub(crate) struct HeldLock {
    file: File,
    in_child: InChild,
    fork_generation: u64,
}

impl HeldLock {
    /// Locks `file` (exclusively, or shared) without waiting: `Ok(None)` when another open
    /// file holds a conflicting lock.
    pub(crate) fn try_take(file: File, exclusive: bool, in_child: InChild) -> io::Result<Option<HeldLock>> {
        let _gate = ForkGate::enter();
        let how = if exclusive { libc::LOCK_EX } else { libc::LOCK_SH } | libc::LOCK_NB;
        loop {
            // SAFETY: a valid descriptor, owned by `file`.
            if unsafe { libc::flock(file.as_raw_fd(), how) } == 0 {
                break;
            }
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                return Ok(None);
            }
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
        if in_child == InChild::Dropped {
            DETACHED_IN_CHILD.lock().unwrap_or_else(|e| e.into_inner()).push(file.as_raw_fd());
        }
        Ok(Some(HeldLock { file, in_child, fork_generation: fork_generation() }))
    }

    /// The locked file.
    pub(crate) fn file(&self) -> &File {
        &self.file
    }
}

impl Drop for HeldLock {
    fn drop(&mut self) {
        // In a child the descriptor is a copy (pointed at a pipe, or kept on purpose): closing
        // it, which dropping `file` does, is all there is to do.
        if self.fork_generation != current_fork_generation() || self.in_child == InChild::Kept {
            return;
        }
        let _gate = ForkGate::enter();
        let fd = self.file.as_raw_fd();
        DETACHED_IN_CHILD.lock().unwrap_or_else(|e| e.into_inner()).retain(|&held| held != fd);
        // SAFETY: a valid descriptor. Explicitly, rather than by closing: a child forked
        // before this value was registered would otherwise keep the lock.
        unsafe { libc::flock(fd, libc::LOCK_UN) };
    }
}

/// In a child of `fork()`: points the child's copies of the parent's held-lock descriptors
/// at a pipe (which `dup2` does atomically), so the child holds none of the parent's locks;
/// the parent's own values close the pipe's descriptors when they are dropped.
fn detach_held_locks() {
    let Ok(mut fds) = DETACHED_IN_CHILD.try_lock() else { return };
    if fds.is_empty() {
        return;
    }
    let mut pipe = [-1; 2];
    // SAFETY: `pipe` is a valid out-array of two descriptors.
    if unsafe { libc::pipe(pipe.as_mut_ptr()) } != 0 {
        return;
    }
    for &fd in fds.iter() {
        // SAFETY: `fd` is open (registered and not yet unregistered, both inside the gate)
        // and `pipe[0]` is ours.
        unsafe { libc::dup2(pipe[0], fd) };
    }
    // SAFETY: the pipe's own descriptors, closed once.
    unsafe {
        libc::close(pipe[0]);
        libc::close(pipe[1]);
    }
    fds.clear();
}
