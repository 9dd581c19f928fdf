//! The arbiter: the host's one record of each identity, which every way of issuing meets
//! before it issues.
//!
//! An *identity* is a layout and node values (a rollover field's value aside): two generators
//! with the same identity compose IDs from the same bits, so wherever they run on one host
//! they must draw from one state, or one of them must not issue. Within a process the
//! registry (`super::registry`) sees to that; across the processes and users of a host, this
//! module does. Every way of issuing is a client of it, under the identity it issues with:
//!
//! | how | [`Mode`] | what the record gives it |
//! |---|---|---|
//! | the default, `shared=NAME` | `Host` | the state word every such process of the user shares |
//! | `process_only` | `Alone` | the state word, for this process alone |
//! | `lease=local` | `LocalLease` | the value whose record it could hold alone, and its state word |
//! | a Redis lease (of one process, or a host's) | `LeaseGuard` on the value it holds | the value's record, shared only with other Redis leases of it (Redis decides between them); the lease's reservation is kept in the record |
//! | a host lease (`shared=` with `lease=redis://…`) | also `HostLease` on its own key | the host's lease state |
//! | a clock of the caller's (Rust's `Generator::with_clock`) | `Guard` | this process alone uses the identity; the end of what it issued is kept in the record |
//! | `state_file=PATH` | (a term of the above) | the reservation word the state file's reservation lives in |
//! | `rollover=FIELD` | (a term) | the record of the identity with the field at 0, and a look at every record of the layout its counter can reach |
//!
//! `isolated` alone stays outside: it is for tests and replays, with a clock of the caller's.
//!
//! # The files
//!
//! One file per user and identity, `libsnowflake-<key>-<uid>.shm`, in the host's directory
//! ([`shm_dir`]: `$SNOWFLAKE_SHM_DIR`, else the system's: `/dev/shm` on Linux, `/var/tmp` on
//! macOS, `%ProgramData%\libsnowflake` on Windows; see `sys`). `key`
//! is 16 hex digits of a hash of the layout and the node values (with a rollover field at 0).
//! A record is readable by every user and written only by its owner (mode 0644): users meet
//! by reading each other's records, never by writing them, so no user can make another's
//! process issue from a state it controls. (A host lease's own state holds its Redis token:
//! `libsnowflake-<key>-<uid>.host`, mode 0600, read by no one else.)
//!
//! | offset | what |
//! |---|---|
//! | 0 | magic `SNOWFLK2`, written last when the file is set up |
//! | 8 | identity: layout fingerprint, node bits (a rollover field at 0) |
//! | 24 | terms: rollover field + 1, `max_drift_ms`, sequence start, state file, host lease field + 1 |
//! | 64 | clock anchor: `wall - CLOCK_MONOTONIC` in ns, and the boot id it holds for (36 bytes) |
//! | 112 | when a fresh state may first issue (ms on the record's clock) |
//! | 120 | the owner's uid; 128: how its processes issue ([`Mode`]); 136: the last joiner's pid |
//! | 144 | the host's time base: `/proc/uptime - CLOCK_MONOTONIC` in ns, as its users see it |
//! | 152 | the highest tick a rollover generator left behind when it bumped its counter |
//! | 192 | the layout's canonical text |
//! | 1024 | the state word (its own cache line); 1088: a state file's reservation; 1096: a guard's |
//! | 2048 | a host lease's token, value, claim epoch, validity and reservation ([`HostWords`]) |
//! | 2176 | the label (`shared=NAME`) |
//!
//! # Locks, and what the kernel lists of them
//!
//! As Linux has them (`sys::locks`; macOS and Windows keep the users' and set-up locks with
//! the same meaning, and say in `sys` what they cannot keep of the rest):
//!
//! - **Users** (an open-file-description lock on byte [`USERS_AT`]): every process using the
//!   record holds it, shared (`Host`, `LeaseGuard`, `HostLease`) or exclusive (`Alone`,
//!   `LocalLease`, `Guard`). The kernel keeps the count: a process killed at any instant
//!   stops counting, a child of `fork()` counts with its parent, and an exclusive user and a
//!   shared one can never both hold it.
//! - **Who** (a read lock at [`PID_AT`] + pid): `/proc/locks` lists it, so a refusal can name
//!   the process that uses the record, whatever user it runs as.
//! - **Beacon** (a read lock of `max_drift_ms + 1` bytes at an offset made of the key): the
//!   kernel keeps it while the process lives, even once the file is removed. A process that
//!   sets up a record anew looks for beacons of its key on inodes that are no longer a
//!   record's: processes still issuing from a removed copy, and how far ahead they may have
//!   borrowed. The fresh state starts past that; with none, it starts at the next tick.
//! - **Set-up** (`flock` on the file): held while the header is read or written, for a
//!   moment; its waits are bounded by `max_wait_ms` (at least [`OPEN_GRACE_MS`] when opening),
//!   then a [`Error::Busy`] names the holder.
//!
//! # Users
//!
//! Uniqueness across users comes first, so the record is host-wide: after it holds its own
//! record's user lock, a process reads every other user's record of its identity. One that
//! is in use refuses the newcomer, naming the user and the process; one that is not gives
//! its high-water mark, above which the newcomer starts. Two users starting at once both
//! take their own lock before they look, so at least one sees the other: both may refuse,
//! never both issue. Nothing another user wrote is ever issued from, nor copied beyond this
//! generator's own reach: a mark within the clock's tick plus `max_drift_ms` (and the tick's
//! end) raises the state; one beyond it refuses the newcomer, naming the user, until the clock
//! passes it (a planted mark is a denial of service while its file lasts, never a repeat, and
//! never outlives the file).
//!
//! # Removal, truncation, a stopped holder, a shifted clock
//!
//! - A process checks, at least every [`RECHECK_MS`] of the clock readings it issues at,
//!   that the name still holds its file, whole ([`Validity`]); otherwise it stops issuing.
//!   A fresh record starts past every beacon of a removed copy (above). Before the error
//!   returns, the process waits (holding its beacon, at most [`LAST_WAIT_MS`]) for the clock to
//!   pass what it issued, known from its own memory, so that no exit path (`return 1` without
//!   freeing, `_exit`) leaves IDs ahead of a record made anew.
//! - A truncated file would kill its users with `SIGBUS`: `sys`'s guard replaces the mapping
//!   with memory that reads as a state far in the future, and the next check reports it.
//! - Every lock wait is bounded (above).
//! - A process whose `CLOCK_MONOTONIC` disagrees with the host's (a time namespace, a faked
//!   clock) by more than [`TIME_BASE_MS`] is refused while others use the record, and
//!   re-anchors it when none does. One ahead by less carries the difference in its beacon and
//!   its waits.

#[cfg(feature = "lease-local")]
pub(super) mod local;

use super::admission;
use crate::clock::{Clock, MonotonicClock};
use crate::coord::io_err;
use crate::error::Error;
use crate::generator::{Validity, Word};
use crate::layout::{Layout, Node};
use crate::options::{valid_shared_name, Policy};
use crate::sys::{self, locks, Access, Dir, FileId, ForkGate, Map, Refusal, Setup};
use crate::text::Name;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once, Weak};
use std::time::{Duration, Instant};

const MAGIC: u64 = u64::from_le_bytes(*b"SNOWFLK2");
const SIZE: usize = 4096;
const FINGERPRINT_AT: usize = 8;
const NODE_AT: usize = 16;
const TERMS_AT: usize = 24;
const TERMS: usize = admission::TERMS.len();
const ANCHOR_AT: usize = 64;
const BOOT_AT: usize = 72;
const READY_AT: usize = 112;
const OWNER_AT: usize = 120;
const MODE_AT: usize = 128;
const PID_WORD_AT: usize = 136;
const TIME_BASE_AT: usize = 144;
const HIGH_AT: usize = 152;
const TEXT_AT: usize = 192;
const TEXT_MAX: usize = 800;
const STATE_AT: usize = 1024;
const RESERVED_AT: usize = 1088;
const GUARD_AT: usize = 1096;
const TOKEN_AT: usize = 2048;
const TOKEN_LEN: usize = 32;
const HOST_VALUE_AT: usize = 2112;
const HOST_EPOCH_AT: usize = 2120;
const HOST_VALID_AT: usize = 2128;
const HOST_RESERVED_AT: usize = 2136;
const HOST_RESERVED_EPOCH_AT: usize = 2144;
const LABEL_AT: usize = 2176;
const LABEL_MAX: usize = 64;
/// A host lease's validity word packs the claim epoch above 42 bits of ms (to the year 2109).
const VALID_BITS: u32 = 42;

/// The byte whose locks count a record's users: past the data, which a lock does not touch.
pub(crate) const USERS_AT: u64 = SIZE as u64;
/// Where a user's "who" lock is: this plus its pid.
const PID_AT: u64 = 1 << 40;
/// Where beacons are: this plus 33 bits of the key times 2^28 (a beacon is at most a day of
/// milliseconds, 2^27, long).
const BEACON_AT: u64 = 1 << 62;

/// How long a check that the file is still at its name covers, in ms of clock readings.
pub(crate) const RECHECK_MS: u64 = crate::limits::RECORD_AHEAD_MS;
/// How long opening waits for another process's set-up lock at least, whatever `max_wait_ms`
/// (a set-up lasts microseconds; a holder stopped in it is named after this).
pub(crate) const OPEN_GRACE_MS: u64 = 1000;
/// How far a joiner's `CLOCK_MONOTONIC` may stray from the record's users' (compared through
/// `/proc/uptime`, which a faked clock does not move) before it is refused.
pub(crate) const TIME_BASE_MS: u64 = 1000;
/// The longest a process waits, when it learns that its record was removed or truncated and
/// when it lets go of the record, for the clock to pass the IDs it borrowed ahead: past this
/// (a `max_drift_ms` of more, a tick of a day) it does not wait, and says until when its IDs
/// run, since a record made anew before then may repeat them.
pub(crate) const LAST_WAIT_MS: u64 = 10_000;

pub(crate) use super::admission::Mode;

