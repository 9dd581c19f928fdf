//! Worker-id leases across hosts: one protocol over small stores. A store (Redis and
//! Sentinel, Redis Cluster, PostgreSQL, MySQL/MariaDB: one file each, behind its feature)
//! keeps, for each identity (the layout and every node value, the leased field's included), a
//! holder's token with an expiry and a high-water mark, and answers five operations
//! ([`Store`]); everything else is here, once.
//!
//! - **Claim**: the store takes the first free value of the leased field (the one held
//!   before, when claiming again; else the lowest) for our token, and returns its stored mark.
//!   A free value whose stored mark is further ahead of the claimant's clock than any holder
//!   can reach (a poisoned mark: a time far in the future stored once) is passed over, and
//!   counted in the message when no value is left.
//! - **Clock check**: before each claim the store's clock is read (Redis `TIME`, the
//!   database's clock); a host whose clock is further from it than `max_clock_skew_ms` claims
//!   nothing (its IDs would sort apart from the fleet's, and the marks that order holders
//!   assume clocks that agree). Each renewal reads the store's clock too: a skew found then
//!   is counted (`stats()`), and the lease goes on.
//! - **Renew**: a background thread re-arms the claim every `ttl/3` while it still holds our
//!   token. The generator issues only while its clock reads less than the last successful
//!   renewal's send time + 4/5 TTL: cut off from the store, it stops before its claim can
//!   expire.
//! - **Reserve**: before issuing at a tick beyond its reservation, the holder stores a new one
//!   (the tick plus a window of at most [`crate::LEASE_MAX_WINDOW_MS`]) in the mark, checking
//!   the token. Every ID is below a reservation stored while the claim was ours, so a holder
//!   whose claim was deleted, taken or lost issues nothing beyond what the store recorded (or,
//!   after a data loss, beyond its last window).
//! - **Next holder**: starts at the stored mark when the store proves that mark current: it
//!   was written in the run of the store that answers now (Redis: its `run_id` and
//!   replication id; PostgreSQL: its start and timeline; MySQL/MariaDB: its server id, durable
//!   commits). With no trusted mark (a value never used, a store that lost its data, a mark
//!   of another run: a restart from a snapshot, a promoted replica, which is then a lower
//!   bound only) it starts past anything a holder that still thinks it owns the value can
//!   issue, whatever that holder's own settings: [`crate::LEASE_MAX_WINDOW_MS`] +
//!   [`crate::LEASE_MAX_DRIFT_MS`] + twice the allowed clock skew + one tick past the
//!   *store's* clock, read after the claim (every holder obeys those caps; `Lease::open`
//!   names the error each margin covers).
//! - **Heal**: a lapsed lease (not renewed in time, or found taken or deleted) is claimed
//!   again on the generator's next call: the same value if it is free, else another. The
//!   claim is published under a seqlock (`generation`): an ID is composed with the claim its
//!   slot was checked against, or its slot is dropped. The generator's lean path reads the
//!   claim without it: one word holds the last tick it may issue at (`fast_last_tick`: the
//!   fast window, the reservation, the layout's end), which a claim zeroes before it changes
//!   its words and a child of `fork()` finds at 0; a claim then steps the state word up before
//!   the word reopens, so the lean path's compare-and-swap, from a state word read before the
//!   claim's words, fails across a change (see `FastMark::last_tick`). A second such word is
//!   the one the generator's plain path reads: it follows the first (for a host lease, no
//!   further than the host's record's last valid tick) while this process's claim is of the
//!   lease's first value, and stays 0 once it claimed another value (see `FastMark::plain`,
//!   and the generator's `plan_plain` for why a host lease's plain path needs no epoch).
//! - **Release** (on drop): stores the exact end of what was issued and frees the value.
//! - **This host**: every claim holds the host's record of the identity with the value it
//!   claims (see `arbiter`); a value used on this host another way is given back to the store
//!   and the next one claimed. Each reservation raises the record's guard, the release settles
//!   it, and every 50 ms of readings the lease checks that the record is still whole.
//!
//! # A host lease (`lease=` with `shared=`)
//!
//! Every process of a host that opens the shared name draws from its one state word with one
//! leased value, so processes per host are not limited by the worker field; hosts are.
//!
//! - The shared file holds the host's token: the store sees one holder, the host. Claims take
//!   the file's lock and prefer the value the host holds, which is then "still ours": the
//!   first process claims, the others join its claim.
//! - Any live process renews. A renewal is recorded in the file, tagged with the claim's
//!   epoch; a process whose timer finds a renewal from the last third of a TTL adopts it
//!   instead of asking the store, so a host renews about once per `ttl/3` however many
//!   processes it runs. Every process reads the file's clock, so their readings compare.
//! - Reservations are recorded in the file the same way (under its lock): the host stores one
//!   per window, not one per process. Every ID comes from the shared state word, below a
//!   reservation stored while the claim held the host's token.
//! - Each process holds `<file>.lease` locked shared. The last to exit (the one that can then
//!   lock it exclusively) stores the end of the state word's issued IDs and frees the value;
//!   if the host's processes are killed, the claim expires within the TTL.
//! - When the lease is lost (not renewed in time, taken, deleted), every process stops at the
//!   end of its last adopted validity, before the TTL ends, and the next call claims again
//!   under the lock: the first process to do so claims, the others join that claim.

#[cfg(feature = "lease-mysql")]
mod mysql;
#[cfg(feature = "lease-postgres")]
mod postgres;
#[cfg(feature = "lease-redis")]
mod redis;
#[cfg(feature = "lease-redis")]
mod redis_conn;
#[cfg(any(feature = "lease-postgres", feature = "lease-mysql"))]
mod sql;

use crate::clock::{Clock, MonotonicClock};
use crate::coord::arbiter::{HostWords, Mode, Record, Refused, Request};
use crate::error::Error;
use crate::generator::{Cell, FastMark, HighWater, LeaseStats, PlainWord, Validity, Word};
use crate::layout::{Layout, Node};
use crate::options::{Policy, LEASE_MAX_DRIFT_MS, LEASE_MAX_WINDOW_MS};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::Duration;

/// Why a store's operation failed, with the message a user should see (naming the store's
/// address without a secret). The store has dropped a spoiled connection already: its next
/// operation connects again.
#[derive(Debug)]
pub(crate) struct Failure {
    pub message: String,
}

/// What a claim asks of a store.
pub(crate) struct Ask<'a> {
    pub token: &'a str,
    pub ttl_ms: u64,
    /// Tried first: the value held before, or the host's.
    pub prefer: Option<u64>,
    /// Then the values `from..to`, in order.
    pub from: u64,
    pub to: u64,
    /// A free value whose stored mark is beyond this tick is passed over (a poisoned mark).
    pub bound: u64,
}

/// What a store answers to a claim.
#[derive(Default)]
pub(crate) struct Claimed {
    /// The value claimed, if any was free.
    pub value: Option<u64>,
    /// Whether it held our token already (nobody else held it since).
    pub ours: bool,
    /// Its stored high-water mark (an exclusive end tick).
    pub mark: Option<u64>,
    /// Whether the mark may lack the last writes (a failover, a restart from a snapshot): the
    /// claim then starts past what an unrecorded holder may issue too.
    pub mark_stale: bool,
    /// Free values passed over for a poisoned mark, and the furthest such mark (a tick).
    pub skipped: u64,
    pub furthest: u64,
}

