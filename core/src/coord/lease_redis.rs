//! Worker-id leases in Redis (`lease=redis://host:port/db`), for fleets across hosts.
//!
//! - **Claim**: `SET <owner-key> <token> NX PX <ttl>` on the values of the leased field, lowest
//!   first, in one script that also reads the value's stored high-water mark.
//! - **Renew**: a background thread re-arms the TTL every `ttl/3` (only while the key still holds
//!   our token). The generator issues only while `now < last successful renewal + 4/5 ttl`: a
//!   holder cut off from Redis stops *before* its key can expire and pass to someone else.
//! - **Reserve**: before issuing at a tick beyond its reservation, the holder stores a new one
//!   (the tick plus a window) in `<owner-key>:hwm`, in a script that first checks the token: a
//!   holder whose key was deleted or taken cannot reserve, so it stops at once.
//! - **Next holder**: starts above the stored high-water mark. With none stored (a value never
//!   used, or Redis lost its data) it starts one TTL ahead of the clock, by when any holder that
//!   may still think it owns the value has stopped; `open` waits for that instant.
//! - **Release** (on drop): stores the exact high-water mark and deletes the key.

use super::resp::{Conn, Reply, Url};

use crate::clock::{Clock, MonotonicClock};
use crate::error::Error;
use crate::generator::{HighWater, Word};
use crate::layout::{Layout, Node};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;

const CLAIM: &str = "if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then \
local h = redis.call('GET', KEYS[2]) if h then return {1, h} end return {1} end return {0}";
const RENEW: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then \
return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0";
const EXTEND: &str = "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end \
local cur = tonumber(redis.call('GET', KEYS[2]) or '0') \
if tonumber(ARGV[2]) > cur then redis.call('SET', KEYS[2], ARGV[2]) end return 1";
const RELEASE: &str = "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end \
redis.call('SET', KEYS[2], ARGV[2]) redis.call('DEL', KEYS[1]) return 1";

/// A lease's times, in ms.
#[derive(Clone, Copy)]
pub(crate) struct Timing {
    pub ttl_ms: u64,
    pub window_ms: u64,
    pub max_drift_ms: u64,
}

/// A held lease.
pub(crate) struct RedisLease {
    url: Url,
    owner_key: String,
    hwm_key: String,
    token: String,
    ttl_ms: u64,
    window_ticks: u64,
    max_tick: u64,
    pub(crate) field: usize,
    pub(crate) value: u64,
    /// The reserved end (exclusive tick), stored in Redis before it is raised here.
    pub(crate) reserved: AtomicU64,
    /// The generator may issue while its clock reads less than this.
    valid_until_ms: AtomicU64,
    /// The state must start at or above this tick.
    pub(crate) floor: u64,
    conn: Mutex<Option<Conn>>,
    stop: Arc<(Mutex<bool>, Condvar)>,
    closing: Mutex<Option<(Arc<AtomicU64>, Word)>>,
    /// A child of fork() holds a copy of the parent's lease: it must not release it.
    fork_generation: u64,
}

fn timeout(ttl_ms: u64) -> Duration {
    Duration::from_millis((ttl_ms / 5).clamp(50, 2000))
}

fn eval(conn: &mut Conn, script: &str, keys: &[&str], args: &[&str]) -> std::io::Result<Reply> {
    let nkeys = keys.len().to_string();
    let mut a: Vec<&[u8]> = vec![b"EVAL", script.as_bytes(), nkeys.as_bytes()];
    a.extend(keys.iter().map(|k| k.as_bytes()));
    a.extend(args.iter().map(|v| v.as_bytes()));
    match conn.call(&a)? {
        Reply::Error(e) => Err(std::io::Error::other(e)),
        r => Ok(r),
    }
}

