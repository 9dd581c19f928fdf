// Shared by check.cjs (CommonJS) and check.mjs (ES module), which tests/dist/run.sh copies into
// a fresh npm project that installed dist/node/'s tarballs: the installed libsnowflake
// decodes the shared vectors, gives their public IDs and PostgreSQL SQL, and issues IDs. Throws on any difference; returns a summary.
'use strict';

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');

module.exports = function check({ Layout, Generator, PublicIds, encode, decodeStr, VERSION }, vectorsDir, version, generatorOptions = {}) {
  const read = (name) => JSON.parse(fs.readFileSync(path.join(vectorsDir, name), 'utf8'));
  assert.equal(VERSION, version, 'the installed version');
  let checked = 0;

  for (const v of read('layouts.json').layouts) {
    const layout = new Layout(v.spec);
    assert.equal(layout.toString(), v.canonical, v.spec);
    for (const d of v.decode) {
      const parts = layout.decode(BigInt(d.id));
      assert.deepEqual(
        { unixMs: parts.unixMs, tick: parts.tick, sequence: parts.sequence, fields: parts.fields },
        { unixMs: d.unix_ms, tick: d.tick, sequence: d.sequence, fields: d.fields },
        `${v.spec} ${d.id}`,
      );
      checked++;
    }
  }

  for (const v of read('encodings.json').ids) {
    for (const [reverse, table] of [[false, v.plain], [true, v.reverse]]) {
      for (const [encoding, text] of Object.entries(table)) {
        assert.equal(encode(BigInt(v.id), encoding, { reverse }), text, `${v.id} ${encoding}`);
        assert.equal(decodeStr(text, encoding, { reverse }), BigInt(v.id), `${text} ${encoding}`);
        checked++;
      }
    }
  }

  for (const trace of read('generator.json').traces) {
    const o = trace.options_fields;
    const gen = new Generator({
      layout: trace.layout,
      node: trace.node,
      maxDriftMs: o.max_drift_ms,
      maxWaitMs: o.max_wait_ms,
      sequenceStart: o.sequence_start,
      rollover: o.rollover ?? undefined,
      isolated: true,
    });
    for (const step of trace.steps) {
      let got;
      try {
        got = String(gen.nextIdAt(step.unix_ms));
      } catch (e) {
        got = e.code;
      }
      assert.equal(got, step.id ?? step.error, `${trace.name} at ${step.unix_ms}`);
      checked++;
    }
  }

  // Public IDs (issue 14): the same texts as every language, and back.
  for (const row of read('public_ids.json').keys) {
    const ids = new PublicIds(Buffer.from(row.key_hex, 'hex'), row.encoding);
    for (const c of row.cases) {
      assert.equal(ids.encode(BigInt(c.id)), c.text, `${row.key_hex} ${c.id}`);
      assert.equal(ids.decode(c.text), BigInt(c.id), `${row.key_hex} ${c.text}`);
      checked++;
    }
  }

  // The PostgreSQL SQL (issue 14): core's text for every preset, or the refusal of a 64-bit one.
  for (const v of read('sql_scripts.json').scripts) {
    const layout = new Layout(v.spec);
    if (v.error) {
      assert.throws(() => layout.sql(v.dialect), (e) => e.code === v.error, v.spec);
    } else {
      assert.equal(layout.sql(v.dialect, v.prefix), v.sql, v.spec);
    }
    checked++;
  }

  // New IDs from the system clock: unique, increasing, of this node.
  const gen = new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 3 }, ...generatorOptions });
  const ids = [];
  for (let i = 0; i < 1000; i++) ids.push(gen.nextId());
  ids.push(...gen.nextIds(9000));
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i] > ids[i - 1], `ID ${i} does not increase`);
  const twitter = new Layout('twitter');
  for (const id of ids) assert.deepEqual(twitter.decode(id).fields, { datacenter: 1, worker: 3 });

  // The first hour (issue 29): a layout first, node values as text, decimal-string IDs, and
  // type errors that name the call and the parameter.
  const text = new Generator('twitter', { node: 'datacenter=1,worker=3' });
  const id = text.nextId();
  assert.ok(id > ids[ids.length - 1], 'one identity, one state');
  assert.deepEqual(twitter.decode(String(id)), twitter.decode(id));
  assert.equal(encode(String(id), 'base62'), encode(id, 'base62'));
  assert.equal(new Generator().layout.toString(), twitter.toString());
  assert.throws(() => twitter.decode('12x'), (e) => e.code === 'ERR_SNOWFLAKE_INVALID_ID' && /^layout\.decode\(id\): /.test(e.message));
  assert.throws(() => twitter.decode({}), (e) => e instanceof TypeError && /^layout\.decode\(id\): /.test(e.message));
  return `${checked} vectors, ${ids.length} IDs`;
};
