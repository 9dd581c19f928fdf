//! Shared generator state: one state word in a named shared-memory file, used by every
//! process of a host that opens the name (PHP-FPM, gunicorn and Node cluster workers, game
//! server processes), lock-free.
//!
//! # The file
//!
//! `$SNOWFLAKE_SHM_DIR/libsnowflake-<name>.shm`, by default in `/dev/shm` (memory, cleared at
//! boot) or else the temporary directory; created `0600` and refused when another user owns
//! it or others may read it. One page:
//!
//! | offset | what |
//! |---|---|
//! | 0 | magic `SNOWFLK1`, written last when the file is set up |
//! | 8 | layout fingerprint, node bits, `max_drift_ms`, sequence start, rollover field, state file, host lease |
//! | 64 | clock anchor: `wall - CLOCK_MONOTONIC` in ns, and the boot id it holds for |
//! | 112 | when a new state may first issue, in ms on the file's timeline (see below) |
//! | 128 | the layout's canonical text (to name a difference) |
//! | 1024 | the state word (its own cache line) |
//! | 1088 | the durable reservation word (see `durable`) |
//! | 2048 | a host lease's token, then its value, claim epoch, validity and reservation (see [`HostWords`]) |
//!
//! Setting up takes an exclusive `flock`; issuing takes none: every ID is one
//! compare-and-swap on the mapped word, so a process killed at any instant leaves the state
//! consistent (a creator killed before writing the magic leaves a file the next opener sets up
//! anew: nothing can have been issued from it).
//!
//! # A file removed while in use
//!
//! systemd-logind removes a user's files in `/dev/shm` when their last session ends
//! (`RemoveIPC=yes`, its default), and temporary-file cleaners remove old files: processes
//! that have the file mapped go on with a state that no new process can find, and a new
//! process would set up a fresh state beside it and issue the same IDs. So:
//!
//! - a process checks, at least every [`RECHECK_MS`] of the clock readings it issues at,
//!   that its path still names the file it mapped (device and inode); when it does not, the
//!   generator stops issuing with an error that says so (a new generator joins the state
//!   now at the path);
//! - a fresh state starts [`RECHECK_MS`] plus `max_drift_ms` plus a tick ahead of the clock
//!   (its opener waits that long, once), so that it is above every ID that a process still
//!   on a removed file can issue before its next check: such a process issues only at
//!   readings taken within [`RECHECK_MS`] of a check that found its file, that is, from
//!   before the new file existed.
//!
//! # One clock for all
//!
//! Every process of a shared state reads `CLOCK_MONOTONIC` (one clock for the whole host) plus
//! the anchor stored in the file. Processes started before and after a wall-clock step agree
//! on the time; after a reboot (another boot id) the anchor is taken anew, and the state word
//! (the high-water mark of what was issued) still keeps new IDs above the old ones.

use super::io_err;
use crate::clock::{Clock, MonotonicClock};
use crate::error::Error;
use crate::generator::{Validity, Word};
use crate::layout::{Layout, Node};
use crate::options::{valid_shared_name, Policy, SequenceStart};
use crate::sys::{users, Flock, ForkGate, Map};
use crate::text::Name;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const MAGIC: u64 = u64::from_le_bytes(*b"SNOWFLK1");
const SIZE: usize = 4096;
const STATE_AT: usize = 1024;
const RESERVED_AT: usize = 1088;
const READY_AT: usize = 112;
const TEXT_AT: usize = 128;
const TEXT_MAX: usize = 800;
const IDENTITY_WORDS: usize = 7;
const TOKEN_AT: usize = 2048;
const TOKEN_LEN: usize = 32;
const HOST_VALUE_AT: usize = 2112;
const HOST_EPOCH_AT: usize = 2120;
const HOST_VALID_AT: usize = 2128;
const HOST_RESERVED_AT: usize = 2136;
const HOST_RESERVED_EPOCH_AT: usize = 2144;
const LABEL_AT: usize = 2176;
const LABEL_MAX: usize = 64;
/// The byte whose read locks count the file's users (see [`users`]): past the data, which
/// a lock does not touch.
const USERS_AT: i64 = SIZE as i64;
/// A host lease's validity word packs the claim epoch above 42 bits of ms (to the year 2109).
const VALID_BITS: u32 = 42;

