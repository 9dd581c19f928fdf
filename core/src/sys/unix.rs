//! Every system call that needs `unsafe`, behind safe functions: the monotonic clock, file
//! locks, shared mappings, the user id, and the fork hooks. Nothing else in the crate calls
//! `libc` with `unsafe`, so this file is where to look for what the library asks of the OS.
//!
//! # Linux and macOS
//!
//! The two share every code path here but the locks that count a host record's users, and
//! what the kernel tells of them. Each difference is marked `macOS:` where it is made:
//!
//! - **The users' lock** ([`locks`]): Linux takes an open-file-description lock (`F_OFD_SETLK`)
//!   on one byte of the record; macOS, which has no such byte-range locks, a `flock(2)` on
//!   the whole record, which BSD also ties to the open file description: shared or
//!   exclusive, kept by a child of `fork()` with its parent, let go when the process dies.
//!   The one thing macOS cannot say is whether *another* open file holds a shared lock beside
//!   this one's: [`locks::taken_by_others`] then answers "yes", which only skips what a last
//!   user may do (lower a state file's reservation, wait for borrowed IDs at exit).
//! - **The set-up lock** ([`setup_lock`]): a `flock` on the record on Linux (independent of
//!   its OFD locks); on macOS, where `flock` is the users' lock, a `flock` on
//!   `<record>.lock` beside it.
//! - **What the kernel lists**: Linux's `/proc/locks` names the processes that use a record
//!   and keeps the beacons of a removed one ([`locks::beacons`]); macOS lists nothing, so
//!   refusals name the user but not the process, and a record made anew after one was
//!   removed in use starts past the clock by the newcomer's own `max_drift_ms`.
//! - `/proc/uptime` (the time-base check), `/proc/sys/kernel/random/boot_id` (macOS:
//!   `kern.bootsessionuuid`), containers (Linux only), and the host's directory (`/dev/shm`;
//!   macOS: `/var/tmp`, sticky and host-wide, which the system does not clean).
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
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, Once};

use super::{FileId, Meta, Refusal, View};

/// `CLOCK_MONOTONIC` in nanoseconds: one clock for every process of the host, never going
/// back.
#[inline]
pub(crate) fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid out-pointer; CLOCK_MONOTONIC always exists on Linux and the BSDs.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// The C library's array of the process's variables (`NAME=value` strings, null-terminated),
/// as `getenv` reads it; null where there is none.
fn environ() -> *const *const libc::c_char {
    #[cfg(target_vendor = "apple")]
    // SAFETY: _NSGetEnviron gives the address of the process's `environ` (a dylib cannot name
    // `environ` itself on macOS).
    return unsafe { *libc::_NSGetEnviron() } as *const *const libc::c_char;
    #[cfg(not(target_vendor = "apple"))]
    // SAFETY: `environ` is the C library's array of the process's variables.
    unsafe {
        extern "C" {
            static environ: *const *const libc::c_char;
        }
        environ
    }
}

/// A fingerprint of this process's environment variables, read in place, without allocating:
/// the address of each `NAME=value` string, their count, and the whole text of each of ours
/// (`SNOWFLAKE_…`). A variable set, replaced or removed through the C library (`setenv`,
/// `putenv`, `unsetenv`, and `os.environ`, `process.env`, `std::env::set_var` over them)
/// changes the array or its addresses; a string of ours changed in place (`putenv` keeps the
/// caller's buffer), or set anew at the address of one freed (PHP frees its `putenv` strings at
/// each request's end), changes its text. [`crate::env`] reads our variables again, and scans
/// the names for near misses of ours, only when the fingerprint changes. Like `getenv`, it reads
/// `environ` without the lock that `std::env::set_var` takes (a program that sets variables
/// while another thread reads them has that race with every C library's `getenv` too).
pub(crate) fn env_fingerprint() -> Option<u64> {
    const OURS: &[u8] = b"SNOWFLAKE_";
    let mut entry = environ();
    if entry.is_null() {
        return Some(0);
    }
    // FNV-1a over the addresses, our strings' text (a word at a time), then the count.
    let mix = |h: u64, w: u64| (h ^ w).wrapping_mul(0x0100_0000_01b3);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut n: u64 = 0;
    // SAFETY: a null-terminated array of pointers to NUL-terminated strings; a string is read
    // past its first byte only when that byte is `OURS`' first (never a NUL), and then byte by
    // byte while it matches `OURS`, or up to its NUL.
    unsafe {
        while !(*entry).is_null() {
            let text = (*entry).cast::<u8>();
            h = mix(h, text as usize as u64);
            if *text == OURS[0] {
                let mut same = 1;
                while same < OURS.len() && *text.add(same) == OURS[same] {
                    same += 1;
                }
                if same == OURS.len() {
                    let bytes = std::ffi::CStr::from_ptr(text.cast()).to_bytes();
                    let mut words = bytes.chunks_exact(8);
                    for w in &mut words {
                        h = mix(h, u64::from_le_bytes(w.try_into().unwrap_or_default()));
                    }
                    for &b in words.remainder() {
                        h = mix(h, u64::from(b));
                    }
                }
            }
            n += 1;
            entry = entry.add(1);
        }
    }
    Some(mix(h, n))
}

/// The variable `name` (`NAME` without `=` or NUL), as `std::env::var_os` gives it, read in
/// place in one pass over `environ`, as `getenv` reads it (with its race, as
/// [`env_fingerprint`] says). `std::env::var_os` costs a generator made per request several
/// times as much (its lock and copies), once per variable.
pub(crate) fn env_var(name: &str) -> Option<std::ffi::OsString> {
    use std::os::unix::ffi::OsStrExt;
    let name = name.as_bytes();
    debug_assert!(!name.is_empty() && !name.contains(&0) && !name.contains(&b'='));
    let mut entry = environ();
    if entry.is_null() {
        return None;
    }
    // SAFETY: a null-terminated array of pointers to NUL-terminated strings; a string is read
    // past a byte only when that byte matched `name`'s (never a NUL) or its `=`.
    unsafe {
        while !(*entry).is_null() {
            let text = (*entry).cast::<u8>();
            let mut same = 0;
            while same < name.len() && *text.add(same) == name[same] {
                same += 1;
            }
            if same == name.len() && *text.add(same) == b'=' {
                let value = std::ffi::CStr::from_ptr(text.add(same + 1).cast()).to_bytes();
                return Some(std::ffi::OsStr::from_bytes(value).into());
            }
            entry = entry.add(1);
        }
    }
    None
}

/// The effective user id.
pub(crate) fn euid() -> u32 {
    // SAFETY: no arguments; cannot fail.
    unsafe { libc::geteuid() }
}

