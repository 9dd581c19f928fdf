// Every error code, with its detail fields, and TypeErrors for values of the wrong JS type.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Layout, Generator, encode, decodeStr } from '../index.mjs';
import { throwsCode, vectors } from './helpers.mjs';

const twitter = new Layout('twitter');
const NOW = Date.now();

test('ERR_SNOWFLAKE_LAYOUT names the problem', () => {
  const e = throwsCode(() => new Layout('time:41,worker:5'), 'ERR_SNOWFLAKE_LAYOUT');
  assert.match(e.message, /no `sequence` field/);
  throwsCode(() => new Generator({ layout: 'nope' }), 'ERR_SNOWFLAKE_LAYOUT');
});

test('ERR_SNOWFLAKE_VALUE: node values, options, encodings', () => {
  let e = throwsCode(() => new Generator({ layout: 'twitter', node: { datacenter: 0, worker: 32 } }), 'ERR_SNOWFLAKE_VALUE');
  assert.equal(e.field, 'worker');
  assert.equal(e.value, 32);
  assert.equal(e.max, 31);
  e = throwsCode(() => new Generator({ layout: 'twitter', node: { shard: 1 } }), 'ERR_SNOWFLAKE_VALUE');
  assert.equal(e.field, 'shard');
  e = throwsCode(() => new Generator({ layout: 'twitter', maxWait: 0 }), 'ERR_SNOWFLAKE_VALUE');
  assert.equal(e.option, 'maxWait', 'a misspelt option is an error, not silently ignored');
  // No layout: the environment's, else twitter (docs/environment.md).
  assert.equal(new Generator({ isolated: true }).layout.toString(), twitter.toString());
  // The layout given twice (first and in the options): neither silently wins.
  throwsCode(() => new Generator('twitter', { layout: 'discord' }), 'ERR_SNOWFLAKE_VALUE');
  throwsCode(() => new Generator({ layout: 'twitter', sequenceStart: 'spread:0' }), 'ERR_SNOWFLAKE_VALUE');
  throwsCode(() => new Generator({ layout: 'twitter', rollover: 'sequence' }), 'ERR_SNOWFLAKE_VALUE');
  throwsCode(() => encode(1n, 'base64'), 'ERR_SNOWFLAKE_VALUE');
  throwsCode(() => encode(1n, 'hex', { reversed: true }), 'ERR_SNOWFLAKE_VALUE');
  throwsCode(() => new Generator({ layout: 'twitter' }).reserve(0), 'ERR_SNOWFLAKE_VALUE');
  e = throwsCode(() => new Generator({ layout: 'twitter' }).nextIds(2 ** 32), 'ERR_SNOWFLAKE_VALUE');
  assert.equal(e.max, vectors('tables.json').limits.max_ids_per_call);
  // A negative count is a value out of range, as in every language (issue 26).
  throwsCode(() => new Generator({ layout: 'twitter' }).nextIds(-1), 'ERR_SNOWFLAKE_VALUE', RangeError);
  throwsCode(() => twitter.compose(NOW, { datacenter: 0, worker: -1 }), 'ERR_SNOWFLAKE_VALUE', RangeError);
  // A number of the right type out of range: core's range error, as in every front end.
  e = throwsCode(() => new Generator({ layout: 'twitter', maxDriftMs: -1 }), 'ERR_SNOWFLAKE_VALUE', RangeError);
  assert.equal(e.field, 'maxDriftMs');
  assert.equal(e.value, -1);
});

test('a negative node value names its field and the allowed range (number and bigint)', () => {
  for (const worker of [-1, -1n]) {
    const e = throwsCode(() => new Generator({ layout: 'twitter', node: { worker } }), 'ERR_SNOWFLAKE_VALUE', RangeError);
    assert.equal(e.field, 'worker');
    assert.equal(e.value, -1);
    assert.match(e.message, /^new Generator\(options\.node\): worker = -1 is out of range: the smallest allowed is 0/);
  }
});

