// What tests/dist/run.sh runs under Bun and Deno (issue 43) beside check.cjs and check.mjs, in
// the project that installed dist/node's tarballs: the JSON helpers, errors with their codes,
// nextIdAsync, and a worker thread sharing the main thread's identity (hence core's registry
// and one state) with no repeat. Prints `ok runtime <name> <version> ...`; throws on a difference.
import assert from 'node:assert/strict';
import { Worker } from 'node:worker_threads';
import { createRequire } from 'node:module';
import { Generator, Layout } from 'libsnowflake';
import { stringify, parse, bigintReplacer, HAS_RAW_JSON } from 'libsnowflake/json';

const runtime = process.versions.bun ? `bun ${process.versions.bun}` : process.versions.deno ? `deno ${process.versions.deno}` : `node ${process.versions.node}`;
const twitter = new Layout('twitter');

// JSON: IDs whole at 2^64 - 1, as strings, and back as bigints; a bad ID is the client's 400.
const max = 18446744073709551615n;
const text = stringify({ id: max, other: [1n, 'x'] });
assert.equal(text, '{"id":"18446744073709551615","other":["1","x"]}');
assert.deepEqual(parse(text, { ids: ['id'] }), { id: max, other: ['1', 'x'] });
assert.equal(JSON.stringify({ id: 7n }, bigintReplacer), '{"id":"7"}');
assert.throws(() => parse('{"id":-1}', { ids: ['id'] }), (e) => e.status === 400 && e.statusCode === 400);
// Exact JSON numbers need JSON.rawJSON: where the runtime has it they are written, else the
// call says so.
if (HAS_RAW_JSON) assert.equal(stringify({ id: max }, { ids: 'number' }), '{"id":18446744073709551615}');
else assert.throws(() => stringify({ id: max }, { ids: 'number' }), /rawJSON|21/);

// Errors: each an Error with its code and a message.
const codes = [
  [() => new Layout('time:41,sequence:99'), 'ERR_SNOWFLAKE_LAYOUT'],
  [() => new Generator({ layout: 'twitter', node: { datacenter: 99, worker: 0 } }), 'ERR_SNOWFLAKE_VALUE'],
  [() => twitter.decode('12x'), 'ERR_SNOWFLAKE_INVALID_ID'],
  [() => new Generator({ layout: 'twitter', isolated: true }).nextIdAt(0), 'ERR_SNOWFLAKE_TIME_RANGE'],
];
for (const [f, code] of codes) assert.throws(f, (e) => e instanceof Error && e.code === code && e.message.length > 0, code);

// nextIdAsync waits on the runtime's thread pool.
const g = new Generator({ layout: 'twitter', node: { datacenter: 3, worker: 9 } });
const a = await g.nextIdAsync();
assert.ok(a > 0n && twitter.decode(a).fields.worker === 9);

// A worker thread of the same node values: one state with this thread's generator.
const require = createRequire(import.meta.url);
const source = `
const { parentPort, workerData } = require('node:worker_threads');
const { Generator } = require(workerData);
const g = new Generator({ layout: 'twitter', node: { datacenter: 3, worker: 9 } });
parentPort.postMessage(g.nextIds(20000).join(','));`;
const fromWorker = new Promise((resolve, reject) => {
  const w = new Worker(source, { eval: true, workerData: require.resolve('libsnowflake') });
  w.once('message', resolve);
  w.once('error', reject);
});
const mine = [];
for (let i = 0; i < 20000; i++) mine.push(g.nextId());
const theirs = (await fromWorker).split(',').map(BigInt);
const all = new Set([a, ...mine, ...theirs]);
assert.equal(all.size, 40001, 'a worker thread and the main thread repeated an ID');
console.log(`ok runtime ${runtime}: json, ${codes.length} error codes, nextIdAsync, a worker thread with ${theirs.length} IDs, 0 repeats`);