/// Where leases are kept: one identity's values, each a record of a holder's token with an
/// expiry (on the store's clock) and a high-water mark. Every operation that changes a value
/// checks the token first, atomically.
pub(crate) trait Store: Send {
    /// What to call it in messages: `Redis`, `PostgreSQL`, ...
    fn name(&self) -> &'static str;
    /// Where, for messages: the address (no secret) and the keys or rows of the identity.
    fn place(&self) -> String;
    /// How many values one claim call may scan (a wide field takes several calls).
    fn scan(&self) -> u64;
    /// The store's clock, Unix ms.
    fn clock_ms(&mut self) -> Result<u64, Failure>;
    /// Claims the first free value of [`Ask`] for its token.
    fn claim(&mut self, ask: &Ask<'_>) -> Result<Claimed, Failure>;
    /// Re-arms `value`'s expiry (`ttl_ms` from now) if it still holds `token`: the store's
    /// clock when it did, `None` when the value is no longer ours.
    fn renew(&mut self, value: u64, token: &str, ttl_ms: u64) -> Result<Option<u64>, Failure>;
    /// Raises `value`'s mark to `end` if it still holds `token`: false when it does not.
    fn set_mark(&mut self, value: u64, token: &str, end: u64) -> Result<bool, Failure>;
    /// Sets `value`'s mark to `end` (the exact end of what was issued) and frees it, if it
    /// still holds `token`.
    fn release(&mut self, value: u64, token: &str, end: u64) -> Result<(), Failure>;
    /// Frees `value` if it holds `token`, its mark as it was (a value just claimed that this
    /// host cannot use).
    fn unclaim(&mut self, value: u64, token: &str) -> Result<(), Failure>;
}

/// The identity a store keeps values of: the layout's fingerprint, and the node values
/// around the leased field's (`datacenter=1,worker=` and `,shard=2`), so that holders that
/// lease different fields of one layout meet on the same key or row for the same identity.
pub(crate) struct Identity {
    pub fingerprint: u64,
    pub head: String,
    pub tail: String,
}

impl Identity {
    /// `<fingerprint>:<every node field=value>`, the leased field's `value` included (a SQL
    /// store's row name; Redis builds its keys from the parts).
    #[cfg(any(feature = "lease-postgres", feature = "lease-mysql"))]
    pub(crate) fn name(&self, value: u64) -> String {
        format!("{:016x}:{}{value}{}", self.fingerprint, self.head, self.tail)
    }
}

/// How far a reading `host_ms` taken around a reply of the store's clock `store_ms` is from
/// it: the host's clock minus the store's (positive: the host is ahead), and the uncertainty
/// (half the round trip).
fn skew_of(sent_ms: u64, received_ms: u64, store_ms: u64) -> (i64, u64) {
    let half = received_ms.saturating_sub(sent_ms) / 2;
    ((sent_ms + half) as i64 - store_ms as i64, half)
}

fn utc(unix_ms: u64) -> String {
    let mut buf = [0u8; crate::time::RFC3339_LEN];
    crate::time::format_rfc3339(unix_ms, &mut buf).map_or_else(|| unix_ms.to_string(), str::to_string)
}

/// The shared part of a host lease (see the module docs).
pub(crate) struct Host {
    pub map: Arc<Record>,
    /// `<file>.lease`, locked shared while this process uses the lease.
    pub users: Option<crate::sys::HeldLock>,
    /// The epoch of this process's claim.
    pub epoch: AtomicU64,
    /// How long a wait for the host's locks may last.
    pub max_wait_ms: u64,
}

impl Host {
    /// Joins the host lease of `map`: locks `<file>.lease` shared (waiting, at most
    /// `max_wait_ms` and a second, while a last process releases the lease).
    pub(crate) fn join(map: Arc<Record>, max_wait_ms: u64) -> Result<Host, Error> {
        use crate::sys::{HeldLock, InChild};
        let wait = max_wait_ms.max(crate::coord::arbiter::OPEN_GRACE_MS);
        let deadline = std::time::Instant::now() + Duration::from_millis(wait);
        loop {
            let file = map.companion_file(".lease")?;
            match HeldLock::try_take(file, false, InChild::Dropped) {
                Ok(Some(users)) => {
                    return Ok(Host { map, users: Some(users), epoch: AtomicU64::new(0), max_wait_ms });
                }
                Ok(None) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(2))
                }
                Ok(None) => {
                    return Err(crate::coord::arbiter::busy(
                        &map.path().with_extension("host.lease"),
                        "the host lease's lock (a last process releasing the lease)",
                        None,
                    ))
                }
                Err(e) => return Err(crate::coord::io_err("locking", map.path(), e)),
            }
        }
    }

    /// The host's lock, waited for at most `max_wait_ms` (and a second).
    fn lock(&self) -> Result<crate::sys::Setup<'_>, Error> {
        let wait = self.max_wait_ms.max(crate::coord::arbiter::OPEN_GRACE_MS);
        self.map.host_lock(std::time::Instant::now() + Duration::from_millis(wait))
    }

    /// Whether this process is the host lease's last user: it unlocks `<file>.lease`, then
    /// locks it exclusively (held while the caller releases the lease).
    fn last_user(&mut self) -> Option<crate::sys::HeldLock> {
        use crate::sys::{HeldLock, InChild};
        drop(self.users.take());
        let file = self.map.companion_file(".lease").ok()?;
        HeldLock::try_take(file, true, InChild::Dropped).ok().flatten()
    }
}

/// What the options say about a lease's address.
pub(crate) struct Settings<'a> {
    pub url: &'a str,
    pub password_file: Option<&'a std::path::Path>,
    pub tls_ca: Option<&'a std::path::Path>,
    pub tls_cert: Option<&'a std::path::Path>,
    pub tls_key: Option<&'a std::path::Path>,
}

/// The store of `scheme`'s row ([`crate::LEASE_SCHEMES`]) at `settings.url`, for `identity`:
/// every store file has this one `open()`.
pub(crate) fn open_store(
    scheme: &'static crate::LeaseScheme,
    settings: &Settings<'_>,
    identity: Identity,
    ttl_ms: u64,
) -> Result<Box<dyn Store>, Error> {
    use crate::LeaseStore;
    match scheme.store {
        #[cfg(feature = "lease-redis")]
        LeaseStore::Redis => redis::open(settings, identity, ttl_ms),
        #[cfg(feature = "lease-postgres")]
        LeaseStore::Postgres => postgres::open(settings, identity, ttl_ms),
        #[cfg(feature = "lease-mysql")]
        LeaseStore::Mysql => mysql::open(settings, identity, ttl_ms),
        // Parsing `lease=` refuses a store whose feature this build lacks.
        #[allow(unreachable_patterns)]
        _ => Err(Error::MissingFeature {
            option: crate::text::Name::snippet("lease"),
            feature: scheme.feature,
        }),
    }
}