/// How long a check that the file is still at its path covers, in ms of clock readings; and
/// so how far ahead of the clock a fresh state starts (see the module docs).
pub(crate) const RECHECK_MS: u64 = 50;

/// The directory of shared state files: `$SNOWFLAKE_SHM_DIR`, else `/dev/shm`, else the
/// temporary directory.
pub fn shm_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("SNOWFLAKE_SHM_DIR") {
        return PathBuf::from(dir);
    }
    let dev_shm = Path::new("/dev/shm");
    if dev_shm.is_dir() {
        return dev_shm.to_path_buf();
    }
    std::env::temp_dir()
}

/// The path of the host's shared state for `layout` and `node` (the value of a `rollover`
/// field aside): `libsnowflake-<16 hex digits>.shm` in [`shm_dir`], named by a hash of the
/// layout, the node values and the rollover field, the state's identity.
pub fn shared_path(layout: &Layout, node: &Node, rollover: Option<&str>) -> PathBuf {
    let rollover = rollover.and_then(|r| layout.field(r)).map(|(i, _)| i);
    shm_dir().join(file_name(identity_key(layout, node, rollover)))
}

fn file_name(key: u64) -> String {
    format!("libsnowflake-{key:016x}.shm")
}

/// The hash of an identity that names its file.
fn identity_key(layout: &Layout, node: &Node, rollover: Option<usize>) -> u64 {
    let node = rollover.map_or(*node, |r| node.with(r, 0));
    let mut h = crate::hash::Fnv1a::new();
    for w in [layout.fingerprint(), layout.node_bits(&node), rollover.map_or(0, |i| i as u64 + 1)] {
        let _ = std::fmt::Write::write_fmt(&mut h, format_args!("{w:016x}"));
    }
    h.0
}

/// The error for a shared state that cannot be opened, with the fix.
fn open_err(path: &Path, e: std::io::Error) -> Error {
    let fix = match e.kind() {
        std::io::ErrorKind::NotFound => {
            " (the directory is missing: create it, or set SNOWFLAKE_SHM_DIR to a directory this user may write)"
        }
        std::io::ErrorKind::PermissionDenied => {
            " (this user may not write there: set SNOWFLAKE_SHM_DIR to a directory it may write, or give each process its own node values with process_only=true)"
        }
        _ => "",
    };
    Error::io_with_hint("opening the shared state", path.display(), e, fix)
}

pub(crate) fn boot_id() -> [u8; 36] {
    let mut id = [b'?'; 36];
    if let Ok(text) = std::fs::read_to_string("/proc/sys/kernel/random/boot_id") {
        let b = text.trim().as_bytes();
        let n = b.len().min(36);
        id[..n].copy_from_slice(&b[..n]);
    }
    id
}

/// A mapped shared state file.
pub(crate) struct Mapping {
    map: Map,
    /// The file, kept open for its lock: set-up, and a host lease's claims and reservations.
    file: std::fs::File,
    path: PathBuf,
    /// The device and inode of the file mapped.
    id: (u64, u64),
    /// Clock readings below this may be issued at: a check found the file at its path at a
    /// reading `RECHECK_MS` before it (see the module docs).
    valid_until: AtomicU64,
}

fn sequence_code(s: SequenceStart) -> u64 {
    match s {
        SequenceStart::Zero => 0,
        SequenceStart::Spread(k) => k,
    }
}

/// What a shared file records of the generators that use it.
pub(crate) struct Identity<'a> {
    pub layout: &'a Layout,
    pub node: &'a Node,
    pub policy: &'a Policy,
    pub rollover: Option<usize>,
    /// The state file's canonical path.
    pub state_file: Option<&'a Path>,
    /// The state word's format.
    pub word: Word,
    /// The state word and reservation a fresh state starts with (a fresh state starts
    /// [`RECHECK_MS`] ahead too).
    pub initial_state: u64,
    pub initial_reserved: u64,
    /// A host lease's leased field (`lease=` with `shared=`): its processes share one value
    /// of it, claimed in Redis (see `lease_redis`).
    pub host_lease: Option<usize>,
    /// The name given with `shared=`, shown by `snowflake shared list`.
    pub label: Option<&'a str>,
}