impl RedisLease {
    fn with_conn<T>(&self, f: impl FnOnce(&mut Conn) -> std::io::Result<T>) -> std::io::Result<T> {
        let mut guard = self.conn.lock().unwrap_or_else(|e| e.into_inner());
        if guard.is_none() {
            *guard = Some(Conn::connect(&self.url, timeout(self.ttl_ms))?);
        }
        let result = f(guard.as_mut().expect("connected above"));
        if result.is_err() {
            *guard = None; // reconnect next time
        }
        result
    }

    /// Claims a value of `field`.
    pub(crate) fn claim(
        url_text: &str,
        layout: &Layout,
        node: &Node,
        field: usize,
        timing: Timing,
        clock: &MonotonicClock,
    ) -> Result<Arc<RedisLease>, Error> {
        let ttl_ms = timing.ttl_ms;
        let window_ms = timing.window_ms.min(ttl_ms / 2).max(1);
        let url = Url::parse(url_text).ok_or_else(|| {
            Error::lease_unavailable(format_args!(
                "`{}` is not a redis://host:port/db address",
                crate::options::redact_url(url_text)
            ))
        })?;
        let unreachable = |e: std::io::Error| {
            Error::lease_unavailable(format_args!("cannot reach Redis at {}:{}: {e}", url.host, url.port))
        };
        let mut conn = Conn::connect(&url, timeout(ttl_ms)).map_err(unreachable)?;
        let f = &layout.fields()[field];
        let others = layout.node_bits(&node.with(field, 0));
        let prefix = format!("libsnowflake:{:016x}:{others:016x}:{}", layout.fingerprint(), f.name());
        let token = format!(
            "{}-{}-{:x}",
            std::process::id(),
            clock.now_ms(),
            prefix.len() as u64 ^ clock.offset_ns() as u64
        );
        let count = f.max() + 1;
        let ttl = ttl_ms.to_string();
        // The lowest free value, as with local leases: predictable, and a released value is
        // the first to be claimed again (with its exact high-water mark: no waiting).
        for value in 0..count {
            let owner_key = format!("{prefix}:{value}");
            let hwm_key = format!("{owner_key}:hwm");
            let sent_at = clock.now_ms();
            let reply =
                eval(&mut conn, CLAIM, &[&owner_key, &hwm_key], &[&token, &ttl]).map_err(unreachable)?;
            let Reply::Array(items) = reply else { continue };
            if items.first().and_then(Reply::as_int) != Some(1) {
                continue;
            }
            let stored = match items.get(1) {
                Some(Reply::Bulk(Some(b))) => std::str::from_utf8(b).ok().and_then(|s| s.parse::<u64>().ok()),
                _ => None,
            };
            let ticks = |ms: u64| ms.div_ceil(layout.tick_ms());
            let now_tick = layout.tick_of(sent_at)?;
            // Without a stored mark (a value never used, or Redis lost its data), a holder that
            // may still think it owns the value can issue until its validity (4/5 TTL after its
            // last renewal) runs out, at ticks up to its drift plus one reservation window
            // ahead: start beyond all of that.
            let unknown_floor =
                now_tick.saturating_add(ticks(ttl_ms) + ticks(window_ms) + ticks(timing.max_drift_ms) + 1);
            let floor = stored.unwrap_or(unknown_floor).min(layout.max_tick().saturating_add(1));
            if floor > unknown_floor {
                let _ = eval(&mut conn, RELEASE, &[&owner_key, &hwm_key], &[&token, &floor.to_string()]);
                return Err(Error::lease_unavailable(format_args!(
                    "the high-water mark stored for `{}`={value} is {} ms ahead of this host's clock: is this clock far behind the last holder's?",
                    f.name(),
                    (floor - now_tick).saturating_mul(layout.tick_ms())
                )));
            }
            let lease = Arc::new(RedisLease {
                url: url.clone(),
                owner_key,
                hwm_key,
                token: token.clone(),
                ttl_ms,
                window_ticks: (window_ms / layout.tick_ms()).max(1),
                max_tick: layout.max_tick(),
                field,
                value,
                reserved: AtomicU64::new(floor),
                valid_until_ms: AtomicU64::new(sent_at + ttl_ms / 5 * 4),
                floor,
                conn: Mutex::new(Some(conn)),
                stop: Arc::new((Mutex::new(false), Condvar::new())),
                closing: Mutex::new(None),
                fork_generation: crate::sys::fork_generation(),
            });
            RedisLease::start_renewing(&lease, *clock).map_err(|e| {
                Error::lease_unavailable(format_args!("cannot start the lease renewal thread: {e}"))
            })?;
            return Ok(lease);
        }
        Err(Error::lease_unavailable(format_args!(
            "all {count} values of `{}` are leased in Redis (keys {prefix}:*)",
            f.name()
        )))
    }