/// The directory of the host's records: `$SNOWFLAKE_SHM_DIR`, else the system's (`/dev/shm`,
/// else the temporary directory, on Linux; `/var/tmp` on macOS; `%ProgramData%\libsnowflake`
/// on Windows). An empty `SNOWFLAKE_SHM_DIR` counts as unset; a relative one is refused (two
/// processes in two working directories would not meet).
pub fn shm_dir() -> Result<PathBuf, Error> {
    if let Some(dir) = sys::config_vars().values[4].as_deref().filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        if dir.is_relative() {
            return Err(Error::BadOption {
                name: Name::snippet("SNOWFLAKE_SHM_DIR"),
                reason: "SNOWFLAKE_SHM_DIR must be an absolute path: processes in other working directories would not meet on a relative one",
            });
        }
        return Ok(dir);
    }
    Ok(sys::default_record_dir())
}

/// The key of an identity: a hash of the layout and the node values, with `rollover`'s (or,
/// for a host lease's state, the leased field's) value at 0, and for a host lease's state
/// that field.
fn key_of(layout: &Layout, node: &Node, zeroed: Option<usize>, host_lease: Option<usize>) -> u64 {
    let node = zeroed.map_or(*node, |r| node.with(r, 0));
    // Asked for each generator made (a generator made per request asks the same each time).
    type Asked = (u64, u64, Option<usize>);
    static LAST: crate::memo::Memo<Asked, u64, 8> = crate::memo::Memo::new();
    let asked = (layout.fingerprint(), layout.node_bits(&node), host_lease);
    if let Some(key) = LAST.get(|a| *a == asked) {
        return key;
    }
    let mut h = crate::hash::Fnv1a::new();
    let tag = host_lease.map_or(0, |f| 0x100 + f as u64);
    for w in [layout.fingerprint(), layout.node_bits(&node), tag] {
        // `{w:016x}`, without the formatting machinery (a key is taken per generator made).
        let _ = std::fmt::Write::write_str(&mut h, crate::text::hex16(w, &mut [0; 16]));
    }
    LAST.put(asked, h.0);
    h.0
}

fn file_name(key: u64, uid: u32, host_lease: bool) -> OsString {
    let ext = if host_lease { "host" } else { "shm" };
    OsString::from(format!("libsnowflake-{key:016x}-{uid}.{ext}"))
}

/// `(key, uid, host lease state)` of a record's file name.
fn parse_name(name: &OsStr) -> Option<(u64, u32, bool)> {
    let name = name.to_str()?;
    let rest = name.strip_prefix("libsnowflake-")?;
    let (stem, host) = match rest.strip_suffix(".shm") {
        Some(s) => (s, false),
        None => (rest.strip_suffix(".host")?, true),
    };
    let (key, uid) = stem.split_once('-')?;
    if key.len() != 16 {
        return None;
    }
    Some((u64::from_str_radix(key, 16).ok()?, uid.parse().ok()?, host))
}

/// A note for a process that runs in a container with every node value at 0 (the default):
/// a container with a `/dev/shm` of its own is a host of its own, so two such containers on
/// one machine repeat each other's IDs unless they share a record or have node values of
/// their own. `None` outside a container, or with node values given.
pub fn container_note(layout: &Layout, node: &Node) -> Option<String> {
    if layout.node_bits(node) != 0 || layout.node_fields().next().is_none() {
        return None;
    }
    let what = sys::container()?;
    Some(format!(
        "this process runs in {what} with node values all 0: each container with its own /dev/shm is a host of its own, so two containers with the same node values repeat each other's IDs. Give each container node values of its own (SNOWFLAKE_NODE, or a lease), or let them share the host's records (--ipc=host, or one volume mounted as SNOWFLAKE_SHM_DIR in each)"
    ))
}

/// The path of this user's record of `layout` and `node` (the value of a `rollover` field
/// aside), in [`shm_dir`].
pub fn shared_path(layout: &Layout, node: &Node, rollover: Option<&str>) -> PathBuf {
    let rollover = rollover.and_then(|r| layout.field(r)).map(|(i, _)| i);
    let dir = shm_dir().unwrap_or_else(|_| std::env::temp_dir());
    dir.join(file_name(key_of(layout, node, rollover, None), sys::euid(), false))
}

/// This boot's name, as a record keeps it (`?`s where the system names none).
pub(crate) fn boot_id() -> [u8; 36] {
    sys::boot_id().unwrap_or([b'?'; 36])
}

/// This process's view of the host's time base: `/proc/uptime` minus `CLOCK_MONOTONIC`, in
/// ns (0 where there is no `/proc/uptime`).
///
/// `/proc/uptime` steps by 10 ms: two processes on the same clocks read bases up to 10 ms
/// apart, and one seemed up to 10 ms ahead of the others (its waits at the end and its beacon
/// carried it: a process freeing its last generator of an identity waited for it, 2.8 ms at
/// the median). Where `CLOCK_BOOTTIME` agrees with `/proc/uptime` (read after it: at or past
/// it, by less than a step and the reads' time), the base is read from it instead, to the
/// microsecond. A library that fakes the process's clocks moves `CLOCK_BOOTTIME` and not
/// `/proc/uptime`: beyond that agreement it is seen as before.
fn time_base_ns() -> u64 {
    let Some(up) = sys::uptime_ns() else { return 0 };
    match sys::boot_and_monotonic_ns() {
        Some((boot, mono)) if boot >= up && boot - up < UPTIME_STEP_NS + UPTIME_READ_NS => {
            boot.wrapping_sub(mono) | 1
        }
        _ => up.wrapping_sub(sys::monotonic_ns()) | 1,
    }
}

/// The step of `/proc/uptime` (two decimals of a second).
const UPTIME_STEP_NS: u64 = 10_000_000;

/// The time allowed between reading `/proc/uptime` and `CLOCK_BOOTTIME` beside it.
const UPTIME_READ_NS: u64 = 2_000_000;

/// How far apart two processes on the same clocks may read the time base from
/// `CLOCK_BOOTTIME` (see [`time_base_ns`] and [`sys::BOOT_PAIR_NS`]): a process ahead of the
/// record's base by no more is not ahead. (A base read from `/proc/uptime` differs by up to
/// its step, and counts as ahead.)
const TIME_BASE_NOISE_NS: i64 = sys::BOOT_PAIR_NS as i64;

/// What a process asks of the arbiter.
pub(crate) struct Request<'a> {
    pub layout: &'a Layout,
    /// The node values (a rollover field's at 0; for a host lease's state, the leased
    /// field's at 0).
    pub node: &'a Node,
    pub rollover: Option<usize>,
    pub policy: &'a Policy,
    /// The state file's canonical path.
    pub state_file: Option<&'a Path>,
    /// A lease's leased field: a host lease's state (`HostLease`), a Redis lease's value
    /// (`LeaseGuard`).
    pub host_lease: Option<usize>,
    pub mode: Mode,
    /// The name given with `shared=`, shown by `snowflake shared list`.
    pub label: Option<&'a str>,
    /// A tick the state must start at or above (a state file's record).
    pub floor: u64,
    /// The state file's reservation (an exclusive tick; `u64::MAX` without a state file),
    /// for a record set up or taken over now.
    pub reserved: u64,
    /// The state word's format.
    pub word: Word,
    /// How far ahead of the clock this process may issue (its beacon's length: see the module
    /// docs), in ms.
    pub ahead_ms: u64,
}

impl Request<'_> {
    fn key(&self) -> u64 {
        match self.mode {
            Mode::HostLease => key_of(self.layout, self.node, self.host_lease, self.host_lease),
            _ => key_of(self.layout, self.node, self.rollover, None),
        }
    }

    /// The terms a record's users agree on.
    fn terms(&self) -> [u64; TERMS] {
        let state_file = self.state_file.map_or(0, |p| {
            let mut h = crate::hash::Fnv1a::new();
            let _ = std::fmt::Write::write_str(&mut h, &p.to_string_lossy());
            h.0 | 1
        });
        admission::terms(
            self.rollover,
            self.policy.max_drift_ms,
            self.policy.sequence_start,
            state_file,
            self.host_lease,
        )
    }

    fn node_bits(&self) -> u64 {
        let zeroed = if self.mode == Mode::HostLease { self.host_lease } else { self.rollover };
        self.layout.node_bits(&zeroed.map_or(*self.node, |r| self.node.with(r, 0)))
    }

    /// How long a set-up lock may be waited for.
    fn deadline(&self) -> Instant {
        Instant::now() + Duration::from_millis(self.policy.max_wait_ms.max(OPEN_GRACE_MS))
    }
}

/// A record of this user's, mapped, and held as its [`Mode`] says for as long as it lives.
pub(crate) struct Record {
    map: Map,
    /// The file: its locks (users, who, beacon) live as long as it is open.
    file: File,
    dir: Arc<Dir>,
    /// What this process keeps beside the record for as long as one of its generators uses
    /// it (a state file's reservation, shared by those generators).
    pub(crate) companion: Mutex<Option<Weak<dyn std::any::Any + Send + Sync>>>,
    name: OsString,
    path: PathBuf,
    id: FileId,
    key: u64,
    mode: Mode,
    /// The layout and the state word's format (for the wait at the end, see `Drop`).
    layout: Layout,
    word: Word,
    /// How far ahead of a reading this process may issue (`max_drift_ms`), kept in its own
    /// memory: with `valid_until`, it bounds what this process issued from the record whatever
    /// the mapping says after a removal or a truncation (see [`Record::own_end`]).
    drift_ms: u64,
    /// How far this process's `CLOCK_MONOTONIC` runs ahead of the record's users' (within
    /// [`TIME_BASE_MS`], or it is refused), in ms: its readings of the record's clock are this
    /// far ahead of theirs, so its beacon and its waits at the end carry it.
    ahead_of_base_ms: u64,
    /// The record's clock (its anchor).
    clock: MonotonicClock,
    /// Clock readings below this may be issued at: a check found the file whole at its name
    /// at a reading `RECHECK_MS` before it.
    valid_until: AtomicU64,
    /// `valid_until` in the layout's ticks, for the generator's plain fast path: the last tick
    /// all of whose readings are below it (and below the layout's last tick), 0 for none.
    /// Raised after `valid_until`, so it never says more than `valid_until` does.
    last_valid_tick: AtomicU64,
    /// Whether a child of `fork()` finds `last_valid_tick` at 0 (`sys::zero_in_child`): set
    /// for an exclusive mode's record, which a child must not issue from.
    zeroed_in_child: AtomicBool,
    /// Whether a generator of this process may have issued at a caller's reading, which may
    /// run ahead of the record's clock: until one may, every reading was the record's clock's,
    /// and what this process issued ends at the clock's tick and its drift (see
    /// [`Record::own_end`]).
    readings_lead: AtomicBool,
    /// The fork generation that took the locks of an exclusive mode (a child does not hold
    /// them: see `sys::drop_in_child`).
    fork_generation: u64,
}