impl Identity<'_> {
    /// The path of its file.
    pub(crate) fn path(&self) -> PathBuf {
        shm_dir().join(file_name(identity_key(self.layout, self.node, self.rollover)))
    }

    /// What the file records: the identity (layout, node bits, rollover field), then the
    /// terms that its users must agree on.
    fn words(&self) -> [u64; IDENTITY_WORDS] {
        let mut node = *self.node;
        if let Some(r) = self.rollover {
            node = node.with(r, 0);
        }
        [
            self.layout.fingerprint(),
            self.layout.node_bits(&node),
            self.rollover.map_or(0, |i| i as u64 + 1),
            self.policy.max_drift_ms,
            sequence_code(self.policy.sequence_start),
            self.state_file.map_or(0, |p| {
                let mut h = crate::hash::Fnv1a::new();
                let _ = std::fmt::Write::write_str(&mut h, &p.to_string_lossy());
                h.0 | 1
            }),
            self.host_lease.map_or(0, |i| i as u64 + 1),
        ]
    }
}

impl Mapping {
    /// The state word.
    pub(crate) fn state(&self) -> &AtomicU64 {
        self.map.word(STATE_AT)
    }

    /// The durable reservation word (`u64::MAX` when no state file reserves for it).
    pub(crate) fn reserved(&self) -> &AtomicU64 {
        self.map.word(RESERVED_AT)
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

    /// The clock anchor recorded in the file.
    pub(crate) fn anchor_ns(&self) -> i64 {
        self.read(64) as i64
    }

    /// When a fresh state may first issue (ms on the file's timeline; 0 when it always may).
    pub(crate) fn ready_ms(&self) -> u64 {
        self.read(READY_AT)
    }

    /// Opens (creating if need be) the host's shared state of `identity`.
    pub(crate) fn open(identity: &Identity<'_>) -> Result<Mapping, Error> {
        if let Some(label) = identity.label {
            if !valid_shared_name(label) {
                return Err(Error::BadOption {
                    name: Name::snippet(label),
                    reason: "a shared name is 1 to 64 of A-Z a-z 0-9 . _ - (not starting with .)",
                });
            }
        }
        let path = identity.path();
        // A file removed between our open and our lock (by `snowflake shared remove`, which
        // removes under the lock) is not the state at the path: open the path anew.
        loop {
            if let Some(map) = Mapping::open_path(&path, identity)? {
                return Ok(map);
            }
        }
    }

    fn open_path(path: &Path, identity: &Identity<'_>) -> Result<Option<Mapping>, Error> {
        let _gate = ForkGate::enter();
        let file = crate::sys::open_private(path, libc::O_NOFOLLOW).map_err(|e| open_err(path, e))?;
        let meta = file.metadata().map_err(|e| io_err("reading", path, e))?;
        let uid = crate::sys::euid();
        if meta.uid() != uid || meta.mode() & 0o077 != 0 {
            return Err(Error::shared_mismatch(
                "owner",
                format_args!(
                    "{} belongs to uid {} with mode {:o}; it must be this user's ({uid}) with mode 600: the processes of one user share a host's state, so give another user's processes other node values, or run them as one user",
                    path.display(),
                    meta.uid(),
                    meta.mode() & 0o777
                ),
            ));
        }
        let _lock = Flock::exclusive(&file).map_err(|e| io_err("locking", path, e))?;
        match std::fs::symlink_metadata(path) {
            Ok(now) if (now.dev(), now.ino()) == (meta.dev(), meta.ino()) => {}
            Ok(_) => return Ok(None),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err("reading", path, e)),
        }
        let len = file.metadata().map_err(|e| io_err("reading", path, e))?.len();
        if len < SIZE as u64 {
            file.set_len(SIZE as u64).map_err(|e| io_err("sizing", path, e))?;
        }
        let map = Map::shared(&file, SIZE).map_err(|e| io_err("mapping", path, e))?;
        let map = Mapping {
            map,
            file: file.try_clone().map_err(|e| io_err("opening the shared state", path, e))?,
            path: path.to_path_buf(),
            id: (meta.dev(), meta.ino()),
            valid_until: AtomicU64::new(0),
        };
        let words = identity.words();
        let magic = map.read(0);
        if magic == 0 {
            map.set_up(identity, &words);
        } else if magic != MAGIC {
            return Err(Error::shared_mismatch(
                "file",
                format_args!("{} is not a libsnowflake shared state", path.display()),
            ));
        } else {
            if let Some(e) = map.compare(identity, &words) {
                let others = users::others(&map.file, USERS_AT).map_err(|e| io_err("locking", path, e))?;
                // The layout, node values and rollover field are the file's name: another
                // one here is a collision of the name's hash, never taken over.
                if others || words[..3] != map.identity_words()[..3] {
                    return Err(e);
                }
                map.take_over(identity, &words);
            }
            if map.bytes(72, 36) != boot_id() {
                // Another boot: CLOCK_MONOTONIC restarted. Anchor anew; the state word keeps
                // every new ID above the ones issued before.
                map.write(64, crate::clock::MonotonicClock::current_offset_ns() as u64);
                map.set_bytes(72, 36, &boot_id());
            }
            if let Some(label) = identity.label {
                if map.label().is_empty() {
                    map.set_bytes(LABEL_AT, LABEL_MAX, label.as_bytes());
                }
            }
        }
        users::join(&map.file, USERS_AT).map_err(|e| io_err("locking", path, e))?;
        Ok(Some(map))
    }

