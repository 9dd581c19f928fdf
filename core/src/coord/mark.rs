//! The durable high-water mark: a file that reserves time ahead, so that a restart after the
//! clock stepped back never repeats an ID.
//!
//! Before a generator issues an ID at a tick at or beyond its reservation, it writes a new
//! reservation (the tick plus a window, by default 1 s) to the file, makes it durable, and
//! only then issues. On start it never issues below what the file says was reserved. A clean
//! close writes the exact high-water mark, so a restart need not wait out the window.
//!
//! The record is 48 bytes: magic `SNOWHWM1`, a version, the layout fingerprint, the node bits,
//! the reserved end (an exclusive tick), and an FNV-1a checksum of the rest. State files are
//! replaced whole (write a temporary file, `fsync`, `rename`, `fsync` the directory), so a
//! crash leaves the old record or the new one; a record that is torn or corrupt anyway, or
//! that belongs to another layout or node, is an error, never a silent reset. Lease files
//! (see `lease`) hold the same record, written in place (their holder holds a lock on them).
//!
//! # One state per state file
//!
//! A reservation guards one state: two processes that each kept their own state under one
//! file would both issue below its record. So a process holds a `flock` on `<file>.users` for
//! as long as it uses the file: exclusive when it keeps the state itself (in this process's
//! registry), shared when the state is a shared mapping that every user of the file joins
//! (they reserve through the mapping). A second process that would keep a state of its own
//! is refused (with `run_lock=true` it waits for its turn before it gets here). Writes take
//! `<file>.lock` for the moment of the write.
//!
//! A state file is known by what it is, not by how it was spelled: its canonical path (the
//! file's, else its directory's plus its name), and in this process the device and inode of
//! its `.users` file. Generators of this process that open it under any spelling share one
//! reservation.

use super::io_err;
use crate::error::Error;
use crate::generator::{HighWater, Word};
use crate::hash::Fnv1a;
use crate::sys::{Flock, ForkGate, HeldLock, InChild};
use core::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

const MAGIC: &[u8; 8] = b"SNOWHWM1";
const LEN: usize = 48;

/// What a record says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Record {
    pub fingerprint: u64,
    pub node_bits: u64,
    /// Ticks below this may have been issued; nothing at or above it.
    pub reserved_end: u64,
}

fn checksum(bytes: &[u8]) -> u64 {
    let mut h = Fnv1a::new();
    for b in bytes {
        let _ = h.write_char(char::from(*b));
    }
    h.0
}

impl Record {
    fn encode(&self) -> [u8; LEN] {
        let mut b = [0u8; LEN];
        b[..8].copy_from_slice(MAGIC);
        b[8..12].copy_from_slice(&1u32.to_le_bytes());
        b[16..24].copy_from_slice(&self.fingerprint.to_le_bytes());
        b[24..32].copy_from_slice(&self.node_bits.to_le_bytes());
        b[32..40].copy_from_slice(&self.reserved_end.to_le_bytes());
        let sum = checksum(&b[..40]);
        b[40..48].copy_from_slice(&sum.to_le_bytes());
        b
    }

    /// `None` for an empty file (never written).
    fn decode(bytes: &[u8], path: &Path) -> Result<Option<Record>, Error> {
        if bytes.is_empty() {
            return Ok(None);
        }
        let corrupt = |why: &str| {
            Error::state_file(
                path,
                format_args!(
                    "{why}: it is torn or corrupt. Nothing was reset. If you are sure no ID above the time it guarded was issued, delete it"
                ),
            )
        };
        if bytes.len() != LEN {
            return Err(corrupt(&format!("{} bytes, not {LEN}", bytes.len())));
        }
        if &bytes[..8] != MAGIC {
            return Err(corrupt("not a libsnowflake state file"));
        }
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
        if word(40) != checksum(&bytes[..40]) {
            return Err(corrupt("its checksum does not match"));
        }
        Ok(Some(Record { fingerprint: word(16), node_bits: word(24), reserved_end: word(32) }))
    }
}

/// How a record is stored.
enum Store {
    /// A state file, replaced whole and synced: `write_lock` (`<file>.lock`) serializes the
    /// writes of the processes using it; `_users` is this process's hold on `<file>.users`.
    StateFile { write_lock: PathBuf, _users: HeldLock },
    /// A lease file held (locked) by this process, written in place.
    Held(HeldLock),
}

/// How this process uses a state file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sharing {
    /// It keeps the state (in its registry): no other process may use the file meanwhile.
    Alone,
    /// The state is a shared mapping, joined by every process that uses the file.
    Shared,
}

