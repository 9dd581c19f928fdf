// Beyond one process (DESIGN §5), forwarded to core: a shared state used by several Node
// processes at once, worker-id leases, a durable state file, and their errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Generator } from '../index.mjs';
import { pkgDir, throwsCode } from './helpers.mjs';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'libsnowflake-processes-'));
process.env.SNOWFLAKE_SHM_DIR = tmp; // read by core; inherited by the child processes
test.after(() => rmSync(tmp, { recursive: true, force: true }));

test('three processes sharing one state issue no duplicate', async () => {
  const PROCS = 3;
  const COUNT = 200_000;
  const start = Date.now() + 1500; // all start generating at the same instant
  const child = `
    const { Generator } = require(${JSON.stringify(path.join(pkgDir, 'index.js'))});
    // Another child that holds the record's set-up lock longer than an open waits (flaky.sh:
    // starved by busy loops) is a refusal of the moment, BUSY: open again, for a minute at most.
    const deadline = Date.now() + 60_000;
    let g;
    for (;;) {
      try {
        g = new Generator({ layout: 'twitter', node: { datacenter: 0, worker: 9 }, shared: 'node-test' });
        break;
      } catch (e) {
        if (e.code !== 'ERR_SNOWFLAKE_BUSY' || Date.now() > deadline) throw e;
      }
    }
    // Waits without spinning, so that a sibling still opening gets the CPU.
    const pause = new Int32Array(new SharedArrayBuffer(4));
    while (Date.now() < ${start}) Atomics.wait(pause, 0, 0, 1);
    const ids = g.nextIds(${COUNT / 2});
    const more = new BigUint64Array(${COUNT / 2});
    for (let i = 0; i < more.length; i++) more[i] = g.nextId();
    require('node:fs').writeFileSync(process.argv[1], Buffer.concat([Buffer.from(ids.buffer), Buffer.from(more.buffer)]));
  `;
  const files = Array.from({ length: PROCS }, (_, i) => path.join(tmp, `ids-${i}.bin`));
  await Promise.all(files.map((file) => new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['-e', child, file], { stdio: 'inherit' });
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`child exited ${code}`))));
  })));
  const all = new BigUint64Array(PROCS * COUNT);
  files.forEach((file, i) => {
    const buf = readFileSync(file);
    all.set(new BigUint64Array(buf.buffer, buf.byteOffset, COUNT), i * COUNT);
  });
  all.sort();
  for (let i = 1; i < all.length; i++) {
    if (all[i] === all[i - 1]) assert.fail(`ID ${all[i]} was issued twice`);
  }
});