/// The records this process holds, by key: generators of one identity share one (and a
/// generator made for an identity the process holds costs no system call). Locked only
/// inside the fork gate.
static HELD: Mutex<Vec<HeldRecord>> = Mutex::new(Vec::new());

struct HeldRecord {
    key: u64,
    dir: PathBuf,
    record: Weak<Record>,
    /// A default (`Host`) record kept open after its last generator goes (see [`KEPT_MAX`]).
    kept: Option<Arc<Record>>,
}

/// How many default records (mode `Host`, no state file) a process keeps open once their
/// last generator is gone, the most recently opened first: a generator made per request
/// (PHP-FPM, a Python handler) then finds its identity held, and neither opens the record
/// nor waits at its free. The record counts this process as a user for as long as it keeps
/// it, as a generator kept alive would. It lets go of it, with the wait a freed generator
/// has, when a generator of this process needs the identity another way (`process_only`,
/// other terms), when its file was removed, replaced or truncated meanwhile, when more
/// identities than this are kept, when this process removes it ([`remove_shared_state`]),
/// and when the process exits (or the library is unloaded).
const KEPT_MAX: usize = 8;

static AT_EXIT: Once = Once::new();

/// At the process's exit (or the library's unloading): lets go of the records kept open, each
/// with the wait of its last free (see `Drop`). Skipped when another thread holds the list
/// (a generator of another thread then outlives the kept record anyway).
extern "C" fn let_go_of_all_kept() {
    // No unwinding out of a C callback.
    let _ = std::panic::catch_unwind(|| let_go_of_kept(None));
}

/// Lets go of the kept records at `path` (all: `None`) that no generator uses, one at a
/// time, outside the list's lock (each waits as a free does).
fn let_go_of_kept(path: Option<&Path>) {
    let _gate = ForkGate::enter();
    loop {
        let mut held = match (path, HELD.try_lock()) {
            (_, Ok(held)) => held,
            (Some(_), Err(_)) => HELD.lock().unwrap_or_else(|e| e.into_inner()),
            (None, Err(_)) => return,
        };
        let found = held.iter_mut().find(|h| {
            h.kept
                .as_ref()
                .is_some_and(|r| path.is_none() || Arc::strong_count(r) == 1 && Some(r.path()) == path)
        });
        let Some(kept) = found.and_then(|h| h.kept.take()) else { return };
        drop(held);
        drop(kept);
    }
}

/// Why a record could not be held.
pub(crate) enum Refused {
    /// Another process (or a generator of this one) holds the identity in a way that
    /// excludes this one: a lease claim moves on to the next value.
    Taken(Error),
    /// Anything else.
    Failed(Error),
}

impl From<Error> for Refused {
    fn from(e: Error) -> Refused {
        Refused::Failed(e)
    }
}

impl Refused {
    pub(crate) fn error(self) -> Error {
        match self {
            Refused::Taken(e) | Refused::Failed(e) => e,
        }
    }
}

/// The error for a directory or file that cannot be used.
fn refusal(what: &'static str, path: &Path, r: Refusal) -> Error {
    match r {
        Refusal::Io(e) => {
            let fix = match e.kind() {
                std::io::ErrorKind::NotFound => {
                    " (the directory is missing: create it, or set SNOWFLAKE_SHM_DIR to a directory of this user's)"
                }
                std::io::ErrorKind::PermissionDenied => {
                    " (this user may not write there: run the processes of one identity as one user, or give this user's processes other node values)"
                }
                _ => "",
            };
            Error::io_with_hint(what, path.display(), e, fix)
        }
        other => Error::shared_mismatch(
            "file",
            format_args!(
                "{} was refused: {other}. A record of the host's is opened only if it is this user's own regular file in a directory no other user can change; remove it (it may have been planted by another user), or set SNOWFLAKE_SHM_DIR to a directory of this user's",
                path.display()
            ),
        ),
    }
}

impl Record {
    /// Holds this user's record of `req`'s identity as `req.mode` says, setting it up if need
    /// be, and meets the other users' records of it. Refused while another process uses the
    /// identity in a way that excludes this one.
    pub(crate) fn hold(req: &Request<'_>) -> Result<Arc<Record>, Refused> {
        if let Some(label) = req.label {
            if !valid_shared_name(label) {
                return Err(Error::BadOption {
                    name: Name::snippet(label),
                    reason: "a shared name is 1 to 64 of A-Z a-z 0-9 . _ - (not starting with .)",
                }
                .into());
            }
        }
        let dir_path = shm_dir()?;
        let key = req.key();
        let _gate = ForkGate::enter();
        // An identity this process holds already.
        let mut inherited_exclusive = false;
        let mut let_go = None;
        {
            let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
            held.retain(|h| h.record.strong_count() > 0);
            let at = held.iter().position(|h| h.key == key && h.dir == dir_path);
            if let Some(i) = at {
                if let Some(record) = held[i].record.upgrade() {
                    // Kept with no generator using it (the copy here and the kept one): let go
                    // of it, and open anew, unless this generator can use it as it is.
                    let idle = held[i].kept.is_some() && Arc::strong_count(&record) == 2;
                    let inherited = record.fork_generation != sys::current_fork_generation();
                    match (record.mode, req.mode) {
                        // A child of fork() does not hold its parent's exclusive locks: it
                        // opens the record anew below, and finds the parent's lock.
                        (m, _) if m.exclusive() && inherited => inherited_exclusive = true,
                        (Mode::Host, Mode::Host)
                        | (Mode::Alone, Mode::Alone)
                        | (Mode::HostLease, Mode::HostLease)
                        | (Mode::LeaseGuard, Mode::LeaseGuard)
                        | (Mode::Guard, Mode::Guard) => match record.differ(req) {
                            Some(e) if !idle => return Err(Refused::Failed(e)),
                            None if !idle || record.still_whole() => {
                                if inherited {
                                    record.count_process();
                                }
                                return Ok(record);
                            }
                            _ => let_go = Some((held[i].kept.take(), record)),
                        },
                        _ if idle => let_go = Some((held[i].kept.take(), record)),
                        (m, _) => {
                            return Err(Refused::Taken(Error::shared_mismatch(
                                "process_only",
                                format_args!(
                                    "a generator of this process {} with this layout and node values ({}): a generator that would use them another way could repeat its IDs; give it other node values, or the same coordination",
                                    m.describe(),
                                    record.path.display()
                                ),
                            )))
                        }
                    }
                }
            }
        }
        // Outside the list's lock: its last free waits for the clock (see `Drop`).
        drop(let_go);
        let dir = Arc::new(
            Dir::open(&dir_path)
                .map_err(|r| refusal("opening the directory of the host's records", &dir_path, r))?,
        );
        let uid = sys::euid();
        let name = file_name(key, uid, req.mode == Mode::HostLease);
        let path = dir_path.join(&name);
        let record = loop {
            match Record::open(req, &dir, &name, &path, key) {
                Ok(Some(record)) => break record,
                Ok(None) => continue,
                // The parent (or a sibling) still holds what this child inherited.
                Err(Refused::Taken(_)) if inherited_exclusive => {
                    return Err(Refused::Taken(Error::ForkedIdentity))
                }
                Err(e) => return Err(e),
            }
        };
        let record = Arc::new(record);
        if record.mode.exclusive() && sys::zero_in_child(&record.last_valid_tick) {
            // This process's alone: a child of fork() finds its fast path closed (see
            // `Validity::closed_in_child`).
            record.zeroed_in_child.store(true, Ordering::Release);
        }
        if req.mode != Mode::HostLease {
            record.meet_others(req)?;
        }
        let kept = (req.mode == Mode::Host && req.state_file.is_none()).then(|| record.clone());
        let mut let_go = None;
        {
            let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
            if kept.is_some() {
                // At most KEPT_MAX: the oldest goes (the list is in the order of opening).
                let mut n = 0;
                for h in held.iter_mut().rev() {
                    if h.kept.is_some() {
                        n += 1;
                        if n == KEPT_MAX {
                            let_go = h.kept.take();
                        }
                    }
                }
                AT_EXIT.call_once(|| sys::at_exit(let_go_of_all_kept));
            }
            held.push(HeldRecord { key, dir: dir_path, record: Arc::downgrade(&record), kept });
        }
        drop(let_go);
        Ok(record)
    }

    /// Whether this record, kept with no generator using it, is still whole at its name: checked
    /// again now, and renewed once its last check lapsed.
    fn still_whole(&self) -> bool {
        let now_ms = self.clock.now_ms();
        if now_ms < self.valid_until.load(Ordering::Acquire) {
            // Checked within RECHECK_MS, but the file may have gone since: a generator made
            // now must not start on a removed, replaced or truncated record (one made before
            // would stop at its next check, as under a generator that lives). One `fstat` of
            // the open file, no path to walk: removing or replacing its name leaves it no
            // link. (A second name linked to it and the first removed, by its own user, is
            // found by the full check, within RECHECK_MS, as under a live generator.)
            matches!(sys::linked_len(&self.file), Ok((true, len)) if len >= SIZE as u64)
                && self.read(0) == MAGIC
                && !self.map.truncated()
        } else {
            self.check(now_ms).is_ok()
        }
    }