// ---------------------------------------------------------------------------------------------
// Opening files: the one way every file the library creates or reads is opened.

/// What a file is, from `fstat`.
fn kind_of(meta: &std::fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_file() {
        None
    } else if t.is_dir() {
        Some("a directory")
    } else if t.is_char_device() {
        Some("a character device")
    } else if t.is_block_device() {
        Some("a block device")
    } else if t.is_fifo() {
        Some("a FIFO")
    } else if t.is_socket() {
        Some("a socket")
    } else {
        Some("not a regular file")
    }
}

/// A directory the library keeps files in, open (so that the names it opens are looked up in
/// this directory, whatever happens to its path meanwhile), and checked: it belongs to this
/// user or to root, and others may not write it unless it is sticky (like `/tmp` and
/// `/dev/shm`, where only a file's owner may rename or remove it).
pub(crate) struct Dir {
    file: File,
    path: std::path::PathBuf,
    /// Its file system (for the beacons on it: Linux).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    dev: u64,
    ino: u64,
}

impl Dir {
    /// Opens the directory at `path`.
    pub(crate) fn open(path: &std::path::Path) -> Result<Dir, Refusal> {
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        let file = File::options().read(true).custom_flags(libc::O_DIRECTORY | libc::O_CLOEXEC).open(path)?;
        let meta = file.metadata()?;
        let (uid, mode) = (meta.uid(), meta.mode());
        if uid != euid() && uid != 0 {
            return Err(Refusal::DirOwner { uid, mode });
        }
        if mode & 0o022 != 0 && mode & 0o1000 == 0 {
            return Err(Refusal::DirWritable { mode });
        }
        Ok(Dir { file, path: path.to_path_buf(), dev: meta.dev(), ino: meta.ino() })
    }

    /// Its path, as it was opened.
    pub(crate) fn path(&self) -> &std::path::Path {
        &self.path
    }

    /// Its file system's device.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub(crate) fn dev(&self) -> u64 {
        self.dev
    }

    /// Its inode.
    pub(crate) fn ino(&self) -> u64 {
        self.ino
    }

    /// The names in it.
    pub(crate) fn names(&self) -> io::Result<Vec<std::ffi::OsString>> {
        // `read_dir` by path would follow a path that changed since; the open directory's own
        // entries are read through /proc/self/fd where there is one.
        let by_fd = std::path::PathBuf::from(format!("/proc/self/fd/{}", self.file.as_raw_fd()));
        let listed = if by_fd.exists() { std::fs::read_dir(&by_fd) } else { std::fs::read_dir(&self.path) }?;
        Ok(listed.filter_map(|e| e.ok().map(|e| e.file_name())).collect())
    }
}

/// How [`open_in`] opens a file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    /// This user's own file, read and written, created with `mode` when missing (`None`:
    /// never created): it must belong to this user, have one name, and others may not write
    /// it.
    Own(Option<u32>),
    /// A new file that did not exist (`O_EXCL`), with `mode`: temporaries.
    New(u32),
    /// Another user's (or any) file, read only, never created: the caller checks its owner.
    Read,
}

/// Opens `name` in `dir`: the one function through which the library opens the files it
/// creates or reads (host records, state files, their temporaries and locks). No symbolic
/// link is followed (`O_NOFOLLOW`), nothing blocks on a FIFO (`O_NONBLOCK` while opening),
/// descriptors close on `exec`, and anything but a regular file is refused before a byte of
/// it is read or written. Returns the file and what `fstat` said of it.
pub(crate) fn open_in(dir: &Dir, name: &std::ffi::OsStr, access: Access) -> Result<(File, Meta), Refusal> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;
    use std::os::unix::io::FromRawFd;
    if name.is_empty() || name.as_bytes().contains(&b'/') || name == "." || name == ".." {
        return Err(Refusal::Io(io::Error::new(io::ErrorKind::InvalidInput, "not a file name")));
    }
    let cname = std::ffi::CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a file name with a NUL byte"))?;
    let base = libc::O_CLOEXEC | libc::O_NOFOLLOW | libc::O_NONBLOCK;
    let (flags, mode) = match access {
        Access::Own(Some(mode)) => (base | libc::O_RDWR | libc::O_CREAT, mode),
        Access::Own(None) => (base | libc::O_RDWR, 0),
        Access::New(mode) => (base | libc::O_RDWR | libc::O_CREAT | libc::O_EXCL, mode),
        Access::Read => (base | libc::O_RDONLY, 0),
    };
    let fd = loop {
        // SAFETY: a valid directory descriptor and a NUL-terminated name.
        let fd = unsafe { libc::openat(dir.file.as_raw_fd(), cname.as_ptr(), flags, mode as libc::c_uint) };
        if fd >= 0 {
            break fd;
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            // What stands at the name, when that is why: a symbolic link (which O_NOFOLLOW
            // refuses, and which the kernel's protected_symlinks may refuse first with
            // EACCES), a directory, another user's file in a sticky directory.
            if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::EACCES | libc::EISDIR | libc::EPERM)) {
                // SAFETY: a zeroed `stat` is a valid out-value.
                let mut st: libc::stat = unsafe { std::mem::zeroed() };
                // SAFETY: a valid directory descriptor, a NUL-terminated name, an out-pointer.
                let found = unsafe {
                    libc::fstatat(dir.file.as_raw_fd(), cname.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW)
                } == 0;
                if found {
                    match st.st_mode & libc::S_IFMT {
                        libc::S_IFLNK => return Err(Refusal::NotRegular("a symbolic link")),
                        libc::S_IFDIR => return Err(Refusal::NotRegular("a directory")),
                        libc::S_IFREG if st.st_uid != euid() => {
                            return Err(Refusal::Owner { uid: st.st_uid })
                        }
                        _ => {}
                    }
                }
            }
            return Err(Refusal::Io(e));
        }
    };
    // SAFETY: a descriptor just opened, owned by nobody else.
    let file = unsafe { File::from_raw_fd(fd) };
    let meta = file.metadata()?;
    if let Some(what) = kind_of(&meta) {
        return Err(Refusal::NotRegular(what));
    }
    // Blocking again: the file is regular.
    // SAFETY: a valid descriptor; F_SETFL with the flags read just before.
    unsafe {
        let fl = libc::fcntl(fd, libc::F_GETFL);
        libc::fcntl(fd, libc::F_SETFL, fl & !libc::O_NONBLOCK);
    }
    if access != Access::Read {
        if meta.uid() != euid() {
            return Err(Refusal::Owner { uid: meta.uid() });
        }
        if meta.nlink() > 1 {
            return Err(Refusal::Links(meta.nlink()));
        }
        if meta.mode() & 0o022 != 0 {
            return Err(Refusal::Writable { mode: meta.mode() });
        }
    }
    let found = Meta {
        id: FileId(meta.dev(), meta.ino()),
        owner: meta.uid(),
        shared_write: meta.mode() & 0o022 != 0,
    };
    Ok((file, found))
}

