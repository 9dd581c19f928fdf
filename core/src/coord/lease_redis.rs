//! Worker-id leases in Redis (`lease=redis://…`, `rediss://…`, `unix://…`,
//! `redis+sentinel://…`), for fleets across hosts. The connection is `super::redis_conn`'s.
//!
//! - **Keys**: one per identity, `libsnowflake:<layout fingerprint>:<every node field=value>`
//!   (the leased field's value included), and its high-water mark `<key>:hwm`. Holders that
//!   lease different fields of one layout meet on the same key for the same identity.
//! - **Claim**: in one script, the first free value of the leased field (the one held before,
//!   when claiming again; else the lowest), `SET <key> <token> PX <ttl>`, and its stored mark.
//! - **Renew**: a background thread re-arms the key every `ttl/3` while it still holds our
//!   token. The generator issues only while its clock reads less than the last successful
//!   renewal's send time + 4/5 TTL: cut off from Redis, it stops before its key can expire.
//! - **Reserve**: before issuing at a tick beyond its reservation, the holder stores a new one
//!   (the tick plus a window of at most [`crate::LEASE_MAX_WINDOW_MS`]) in the mark, in a
//!   script that first checks the token. Every ID is below a reservation stored while the key
//!   was ours, so a holder whose key was deleted, taken or lost issues nothing beyond what
//!   Redis recorded (or, after a data loss, beyond its last window).
//! - **Next holder**: starts at the stored mark. With none (a value never used, or Redis lost
//!   its data) it starts [`crate::LEASE_MAX_WINDOW_MS`] + [`crate::LEASE_MAX_DRIFT_MS`] + one
//!   tick ahead of its clock, past anything a holder that still thinks it owns the value can
//!   issue, whatever that holder's own settings: every holder obeys those caps. Behind
//!   Sentinel it always does so (a promoted replica may lack the last writes).
//! - **Heal**: a lapsed lease (not renewed in time, or found taken or deleted) is claimed
//!   again on the generator's next call: the same value if it is free, else another. The
//!   claim is published under a seqlock (`generation`): an ID is composed with the claim its
//!   slot was checked against, or its slot is dropped.
//! - **Release** (on drop): stores the exact end of what was issued and deletes the key.
//!
//! # A host lease (`lease=` with `shared=`)
//!
//! Every process of a host that opens the shared name draws from its one state word with one
//! leased value, so processes per host are not limited by the worker field; hosts are.
//!
//! - The shared file holds the host's token: Redis sees one holder, the host. Claims take the
//!   file's lock and prefer the value the host holds, which is then "still ours": the first
//!   process claims, the others join its claim.
//! - Any live process renews. A renewal is recorded in the file, tagged with the claim's
//!   epoch; a process whose timer finds a renewal from the last third of a TTL adopts it
//!   instead of asking Redis, so a host renews about once per `ttl/3` however many processes
//!   it runs. Every process reads the file's clock, so their readings compare.
//! - Reservations are recorded in the file the same way (under its lock): the host stores one
//!   per window, not one per process. Every ID comes from the shared state word, below a
//!   reservation stored while the key held the host's token.
//! - Each process holds `<file>.lease` locked shared. The last to exit (the one that can then
//!   lock it exclusively) stores the end of the state word's issued IDs and deletes the key;
//!   if the host's processes are killed, the key expires within the TTL.
//! - When the lease is lost (not renewed in time, taken, deleted), every process stops at the
//!   end of its last adopted validity, before the TTL ends, and the next call claims again
//!   under the lock: the first process to do so claims, the others join that claim.

use super::arbiter::{HostWords, Mode, Record, Refused, Request};
use super::redis_conn::{describe, Failure, Settings, Target};
use crate::clock::{Clock, MonotonicClock};
use crate::error::Error;
use crate::generator::{Cell, HighWater, LeaseStats, Word};
use crate::layout::{Layout, Node};
use crate::options::{Policy, LEASE_MAX_DRIFT_MS, LEASE_MAX_WINDOW_MS};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::Duration;

