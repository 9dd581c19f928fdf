// One holder of the cross-language fleet test (tests/fleet/test_fleet.py), in Node: the same as
// worker.py (node worker.mjs URL OPTIONS DIR NAME).
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { Generator } = require('../../bindings-node/index.js');

const LAYOUT = 'time:41,worker:3,sequence:12;epoch=1288834974657';
const pause = new Int32Array(new SharedArrayBuffer(4));
const camel = (k) => k.replace(/_([a-z])/g, (_, c) => c.toUpperCase());

const [url, options, dir, name] = process.argv.slice(2);
const extra = {};
for (const pair of options.split(';').filter(Boolean)) {
  const [k, v] = pair.split(/=(.*)/s);
  extra[camel(k)] = /^\d+$/.test(v) ? Number(v) : v;
}
let gen;
try {
  gen = new Generator({ layout: LAYOUT, lease: url, ...extra });
} catch (e) {
  console.log('OPENERR', e.code, String(e.message).replace(/\n/g, ' '));
  process.exit(0);
}
let s = gen.stats();
console.log('OPEN', s.leaseValue, s.clockSkewMs ?? null);
const out = fs.openSync(path.join(dir, `${name}.ids`), 'a');
while (!fs.existsSync(path.join(dir, 'stop'))) {
  const batch = [];
  for (let i = 0; i < 200; i++) {
    try {
      batch.push(gen.nextId());
    } catch (e) {
      if (e.code !== 'ERR_SNOWFLAKE_LEASE') throw e;
      Atomics.wait(pause, 0, 0, 20);
      break;
    }
  }
  fs.writeSync(out, batch.map((id) => `${id}\n`).join(''));
  Atomics.wait(pause, 0, 0, 5); // about 40,000 IDs a second: the test needs thousands, not millions
}
fs.closeSync(out);
s = gen.stats();
console.log('DONE', s.leaseClaims, s.leaseLosses);
