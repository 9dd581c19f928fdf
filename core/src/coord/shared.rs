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
use crate::sys::{Flock, ForkGate, Map};
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

/// The path of the shared state called `name`.
pub fn shared_path(name: &str) -> PathBuf {
    shm_dir().join(format!("libsnowflake-{name}.shm"))
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
}

impl Identity<'_> {
    fn words(&self) -> [u64; IDENTITY_WORDS] {
        let mut node = *self.node;
        if let Some(r) = self.rollover {
            node = node.with(r, 0);
        }
        [
            self.layout.fingerprint(),
            self.layout.node_bits(&node),
            self.policy.max_drift_ms,
            sequence_code(self.policy.sequence_start),
            self.rollover.map_or(0, |i| i as u64 + 1),
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

    /// Opens (creating if need be) the shared state called `name` for `identity`.
    pub(crate) fn open(name: &str, identity: &Identity<'_>) -> Result<Mapping, Error> {
        if !valid_shared_name(name) {
            return Err(Error::BadOption {
                name: Name::snippet(name),
                reason: "a shared name is 1 to 64 of A-Z a-z 0-9 . _ - (not starting with .)",
            });
        }
        Mapping::open_path(&shared_path(name), identity)
    }

    fn open_path(path: &Path, identity: &Identity<'_>) -> Result<Mapping, Error> {
        let _gate = ForkGate::enter();
        let file = crate::sys::open_private(path, libc::O_NOFOLLOW)
            .map_err(|e| io_err("opening the shared state", path, e))?;
        let meta = file.metadata().map_err(|e| io_err("reading", path, e))?;
        let uid = crate::sys::euid();
        if meta.uid() != uid || meta.mode() & 0o077 != 0 {
            return Err(Error::shared_mismatch(
                "owner",
                format_args!(
                    "{} belongs to uid {} with mode {:o}; it must be this user's ({uid}) with mode 600",
                    path.display(),
                    meta.uid(),
                    meta.mode() & 0o777
                ),
            ));
        }
        let _lock = Flock::exclusive(&file).map_err(|e| io_err("locking", path, e))?;
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
        let fresh = magic == 0;
        if fresh {
            for (i, w) in words.iter().enumerate() {
                map.write(8 + 8 * i, *w);
            }
            map.set_bytes(TEXT_AT, TEXT_MAX, identity.layout.to_string().as_bytes());
            let anchor = MonotonicClock::current_offset_ns();
            // Read after the file was made: any process still on a removed file issues only
            // below this reading plus RECHECK_MS (and its drift, and a full tick's carry).
            let layout = identity.layout;
            let now_ms = MonotonicClock::with_offset_ns(anchor).now_ms();
            let drift_ticks = identity.policy.max_drift_ms / layout.tick_ms();
            let start = layout
                .tick_of(now_ms.saturating_add(RECHECK_MS))
                .unwrap_or(0)
                .saturating_add(drift_ticks + 1);
            let initial = identity.initial_state.max(identity.word.floor(start, 0));
            map.state().store(initial, Ordering::Release);
            map.reserved().store(identity.initial_reserved, Ordering::Release);
            map.write(READY_AT, layout.unix_ms_of((start - drift_ticks).min(layout.max_tick())));
            map.write(64, anchor as u64);
            map.set_bytes(72, 36, &boot_id());
            if identity.host_lease.is_some() {
                map.set_bytes(TOKEN_AT, TOKEN_LEN, new_token().as_bytes());
            }
            map.write(0, MAGIC);
        } else if magic != MAGIC {
            return Err(Error::shared_mismatch(
                "file",
                format_args!("{} is not a libsnowflake shared state", path.display()),
            ));
        } else {
            if let Some(e) = map.compare(identity, &words) {
                return Err(e);
            }
            if map.bytes(72, 36) != boot_id() {
                // Another boot: CLOCK_MONOTONIC restarted. Anchor anew; the state word keeps
                // every new ID above the ones issued before.
                map.write(64, crate::clock::MonotonicClock::current_offset_ns() as u64);
                map.set_bytes(72, 36, &boot_id());
            }
        }
        Ok(map)
    }

    fn compare(&self, identity: &Identity<'_>, words: &[u64; IDENTITY_WORDS]) -> Option<Error> {
        let theirs: Vec<u64> = (0..IDENTITY_WORDS).map(|i| self.read(8 + 8 * i)).collect();
        let text = self.bytes(TEXT_AT, TEXT_MAX);
        let end = text.iter().position(|&b| b == 0).unwrap_or(TEXT_MAX);
        let their_layout = String::from_utf8_lossy(&text[..end]).into_owned();
        let (what, detail) = if theirs[0] != words[0] {
            ("layout", format!("it holds `{their_layout}`, not `{}`", identity.layout))
        } else if theirs[1] != words[1] {
            let layout = identity.layout;
            let describe = |bits: u64| {
                layout
                    .node_fields()
                    .filter(|(i, _)| Some(*i) != identity.rollover)
                    .map(|(_, f)| format!("{}={}", f.name(), f.get(bits)))
                    .collect::<Vec<_>>()
                    .join(",")
            };
            ("node", format!("it holds node `{}`, not `{}`", describe(theirs[1]), describe(words[1])))
        } else if theirs[2] != words[2] {
            ("max_drift_ms", format!("it holds max_drift_ms={}, not {}", theirs[2], words[2]))
        } else if theirs[3] != words[3] {
            let s = |k: u64| if k == 0 { "zero".to_string() } else { format!("spread:{k}") };
            ("sequence_start", format!("it holds sequence_start={}, not {}", s(theirs[3]), s(words[3])))
        } else if theirs[4] != words[4] {
            let r = |k: u64| {
                if k == 0 {
                    "none".to_string()
                } else {
                    identity.layout.fields().get(k as usize - 1).map_or("?".into(), |f| f.name().to_string())
                }
            };
            ("rollover", format!("it holds rollover={}, not {}", r(theirs[4]), r(words[4])))
        } else if theirs[5] != words[5] {
            let s = |k: u64| if k == 0 { "none" } else { "a state file" };
            let mine = identity.state_file.map_or("none".to_string(), |p| p.display().to_string());
            (
                "state_file",
                format!(
                    "it holds {}, not {mine} (every process of a shared state names the same state_file)",
                    s(theirs[5])
                ),
            )
        } else if theirs[6] != words[6] {
            let s = |k: u64| match k {
                0 => "no lease".to_string(),
                k => format!(
                    "a host lease of `{}`",
                    identity.layout.fields().get(k as usize - 1).map_or("?", |f| f.name())
                ),
            };
            (
                "lease",
                format!(
                    "it holds {}, not {} (every process of a shared state gives the same lease, or none)",
                    s(theirs[6]),
                    s(words[6])
                ),
            )
        } else {
            return None;
        };
        Some(Error::shared_mismatch(what, format_args!("{}: {detail}", self.path.display())))
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
