//! The lease store in Redis: one server, a Sentinel-managed master, or a Redis Cluster (the
//! connection is `super::redis_conn`'s). The protocol is `super`'s (`coord::lease`).
//!
//! - **Keys**: one per identity, `libsnowflake:{<layout fingerprint>}:<every node
//!   field=value>` (the leased field's value included) holding the holder's token with a TTL
//!   (`PX`), its high-water mark `<key>:hwm` and the run that wrote it `<key>:run`. The hash tag (`{…}`) puts every key of a
//!   layout in one slot, so that each script runs on one node of a cluster, and holders that
//!   lease different fields of one layout meet on the same key for the same identity.
//! - Every operation is one script, which checks the token and reads `TIME` in the same step.
//! - **Which run wrote a mark**: `<key>:run` holds, with every mark, the server's `run_id` and
//!   replication id (`master_replid`) as they were when the mark was written. A restart (from
//!   an RDB snapshot, an AOF that lost its last second) gives a new `run_id`; a promotion (a
//!   Sentinel or Cluster failover, `REPLICAOF NO ONE`) a new replication id, so a server that
//!   answers with both as stored has lost no write of that mark since. Any other mark is a
//!   lower bound only (`mark_stale`), as is a claim key found still ours with no mark of this
//!   run: a snapshot can hand back our token after another holder had the value.

use super::redis_conn::{describe, Conn, Target};
use super::{Ask, Claimed, Failure, Identity, Store};
use crate::error::Error;

/// The run of the server that runs a script: `<run_id>:<master_replid>` (see the module docs),
/// read in the same atomic step as the keys; `false` when INFO is refused (an ACL user without
/// +info): then no mark is proven current, and every claim of a used value starts the margin
/// ahead, as after a failover.
macro_rules! run_of_server {
    () => {
        "local function info_field(section, name) \
  local r = redis.pcall('INFO', section) \
  if type(r) ~= 'string' then return nil end \
  return string.match(r, name .. ':(%w+)') end \
local rid, rid2 = info_field('server', 'run_id'), info_field('replication', 'master_replid') \
local run = rid and rid2 and (rid .. ':' .. rid2) \
local function stamp(k) if run then redis.call('SET', k, run) else redis.call('DEL', k) end end "
    };
}

/// Claims the first free value: KEYS[1] the identity's slot (routing only); ARGV the key
/// around the value (head, tail), from, to (exclusive), token, ttl, and `<preferred value or
/// -1> <furthest stored mark a claimant may start at now, a tick>` (one argument: Redis
/// refuses a command of more than 10 parts from a client that has not authenticated, which
/// must get NOAUTH instead). Returns {value, ours, mark or false, skipped, furthest}: `ours`
/// when the key still held our token; `skipped` how many free values it passed over because
/// their stored mark was beyond that bound (a poisoned mark: a time far in the future stored
/// once would lock the value out for everyone), and `furthest` the largest such mark. With
/// no value claimed, value is -1. A last item, `stale`, is 1 unless the value's `:run` is this
/// run's (its mark, or our claim, is then proven current).
const CLAIM: &str = concat!(
    run_of_server!(),
    "local head, tail, token, ttl = ARGV[1], ARGV[2], ARGV[5], ARGV[6] \
local p, b = string.match(ARGV[7], '^(%-?%d+) (%d+)$') \
local prefer, bound = tonumber(p), tonumber(b) \
local skipped, furthest = 0, 0 \
local function try(v) \
  local k = head .. string.format('%.0f', v) .. tail \
  local cur = redis.call('GET', k) \
  local ours = 0 \
  if cur == token then ours = 1 elseif cur then return nil end \
  local mark = redis.call('GET', k .. ':hwm') \
  local m = mark and tonumber(mark) \
  if ours == 0 and mark and (m == nil or m > bound) then \
    skipped = skipped + 1 \
    if m and m > furthest then furthest = m end \
    return nil \
  end \
  redis.call('SET', k, token, 'PX', ttl) \
  local stale = 1 \
  if run and redis.call('GET', k .. ':run') == run then stale = 0 end \
  return {v, ours, mark or false, skipped, furthest, stale} \
end \
if prefer >= 0 then local r = try(prefer) if r then return r end end \
for v = tonumber(ARGV[3]), tonumber(ARGV[4]) - 1 do \
  local r = try(v) if r then return r end \
end \
return {-1, 0, false, skipped, furthest, 1}"
);
/// Re-arms the key if it holds the token: {1 or 0, seconds, microseconds} (the server's clock).
const RENEW: &str = "local t = redis.call('TIME') \
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) \
return {1, t[1], t[2]} end return {0, t[1], t[2]}";
/// Raises the mark KEYS[2] if KEYS[1] holds the token, and stamps it with this run (KEYS[3]).
const EXTEND: &str = concat!(
    run_of_server!(),
    "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end \
local cur = tonumber(redis.call('GET', KEYS[2]) or '0') \
if tonumber(ARGV[2]) > cur then redis.call('SET', KEYS[2], ARGV[2]) end \
stamp(KEYS[3]) return 1"
);
const RELEASE: &str = concat!(
    run_of_server!(),
    "if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end \
redis.call('SET', KEYS[2], ARGV[2]) stamp(KEYS[3]) redis.call('DEL', KEYS[1]) return 1"
);
/// Gives back a value just claimed that this host cannot use (another process of it uses the
/// identity): the key only, its mark as it was.
const UNCLAIM: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end return 1";
/// The clock of the node that serves the identity's slot.
const CLOCK: &str = "return redis.call('TIME')";

