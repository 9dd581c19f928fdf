// Issue 26's defects at the edges, in Node: counts that killed the process, a time far ahead
// that locked an identity out, the message of a time behind the state, and one class per code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { Generator, Layout } from '../index.mjs';
import { throwsCode, vectors, pkgDir } from './helpers.mjs';

const MAX_IDS_PER_CALL = vectors('tables.json').limits.max_ids_per_call;
const YEAR_2080_MS = 3_471_292_800_000;

test('huge counts throw a RangeError at once, in a process that lives on', () => {
  // Before: nextIds(2 ** 32 - 1) killed the process with V8's fatal "ArrayBuffer allocation
  // failed"; no try/catch saw it. A child process runs it, so that the old abort fails here.
  const code = `
    const { Generator } = await import(${JSON.stringify(pkgDir + '/index.mjs')});
    const g = new Generator({ layout: 'twitter', isolated: true });
    for (const n of [2 ** 32 - 1, 2 ** 32 + 1, 2 ** 40, 2 ** 53 - 1, 2 ** 64, ${MAX_IDS_PER_CALL} + 1]) {
      try { g.nextIds(n); throw new Error('accepted ' + n); }
      catch (e) {
        if (!(e instanceof RangeError) || e.code !== 'ERR_SNOWFLAKE_VALUE' || e.max !== ${MAX_IDS_PER_CALL}) throw e;
      }
    }
    if (g.nextIds(5000).length !== 5000) throw new Error('5000');
    console.log('ok');`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `exit ${r.status} ${r.signal}: ${r.stderr.slice(-2000)}`);
  assert.equal(r.stdout.trim(), 'ok');
});

test('counts of every type: a TypeError for a non-number, a RangeError out of range', () => {
  const g = new Generator({ layout: 'twitter', isolated: true });
  for (const f of [(n) => g.nextIds(n), (n) => g.reserve(n)]) {
    for (const bad of [1.5, NaN, Infinity, '5', 5n, true, null, {}]) {
      const e = throwsCode(() => f(bad), 'ERR_INVALID_ARG_TYPE', TypeError);
      assert.match(e.message, /`n` must be a whole number/);
    }
    throwsCode(() => f(-1), 'ERR_SNOWFLAKE_VALUE', RangeError);
    throwsCode(() => f(2 ** 64), 'ERR_SNOWFLAKE_VALUE', RangeError);
  }
  assert.equal(g.nextIds(0).length, 0);
  assert.equal(g.reserve(2 ** 53).count, 4096);
});

test('nextIdAt(0) and nextIdAt(-1) throw one class for one code', () => {
  const g = new Generator({ layout: 'twitter', isolated: true });
  // Before: nextIdAt(0) threw an Error and nextIdAt(-1) a RangeError, both ERR_SNOWFLAKE_TIME_RANGE.
  const before = throwsCode(() => g.nextIdAt(0), 'ERR_SNOWFLAKE_TIME_RANGE');
  const negative = throwsCode(() => g.nextIdAt(-1), 'ERR_SNOWFLAKE_TIME_RANGE');
  assert.equal(before.constructor, negative.constructor);
  assert.match(negative.message, /time -1 \(Unix ms\) is before 1970/);
  assert.equal(negative.unixMs, -1);
  throwsCode(() => new Layout('twitter').decode(-1n), 'ERR_SNOWFLAKE_INVALID_ID');
  throwsCode(() => new Layout('twitter').decode(2n ** 64n), 'ERR_SNOWFLAKE_INVALID_ID');
});

test('a time far ahead is refused where the state is shared; one behind says why', () => {
  const layout = 'time:41,worker:10,sequence:12;epoch=1288834974657';
  const g = new Generator({ layout, node: { worker: 903 }, maxWaitMs: 0 });
  const e = throwsCode(() => g.nextIdAt(YEAR_2080_MS), 'ERR_SNOWFLAKE_VALUE', RangeError);
  assert.match(e.message, /years ahead of the clock/);
  assert.match(e.message, /`isolated` set to true/);
  assert.equal(e.unixMs, YEAR_2080_MS);
  g.nextId(); // not locked out
  const lone = new Generator({ layout, node: { worker: 903 }, isolated: true });
  assert.equal(new Layout(layout).decode(lone.nextIdAt(YEAR_2080_MS)).unixMs, YEAR_2080_MS);

  const weekAgo = Date.now() - 561_600_000;
  const b = throwsCode(() => g.nextIdAt(weekAgo), 'ERR_SNOWFLAKE_CLOCK_BEHIND');
  assert.match(b.message, /behind this identity's state/);
  assert.match(b.message, /replays and backfills need a generator with `isolated` set to true/);
  assert.doesNotMatch(b.message, /retry in/);
  assert.ok(b.behindMs > 561_000_000 && b.unixMs === weekAgo);
});