/// How a lease is configured.
pub(crate) struct Config {
    pub ttl_ms: u64,
    pub window_ms: u64,
    pub max_wait_ms: u64,
    pub max_clock_skew_ms: u64,
}

/// The value held now.
struct Held {
    value: u64,
    /// Counted as lost already (found taken, or lapsed): not renewed, not released.
    lost: bool,
}

/// What the store's lock guards: every exchange with the store is made under it.
struct Inner {
    store: Box<dyn Store>,
    held: Option<Held>,
    /// The host's record of the identity with the value held (see `arbiter`): while this
    /// process holds the value, no other way of issuing with it on this host can start.
    guard: Option<(u64, Arc<Record>)>,
    /// The last failed claim, repeated until `retry_at_ms` (no store call per ID).
    last_error: Option<Error>,
    /// A claim failed since the last one whose reply came (a timeout, a dropped connection):
    /// the store may have taken a value for our token all the same, after another holder had
    /// it. The next claim that finds a value "still ours" cannot tell, so it takes the stored
    /// mark as a newcomer does, never trusting that this process's state is above it.
    unsure: bool,
}

/// A held lease.
pub(crate) struct Lease {
    layout: Layout,
    /// The node values (the leased field's at 0) and the policy, for the value's record.
    node: Node,
    field: usize,
    token: String,
    ttl_ms: u64,
    window_ticks: u64,
    /// How far ahead of the store's clock a claim without a trusted mark starts, in ticks
    /// (see [`Lease::open`]).
    unknown_ticks: u64,
    /// The clock skew a holder of the fleet may have, in ms: this holder's
    /// `max_clock_skew_ms`, and at least the default (see [`Lease::open`]).
    fleet_skew_ms: u64,
    max_wait_ms: u64,
    max_clock_skew_ms: u64,
    max_tick: u64,
    clock: MonotonicClock,
    /// The claim's seqlock: odd while a claim is published.
    generation: AtomicU64,
    node_bits: AtomicU64,
    value: AtomicU64,
    /// The reserved end (exclusive tick), stored in the store before it is raised here.
    reserved: AtomicU64,
    /// The generator may issue while its clock reads less than this.
    valid_until_ms: AtomicU64,
    /// The generator's fast path may issue while its cheap reading is less than this (see
    /// `reopen_fast`); 0 closes it, and calls take the general path, which checks afresh.
    fast_until_ms: AtomicU64,
    /// The last tick the generator's lean path may issue at (see [`FastMark::last_tick`]):
    /// `fast_until_ms`, the reservation and the layout's end in one word; 0 closes it. A child
    /// of `fork()` finds it at 0 (`sys::zero_in_child`), and each claim zeroes it before it
    /// changes the claim's words.
    fast_last_tick: AtomicU64,
    /// `fast_last_tick` while the claim is of `first_value` and no other value was claimed
    /// since; else 0, for good (the generator's plain path reads it: see `FastMark::plain`).
    /// Zeroed where `fast_last_tick` is, and in a child of `fork()` too.
    plain_last_tick: AtomicU64,
    /// The value of the lease's first claim (`NO_VALUE` until it is made), and whether a claim
    /// of another value closed `plain_last_tick`.
    first_value: AtomicU64,
    plain_closed: AtomicBool,
    /// Whether `fast_last_tick` and `plain_last_tick` are zeroed in a child of `fork()`
    /// (registered when the lease opened): if not, they stay 0, and every call takes the
    /// general path.
    fast_tick_zeroed: AtomicBool,
    /// How far below `valid_until_ms` the fast path closes: room for the cheap reading's lag
    /// behind the clock (a tick while the ticker keeps up; a tenth of the TTL covers a ticker
    /// descheduled for that long).
    fast_margin_ms: u64,
    retry_at_ms: AtomicU64,
    /// The claim's IDs start at this reading (see `started`).
    start_ms: AtomicU64,
    /// Until when (a clock reading) the last check found the value's record on this host whole
    /// at its name (see `arbiter`'s validity): past it, the next call checks again.
    guard_until_ms: AtomicU64,
    claims: AtomicU64,
    losses: AtomicU64,
    /// This host's clock minus the store's at the last claim or renewal, in ms; whether one
    /// was measured; and how many renewals found it beyond `max_clock_skew_ms`.
    clock_skew_ms: AtomicI64,
    skew_measured: AtomicBool,
    skewed_renewals: AtomicU64,
    inner: Mutex<Inner>,
    state: Cell,
    word: Word,
    /// A host lease's shared part.
    host: Option<Host>,
    stop: Arc<(Mutex<bool>, Condvar)>,
    stopped: AtomicBool,
    /// A child of fork() holds a copy of the parent's lease: it must not release it.
    fork_generation: u64,
}

/// `Lease::first_value` before the first claim (values are below 2^53).
const NO_VALUE: u64 = u64::MAX;

/// How long a store may take to answer one operation: a fifth of the TTL, between 50 ms and
/// 2 s, so that a frozen store costs less than the lease's margin.
pub(crate) fn timeout(ttl_ms: u64) -> Duration {
    Duration::from_millis((ttl_ms / 5).clamp(50, 2000))
}

/// The system's CA certificates that rustls can use, read once per lease (when it is opened,
/// never inside a connection's timeout), for a server verified without `lease_tls_ca`.
#[cfg(any(feature = "lease-redis", feature = "lease-postgres", feature = "lease-mysql"))]
pub(crate) fn system_roots(what: &str) -> Result<Vec<rustls::pki_types::CertificateDer<'static>>, Error> {
    let found = rustls_native_certs::load_native_certs();
    let usable = found
        .certs
        .into_iter()
        .filter(|cert| rustls::RootCertStore::empty().add(cert.clone()).is_ok())
        .collect::<Vec<_>>();
    if usable.is_empty() {
        let why = found.errors.first().map_or_else(|| "it holds none".to_string(), |e| e.to_string());
        return Err(Error::lease_unavailable(format_args!(
            "no CA certificate to verify the {what} server's certificate with: the system's store gave none ({why}); give lease_tls_ca, a PEM file of the CA that signed the server's certificate"
        )));
    }
    Ok(usable)
}

impl Lease {
    /// The identity a lease of `field` keeps its values under.
    pub(crate) fn identity(layout: &Layout, node: &Node, field: usize) -> Identity {
        let mut text = String::new();
        let mut head = String::new();
        for (i, (name, v)) in layout.node_values(node).enumerate() {
            text.push_str(if i == 0 { "" } else { "," });
            text.push_str(name);
            text.push('=');
            if name == layout.fields()[field].name() {
                head = std::mem::take(&mut text);
            } else {
                text.push_str(&v.to_string());
            }
        }
        Identity { fingerprint: layout.fingerprint(), head, tail: text }
    }