/// Values scanned by one claim script: a wide field is scanned in several calls, so that no
/// call holds Redis for long.
const SCAN: u64 = 4096;

/// A lease store in Redis.
pub(crate) struct RedisStore {
    target: Target,
    conn: Option<Conn>,
    /// `libsnowflake:{<fingerprint>}`: the slot of every key of the identity.
    slot: String,
    /// The key around the value: `libsnowflake:{<fp>}:a=1,worker=` and `,b=2`.
    head: String,
    tail: String,
}

fn int(v: &redis::Value) -> Option<i64> {
    match v {
        redis::Value::Int(n) => Some(*n),
        redis::Value::BulkString(b) => std::str::from_utf8(b).ok()?.parse().ok(),
        _ => None,
    }
}

/// `TIME`'s {seconds, microseconds} as Unix ms.
fn time_ms(items: &[redis::Value]) -> Option<u64> {
    let s = u64::try_from(int(items.first()?)?).ok()?;
    let us = u64::try_from(int(items.get(1)?)?).ok()?;
    Some(s * 1000 + us / 1000)
}

impl RedisStore {
    pub(crate) fn new(target: Target, identity: &Identity) -> RedisStore {
        let slot = format!("libsnowflake:{{{:016x}}}", identity.fingerprint);
        RedisStore {
            head: format!("{slot}:{}", identity.head),
            tail: identity.tail.clone(),
            slot,
            target,
            conn: None,
        }
    }

    fn key(&self, value: u64) -> String {
        format!("{}{value}{}", self.head, self.tail)
    }

    /// Runs a script (connecting first if need be); a failure that spoils the connection
    /// drops it, and the next call connects again (to the master the sentinels name then; to
    /// the primary of the keys' slot as the cluster's nodes name it then). A redirect (MOVED,
    /// ASK: the script did not run) is followed at once, once.
    fn eval(&mut self, script: &str, keys: &[&str], args: &[String]) -> Result<redis::Value, Failure> {
        let mut cmd = redis::cmd("EVAL");
        cmd.arg(script).arg(keys.len()).arg(keys).arg(args);
        let mut redirected = false;
        loop {
            if self.conn.is_none() {
                let key = keys.first().copied().unwrap_or(&self.slot);
                self.conn = Some(self.target.connect(key).map_err(|f| Failure { message: f.message })?);
            }
            match cmd.query(self.conn.as_mut().expect("connected above")) {
                Ok(v) => return Ok(v),
                Err(e) => {
                    let failure = describe(&e, &self.target.shown);
                    if failure.reconnect {
                        self.conn = None;
                    }
                    if e.redirect_node().is_some() && !redirected {
                        redirected = true;
                        continue;
                    }
                    return Err(Failure { message: failure.message });
                }
            }
        }
    }