/// Reads at most `max` bytes from the start of `file` (a record is small: never more).
pub(crate) fn read_bounded(file: &File, max: usize) -> io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    super::read_up_to(max, |buf, at| file.read_at(buf, at))
}

/// Removes `name` from `dir`, which `file` (opened with [`Access::Own`]`(None)`) holds open:
/// a host record, removed under its set-up lock. (Windows removes it through the handle.)
pub(crate) fn remove_open(dir: &Dir, name: &std::ffi::OsStr, _file: &File) -> io::Result<()> {
    remove_in(dir, name)
}

/// Removes `name` from `dir`.
pub(crate) fn remove_in(dir: &Dir, name: &std::ffi::OsStr) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let cname = std::ffi::CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a file name with a NUL byte"))?;
    // SAFETY: a valid directory descriptor and a NUL-terminated name.
    if unsafe { libc::unlinkat(dir.file.as_raw_fd(), cname.as_ptr(), 0) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Renames `from` to `to`, both in `dir` (atomically replacing `to`).
pub(crate) fn rename_in(dir: &Dir, from: &std::ffi::OsStr, to: &std::ffi::OsStr) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |n: &std::ffi::OsStr| {
        std::ffi::CString::new(n.as_bytes())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a file name with a NUL byte"))
    };
    let (from, to) = (c(from)?, c(to)?);
    let fd = dir.file.as_raw_fd();
    // SAFETY: valid directory descriptors and NUL-terminated names.
    if unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Makes `dir`'s entries durable (after a rename in it).
pub(crate) fn sync_dir(dir: &Dir) -> io::Result<()> {
    dir.file.sync_all()
}

/// The file that `name` in `dir` is now, as `fstatat` without following a link says:
/// `Ok(None)` when the name is gone.
pub(crate) fn id_in(dir: &Dir, name: &std::ffi::OsStr) -> io::Result<Option<FileId>> {
    use std::os::unix::ffi::OsStrExt;
    let cname = std::ffi::CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a file name with a NUL byte"))?;
    // SAFETY: a zeroed `stat` is a valid out-value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid directory descriptor, a NUL-terminated name and a valid out-pointer.
    let r =
        unsafe { libc::fstatat(dir.file.as_raw_fd(), cname.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
    if r == 0 {
        return Ok(Some(FileId(st.st_dev as u64, st.st_ino as u64)));
    }
    let e = io::Error::last_os_error();
    if e.kind() == io::ErrorKind::NotFound {
        return Ok(None);
    }
    Err(e)
}

/// What one `fstat` of an open file says of it: its length, and whether some name still
/// holds it (a link count above 0: removing or replacing the name it had drops it to 0).
pub(crate) fn linked_len(file: &File) -> io::Result<(bool, u64)> {
    // SAFETY: a zeroed `stat` is a valid out-value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a valid descriptor and a valid out-pointer.
    if unsafe { libc::fstat(file.as_raw_fd(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((st.st_nlink > 0, st.st_size as u64))
}

/// The name of user `uid` (`uid 1234` when the user database does not know it), for messages
/// and the listing of the host's states.
///
/// Read from `/etc/passwd`, not through `getpwuid_r`: in a program linked statically against
/// glibc, `getpwuid_r` brings the name-service switch and the dynamic loader with it (90 KB of
/// the minimal static C program's 1.5 MB, issue 29). A user known only to a directory service
/// (LDAP, SSSD) is shown by uid.
pub(crate) fn user_name(uid: u32) -> String {
    match std::fs::read("/etc/passwd").ok().as_deref().and_then(|text| passwd_name(text, uid)) {
        Some(name) => format!("user {name} (uid {uid})"),
        None => format!("uid {uid}"),
    }
}

/// The name on the first line of a `passwd` file's `text` whose uid is `uid`.
fn passwd_name(text: &[u8], uid: u32) -> Option<&str> {
    text.split(|&b| b == b'\n').find_map(|line| {
        let mut fields = line.split(|&b| b == b':');
        let name = std::str::from_utf8(fields.next()?).ok().filter(|n| !n.is_empty())?;
        let id = std::str::from_utf8(fields.nth(1)?).ok()?.parse::<u32>().ok()?;
        (id == uid).then_some(name)
    })
}

/// `/proc/uptime`'s boot time in nanoseconds (CLOCK_BOOTTIME as the kernel keeps it, read as
/// a file: a library that fakes the process's clocks does not move it), if there is one, as
/// the host's first time namespace sees it: a time namespace's boottime offset (which
/// `/proc/uptime` shows, and which `unshare --time` or a CRIU restore shifts with monotonic's,
/// hiding the shift) is taken back out, so that a shifted `CLOCK_MONOTONIC` shows.
/// macOS: none (the time-base check is not made there).
#[cfg(not(target_os = "macos"))]
pub(crate) fn uptime_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/uptime").ok()?;
    let first = text.split_whitespace().next()?;
    let (s, frac) = first.split_once('.').unwrap_or((first, "0"));
    let s: u64 = s.parse().ok()?;
    let mut frac_ns: u64 = 0;
    for (i, c) in frac.chars().take(9).enumerate() {
        frac_ns += u64::from(c.to_digit(10)?) * 10u64.pow(8 - i as u32);
    }
    let seen = (s * 1_000_000_000 + frac_ns) as i64;
    Some(seen.wrapping_sub(time_namespace_offset_ns("boottime")) as u64)
}

/// `CLOCK_BOOTTIME` and `CLOCK_MONOTONIC` read together, in ns: the boot time as
/// [`uptime_ns`] gives it (a time namespace's boottime offset taken back out), but read through
/// `clock_gettime`, so to the nanosecond (and moved by a library that fakes the process's
/// clocks, which `/proc/uptime` is not), and the monotonic clock read on both sides of it: the
/// middle of the two readings, retried where they are more than [`super::BOOT_PAIR_NS`] apart
/// (a preemption between them). `None` outside Linux.
#[cfg(target_os = "linux")]
pub(crate) fn boot_and_monotonic_ns() -> Option<(u64, u64)> {
    let read = |clock| {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid out-pointer.
        (unsafe { libc::clock_gettime(clock, &mut ts) } == 0)
            .then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
    };
    let offset = time_namespace_offset_ns("boottime");
    for _ in 0..3 {
        let (before, boot, after) =
            (read(libc::CLOCK_MONOTONIC)?, read(libc::CLOCK_BOOTTIME)?, read(libc::CLOCK_MONOTONIC)?);
        if after.wrapping_sub(before) <= super::BOOT_PAIR_NS {
            return Some(((boot as i64).wrapping_sub(offset) as u64, before + (after - before) / 2));
        }
    }
    None
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn boot_and_monotonic_ns() -> Option<(u64, u64)> {
    None
}

/// A clock's offset in this process's time namespace (`/proc/self/timens_offsets`: `boottime`
/// or `monotonic`), in ns; 0 outside one, or where the kernel has none.
#[cfg(not(target_os = "macos"))]
fn time_namespace_offset_ns(clock: &str) -> i64 {
    let Ok(text) = std::fs::read_to_string("/proc/self/timens_offsets") else { return 0 };
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            (words.next()? == clock).then_some(())?;
            let s: i64 = words.next()?.parse().ok()?;
            let ns: i64 = words.next()?.parse().ok()?;
            Some(s.saturating_mul(1_000_000_000).saturating_add(ns))
        })
        .next()
        .unwrap_or(0)
}

#[cfg(target_os = "macos")]
pub(crate) fn uptime_ns() -> Option<u64> {
    None
}

/// What names this boot of the host (36 bytes): a record anchored to another boot's
/// `CLOCK_MONOTONIC` is anchored anew. `None` where the system names none.
pub(crate) fn boot_id() -> Option<[u8; 36]> {
    let mut id = [b'?'; 36];
    #[cfg(not(target_os = "macos"))]
    let text = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    // macOS: the kernel's boot session UUID.
    #[cfg(target_os = "macos")]
    let text = {
        let mut buf = [0u8; 64];
        let mut len = buf.len();
        // SAFETY: a NUL-terminated name, a buffer and its length as out-values.
        let r = unsafe {
            libc::sysctlbyname(
                c"kern.bootsessionuuid".as_ptr(),
                buf.as_mut_ptr().cast(),
                &mut len,
                std::ptr::null_mut(),
                0,
            )
        };
        if r != 0 {
            return None;
        }
        String::from_utf8_lossy(&buf[..len]).trim_end_matches('\0').to_string()
    };
    let b = text.trim().as_bytes();
    if b.is_empty() {
        return None;
    }
    let n = b.len().min(36);
    id[..n].copy_from_slice(&b[..n]);
    Some(id)
}

/// Where the host's records are kept unless `SNOWFLAKE_SHM_DIR` says: `/dev/shm`, else the
/// temporary directory. macOS: `/var/tmp`, sticky and shared by every user like `/dev/shm`
/// (`$TMPDIR` is a user's own there, and the system cleans `/tmp` of files unused for days).
pub(crate) fn default_record_dir() -> std::path::PathBuf {
    #[cfg(target_os = "macos")]
    return std::path::PathBuf::from("/var/tmp");
    #[cfg(not(target_os = "macos"))]
    {
        // Looked for once: a generator made per request asks for the directory each time, and
        // finds its record held in the process without a system call (see `Record::hold`).
        // (An atomic, not a lock: a child of fork() never waits for a parent's thread.)
        use std::sync::atomic::{AtomicU8, Ordering};
        static DEV_SHM: AtomicU8 = AtomicU8::new(0); // 0: not looked for yet; 1: found; 2: none
        let dev_shm = std::path::Path::new("/dev/shm");
        let found = match DEV_SHM.load(Ordering::Relaxed) {
            0 => {
                let found = dev_shm.is_dir();
                DEV_SHM.store(if found { 1 } else { 2 }, Ordering::Relaxed);
                found
            }
            known => known == 1,
        };
        if found {
            return dev_shm.to_path_buf();
        }
        std::env::temp_dir()
    }
}

/// Fills `buf` from the system's random source; `false` when there is none to be had.
pub(crate) fn random_bytes(buf: &mut [u8]) -> bool {
    use std::io::Read;
    std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(buf)).is_ok()
}

/// The process id.
pub(crate) fn pid() -> u32 {
    std::process::id()
}

/// Whether process `pid` exists (signal 0; a process of another user counts too).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub(crate) fn process_exists(pid: u32) -> bool {
    // SAFETY: signal 0 checks only.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// What this process's container looks like from inside: `Some(what)` when it runs in one
/// (Docker's `/.dockerenv`, Podman's `/run/.containerenv`, a container cgroup). macOS has
/// none of these files.
pub(crate) fn container() -> Option<&'static str> {
    if std::path::Path::new("/.dockerenv").exists() {
        return Some("a Docker container");
    }
    if std::path::Path::new("/run/.containerenv").exists() {
        return Some("a Podman container");
    }
    let cgroup = std::fs::read_to_string("/proc/1/cgroup").unwrap_or_default();
    ["docker", "kubepods", "containerd", "libpod", "lxc"]
        .iter()
        .any(|k| cgroup.contains(k))
        .then_some("a container")
}

/// An exclusive `flock(2)` on an open file, released when dropped (or when every descriptor
/// of the open file is closed, e.g. when the process dies). Taken for a moment, inside the
/// [`ForkGate`]; see [`HeldLock`] for a lock held as long as a file is used.
pub(crate) struct Flock<'a>(&'a File);

impl<'a> Flock<'a> {
    /// Takes the lock, waiting until `deadline` at most (`None`: one try). `Ok(None)` when
    /// another open file still holds it then: the caller names the holder ([`lock_holder`])
    /// in its error. A stopped holder (SIGSTOP, `docker pause`) never makes a caller wait
    /// longer than it allows.
    pub(crate) fn within(
        file: &'a File,
        deadline: Option<std::time::Instant>,
    ) -> io::Result<Option<Flock<'a>>> {
        Ok(flock_within(file, deadline)?.then_some(Flock(file)))
    }
}

