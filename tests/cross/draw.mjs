// One process of the cross-language shared-state test (tests/cross/test_cross.py), in Node.
//
//   node draw.mjs draw NAME COUNT OUT DIR   opens the shared generator NAME (twitter,
//                                           datacenter=3, worker=7), or a plain one (no
//                                           coordination option) when NAME is `-`, writes DIR/ready.<pid>,
//                                           waits for DIR/go, then draws COUNT IDs (runs of
//                                           1000 nextId() calls and nextIds(1000) batches,
//                                           alternating) and writes them to OUT, one a line
//   node draw.mjs mismatch NAME             opens NAME with another layout, node and policy;
//                                           prints `<case> <error code> <message>` a case, or
//                                           `<case> OPENED <first ID>`
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { Generator } = require('../../bindings-node/index.js');

const LAYOUT = 'twitter';
const NODE = { datacenter: 3, worker: 7 };
const pause = new Int32Array(new SharedArrayBuffer(4));

function draw(name, count, out, dir) {
  const gen = new Generator({ layout: LAYOUT, node: NODE, ...(name === '-' ? {} : { shared: name }) });
  fs.writeFileSync(path.join(dir, `ready.node.${process.pid}`), '');
  const go = path.join(dir, 'go');
  while (!fs.existsSync(go)) Atomics.wait(pause, 0, 0, 0.5);
  const ids = [];
  while (ids.length < count) {
    for (let i = Math.min(1000, count - ids.length); i > 0; i--) ids.push(gen.nextId());
    for (const id of gen.nextIds(Math.min(1000, count - ids.length))) ids.push(id);
  }
  fs.writeFileSync(out, ids.join('\n') + '\n');
}

function mismatch(name) {
  const cases = [
    ['layout', () => new Generator({ layout: 'discord', node: { worker: 3, process: 7 }, shared: name })],
    ['node', () => new Generator({ layout: LAYOUT, node: { datacenter: 3, worker: 8 }, shared: name })],
    ['policy', () => new Generator({ layout: LAYOUT, node: NODE, shared: name, maxDriftMs: 5 })],
  ];
  for (const [c, make] of cases) {
    try {
      console.log(c, 'OPENED', String(make().nextId()));
    } catch (e) {
      if (e.code === 'ERR_SNOWFLAKE_SHARED_MISMATCH') {
        console.log(c, e.code, String(e.message).replace(/\n/g, ' '), `(what=${e.what})`);
      } else {
        console.log(c, 'WRONG', e.code, e.message);
      }
    }
  }
}

const [mode, ...args] = process.argv.slice(2);
if (mode === 'draw') draw(args[0], Number(args[1]), args[2], args[3]);
else if (mode === 'mismatch') mismatch(args[0]);
else {
  console.error('usage: node draw.mjs draw NAME COUNT OUT DIR | mismatch NAME');
  process.exit(2);
}
