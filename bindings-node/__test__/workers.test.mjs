// Generators made in different worker_threads with the same layout and node values share
// the process, hence core's registry and one state: they must never issue the same ID.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';

const WORKERS = 4;
const PER_WORKER = 250_000;

// Each worker loads the addon itself, makes its own Generator, waits at a barrier so that
// all generate at once, then mixes nextId() and nextIds() and sends its IDs back.
const source = `
const { workerData, parentPort } = require('node:worker_threads');
const { Generator } = require(workerData.entry);
const g = new Generator({ layout: 'twitter', node: workerData.node });
const barrier = new Int32Array(workerData.barrier);
Atomics.add(barrier, 0, 1);
while (Atomics.load(barrier, 0) < workerData.workers) Atomics.wait(barrier, 0, Atomics.load(barrier, 0), 5);
const ids = new BigUint64Array(workerData.count);
let i = 0;
while (i < ids.length) {
  if (i % 2000 < 1000) ids[i++] = g.nextId();
  else { const batch = g.nextIds(Math.min(1000, ids.length - i)); ids.set(batch, i); i += batch.length; }
}
parentPort.postMessage(ids, [ids.buffer]);
`;

async function run(barrier, entry, node) {
  return Promise.all(
    Array.from({ length: WORKERS }, () =>
      new Promise((resolve, reject) => {
        const w = new Worker(source, {
          eval: true,
          workerData: { entry, barrier, workers: WORKERS, count: PER_WORKER, node },
        });
        w.once('message', resolve);
        w.once('error', reject);
      }),
    ),
  );
}

test(`${WORKERS} worker_threads generating at once issue no duplicate`, async () => {
  const entry = new URL('../index.js', import.meta.url).pathname;
  // The test means something only if the workers ran at the same time (their ID ranges
  // interleave). A loaded machine may run one to its end before another starts: then again,
  // with another node value (a fresh state).
  for (let attempt = 0; ; attempt++) {
    const results = await run(new SharedArrayBuffer(4), entry, { datacenter: 5, worker: 3 + attempt });
    const all = new BigUint64Array(WORKERS * PER_WORKER);
    results.forEach((ids, k) => {
      for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], `worker ${k}: not increasing at ${i}`);
      all.set(ids, k * PER_WORKER);
    });
    all.sort();
    for (let i = 1; i < all.length; i++) {
      if (all[i] === all[i - 1]) assert.fail(`ID ${all[i]} was issued twice`);
    }
    const ranges = results.map((ids) => [ids[0], ids[ids.length - 1]]);
    const overlapping = ranges.some(([a0, a1], i) => ranges.some(([b0, b1], j) => i !== j && a0 < b1 && b0 < a1));
    if (overlapping) break;
    assert.ok(attempt < 4, 'the workers never ran at the same time in 5 runs');
  }
});
