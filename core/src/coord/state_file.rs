//! The durable high-water mark: a state file that reserves time ahead, so that a restart
//! after the clock stepped back never repeats an ID.
//!
//! Before a generator issues an ID at a tick at or beyond its reservation, it writes a new
//! reservation (the tick plus a window, by default 1 s) to the file, makes it durable, and
//! only then issues. On start it never issues below what the file says was reserved. When the
//! last process using the identity's record closes cleanly, it writes the exact high-water
//! mark, so a restart need not wait out the window.
//!
//! The record is 48 bytes: magic `SNOWHWM1`, a version, the layout fingerprint, the node bits,
//! the reserved end (an exclusive tick), and an FNV-1a checksum of the rest. The file is
//! replaced whole (a new temporary file, created exclusively, `fsync`, `rename`, `fsync` the
//! directory), so a crash leaves the old record or the new one; a record that is torn or
//! corrupt anyway, or that belongs to another layout or node, is an error, never a silent
//! reset. Every file is opened through `sys::open_in`: no symbolic link is followed, nothing
//! but a regular file of this user's is read or replaced (`state_file=/dev/null` is refused,
//! and a device is never replaced by a file), reads stop at a record's length, and a
//! temporary that could not be renamed is removed on every path.
//!
//! # One state per state file
//!
//! A state file is a term of the host's record of its identity (see `arbiter`): every
//! process that uses the identity at once names the same file, and draws from the record's
//! one state word, whose reservation lives in the record. So a state file guards one state.
//! Writes take `<file>.lock` (a `flock`, waited for at most `max_wait_ms`) and check, under
//! it, that the file still holds this identity's record: two identities that name one file
//! are refused before either issues past what it read.

use super::arbiter::{busy, Record};
use super::io_err;
use crate::error::Error;
use crate::generator::{HighWater, Word};
use crate::hash::Fnv1a;
use crate::sys::{self, Access, Dir, Flock, ForkGate, Refusal};
use core::fmt::Write as _;
use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const MAGIC: &[u8; 8] = b"SNOWHWM1";
const LEN: usize = 48;

/// What a record says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StateRecord {
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

impl StateRecord {
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
    fn decode(bytes: &[u8], path: &Path) -> Result<Option<StateRecord>, Error> {
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
        if bytes.len() > LEN {
            return Err(corrupt(&format!("more than {LEN} bytes")));
        }
        if bytes.len() != LEN {
            return Err(corrupt(&format!("{} bytes, not {LEN}", bytes.len())));
        }
        if &bytes[..8] != MAGIC {
            return Err(corrupt("not a libsnowflake state file"));
        }
        let word = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        if word(40) != checksum(&bytes[..40]) {
            return Err(corrupt("its checksum does not match"));
        }
        Ok(Some(StateRecord { fingerprint: word(16), node_bits: word(24), reserved_end: word(32) }))
    }
}

/// `name` with `suffix` appended.
fn with_suffix(name: &OsStr, suffix: &str) -> OsString {
    let mut s = name.to_owned();
    s.push(suffix);
    s
}

/// A state file, found by what it is: its directory (open and checked), its name, and its
/// canonical path (the directory's, resolved, plus the name), which is how the host's record
/// knows it.
pub(crate) struct Location {
    dir: Dir,
    name: OsString,
    /// The canonical path.
    pub path: PathBuf,
}

