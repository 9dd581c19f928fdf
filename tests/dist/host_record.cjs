// One process of the host-record check of tests/dist/run.sh (issue 43), run by Node, Bun and
// Deno in the same installed project: `<runtime> host_record.cjs <out> <ready> <go> <count>`.
// It makes a generator of the node values every one of them uses (hence one host record,
// under SNOWFLAKE_SHM_DIR), creates <ready>, waits until <go> exists (so that all issue at
// once, however long each took to start), then writes <count> IDs, as decimal lines, to <out>.
'use strict';

const fs = require('node:fs');
const { Generator } = require('libsnowflake');

const [out, ready, go, count] = process.argv.slice(2);
const g = new Generator({ layout: 'twitter', node: { datacenter: 2, worker: 7 } });
fs.writeFileSync(ready, `${process.versions.bun ? 'bun' : process.versions.deno ? 'deno' : 'node'} ${process.pid}\n`);
const pause = new Int32Array(new SharedArrayBuffer(4));
while (!fs.existsSync(go)) Atomics.wait(pause, 0, 0, 2); // polls the state, 2 ms apart
const ids = [];
for (let i = 0; i < Number(count) / 2; i++) ids.push(g.nextId());
ids.push(...g.nextIds(Number(count) - ids.length));
fs.writeFileSync(out, ids.join('\n') + '\n');