/// An exclusive `flock` on `file`, waited for until `deadline` at most: `Ok(false)` when
/// another open file still holds it then.
fn flock_within(file: &File, deadline: Option<std::time::Instant>) -> io::Result<bool> {
    let mut pause = std::time::Duration::from_micros(20);
    loop {
        // SAFETY: a valid descriptor.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) => {}
            _ => return Err(e),
        }
        let now = std::time::Instant::now();
        match deadline {
            Some(d) if now < d => std::thread::sleep(pause.min(d - now)),
            _ => return Ok(false),
        }
        pause = (pause * 2).min(std::time::Duration::from_millis(5));
    }
}

impl Drop for Flock<'_> {
    fn drop(&mut self) {
        // SAFETY: a valid descriptor.
        unsafe { libc::flock(self.0.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// A lock that the kernel lists in `/proc/locks`.
#[cfg(target_os = "linux")]
#[derive(Clone, Debug, PartialEq, Eq)]
struct LockLine {
    /// `flock(2)` (`FLOCK`), an open-file-description lock (`OFDLCK`), or a POSIX one.
    kind: String,
    /// The process that took it; -1 (or 0, in another pid namespace) where the kernel does
    /// not say (open-file-description locks).
    pid: i64,
    id: FileId,
    start: u64,
    /// Inclusive; `None` for a lock to the end of the file.
    end: Option<u64>,
}

/// Every lock of the host, as `/proc/locks` lists them (`Err` where there is no such file).
///
/// The kernel writes that file a page at a time and finds its place again by counting lines,
/// so a lock that goes away between two pages makes the next page skip one that is held
/// throughout: a caller that can ask a file itself does ([`locks::marked`]).
#[cfg(target_os = "linux")]
fn system_locks() -> io::Result<Vec<LockLine>> {
    let text = std::fs::read_to_string("/proc/locks")?;
    let mut out = Vec::new();
    for line in text.lines() {
        // "1: OFDLCK ADVISORY  READ -1 00:1b:49 4096 4096"; a blocked waiter's line has "->".
        let mut f = line.split_whitespace().skip(1);
        let (Some(kind), Some(_), Some(_), Some(pid), Some(dev), Some(start), Some(end)) =
            (f.next(), f.next(), f.next(), f.next(), f.next(), f.next(), f.next())
        else {
            continue;
        };
        if kind == "->" {
            continue;
        }
        let mut d = dev.split(':');
        let (Some(major), Some(minor), Some(ino)) = (d.next(), d.next(), d.next()) else { continue };
        let (Ok(major), Ok(minor), Ok(ino), Ok(pid), Ok(start)) = (
            u32::from_str_radix(major, 16),
            u32::from_str_radix(minor, 16),
            ino.parse::<u64>(),
            pid.parse::<i64>(),
            start.parse::<u64>(),
        ) else {
            continue;
        };
        out.push(LockLine {
            kind: kind.to_string(),
            pid,
            id: FileId(libc::makedev(major, minor) as u64, ino),
            start,
            end: end.parse().ok(),
        });
    }
    Ok(out)
}

/// What identifies `file` on the host.
#[cfg(target_os = "linux")]
fn file_id(file: &File) -> io::Result<FileId> {
    use std::os::unix::fs::MetadataExt;
    let meta = file.metadata()?;
    Ok(FileId(meta.dev(), meta.ino()))
}

/// The process that holds a `flock(2)` on `file`, where the kernel says (Linux's
/// `/proc/locks`; macOS lists nothing).
pub(crate) fn lock_holder(file: &File) -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        let id = file_id(file).ok()?;
        let me = i64::from(pid());
        system_locks()
            .ok()?
            .into_iter()
            .find(|l| l.kind == "FLOCK" && l.id == id && l.pid > 0 && l.pid != me)
            .map(|l| l.pid as u32)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        None
    }
}

/// A host record's set-up lock (see `coord::arbiter`), taken for a moment and released when
/// dropped: a `flock` on the record, which is independent of its users' locks. macOS: a
/// `flock` on `<record>.lock` beside it, the record's own `flock` being its users' lock there.
pub(crate) struct Setup<'a> {
    #[cfg(target_os = "linux")]
    _lock: Flock<'a>,
    #[cfg(not(target_os = "linux"))]
    _lock: File,
    _file: PhantomData<&'a File>,
}