    fn start_renewing(lease: &Arc<RedisLease>, clock: MonotonicClock) -> std::io::Result<()> {
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
                    let sent_at = clock.now_ms();
                    let ttl = lease.ttl_ms.to_string();
                    match lease.with_conn(|c| eval(c, RENEW, &[&lease.owner_key], &[&lease.token, &ttl])) {
                        Ok(Reply::Int(1)) => {
                            lease.valid_until_ms.fetch_max(sent_at + lease.ttl_ms / 5 * 4, Ordering::AcqRel);
                            wait = period;
                        }
                        Ok(_) => {
                            // The key is gone or another's: lost for good.
                            lease.valid_until_ms.store(0, Ordering::Release);
                            return;
                        }
                        Err(_) => wait = retry, // unreachable: the validity runs out on its own
                    }
                }
            })
            .map(|_| ())
    }

    /// Whether the generator may issue at `now_ms`.
    #[inline]
    fn valid_at(&self, now_ms: u64) -> Result<(), Error> {
        if now_ms < self.valid_until_ms.load(Ordering::Acquire) {
            Ok(())
        } else {
            Err(Error::LeaseLost)
        }
    }

    /// Stores a reservation past `tick` in Redis (checking ownership), then raises it here.
    fn store_past(&self, tick: u64) -> Result<(), Error> {
        if self.reserved.load(Ordering::Acquire) > tick {
            return Ok(());
        }
        let new_end = tick.saturating_add(self.window_ticks).min(self.max_tick.saturating_add(1));
        let end = new_end.to_string();
        match self.with_conn(|c| eval(c, EXTEND, &[&self.owner_key, &self.hwm_key], &[&self.token, &end])) {
            Ok(Reply::Int(1)) => {
                self.reserved.fetch_max(new_end, Ordering::AcqRel);
                Ok(())
            }
            Ok(_) => {
                self.valid_until_ms.store(0, Ordering::Release);
                Err(Error::LeaseLost)
            }
            Err(_) => Err(Error::LeaseLost),
        }
    }

    pub(crate) fn attach(&self, state: Arc<AtomicU64>, word: Word) {
        *self.closing.lock().unwrap_or_else(|e| e.into_inner()) = Some((state, word));
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
        self.valid_at(now_ms)
    }
}

impl Drop for RedisLease {
    fn drop(&mut self) {
        // A child of fork(): the parent still holds and uses the lease (and the socket).
        if self.fork_generation != crate::sys::current_fork_generation() {
            std::mem::forget(self.conn.get_mut().unwrap_or_else(|e| e.into_inner()).take());
            return;
        }
        {
            let (lock, cv) = &*self.stop;
            *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
            cv.notify_all();
        }
        let closing = self.closing.get_mut().unwrap_or_else(|e| e.into_inner()).take();
        // A lease never has a rollover field (refused at open), so the end is known.
        let end = closing
            .and_then(|(state, word)| word.issued_end(state.load(Ordering::Acquire)))
            .map_or(self.reserved.load(Ordering::Acquire), |end| end.max(self.floor));
        let end = end.min(self.reserved.load(Ordering::Acquire)).to_string();
        let _ = self.with_conn(|c| eval(c, RELEASE, &[&self.owner_key, &self.hwm_key], &[&self.token, &end]));
    }
}