    /// One try at opening `name`: `None` when the file was removed between the open and the
    /// lock (open anew).
    fn open(
        req: &Request<'_>,
        dir: &Arc<Dir>,
        name: &OsStr,
        path: &Path,
        key: u64,
    ) -> Result<Option<Record>, Refused> {
        let mode_bits = if req.mode == Mode::HostLease { 0o600 } else { 0o644 };
        let (file, meta) = sys::open_in(dir, name, Access::Own(Some(mode_bits)))
            .map_err(|r| refusal("opening the host's record", path, r))?;
        let Some(setup) = sys::setup_lock(dir, name, &file, Some(req.deadline()))
            .map_err(|e| io_err("locking", path, e))?
        else {
            return Err(busy(path, "its set-up lock", sys::setup_holder(&file)).into());
        };
        match sys::id_in(dir, name).map_err(|e| io_err("reading", path, e))? {
            Some(id) if id == meta.id => {}
            _ => return Ok(None),
        }
        let len = file.metadata().map_err(|e| io_err("reading", path, e))?.len();
        if len < SIZE as u64 {
            // New, or truncated: what it held is gone; it is set up afresh below (its magic
            // reads 0), past any process still using what it was.
            file.set_len(SIZE as u64).map_err(|e| io_err("sizing", path, e))?;
        }
        let map = Map::shared(&file, SIZE).map_err(|e| io_err("mapping", path, e))?;
        let fresh_clock = MonotonicClock::with_offset_ns(MonotonicClock::current_offset_ns());
        let mut record = Record {
            map,
            file: file.try_clone().map_err(|e| io_err("opening the host's record", path, e))?,
            dir: dir.clone(),
            companion: Mutex::new(None),
            name: name.to_os_string(),
            path: path.to_path_buf(),
            id: meta.id,
            key,
            mode: req.mode,
            layout: *req.layout,
            word: req.word,
            drift_ms: req.policy.max_drift_ms,
            ahead_of_base_ms: 0,
            clock: fresh_clock,
            valid_until: AtomicU64::new(0),
            readings_lead: AtomicBool::new(false),
            last_valid_tick: AtomicU64::new(0),
            zeroed_in_child: AtomicBool::new(false),
            fork_generation: sys::current_fork_generation(),
        };
        let in_use = locks::taken(&record.file, USERS_AT).map_err(|e| io_err("locking", path, e))?;
        let magic = record.read(0);
        if magic == 0 {
            record.set_up(req, dir)?;
        } else if magic != MAGIC {
            return Err(Error::shared_mismatch(
                "file",
                format_args!("{} is not a libsnowflake record (remove it)", path.display()),
            )
            .into());
        } else {
            if record.read(FINGERPRINT_AT) != req.layout.fingerprint()
                || record.read(NODE_AT) != req.node_bits()
            {
                let theirs = record.text(TEXT_AT, TEXT_MAX);
                return Err(Error::shared_mismatch(
                    "layout",
                    format_args!(
                        "{} holds the record of another layout or node values (`{theirs}`), whose name is the same: remove it once no process uses it",
                        path.display()
                    ),
                )
                .into());
            }
            record.ahead_of_base_ms = record.check_time_base(in_use)?;
            match record.differ(req) {
                Some(e) if in_use => return Err(Refused::Taken(e)),
                Some(_) => record.take_over(req),
                None => {}
            }
            let anchor = record.read(ANCHOR_AT) as i64;
            let rebooted = match sys::boot_id() {
                Some(id) => record.bytes(BOOT_AT, 36) != id,
                // Where the system names no boot: a record that no process uses and whose
                // clock reads behind the wall clock by more than TIME_BASE_MS was anchored in
                // an earlier boot (or the wall clock stepped forward since): anchored anew.
                None => {
                    !in_use
                        && MonotonicClock::current_offset_ns().saturating_sub(anchor)
                            > TIME_BASE_MS as i64 * 1_000_000
                }
            };
            if rebooted {
                // Another boot: CLOCK_MONOTONIC restarted. Anchor anew; the state word keeps
                // every new ID above the ones issued before.
                record.write(ANCHOR_AT, MonotonicClock::current_offset_ns() as u64);
                record.set_bytes(BOOT_AT, 36, &boot_id());
                record.write(TIME_BASE_AT, time_base_ns());
            }
            if let Some(label) = req.label {
                if record.label().is_empty() || !in_use {
                    record.set_bytes(LABEL_AT, LABEL_MAX, label.as_bytes());
                }
            }
        }
        record.clock = MonotonicClock::with_offset_ns(record.read(ANCHOR_AT) as i64);
        // Join: the users' lock, shared or exclusive, decides.
        let exclusive = req.mode.exclusive();
        if !locks::take(&record.file, USERS_AT, exclusive).map_err(|e| io_err("locking", path, e))? {
            let e = record.in_use_error(req.mode);
            return Err(Refused::Taken(e));
        }
        if exclusive {
            // The lock is this process's alone: a child of fork() must not keep it.
            sys::drop_in_child(&record.file);
        }
        record.count_process();
        let reach_ms = req.ahead_ms.saturating_add(record.ahead_of_base_ms);
        locks::beacon(&record.file, beacon_at(key, dir), reach_ms.min((1 << 27) - 1) + 1);
        record.write(MODE_AT, req.mode as u64);
        record.write(OWNER_AT, u64::from(sys::euid()));
        drop(setup);
        drop(file);
        // The state starts at or above the request's floor (a state file's record), and above
        // what a guard or a rollover generator left behind.
        record.raise(req.word, req.floor.max(record.read(HIGH_AT)).max(record.read(GUARD_AT)));
        Ok(Some(record))
    }

    /// Adds this process to the record's "who" locks (a child of fork() that goes on using its
    /// parent's record adds its own).
    fn count_process(&self) {
        locks::mark_process(&self.file, PID_AT);
        self.write(PID_WORD_AT, u64::from(sys::pid()));
    }

    /// Sets up a fresh (or truncated) record under its set-up lock: the magic last.
    fn set_up(&self, req: &Request<'_>, dir: &Dir) -> Result<(), Error> {
        self.write(FINGERPRINT_AT, req.layout.fingerprint());
        self.write(NODE_AT, req.node_bits());
        for (i, w) in req.terms().iter().enumerate() {
            self.write(TERMS_AT + 8 * i, *w);
        }
        self.set_bytes(TEXT_AT, TEXT_MAX, req.layout.to_string().as_bytes());
        self.set_bytes(LABEL_AT, LABEL_MAX, req.label.unwrap_or("").as_bytes());
        let anchor = MonotonicClock::current_offset_ns();
        let layout = req.layout;
        let now_ms = MonotonicClock::with_offset_ns(anchor).now_ms();
        let now_tick = layout.tick_of(now_ms).unwrap_or(0);
        // Where the fresh state may start: past anything a process still on a removed copy
        // (or on this file before it was truncated) may issue before its next check, with
        // what it may borrow ahead; with none, at the next tick (a holder killed during this
        // one, whose file was then removed, could have issued in it), or, on a layout of
        // coarse ticks, at this one.
        let start = match self.removed_copies(dir, req) {
            Some(drift_ms) => layout
                .tick_of(now_ms.saturating_add(RECHECK_MS).saturating_add(drift_ms))
                .unwrap_or(now_tick)
                .saturating_add(1),
            None if layout.tick_ms() < 1000 => now_tick.saturating_add(1),
            None => now_tick,
        };
        let start = start.max(req.floor);
        self.state().store(req.word.floor(start, 0), Ordering::Release);
        self.reserved().store(req.reserved, Ordering::Release);
        self.write(HIGH_AT, 0);
        self.write(GUARD_AT, 0);
        self.write(READY_AT, layout.unix_ms_of(start.min(layout.max_tick())));
        self.write(ANCHOR_AT, anchor as u64);
        self.set_bytes(BOOT_AT, 36, &boot_id());
        self.write(TIME_BASE_AT, time_base_ns());
        for at in [HOST_VALUE_AT, HOST_EPOCH_AT, HOST_VALID_AT, HOST_RESERVED_AT, HOST_RESERVED_EPOCH_AT] {
            self.write(at, 0);
        }
        let token = if req.mode == Mode::HostLease { new_token() } else { String::new() };
        self.set_bytes(TOKEN_AT, TOKEN_LEN, token.as_bytes());
        self.write(0, MAGIC);
        Ok(())
    }

    /// How far ahead processes still using a removed (or truncated) copy of this record may
    /// issue, from their beacons: `None` when there are none (or the system keeps a record in
    /// use from being removed). Where the kernel lists no locks, a removed copy's users are
    /// taken to borrow as far ahead as this one may (`max_drift_ms`), and `RECHECK_MS`
    /// covers them.
    fn removed_copies(&self, dir: &Dir, req: &Request<'_>) -> Option<u64> {
        let found = match locks::beacons(dir, beacon_at(self.key, dir)) {
            locks::Beacons::Unneeded => return None,
            locks::Beacons::Unlisted => return Some(req.policy.max_drift_ms),
            locks::Beacons::Listed(found) => found,
        };
        // The records of this key that are at their names now (other users').
        let current: Vec<FileId> = dir
            .names()
            .unwrap_or_default()
            .iter()
            .filter(|n| parse_name(n).is_some_and(|(k, uid, _)| k == self.key && uid != sys::euid()))
            .filter_map(|n| sys::id_in(dir, n).ok().flatten())
            .collect();
        found.iter().filter(|(id, _)| !current.contains(id)).map(|(_, len)| *len).max()
    }

    /// Takes over a record that no process uses, for `req`'s terms (under the set-up lock):
    /// the state word keeps its high-water mark (converted when the rollover term changes);
    /// the reservation is the new state file's; a host lease starts anew.
    fn take_over(&self, req: &Request<'_>) {
        let old_rollover = self.read(TERMS_AT);
        let new_terms = req.terms();
        if old_rollover != new_terms[0] {
            let mark = self.mark(self.word_of(old_rollover, req.layout));
            self.state().store(req.word.floor(mark, 0), Ordering::Release);
            self.write(HIGH_AT, 0);
        }
        let host_lease_changed = self.read(TERMS_AT + 32) != new_terms[4];
        for (i, w) in new_terms.iter().enumerate() {
            self.write(TERMS_AT + 8 * i, *w);
        }
        self.reserved().store(req.reserved, Ordering::Release);
        if host_lease_changed {
            for at in [HOST_VALUE_AT, HOST_EPOCH_AT, HOST_VALID_AT, HOST_RESERVED_AT, HOST_RESERVED_EPOCH_AT]
            {
                self.write(at, 0);
            }
        }
        let token = if req.mode == Mode::HostLease { new_token() } else { String::new() };
        if host_lease_changed || req.mode == Mode::HostLease && self.host_token().trim().is_empty() {
            self.set_bytes(TOKEN_AT, TOKEN_LEN, token.as_bytes());
        }
        self.set_bytes(LABEL_AT, LABEL_MAX, req.label.unwrap_or("").as_bytes());
    }