#[cfg(not(target_os = "linux"))]
impl Drop for Setup<'_> {
    fn drop(&mut self) {
        // SAFETY: a valid descriptor (closing it would release the lock too).
        unsafe { libc::flock(self._lock.as_raw_fd(), libc::LOCK_UN) };
    }
}

/// Takes the set-up lock of the record `file`, at `name` in `dir`, waiting until `deadline`
/// at most (`None`: one try): `Ok(None)` when another process still holds it then (its holder:
/// [`setup_holder`]).
pub(crate) fn setup_lock<'a>(
    dir: &Dir,
    name: &std::ffi::OsStr,
    file: &'a File,
    deadline: Option<std::time::Instant>,
) -> io::Result<Option<Setup<'a>>> {
    #[cfg(target_os = "linux")]
    {
        let _ = (dir, name);
        Ok(Flock::within(file, deadline)?.map(|lock| Setup { _lock: lock, _file: PhantomData }))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = file;
        let mut lock_name = name.to_os_string();
        lock_name.push(".lock");
        let (lock, _) = open_in(dir, &lock_name, Access::Own(Some(0o600))).map_err(|r| match r {
            Refusal::Io(e) => e,
            other => io::Error::other(format!("{}: {other}", dir.path().join(&lock_name).display())),
        })?;
        if !flock_within(&lock, deadline)? {
            return Ok(None);
        }
        Ok(Some(Setup { _lock: lock, _file: PhantomData }))
    }
}

/// The process that holds the set-up lock of the record `file`, where the kernel says.
pub(crate) fn setup_holder(file: &File) -> Option<u32> {
    lock_holder(file)
}

/// The locks that count a host record's users, name its processes and outlive its removal
/// (see `coord::arbiter`, whose offsets they take). Linux: open-file-description locks
/// (`F_OFD_SETLK`) on bytes past the record's data, which the kernel lists in `/proc/locks`;
/// a lock lives as long as some descriptor of its open file description is open, so a child
/// of `fork()` that inherits it counts with its parent, and a process that dies, however it
/// dies, lets go. macOS: the users' lock is a `flock(2)`, with the same lifetime; there are
/// no marks or beacons (see the module docs).
pub(crate) mod locks {
    use super::{Dir, FileId};
    use std::fs::File;
    use std::io;
    #[cfg(not(target_os = "linux"))]
    use std::os::unix::io::AsRawFd;

    /// The beacons that processes hold on files that may no longer have a name.
    pub(crate) enum Beacons {
        /// The kernel lists them: each file and the beacon's length (the caller leaves out the
        /// files that are still at their names).
        #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
        Listed(Vec<(FileId, u64)>),
        /// The kernel lists no locks: a record removed while in use leaves no trace.
        Unlisted,
        /// A record in use cannot be removed or replaced here (Windows): nothing to look for.
        #[allow(dead_code)]
        Unneeded,
    }