    /// Sets up a fresh file (under its lock): the magic last.
    fn set_up(&self, identity: &Identity<'_>, words: &[u64; IDENTITY_WORDS]) {
        for (i, w) in words.iter().enumerate() {
            self.write(8 + 8 * i, *w);
        }
        self.set_bytes(TEXT_AT, TEXT_MAX, identity.layout.to_string().as_bytes());
        self.set_bytes(LABEL_AT, LABEL_MAX, identity.label.unwrap_or("").as_bytes());
        let anchor = MonotonicClock::current_offset_ns();
        // Read after the file was made: any process still on a removed file issues only
        // below this reading plus RECHECK_MS (and its drift, and a full tick's carry).
        let layout = identity.layout;
        let now_ms = MonotonicClock::with_offset_ns(anchor).now_ms();
        let drift_ticks = identity.policy.max_drift_ms / layout.tick_ms();
        let start =
            layout.tick_of(now_ms.saturating_add(RECHECK_MS)).unwrap_or(0).saturating_add(drift_ticks + 1);
        let initial = identity.initial_state.max(identity.word.floor(start, 0));
        self.state().store(initial, Ordering::Release);
        self.reserved().store(identity.initial_reserved, Ordering::Release);
        self.write(READY_AT, layout.unix_ms_of((start - drift_ticks).min(layout.max_tick())));
        self.write(64, anchor as u64);
        self.set_bytes(72, 36, &boot_id());
        if identity.host_lease.is_some() {
            self.set_bytes(TOKEN_AT, TOKEN_LEN, new_token().as_bytes());
        }
        self.write(0, MAGIC);
    }

    /// Takes over a state that no process uses for `identity`'s terms (under the file's
    /// lock): the state word keeps its high-water mark, raised to the new state file's
    /// record; the reservation is the new state file's; a host lease starts anew.
    fn take_over(&self, identity: &Identity<'_>, words: &[u64; IDENTITY_WORDS]) {
        let host_lease_changed = self.read(8 + 8 * 6) != words[6];
        for (i, w) in words.iter().enumerate() {
            self.write(8 + 8 * i, *w);
        }
        self.state().fetch_max(identity.initial_state, Ordering::AcqRel);
        self.reserved().store(identity.initial_reserved, Ordering::Release);
        if host_lease_changed {
            let token = if identity.host_lease.is_some() { new_token() } else { String::new() };
            self.set_bytes(TOKEN_AT, TOKEN_LEN, token.as_bytes());
            for at in [HOST_VALUE_AT, HOST_EPOCH_AT, HOST_VALID_AT, HOST_RESERVED_AT, HOST_RESERVED_EPOCH_AT]
            {
                self.write(at, 0);
            }
        }
        self.set_bytes(LABEL_AT, LABEL_MAX, identity.label.unwrap_or("").as_bytes());
    }

