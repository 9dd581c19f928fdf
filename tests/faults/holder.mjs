// One holder of the fault-injection suite (tests/faults/run.py), in Node: the same as
// holder.py (node holder.mjs URL OPTIONS DIR NAME), through the addon of bindings-node.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { Generator } = require('../../bindings-node/index.js');

const LAYOUT = 'time:41,worker:2,sequence:12;epoch=1288834974657';
const pause = new Int32Array(new SharedArrayBuffer(4));
const sleep = (ms) => Atomics.wait(pause, 0, 0, ms);
const camel = (k) => k.replace(/_([a-z])/g, (_, c) => c.toUpperCase());

const [url, options, dir, name] = process.argv.slice(2);
const extra = {};
for (const pair of options.split(';').filter(Boolean)) {
  const [k, v] = pair.split(/=(.*)/s);
  extra[camel(k)] = /^-?\d+$/.test(v) ? Number(v) : v;
}
const stops = [path.join(dir, 'stop'), path.join(dir, `${name}.stop`)];
let last = null;
function refused(e) {
  // Only the library's typed errors are refusals; anything else ends the holder loudly.
  if (typeof e.code !== 'string' || !e.code.startsWith('ERR_SNOWFLAKE_')) throw e;
  const text = String(e.message).replace(/\n/g, ' ');
  const key = `${e.code} ${text.slice(0, 48)}`;
  if (key !== last) {
    last = key;
    console.log('REFUSED', e.code, text);
  }
}
// The address a generator was opened with (`@FILE`: read again when the file changes, and the
// generator opened anew on the new address, as a fleet's configuration would do).
let openedWith = null;
const address = () => (url.startsWith('@') ? fs.readFileSync(url.slice(1), 'utf8').trim() : url);
let gen = null;
let claims = 0; // the claims seen: each new one (a lapsed lease healed) is printed
const out = fs.openSync(path.join(dir, `${name}.ids`), 'a');
while (!stops.some((s) => fs.existsSync(s))) {
  if (gen !== null && address() !== openedWith) gen = null;
  if (gen === null) {
    try {
      openedWith = address();
      gen = new Generator({ layout: LAYOUT, lease: openedWith, ...extra });
      last = null;
      const s = gen.stats();
      claims = s.leaseClaims;
      console.log('OPEN', s.leaseValue);
    } catch (e) {
      refused(e);
      sleep(100);
      continue;
    }
  }
  const batch = [];
  for (let i = 0; i < 20; i++) {
    try {
      batch.push(gen.nextId());
    } catch (e) {
      refused(e);
      sleep(20);
      break;
    }
  }
  if (batch.length > 0) last = null; // issuing again: the next refusal is news
  fs.writeSync(out, batch.map((id) => `${id}\n`).join(''));
  const now = gen.stats();
  if (now.leaseClaims !== claims && now.leaseValue !== null && now.leaseValue !== undefined) {
    claims = now.leaseClaims;
    console.log('OPEN', now.leaseValue);
  }
  sleep(10);
}
fs.closeSync(out);
const s = gen ? gen.stats() : null;
console.log('DONE', s ? s.leaseClaims : 0, s ? s.leaseLosses : 0);