    fn unexpected(&self, what: &str) -> Failure {
        Failure { message: format!("Redis at {} answered the {what} script unexpectedly", self.target.shown) }
    }
}

impl Store for RedisStore {
    fn name(&self) -> &'static str {
        if self.target.is_cluster() {
            "Redis Cluster"
        } else {
            "Redis"
        }
    }

    fn place(&self) -> String {
        format!("{} at {} (keys {}*{})", self.name(), self.target.shown, self.head, self.tail)
    }

    fn scan(&self) -> u64 {
        SCAN
    }

    fn clock_ms(&mut self) -> Result<u64, Failure> {
        let slot = self.slot.clone();
        match self.eval(CLOCK, &[&slot], &[])? {
            redis::Value::Array(items) => time_ms(&items).ok_or_else(|| self.unexpected("clock")),
            _ => Err(self.unexpected("clock")),
        }
    }

    fn claim(&mut self, ask: &Ask<'_>) -> Result<Claimed, Failure> {
        let args = [
            self.head.clone(),
            self.tail.clone(),
            ask.from.to_string(),
            ask.to.to_string(),
            ask.token.to_string(),
            ask.ttl_ms.to_string(),
            format!("{} {}", ask.prefer.map_or("-1".to_string(), |v| v.to_string()), ask.bound),
        ];
        let slot = self.slot.clone();
        let reply = self.eval(CLAIM, &[&slot], &args)?;
        let redis::Value::Array(items) = &reply else { return Err(self.unexpected("claim")) };
        let num = |i: usize| items.get(i).and_then(int).and_then(|v| u64::try_from(v).ok());
        Ok(Claimed {
            value: num(0),
            ours: num(1) == Some(1),
            mark: num(2),
            mark_stale: num(5) != Some(0),
            skipped: num(3).unwrap_or(0),
            furthest: num(4).unwrap_or(0),
        })
    }

    fn renew(&mut self, value: u64, token: &str, ttl_ms: u64) -> Result<Option<u64>, Failure> {
        let key = self.key(value);
        match self.eval(RENEW, &[&key], &[token.to_string(), ttl_ms.to_string()])? {
            redis::Value::Array(items) => {
                let now = time_ms(&items[1.min(items.len())..]).ok_or_else(|| self.unexpected("renewal"))?;
                Ok((items.first().and_then(int) == Some(1)).then_some(now))
            }
            _ => Err(self.unexpected("renewal")),
        }
    }

    fn set_mark(&mut self, value: u64, token: &str, end: u64) -> Result<bool, Failure> {
        let key = self.key(value);
        let (hwm, run) = (format!("{key}:hwm"), format!("{key}:run"));
        let reply = self.eval(EXTEND, &[&key, &hwm, &run], &[token.to_string(), end.to_string()])?;
        Ok(int(&reply) == Some(1))
    }

    fn release(&mut self, value: u64, token: &str, end: u64) -> Result<(), Failure> {
        let key = self.key(value);
        let (hwm, run) = (format!("{key}:hwm"), format!("{key}:run"));
        self.eval(RELEASE, &[&key, &hwm, &run], &[token.to_string(), end.to_string()]).map(|_| ())
    }

    fn unclaim(&mut self, value: u64, token: &str) -> Result<(), Failure> {
        let key = self.key(value);
        self.eval(UNCLAIM, &[&key], &[token.to_string()]).map(|_| ())
    }
}

/// A Redis store for `lease=` (`redis://`, `rediss://`, `unix://`, Sentinel, Cluster).
pub(super) fn open(
    settings: &super::Settings<'_>,
    identity: Identity,
    ttl_ms: u64,
) -> Result<Box<dyn Store>, Error> {
    let target = Target::new(settings, super::timeout(ttl_ms))?;
    Ok(Box::new(RedisStore::new(target, &identity)))
}
