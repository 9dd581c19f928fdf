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
    const g = new Generator({ layout: 'twitter', node: { datacenter: 0, worker: 9 }, shared: 'node-test' });
    while (Date.now() < ${start});
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

test('shared state opened with another policy is refused', () => {
  new Generator({ layout: 'twitter', node: { datacenter: 0, worker: 1 }, shared: 'node-mismatch' }).nextId();
  const e = throwsCode(
    () => new Generator({ layout: 'twitter', node: { datacenter: 0, worker: 1 }, shared: 'node-mismatch', maxDriftMs: 5 }),
    'ERR_SNOWFLAKE_SHARED_MISMATCH',
  );
  assert.equal(typeof e.what, 'string');
  throwsCode(() => new Generator({ layout: 'twitter', shared: 'no/slashes' }), 'ERR_SNOWFLAKE_VALUE');
});

test('local leases give each generator its own worker value', () => {
  const leaseDir = path.join(tmp, 'leases');
  const a = new Generator({ layout: 'twitter', lease: 'local', leaseDir });
  const b = new Generator({ layout: 'twitter', lease: 'local', leaseDir });
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