test('the host state used with another policy is refused; a name is a label', () => {
  // Node values no other test of this file uses: the generators live until the GC runs.
  const node = { datacenter: 7, worker: 1 };
  const held = new Generator({ layout: 'twitter', node, shared: 'node-mismatch' });
  const e = throwsCode(
    () => new Generator({ layout: 'twitter', node, maxDriftMs: 5 }),
    'ERR_SNOWFLAKE_SHARED_MISMATCH',
  );
  assert.equal(e.what, 'max_drift_ms');
  assert.match(e.message, /max_drift_ms=0, not 5/);
  // Another name, or none, is the same state; other node values under the name another.
  const same = new Generator({ layout: 'twitter', node, shared: 'other-name' });
  const plain = new Generator({ layout: 'twitter', node });
  const other = new Generator({ layout: 'twitter', node: { datacenter: 7, worker: 2 }, shared: 'node-mismatch' });
  const ids = new Set();
  for (let i = 0; i < 5000; i++) {
    for (const g of [held, same, plain, other]) ids.add(g.nextId());
  }
  assert.equal(ids.size, 20000);
  // A process_only generator beside them is refused, naming the other.
  const mixed = throwsCode(() => new Generator({ layout: 'twitter', node, processOnly: true }), 'ERR_SNOWFLAKE_SHARED_MISMATCH');
  assert.match(mixed.message, /host's shared state/);
  throwsCode(() => new Generator({ layout: 'twitter', shared: 'no/slashes' }), 'ERR_SNOWFLAKE_VALUE');
});

test('local leases give each generator its own worker value', () => {
  const a = new Generator({ layout: 'twitter', lease: 'local' });
  const b = new Generator({ layout: 'twitter', lease: 'local' });
  assert.notEqual(a.node.worker, b.node.worker);
  assert.ok(a.nextId() !== b.nextId());
  throwsCode(() => new Generator({ layout: 'twitter', lease: 'zookeeper' }), 'ERR_SNOWFLAKE_VALUE');
});

test('a state file path may hold =, ; and spaces', () => {
  const folder = path.join(tmp, 'dir=with eq');
  mkdirSync(folder);
  const stateFile = path.join(folder, 'ids;one.state');
  const g = new Generator({ layout: 'twitter', node: { datacenter: 0, worker: 4 }, stateFile });
  g.nextId();
  assert.equal(statSync(stateFile).size, 48);
});

test('a state file records the high-water mark', () => {
  const stateFile = path.join(tmp, 'ids.state');
  const g = new Generator({ layout: 'twitter', node: { datacenter: 0, worker: 2 }, stateFile, stateWindowMs: 500 });
  assert.equal(typeof g.nextId(), 'bigint');
  assert.ok(existsSync(stateFile));
  throwsCode(() => new Generator({ layout: 'twitter', stateFile, stateWindowMs: 0 }), 'ERR_SNOWFLAKE_VALUE');
  // Leases in Redis go through the same parser as every binding's: an address is accepted
  // (here nothing listens: a lease error that says so), anything else is a bad value.
  const unreachable = 'redis://127.0.0.1:1/0';
  assert.throws(
    () => new Generator({ layout: 'twitter', lease: unreachable, leaseTtlMs: 500 }),
    (e) => e.code === 'ERR_SNOWFLAKE_LEASE' && /cannot reach Redis/.test(e.message),
  );
  throwsCode(() => new Generator({ layout: 'twitter', lease: 'zookeeper' }), 'ERR_SNOWFLAKE_VALUE');
  throwsCode(() => new Generator({ layout: 'twitter', lease: 'local;shared=x' }), 'ERR_SNOWFLAKE_VALUE');
});

// --- Mixing kinds of generator for one identity (issue 13, step 2) ------------------------------
// Made safe (no repeat) or refused with ERR_SNOWFLAKE_SHARED_MISMATCH naming the other generator.

const MIX = { layout: 'twitter', node: { datacenter: 3, worker: 7 } };

/** Draws `n` IDs from `a` and `b` in turn, one at a time; the repeats among the 2n. */
function interleavedRepeats(a, b, n) {
  const seen = new Set();
  let repeats = 0;
  for (let i = 0; i < n; i++) {
    for (const g of [a, b]) {
      const id = g.nextId();
      if (seen.has(id)) repeats++;
      seen.add(id);
    }
  }
  return repeats;
}

test('mixing: a plain and a shared generator of one identity in one process never repeat', () => {
  const plain = new Generator(MIX);
  const shared = new Generator({ ...MIX, shared: 'node-mix' });
  assert.equal(interleavedRepeats(plain, shared, 20_000), 0);
});

test('mixing: shared= under two names for one identity, in one process and in two, never repeats', async () => {
  const a = new Generator({ ...MIX, shared: 'node-mix-one' });
  const b = new Generator({ ...MIX, shared: 'node-mix-two' });
  assert.equal(interleavedRepeats(a, b, 20_000), 0);
  // Two processes started independently, one name each, drawing at once.
  const COUNT = 200_000;
  const start = Date.now() + 1500;
  const child = `
    const { Generator } = require(${JSON.stringify(path.join(pkgDir, 'index.js'))});
    const g = new Generator({ layout: 'twitter', node: { datacenter: 3, worker: 7 }, shared: process.argv[2] });
    while (Date.now() < ${start});
    const ids = new BigUint64Array(${COUNT});
    for (let i = 0; i < ids.length; i += 1000) ids.set(g.nextIds(1000), i);
    require('node:fs').writeFileSync(process.argv[1], Buffer.from(ids.buffer));
  `;
  const names = ['node-mix-one', 'node-mix-two'];
  const files = names.map((n) => path.join(tmp, `mix-${n}.bin`));
  await Promise.all(files.map((file, i) => new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['-e', child, file, names[i]], { stdio: 'inherit' });
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`child exited ${code}`))));
  })));
  const all = new Set();
  let repeats = 0;
  for (const file of files) {
    const buf = readFileSync(file);
    const ids = new BigUint64Array(buf.buffer, buf.byteOffset, buf.length / 8);
    assert.equal(ids.length, COUNT);
    for (const id of ids) {
      if (all.has(id)) repeats++;
      all.add(id);
    }
  }
  assert.equal(repeats, 0, `${repeats} repeats between shared=node-mix-one and shared=node-mix-two`);
});

test('mixing: a local lease holding worker=v and a plain generator given worker=v is refused, naming the lease', () => {
  const leased = new Generator({ layout: 'twitter', node: { datacenter: 3 }, lease: 'local' });
  const v = leased.node.worker;
  const e = throwsCode(
    () => new Generator({ layout: 'twitter', node: { datacenter: 3, worker: v } }),
    'ERR_SNOWFLAKE_SHARED_MISMATCH',
  );
  assert.match(e.message, /lease/);
  assert.equal(typeof leased.nextId(), 'bigint');
});

test('mixing: a processOnly and a plain generator of one identity is refused, naming the other', () => {
  const node = { datacenter: 3, worker: 11 };
  const own = new Generator({ layout: 'twitter', node, processOnly: true });
  const e = throwsCode(() => new Generator({ layout: 'twitter', node }), 'ERR_SNOWFLAKE_SHARED_MISMATCH');
  assert.match(e.message, /process_only|processOnly/);
  assert.equal(typeof own.nextId(), 'bigint');
  // The other order (a generator is freed only by the GC here: another identity).
  const other = { datacenter: 3, worker: 12 };
  const plain = new Generator({ layout: 'twitter', node: other });
  throwsCode(() => new Generator({ layout: 'twitter', node: other, processOnly: true }), 'ERR_SNOWFLAKE_SHARED_MISMATCH');
  assert.equal(typeof plain.nextId(), 'bigint');
});