impl Location {
    /// Where the state file `path` is. Its directory must exist, and be this user's or
    /// root's, and not writable by others unless it is sticky.
    pub(crate) fn of(path: &Path) -> Result<Location, Error> {
        let name = path
            .file_name()
            .filter(|n| *n != "." && *n != "..")
            .ok_or_else(|| Error::state_file(path, "it names no file"))?
            .to_os_string();
        let parent = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p,
            _ => Path::new("."),
        };
        let dir_path = std::fs::canonicalize(parent)
            .map_err(|e| io_err("locating the directory of the state file", path, e))?;
        let dir = Dir::open(&dir_path).map_err(|r| match r {
            Refusal::Io(e) => io_err("opening the directory of the state file", path, e),
            other => Error::state_file(path, format_args!("its directory was refused: {other}")),
        })?;
        Ok(Location { path: dir_path.join(&name), dir, name })
    }

    fn refused(&self, r: Refusal) -> Error {
        match r {
            Refusal::Io(e) => io_err("opening the state file", &self.path, e),
            other => Error::state_file(&self.path, format_args!("refused: {other}")),
        }
    }

    /// What the file says now (`None`: it does not exist or is empty). Reads at most a
    /// record's length, from a regular file of this user's.
    pub(crate) fn read(&self) -> Result<Option<StateRecord>, Error> {
        let (file, _) = match sys::open_in(&self.dir, &self.name, Access::Own(None)) {
            Ok(f) => f,
            Err(Refusal::Io(e)) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(r) => return Err(self.refused(r)),
        };
        let bytes =
            sys::read_bounded(&file, LEN + 1).map_err(|e| io_err("reading the state file", &self.path, e))?;
        StateRecord::decode(&bytes, &self.path)
    }

    /// What the file says, checked to be `identity`'s (fingerprint, node bits): the reserved
    /// end, or 0 for a new file.
    pub(crate) fn floor(&self, identity: (u64, u64)) -> Result<u64, Error> {
        match self.read()? {
            None => Ok(0),
            Some(r) if r.fingerprint != identity.0 => {
                Err(Error::state_file(&self.path, "it belongs to another layout"))
            }
            Some(r) if r.node_bits != identity.1 => {
                Err(Error::state_file(&self.path, "it belongs to other node values"))
            }
            Some(r) => Ok(r.reserved_end),
        }
    }

    /// Replaces the file with `rec`: a new temporary (created exclusively, never through a
    /// link), synced, renamed over the file, the directory synced. The temporary is removed
    /// on every failure.
    fn replace(&self, rec: &StateRecord) -> io::Result<()> {
        static SERIAL: AtomicU64 = AtomicU64::new(0);
        let tmp = with_suffix(
            &self.name,
            &format!(
                ".tmp{}.{}.{:x}",
                sys::pid(),
                SERIAL.fetch_add(1, Ordering::Relaxed),
                sys::monotonic_ns()
            ),
        );
        let (mut f, _) = sys::open_in(&self.dir, &tmp, Access::New(0o600)).map_err(|r| match r {
            Refusal::Io(e) => e,
            other => io::Error::other(other.to_string()),
        })?;
        let written = f.write_all(&rec.encode()).and_then(|_| f.sync_all());
        drop(f);
        let renamed = written.and_then(|_| sys::rename_in(&self.dir, &tmp, &self.name));
        if let Err(e) = renamed {
            let _ = sys::remove_in(&self.dir, &tmp);
            return Err(e);
        }
        sys::sync_dir(&self.dir)
    }

    /// Takes `<file>.lock` until `deadline` at most: the open file holds it until closed.
    fn lock(&self, deadline: Instant) -> Result<std::fs::File, Error> {
        let name = with_suffix(&self.name, ".lock");
        let lock_path = self.path.with_file_name(&name);
        let (file, _) = sys::open_in(&self.dir, &name, Access::Own(Some(0o600))).map_err(|r| match r {
            Refusal::Io(e) => io_err("opening the state file's lock", &lock_path, e),
            other => Error::state_file(&lock_path, format_args!("refused: {other}")),
        })?;
        match Flock::within(&file, Some(deadline)).map_err(|e| io_err("locking", &lock_path, e))? {
            Some(lock) => std::mem::forget(lock), // released when `file` is closed
            None => return Err(busy(&lock_path, "the state file's lock", sys::lock_holder(&file))),
        }
        Ok(file)
    }
}

/// A state file's reservation for the state of a host's record, shared by the generators of
/// this process that use the record (see [`Durable::attach`]).
pub(crate) struct Durable {
    location: Location,
    record: Arc<Record>,
    fingerprint: u64,
    node_bits: u64,
    window_ticks: u64,
    max_tick: u64,
    max_wait_ms: u64,
    word: Word,
    extend_lock: Mutex<()>,
    /// The fork generation that owns it: a child of fork() never writes it.
    fork_generation: u64,
}