    #[cfg(target_os = "linux")]
    fn fcntl(file: &File, command: i32, kind: i32, at: u64, len: u64) -> io::Result<libc::flock> {
        use std::os::unix::io::AsRawFd;
        // SAFETY: a zeroed `flock` is a valid value; the fields that matter are set below.
        let mut l: libc::flock = unsafe { std::mem::zeroed() };
        l.l_type = kind as libc::c_short;
        l.l_whence = libc::SEEK_SET as libc::c_short;
        l.l_start = at as libc::off_t;
        l.l_len = len as libc::off_t;
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

    /// Takes a read (`write == false`) or write lock on `len` bytes at `at` without waiting:
    /// `Ok(false)` when another open file holds a conflicting one.
    #[cfg(target_os = "linux")]
    fn ofd_lock(file: &File, at: u64, len: u64, write: bool) -> io::Result<bool> {
        let kind = if write { libc::F_WRLCK } else { libc::F_RDLCK };
        match fcntl(file, libc::F_OFD_SETLK, kind, at, len) {
            Ok(_) => Ok(true),
            Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EACCES)) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Whether another open file (of this process or another) holds a lock on `len` bytes at
    /// `at` that a write lock would conflict with. A file open for reading only can ask.
    #[cfg(target_os = "linux")]
    fn ofd_held(file: &File, at: u64, len: u64) -> io::Result<bool> {
        Ok(fcntl(file, libc::F_OFD_GETLK, libc::F_WRLCK, at, len)?.l_type != libc::F_UNLCK as libc::c_short)
    }

    /// macOS: a `flock` without waiting; `Ok(false)` when another open file holds a
    /// conflicting one.
    #[cfg(not(target_os = "linux"))]
    fn try_flock(file: &File, how: libc::c_int) -> io::Result<bool> {
        loop {
            // SAFETY: a valid descriptor.
            if unsafe { libc::flock(file.as_raw_fd(), how | libc::LOCK_NB) } == 0 {
                return Ok(true);
            }
            let e = io::Error::last_os_error();
            match e.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EWOULDBLOCK) => return Ok(false),
                _ => return Err(e),
            }
        }
    }

    /// Takes the users' lock of `file` (at byte `at`), shared or exclusive, without waiting:
    /// `Ok(false)` when another open file holds a conflicting one. It is held until every
    /// descriptor of this open file is closed.
    pub(crate) fn take(file: &File, at: u64, exclusive: bool) -> io::Result<bool> {
        #[cfg(target_os = "linux")]
        return ofd_lock(file, at, 1, exclusive);
        // macOS: a `flock` of the whole file. Another process's look ([`taken`]) holds it
        // exclusively for an instant, so a refusal is tried again for a few milliseconds.
        #[cfg(not(target_os = "linux"))]
        {
            let _ = at;
            let how = if exclusive { libc::LOCK_EX } else { libc::LOCK_SH };
            for _ in 0..40 {
                if try_flock(file, how)? {
                    return Ok(true);
                }
                std::thread::sleep(std::time::Duration::from_micros(250));
            }
            Ok(false)
        }
    }

    /// Whether another open file holds the users' lock of `file` (at `at`), asked through an
    /// open file that holds none of it (a record not yet joined, another user's).
    pub(crate) fn taken(file: &File, at: u64) -> io::Result<bool> {
        #[cfg(target_os = "linux")]
        return ofd_held(file, at, 1);
        // macOS: an exclusive `flock` tried and let go at once.
        #[cfg(not(target_os = "linux"))]
        {
            let _ = at;
            if try_flock(file, libc::LOCK_EX)? {
                // SAFETY: a valid descriptor, whose lock was just taken.
                unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) };
                return Ok(false);
            }
            Ok(true)
        }
    }

    /// Whether an open file other than `file`, which holds the users' lock (`exclusive`ly or
    /// not), holds it too. macOS: beside a shared lock this cannot be known, and the answer
    /// is "yes" (what only a last user does is then left undone).
    pub(crate) fn taken_by_others(file: &File, at: u64, exclusive: bool, marks_at: u64) -> io::Result<bool> {
        let _ = marks_at;
        if exclusive {
            return Ok(false);
        }
        #[cfg(target_os = "linux")]
        return ofd_held(file, at, 1);
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (file, at);
            Ok(true)
        }
    }

    /// Marks `file` as used by this process: a read lock at `marks_at + pid`, which the kernel
    /// lists with the file (Linux). macOS: nothing.
    pub(crate) fn mark_process(file: &File, marks_at: u64) {
        #[cfg(target_os = "linux")]
        let _ = ofd_lock(file, marks_at + u64::from(super::pid()), 1, false);
        #[cfg(not(target_os = "linux"))]
        let _ = (file, marks_at);
    }

    /// How many processes [`marked`] names at most.
    #[cfg(target_os = "linux")]
    const NAMED: usize = 64;

    /// The other live processes that marked `file` ([`mark_process`]), where the kernel says:
    /// asked of the file itself (`F_OFD_GETLK` names a conflicting lock and its range; each
    /// range is searched on both sides of the mark it finds), not read from `/proc/locks`,
    /// which is read a page at a time and can skip a line when another lock of the host goes
    /// away between pages (a refusal under `flaky.sh`'s load named nobody).
    pub(crate) fn marked(file: &File, marks_at: u64) -> Vec<u32> {
        #[cfg(target_os = "linux")]
        {
            fn look(file: &File, lo: u64, hi: u64, out: &mut Vec<u64>) {
                if lo >= hi || out.len() >= NAMED {
                    return;
                }
                let Ok(l) = fcntl(file, libc::F_OFD_GETLK, libc::F_WRLCK, lo, hi - lo) else { return };
                if l.l_type == libc::F_UNLCK as libc::c_short {
                    return;
                }
                // The lock found, clipped to the range (a length of 0 runs to the end).
                let start = (l.l_start as u64).max(lo);
                let end =
                    if l.l_len == 0 { hi } else { (l.l_start as u64).saturating_add(l.l_len as u64).min(hi) };
                if end <= start {
                    return;
                }
                if end - start == 1 {
                    out.push(start);
                }
                look(file, lo, start, out);
                look(file, end, hi, out);
            }
            let mut found = Vec::new();
            look(file, marks_at, marks_at + (1 << 32), &mut found);
            let me = super::pid();
            let mut pids: Vec<u32> = found
                .into_iter()
                .map(|at| (at - marks_at) as u32)
                .filter(|&p| p != me && super::process_exists(p))
                .collect();
            pids.sort_unstable();
            pids.dedup();
            pids
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (file, marks_at);
            Vec::new()
        }
    }

    /// A beacon: a read lock of `len` bytes at `at`, which the kernel keeps while this
    /// process lives, even once the file is removed, and lists ([`beacons`]). macOS: nothing.
    pub(crate) fn beacon(file: &File, at: u64, len: u64) {
        #[cfg(target_os = "linux")]
        let _ = ofd_lock(file, at, len, false);
        #[cfg(not(target_os = "linux"))]
        let _ = (file, at, len);
    }

    /// The beacons at `at` on files of `dir`'s file system.
    pub(crate) fn beacons(dir: &Dir, at: u64) -> Beacons {
        #[cfg(target_os = "linux")]
        {
            let Ok(locks) = super::system_locks() else { return Beacons::Unlisted };
            Beacons::Listed(
                locks
                    .iter()
                    .filter(|l| l.id.0 == dir.dev() && l.start == at)
                    .map(|l| (l.id, l.end.map_or(0, |end| end - l.start)))
                    .collect(),
            )
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = (dir, at);
            Beacons::Unlisted
        }
    }

    #[cfg(all(test, target_os = "linux"))]
    mod tests {
        use super::*;

        /// A passwd file's name for a uid: the first line with it; a comment, a short line or
        /// a uid that is no number is passed over.
        #[test]
        fn a_passwd_file_names_its_users() {
            let text = b"# users\nroot:x:0:0:root:/root:/bin/bash\nshort:x\nbad:x:zz:0::/:\n:x:7:0::/:\napp:x:1000:1000::/home/app:/bin/sh\ntwin:x:1000:1000::/:\n";
            assert_eq!(super::super::passwd_name(text, 0), Some("root"));
            assert_eq!(super::super::passwd_name(text, 1000), Some("app"));
            assert_eq!(super::super::passwd_name(text, 7), None);
            assert_eq!(super::super::passwd_name(text, 42), None);
            assert_eq!(super::super::user_name(0), "user root (uid 0)");
        }

        /// Marks taken through other open files are named, each once; this process's own, a
        /// dead process's and a lock wider than a mark are not; a wide lock hides no mark
        /// beyond it.
        #[test]
        fn marked_names_the_live_processes_that_marked_the_file() {
            let path = std::env::temp_dir().join(format!("snowflake-marked-{}", super::super::pid()));
            let open = || {
                std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .open(&path)
                    .unwrap()
            };
            let asker = open();
            let at = 1u64 << 40;
            // SAFETY: getppid has no preconditions.
            let parent = unsafe { libc::getppid() } as u32;
            let holders: Vec<File> = (0..5).map(|_| open()).collect();
            assert!(ofd_lock(&holders[0], at + 1, 1, false).unwrap()); // init
            assert!(ofd_lock(&holders[1], at + u64::from(parent), 1, false).unwrap());
            assert!(ofd_lock(&holders[2], at + 1, 1, false).unwrap()); // init again, another file
            assert!(ofd_lock(&holders[3], at + (1 << 31) + 12345, 1, false).unwrap()); // no such process
            assert!(ofd_lock(&holders[4], at + 2, 64, false).unwrap()); // a range, not a mark
            mark_process(&holders[4], at);
            mark_process(&asker, at); // the asker's own
            let mut want = vec![1, parent];
            want.sort_unstable();
            want.dedup();
            assert_eq!(marked(&asker, at), want);
            let _ = std::fs::remove_file(&path);
        }
    }
}