test('ERR_SNOWFLAKE_IO carries the path, the action and errno the docs promise', async () => {
  const fs = await import('node:fs');
  const os = await import('node:os');
  const path = await import('node:path');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sf-io-'));
  try {
    const notADir = path.join(dir, 'a-file');
    fs.writeFileSync(notADir, '');
    const stateFile = path.join(notADir, 'ids.state');
    const e = throwsCode(() => new Generator({ layout: 'twitter', node: { datacenter: 0, worker: 14 }, stateFile }), 'ERR_SNOWFLAKE_IO');
    assert.equal(e.path, stateFile);
    assert.equal(typeof e.action, 'string');
    assert.ok(e.action.length > 0);
    assert.equal(e.errno, os.constants.errno.ENOTDIR);
    assert.ok(e.message.includes(stateFile), e.message);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('ERR_SNOWFLAKE_INVALID_ID: bad strings, IDs above the layout, bigints outside u64', () => {
  let e = throwsCode(() => decodeStr('0Czks0tP37', 'base62'), 'ERR_SNOWFLAKE_INVALID_ID');
  assert.equal(e.expectedLength, 11);
  assert.equal(e.length, 10);
  e = throwsCode(() => decodeStr('0Czks0tP3!X', 'base62'), 'ERR_SNOWFLAKE_INVALID_ID');
  assert.equal(e.position, 9);
  e = throwsCode(() => twitter.decode(2n ** 63n), 'ERR_SNOWFLAKE_INVALID_ID');
  assert.equal(e.id, '9223372036854775808', 'detail fields are JSON-safe');
  assert.equal(e.bits, 63);
  assert.doesNotThrow(() => JSON.stringify(e));
  throwsCode(() => twitter.decode(-1n), 'ERR_SNOWFLAKE_INVALID_ID');
  throwsCode(() => twitter.decode(2n ** 64n), 'ERR_SNOWFLAKE_INVALID_ID');
  throwsCode(() => encode(-5, 'hex'), 'ERR_SNOWFLAKE_INVALID_ID');
});

test('ERR_SNOWFLAKE_TIME_RANGE: before the epoch, past the last instant, before 1970', () => {
  const e = throwsCode(() => twitter.minId(1000), 'ERR_SNOWFLAKE_TIME_RANGE');
  assert.equal(e.unixMs, 1000);
  assert.equal(e.firstUnixMs, 1288834974657);
  assert.equal(e.lastUnixMs, twitter.lastUnixMs);
  throwsCode(() => twitter.maxId(twitter.lastUnixMs + 1), 'ERR_SNOWFLAKE_TIME_RANGE');
  throwsCode(() => twitter.minId(-1), 'ERR_SNOWFLAKE_TIME_RANGE');
  throwsCode(() => twitter.minId(new Date(NaN)), 'ERR_SNOWFLAKE_TIME_RANGE');
  const g = new Generator({ layout: 'twitter', isolated: true });
  throwsCode(() => g.nextIdAt(0), 'ERR_SNOWFLAKE_TIME_RANGE');
});

test('ERR_SNOWFLAKE_CLOCK_BEHIND says how far behind and when to retry', () => {
  const g = new Generator({ layout: 'twitter', isolated: true, maxWaitMs: 0 });
  g.nextIdAt(NOW);
  const e = throwsCode(() => g.nextIdAt(NOW - 5), 'ERR_SNOWFLAKE_CLOCK_BEHIND');
  assert.equal(e.behindMs, 5);
  assert.equal(e.retryAfterMs, 5);
  assert.match(e.message, /5 ms behind/);
});

test('ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED from nextIdAt, tryNextId and nextId with maxWaitMs 0', () => {
  const tiny = 'time:41,worker:10,sequence:1;epoch=0;tick=3600s'; // 2 IDs an hour
  const g = new Generator({ layout: tiny, isolated: true, maxWaitMs: 0 });
  g.nextIdAt(NOW);
  g.nextIdAt(NOW);
  const e = throwsCode(() => g.nextIdAt(NOW), 'ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED');
  assert.ok(e.retryAfterMs >= 0 && e.retryAfterMs <= 3_600_000);
  const live = new Generator({ layout: tiny, node: { worker: 1 }, isolated: true, maxWaitMs: 0 });
  assert.throws(() => {
    for (let i = 0; i < 3; i++) live.tryNextId();
  }, (err) => err.code === 'ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED' && typeof err.retryAfterMs === 'number');
  assert.throws(() => {
    for (let i = 0; i < 3; i++) live.nextId();
  }, (err) => err.code === 'ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED');
});

test('ERR_SNOWFLAKE_FORKED: a process_only generator inherited through fork() refuses to issue', () => {
  // Node cannot fork; the binding's probe forks, and the child reports the code it got.
  const g = new Generator({ layout: 'twitter', node: { datacenter: 0, worker: 30 }, processOnly: true });
  g.nextId();
  assert.equal(g._forkProbe(), 'ERR_SNOWFLAKE_FORKED');
  assert.equal(typeof g.nextId(), 'bigint', 'the parent goes on');
  // A default generator's state is the host's: the child issues from it (no error).
  const host = new Generator({ layout: 'twitter', node: { datacenter: 0, worker: 29 } });
  host.nextId();
  assert.equal(host._forkProbe(), '');
  assert.equal(typeof host.nextId(), 'bigint');
});

test('wrong JS types are TypeErrors with ERR_INVALID_ARG_TYPE', () => {
  const g = new Generator({ layout: 'twitter', isolated: true });
  const cases = [
    () => new Layout(42),
    () => new Layout(),
    () => twitter.decode({ id: '123' }),
    () => twitter.decode(['123']),
    () => twitter.decode(2 ** 53), // not a safe integer: could already be rounded
    () => twitter.decode(1.5),
    () => twitter.minId('2024-01-01'),
    () => twitter.minId(1.5),
    () => twitter.compose(NOW, { datacenter: 0, worker: '3' }),
    () => twitter.compose(NOW, [1]),
    () => new Generator(42),
    () => new Generator({ layout: 'twitter' }, {}),
    () => new Generator('twitter', 'datacenter=1,worker=2'),
    () => new Generator('twitter', { node: 3 }),
    () => new Generator({ layout: 42 }),
    () => new Generator({ layout: 'twitter', maxWaitMs: '10' }),
    () => new Generator({ layout: 'twitter', isolated: 'yes' }),
    () => new Generator({ layout: 'twitter', node: { datacenter: 0, worker: 1.5 } }),
    () => g.nextIds('10'),
    () => g.nextIdAt('now'),
    () => g.reserve(2.5),
    () => encode({}, 'hex'),
    () => encode(1n, 16),
    () => decodeStr(1, 'hex'),
    () => encode(1n, 'hex', { reverse: 1 }),
  ];
  for (const c of cases) {
    const e = throwsCode(c, 'ERR_INVALID_ARG_TYPE', TypeError);
    // Each names the call and the parameter (issue 29), e.g. `layout.decode(id): …`.
    assert.match(e.message, /^(new )?\w+(\.\w+)?\([\w.,… ]*\): \S/, `${c}: ${e.message}`);
  }
  assert.match(throwsCode(() => twitter.decode({}), 'ERR_INVALID_ARG_TYPE', TypeError).message, /^layout\.decode\(id\): /);
  assert.match(throwsCode(() => g.nextIdAt('now'), 'ERR_INVALID_ARG_TYPE', TypeError).message, /^generator\.nextIdAt\(t\): /);
  const node = throwsCode(() => new Generator('twitter', { node: 3 }), 'ERR_INVALID_ARG_TYPE', TypeError);
  assert.match(node.message, /^new Generator\(layout, options\.node\): node values are a plain object \(.*\) or a string/);
});

test('a safe-integer number is accepted where an ID is expected', () => {
  assert.equal(twitter.decode(4194305).sequence, 1);
  assert.equal(encode(255, 'hex'), '00000000000000ff');
  assert.equal(encode(Number.MAX_SAFE_INTEGER, 'decimal'), String(Number.MAX_SAFE_INTEGER));
});