    /// Claims a value of `field` in `store` and waits until it may issue (at most
    /// [`crate::LEASE_MAX_WINDOW_MS`] + [`crate::LEASE_MAX_DRIFT_MS`] + a tick when the store
    /// has no mark for it). The lease is valid when this returns.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn open(
        store: Box<dyn Store>,
        config: &Config,
        layout: &Layout,
        node: &Node,
        field: usize,
        state: Cell,
        word: Word,
        clock: MonotonicClock,
        host: Option<Host>,
    ) -> Result<Arc<Lease>, Error> {
        let ttl_ms = config.ttl_ms;
        let tick_ms = layout.tick_ms();
        let window_ms = config.window_ms.min(ttl_ms / 2).clamp(1, LEASE_MAX_WINDOW_MS);
        // A claim with no trusted mark starts past anything any earlier holder may have
        // issued, measured against the store's clock `T` read after the claim (an earlier
        // holder's last reservation was stored before it). Each margin, by the error it covers:
        // - LEASE_MAX_WINDOW_MS: a holder reserves at most this far past the tick it issues;
        // - LEASE_MAX_DRIFT_MS: it issues at most this far ahead of its own clock;
        // - once the allowed skew S: that holder's clock was up to S ahead of the store's when
        //   its claim was checked;
        // - twice: a holder's clock is checked at its claim only (a renewal counts a larger
        //   skew but goes on), and each check carries up to half a round trip: the second S
        //   covers a holder's clock that moved up to S further (NTP slewing, a step smaller
        //   than S) while it held the value. A step beyond that is the residue
        //   docs/processes.md names;
        // - a tick: the earlier holder's last tick is whole, ours starts at the next.
        // S is the fleet's: this holder's max_clock_skew_ms, and never less than the default
        // (holders that raise it must all raise it). In ticks, each rounded up.
        let fleet_skew_ms = config.max_clock_skew_ms.max(crate::options::DEFAULT_MAX_CLOCK_SKEW_MS);
        let unknown_ticks = LEASE_MAX_WINDOW_MS.div_ceil(tick_ms).max(1)
            + LEASE_MAX_DRIFT_MS.div_ceil(tick_ms)
            + (2 * fleet_skew_ms).div_ceil(tick_ms)
            + 1;
        let lease = Arc::new(Lease {
            layout: *layout,
            node: node.with(field, 0),
            field,
            token: match &host {
                Some(h) => h.map.host_token(),
                _ => format!(
                    "{}-{}-{:x}",
                    std::process::id(),
                    clock.now_ms(),
                    clock.offset_ns() as u64 ^ state.as_ptr() as u64
                ),
            },
            ttl_ms,
            window_ticks: (window_ms / tick_ms).max(1),
            unknown_ticks,
            fleet_skew_ms,
            max_wait_ms: config.max_wait_ms,
            max_clock_skew_ms: config.max_clock_skew_ms,
            max_tick: layout.max_tick(),
            clock,
            generation: AtomicU64::new(0),
            node_bits: AtomicU64::new(0),
            value: AtomicU64::new(0),
            reserved: AtomicU64::new(0),
            valid_until_ms: AtomicU64::new(0),
            fast_until_ms: AtomicU64::new(0),
            fast_last_tick: AtomicU64::new(0),
            plain_last_tick: AtomicU64::new(0),
            first_value: AtomicU64::new(NO_VALUE),
            plain_closed: AtomicBool::new(false),
            fast_tick_zeroed: AtomicBool::new(false),
            fast_margin_ms: (ttl_ms / 10).max(1),
            retry_at_ms: AtomicU64::new(0),
            start_ms: AtomicU64::new(0),
            guard_until_ms: AtomicU64::new(0),
            claims: AtomicU64::new(0),
            losses: AtomicU64::new(0),
            clock_skew_ms: AtomicI64::new(0),
            skew_measured: AtomicBool::new(false),
            skewed_renewals: AtomicU64::new(0),
            inner: Mutex::new(Inner { store, held: None, guard: None, last_error: None, unsure: false }),
            state,
            word,
            host,
            stop: Arc::new((Mutex::new(false), Condvar::new())),
            stopped: AtomicBool::new(false),
            fork_generation: crate::sys::fork_generation(),
        });
        let fast_zeroed = crate::sys::zero_in_child(&lease.fast_last_tick);
        if crate::sys::zero_in_child(&lease.plain_last_tick) && fast_zeroed {
            lease.fast_tick_zeroed.store(true, Ordering::Release);
        }
        // A pause while opening (a stopped process, a slow wait) can outlast the TTL: claim
        // again until the lease is valid when the generator gets it.
        let mut last = None;
        for _ in 0..4 {
            let mut inner = lease.lock();
            let prefer = inner.held.as_ref().map(|h| h.value);
            let floor = match lease.claim(&mut inner, prefer) {
                Ok(floor) => floor,
                Err(e) => {
                    drop(inner);
                    lease.stop_renewing();
                    return Err(e);
                }
            };
            drop(inner);
            if lease.claims.load(Ordering::Relaxed) == 1 {
                Lease::start_renewing(&lease).map_err(|e| {
                    Error::lease_unavailable(format_args!("cannot start the lease renewal thread: {e}"))
                })?;
            }
            lease.clock.wait_until_ms(layout.unix_ms_of(floor));
            if lease.clock.now_ms() < lease.valid_until_ms.load(Ordering::Acquire) {
                return Ok(lease);
            }
            lease.losses.fetch_add(1, Ordering::Relaxed);
            if let Some(h) = lease.lock().held.as_mut() {
                h.lost = true;
            }
            last = Some(Error::LeaseLost);
        }
        lease.stop_renewing();
        Err(last.unwrap_or(Error::LeaseLost))
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Reads the store's clock and refuses a claim when this host's is further from it than
    /// `max_clock_skew_ms` (beyond the uncertainty of the round trip).
    fn check_clock(&self, inner: &mut Inner) -> Result<(), Error> {
        let sent = self.clock.now_ms();
        let store_ms = inner.store.clock_ms().map_err(|e| Error::lease_unavailable(e.message))?;
        let (skew, half) = skew_of(sent, self.clock.now_ms(), store_ms);
        self.clock_skew_ms.store(skew, Ordering::Relaxed);
        self.skew_measured.store(true, Ordering::Relaxed);
        if skew.unsigned_abs() <= self.max_clock_skew_ms + half {
            return Ok(());
        }
        Err(Error::lease_unavailable(format_args!(
            "this host's clock reads {} and {} at {} reads {}: this host is {} ms {} the store, more than max_clock_skew_ms={}, so it claims no value (its IDs would sort apart from the fleet's); set the host's time right (NTP), or raise max_clock_skew_ms",
            utc(sent + half),
            inner.store.name(),
            inner.store.place(),
            utc(store_ms),
            skew.unsigned_abs(),
            if skew > 0 { "ahead of" } else { "behind" },
            self.max_clock_skew_ms
        )))
    }

    /// Claims a value (`prefer` first, else the lowest free), publishes it and raises the
    /// state to its floor; returns the floor (a tick). Under the lock.
    fn claim(&self, inner: &mut Inner, prefer: Option<u64>) -> Result<u64, Error> {
        // A host lease claims under the host's lock, preferring the host's value: a process
        // that finds it still the host's joins that claim.
        let _host_lock = self.host.as_ref().map(|h| h.lock()).transpose()?;
        self.check_clock(inner)?;
        let prefer = self.host.as_ref().and_then(|h| h.map.host_value()).or(prefer);
        let f = &self.layout.fields()[self.field];
        let count = f.max().saturating_add(1).min(1 << 53);
        let unavailable = |m: String| Error::lease_unavailable(m);
        let mut from: u64 = 0;
        let mut prefer = prefer;
        let mut taken_here: Option<Error> = None;
        // Free values passed over for a poisoned mark, and the furthest such mark (a tick).
        let (mut skipped, mut furthest) = (0u64, 0u64);
        let (sent_at, value, got, guard) = 'claim: loop {
            let (sent_at, value, got) = loop {
                let sent_at = self.clock.now_ms();
                let bound = self.furthest_start(sent_at)?;
                let to = from.saturating_add(inner.store.scan()).min(count);
                let ask = Ask { token: &self.token, ttl_ms: self.ttl_ms, prefer, from, to, bound };
                let mut got = match inner.store.claim(&ask) {
                    Ok(got) => got,
                    Err(e) => {
                        inner.unsure = true;
                        return Err(unavailable(e.message));
                    }
                };
                // (A host lease's token is the host's: its processes' claims are the host's.)
                got.ours &= !inner.unsure || self.host.is_some();
                skipped += got.skipped;
                furthest = furthest.max(got.furthest.saturating_sub(bound));
                if let Some(value) = got.value {
                    break (sent_at, value, got);
                }
                prefer = None;
                from = to;
                if from >= count {
                    let here = taken_here.as_ref().map_or(String::new(), |e| {
                        format!(
                            "; the last value free in {} is used on this host another way ({e})",
                            inner.store.name()
                        )
                    });
                    let text = match skipped {
                        0 => format!(
                            "all {count} values of `{}` are leased in {}{here}; this generator claims again on its next call",
                            f.name(),
                            inner.store.place(),
                        ),
                        n => format!(
                            "no value of `{}` can be claimed in {}: {} are leased, and {n} were passed over because the high-water mark stored for them is up to {} ms ahead of this host's clock (a time far in the future was stored, such as a next_id_at of another year, or this clock is far behind the last holders'){here}; this generator claims again on its next call",
                            f.name(),
                            inner.store.place(),
                            count.saturating_sub(n),
                            furthest.saturating_mul(self.layout.tick_ms())
                        ),
                    };
                    return Err(Error::lease_retry(text, self.ttl_ms));
                }
            };
            // The host's record of the identity with this value: held before the value is
            // used, so that no other way of issuing with it on this host runs meanwhile.
            match self.guard(inner, value) {
                Ok(guard) => break 'claim (sent_at, value, got, guard),
                Err(refused) => {
                    if !got.ours {
                        let _ = inner.store.unclaim(value, &self.token);
                    }
                    match refused {
                        Refused::Taken(e) => {
                            taken_here = Some(e);
                            if prefer != Some(value) {
                                from = value + 1;
                            }
                            prefer = None;
                            if from >= count {
                                return Err(Error::lease_retry(
                                    format_args!(
                                        "no value of `{}` free in {} can be used on this host: {}",
                                        f.name(),
                                        inner.store.name(),
                                        taken_here.expect("set above")
                                    ),
                                    self.ttl_ms,
                                ));
                            }
                        }
                        Refused::Failed(e) => return Err(e),
                    }
                }
            }
        };
        // Past anything an earlier holder may have issued, by the store's clock read now,
        // after the claim (see `open`): only when no trusted mark says where that ends.
        // "Still ours" is proven as the mark is: a store restored from a snapshot can hand back
        // our token after another holder had the value since.
        // `answered_at`: this host's reading once the store's clock has answered. That reading
        // was taken by the store after `sent_at`, as late as a slow claim and round trip allow
        // (a loaded store or host: a second or more), and is judged against this host's clock
        // of then, not of before the claim: else the round trip counts as skew, and a sound
        // claim is refused as "ahead of this host's clock".
        let trusted = !got.mark_stale && (got.ours || got.mark.is_some());
        let (unknown, answered_at) = match trusted {
            true => (0, sent_at),
            false => match inner.store.clock_ms() {
                Ok(store_ms) => (
                    self.layout.tick_of(store_ms)?.saturating_add(self.unknown_ticks),
                    self.clock.now_ms().max(sent_at),
                ),
                Err(e) => {
                    let _ = inner.store.unclaim(value, &self.token);
                    inner.unsure = true;
                    return Err(unavailable(e.message));
                }
            },
        };
        // `floor`: the state's new start; `reserved`: what may be issued below without
        // storing a reservation first.
        let (floor, reserved) = match (got.ours, got.mark) {
            // Still ours: nobody else held it since; our own state (the host's, for a host
            // lease) is above our IDs, and what we reserved is still ours to issue.
            (true, s) if trusted => (0, s.unwrap_or(0)),
            (false, Some(s)) if trusted => (s, s),
            // A mark of another run of the store (a restart from a snapshot, a promoted
            // replica): a lower bound only.
            (_, Some(s)) => (s.max(unknown), s.max(unknown)),
            (_, None) => (unknown, unknown),
        };
        let end = self.max_tick.saturating_add(1);
        let (floor, reserved) = (floor.min(end), reserved.min(end).max(floor.min(end)));
        if floor > self.furthest_start(answered_at)? {
            let now_tick = self.layout.tick_of(answered_at)?;
            let _ = inner.store.release(value, &self.token, floor);
            return Err(Error::lease_unavailable(format_args!(
                "the high-water mark stored for `{}`={value} is {} ms ahead of this host's clock: is this clock far behind the last holder's?",
                f.name(),
                (floor - now_tick).saturating_mul(self.layout.tick_ms())
            )));
        }
        // Above whatever the value's record says was issued on this host (by any way of
        // issuing, any user).
        let floor = floor.max(guard.issued_end(self.word).min(end));
        // A host's state may start ahead of the clock (another process's fresh claim): this
        // process too waits for it, as the one that raised it does.
        let floor = match self.host {
            Some(_) => floor.max(self.word.unpack(self.state.load(Ordering::Acquire)).0),
            None => floor,
        };
        // Publish: a taker that read the previous claim drops its slot (see `same_claim`). The
        // lean path closes first: it reads the claim's words without the seqlock (see
        // `HighWater::fast`).
        self.fast_last_tick.store(0, Ordering::SeqCst);
        self.plain_last_tick.store(0, Ordering::SeqCst);
        // The plain path serves the first value only: another closes it for good.
        let first =
            match self.first_value.compare_exchange(NO_VALUE, value, Ordering::SeqCst, Ordering::SeqCst) {
                Ok(_) => value,
                Err(first) => first,
            };
        if first != value {
            self.plain_closed.store(true, Ordering::SeqCst);
        }
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.node_bits.store(value << f.shift(), Ordering::SeqCst);
        self.value.store(value, Ordering::SeqCst);
        self.reserved.store(reserved, Ordering::SeqCst);
        self.word.raise_to(&self.state, floor);
        self.start_ms.store(self.layout.unix_ms_of(floor), Ordering::Release);
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.valid_until_ms.store(sent_at + self.ttl_ms / 5 * 4, Ordering::Release);
        if let Some(h) = &self.host {
            let epoch = h.map.host_claimed(value, got.ours);
            h.epoch.store(epoch, Ordering::Release);
            h.map.host_renewed(epoch, sent_at + self.ttl_ms / 5 * 4);
        }
        // The state moves strictly up, after every word of the claim (the host's epoch
        // included) and before the lean path reopens: a compare-and-swap from a word read
        // before this fails, and a word read after it comes with this claim's words.
        self.word.step_past(&self.state);
        self.reopen_fast();
        if inner.guard.as_ref().map(|(v, _)| *v) != Some(value) {
            // The value held before: its record keeps the end of everything issued so far.
            if let Some((_, old)) = inner.guard.take() {
                if let Some(end) = self.word.issued_end(self.state.load(Ordering::Acquire)) {
                    old.settle(self.word, end);
                }
            }
            inner.guard = Some((value, guard));
        }
        self.claims.fetch_add(1, Ordering::Relaxed);
        inner.held = Some(Held { value, lost: false });
        inner.last_error = None;
        inner.unsure = false;
        Ok(floor)
    }

    /// The furthest tick a claim made at this host's reading `sent_at` may start at: a claim
    /// without a trusted mark starts `unknown_ticks` past the store's clock, which may be
    /// ahead of this host's by the fleet's skew, and half a round trip more (counted as another
    /// skew). A mark beyond it is poisoned (passed over), or this clock is far behind.
    fn furthest_start(&self, sent_at: u64) -> Result<u64, Error> {
        Ok(self
            .layout
            .tick_of(sent_at.saturating_add(2 * self.fleet_skew_ms))?
            .saturating_add(self.unknown_ticks))
    }

    /// Checks that the value's record on this host is still whole at its name (a record
    /// removed by a cleaner, or truncated, could be made anew by a process that would then
    /// issue with the value beside this one): if not, the lease is given up here and claimed
    /// again (with a new record) by the next call.
    fn check_guard(&self, now_ms: u64) -> Result<(), Error> {
        let mut inner = self.lock();
        let Some((_, guard)) = inner.guard.as_ref() else { return Ok(()) };
        match guard.renew(guard.clock().now_ms()) {
            Ok(()) => {
                self.guard_until_ms.store(now_ms + crate::coord::arbiter::RECHECK_MS, Ordering::Release);
                self.reopen_fast();
                Ok(())
            }
            Err(e) => {
                inner.guard = None;
                self.lose(&mut inner);
                Err(e)
            }
        }
    }

    /// Holds the host's record of the identity with `value` (the one held already, or a new
    /// hold): alone for a lease of one process, with the host's other processes for a host
    /// lease.
    fn guard(&self, inner: &Inner, value: u64) -> Result<Arc<Record>, Refused> {
        if let Some((v, g)) = &inner.guard {
            if *v == value {
                return Ok(g.clone());
            }
        }
        let node = self.node.with(self.field, value);
        // Redis leases of a value share its record whatever their own policies (they share no
        // state); the lease term keeps every other way of issuing out.
        let policy =
            Policy { max_drift_ms: 0, max_wait_ms: 0, sequence_start: Default::default(), rollover: None };
        let req = Request {
            layout: &self.layout,
            node: &node,
            rollover: None,
            policy: &policy,
            state_file: None,
            host_lease: Some(self.field),
            mode: Mode::LeaseGuard,
            label: None,
            floor: 0,
            reserved: u64::MAX,
            word: self.word,
            // A claim may start this far ahead of this host's clock (`furthest_start`).
            ahead_ms: LEASE_MAX_WINDOW_MS + LEASE_MAX_DRIFT_MS + 4 * self.fleet_skew_ms,
        };
        Record::hold(&req)
    }

    fn start_renewing(lease: &Arc<Lease>) -> std::io::Result<()> {
        let weak: Weak<Lease> = Arc::downgrade(lease);
        let stop = lease.stop.clone();
        let period = Duration::from_millis((lease.ttl_ms / 3).max(1));
        let retry = Duration::from_millis((lease.ttl_ms / 10).max(1));
        std::thread::Builder::new()
            .name("snowflake-lease".into())
            .spawn(move || {
                let mut wait = period;
                loop {
                    let (lock, cv) = &*stop;
                    let stopped = cv
                        .wait_timeout_while(lock.lock().unwrap_or_else(|e| e.into_inner()), wait, |s| !*s)
                        .map(|(s, _)| *s)
                        .unwrap_or(true);
                    let Some(lease) = weak.upgrade().filter(|_| !stopped) else { return };
                    wait = if lease.renew() { period } else { retry };
                }
            })
            .map(|_| ())
    }

    /// One renewal of the value held, while it is valid (a lapsed one is claimed again by
    /// the generator's next call). Returns false when the store could not be reached.
    fn renew(&self) -> bool {
        let mut inner = self.lock();
        let Some(value) = inner.held.as_ref().filter(|h| !h.lost).map(|h| h.value) else { return true };
        let sent_at = self.clock.now_ms();
        if sent_at >= self.valid_until_ms.load(Ordering::Acquire) {
            return true;
        }
        // A host's process adopts a renewal from the last third of a TTL (see the module docs).
        let period = self.ttl_ms / 3;
        if self
            .adopt_host_renewal()
            .is_some_and(|until| until > (sent_at + self.ttl_ms / 5 * 4).saturating_sub(period))
        {
            return true;
        }
        match inner.store.renew(value, &self.token, self.ttl_ms) {
            Ok(Some(store_ms)) => {
                self.valid_until_ms.fetch_max(sent_at + self.ttl_ms / 5 * 4, Ordering::AcqRel);
                self.reopen_fast();
                if let Some(h) = &self.host {
                    h.map.host_renewed(h.epoch.load(Ordering::Acquire), sent_at + self.ttl_ms / 5 * 4);
                }
                // The clock, read with the renewal: a skew is recorded, the lease goes on (its
                // IDs are unique whatever the clocks say; a claim is where a skew is refused).
                let (skew, half) = skew_of(sent_at, self.clock.now_ms(), store_ms);
                self.clock_skew_ms.store(skew, Ordering::Relaxed);
                self.skew_measured.store(true, Ordering::Relaxed);
                if skew.unsigned_abs() > self.max_clock_skew_ms + half {
                    self.skewed_renewals.fetch_add(1, Ordering::Relaxed);
                }
                true
            }
            Ok(None) => {
                // Expired, freed or another's.
                self.lose(&mut inner);
                true
            }
            Err(_) => false, // unreachable: the validity runs out on its own
        }
    }

    /// How long each of `n` renewals takes, one after the other (see
    /// [`crate::coord::lease_renewal_times`]).
    pub(crate) fn time_renewals(&self, n: usize) -> Vec<std::time::Duration> {
        (0..n)
            .map(|_| {
                let start = std::time::Instant::now();
                self.renew();
                start.elapsed()
            })
            .collect()
    }

    /// A host lease: the validity of the last renewal of this process's claim, by any process
    /// of the host, adopted here (`valid_until_ms` raised to it). `None` for a lease of one
    /// process, or when the host's claim is another.
    fn adopt_host_renewal(&self) -> Option<u64> {
        if let Some(h) = &self.host {
            let until = h.map.host_valid(h.epoch.load(Ordering::Acquire))?;
            self.valid_until_ms.fetch_max(until, Ordering::AcqRel);
            self.reopen_fast();
            return Some(until);
        }
        None
    }

    /// Whether this process's claim is still its host's (always, for a lease of one process):
    /// when another process of the host claimed anew, this one joins that claim (in `heal`).
    #[inline]
    fn host_claim_current(&self) -> bool {
        if let Some(h) = &self.host {
            return h.epoch.load(Ordering::Acquire) == h.map.host_epoch();
        }
        true
    }

    /// Whether the claim's IDs have started at the reading `now_ms`: a claim without a
    /// stored mark starts ahead of the clock; a call waits for it within `max_wait_ms`.
    #[inline]
    fn started(&self, now_ms: u64) -> Result<(), Error> {
        let start_ms = self.start_ms.load(Ordering::Acquire);
        if now_ms >= start_ms {
            return Ok(());
        }
        if start_ms - now_ms <= self.max_wait_ms {
            self.clock.wait_until_ms(start_ms);
            return Ok(());
        }
        Err(Error::lease_retry(
            format_args!(
                "`{}`={} was claimed again without a high-water mark it can trust (a new store, or one that lost or may have lost writes), so its IDs start in {} ms, once any earlier holder has stopped",
                self.layout.fields()[self.field].name(),
                self.value.load(Ordering::Relaxed),
                start_ms - now_ms
            ),
            start_ms - now_ms,
        ))
    }

    /// Sets what the generator's fast path may issue until (see [`HighWater::fast`]): the
    /// validity less `fast_margin_ms`, and no later than the next check of the value's record
    /// on this host; closed (0) while the claim's IDs have not started. Called with the
    /// store's lock held (every write of the words it is made of is), after each change of
    /// them, so that it never stays above what they allow.
    ///
    /// The lean path's word follows: the last tick all of whose readings are below `until`,
    /// below the reservation's end and the layout's last tick, or 0 for none.
    fn reopen_fast(&self) {
        let until = if self.clock.now_ms() < self.start_ms.load(Ordering::Acquire) {
            0
        } else {
            let valid = self.valid_until_ms.load(Ordering::Acquire).saturating_sub(self.fast_margin_ms);
            valid.min(self.guard_until_ms.load(Ordering::Acquire))
        };
        self.fast_until_ms.store(until, Ordering::Release);
        let last = match self.layout.tick_of(until) {
            Ok(end) if self.fast_tick_zeroed.load(Ordering::Acquire) => {
                end.min(self.reserved.load(Ordering::Acquire)).min(self.max_tick).saturating_sub(1)
            }
            _ => 0,
        };
        self.fast_last_tick.store(last, Ordering::Release);
        let plain =
            if self.plain_closed.load(Ordering::Acquire) { 0 } else { last.min(self.record_last_tick()) };
        self.plain_last_tick.store(plain, Ordering::Release);
    }

    /// For a host lease, the word of the host's record's last valid tick (the generator's
    /// validity: see `FastMark::plain`), which only rises.
    fn record_tick_word(&self) -> Option<&AtomicU64> {
        self.host.as_ref().and_then(|h| h.map.last_valid_tick(&self.layout))
    }

    /// The bound [`Lease::record_tick_word`] puts on the plain word: none for a lease of one
    /// process.
    fn record_last_tick(&self) -> u64 {
        match &self.host {
            Some(_) => self.record_tick_word().map_or(0, |w| w.load(Ordering::Acquire)),
            None => u64::MAX,
        }
    }

    /// Whether a host lease's plain word is below what it may read: the host's record was
    /// checked again since it was set (the generator's general path does so every 50 ms, before
    /// it checks the lease), and the word follows only when told.
    fn plain_behind(&self) -> bool {
        self.host.is_some()
            && !self.plain_closed.load(Ordering::Acquire)
            && self.plain_last_tick.load(Ordering::Acquire)
                < self.fast_last_tick.load(Ordering::Acquire).min(self.record_last_tick())
    }

    /// The value held is lost: stop issuing with it, count it once.
    fn lose(&self, inner: &mut Inner) {
        self.fast_last_tick.store(0, Ordering::Release);
        self.plain_last_tick.store(0, Ordering::Release);
        self.fast_until_ms.store(0, Ordering::Release);
        self.valid_until_ms.store(0, Ordering::Release);
        if let Some(h) = inner.held.as_mut().filter(|h| !h.lost) {
            h.lost = true;
            self.losses.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The lease lapsed: claims again (the same value if it is free), unless a claim failed
    /// a moment ago. Waits for the new claim's floor if that is within `max_wait_ms`.
    fn heal(&self) -> Result<(), Error> {
        let mut inner = self.lock();
        let now = self.clock.now_ms();
        let current = self.host_claim_current();
        if current && now < self.valid_until_ms.load(Ordering::Acquire) {
            return Ok(()); // another thread claimed again meanwhile
        }
        if current
            && inner.held.as_ref().is_some_and(|h| !h.lost)
            && self.adopt_host_renewal().is_some_and(|until| now < until)
        {
            return Ok(()); // another process of the host renewed
        }
        if now < self.retry_at_ms.load(Ordering::Acquire) {
            return Err(inner.last_error.clone().unwrap_or(Error::LeaseLost));
        }
        self.lose(&mut inner);
        let prefer = inner.held.as_ref().map(|h| h.value);
        match self.claim(&mut inner, prefer) {
            Ok(_) => {
                drop(inner);
                self.started(self.clock.now_ms())
            }
            Err(e) => {
                let retry_ms = e.retry_after_ms().unwrap_or(self.ttl_ms / 5).clamp(1, self.ttl_ms);
                self.retry_at_ms.store(now + retry_ms, Ordering::Release);
                let e = match e {
                    Error::LeaseUnavailable { detail, retry_after_ms: None } => Error::lease_retry(
                        format_args!(
                            "{detail}; this generator claims again on a call in {retry_ms} ms or later"
                        ),
                        retry_ms,
                    ),
                    e => e,
                };
                inner.last_error = Some(e.clone());
                Err(e)
            }
        }
    }

    /// Stores a reservation past `tick` in the store (checking ownership), then raises it here.
    fn store_past(&self, tick: u64) -> Result<(), Error> {
        if self.reserved.load(Ordering::Acquire) > tick {
            return Ok(());
        }
        let mut inner = self.lock();
        if self.reserved.load(Ordering::Acquire) > tick {
            return Ok(());
        }
        let Some(value) = inner.held.as_ref().filter(|h| !h.lost).map(|h| h.value) else {
            drop(inner);
            return self.heal();
        };
        // A host lease reserves for the host: one process stores, the others adopt.
        let host = match &self.host {
            Some(h) => {
                let lock = h.lock()?;
                let epoch = h.epoch.load(Ordering::Acquire);
                if let Some(end) = h.map.host_reserved(epoch).filter(|&end| end > tick) {
                    self.reserved.fetch_max(end, Ordering::AcqRel);
                    self.reopen_fast();
                    return Ok(());
                }
                Some((h, lock, epoch))
            }
            None => None,
        };
        let new_end = tick.saturating_add(self.window_ticks).min(self.max_tick.saturating_add(1));
        match inner.store.set_mark(value, &self.token, new_end) {
            Ok(true) => {
                if let Some((_, g)) = &inner.guard {
                    g.guard_reserve(new_end);
                }
                self.reserved.fetch_max(new_end, Ordering::AcqRel);
                if let Some((h, _lock, epoch)) = host {
                    h.map.host_reserve(epoch, new_end);
                }
                self.reopen_fast();
                Ok(())
            }
            Ok(false) => {
                // Taken or deleted: claim again now, as the next call would.
                drop(host);
                self.lose(&mut inner);
                drop(inner);
                self.heal()
            }
            Err(e) => Err(Error::lease_retry(
                format_args!("cannot reserve time in {}: {}", inner.store.name(), e.message),
                (self.ttl_ms / 10).max(1),
            )),
        }
    }

    fn stop_renewing(&self) {
        if !self.stopped.swap(true, Ordering::AcqRel) {
            let (lock, cv) = &*self.stop;
            *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
            cv.notify_all();
        }
    }

    /// The value claimed now.
    pub(crate) fn value(&self) -> u64 {
        self.value.load(Ordering::Acquire)
    }
}

impl HighWater for Lease {
    #[inline]
    fn reserved(&self) -> &AtomicU64 {
        &self.reserved
    }
    fn extend(&self, tick: u64) -> Result<(), Error> {
        self.store_past(tick)
    }
    #[inline]
    fn check(&self, now_ms: u64) -> Result<(), Error> {
        if now_ms >= self.guard_until_ms.load(Ordering::Acquire) {
            self.check_guard(now_ms)?;
        }
        if now_ms < self.valid_until_ms.load(Ordering::Acquire) && self.host_claim_current() {
            self.started(now_ms)?;
            // The fast path stays closed from a claim whose IDs had not started until a call
            // finds them started (here, rarely: once a claim).
            // So does a host lease's plain word from a check of the host's record.
            if self.fast_until_ms.load(Ordering::Acquire) == 0 || self.plain_behind() {
                let _inner = self.lock();
                self.reopen_fast();
            }
            return Ok(());
        }
        self.heal()
    }
    fn heals(&self) -> bool {
        true
    }
    #[inline]
    fn claim(&self) -> (u64, u64) {
        loop {
            let generation = self.generation.load(Ordering::SeqCst);
            if generation.is_multiple_of(2) {
                return (generation, self.node_bits.load(Ordering::SeqCst));
            }
            std::hint::spin_loop();
        }
    }
    #[inline]
    fn same_claim(&self, generation: u64) -> bool {
        self.generation.load(Ordering::SeqCst) == generation
    }
    fn fast(&self) -> Option<FastMark<'_>> {
        Some(FastMark {
            open_until: &self.fast_until_ms,
            last_tick: &self.fast_last_tick,
            generation: &self.generation,
            node_bits: &self.node_bits,
            same: self.host.as_ref().map(|h| (&h.epoch, h.map.host_epoch_word())),
            plain: match self.first_value.load(Ordering::Acquire) {
                NO_VALUE => None,
                first => Some(PlainWord {
                    last_tick: &self.plain_last_tick,
                    node_bits: first << self.layout.fields()[self.field].shift(),
                    bounds: self.record_tick_word(),
                }),
            },
        })
    }
    fn lease_stats(&self) -> Option<LeaseStats> {
        Some(LeaseStats {
            claims: self.claims.load(Ordering::Relaxed),
            losses: self.losses.load(Ordering::Relaxed),
            value: self.value.load(Ordering::Relaxed),
            clock_skew_ms: self
                .skew_measured
                .load(Ordering::Relaxed)
                .then(|| self.clock_skew_ms.load(Ordering::Relaxed)),
            skewed_renewals: self.skewed_renewals.load(Ordering::Relaxed),
        })
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        // In a child of fork() too: the word's memory goes with the lease.
        crate::sys::unzero_in_child(&self.fast_last_tick);
        crate::sys::unzero_in_child(&self.plain_last_tick);
        let inner = self.inner.get_mut().unwrap_or_else(|e| e.into_inner());
        // A child of fork(): the parent still holds and uses the lease (and the connection,
        // whose TLS session a close here would end).
        if self.fork_generation != crate::sys::current_fork_generation() {
            let store = std::mem::replace(&mut inner.store, Box::new(Forgotten));
            std::mem::forget(store);
            return;
        }
        self.stop_renewing();
        if let Some(mut host) = self.host.take() {
            // Only the host's last process releases (see the module docs).
            let Some(_last) = host.last_user() else { return };
            let _lock = host.lock();
            let Some(value) = host.map.host_value() else { return };
            // Every ID of the host came from the state word: its end is exact.
            let Some(end) = self.word.issued_end(self.state.load(Ordering::Acquire)) else { return };
            let mut inner = self.lock();
            if let Some((_, guard)) = inner.guard.take() {
                guard.settle(self.word, end);
            }
            let _ = inner.store.release(value, &self.token, end);
            return;
        }
        let mut inner = self.lock();
        // A lease never has a rollover field (refused at open), so the end is known.
        let reserved = self.reserved.load(Ordering::Acquire);
        let end =
            self.word.issued_end(self.state.load(Ordering::Acquire)).map_or(reserved, |e| e.min(reserved));
        if let Some((_, guard)) = inner.guard.take() {
            guard.settle(self.word, end);
        }
        let Some(held) = inner.held.take().filter(|h| !h.lost) else { return };
        let _ = inner.store.release(held.value, &self.token, end);
    }
}

/// What a child of fork() leaves in place of its parent's store, whose connection it must
/// neither use nor close.
struct Forgotten;

impl Store for Forgotten {
    fn name(&self) -> &'static str {
        "the store"
    }
    fn place(&self) -> String {
        String::new()
    }
    fn scan(&self) -> u64 {
        1
    }
    fn clock_ms(&mut self) -> Result<u64, Failure> {
        Err(Failure { message: "a child of fork() does not use its parent's lease".into() })
    }
    fn claim(&mut self, _: &Ask<'_>) -> Result<Claimed, Failure> {
        self.clock_ms().map(|_| Claimed::default())
    }
    fn renew(&mut self, _: u64, _: &str, _: u64) -> Result<Option<u64>, Failure> {
        self.clock_ms().map(|_| None)
    }
    fn set_mark(&mut self, _: u64, _: &str, _: u64) -> Result<bool, Failure> {
        self.clock_ms().map(|_| false)
    }
    fn release(&mut self, _: u64, _: &str, _: u64) -> Result<(), Failure> {
        self.clock_ms().map(|_| ())
    }
    fn unclaim(&mut self, _: u64, _: &str) -> Result<(), Failure> {
        self.clock_ms().map(|_| ())
    }
}