/// A shared, writable mapping of the first `len` bytes of a file. Words in it are only
/// accessed as atomics, or as bytes written under the file's lock.
///
/// A mapping is guarded against its file being truncated (by `truncate(1)`, a careless script,
/// anything of the user's): touching a page past the end of a file raises `SIGBUS`, which
/// would kill the process. The library's `SIGBUS` handler (installed with the first mapping,
/// chained to whatever handler was there) replaces a truncated mapping with memory whose every
/// byte is `0xff` and records it ([`Map::truncated`]): the state word then reads as far ahead
/// of any clock, so a generator issues nothing from it and its next check finds the file
/// truncated. A `SIGBUS` anywhere else goes to the previous handler, or kills as before.
pub(crate) struct Map {
    /// The mapped bytes (their accessors are `View`'s, through `Deref`).
    pub(super) view: View,
    /// The guard's slot (see [`GUARDED`]), if one was free.
    slot: Option<usize>,
}

// SAFETY: the mapping is only accessed through atomics, or through bytes that are written
// under the file's lock and read after it (see `coord::arbiter`).
unsafe impl Send for Map {}
unsafe impl Sync for Map {}

/// How many mappings the `SIGBUS` guard watches at once (a process maps one page per
/// identity it issues with; past this many, more are mapped unguarded).
const GUARDED: usize = 512;

#[allow(clippy::declare_interior_mutable_const)]
const ZERO: AtomicUsize = AtomicUsize::new(0);
#[allow(clippy::declare_interior_mutable_const)]
const NO: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// The guarded mappings' starts (0: a free slot) and lengths, read by the signal handler
/// without a lock.
static GUARD_START: [AtomicUsize; GUARDED] = [ZERO; GUARDED];
static GUARD_LEN: [AtomicUsize; GUARDED] = [ZERO; GUARDED];
/// Whether the handler replaced the slot's mapping.
static GUARD_HIT: [std::sync::atomic::AtomicBool; GUARDED] = [NO; GUARDED];
/// The handler that was installed before ours (written once, before ours is installed).
static PREVIOUS: std::sync::OnceLock<libc::sigaction> = std::sync::OnceLock::new();
static SIGBUS_GUARD: Once = Once::new();

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo for a handler installed with SA_SIGINFO.
    let addr = if info.is_null() { 0 } else { (unsafe { (*info).si_addr() }) as usize };
    for i in 0..GUARDED {
        let start = GUARD_START[i].load(Ordering::Acquire);
        let len = GUARD_LEN[i].load(Ordering::Acquire);
        if start != 0 && addr >= start && addr < start + len {
            // SAFETY: replaces our own mapping, in place, with anonymous memory of its length
            // (mmap and a byte fill are async-signal-safe).
            let p = unsafe {
                libc::mmap(
                    start as *mut libc::c_void,
                    len,
                    libc::PROT_READ | libc::PROT_WRITE,
                    libc::MAP_FIXED | libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                    -1,
                    0,
                )
            };
            if p != libc::MAP_FAILED {
                // SAFETY: the memory just mapped, of `len` bytes.
                unsafe { std::ptr::write_bytes(p.cast::<u8>(), 0xff, len) };
                GUARD_HIT[i].store(true, Ordering::Release);
                return;
            }
        }
    }
    // Not ours: whatever was there before us.
    let Some(prev) = PREVIOUS.get() else { return };
    let handler = prev.sa_sigaction;
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        // The default action: restore it, and the faulting access repeats and ends the
        // process as it would have without us.
        // SAFETY: a zeroed sigaction is SIG_DFL with an empty mask.
        let mut dfl: libc::sigaction = unsafe { std::mem::zeroed() };
        dfl.sa_sigaction = libc::SIG_DFL;
        // SAFETY: valid sigaction values.
        unsafe { libc::sigaction(sig, &dfl, std::ptr::null_mut()) };
        return;
    }
    if prev.sa_flags & libc::SA_SIGINFO != 0 {
        // SAFETY: the previous handler was installed with SA_SIGINFO: this is its signature.
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(handler) };
        f(sig, info, ctx);
    } else {
        // SAFETY: a plain handler's signature.
        let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
        f(sig);
    }
}

