// One issuing process of the arbiter tests (tests/arbiter/test_arbiter.py), in Node.
//
//   node issue.mjs LAYOUT NODE OPTIONS MS OUT SYNC
//
// As tests/arbiter/issue.py: opens a generator (OPTIONS in the text form, `-` for none; here
// key by key in Node's spelling), `error <code> <message>` on failure; else ready, go, nextId()
// for MS ms, then `ok` and one ID a line.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { Generator } = require('../../bindings-node/index.js');
const [layout, node, options, ms, out, sync] = process.argv.slice(2);
const pause = new Int32Array(new SharedArrayBuffer(4));
const camel = (k) => k.replace(/_([a-z])/g, (_, c) => c.toUpperCase());

const opts = { layout };
if (node !== '-') opts.node = Object.fromEntries(node.split(',').map((p) => { const [k, v] = p.split('='); return [k, Number(v)]; }));
if (options !== '-') {
  for (const item of options.split(';')) {
    const at = item.indexOf('=');
    const [k, v] = [item.slice(0, at), item.slice(at + 1)];
    opts[camel(k)] = v === 'true' ? true : v === 'false' ? false : /^\d+$/.test(v) ? Number(v) : v;
  }
}
let gen;
try {
  gen = new Generator(opts);
} catch (e) {
  fs.writeFileSync(out, `error ${e.code} ${String(e.message).replace(/\n/g, ' ')}\n`);
  process.exit(0);
}
fs.writeFileSync(path.join(sync, `ready.${process.pid}`), '');
while (!fs.existsSync(path.join(sync, 'go'))) Atomics.wait(pause, 0, 0, 0.5);
const ids = [];
let tail = '';
const end = performance.now() + Number(ms);
try {
  // At least one batch, however late this process runs after `go`.
  do {
    for (let i = 0; i < 200; i++) ids.push(gen.nextId());
    // The test may wait for this one: it has issued.
    if (ids.length === 200) fs.writeFileSync(path.join(sync, `issued.${process.pid}`), '');
  } while (performance.now() < end);
} catch (e) {
  tail = `error ${e.code} ${String(e.message).replace(/\n/g, ' ')}\n`;
}
fs.writeFileSync(out, `ok\n${ids.map((id) => `${id}\n`).join('')}${tail}`);