    fn identity_words(&self) -> [u64; IDENTITY_WORDS] {
        std::array::from_fn(|i| self.read(8 + 8 * i))
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

    /// The first difference between the file's words and `words`, as the error that a
    /// process gets when another process uses the state with the file's.
    fn compare(&self, identity: &Identity<'_>, words: &[u64; IDENTITY_WORDS]) -> Option<Error> {
        let theirs = self.identity_words();
        let path = self.path.display();
        let (what, detail) = if theirs[..3] != words[..3] {
            let their_layout = self.text(TEXT_AT, TEXT_MAX);
            return Some(Error::shared_mismatch(
                "layout",
                format_args!(
                    "{path} holds the state of another layout or node values (`{their_layout}`), whose file name is the same: set SNOWFLAKE_SHM_DIR to another directory for one of them"
                ),
            ));
        } else if theirs[3] != words[3] {
            ("max_drift_ms", format!("max_drift_ms={}, not {}", theirs[3], words[3]))
        } else if theirs[4] != words[4] {
            let s = |k: u64| if k == 0 { "zero".to_string() } else { format!("spread:{k}") };
            ("sequence_start", format!("sequence_start={}, not {}", s(theirs[4]), s(words[4])))
        } else if theirs[5] != words[5] {
            let s = |k: u64| if k == 0 { "no state_file" } else { "another state_file" };
            let mine = identity.state_file.map_or("none".to_string(), |p| p.display().to_string());
            ("state_file", format!("{}, not {mine}", s(theirs[5])))
        } else if theirs[6] != words[6] {
            let s = |k: u64| match k {
                0 => "no lease".to_string(),
                k => format!(
                    "a host lease of `{}`",
                    identity.layout.fields().get(k as usize - 1).map_or("?", |f| f.name())
                ),
            };
            ("lease", format!("{}, not {}", s(theirs[6]), s(words[6])))
        } else {
            return None;
        };
        let label = self.label();
        let named = if label.is_empty() { String::new() } else { format!(" (shared={label})") };
        Some(Error::shared_mismatch(
            what,
            format_args!(
                "a generator of this process or another uses {path}{named}, this host's state for this layout and node values, with {detail}. Generators that issue with one layout and node values at once share one state and must agree on {what}: give this one the same, or stop the others first (a state that no process uses is taken over by the next configuration, keeping its high-water mark). `snowflake shared list` shows the states and whether they are in use"
            ),
        ))
    }
}

/// A token that no other host's state has: 16 random bytes, in hex.
fn new_token() -> String {
    use std::io::Read;
    let mut bytes = [0u8; TOKEN_LEN / 2];
    let random = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if random.is_err() {
        // No /dev/urandom: this boot, this process, this instant.
        let mut h = crate::hash::Fnv1a::new();
        let _ = std::fmt::Write::write_fmt(
            &mut h,
            format_args!("{:?}{}{}", boot_id(), std::process::id(), MonotonicClock::current_offset_ns()),
        );
        bytes[..8].copy_from_slice(&h.0.to_le_bytes());
        bytes[8..].copy_from_slice(&crate::sys::monotonic_ns().to_le_bytes());
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
    fn host_lock(&self) -> Result<Flock<'_>, Error>;
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

impl HostWords for Mapping {
    fn host_token(&self) -> String {
        String::from_utf8_lossy(self.bytes(TOKEN_AT, TOKEN_LEN)).into_owned()
    }

    fn host_lock(&self) -> Result<Flock<'_>, Error> {
        Flock::exclusive(&self.file).map_err(|e| io_err("locking", &self.path, e))
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

impl Mapping {
    /// The file's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

impl Validity for Mapping {
    fn valid_until(&self) -> &AtomicU64 {
        &self.valid_until
    }

    /// Checks that the path still names the file mapped; `fresh_ms` was read before.
    fn renew(&self, fresh_ms: u64) -> Result<(), Error> {
        match std::fs::symlink_metadata(&self.path) {
            Ok(meta) if (meta.dev(), meta.ino()) == self.id => {
                self.valid_until.fetch_max(fresh_ms.saturating_add(RECHECK_MS), Ordering::AcqRel);
                Ok(())
            }
            Ok(_) => Err(self.lost("replaced by another file")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(self.lost("removed")),
            Err(e) => Err(io_err("checking the shared state", &self.path, e)),
        }
    }
}

impl Mapping {
    fn lost(&self, how: &str) -> Error {
        Error::shared_mismatch(
            "removed",
            format_args!(
                "{} was {how} while this process used it, so a new process could start a state beside this one: this generator stops issuing (a new one joins the state at the path). systemd-logind removes a user's files in /dev/shm when their last session ends (RemoveIPC=yes, its default): set RemoveIPC=no in /etc/systemd/logind.conf, run the service as a system user, or set SNOWFLAKE_SHM_DIR to a directory that nothing cleans",
                self.path.display()
            ),
        )
    }
}

/// A host's shared state, as `snowflake shared list` shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SharedState {
    /// Its file.
    pub path: PathBuf,
    /// The name last given to it with `shared=` (empty when none).
    pub name: String,
    /// The layout's canonical text.
    pub layout: String,
    /// The node values, `name=value,...` (a rollover field's aside).
    pub node: String,
    /// The terms its users agree on: `max_drift_ms=…;sequence_start=…`, then `rollover=`,
    /// `state_file` and `host_lease=` when they apply.
    pub terms: String,
    /// Whether a process uses it now.
    pub in_use: bool,
    /// The time of its next free slot, in Unix ms: every ID it issued is below it.
    pub next_ms: u64,
}

impl std::fmt::Display for SharedState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = if self.name.is_empty() { "-" } else { &self.name };
        let users = if self.in_use { "in use" } else { "unused" };
        write!(
            f,
            "{}\t{name}\t{users}\t{}\t{}\t{}\t{}",
            self.path.display(),
            self.layout,
            self.node,
            self.terms,
            rfc3339(self.next_ms)
        )
    }
}

fn rfc3339(unix_ms: u64) -> String {
    let mut buf = [0u8; crate::time::RFC3339_LEN];
    crate::time::format_rfc3339(unix_ms, &mut buf).map_or_else(|| format!("{unix_ms} ms"), str::to_string)
}

/// Reads the state at `path` (with its file open, to ask whether another process uses it).
fn read_state(path: &Path, file: &std::fs::File) -> Result<SharedState, Error> {
    let map = Map::shared(file, SIZE).map_err(|e| io_err("mapping", path, e))?;
    let word = |at: usize| map.word(at).load(Ordering::Acquire);
    if word(0) != MAGIC {
        return Err(Error::shared_mismatch(
            "file",
            format_args!("{} is not a set-up libsnowflake shared state", path.display()),
        ));
    }
    let text = |at: usize, max: usize| {
        let b = map.bytes(at, max);
        let end = b.iter().position(|&c| c == 0).unwrap_or(max);
        String::from_utf8_lossy(&b[..end]).into_owned()
    };
    let layout_text = text(TEXT_AT, TEXT_MAX);
    let layout = Layout::parse(&layout_text)?;
    let words: [u64; IDENTITY_WORDS] = std::array::from_fn(|i| word(8 + 8 * i));
    let rollover = words[2].checked_sub(1).map(|i| i as usize);
    let node = layout
        .node_fields()
        .filter(|(i, _)| Some(*i) != rollover)
        .map(|(_, f)| format!("{}={}", f.name(), f.get(words[1])))
        .collect::<Vec<_>>()
        .join(",");
    let field = |i: usize| layout.fields().get(i).map_or("?", |f| f.name());
    let mut terms = format!(
        "max_drift_ms={};sequence_start={}",
        words[3],
        if words[4] == 0 { "zero".to_string() } else { format!("spread:{}", words[4]) }
    );
    if let Some(r) = rollover {
        terms.push_str(&format!(";rollover={}", field(r)));
    }
    if words[5] != 0 {
        terms.push_str(";state_file");
    }
    if let Some(h) = words[6].checked_sub(1) {
        terms.push_str(&format!(";host_lease={}", field(h as usize)));
    }
    let roll_bits = rollover.map_or(0, |r| u32::from(layout.fields()[r].bits()));
    let format = Word::new(layout.sequence().bits().into(), roll_bits, layout.max_tick());
    let (tick, _, _) = format.unpack(word(STATE_AT));
    let in_use = users::others(file, USERS_AT).map_err(|e| io_err("locking", path, e))?;
    Ok(SharedState {
        path: path.to_path_buf(),
        name: text(LABEL_AT, LABEL_MAX),
        layout: layout_text,
        node,
        terms,
        in_use,
        next_ms: layout.unix_ms_of(tick.min(layout.max_tick())),
    })
}

/// Opens an existing state file of this user's (never creating one).
fn open_existing(path: &Path) -> Result<std::fs::File, Error> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::File::options()
        .read(true)
        .write(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| io_err("opening the shared state", path, e))?;
    let meta = file.metadata().map_err(|e| io_err("reading", path, e))?;
    if meta.len() < SIZE as u64 {
        return Err(Error::shared_mismatch(
            "file",
            format_args!("{} is not a set-up libsnowflake shared state", path.display()),
        ));
    }
    Ok(file)
}

/// The host's shared states in [`shm_dir`] that this user may read, by path.
pub fn shared_states() -> Result<Vec<SharedState>, Error> {
    let dir = shm_dir();
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(io_err("listing", &dir, e)),
    };
    let mut states = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with("libsnowflake-") && name.ends_with(".shm")) {
            continue;
        }
        let path = entry.path();
        // Another user's files, and files being set up, are not listed.
        if let Ok(state) = open_existing(&path).and_then(|file| read_state(&path, &file)) {
            states.push(state);
        }
    }
    states.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(states)
}