/// A state file found by what it is: its canonical path, and its `.users` file (open, not
/// locked) with that file's device and inode.
pub(crate) struct Location {
    path: PathBuf,
    users: File,
    id: FileId,
}

impl Location {
    /// Where the state file `path` is. Its directory must exist.
    pub(crate) fn of(path: &Path) -> Result<Location, Error> {
        let path = canonical(path)?;
        let users = with_suffix(&path, ".users");
        let file = crate::sys::open_private(&users, 0)
            .map_err(|e| io_err("opening the state file's lock", &users, e))?;
        let meta = file.metadata().map_err(|e| io_err("reading", &users, e))?;
        Ok(Location { id: (meta.dev(), meta.ino()), users: file, path })
    }
}

/// `path` with `suffix` appended to its file name.
fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// The canonical path of a state file that may not exist yet: the file's own when it exists
/// (symbolic links resolved), else its canonical directory's plus its name.
fn canonical(path: &Path) -> Result<PathBuf, Error> {
    match std::fs::canonicalize(path) {
        Ok(p) => return Ok(p),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(io_err("locating the state file", path, e)),
    }
    let name = path.file_name().ok_or_else(|| Error::state_file(path, "it names no file"))?;
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let dir = std::fs::canonicalize(dir)
        .map_err(|e| io_err("locating the directory of the state file", path, e))?;
    Ok(dir.join(name))
}

/// A reservation kept in a file.
pub(crate) struct Durable {
    path: PathBuf,
    store: Store,
    fingerprint: u64,
    node_bits: u64,
    window_ticks: u64,
    max_tick: u64,
    /// Where the reservation lives when the state is not in a shared mapping.
    pub(crate) local: AtomicU64,
    /// What the file said at open: the state must start at or above it.
    pub(crate) floor: u64,
    extend_lock: Mutex<()>,
    /// The process-local state this reservation guards, to write the exact high-water mark
    /// at close: (the state word, sequence capacity, rollover bits).
    closing: Mutex<Option<(Arc<AtomicU64>, Word)>>,
    /// The fork generation that owns the file: a child of fork() must not write it.
    fork_generation: u64,
}

fn read_all(mut file: impl Read) -> io::Result<Vec<u8>> {
    let mut v = Vec::new();
    file.read_to_end(&mut v)?;
    Ok(v)
}

impl Durable {
    /// A reservation in `store`, starting at `floor` (what the file said).
    fn new(
        path: &Path,
        store: Store,
        identity: (u64, u64),
        window_ticks: u64,
        max_tick: u64,
        floor: u64,
    ) -> Durable {
        Durable {
            path: path.to_path_buf(),
            store,
            fingerprint: identity.0,
            node_bits: identity.1,
            window_ticks: window_ticks.max(1),
            max_tick,
            local: AtomicU64::new(floor),
            floor,
            extend_lock: Mutex::new(()),
            closing: Mutex::new(None),
            fork_generation: crate::sys::fork_generation(),
        }
    }

