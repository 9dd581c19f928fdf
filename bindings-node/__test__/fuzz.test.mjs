// Random input through the Node binding: layout specs, node values, options, ID strings and
// encodings of every JS type. Each input gives a result that checks out, or an Error with a
// stable code (a TypeError with ERR_INVALID_ARG_TYPE for a wrong JS type) — never a crash, a
// hang or a silent wrap. Seeded: a failure prints its seed and case, and reproduces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Layout, Generator, encode, decodeStr } from '../index.mjs';
import { CLASS_OF_CODE, vectors } from './helpers.mjs';

const CASES = 3000;
const SEED = Number(process.env.SNOWFLAKE_FUZZ_SEED ?? 20261122);

/** xorshift64*: small, seeded, reproducible. */
function rng(seed) {
  let s = BigInt(seed) | 1n;
  return () => {
    s ^= s >> 12n;
    s ^= (s << 25n) & 0xffffffffffffffffn;
    s ^= s >> 27n;
    return Number(((s * 0x2545f4914f6cdd1dn) & 0xffffffffffffffffn) >> 11n) / 2 ** 53;
  };
}

function fuzzer(seed) {
  const r = rng(seed);
  const int = (n) => Math.floor(r() * n);
  const pick = (xs) => xs[int(xs.length)];
  const chars = 'abcdefghijklmnopqrstuvwxyz0123456789:,;=-TZ._ !\u00e9\u0000\u{1F600}';
  const text = (max) => Array.from({ length: int(max + 1) }, () => pick([...chars])).join('');
  const spec = () =>
    pick([
      () => pick(['twitter', 'discord', 'instagram', 'sonyflake', 'baidu', 'mastodon', 'game', 'nope']),
      // Sometimes no epoch: a custom spec must state one (issue 13).
      () => `time:${int(70)},${pick(['worker', 'sequence', 'time', 'x'])}:${int(30)},sequence:${int(30)}${pick(['', ';epoch=0', ';epoch=1288834974657', ';epoch=-1', ';epoch=today', ';epoch=2024-01-01T00:00:00Z'])}${pick(['', ';tick=1ms', ';tick=0s', ';tick=10ms', ';tick=x'])}`,
      () => text(60),
    ])();
  const anyValue = () =>
    pick([
      () => int(2 ** 20),
      () => -int(100),
      () => r() * 1000,
      () => NaN,
      () => Infinity,
      () => BigInt(int(2 ** 30)) * BigInt(int(2 ** 30)) * BigInt(int(2 ** 20)),
      () => -1n,
      () => 2n ** 64n + BigInt(int(9)),
      () => r() < 0.5,
      () => text(12),
      () => null,
      () => undefined,
      () => [1, 2],
      () => ({ a: 1 }),
      () => Symbol('x'),
    ])();
  const option = () => pick(['maxDriftMs', 'maxWaitMs', 'sequenceStart', 'rollover', 'isolated', 'maxWait', 'max_wait_ms', text(8)]);
  return { r, int, pick, text, spec, anyValue, option };
}

/** A thrown value must be an Error with a stable string code. */
function typed(e, what) {
  assert.ok(e instanceof Error, `${what}: threw a non-Error: ${String(e)}`);
  assert.equal(typeof e.code, "string", `${what}: no code: ${e.message}`);
  assert.ok(/^ERR_(SNOWFLAKE_[A-Z_]+|INVALID_ARG_TYPE)$/.test(e.code), `${what}: code ${e.code}: ${e.message}`);
  if (e.code === 'ERR_INVALID_ARG_TYPE') assert.ok(e instanceof TypeError, `${what}: ERR_INVALID_ARG_TYPE is a TypeError`);
  // One class per code, core's table's (issue 26).
  assert.equal(e.constructor, CLASS_OF_CODE[e.code], `${what}: ${e.code} as a ${e.constructor.name}`);
}

function attempt(what, fn, check) {
  let result;
  try {
    result = fn();
  } catch (e) {
    typed(e, what);
    return;
  }
  if (check) check(result);
}

