//! A Lua script that issues a layout's IDs inside Redis, for clients that have no binding.
//!
//! Lua numbers are doubles, exact only up to 2^53, so the naive
//! `time * 2^22 + node * 2^12 + seq` loses the low bits of every ID above 2^53. The script
//! composes the ID as two 32-bit halves (each field's bits land in one half or are split
//! exactly between the two; fields are disjoint, so the halves never carry), and writes the
//! decimal by long division of the pair by 10, every step of which stays below 2^36.
//!
//! Semantics: those of a generator with `max_drift_ms=0` and `max_wait_ms=0` (a script must
//! not block Redis): a new tick starts at sequence 0; a full tick answers
//! `ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED retry_after_ms=N`; a clock behind the stored tick answers
//! `ERR_SNOWFLAKE_CLOCK_BEHIND behind_ms=N retry_after_ms=N`. The time is Redis's (`TIME`);
//! the state is a hash at the key given, one key per set of node values. Node values are
//! whole numbers written in digits (as every front end takes them), read exactly above 2^53.
//!
//! # Restarts
//!
//! A Redis that restarts may come back without the state (no persistence) or with an older
//! one (a snapshot, `appendfsync everysec`): what was issued after it is lost. Anything issued
//! before the restart is at a tick no later than Redis's start (the clock does not go back),
//! so the script never issues at a tick that holds Redis's start: it reads its start from
//! `INFO server` (`uptime_in_seconds`, whole seconds, so an instant at most a second late),
//! and during that tick (the first second or so of a start, on millisecond ticks) it answers
//! `ERR_SNOWFLAKE_CLOCK_BEHIND behind_ms=N retry_after_ms=N: Redis started …`. So no
//! persistence is needed; what is needed is a clock that does not step back across a restart
//! (NTP), and a key that is not evicted while Redis runs (`maxmemory-policy noeviction`, or a
//! `volatile-*` policy: the state key has no TTL) nor deleted.

use crate::layout::{FieldKind, Layout};
use std::fmt::Write;