fn install_sigbus_guard() {
    SIGBUS_GUARD.call_once(|| {
        // SAFETY: zeroed sigactions are valid values; the ones passed are complete.
        unsafe {
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut old) != 0 {
                return;
            }
            let _ = PREVIOUS.set(old);
            let mut new: libc::sigaction = std::mem::zeroed();
            new.sa_sigaction = on_sigbus as *const () as usize;
            new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK | libc::SA_RESTART;
            libc::sigemptyset(&mut new.sa_mask);
            libc::sigaction(libc::SIGBUS, &new, std::ptr::null_mut());
        }
    });
}

impl Map {
    /// Maps `len` bytes of `file` (which must be at least that long), shared and writable,
    /// guarded against truncation.
    pub(crate) fn shared(file: &File, len: usize) -> io::Result<Map> {
        install_sigbus_guard();
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
        let mut slot = None;
        for i in 0..GUARDED {
            if GUARD_START[i].load(Ordering::Acquire) == 0 {
                GUARD_LEN[i].store(len, Ordering::Release);
                GUARD_HIT[i].store(false, Ordering::Release);
                if GUARD_START[i]
                    .compare_exchange(0, ptr as usize, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
                {
                    slot = Some(i);
                    break;
                }
            }
        }
        Ok(Map { view: View { ptr: ptr.cast(), len }, slot })
    }

    /// Whether the file was truncated under the mapping, which the `SIGBUS` guard then
    /// replaced (see the type's docs).
    pub(crate) fn truncated(&self) -> bool {
        self.slot.is_some_and(|i| GUARD_HIT[i].load(Ordering::Acquire))
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        if let Some(i) = self.slot {
            GUARD_START[i].store(0, Ordering::Release);
        }
        // SAFETY: the mapping made in `shared`, unmapped once.
        unsafe { libc::munmap(self.view.ptr.cast(), self.view.len) };
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

/// Registers `f` to run when the process exits normally (`exit`, a return from `main`), or
/// when the library is unloaded before (`atexit` from a shared library registers with its
/// own handle: `dlclose` runs it).
pub(crate) fn at_exit(f: extern "C" fn()) {
    // SAFETY: `f` is an `extern "C"` function that lives as long as the library.
    unsafe { libc::atexit(f) };
}

/// Installs this module's fork handlers: the fork generation and the gate. Done when the
/// library is loaded (see `INSTALL_AT_LOAD`), before any thread of ours exists, and again
/// (a no-op) on first use where the loader did not run it.
fn install_fork_hooks() {
    FORK_HOOKS.call_once(|| at_fork(gate_prepare, gate_parent, gate_child));
}

/// Runs [`install_fork_hooks`] when the library is loaded (ELF `.init_array`; macOS: Mach-O's
/// `__mod_init_func`), so that no fork can find the `Once` above half-run.
#[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd", target_os = "macos"))]
#[used]
#[cfg_attr(not(target_os = "macos"), link_section = ".init_array")]
#[cfg_attr(target_os = "macos", link_section = "__DATA,__mod_init_func,mod_init_funcs")]
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
    zero_words_in_child();
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

/// Makes `file`'s locks this process's alone: a child of `fork()` gets its descriptor pointed
/// at a pipe instead (see [`detach_held_locks`]), so the child never keeps them after the
/// parent lets go or dies. Call inside the [`ForkGate`]; undo with [`keep_in_child`] before
/// the file is closed.
pub(crate) fn drop_in_child(file: &File) {
    let _gate = ForkGate::enter();
    DETACHED_IN_CHILD.lock().unwrap_or_else(|e| e.into_inner()).push(file.as_raw_fd());
}

/// Undoes [`drop_in_child`] (the file is about to be closed).
pub(crate) fn keep_in_child(file: &File) {
    let _gate = ForkGate::enter();
    let fd = file.as_raw_fd();
    DETACHED_IN_CHILD.lock().unwrap_or_else(|e| e.into_inner()).retain(|&held| held != fd);
}

/// How many words [`zero_in_child`] keeps at once.
const ZEROED_MAX: usize = 64;

/// The words that a child of `fork()` finds at 0 (see [`zero_in_child`]), or null: slots
/// written only inside the gate, so a fork never finds one half-written, and no lock to be
/// found held in the child.
static ZEROED_IN_CHILD: [AtomicPtr<AtomicU64>; ZEROED_MAX] =
    [const { AtomicPtr::new(std::ptr::null_mut()) }; ZEROED_MAX];

/// Makes a child of `fork()` find `word` at 0: the bound of a fast path that must not issue in
/// a child (a record this process uses alone), closed before `fork()` returns there, so the
/// path needs no fork check of its own. `false` when [`ZEROED_MAX`] words are kept already
/// (the caller then keeps its fork check). Undo with [`unzero_in_child`] before the word's
/// memory goes, in the child too.
pub(crate) fn zero_in_child(word: &AtomicU64) -> bool {
    let _gate = ForkGate::enter();
    let at = word as *const AtomicU64 as *mut AtomicU64;
    let null = std::ptr::null_mut();
    ZEROED_IN_CHILD.iter().any(|s| s.compare_exchange(null, at, Ordering::SeqCst, Ordering::SeqCst).is_ok())
}

/// Undoes [`zero_in_child`] (the word's memory is about to go).
pub(crate) fn unzero_in_child(word: &AtomicU64) {
    let _gate = ForkGate::enter();
    let at = word as *const AtomicU64 as *mut AtomicU64;
    for s in &ZEROED_IN_CHILD {
        let _ = s.compare_exchange(at, std::ptr::null_mut(), Ordering::SeqCst, Ordering::SeqCst);
    }
}

/// In a child of `fork()`: stores 0 in the words of [`zero_in_child`].
fn zero_words_in_child() {
    for s in &ZEROED_IN_CHILD {
        let w = s.load(Ordering::SeqCst);
        if !w.is_null() {
            // SAFETY: registered and not yet unregistered (both inside the gate), so the
            // word's memory is alive; the child's only thread is this one.
            unsafe { (*w).store(0, Ordering::SeqCst) };
        }
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