    /// Opens (or prepares to create) the state file at `location`, used as `sharing` says;
    /// refused while another process uses it otherwise.
    pub(crate) fn state_file(
        location: Location,
        fingerprint: u64,
        node_bits: u64,
        window_ticks: u64,
        max_tick: u64,
        sharing: Sharing,
    ) -> Result<Durable, Error> {
        let _gate = ForkGate::enter();
        let path = location.path;
        let users = match sharing {
            Sharing::Alone => HeldLock::try_take(location.users, true, InChild::Dropped),
            Sharing::Shared => HeldLock::try_take(location.users, false, InChild::Kept),
        }
        .map_err(|e| io_err("locking the state file", &path, e))?;
        let Some(users) = users else {
            return Err(Error::state_file(
                &path,
                match sharing {
                    Sharing::Alone => "it is in use by another process (or by a shared generator of this process): a state file guards one state, so processes that use it at the same time must share one (shared=NAME, the same in each), or take turns (run_lock=true)",
                    Sharing::Shared => "it is in use by a process that keeps its state alone (without shared=): a state file guards one state, so either every process that uses it at the same time shares one (shared=NAME), or one process uses it at a time",
                },
            ));
        };
        // Read under the lock: a process that used the file alone wrote its last record before
        // it let go.
        let bytes = match File::open(&path) {
            Ok(mut f) => read_all(&mut f).map_err(|e| io_err("reading the state file", &path, e))?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io_err("opening the state file", &path, e)),
        };
        let floor = match Record::decode(&bytes, &path)? {
            None => 0,
            Some(r) if r.fingerprint != fingerprint => {
                return Err(Error::state_file(&path, "it belongs to another layout"))
            }
            Some(r) if r.node_bits != node_bits => {
                return Err(Error::state_file(&path, "it belongs to other node values"))
            }
            Some(r) => r.reserved_end,
        };
        let store = Store::StateFile { write_lock: with_suffix(&path, ".lock"), _users: users };
        Ok(Durable::new(&path, store, (fingerprint, node_bits), window_ticks, max_tick, floor))
    }

    /// A reservation kept in a lease file that this process holds locked.
    pub(crate) fn held(
        lock: HeldLock,
        path: &Path,
        fingerprint: u64,
        node_bits: u64,
        window_ticks: u64,
        max_tick: u64,
    ) -> Result<Durable, Error> {
        let _gate = ForkGate::enter();
        let bytes = read_all(lock.file()).map_err(|e| io_err("reading the lease file", path, e))?;
        // A lease file names one identity (see `lease_local`); a record of another layout
        // cannot be in it, and is no reservation of this one.
        let floor = match Record::decode(&bytes, path)? {
            Some(r) if r.fingerprint == fingerprint && r.node_bits == node_bits => r.reserved_end,
            _ => 0,
        };
        Ok(Durable::new(path, Store::Held(lock), (fingerprint, node_bits), window_ticks, max_tick, floor))
    }

    fn write(&self, reserved_end: u64) -> io::Result<()> {
        let rec = Record { fingerprint: self.fingerprint, node_bits: self.node_bits, reserved_end }.encode();
        match &self.store {
            Store::Held(lock) => lock.file().write_all_at(&rec, 0),
            Store::StateFile { .. } => {
                static SERIAL: AtomicU64 = AtomicU64::new(0);
                let tmp = with_suffix(
                    &self.path,
                    &format!(".tmp{}.{}", std::process::id(), SERIAL.fetch_add(1, Ordering::Relaxed)),
                );
                let mut f =
                    OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&tmp)?;
                f.write_all(&rec)?;
                f.sync_all()?;
                std::fs::rename(&tmp, &self.path)?;
                if let Some(dir) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    File::open(dir)?.sync_all()?;
                }
                Ok(())
            }
        }
    }

    /// Makes the reservation reach past `tick` (stored in `word`), writing the file first.
    pub(crate) fn extend(&self, word: &AtomicU64, tick: u64) -> Result<(), Error> {
        let _gate = ForkGate::enter();
        let _guard = self.extend_lock.lock().unwrap_or_else(|e| e.into_inner());
        if word.load(Ordering::Acquire) > tick {
            return Ok(()); // another thread extended it
        }
        let errno = |e: io::Error| io_err("reserving time in the state file", &self.path, e);
        let new_end = tick.saturating_add(self.window_ticks).min(self.max_tick.saturating_add(1));
        self.store_end(new_end, |on_disk| new_end.max(on_disk)).map_err(errno)?;
        word.fetch_max(new_end, Ordering::AcqRel);
        Ok(())
    }

    /// Writes `choose(the end on disk)` to the file; for a state file under the `.lock` flock
    /// that processes sharing it take in turn.
    fn store_end(&self, new_end: u64, choose: impl FnOnce(u64) -> u64) -> io::Result<()> {
        match &self.store {
            Store::Held(_) => self.write(choose(0).max(new_end)),
            Store::StateFile { write_lock, .. } => {
                let lock_file = crate::sys::open_private(write_lock, 0)?;
                let _flock = Flock::exclusive(&lock_file)?;
                let on_disk = match File::open(&self.path) {
                    Ok(mut f) => Record::decode(&read_all(&mut f)?, &self.path)
                        .ok()
                        .flatten()
                        .map_or(0, |r| r.reserved_end),
                    Err(_) => 0,
                };
                self.write(choose(on_disk))
            }
        }
    }

    /// Remembers the process-local state word, so that dropping the reservation writes the
    /// exact high-water mark (a restart then need not wait out the window).
    pub(crate) fn attach(&self, state: Option<Arc<AtomicU64>>, word: Word) {
        let _gate = ForkGate::enter();
        *self.closing.lock().unwrap_or_else(|e| e.into_inner()) = state.map(|s| (s, word));
    }

    /// The canonical path of the file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for Durable {
    fn drop(&mut self) {
        // A child of fork() holds a copy of the parent's reservation: the parent still issues
        // under it, so the child must leave the file alone.
        if self.fork_generation != crate::sys::current_fork_generation() {
            return;
        }
        let _gate = ForkGate::enter();
        let closing = self.closing.get_mut().unwrap_or_else(|e| e.into_inner()).take();
        let Some((state, word)) = closing else { return };
        // With a rollover field the state's tick can sit below ticks issued under a lower
        // counter: the reservation stays as it is.
        let Some(issued_end) = word.issued_end(state.load(Ordering::Acquire)) else { return };
        let high_water_end = issued_end.max(self.floor);
        let reserved = self.local.load(Ordering::Acquire);
        if high_water_end < reserved {
            // Lower the record to what was really issued, unless another process sharing the
            // file reserved more meanwhile.
            let _ = self.store_end(
                high_water_end,
                |on_disk| if on_disk > reserved { on_disk } else { high_water_end },
            );
        }
        // Then the `.users` lock goes, with `store`.
    }
}