/// Claims the first free value: ARGV head, tail (the key around the value), from, to
/// (exclusive), token, ttl, the preferred value (or -1). Returns {value, ours, mark or nil}:
/// `ours` when the key still held our token.
const CLAIM: &str = "local head, tail, token, ttl = ARGV[1], ARGV[2], ARGV[5], ARGV[6] \
local function try(v) \
  local k = head .. string.format('%.0f', v) .. tail \
  local cur = redis.call('GET', k) \
  local ours = 0 \
  if cur == token then ours = 1 elseif cur then return nil end \
  redis.call('SET', k, token, 'PX', ttl) \
  return {v, ours, redis.call('GET', k .. ':hwm') or false} \
end \
local prefer = tonumber(ARGV[7]) \
if prefer >= 0 then local r = try(prefer) if r then return r end end \
for v = tonumber(ARGV[3]), tonumber(ARGV[4]) - 1 do \
  local r = try(v) if r then return r end \
end \
return false";
const RENEW: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then \
return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0";
const EXTEND: &str = "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end \
local cur = tonumber(redis.call('GET', KEYS[2]) or '0') \
if tonumber(ARGV[2]) > cur then redis.call('SET', KEYS[2], ARGV[2]) end return 1";
const RELEASE: &str = "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end \
redis.call('SET', KEYS[2], ARGV[2]) redis.call('DEL', KEYS[1]) return 1";
/// Gives back a value just claimed that this host cannot use (another process of it uses the
/// identity): the key only, its mark as it was.
const UNCLAIM: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end return 1";

/// Values scanned by one claim script: a wide field is scanned in several calls, so that no
/// call holds Redis for long.
const SCAN: u64 = 4096;

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
        let wait = max_wait_ms.max(super::arbiter::OPEN_GRACE_MS);
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
                    return Err(super::arbiter::busy(
                        &map.path().with_extension("host.lease"),
                        "the host lease's lock (a last process releasing the lease)",
                        None,
                    ))
                }
                Err(e) => return Err(super::io_err("locking", map.path(), e)),
            }
        }
    }

    /// The host's lock, waited for at most `max_wait_ms` (and a second).
    fn lock(&self) -> Result<crate::sys::Setup<'_>, Error> {
        let wait = self.max_wait_ms.max(super::arbiter::OPEN_GRACE_MS);
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

/// How a lease is configured.
pub(crate) struct Config<'a> {
    pub settings: Settings<'a>,
    pub ttl_ms: u64,
    pub window_ms: u64,
    pub max_wait_ms: u64,
}

/// The key of the value held now.
struct Held {
    value: u64,
    key: String,
    hwm: String,
    /// Counted as lost already (found taken, or lapsed): not renewed, not released.
    lost: bool,
}

/// What the connection's lock guards: every exchange with Redis is made under it.
struct Inner {
    conn: Option<redis::Connection>,
    held: Option<Held>,
    /// The host's record of the identity with the value held (see `arbiter`): while this
    /// process holds the value, no other way of issuing with it on this host can start.
    guard: Option<(u64, Arc<Record>)>,
    /// The last failed claim, repeated until `retry_at_ms` (no Redis call per ID).
    last_error: Option<Error>,
}