impl Durable {
    /// The reservation of `location` for `record`: the one this process keeps for the
    /// record already, or a new one.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn attach(
        record: &Arc<Record>,
        location: Location,
        identity: (u64, u64),
        window_ticks: u64,
        max_tick: u64,
        max_wait_ms: u64,
        word: Word,
    ) -> Arc<Durable> {
        let _gate = ForkGate::enter();
        let mut slot = record.companion.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(existing) =
            slot.as_ref().and_then(|w| w.upgrade()).and_then(|a| a.downcast::<Durable>().ok())
        {
            if existing.fork_generation == sys::current_fork_generation() {
                return existing;
            }
        }
        let durable = Arc::new(Durable {
            location,
            record: record.clone(),
            fingerprint: identity.0,
            node_bits: identity.1,
            window_ticks: window_ticks.max(1),
            max_tick,
            max_wait_ms,
            word,
            extend_lock: Mutex::new(()),
            fork_generation: sys::current_fork_generation(),
        });
        let any: Arc<dyn std::any::Any + Send + Sync> = durable.clone();
        *slot = Some(Arc::downgrade(&any));
        durable
    }

    fn deadline(&self) -> Instant {
        Instant::now() + Duration::from_millis(self.max_wait_ms)
    }

    /// Makes the reservation reach past `tick`, writing the file first.
    pub(crate) fn extend(&self, tick: u64) -> Result<(), Error> {
        let _gate = ForkGate::enter();
        let _guard = self.extend_lock.lock().unwrap_or_else(|e| e.into_inner());
        let word = self.record.reserved();
        if word.load(Ordering::Acquire) > tick {
            return Ok(()); // another thread or process extended it
        }
        let new_end = tick.saturating_add(self.window_ticks).min(self.max_tick.saturating_add(1));
        self.store_end(|on_disk| new_end.max(on_disk))?;
        word.fetch_max(new_end, Ordering::AcqRel);
        Ok(())
    }

    /// Writes `choose(the end on disk)` to the file under `<file>.lock`, after checking that
    /// the file is still this identity's.
    fn store_end(&self, choose: impl FnOnce(u64) -> u64) -> Result<(), Error> {
        let lock_file = self.location.lock(self.deadline())?;
        let result = (|| {
            let on_disk = self.location.floor((self.fingerprint, self.node_bits))?;
            let rec = StateRecord {
                fingerprint: self.fingerprint,
                node_bits: self.node_bits,
                reserved_end: choose(on_disk),
            };
            self.location
                .replace(&rec)
                .map_err(|e| io_err("reserving time in the state file", &self.location.path, e))
        })();
        drop(lock_file); // closing it releases the flock
        result
    }
}

impl Drop for Durable {
    /// The last generator of this process that used the reservation: when no other process
    /// uses the record either (checked under its set-up lock, which joiners take), the file
    /// and the record's reservation are lowered to what was really issued, so a restart does
    /// not wait out the window. Otherwise the others go on under it as it is.
    fn drop(&mut self) {
        if self.fork_generation != sys::current_fork_generation() {
            return;
        }
        let _gate = ForkGate::enter();
        let deadline = Instant::now() + Duration::from_millis(self.max_wait_ms.min(100));
        let Ok(_setup) = self.record.lock_until(deadline) else { return };
        if self.record.others_use_it() {
            return;
        }
        let Some(end) = self.word.issued_end(self.record.state().load(Ordering::Acquire)) else { return };
        let reserved = self.record.reserved().load(Ordering::Acquire);
        if end >= reserved {
            return;
        }
        if self.store_end(|on_disk| if on_disk > reserved { on_disk } else { end }).is_ok() {
            self.record.reserved().store(end, Ordering::Release);
        }
    }
}

/// A [`Durable`] as the generator's high-water mark: the reservation lives in the record.
pub(crate) struct FileMark(pub Arc<Durable>);

impl HighWater for FileMark {
    #[inline]
    fn reserved(&self) -> &AtomicU64 {
        self.0.record.reserved()
    }

    fn extend(&self, tick: u64) -> Result<(), Error> {
        self.0.extend(tick)
    }
}