/// A file's device and inode.
type FileId = (u64, u64);

/// The state files this process keeps alone, by the device and inode of their `.users` file
/// (see [`open_in_process`]); locked only inside the fork gate.
static OPEN: Mutex<Vec<(FileId, Arc<Durable>)>> = Mutex::new(Vec::new());

/// A generator's use of a reservation. For a state file this process keeps alone, the last
/// use to go closes it (its last record written, its `.users` lock released) under the lock
/// of [`open_in_process`], so a generator opening the file meanwhile waits and then finds it
/// closed, never half-closed.
pub(crate) struct Use {
    durable: Option<Arc<Durable>>,
    registered: bool,
}

impl Use {
    /// A use of a reservation that no other generator shares through [`open_in_process`].
    pub(crate) fn own(durable: Durable) -> Use {
        Use { durable: Some(Arc::new(durable)), registered: false }
    }
}

impl core::ops::Deref for Use {
    type Target = Durable;
    fn deref(&self) -> &Durable {
        self.durable.as_ref().expect("taken only when dropped")
    }
}

impl Drop for Use {
    fn drop(&mut self) {
        let Some(durable) = self.durable.take() else { return };
        if !self.registered {
            return;
        }
        let _gate = ForkGate::enter();
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        // The table's own reference and this one: this is the last use.
        if Arc::strong_count(&durable) == 2 {
            open.retain(|(_, d)| !Arc::ptr_eq(d, &durable));
        }
        drop(durable);
    }
}

/// One reservation per state file in this process, for the state it keeps alone: generators
/// that open the same file (under any spelling) share it (and so its state, through the
/// registry); the file is held exclusively until the last of them goes.
pub(crate) fn open_in_process(
    path: &Path,
    fingerprint: u64,
    node_bits: u64,
    window_ticks: u64,
    max_tick: u64,
) -> Result<Use, Error> {
    let _gate = ForkGate::enter();
    let location = Location::of(path)?;
    // Under the lock: a generator opening the file while the last one closes it finds it
    // closed (its last record written, its lock released).
    let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, existing)) = open.iter().find(|(id, _)| *id == location.id) {
        if existing.fingerprint != fingerprint || existing.node_bits != node_bits {
            return Err(Error::state_file(
                &location.path,
                "a generator of this process uses it for another layout or other node values: a state file guards one state",
            ));
        }
        return Ok(Use { durable: Some(existing.clone()), registered: true });
    }
    let id = location.id;
    let d = Arc::new(Durable::state_file(
        location,
        fingerprint,
        node_bits,
        window_ticks,
        max_tick,
        Sharing::Alone,
    )?);
    open.push((id, d.clone()));
    Ok(Use { durable: Some(d), registered: true })
}

/// A [`Durable`] as the generator's high-water mark. The reservation lives in the shared
/// mapping when the state does (every process sharing it reads it there), else in `durable`.
pub(crate) struct FileMark {
    pub durable: Use,
    #[cfg(feature = "shared")]
    pub mapped: Option<Arc<super::shared::Mapping>>,
    #[cfg(not(feature = "shared"))]
    pub mapped: Option<std::convert::Infallible>,
}

impl HighWater for FileMark {
    #[inline]
    fn reserved(&self) -> &AtomicU64 {
        match &self.mapped {
            #[cfg(feature = "shared")]
            Some(map) => map.reserved(),
            #[cfg(not(feature = "shared"))]
            Some(never) => match *never {},
            None => &self.durable.local,
        }
    }

    fn extend(&self, tick: u64) -> Result<(), Error> {
        self.durable.extend(self.reserved(), tick)
    }
}