/// A held lease.
pub(crate) struct RedisLease {
    target: Target,
    layout: Layout,
    /// The node values (the leased field's at 0) and the policy, for the value's record.
    node: Node,
    field: usize,
    /// The key around the leased value: `libsnowflake:<fp>:a=1,worker=` and `,b=2`.
    head: String,
    tail: String,
    token: String,
    ttl_ms: u64,
    window_ticks: u64,
    /// How far ahead of the clock a claim without a stored mark starts, in ticks.
    unknown_ticks: u64,
    max_wait_ms: u64,
    max_tick: u64,
    clock: MonotonicClock,
    /// The claim's seqlock: odd while a claim is published.
    generation: AtomicU64,
    node_bits: AtomicU64,
    value: AtomicU64,
    /// The reserved end (exclusive tick), stored in Redis before it is raised here.
    reserved: AtomicU64,
    /// The generator may issue while its clock reads less than this.
    valid_until_ms: AtomicU64,
    retry_at_ms: AtomicU64,
    /// The claim's IDs start at this reading (see `started`).
    start_ms: AtomicU64,
    /// Until when (a clock reading) the last check found the value's record on this host whole
    /// at its name (see `arbiter`'s validity): past it, the next call checks again.
    guard_until_ms: AtomicU64,
    claims: AtomicU64,
    losses: AtomicU64,
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

fn timeout(ttl_ms: u64) -> Duration {
    Duration::from_millis((ttl_ms / 5).clamp(50, 2000))
}

fn eval(
    conn: &mut redis::Connection,
    script: &str,
    keys: &[&str],
    args: &[String],
) -> redis::RedisResult<redis::Value> {
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(script).arg(keys.len()).arg(keys).arg(args);
    cmd.query(conn)
}

fn int(v: &redis::Value) -> Option<i64> {
    match v {
        redis::Value::Int(n) => Some(*n),
        redis::Value::BulkString(b) => std::str::from_utf8(b).ok()?.parse().ok(),
        _ => None,
    }
}

impl RedisLease {
    /// Connects, claims a value of `field` and waits until it may issue (at most
    /// [`crate::LEASE_MAX_WINDOW_MS`] + [`crate::LEASE_MAX_DRIFT_MS`] + a tick when Redis
    /// has no mark for it). The lease is valid when this returns.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn open(
        config: &Config<'_>,
        layout: &Layout,
        node: &Node,
        field: usize,
        state: Cell,
        word: Word,
        clock: MonotonicClock,
        host: Option<Host>,
    ) -> Result<Arc<RedisLease>, Error> {
        let ttl_ms = config.ttl_ms;
        let target = Target::new(&config.settings, timeout(ttl_ms))?;
        let tick_ms = layout.tick_ms();
        let window_ms = config.window_ms.min(ttl_ms / 2).clamp(1, LEASE_MAX_WINDOW_MS);
        // The caps in ticks, rounded up: a holder's own window and drift are at most these.
        let unknown_ticks =
            LEASE_MAX_WINDOW_MS.div_ceil(tick_ms).max(1) + LEASE_MAX_DRIFT_MS.div_ceil(tick_ms) + 1;
        let mut identity = format!("libsnowflake:{:016x}:", layout.fingerprint());
        let mut head = String::new();
        for (i, (name, v)) in layout.node_values(node).enumerate() {
            identity.push_str(if i == 0 { "" } else { "," });
            identity.push_str(name);
            identity.push('=');
            if name == layout.fields()[field].name() {
                head = std::mem::take(&mut identity);
            } else {
                identity.push_str(&v.to_string());
            }
        }
        let tail = identity;
        let lease = Arc::new(RedisLease {
            target,
            layout: *layout,
            node: node.with(field, 0),
            field,
            head,
            tail,
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
            max_wait_ms: config.max_wait_ms,
            max_tick: layout.max_tick(),
            clock,
            generation: AtomicU64::new(0),
            node_bits: AtomicU64::new(0),
            value: AtomicU64::new(0),
            reserved: AtomicU64::new(0),
            valid_until_ms: AtomicU64::new(0),
            retry_at_ms: AtomicU64::new(0),
            start_ms: AtomicU64::new(0),
            guard_until_ms: AtomicU64::new(0),
            claims: AtomicU64::new(0),
            losses: AtomicU64::new(0),
            inner: Mutex::new(Inner { conn: None, held: None, guard: None, last_error: None }),
            state,
            word,
            host,
            stop: Arc::new((Mutex::new(false), Condvar::new())),
            stopped: AtomicBool::new(false),
            fork_generation: crate::sys::fork_generation(),
        });
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
                RedisLease::start_renewing(&lease).map_err(|e| {
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

    /// Runs `f` on the connection (made first if there is none); a failure that spoils the
    /// connection drops it, and the next call connects again (behind Sentinel: to the master
    /// the sentinels name then).
    fn with_conn<T>(
        &self,
        inner: &mut Inner,
        f: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, Failure> {
        if inner.conn.is_none() {
            inner.conn = Some(self.target.connect()?);
        }
        match f(inner.conn.as_mut().expect("connected above")) {
            Ok(v) => Ok(v),
            Err(e) => {
                let failure = describe(&e, &self.target.shown);
                if failure.reconnect {
                    inner.conn = None;
                }
                Err(failure)
            }
        }
    }

    /// Claims a value (`prefer` first, else the lowest free), publishes it and raises the
    /// state to its floor; returns the floor (a tick). Under the lock.
    fn claim(&self, inner: &mut Inner, prefer: Option<u64>) -> Result<u64, Error> {
        // A host lease claims under the host's lock, preferring the host's value: a process
        // that finds it still the host's joins that claim.
        let _host_lock = self.host.as_ref().map(|h| h.lock()).transpose()?;
        let prefer = self.host.as_ref().and_then(|h| h.map.host_value()).or(prefer);
        let f = &self.layout.fields()[self.field];
        let count = f.max().saturating_add(1).min(1 << 53);
        let unavailable = |m: &str| Error::lease_unavailable(m);
        let mut from: u64 = 0;
        let mut prefer = prefer;
        let mut taken_here: Option<Error> = None;
        let (sent_at, value, ours, stored, guard) = 'claim: loop {
            let (sent_at, value, ours, stored) = loop {
                let sent_at = self.clock.now_ms();
                let to = from.saturating_add(SCAN).min(count);
                let args = [
                    self.head.clone(),
                    self.tail.clone(),
                    from.to_string(),
                    to.to_string(),
                    self.token.clone(),
                    self.ttl_ms.to_string(),
                    prefer.map_or("-1".to_string(), |v| v.to_string()),
                ];
                let reply = self
                    .with_conn(inner, |c| eval(c, CLAIM, &[], &args))
                    .map_err(|e| unavailable(&e.message))?;
                if let redis::Value::Array(items) = &reply {
                    let value = items.first().and_then(int).and_then(|v| u64::try_from(v).ok());
                    let ours = items.get(1).and_then(int) == Some(1);
                    let stored = items.get(2).and_then(int).and_then(|v| u64::try_from(v).ok());
                    if let Some(value) = value {
                        break (sent_at, value, ours, stored);
                    }
                }
                prefer = None;
                from = to;
                if from >= count {
                    let here = taken_here.as_ref().map_or(String::new(), |e| {
                        format!("; the last value free in Redis is used on this host another way ({e})")
                    });
                    return Err(Error::lease_retry(
                        format_args!(
                            "all {count} values of `{}` are leased in Redis at {} (keys {}*{}){here}; this generator claims again on its next call",
                            f.name(),
                            self.target.shown,
                            self.head,
                            self.tail
                        ),
                        self.ttl_ms,
                    ));
                }
            };
            // The host's record of the identity with this value: held before the value is
            // used, so that no other way of issuing with it on this host runs meanwhile.
            match self.guard(inner, value) {
                Ok(guard) => break 'claim (sent_at, value, ours, stored, guard),
                Err(refused) => {
                    if !ours {
                        let key = format!("{}{value}{}", self.head, self.tail);
                        let _ = self.with_conn(inner, |c| {
                            eval(c, UNCLAIM, &[&key], std::slice::from_ref(&self.token))
                        });
                    }
                    match refused {
                        Refused::Taken(e) => {
                            taken_here = Some(e);
                            if prefer == Some(value) {
                                prefer = None;
                            } else {
                                from = value + 1;
                                prefer = None;
                            }
                            if from >= count {
                                return Err(Error::lease_retry(
                                    format_args!(
                                        "no value of `{}` free in Redis can be used on this host: {}",
                                        f.name(),
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
        let key = format!("{}{value}{}", self.head, self.tail);
        let hwm = format!("{key}:hwm");
        let now_tick = self.layout.tick_of(sent_at)?;
        let unknown = now_tick.saturating_add(self.unknown_ticks);
        // `floor`: the state's new start; `reserved`: what may be issued below without
        // storing a reservation first.
        let (floor, reserved) = match (ours, stored) {
            // Still ours: nobody else held it since; our own state (the host's, for a host
            // lease) is above our IDs, and what we reserved is still ours to issue.
            (true, s) => (0, s.unwrap_or(0)),
            (false, Some(s)) if self.target.is_sentinel() => (s.max(unknown), s.max(unknown)),
            (false, Some(s)) => (s, s),
            (false, None) => (unknown, unknown),
        };
        let end = self.max_tick.saturating_add(1);
        let (floor, reserved) = (floor.min(end), reserved.min(end).max(floor.min(end)));
        if floor > unknown {
            let end = floor.to_string();
            let _ = self.with_conn(inner, |c| eval(c, RELEASE, &[&key, &hwm], &[self.token.clone(), end]));
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
        // Publish: a taker that read the previous claim drops its slot (see `same_claim`).
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.node_bits.store(value << f.shift(), Ordering::SeqCst);
        self.value.store(value, Ordering::SeqCst);
        self.reserved.store(reserved, Ordering::SeqCst);
        self.word.raise_to(&self.state, floor);
        self.start_ms.store(self.layout.unix_ms_of(floor), Ordering::Release);
        self.generation.fetch_add(1, Ordering::SeqCst);
        self.valid_until_ms.store(sent_at + self.ttl_ms / 5 * 4, Ordering::Release);
        if let Some(h) = &self.host {
            let epoch = h.map.host_claimed(value, ours);
            h.epoch.store(epoch, Ordering::Release);
            h.map.host_renewed(epoch, sent_at + self.ttl_ms / 5 * 4);
        }
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
        inner.held = Some(Held { value, key, hwm, lost: false });
        inner.last_error = None;
        Ok(floor)
    }

    /// Checks that the value's record on this host is still whole at its name (a record
    /// removed by a cleaner, or truncated, could be made anew by a process that would then
    /// issue with the value beside this one): if not, the lease is given up here and claimed
    /// again (with a new record) by the next call.
    fn check_guard(&self, now_ms: u64) -> Result<(), Error> {
        use crate::generator::Validity;
        let mut inner = self.lock();
        let Some((_, guard)) = inner.guard.as_ref() else { return Ok(()) };
        match guard.renew(guard.clock().now_ms()) {
            Ok(()) => {
                self.guard_until_ms.store(now_ms + super::arbiter::RECHECK_MS, Ordering::Release);
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
            ahead_ms: LEASE_MAX_WINDOW_MS + LEASE_MAX_DRIFT_MS,
        };
        Record::hold(&req)
    }

    fn start_renewing(lease: &Arc<RedisLease>) -> std::io::Result<()> {
        let weak: Weak<RedisLease> = Arc::downgrade(lease);
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
    /// the generator's next call). Returns false when Redis could not be reached.
    fn renew(&self) -> bool {
        let mut inner = self.lock();
        let Some(held) = inner.held.as_ref().filter(|h| !h.lost) else { return true };
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
        let key = held.key.clone();
        let args = [self.token.clone(), self.ttl_ms.to_string()];
        match self.with_conn(&mut inner, |c| eval(c, RENEW, &[&key], &args)) {
            Ok(redis::Value::Int(1)) => {
                self.valid_until_ms.fetch_max(sent_at + self.ttl_ms / 5 * 4, Ordering::AcqRel);
                if let Some(h) = &self.host {
                    h.map.host_renewed(h.epoch.load(Ordering::Acquire), sent_at + self.ttl_ms / 5 * 4);
                }
                true
            }
            Ok(_) => {
                // The key is gone or another's.
                self.lose(&mut inner);
                true
            }
            Err(_) => false, // unreachable: the validity runs out on its own
        }
    }

    /// A host lease: the validity of the last renewal of this process's claim, by any process
    /// of the host, adopted here (`valid_until_ms` raised to it). `None` for a lease of one
    /// process, or when the host's claim is another.
    fn adopt_host_renewal(&self) -> Option<u64> {
        if let Some(h) = &self.host {
            let until = h.map.host_valid(h.epoch.load(Ordering::Acquire))?;
            self.valid_until_ms.fetch_max(until, Ordering::AcqRel);
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
                "`{}`={} was claimed again and Redis had no high-water mark for it, so its IDs start in {} ms, once any earlier holder has stopped",
                self.layout.fields()[self.field].name(),
                self.value.load(Ordering::Relaxed),
                start_ms - now_ms
            ),
            start_ms - now_ms,
        ))
    }

    /// The value held is lost: stop issuing with it, count it once.
    fn lose(&self, inner: &mut Inner) {
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

    /// Stores a reservation past `tick` in Redis (checking ownership), then raises it here.
    fn store_past(&self, tick: u64) -> Result<(), Error> {
        if self.reserved.load(Ordering::Acquire) > tick {
            return Ok(());
        }
        let mut inner = self.lock();
        if self.reserved.load(Ordering::Acquire) > tick {
            return Ok(());
        }
        let Some(held) = inner.held.as_ref().filter(|h| !h.lost) else {
            drop(inner);
            return self.heal();
        };
        let (key, hwm) = (held.key.clone(), held.hwm.clone());
        // A host lease reserves for the host: one process stores, the others adopt.
        let host = match &self.host {
            Some(h) => {
                let lock = h.lock()?;
                let epoch = h.epoch.load(Ordering::Acquire);
                if let Some(end) = h.map.host_reserved(epoch).filter(|&end| end > tick) {
                    self.reserved.fetch_max(end, Ordering::AcqRel);
                    return Ok(());
                }
                Some((h, lock, epoch))
            }
            None => None,
        };
        let new_end = tick.saturating_add(self.window_ticks).min(self.max_tick.saturating_add(1));
        let args = [self.token.clone(), new_end.to_string()];
        match self.with_conn(&mut inner, |c| eval(c, EXTEND, &[&key, &hwm], &args)) {
            Ok(redis::Value::Int(1)) => {
                if let Some((_, g)) = &inner.guard {
                    g.guard_reserve(new_end);
                }
                self.reserved.fetch_max(new_end, Ordering::AcqRel);
                if let Some((h, _lock, epoch)) = host {
                    h.map.host_reserve(epoch, new_end);
                }
                Ok(())
            }
            Ok(_) => {
                // Taken or deleted: claim again now, as the next call would.
                drop(host);
                self.lose(&mut inner);
                drop(inner);
                self.heal()
            }
            Err(e) => Err(Error::lease_retry(
                format_args!("cannot reserve time in Redis: {}", e.message),
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

impl HighWater for RedisLease {
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
            return self.started(now_ms);
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
    fn lease_stats(&self) -> Option<LeaseStats> {
        Some(LeaseStats {
            claims: self.claims.load(Ordering::Relaxed),
            losses: self.losses.load(Ordering::Relaxed),
            value: self.value.load(Ordering::Relaxed),
        })
    }
}

impl Drop for RedisLease {
    fn drop(&mut self) {
        let inner = self.inner.get_mut().unwrap_or_else(|e| e.into_inner());
        // A child of fork(): the parent still holds and uses the lease (and the socket, whose
        // TLS session a close here would end).
        if self.fork_generation != crate::sys::current_fork_generation() {
            std::mem::forget(inner.conn.take());
            return;
        }
        self.stop_renewing();
        if let Some(mut host) = self.host.take() {
            // Only the host's last process releases (see the module docs).
            let Some(_last) = host.last_user() else { return };
            let _lock = host.lock();
            let Some(value) = host.map.host_value() else { return };
            let key = format!("{}{value}{}", self.head, self.tail);
            let hwm = format!("{key}:hwm");
            // Every ID of the host came from the state word: its end is exact.
            let Some(end) = self.word.issued_end(self.state.load(Ordering::Acquire)) else { return };
            let mut inner = self.lock();
            if let Some((_, guard)) = inner.guard.take() {
                guard.settle(self.word, end);
            }
            let args = [self.token.clone(), end.to_string()];
            let _ = self.with_conn(&mut inner, |c| eval(c, RELEASE, &[&key, &hwm], &args));
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
        let args = [self.token.clone(), end.to_string()];
        let _ = self.with_conn(&mut inner, |c| eval(c, RELEASE, &[&held.key, &held.hwm], &args));
    }
}
