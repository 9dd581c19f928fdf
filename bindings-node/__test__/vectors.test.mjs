// The shared vectors (tests/vectors/*.json) that every language must agree with bit for bit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Layout, Generator, encode, decodeStr } from '../index.mjs';
import { vectors, throwsCode } from './helpers.mjs';

const layouts = vectors('layouts.json');
const encodings = vectors('encodings.json');
const generator = vectors('generator.json');

test('layouts: canonical text, fingerprint, sizes, fields', () => {
  for (const v of layouts.layouts) {
    const l = new Layout(v.spec);
    assert.equal(l.toString(), v.canonical, v.spec);
    assert.equal(new Layout(l.toString()).toString(), v.canonical, 'the canonical text parses back');
    assert.equal(l.fingerprint, BigInt(v.fingerprint), v.spec);
    assert.equal(l.totalBits, v.total_bits);
    assert.equal(l.capacityPerTick, v.capacity_per_tick);
    assert.equal(l.epochMs, v.epoch_ms);
    assert.equal(l.tickMs, v.tick_ms);
    assert.equal(l.lastUnixMs, v.last_unix_ms);
    assert.deepEqual(
      l.fields.map(({ name, bits, shift }) => ({ name, bits, shift })),
      v.fields,
    );
  }
});

test('layouts: decode real and computed IDs', () => {
  for (const v of layouts.layouts) {
    const l = new Layout(v.spec);
    for (const d of v.decode) {
      const parts = l.decode(BigInt(d.id));
      assert.equal(parts.unixMs, d.unix_ms, `${v.spec} ${d.id}`);
      assert.equal(parts.tick, d.tick);
      assert.equal(parts.sequence, d.sequence);
      assert.deepEqual(parts.fields, d.fields);
      assert.equal(parts.date.getTime(), d.unix_ms);
    }
  }
});

test('layouts: minId / maxId bounds, from numbers and Dates', () => {
  for (const v of layouts.layouts) {
    const l = new Layout(v.spec);
    for (const b of v.bounds) {
      assert.equal(l.minId(b.unix_ms), BigInt(b.min_id), `${v.spec} ${b.unix_ms}`);
      assert.equal(l.maxId(b.unix_ms), BigInt(b.max_id));
      assert.equal(l.minId(new Date(b.unix_ms)), BigInt(b.min_id));
      assert.equal(l.maxId(new Date(b.unix_ms)), BigInt(b.max_id));
    }
  }
});

test('layouts: compose, and its errors', () => {
  for (const c of layouts.compose) {
    const l = new Layout(c.spec);
    if (c.error) {
      throwsCode(() => l.compose(c.unix_ms, c.fields, c.sequence), c.error);
    } else {
      assert.equal(l.compose(c.unix_ms, c.fields, c.sequence), BigInt(c.id), JSON.stringify(c));
    }
  }
});

test('layouts: invalid specs name the problem', () => {
  for (const v of layouts.invalid) {
    const e = throwsCode(() => new Layout(v.spec), v.error);
    assert.ok(e.message.includes(v.message_contains), `${JSON.stringify(v.spec)}: ${e.message}`);
  }
});

test('layouts: IDs outside the layout are refused', () => {
  for (const v of layouts.decode_invalid) {
    throwsCode(() => new Layout(v.spec).decode(BigInt(v.id)), v.error);
  }
});

test('encodings: every encoding, plain and reverse, both ways', () => {
  for (const v of encodings.ids) {
    const id = BigInt(v.id);
    for (const [name, text] of Object.entries(v.plain)) {
      assert.equal(encode(id, name), text, `${name} ${v.id}`);
      assert.equal(decodeStr(text, name), id);
    }
    for (const [name, text] of Object.entries(v.reverse)) {
      assert.equal(encode(id, name, { reverse: true }), text, `reverse ${name} ${v.id}`);
      assert.equal(decodeStr(text, name, { reverse: true }), id);
    }
  }
});

test('encodings: aliases and invalid strings', () => {
  for (const a of encodings.aliases) {
    assert.equal(decodeStr(a.text, a.encoding), BigInt(a.id), `${a.encoding} ${a.text}`);
  }
  for (const v of encodings.invalid) {
    throwsCode(() => decodeStr(v.text, v.encoding), v.error);
  }
});

test('generator traces on isolated generators', () => {
  for (const t of generator.traces) {
    const o = t.options_fields;
    const g = new Generator({
      layout: t.layout,
      node: t.node,
      maxDriftMs: o.max_drift_ms,
      maxWaitMs: o.max_wait_ms,
      sequenceStart: o.sequence_start,
      rollover: o.rollover ?? undefined,
      isolated: true,
    });
    t.steps.forEach((s, i) => {
      const where = `${t.name}, step ${i} at ${s.unix_ms}`;
      if (s.error) {
        throwsCode(() => g.nextIdAt(s.unix_ms), s.error);
      } else {
        assert.equal(g.nextIdAt(s.unix_ms), BigInt(s.id), where);
      }
    });
  }
});

test('layouts: redisScript() is core\'s Lua script for every preset', () => {
  const { scripts } = vectors('redis_scripts.json');
  assert.deepEqual(scripts.map((v) => v.spec).sort(), Object.keys(Layout.presets()).sort());
  for (const v of scripts) {
    const l = new Layout(v.spec);
    const script = l.redisScript();
    assert.equal(script, v.script, v.spec);
    const names = l.fields.filter((f) => f.kind === 'node').map((f) => `<${f.name}>`).join(' ');
    assert.deepEqual(l.fields.filter((f) => f.kind === 'node').map((f) => f.name), v.node_fields);
    assert.ok(script.includes(`\n-- EVALSHA <sha1> 1 <state-key> ${names}\n`), `${v.spec}: EVALSHA line`);
    assert.ok(script.includes(`\nlocal EPOCH = ${l.epochMs}\n`), `${v.spec}: epoch`);
  }
});

test('layout.plan() is core\'s planner', () => {
  const twitter = new Layout('twitter');
  const p = twitter.plan({ hosts: 1000, processesPerHost: 50, peakPerSecond: 100000, years: 10 });
  const nodeBits = twitter.fields.filter((f) => f.kind === 'node').reduce((a, f) => a + f.bits, 0);
  assert.equal(p.nodeValues, 2 ** nodeBits);
  assert.equal(p.hostsFit, true);
  assert.equal(p.processesFit, false);
  assert.equal(p.capacityPerSecond, twitter.capacityPerTick * 1000);
  assert.equal(p.advice, 'lease per host');
  assert.throws(() => twitter.plan({ hosts: 1.5, peakPerSecond: 1, years: 1 }), (e) => e.code === 'ERR_INVALID_ARG_TYPE');
});