/// The shared state that `which` names: its `shared=` name, its file name, or its path.
pub fn find_shared_state(which: &str) -> Result<SharedState, Error> {
    let states = shared_states()?;
    let matches: Vec<&SharedState> = states
        .iter()
        .filter(|s| {
            s.name == which
                || s.path.as_os_str() == which
                || s.path
                    .file_name()
                    .is_some_and(|f| f == which || f.to_string_lossy() == format!("{which}.shm"))
        })
        .collect();
    match matches.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(Error::shared_mismatch(
            "name",
            format_args!(
                "no shared state in {} is named `{}` (`snowflake shared list` shows them)",
                shm_dir().display(),
                Name::snippet(which)
            ),
        )),
        _ => Err(Error::shared_mismatch(
            "name",
            format_args!(
                "{} shared states are named `{}`: give the path of one (`snowflake shared list` shows them)",
                matches.len(),
                Name::snippet(which)
            ),
        )),
    }
}

/// Removes the shared state that `which` names (see [`find_shared_state`]), when no process
/// uses it and the clock has passed every ID it issued: a state made anew starts from the
/// clock, so removing one whose IDs are ahead of it could repeat them. Returns what was
/// removed. A process that opens the name meanwhile waits, then makes a new state.
pub fn remove_shared_state(which: &str) -> Result<SharedState, Error> {
    let found = find_shared_state(which)?;
    let path = found.path;
    let file = open_existing(&path)?;
    let _lock = Flock::exclusive(&file).map_err(|e| io_err("locking", &path, e))?;
    let state = read_state(&path, &file)?;
    if state.in_use {
        return Err(Error::shared_mismatch(
            "in use",
            format_args!(
                "a process uses {}: stop the processes that use it first (it is taken over by a new configuration anyway once none does)",
                path.display()
            ),
        ));
    }
    let now = MonotonicClock::process().now_ms();
    if state.next_ms > now {
        return Err(Error::shared_mismatch(
            "ahead",
            format_args!(
                "{} issued IDs up to {}, {} ms ahead of this clock: a new state would start below them; remove it after that time",
                path.display(),
                rfc3339(state.next_ms),
                state.next_ms - now
            ),
        ));
    }
    std::fs::remove_file(&path).map_err(|e| io_err("removing", &path, e))?;
    Ok(state)
}