    /// The state word's format under a rollover term of `rollover` (field + 1, or 0).
    fn word_of(&self, rollover: u64, layout: &Layout) -> Word {
        let roll_bits = rollover
            .checked_sub(1)
            .and_then(|i| layout.fields().get(i as usize))
            .map_or(0, |f| u32::from(f.bits()));
        Word::new(layout.sequence().bits().into(), roll_bits, layout.max_tick())
    }

    /// The end (an exclusive tick) of everything issued from this record, by any mode: the
    /// state word's, a rollover generator's highest, the reservation.
    fn mark(&self, word: Word) -> u64 {
        header_mark(word, self.read(STATE_AT), self.read(HIGH_AT), self.read(GUARD_AT))
    }

    /// Refuses a joiner whose monotonic clock strays from the record's users' (see the module
    /// docs); re-anchors a record that no process uses. Returns how far ahead of theirs this
    /// process's clock runs (ms, within the tolerance; 0 when behind or unknown).
    fn check_time_base(&self, in_use: bool) -> Result<u64, Error> {
        let theirs = self.read(TIME_BASE_AT);
        let mine = time_base_ns();
        if theirs == 0 || mine == 0 || self.bytes(BOOT_AT, 36) != boot_id() {
            return Ok(0);
        }
        // A clock ahead reads a larger CLOCK_MONOTONIC: a smaller `uptime - monotonic`.
        let ahead_ns = (theirs as i64).wrapping_sub(mine as i64);
        let off_ms = ahead_ns.unsigned_abs() / 1_000_000;
        if off_ms <= TIME_BASE_MS {
            return Ok(if ahead_ns > TIME_BASE_NOISE_NS { off_ms + 1 } else { 0 });
        }
        if !in_use {
            self.write(ANCHOR_AT, MonotonicClock::current_offset_ns() as u64);
            self.write(TIME_BASE_AT, mine);
            return Ok(0);
        }
        Err(Error::shared_mismatch(
            "clock",
            format_args!(
                "this process's monotonic clock is {off_ms} ms off the one the processes using {} run on (it runs in another time namespace, under a faked clock, or the host was suspended since they last issued): its IDs would carry another time than theirs. Run it with the host's clock, or stop the others first (a record that no process uses takes the next process's clock)",
                self.path.display()
            ),
        ))
    }

    /// The first term `req` disagrees on with the record, as the error that names it.
    fn differ(&self, req: &Request<'_>) -> Option<Error> {
        let theirs: [u64; TERMS] = std::array::from_fn(|i| self.read(TERMS_AT + 8 * i));
        let (what, detail) = admission::differ(&theirs, &req.terms(), req.layout, req.state_file)?;
        let label = self.label();
        let named = if label.is_empty() { String::new() } else { format!(" (shared={label})") };
        let who = who_holds(&self.file, &self.path);
        let who = format!("{who}, which uses the host's record {}{named},", self.path.display());
        Some(admission::mismatch(what, &detail, &who))
    }

    /// The error for a joiner that the users' lock refused: who uses the record, and how.
    fn in_use_error(&self, mine: Mode) -> Error {
        let theirs = Mode::from_word(self.read(MODE_AT)).unwrap_or(Mode::Host);
        let who = who_holds(&self.file, &self.path);
        let mine = mine.way().would;
        Error::shared_mismatch(
            "in use",
            format_args!(
                "{who} {} with this layout and node values ({}), and this generator would {mine}: two ways of issuing with one identity could repeat each other's IDs. Give one of them other node values, or the same coordination",
                theirs.describe(),
                self.path.display()
            ),
        )
    }

    /// After joining: refuses while another user's process uses this identity, or while any
    /// process uses a record whose IDs may meet this one's through a rollover counter (its or
    /// this one's); raises the state above the marks this generator can reach; refuses what it
    /// cannot (see the module docs).
    fn meet_others(&self, req: &Request<'_>) -> Result<(), Refused> {
        let layout = req.layout;
        let node = req.node;
        let my_bits = req.node_bits();
        // What to look at: the other users' records of this key; for a generator without a
        // rollover field, the records of rollover generators that may reach its values (the
        // key of its values with that field at 0); a rollover generator looks at every record
        // of the layout (a counter reaches every value of its field, whatever its width).
        let mut keys: Vec<u64> = vec![self.key];
        for (i, _) in layout.node_fields() {
            if Some(i) != req.rollover && node.get(i) != 0 {
                keys.push(key_of(layout, &node.with(i, 0), None, None));
            }
        }
        let dir_path = self.dir.path();
        let names = self.dir.names().map_err(|e| io_err("listing", dir_path, e))?;
        let uid = sys::euid();
        let mut floor = 0u64;
        let now_ms = self.clock.now_ms();
        let now_tick = layout.tick_of(now_ms).unwrap_or(0);
        // What this generator could reach itself: the clock's tick, its drift, and the tick's
        // end. A mark within it is a floor (a real one, on any tick, is never ignored); one
        // beyond it would hold this user's record there, copied, after the other's is gone: it
        // is refused, never copied.
        let reach = now_tick.saturating_add(req.policy.max_drift_ms / layout.tick_ms()).saturating_add(1);
        let word = req.word;
        for name in names {
            let Some((k, their_uid, false)) = parse_name(&name) else { continue };
            if k == self.key && their_uid == uid {
                continue; // our own record
            }
            if req.rollover.is_none() && !keys.contains(&k) {
                continue;
            }
            let path = dir_path.join(&name);
            let Ok((file, meta)) = sys::open_in(&self.dir, &name, Access::Read) else { continue };
            // A record is its owner's, named with its uid, and written by it alone: another
            // (a file planted under another's name) is nobody's record.
            if meta.owner != their_uid || meta.shared_write {
                continue;
            }
            let Ok(header) = sys::read_bounded(&file, SIZE) else { continue };
            if header.len() < SIZE
                || word_at(&header, 0) != MAGIC
                || word_at(&header, FINGERPRINT_AT) != layout.fingerprint()
            {
                continue;
            }
            let their_roll = word_at(&header, TERMS_AT).checked_sub(1).map(|i| i as usize);
            if k != self.key
                && !reach_meets(layout, my_bits, req.rollover, word_at(&header, NODE_AT), their_roll)
            {
                continue;
            }
            let live = locks::taken(&file, USERS_AT).unwrap_or(true);
            if live && k == self.key {
                return Err(Refused::Taken(self.foreign_error(&file, &path, their_uid, &header)));
            }
            if live {
                return Err(Refused::Taken(self.rollover_error(&file, &path, their_uid, &header, req)));
            }
            let mark = header_mark(
                self.word_of(word_at(&header, TERMS_AT), layout),
                word_at(&header, STATE_AT),
                word_at(&header, HIGH_AT),
                word_at(&header, GUARD_AT),
            );
            if k != self.key && req.rollover.is_some() {
                // IDs left at values this generator's counter can reach: its counter restarts
                // at the clock, wherever that went back to, so no floor covers them.
                return Err(Refused::Taken(self.left_error(&path, their_uid, mark, req)));
            }
            if mark > reach {
                return Err(Refused::Taken(self.ahead_error(&file, &path, their_uid, mark, now_ms, req)));
            }
            floor = floor.max(mark);
        }
        if floor > 0 {
            self.raise(word, floor);
        }
        Ok(())
    }

    /// Raises the state word to start at or above `tick`.
    fn raise(&self, word: Word, tick: u64) {
        word.raise_to(self.state(), tick);
    }

    fn foreign_error(&self, file: &File, path: &Path, uid: u32, header: &[u8]) -> Error {
        let theirs = Mode::from_word(word_at(header, MODE_AT)).unwrap_or(Mode::Host);
        Error::shared_mismatch(
            "user",
            format_args!(
                "{} {} with this layout and node values on this host ({}), and processes of different users never share a state: give this user's processes other node values, or run them as one user",
                who_of(file, path, uid),
                theirs.describe(),
                path.display()
            ),
        )
    }

    /// The error for another user's record whose mark is beyond what this generator could
    /// reach (a holder that borrowed ahead and was killed, or a mark planted: layouts and node
    /// values are public, any ID decodes to them).
    fn ahead_error(
        &self,
        file: &File,
        path: &Path,
        uid: u32,
        mark: u64,
        now_ms: u64,
        req: &Request<'_>,
    ) -> Error {
        let end_ms = req.layout.unix_ms_of(mark.min(req.layout.max_tick()));
        Error::shared_mismatch(
            "user",
            format_args!(
                "{} left a record of this layout and node values ({}) whose IDs run to {}, {} ms ahead of this clock, beyond what this generator may borrow (max_drift_ms={}): it would have to start past them. Retry after that time; the mark may have been planted (layouts and node values can be read from any ID): its owner or root can remove the record once no process uses it. Or give this user's processes other node values",
                who_of(file, path, uid),
                path.display(),
                rfc3339(end_ms),
                end_ms.saturating_sub(now_ms),
                req.policy.max_drift_ms
            ),
        )
    }

    /// The error for a rollover generator that meets a record left (no process uses it) at
    /// node values its counter can reach.
    fn left_error(&self, path: &Path, uid: u32, mark: u64, req: &Request<'_>) -> Error {
        let end_ms = req.layout.unix_ms_of(mark.min(req.layout.max_tick()));
        let field = req.rollover.and_then(|r| req.layout.fields().get(r)).map_or("?", |f| f.name());
        Error::shared_mismatch(
            "rollover",
            format_args!(
                "{} left {}, a record of node values that this generator's rollover={field} may reach, with IDs up to {}: after a step back of the clock the counter would issue at them again. Remove that record (`snowflake shared remove`, by its user) if nothing issues with those values any more, or give one of them other node values",
                sys::user_name(uid),
                path.display(),
                rfc3339(end_ms)
            ),
        )
    }

    fn rollover_error(&self, file: &File, path: &Path, uid: u32, header: &[u8], req: &Request<'_>) -> Error {
        let field = |k: u64| {
            k.checked_sub(1)
                .and_then(|i| req.layout.fields().get(i as usize))
                .map_or("?".to_string(), |f| f.name().to_string())
        };
        let theirs = word_at(header, TERMS_AT);
        let detail = match (theirs, req.rollover) {
            (t, _) if t != 0 => {
                format!("has rollover={}: its counter may reach this generator's node values", field(t))
            }
            (_, Some(r)) => {
                format!("uses node values that this generator's rollover={} may reach", field(r as u64 + 1))
            }
            _ => "uses node values this generator may reach".to_string(),
        };
        Error::shared_mismatch(
            "rollover",
            format_args!(
                "{} {detail} ({}): the two could repeat each other's IDs. Give one of them other node values",
                who_of(file, path, uid),
                path.display()
            ),
        )
    }

