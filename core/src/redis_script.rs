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
//! the state is a hash at the key given, one key per set of node values.

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
    let fields: Vec<String> =
        nodes.iter().map(|f| format!("{{'{}', {}, {}}}", f.name(), f.shift(), f.max())).collect();
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
local hi, lo = 0, 0
for i, f in ipairs(NODE) do
  local v = tonumber(ARGV[i])
  if v == nil or v < 0 or v > f[3] or v % 1 ~= 0 then
    return redis.error_reply('ERR_SNOWFLAKE_VALUE ' .. f[1] .. ' = ' .. tostring(ARGV[i]) .. ' is out of range: the largest allowed is ' .. f[3])
  end
  hi, lo = place(hi, lo, v, f[2])
end
local now = redis.call('TIME')
local now_ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
if now_ms < EPOCH or now_ms > LAST_MS then
  return redis.error_reply('ERR_SNOWFLAKE_TIME_RANGE ' .. now_ms .. ' is outside the layout')
end
local tick = math.floor((now_ms - EPOCH) / TICK)
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