test(`${CASES} random inputs through every entry point (seed ${SEED})`, () => {
  const f = fuzzer(SEED);
  let issued = 0;
  let decoded = 0; // the cases that got past the errors: the fuzz reaches the core
  for (let i = 0; i < CASES; i++) {
    const what = `seed ${SEED}, case ${i}`;
    const spec = f.spec();
    attempt(`${what}: new Layout(${JSON.stringify(spec)})`, () => new Layout(spec), (l) => {
      assert.ok(!spec.includes(':') || /epoch\s*=/.test(spec), `${spec} was accepted without an epoch`);
      assert.equal(new Layout(l.toString()).toString(), l.toString(), 'a layout reads back');
    });
    const enc = f.pick(['decimal', 'hex', 'base32', 'base36', 'base58', 'base62', f.text(6)]);
    // Half the strings are an encoding of a real ID, perhaps with one character changed.
    let s = f.text(14);
    if (f.r() < 0.5 && !enc.includes(' ') && ['decimal', 'hex', 'base32', 'base36', 'base58', 'base62'].includes(enc)) {
      s = encode(BigInt(f.int(2 ** 30)) * BigInt(f.int(2 ** 30)) * BigInt(f.int(2 ** 4)), enc);
      if (f.r() < 0.25) s = s.slice(0, 1) + f.text(1) + s.slice(2);
    }
    attempt(`${what}: decodeStr(${JSON.stringify(s)}, ${enc})`, () => decodeStr(s, enc), (id) => {
      assert.equal(typeof id, 'bigint');
      assert.ok(id >= 0n && id < 2n ** 64n, 'never a wrap');
      assert.equal(decodeStr(encode(id, enc), enc), id, 'round trip');
      decoded++;
    });
    const v = f.anyValue();
    attempt(`${what}: encode(${String(v)})`, () => encode(v, enc), (text) => assert.equal(typeof text, 'string'));
    // Half the node values and options are valid, so that generators get made too.
    const node = f.r() < 0.5 ? { datacenter: f.int(40), worker: f.int(40) } : { [f.pick(['worker', 'datacenter', 'shard', 'time', f.text(5)])]: f.anyValue() };
    const options = { layout: f.pick(['twitter', 'game', spec]), node, isolated: true };
    if (f.r() < 0.5) options[f.option()] = f.anyValue();
    attempt(`${what}: new Generator(...)`, () => new Generator(options), (g) => {
      // A mapping names every node field but a rollover field, or none (issue 13).
      const exempt = options.rollover;
      const missing = g.layout.fields.filter((f) => f.kind === 'node' && !(f.name in node) && f.name !== exempt).map((f) => f.name);
      // (undefined and null are no value at all.)
      const named = Object.values(node).filter((v) => v !== undefined && v !== null).length;
      assert.ok(named === 0 || missing.length === 0, `${JSON.stringify(node)} accepted without ${missing}`);
      attempt(`${what}: nextIdAt`, () => g.nextIdAt(1_800_000_000_000 + f.int(1000)), (id) => {
        issued++;
        const parts = g.layout.decode(id);
        for (const [name, value] of Object.entries(g.node)) assert.equal(parts.fields[name], value, 'the ID carries the node');
      });
    });
    const id = f.anyValue();
    attempt(`${what}: decode(${String(id)})`, () => new Layout('twitter').decode(id));
  }
  assert.ok(issued > 50 && decoded > 50, `valid cases were reached: ${issued} IDs issued, ${decoded} strings decoded`);
});

// Issue 26: counts up to 2 ** 64 and beyond, of every JS type, through nextIds and reserve:
// the IDs asked for, or a typed error at once (nextIds(2 ** 32 - 1) killed the process).
test(`${CASES} random counts (seed ${SEED})`, () => {
  const f = fuzzer(SEED + 1);
  const MAX = vectors('tables.json').limits.max_ids_per_call;
  const g = new Generator({ layout: 'twitter', isolated: true });
  let issued = 0;
  for (let i = 0; i < CASES; i++) {
    const n = f.pick([
      () => f.int(3000),
      () => MAX + 1 + Math.floor(f.r() * 2 ** 40),
      () => 2 ** (29 + f.int(36)),
      () => 2 ** 64 + f.int(3) * 2 ** 12,
      () => -f.int(2 ** 40) - 1,
      () => f.r() * 1e6,
      () => BigInt(f.int(3000)),
      f.anyValue,
    ])();
    const what = `seed ${SEED + 1}, case ${i}: ${typeof n} ${String(n)}`;
    const valid = typeof n === 'number' && Number.isInteger(n);
    attempt(`${what}: nextIds`, () => g.nextIds(n), (ids) => {
      assert.ok(valid && n >= 0 && n <= MAX, `${what}: nextIds accepted it`);
      assert.equal(ids.length, n);
      issued++;
    });
    attempt(`${what}: reserve`, () => g.reserve(n), (b) => {
      assert.ok(valid && n >= 1 && n < 2 ** 64, `${what}: reserve accepted it`);
      assert.ok(b.count >= 1 && b.count <= n);
    });
  }
  assert.ok(issued > 100, `${issued} counts were issued`);
});
