// The generator: uniqueness and order at volume, the shared state, waiting without freezing
// the event loop, and the rest of the API.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Layout, Generator, encode } from '../index.mjs';
import { assertIncreasing } from './helpers.mjs';

test('1M IDs from nextId() are unique and increasing', () => {
  const g = new Generator({ layout: 'twitter', node: { datacenter: 2, worker: 1 } });
  const ids = new BigUint64Array(1_000_000);
  for (let i = 0; i < ids.length; i++) ids[i] = g.nextId();
  assertIncreasing(ids);
  assert.equal(g.stats().issued, 1_000_000);
});

test('1M IDs from nextIds() are unique, increasing, and carry the node values', () => {
  const g = new Generator({ layout: 'twitter', node: { datacenter: 2, worker: 2 } });
  const ids = g.nextIds(1_000_000);
  assert.ok(ids instanceof BigUint64Array);
  assert.equal(ids.length, 1_000_000);
  assertIncreasing(ids);
  const parts = g.layout.decode(ids[ids.length - 1]);
  assert.deepEqual(parts.fields, { datacenter: 2, worker: 2 });
  assert.ok(Math.abs(parts.unixMs - Date.now()) < 5000);
  assert.equal(g.nextIds(0).length, 0);
});

test('generators with the same layout and node values share one state', () => {
  const a = new Generator({ layout: 'twitter', node: { datacenter: 3, worker: 7 } });
  const b = new Generator({ layout: new Layout('twitter'), node: { worker: 7, datacenter: 3 } });
  const seen = new Set();
  for (let i = 0; i < 50_000; i++) {
    for (const id of [a.nextId(), b.nextId(), ...b.nextIds(2)]) {
      assert.ok(!seen.has(id), `duplicate ${id}`);
      seen.add(id);
    }
  }
});

test('nextIdString, iterator, reserve, nextIdAt, stats, getters', () => {
  const g = new Generator({ layout: 'discord', node: { worker: 4, process: 2 } });
  const s = g.nextIdString();
  assert.match(s, /^\d+$/);
  assert.equal(JSON.stringify({ id: s }), `{"id":"${s}"}`);
  const taken = [];
  for (const id of g) {
    assert.equal(typeof id, 'bigint');
    taken.push(id);
    if (taken.length === 3) break;
  }
  assertIncreasing([BigInt(s), ...taken]);
  const block = g.reserve(10);
  assert.ok(block.count >= 1 && block.count <= 10);
  assert.equal(block.stride, 1n);
  assert.ok(block.first > taken[2]);
  assert.equal(g.tryNextId() > block.first + BigInt(block.count - 1) * block.stride, true);
  assert.deepEqual(g.node, { worker: 4, process: 2 });
  assert.equal(g.layout.toString(), new Layout('discord').toString());
  assert.match(String(g), /^Generator\(time:42/);
  const st = g.stats();
  assert.deepEqual(Object.keys(st), ['issued', 'waits', 'waitedMs', 'clockBehind', 'rollovers', 'driftMs', 'leaseClaims', 'leaseLosses', 'lastUnixMs', 'msLeft', 'yearsLeft', 'skewedRenewals', 'sources']);
  assert.ok(st.issued >= 5 + block.count);
  // No lease across hosts: no clock compared, none skewed.
  assert.equal(st.clockSkewMs, undefined);
  assert.equal(st.skewedRenewals, 0);
  const iso = new Generator({ layout: 'discord', isolated: true });
  const at = new Date('2016-04-30T11:18:25.796Z');
  assert.equal(iso.nextIdAt(at), iso.layout.compose(at, {}, 0));
  assert.equal(encode(iso.nextIdAt(at.getTime()), 'decimal'), String(iso.layout.compose(at, {}, 1)));
});

// 2 IDs a second: after two, the next one needs the clock to reach the next second.
const SLOW = 'time:41,worker:10,sequence:1;epoch=0;tick=1s';
// 2 IDs an hour.
const HOURLY = 'time:41,worker:10,sequence:1;epoch=0;tick=3600s';
// (process_only below: a fresh host state starts a whole tick ahead, see docs/processes.md.)

test('nextId() never blocks longer than maxWaitMs', () => {
  const g = new Generator({ layout: HOURLY, node: { worker: 11 }, maxWaitMs: 30, processOnly: true });
  const t0 = performance.now();
  // The third ID needs the next hour: nextId() either gets it within 30 ms (when the hour
  // turns over meanwhile) or throws after waiting at most 30 ms, never for the next hour.
  try {
    for (let i = 0; i < 3; i++) g.nextId();
  } catch (e) {
    assert.equal(e.code, 'ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED');
    assert.ok(e.retryAfterMs > 30);
  }
  const elapsed = performance.now() - t0;
  // Waiting for the tick would take up to an hour; the margin is for a loaded machine.
  assert.ok(elapsed < 30_000, `blocked ${elapsed} ms with maxWaitMs 30`);
});

test('nextIdAsync() waits off the event loop', async () => {
  const g = new Generator({ layout: SLOW, node: { worker: 12 }, maxWaitMs: 2000 });
  // Use up the current second, and let nextIdAsync() wait for the next one while a timer
  // counts the event loop's turns. A wait cut short by the second turning over at once
  // proves nothing: then again (a wait of 300 ms or more comes within a few tries).
  for (let attempt = 1; ; attempt++) {
    let last;
    assert.throws(() => {
      for (;;) last = g.tryNextId();
    }, (e) => e.code === 'ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED');
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const t0 = performance.now();
    const next = await g.nextIdAsync(); // waits on the thread pool
    const waited = performance.now() - t0;
    clearInterval(timer);
    if (last !== undefined) {
      assertIncreasing([last, next]);
      assert.ok(g.layout.decode(next).unixMs > g.layout.decode(last).unixMs, 'it waited for the next second');
    }
    if (waited < 300 && attempt < 20) continue;
    // Blocking the event loop for the wait would have left the timer at 0.
    assert.ok(ticks >= 1, `the event loop ran no timer in ${waited} ms`);
    break;
  }
  // 2 IDs an hour: the third would wait for the next hour, and maxWaitMs 0 never waits.
  // Isolated: the host's record of an identity outlives this process, so a second run within
  // the hour (flaky.sh) would find the hour's two IDs issued already.
  const hourly = new Generator({ layout: HOURLY, maxWaitMs: 0, isolated: true });
  await hourly.nextIdAsync();
  await hourly.nextIdAsync();
  await assert.rejects(
    hourly.nextIdAsync(),
    (e) => e instanceof Error && e.code === 'ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED' && e.retryAfterMs > 0,
  );
});