    fn read(&self, at: usize) -> u64 {
        self.map.word(at).load(Ordering::Acquire)
    }

    fn write(&self, at: usize, v: u64) {
        self.map.word(at).store(v, Ordering::Release)
    }

    fn bytes(&self, at: usize, n: usize) -> &[u8] {
        self.map.bytes(at, n)
    }

    fn set_bytes(&self, at: usize, n: usize, src: &[u8]) {
        self.map.set_bytes(at, n, src)
    }

    fn text(&self, at: usize, max: usize) -> String {
        let text = self.bytes(at, max);
        let end = text.iter().position(|&b| b == 0).unwrap_or(max);
        String::from_utf8_lossy(&text[..end]).into_owned()
    }

    /// The name last given to this state with `shared=` (empty when none).
    fn label(&self) -> String {
        self.text(LABEL_AT, LABEL_MAX)
    }

    /// A host lease's claim epoch (see [`HostWords::host_epoch`]), for the fast path's check
    /// that a process's claim is still its host's.
    pub(crate) fn host_epoch_word(&self) -> &AtomicU64 {
        self.map.word(HOST_EPOCH_AT)
    }

    /// The state word.
    pub(crate) fn state(&self) -> &AtomicU64 {
        self.map.word(STATE_AT)
    }

    /// A state file's reservation (an exclusive tick; `u64::MAX` for none).
    pub(crate) fn reserved(&self) -> &AtomicU64 {
        self.map.word(RESERVED_AT)
    }

    /// The highest tick a rollover generator left behind when it bumped its counter.
    pub(crate) fn high(&self) -> &AtomicU64 {
        self.map.word(HIGH_AT)
    }

    /// A guard's reservation: nothing at or past `end_tick` (exclusive) was issued or will be
    /// before this is raised again. Lowered only by the guard that raised it ([`Record::settle`]).
    pub(crate) fn guard_reserve(&self, end_tick: u64) {
        self.map.word(GUARD_AT).fetch_max(end_tick, Ordering::AcqRel);
    }

    /// A guard's last word: everything it issued ends before `end_tick` (`word`'s format).
    pub(crate) fn settle(&self, word: Word, end_tick: u64) {
        self.raise(word, end_tick);
        if !self.others_use_it() {
            self.write(GUARD_AT, 0);
        }
    }

    /// Where every ID issued from this record so far ends (exclusive tick), in the format
    /// `word`.
    pub(crate) fn issued_end(&self, word: Word) -> u64 {
        self.mark(word)
    }

    /// Opens `<record's name><suffix>` beside the record (this user's, never through a link).
    pub(crate) fn companion_file(&self, suffix: &str) -> Result<File, Error> {
        let mut name = self.name.clone();
        name.push(suffix);
        sys::open_in(&self.dir, &name, Access::Own(Some(0o600)))
            .map(|(f, _)| f)
            .map_err(|r| refusal("opening", &self.dir.path().join(&name), r))
    }

    /// Whether another open file (another process, or another copy of the library in this
    /// one) uses the record now.
    pub(crate) fn others_use_it(&self) -> bool {
        locks::taken_by_others(&self.file, USERS_AT, self.mode.exclusive(), PID_AT).unwrap_or(true)
    }

    /// The record's clock.
    pub(crate) fn clock(&self) -> MonotonicClock {
        self.clock
    }

    /// When a fresh state may first issue (ms on the record's clock).
    pub(crate) fn ready_ms(&self) -> u64 {
        self.read(READY_AT)
    }

    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The lock for claims and reservations of a host lease (the record's set-up lock),
    /// waited for until `deadline` at most.
    pub(crate) fn lock_until(&self, deadline: Instant) -> Result<Setup<'_>, Error> {
        match sys::setup_lock(&self.dir, &self.name, &self.file, Some(deadline))
            .map_err(|e| io_err("locking", &self.path, e))?
        {
            Some(lock) => Ok(lock),
            None => Err(busy(&self.path, "its lock", sys::setup_holder(&self.file))),
        }
    }

    /// The end (an exclusive tick) of every ID this process may have issued from the record,
    /// from its own memory alone: its generators issue at readings below `valid_until`, at
    /// most `max_drift_ms` ahead of them. What the mapping says does not count (a truncated or
    /// overwritten record says nothing true). 0 when this process never issued from it.
    ///
    /// `settled`: no generator of this process uses the record any more (its last one is
    /// gone). Then, unless one may have issued at a reading ahead of the record's clock
    /// (`readings_lead`), every reading was at or before the clock's reading now, and the end
    /// is no later than its tick and the drift: the bound a process that frees its last
    /// generator waits for, not the `RECHECK_MS` of `valid_until` beyond it (a process
    /// freeing a generator made per request waited 50 ms each time). While generators may
    /// still issue (a loss found under them), they may read the clock later: `valid_until`.
    fn own_end(&self, settled: bool) -> u64 {
        let until = self.valid_until.load(Ordering::Acquire);
        let Some(mut last) = until.checked_sub(1).and_then(|ms| self.layout.tick_of(ms).ok()) else {
            return 0;
        };
        if settled && !self.readings_lead.load(Ordering::Acquire) {
            if let Ok(now_tick) = self.layout.tick_of(self.clock.now_ms()) {
                last = last.min(now_tick);
            }
        }
        last.saturating_add(self.drift_ms / self.layout.tick_ms()).saturating_add(1)
    }

    /// Waits, holding this process's beacon, until the clock passes the end (an exclusive
    /// tick) of IDs issued from the record: a record made anew while it waits starts past the
    /// beacon, and one made after starts past the clock. An end within the next tick needs no
    /// wait (a record made anew starts there; on a layout of ticks of a second or more, at the
    /// current tick: that tick is the documented residue); one further than [`LAST_WAIT_MS`]
    /// is not waited for, and is returned (in Unix ms) for the caller to say so.
    ///
    /// A process whose clock runs ahead of the record's users' (within [`TIME_BASE_MS`])
    /// waits that much longer: the record made anew reads the others' clock.
    fn wait_past(&self, end: u64) -> Option<u64> {
        // This process's reading, on the clock of the record's users.
        let now_ms = self.clock.now_ms().saturating_sub(self.ahead_of_base_ms);
        let now_tick = self.layout.tick_of(now_ms).unwrap_or(0);
        if end <= now_tick.saturating_add(1) {
            return None;
        }
        let end_ms = self.layout.unix_ms_of(end.min(self.layout.max_tick()));
        if end_ms.saturating_sub(now_ms) > LAST_WAIT_MS {
            return Some(end_ms);
        }
        self.clock.wait_until_ms(end_ms.saturating_add(self.ahead_of_base_ms));
        None
    }

    /// The error for a record lost under this process, once the clock has passed what this
    /// process issued from it (see [`Record::wait_past`]): the wait is here, where the library
    /// learns of the loss, so it holds whatever the program does next (`return 1` without
    /// freeing the generator, `process.exit`, `_exit`, a PHP fatal error).
    fn lost(&self, how: &str) -> Error {
        let gave_up = match self.wait_past(self.own_end(false)) {
            None => String::new(),
            Some(end_ms) => format!(
                " This process issued IDs up to {} ({} ms ahead of the clock, more than the {LAST_WAIT_MS} ms it waits): a record made anew before then may repeat them.",
                rfc3339(end_ms),
                end_ms.saturating_sub(self.clock.now_ms())
            ),
        };
        Error::shared_mismatch(
            "removed",
            format_args!(
                "{} was {how} while this process used it, so a new process could start a state beside this one: this generator stops issuing (a new one joins the record at the name).{gave_up} systemd-logind removes a user's files in /dev/shm when their last session ends (RemoveIPC=yes, its default): set RemoveIPC=no in /etc/systemd/logind.conf, or run the service as a system user; and keep cleaners away from SNOWFLAKE_SHM_DIR",
                self.path.display()
            ),
        )
    }
}

impl Drop for Record {
    /// The last use of the record in this process. When no other process uses it and its
    /// IDs are ahead of the clock (borrowed with `max_drift_ms`), waits for the clock to pass
    /// them, holding the beacon: a record removed now (RemoveIPC at logout, a cleaner) and
    /// made anew sees the beacon and starts above them. What this process issued is known from
    /// its own memory even when the mapping was truncated ([`Record::own_end`]); the state
    /// word adds what the others that used it issued. The wait is bounded by
    /// [`LAST_WAIT_MS`], and says so on standard error when it gives up. A process killed
    /// instead leaves no beacon: that residue is documented (docs/processes.md).
    fn drop(&mut self) {
        let own = self.fork_generation == sys::current_fork_generation();
        if (own || !self.mode.exclusive()) && !self.others_use_it() {
            let mut end = self.own_end(true);
            if !self.map.truncated() && self.read(0) == MAGIC {
                let mark = self.mark(self.word).min(self.layout.max_tick());
                let ahead_ms = self.layout.unix_ms_of(mark).saturating_sub(self.clock.now_ms());
                // At most the record's drift and two ticks: a state further ahead is a clock
                // of the caller's, not IDs this clock will reach soon.
                let bound = self
                    .read(TERMS_AT + 8)
                    .saturating_add(2 * self.layout.tick_ms())
                    .saturating_add(RECHECK_MS);
                if ahead_ms <= bound {
                    end = end.max(mark);
                }
            }
            if let Some(end_ms) = self.wait_past(end) {
                // A destructor has no caller to tell: standard error is where this is seen.
                eprintln!(
                    "libsnowflake: {} was left with IDs issued up to {} ({} ms ahead of the clock); this process did not wait for them (it waits {LAST_WAIT_MS} ms at most): a record of this identity removed and made anew before then may repeat them",
                    self.path.display(),
                    rfc3339(end_ms),
                    end_ms.saturating_sub(self.clock.now_ms())
                );
            }
        }
        if self.mode.exclusive() && own {
            sys::keep_in_child(&self.file);
        }
        if self.zeroed_in_child.load(Ordering::Acquire) {
            // In a child too: its copy of the list names this record's word.
            sys::unzero_in_child(&self.last_valid_tick);
        }
    }
}

