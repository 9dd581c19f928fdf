// Issue 13's stricter input, from Node: a custom layout states its epoch, node values name
// every node field or none, non-integer numbers are TypeErrors naming the field, a bad
// stateFile or leaseDir fails when the generator is made (naming the path), and stats() say
// how long the layout has left.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Layout, Generator } from '../index.mjs';
import { throwsCode } from './helpers.mjs';

const T = 1_700_000_000_000;
const FULL = { datacenter: 1, worker: 3 };

test('a custom spec states its epoch; the error suggests today', () => {
  const today = new Date().toISOString().slice(0, 10);
  const e = throwsCode(() => new Layout('time:41,worker:10,sequence:12'), 'ERR_SNOWFLAKE_LAYOUT');
  assert.match(e.message, /must state its epoch/);
  assert.ok(e.message.includes(`;epoch=${today}T00:00:00Z`), e.message);
  const suggested = e.message.split('`;')[1].split('`')[0];
  assert.ok(new Layout(`time:41,worker:10,sequence:12;${suggested}`).epochMs > 0);
  assert.equal(new Layout('time:41,worker:10,sequence:12;epoch=0').epochMs, 0);
});

test('node values name every node field or none', () => {
  for (const [node, missing] of [[{ datacenter: 1 }, 'worker'], [{ worker: 3 }, 'datacenter']]) {
    const e = throwsCode(() => new Generator({ layout: 'twitter', node, isolated: true }), 'ERR_SNOWFLAKE_VALUE', RangeError);
    assert.ok(e.message.includes(`\`${missing}\``) && e.message.includes('name every node field'), e.message);
    throwsCode(() => new Layout('twitter').compose(T, node), 'ERR_SNOWFLAKE_VALUE', RangeError);
  }
  const twitter = new Layout('twitter');
  assert.deepEqual(twitter.decode(new Generator({ layout: 'twitter', node: FULL, isolated: true }).nextIdAt(T)).fields, FULL);
  assert.deepEqual(twitter.decode(new Generator({ layout: 'twitter', node: {}, isolated: true }).nextIdAt(T)).fields, { datacenter: 0, worker: 0 });
  // The rollover field is the generator's: left out, and refused when given.
  const rolled = 'time:41,clock:2,worker:8,sequence:12;epoch=0';
  assert.ok(new Generator({ layout: rolled, node: { worker: 3 }, rollover: 'clock', isolated: true }).nextIdAt(T) > 0n);
  throwsCode(() => new Generator({ layout: rolled, node: { worker: 3, clock: 0 }, rollover: 'clock', isolated: true }), 'ERR_SNOWFLAKE_VALUE', RangeError);
});

test('non-integer numbers are TypeErrors that name the field', () => {
  for (const bad of [NaN, 1.5, Infinity, -Infinity]) {
    const e = throwsCode(() => new Generator({ layout: 'twitter', node: { datacenter: 1, worker: bad } }), 'ERR_INVALID_ARG_TYPE', TypeError);
    assert.match(e.message, /`worker` must be a whole number/, e.message);
    throwsCode(() => new Layout('twitter').compose(T, { datacenter: bad, worker: 1 }), 'ERR_INVALID_ARG_TYPE', TypeError);
  }
  // The README's `Number(process.env.WORKER_ID)` with the variable unset.
  const e = throwsCode(() => new Generator({ layout: 'twitter', node: { datacenter: 1, worker: Number(undefined) } }), 'ERR_INVALID_ARG_TYPE', TypeError);
  assert.match(e.message, /worker/);
  assert.match(e.message, /NaN/);
  for (const bad of [true, '3', null, [3]]) {
    throwsCode(() => new Generator({ layout: 'twitter', node: { datacenter: 1, worker: bad } }), 'ERR_INVALID_ARG_TYPE', TypeError);
  }
  const twitter = new Layout('twitter');
  for (const bad of [NaN, 1.5, true, Infinity]) {
    throwsCode(() => twitter.decode(bad), 'ERR_INVALID_ARG_TYPE', TypeError);
  }
  // A boolean option given 1: a number, not "a fractional number" (every JS number is a float).
  const one = throwsCode(() => new Generator('twitter', { isolated: 1 }), 'ERR_INVALID_ARG_TYPE', TypeError);
  assert.match(one.message, /`isolated` must be true or false, not a number$/, one.message);
  const half = throwsCode(() => new Generator('twitter', { isolated: 0.5 }), 'ERR_INVALID_ARG_TYPE', TypeError);
  assert.match(half.message, /not a fractional number$/, half.message);
});

test('stateFile problems fail at open, naming the path; the retired leaseDir and runLock say why', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'snowflake-strict-'));
  try {
    const missing = path.join(dir, 'no-such-dir', 'ids.state');
    let e = throwsCode(() => new Generator({ layout: 'twitter', node: FULL, stateFile: missing }), 'ERR_SNOWFLAKE_IO');
    assert.ok(e.message.includes(missing), e.message);
    assert.equal(existsSync(path.dirname(missing)), false, 'nothing was made');
    // Not a regular file: refused before a byte of it is read or written.
    for (const [notAFile, what] of [['/dev/null', /character device/], [dir, /directory/]]) {
      e = throwsCode(() => new Generator({ layout: 'twitter', node: FULL, stateFile: notAFile }), 'ERR_SNOWFLAKE_STATE_FILE');
      assert.match(e.message, what);
      assert.ok(e.message.includes(notAFile), e.message);
    }
    e = throwsCode(() => new Generator({ layout: 'twitter', node: { datacenter: 1 }, lease: 'local', leaseDir: dir }), 'ERR_SNOWFLAKE_VALUE', RangeError);
    assert.match(e.message, /lease_dir was retired/);
    e = throwsCode(() => new Generator({ layout: 'twitter', node: FULL, runLock: true }), 'ERR_SNOWFLAKE_VALUE', RangeError);
    assert.match(e.message, /run_lock was retired/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('stats() say how long the layout has left', () => {
  const layout = new Layout('twitter');
  const s = new Generator({ layout, node: FULL, isolated: true }).stats();
  assert.equal(s.lastUnixMs, layout.lastUnixMs);
  assert.ok(Math.abs(s.msLeft - (layout.lastUnixMs - Date.now())) < 60_000, String(s.msLeft));
  assert.ok(Math.abs(s.yearsLeft - s.msLeft / (365.2425 * 86_400_000)) < 1e-9, String(s.yearsLeft));
});
