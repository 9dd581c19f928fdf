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

use super::io_err;
use crate::error::Error;
use crate::generator::{HighWater, Word};
use crate::hash::Fnv1a;
use crate::sys::Flock;
use core::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

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
    /// A state file, replaced whole and synced; `lock` serializes processes sharing it.
    StateFile { lock: PathBuf, sync: bool },
    /// A lease file held (locked) by this process, written in place.
    Held(File),
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
    closing: Mutex<Option<(std::sync::Arc<AtomicU64>, Word)>>,
    /// The fork generation that owns the file: a child of fork() must not write it.
    fork_generation: u64,
}

fn read_all(file: &mut File) -> io::Result<Vec<u8>> {
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

    /// Opens (or prepares to create) the state file at `path`.
    pub(crate) fn state_file(
        path: &Path,
        fingerprint: u64,
        node_bits: u64,
        window_ticks: u64,
        max_tick: u64,
    ) -> Result<Durable, Error> {
        let bytes = match File::open(path) {
            Ok(mut f) => read_all(&mut f).map_err(|e| io_err("reading the state file", path, e))?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(io_err("opening the state file", path, e)),
        };
        let floor = match Record::decode(&bytes, path)? {
            None => 0,
            Some(r) if r.fingerprint != fingerprint => {
                return Err(Error::state_file(path, "it belongs to another layout"))
            }
            Some(r) if r.node_bits != node_bits => {
                return Err(Error::state_file(path, "it belongs to other node values"))
            }
            Some(r) => r.reserved_end,
        };
        let mut lock = path.as_os_str().to_owned();
        lock.push(".lock");
        let store = Store::StateFile { lock: PathBuf::from(lock), sync: true };
        Ok(Durable::new(path, store, (fingerprint, node_bits), window_ticks, max_tick, floor))
    }

    /// A reservation kept in a lease file that this process holds locked.
    pub(crate) fn held(
        mut file: File,
        path: &Path,
        fingerprint: u64,
        node_bits: u64,
        window_ticks: u64,
        max_tick: u64,
    ) -> Result<Durable, Error> {
        let bytes = read_all(&mut file).map_err(|e| io_err("reading the lease file", path, e))?;
        // Another layout's or node's lease file in the same directory is not an error for a
        // lease: the value is ours now, and its old reservation does not concern this layout.
        let floor = match Record::decode(&bytes, path)? {
            Some(r) if r.fingerprint == fingerprint && r.node_bits == node_bits => r.reserved_end,
            _ => 0,
        };
        Ok(Durable::new(path, Store::Held(file), (fingerprint, node_bits), window_ticks, max_tick, floor))
    }

    fn write(&self, reserved_end: u64) -> io::Result<()> {
        let rec = Record { fingerprint: self.fingerprint, node_bits: self.node_bits, reserved_end }.encode();
        match &self.store {
            Store::Held(file) => file.write_all_at(&rec, 0),
            Store::StateFile { sync, .. } => {
                let mut tmp = self.path.as_os_str().to_owned();
                static SERIAL: AtomicU64 = AtomicU64::new(0);
                tmp.push(format!(".tmp{}.{}", std::process::id(), SERIAL.fetch_add(1, Ordering::Relaxed)));
                let tmp = PathBuf::from(tmp);
                let mut f =
                    OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&tmp)?;
                f.write_all(&rec)?;
                if *sync {
                    f.sync_all()?;
                }
                std::fs::rename(&tmp, &self.path)?;
                if *sync {
                    if let Some(dir) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
                        File::open(dir)?.sync_all()?;
                    }
                }
                Ok(())
            }
        }
    }

    /// Makes the reservation reach past `tick` (stored in `word`), writing the file first.
    pub(crate) fn extend(&self, word: &AtomicU64, tick: u64) -> Result<(), Error> {
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
            Store::StateFile { lock, .. } => {
                let lock_file = OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(false)
                    .mode(0o600)
                    .open(lock)?;
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
    pub(crate) fn attach(&self, state: Option<std::sync::Arc<AtomicU64>>, word: Word) {
        *self.closing.lock().unwrap_or_else(|e| e.into_inner()) = state.map(|s| (s, word));
    }
}

impl Drop for Durable {
    fn drop(&mut self) {
        // A child of fork() holds a copy of the parent's reservation: the parent still issues
        // under it, so the child must leave the file alone.
        if self.fork_generation != crate::sys::current_fork_generation() {
            return;
        }
        let closing = self.closing.get_mut().unwrap_or_else(|e| e.into_inner()).take();
        let Some((state, word)) = closing else { return };
        // With a rollover field the state's tick can sit below ticks issued under a lower
        // counter: the reservation stays as it is.
        let Some(issued_end) = word.issued_end(state.load(Ordering::Acquire)) else { return };
        let high_water_end = issued_end.max(self.floor);
        let reserved = self.local.load(Ordering::Acquire);
        // Under the lock of open_in_process: a generator opening this file now reads the
        // record after this write.
        let _open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        if high_water_end < reserved {
            // Lower the record to what was really issued, unless another process sharing the
            // file reserved more meanwhile.
            let _ = self.store_end(
                high_water_end,
                |on_disk| if on_disk > reserved { on_disk } else { high_water_end },
            );
        }
    }
}

/// The reservations of this process's state files (see [`open_in_process`]).
static OPEN: Mutex<Vec<(PathBuf, std::sync::Weak<Durable>)>> = Mutex::new(Vec::new());

/// One reservation per state file in this process: generators that open the same file share
/// it (and so its state, through the registry), and it closes when the last one goes.
pub(crate) fn open_in_process(
    path: &Path,
    make: impl FnOnce() -> Result<Durable, Error>,
) -> Result<std::sync::Arc<Durable>, Error> {
    use std::sync::Arc;
    // Built under the lock: a generator opening the file while the last one closes it reads
    // the record after that close has written it.
    let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
    open.retain(|(_, w)| w.strong_count() > 0);
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if let Some(existing) = open.iter().find(|(p, _)| *p == key).and_then(|(_, w)| w.upgrade()) {
        return Ok(existing);
    }
    let d = Arc::new(make()?);
    open.push((key, Arc::downgrade(&d)));
    Ok(d)
}

/// A [`Durable`] as the generator's high-water mark. The reservation lives in the shared
/// mapping when the state does (every process sharing it reads it there), else in `durable`.
pub(crate) struct FileMark {
    pub durable: std::sync::Arc<Durable>,
    #[cfg(feature = "shared")]
    pub mapped: Option<std::sync::Arc<super::shared::Mapping>>,
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
