// What a new user meets in the first hour (issue 29): IDs as decimal strings (JSON, pg's
// BIGINT), node values as text, a layout as the first argument of new Generator(), and type
// errors that name the call and the parameter.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Layout, Generator, PublicIds, encode, decodeStr } from '../index.mjs';
import { throwsCode } from './helpers.mjs';

const twitter = new Layout('twitter');

test('a decimal string is taken wherever an ID is', () => {
  const g = new Generator('twitter', { node: 'datacenter=1,worker=21', isolated: true });
  const id = g.nextId();
  const text = String(id); // as JSON, pg's BIGINT and nextIdString() give it
  assert.deepEqual(twitter.decode(text), twitter.decode(id));
  assert.equal(twitter.decode('2125646515509792768').unixMs, twitter.decode(2125646515509792768n).unixMs);
  for (const enc of ['decimal', 'hex', 'base32', 'base36', 'base58', 'base62']) {
    assert.equal(encode(text, enc), encode(id, enc));
    assert.equal(encode(text, enc, { reverse: true }), encode(id, enc, { reverse: true }));
  }
  const publicIds = new PublicIds(new Uint8Array(16).fill(7));
  assert.equal(publicIds.encode(text), publicIds.encode(id));
  assert.equal(publicIds.decode(publicIds.encode(text)), id);
  // A string ID between the bounds of its tick: JS compares a bigint with a decimal string.
  const at = twitter.decode(text).unixMs;
  assert.ok(twitter.minId(at) <= BigInt(text) && BigInt(text) <= twitter.maxId(at));
  assert.ok(twitter.minId(at) <= text && text <= twitter.maxId(at));
  assert.equal(decodeStr(encode(text, 'base62'), 'base62'), id);
});

test('a malformed ID string is ERR_SNOWFLAKE_INVALID_ID naming the call', () => {
  for (const bad of ['', '12x', ' 12', '+12', '-1', '1.0', '0x10', '18446744073709551616']) {
    const e = throwsCode(() => twitter.decode(bad), 'ERR_SNOWFLAKE_INVALID_ID');
    assert.match(e.message, /^layout\.decode\(id\): invalid ID string/, bad);
    throwsCode(() => encode(bad, 'hex'), 'ERR_SNOWFLAKE_INVALID_ID');
    throwsCode(() => new PublicIds(new Uint8Array(16)).encode(bad), 'ERR_SNOWFLAKE_INVALID_ID');
  }
  // A string ID above the layout's 63 bits: core's range check, as for a bigint.
  throwsCode(() => twitter.decode('18446744073709551615'), 'ERR_SNOWFLAKE_INVALID_ID');
});

test('node values as text, as C, Python, PHP and the CLI take them', () => {
  const a = new Generator('twitter', { node: 'datacenter=1,worker=22', isolated: true });
  const b = new Generator({ layout: 'twitter', node: ' worker=22 , datacenter=1 ', isolated: true });
  assert.deepEqual(a.node, { datacenter: 1, worker: 22 });
  assert.deepEqual(b.node, { datacenter: 1, worker: 22 });
  assert.deepEqual(new Generator('twitter', { node: '', isolated: true }).node, { datacenter: 0, worker: 0 });
  assert.equal(twitter.compose(1700000000000, 'datacenter=1,worker=22', 5), twitter.compose(1700000000000, { datacenter: 1, worker: 22 }, 5));
  let e = throwsCode(() => new Generator('twitter', { node: 'datacenter=1;worker=2' }), 'ERR_SNOWFLAKE_VALUE');
  assert.match(e.message, /node values are separated by `,`/);
  e = throwsCode(() => new Generator('twitter', { node: 'worker=2' }), 'ERR_SNOWFLAKE_VALUE');
  assert.match(e.message, /no value for `datacenter`/);
  e = throwsCode(() => new Generator('twitter', { node: 'datacenter=1,worker=32' }), 'ERR_SNOWFLAKE_VALUE');
  assert.equal(e.field, 'worker');
});

test('a layout first: a name, a spec or a Layout; twitter by default', () => {
  const spec = 'time:41,worker:10,sequence:12;epoch=1288834974657;tick=1ms';
  assert.equal(new Generator().layout.toString(), twitter.toString());
  assert.equal(new Generator('twitter').layout.toString(), twitter.toString());
  assert.equal(new Generator({ node: {} }).layout.toString(), twitter.toString());
  assert.equal(new Generator(spec, { node: 'worker=23' }).layout.toString(), spec);
  assert.equal(new Generator(new Layout('discord'), { node: 'worker=1,process=2' }).layout.toString(), new Layout('discord').toString());
  const g = new Generator('twitter', { node: 'datacenter=1,worker=24', maxWaitMs: 0, isolated: true });
  assert.ok(typeof g.nextId() === 'bigint');
  const e = throwsCode(() => new Generator('nope'), 'ERR_SNOWFLAKE_LAYOUT');
  assert.match(e.message, /^new Generator\(layout\): invalid layout/);
  throwsCode(() => new Generator('twitter', { layout: 'twitter' }), 'ERR_SNOWFLAKE_VALUE');
  const t = throwsCode(() => new Generator('twitter', 'datacenter=1,worker=2'), 'ERR_INVALID_ARG_TYPE', TypeError);
  assert.match(t.message, /^new Generator\(layout, options\): the options are an object, e\.g\. \{ node: /);
});