/// A guard whose state is its process's (a clock of the caller's): when the last generator
/// using it goes, the record keeps the end of what it issued.
pub(crate) struct Settle {
    pub record: Arc<Record>,
    pub state: Arc<AtomicU64>,
    pub word: Word,
}

impl Drop for Settle {
    fn drop(&mut self) {
        if self.record.fork_generation != sys::current_fork_generation() {
            return;
        }
        if let Some(end) = self.word.issued_end(self.state.load(Ordering::Acquire)) {
            self.record.settle(self.word, end);
        }
    }
}

/// Whether IDs of node bits `a` (with a rollover field `roll_a`, whose value in `a` is 0) and
/// of `b` (`roll_b`) can carry the same node values: every field agrees, but for a rollover
/// field of either, which reaches every value.
fn reach_meets(layout: &Layout, a: u64, roll_a: Option<usize>, b: u64, roll_b: Option<usize>) -> bool {
    let fields = layout.fields();
    layout
        .node_fields()
        .all(|(i, _)| Some(i) == roll_a || Some(i) == roll_b || fields[i].get(a) == fields[i].get(b))
}

fn word_at(header: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(header[at..at + 8].try_into().expect("8 bytes"))
}

/// The end (exclusive tick) of what a record's words say was issued: its state word's, a
/// rollover generator's highest tick, a guard's reservation.
fn header_mark(word: Word, state: u64, high: u64, guard: u64) -> u64 {
    let (l, _, s) = word.unpack(state);
    let end = word.issued_end(state).unwrap_or(if s > 0 { l + 1 } else { l });
    end.max(high).max(guard)
}

/// Where the beacon of `key`'s records in `dir` is: a hash of both, so that records of one
/// identity in two directories (two `SNOWFLAKE_SHM_DIR`s, which do not meet) never read each
/// other's beacons.
fn beacon_at(key: u64, dir: &Dir) -> u64 {
    let mut h = crate::hash::Fnv1a::new();
    let _ = std::fmt::Write::write_fmt(&mut h, format_args!("{key:016x}{:x}.{:x}", dir.dev(), dir.ino()));
    BEACON_AT + (h.0 & ((1 << 33) - 1)) * (1 << 28)
}

/// The processes holding "who" locks on `file`, where the system lists them.
fn pids_of(file: &File) -> Vec<u32> {
    locks::marked(file, PID_AT)
}

/// "Process 123 of user www-data (uid 33)", or what can be known of it.
fn who_of(file: &File, _path: &Path, uid: u32) -> String {
    let pids = pids_of(file);
    let user = sys::user_name(uid);
    match pids.as_slice() {
        [] => format!("a process of {user}"),
        [p] => format!("process {p} of {user}"),
        ps => format!("processes {} of {user}", ps.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")),
    }
}

/// Who holds this user's record (the same user).
fn who_holds(file: &File, path: &Path) -> String {
    who_of(file, path, sys::euid())
}

/// A lock held past the wait allowed.
pub(crate) fn busy(path: &Path, what: &str, holder: Option<u32>) -> Error {
    let holder = match holder {
        Some(pid) => format!("process {pid}"),
        None => "another process".to_string(),
    };
    Error::busy(format_args!(
        "{holder} held {what} on {} longer than this call may wait (max_wait_ms, and at least {OPEN_GRACE_MS} ms when opening): is it stopped (SIGSTOP, docker pause)? Retry, or resume or end it",
        path.display()
    ))
}

/// A token that no other host's state has: 16 random bytes, in hex.
fn new_token() -> String {
    let mut bytes = [0u8; TOKEN_LEN / 2];
    if !sys::random_bytes(&mut bytes) {
        // No random source: this boot, this process, this instant.
        let mut h = crate::hash::Fnv1a::new();
        let _ = std::fmt::Write::write_fmt(
            &mut h,
            format_args!("{:?}{}{}", boot_id(), std::process::id(), MonotonicClock::current_offset_ns()),
        );
        bytes[..8].copy_from_slice(&h.0.to_le_bytes());
        bytes[8..].copy_from_slice(&sys::monotonic_ns().to_le_bytes());
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The words of a host lease (`lease=` with `shared=`), which every process of the host
/// shares: the lease's Redis token, the value claimed, and a claim *epoch* that grows with
/// every claim that was not already the host's (so a word tagged with an epoch speaks of one
/// claim only). The validity and the reservation are written by whichever process renewed or
/// reserved in Redis, and read by the others instead of asking Redis themselves.
pub(crate) trait HostWords {
    /// The host's Redis token.
    fn host_token(&self) -> String;
    /// The host's lock, for claims and reservations (the file's `flock`).
    fn host_lock(&self, deadline: Instant) -> Result<Setup<'_>, Error>;
    /// The value the host claimed last.
    fn host_value(&self) -> Option<u64>;
    /// The current claim's epoch.
    fn host_epoch(&self) -> u64;
    /// Records a claim of `value` (under the lock): the same epoch when it is the host's
    /// claim already, else a new one. Returns the epoch.
    fn host_claimed(&self, value: u64, already_ours: bool) -> u64;
    /// Until when (ms on the file's clock) a renewal of the claim of `epoch` lets it issue.
    fn host_valid(&self, epoch: u64) -> Option<u64>;
    /// Records a renewal of the claim of `epoch`, valid until `until_ms`.
    fn host_renewed(&self, epoch: u64, until_ms: u64);
    /// The reservation stored in Redis for the claim of `epoch` (under the lock).
    fn host_reserved(&self, epoch: u64) -> Option<u64>;
    /// Records a reservation stored in Redis for the claim of `epoch` (under the lock).
    fn host_reserve(&self, epoch: u64, end: u64);
}

const EPOCH_MASK: u64 = (1 << (64 - VALID_BITS)) - 1;

impl HostWords for Record {
    fn host_token(&self) -> String {
        String::from_utf8_lossy(self.bytes(TOKEN_AT, TOKEN_LEN)).into_owned()
    }

    fn host_lock(&self, deadline: Instant) -> Result<Setup<'_>, Error> {
        self.lock_until(deadline)
    }

    fn host_value(&self) -> Option<u64> {
        self.read(HOST_VALUE_AT).checked_sub(1)
    }

    fn host_epoch(&self) -> u64 {
        self.read(HOST_EPOCH_AT)
    }

    fn host_claimed(&self, value: u64, already_ours: bool) -> u64 {
        if already_ours && self.host_value() == Some(value) {
            return self.host_epoch();
        }
        self.write(HOST_VALUE_AT, value + 1);
        self.map.word(HOST_EPOCH_AT).fetch_add(1, Ordering::AcqRel) + 1
    }

    fn host_valid(&self, epoch: u64) -> Option<u64> {
        let w = self.read(HOST_VALID_AT);
        (w >> VALID_BITS == epoch & EPOCH_MASK).then_some(w & ((1 << VALID_BITS) - 1))
    }

    fn host_renewed(&self, epoch: u64, until_ms: u64) {
        let word = self.map.word(HOST_VALID_AT);
        let new = (epoch & EPOCH_MASK) << VALID_BITS | until_ms.min((1 << VALID_BITS) - 1);
        let mut cur = word.load(Ordering::Acquire);
        loop {
            // Only the current claim's renewals are recorded, and only forward.
            let stale = self.host_epoch() != epoch || (cur >> VALID_BITS == epoch & EPOCH_MASK && cur >= new);
            if stale {
                return;
            }
            match word.compare_exchange(cur, new, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return,
                Err(now) => cur = now,
            }
        }
    }

    fn host_reserved(&self, epoch: u64) -> Option<u64> {
        (self.read(HOST_RESERVED_EPOCH_AT) == epoch).then(|| self.read(HOST_RESERVED_AT))
    }

    fn host_reserve(&self, epoch: u64, end: u64) {
        if self.host_epoch() != epoch {
            return;
        }
        if self.host_reserved(epoch).is_some_and(|r| r >= end) {
            return;
        }
        // Under the lock: readers hold it too, so the two words are read together.
        self.write(HOST_RESERVED_EPOCH_AT, epoch);
        self.write(HOST_RESERVED_AT, end);
    }
}

impl Validity for Record {
    fn valid_until(&self) -> &AtomicU64 {
        &self.valid_until
    }

    /// Checks that the name still holds the file mapped, whole; `fresh_ms` was read before.
    fn renew(&self, fresh_ms: u64) -> Result<(), Error> {
        self.check(fresh_ms).map_err(|fault| match fault {
            Fault::Lost(how) => self.lost(how),
            Fault::Io(e) => io_err("checking the host's record", &self.path, e),
        })
    }

    fn last_valid_tick(&self, layout: &Layout) -> Option<&AtomicU64> {
        (*layout == self.layout).then_some(&self.last_valid_tick)
    }

    fn closed_in_child(&self) -> bool {
        self.zeroed_in_child.load(Ordering::Acquire)
    }

    fn readings_may_lead(&self) {
        if !self.readings_lead.load(Ordering::Relaxed) {
            self.readings_lead.store(true, Ordering::Release);
        }
    }
}

impl Record {
    /// [`Validity::renew`]'s check, and what it moves when the file is whole at its name.
    fn check(&self, fresh_ms: u64) -> Result<(), Fault> {
        if self.map.truncated() {
            return Err(Fault::Lost("truncated"));
        }
        match self.file.metadata() {
            Ok(meta) if meta.len() < SIZE as u64 => return Err(Fault::Lost("truncated")),
            Ok(_) => {}
            Err(e) => return Err(Fault::Io(e)),
        }
        match sys::id_in(&self.dir, &self.name) {
            Ok(Some(id)) if id == self.id => {}
            Ok(Some(_)) => return Err(Fault::Lost("replaced by another file")),
            Ok(None) => return Err(Fault::Lost("removed")),
            Err(e) => return Err(Fault::Io(e)),
        }
        if self.read(0) != MAGIC {
            // (A truncation between the checks above and this read is caught by the SIGBUS
            // guard, which says so.)
            return Err(Fault::Lost(if self.map.truncated() { "truncated" } else { "overwritten" }));
        }
        // The users' view of the host's time base, kept current (a suspend moves it for all).
        let mine = time_base_ns();
        if mine != 0 {
            self.write(TIME_BASE_AT, mine);
        }
        let until = fresh_ms.saturating_add(RECHECK_MS);
        self.valid_until.fetch_max(until, Ordering::AcqRel);
        // The ticks wholly below `until` (`t + 1` ticks past the epoch end at or before it),
        // short of the layout's last tick, which the fast path leaves to the general one.
        let (layout, ms) = (&self.layout, until.saturating_sub(self.layout.epoch_ms()));
        let last = (ms / layout.tick_ms()).min(layout.max_tick()).saturating_sub(1);
        self.last_valid_tick.fetch_max(last, Ordering::AcqRel);
        Ok(())
    }
}

/// Why a record's check failed.
enum Fault {
    /// The file at its name is no longer the one mapped, whole: how.
    Lost(&'static str),
    Io(std::io::Error),
}

/// A record of the host's, as `snowflake shared list` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedState {
    /// Its file.
    pub path: PathBuf,
    /// The user it belongs to (`user www-data (uid 33)`).
    pub user: String,
    /// The name last given to it with `shared=` (empty when none).
    pub name: String,
    /// The layout's canonical text.
    pub layout: String,
    /// The node values, `name=value,...` (a rollover field's aside).
    pub node: String,
    /// The terms its users agree on: `max_drift_ms=…;sequence_start=…`, then `rollover=`,
    /// `state_file` and `host_lease=` when they apply.
    pub terms: String,
    /// How its processes issue (`host`, `process_only`, `lease=local`, ...), the last
    /// joiner's.
    pub mode: String,
    /// Whether a process uses it now, and which (where the kernel says).
    pub in_use: bool,
    /// The processes that use it, where the kernel says.
    pub pids: Vec<u32>,
    /// The time of its next free slot, in Unix ms: every ID it issued is below it.
    pub next_ms: u64,
    /// Its clock: `wall - CLOCK_MONOTONIC` in ms, as anchored when it was set up.
    pub anchor_ms: i64,
    /// How far this process's monotonic clock is from its users', in ms (see the module
    /// docs).
    pub time_base_off_ms: i64,
}

impl std::fmt::Display for SharedState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = if self.name.is_empty() { "-" } else { &self.name };
        let users = match (self.in_use, self.pids.as_slice()) {
            (false, _) => "unused".to_string(),
            (true, []) => "in use".to_string(),
            (true, ps) => {
                format!("in use by {}", ps.iter().map(u32::to_string).collect::<Vec<_>>().join(","))
            }
        };
        write!(
            f,
            "{}\t{}\t{name}\t{}\t{users}\t{}\t{}\t{}\t{}\tclock {:+} ms",
            self.path.display(),
            self.user,
            self.mode,
            self.layout,
            self.node,
            self.terms,
            rfc3339(self.next_ms),
            self.time_base_off_ms
        )
    }
}