/// The Lua script for `layout`, called as
/// `EVALSHA <sha1> 1 <state-key> <node values in layout order>`; it returns the ID as a
/// decimal string.
///
/// ```
/// let lua = snowflake_core::redis_script(&snowflake_core::Layout::parse("twitter").unwrap());
/// assert!(lua.contains("EVALSHA <sha1> 1 <state-key> <datacenter> <worker>"));
/// ```
pub fn redis_script(layout: &Layout) -> String {
    let nodes: Vec<_> = layout.node_fields().map(|(_, f)| *f).collect();
    let mut s = String::new();
    let names: Vec<String> = nodes.iter().map(|f| format!("<{}>", f.name())).collect();
    let _ = writeln!(s, "-- libsnowflake: IDs of the layout {layout}");
    let _ = writeln!(s, "-- EVALSHA <sha1> 1 <state-key> {}", names.join(" "));
    let _ = writeln!(s, "-- Returns the ID as a decimal string. One state key per set of node values.");
    let _ = writeln!(s, "local EPOCH = {}", layout.epoch_ms());
    let _ = writeln!(s, "local TICK = {}", layout.tick_ms());
    let _ = writeln!(s, "local LAST_MS = {}", layout.last_unix_ms());
    let _ = writeln!(s, "local SEQ_MAX = {}", layout.sequence().max());
    let _ = writeln!(s, "local TIME_SHIFT = {}", layout.time().shift());
    let _ = writeln!(s, "local SEQ_SHIFT = {}", layout.sequence().shift());
    // Each node field: name, shift, its largest value as two exact 32-bit halves, and in
    // decimal (for messages).
    let fields: Vec<String> = nodes
        .iter()
        .map(|f| {
            let max = f.max();
            format!("{{'{}', {}, {}, {}, '{max}'}}", f.name(), f.shift(), max >> 32, max & 0xffff_ffff)
        })
        .collect();
    let _ = writeln!(s, "local NODE = {{{}}}", fields.join(", "));
    debug_assert!(layout.fields().iter().filter(|f| f.kind() == FieldKind::Node).count() == nodes.len());
    s.push_str(
        r#"
-- Redis 3.2-4 need effects replication to write after TIME; 5+ always do it.
if redis.replicate_commands then redis.replicate_commands() end
if #ARGV ~= #NODE then
  return redis.error_reply('ERR_SNOWFLAKE_VALUE expected ' .. #NODE .. ' node values, got ' .. #ARGV)
end
local TWO32 = 4294967296
-- Places v (an exact integer) at bit `shift` of the pair (hi, lo) of 32-bit halves.
local function place(hi, lo, v, shift)
  if shift >= 32 then
    return hi + v * 2 ^ (shift - 32), lo
  end
  local room = 2 ^ (32 - shift)
  local low = v % room
  return hi + (v - low) / room, lo + low * 2 ^ shift
end
-- A node value is a whole number in digits (no sign, point, exponent, space or hex), read
-- into exact 32-bit halves: tonumber() would take '1.0', '0x1', ' 1', '1e0' and round
-- '0.99999999999999999' to 1, and lose the low bits above 2^53.
local function whole(text)
  if type(text) ~= 'string' or not string.match(text, '^%d+$') then return nil end
  local vhi, vlo = 0, 0
  for i = 1, #text do
    local x = vlo * 10 + tonumber(string.sub(text, i, i))
    vlo = x % TWO32
    vhi = vhi * 10 + (x - vlo) / TWO32
    if vhi >= TWO32 then return nil end
  end
  return vhi, vlo
end
local hi, lo = 0, 0
for i, f in ipairs(NODE) do
  local vhi, vlo = whole(ARGV[i])
  local shown = string.sub(tostring(ARGV[i]), 1, 40)
  if vhi == nil then
    return redis.error_reply('ERR_SNOWFLAKE_VALUE ' .. f[1] .. ' = ' .. shown .. ': a node value is a whole number in digits (' .. f[1] .. '=3)')
  end
  if vhi > f[3] or (vhi == f[3] and vlo > f[4]) then
    return redis.error_reply('ERR_SNOWFLAKE_VALUE ' .. f[1] .. ' = ' .. shown .. ' is out of range: the largest allowed is ' .. f[5])
  end
  hi, lo = place(hi, lo, vlo, f[2])
  if vhi > 0 then hi, lo = place(hi, lo, vhi, f[2] + 32) end
end
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
if now_ms < EPOCH or now_ms > LAST_MS then
  return redis.error_reply('ERR_SNOWFLAKE_TIME_RANGE ' .. now_ms .. ' is outside the layout')
end
local tick = math.floor((now_ms - EPOCH) / TICK)
-- Never at a tick that holds Redis's start: IDs issued before a restart may be there, and
-- the state that recorded them may be lost or older (see the module docs).
local uptime = tonumber(string.match(redis.call('INFO', 'server'), 'uptime_in_seconds:(%d+)'))
local started_ms = now_ms - uptime * 1000
if started_ms >= EPOCH and tick <= math.floor((started_ms - EPOCH) / TICK) then
  local wait = EPOCH + (math.floor((started_ms - EPOCH) / TICK) + 1) * TICK - now_ms
  return redis.error_reply('ERR_SNOWFLAKE_CLOCK_BEHIND behind_ms=' .. wait .. ' retry_after_ms=' .. wait .. ': Redis started within this tick, and IDs issued before it stopped may be in it')
end
local state = redis.call('HMGET', KEYS[1], 't', 's')
local last_tick = tonumber(state[1])
local seq = 0
if last_tick ~= nil and tick <= last_tick then
  if tick < last_tick then
    local behind = (last_tick - tick) * TICK
    return redis.error_reply('ERR_SNOWFLAKE_CLOCK_BEHIND behind_ms=' .. behind .. ' retry_after_ms=' .. behind)
  end
  seq = tonumber(state[2]) + 1
  if seq > SEQ_MAX then
    return redis.error_reply('ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED retry_after_ms=' .. (EPOCH + (tick + 1) * TICK - now_ms))
  end
end
redis.call('HSET', KEYS[1], 't', string.format('%d', tick), 's', string.format('%d', seq))
hi, lo = place(hi, lo, tick, TIME_SHIFT)
hi, lo = place(hi, lo, seq, SEQ_SHIFT)
-- The decimal of hi * 2^32 + lo, exactly: divide the pair by 10, digit by digit.
local digits = {}
repeat
  local r = hi % 10
  hi = (hi - r) / 10
  local cur = r * TWO32 + lo
  local d = cur % 10
  lo = (cur - d) / 10
  digits[#digits + 1] = string.format('%d', d)
until hi == 0 and lo == 0
return string.reverse(table.concat(digits))
"#,
    );
    s
}