fn rfc3339(unix_ms: u64) -> String {
    let mut buf = [0u8; crate::time::RFC3339_LEN];
    crate::time::format_rfc3339(unix_ms, &mut buf).map_or_else(|| format!("{unix_ms} ms"), str::to_string)
}

/// Reads the record `file` at `path` (never mapping it: a file someone truncates kills no
/// one here).
fn read_state(path: &Path, file: &File, uid: u32) -> Result<SharedState, Error> {
    let header = sys::read_bounded(file, SIZE).map_err(|e| io_err("reading", path, e))?;
    if header.len() < SIZE || word_at(&header, 0) != MAGIC {
        return Err(Error::shared_mismatch(
            "file",
            format_args!("{} is not a set-up libsnowflake record", path.display()),
        ));
    }
    let text = |at: usize, max: usize| {
        let b = &header[at..at + max];
        let end = b.iter().position(|&c| c == 0).unwrap_or(max);
        String::from_utf8_lossy(&b[..end]).into_owned()
    };
    let layout_text = text(TEXT_AT, TEXT_MAX);
    let layout = Layout::parse(&layout_text)?;
    let terms: [u64; TERMS] = std::array::from_fn(|i| word_at(&header, TERMS_AT + 8 * i));
    let node_bits = word_at(&header, NODE_AT);
    let rollover = terms[0].checked_sub(1).map(|i| i as usize);
    let host_lease = terms[4].checked_sub(1).map(|i| i as usize);
    let mode = Mode::from_word(word_at(&header, MODE_AT));
    let node = layout
        .node_fields()
        .filter(|(i, _)| Some(*i) != rollover && !(mode == Some(Mode::HostLease) && Some(*i) == host_lease))
        .map(|(_, f)| format!("{}={}", f.name(), f.get(node_bits)))
        .collect::<Vec<_>>()
        .join(",");
    let field = |i: usize| layout.fields().get(i).map_or("?", |f| f.name());
    let mut terms_text = format!(
        "max_drift_ms={};sequence_start={}",
        terms[1],
        if terms[2] == 0 { "zero".to_string() } else { format!("spread:{}", terms[2]) }
    );
    if let Some(r) = rollover {
        terms_text.push_str(&format!(";rollover={}", field(r)));
    }
    if terms[3] != 0 {
        terms_text.push_str(";state_file");
    }
    if let Some(h) = host_lease {
        terms_text.push_str(&format!(";host_lease={}", field(h)));
    }
    let roll_bits = rollover.map_or(0, |r| u32::from(layout.fields()[r].bits()));
    let format = Word::new(layout.sequence().bits().into(), roll_bits, layout.max_tick());
    let end = header_mark(
        format,
        word_at(&header, STATE_AT),
        word_at(&header, HIGH_AT),
        word_at(&header, GUARD_AT),
    );
    let in_use = locks::taken(file, USERS_AT).map_err(|e| io_err("locking", path, e))?;
    let mode_text = mode.map_or("?", |m| m.way().listed);
    let theirs = word_at(&header, TIME_BASE_AT);
    let mine = time_base_ns();
    let off =
        if theirs == 0 || mine == 0 { 0 } else { (mine as i64).wrapping_sub(theirs as i64) / 1_000_000 };
    Ok(SharedState {
        path: path.to_path_buf(),
        user: sys::user_name(uid),
        name: text(LABEL_AT, LABEL_MAX),
        layout: layout_text,
        node,
        terms: terms_text,
        mode: mode_text.to_string(),
        in_use,
        pids: if in_use { pids_of(file) } else { Vec::new() },
        next_ms: layout.unix_ms_of(end.min(layout.max_tick())),
        anchor_ms: (word_at(&header, ANCHOR_AT) as i64) / 1_000_000,
        time_base_off_ms: off,
    })
}

/// The host's records in [`shm_dir`], of every user, by path.
pub fn shared_states() -> Result<Vec<SharedState>, Error> {
    let dir_path = shm_dir()?;
    let dir = match Dir::open(&dir_path) {
        Ok(dir) => dir,
        Err(Refusal::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(r) => return Err(refusal("listing", &dir_path, r)),
    };
    let mut states = Vec::new();
    for name in dir.names().map_err(|e| io_err("listing", &dir_path, e))? {
        let Some((_, uid, _)) = parse_name(&name) else { continue };
        let path = dir_path.join(&name);
        let Ok((file, meta)) = sys::open_in(&dir, &name, Access::Read) else { continue };
        if meta.owner != uid {
            continue;
        }
        if let Ok(state) = read_state(&path, &file, uid) {
            states.push(state);
        }
    }
    states.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(states)
}

/// The record that `which` names: its `shared=` name, its file name, or its path.
pub fn find_shared_state(which: &str) -> Result<SharedState, Error> {
    let states = shared_states()?;
    let matches: Vec<&SharedState> = states
        .iter()
        .filter(|s| {
            s.name == which
                || s.path.as_os_str() == which
                || s.path.file_name().is_some_and(|f| {
                    f == which
                        || f.to_string_lossy() == format!("{which}.shm")
                        || f.to_string_lossy() == format!("{which}.host")
                })
        })
        .collect();
    match matches.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(Error::shared_mismatch(
            "name",
            format_args!(
                "no record in {} is named `{}` (`snowflake shared list` shows them)",
                shm_dir().map_or_else(|_| "?".to_string(), |d| d.display().to_string()),
                Name::snippet(which)
            ),
        )),
        _ => Err(Error::shared_mismatch(
            "name",
            format_args!(
                "{} records are named `{}`: give the path of one (`snowflake shared list` shows them)",
                matches.len(),
                Name::snippet(which)
            ),
        )),
    }
}

/// Removes the record that `which` names (see [`find_shared_state`]), when it is this
/// user's, no process uses it and the clock has passed every ID it issued: a record made anew
/// starts from the clock, so removing one whose IDs are ahead of it could repeat them.
/// Returns what was removed.
pub fn remove_shared_state(which: &str) -> Result<SharedState, Error> {
    let found = find_shared_state(which)?;
    let path = found.path;
    // This process's own use, when it only kept the record after its last generator went.
    let_go_of_kept(Some(&path));
    let dir_path = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let name = path.file_name().map(OsStr::to_os_string).unwrap_or_default();
    let dir = Dir::open(&dir_path).map_err(|r| refusal("opening", &dir_path, r))?;
    let (file, _) = sys::open_in(&dir, &name, Access::Own(None)).map_err(|r| refusal("opening", &path, r))?;
    let deadline = Instant::now() + Duration::from_millis(OPEN_GRACE_MS);
    let Some(_lock) =
        sys::setup_lock(&dir, &name, &file, Some(deadline)).map_err(|e| io_err("locking", &path, e))?
    else {
        return Err(busy(&path, "its set-up lock", sys::setup_holder(&file)));
    };
    let state = read_state(&path, &file, sys::euid())?;
    if state.in_use {
        return Err(Error::shared_mismatch(
            "in use",
            format_args!(
                "{} uses {}: stop the processes that use it first (it is taken over by a new configuration anyway once none does)",
                who_of(&file, &path, sys::euid()),
                path.display()
            ),
        ));
    }
    let now = MonotonicClock::process().now_ms();
    if state.next_ms > now {
        return Err(Error::shared_mismatch(
            "ahead",
            format_args!(
                "{} issued IDs up to {}, {} ms ahead of this clock: a new record would start below them; remove it after that time",
                path.display(),
                rfc3339(state.next_ms),
                state.next_ms - now
            ),
        ));
    }
    sys::remove_open(&dir, &name, &file).map_err(|e| io_err("removing", &path, e))?;
    Ok(state)
}
