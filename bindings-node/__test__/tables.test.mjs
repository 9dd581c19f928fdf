// The Node binding against core's tables (tests/vectors/tables.json): every error it throws
// has the constructor and code its kind has in the table; every option of the table is
// accepted under its camelCase name, and core checks its type.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Generator, Layout, decodeStr } from '../index.mjs';
import { vectors } from './helpers.mjs';

const tables = vectors('tables.json');
const row = (kind) => tables.errors.find((e) => e.kind === kind);

function thrown(fn) {
  try {
    fn();
  } catch (e) {
    return e;
  }
  assert.fail('expected a throw');
}

test('each kind of error is thrown as its row of the table says', () => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'snowflake-tables-'));
  try {
    writeFileSync(path.join(tmp, 'bad.state'), 'x'.repeat(100));
    const cases = {
      Layout: () => new Layout('time:41,sequence:0'),
      Value: () => new Generator({ layout: 'twitter', maxWait: 0 }),
      Type: () => new Generator({ layout: 'twitter', maxWaitMs: '5' }),
      InvalidId: () => decodeStr('0Czks0tP3!X', 'base62'),
      TimeRange: () => new Generator({ layout: 'twitter', isolated: true }).nextIdAt(1000),
      StateFile: () => new Generator({ layout: 'twitter', node: { datacenter: 0, worker: 29 }, stateFile: path.join(tmp, 'bad.state') }),
      Io: () => new Generator({ layout: 'twitter', node: { datacenter: 0, worker: 28 }, stateFile: path.join(tmp, 'bad.state', 'x') }),
    };
    for (const [kind, fn] of Object.entries(cases)) {
      const e = thrown(fn);
      const r = row(kind);
      assert.equal(e.code, r.node_code, kind);
      assert.equal(e.constructor.name, r.node_class, kind);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test('every option of the table is accepted under its camelCase name', () => {
  for (const o of tables.options) {
    new Generator({ layout: 'twitter', node: { datacenter: 2, worker: 27 }, isolated: true, [o.camel]: undefined });
    if (o.type === 'integer') {
      const e = thrown(() => new Generator({ layout: 'twitter', [o.camel]: '5' }));
      assert.equal(e.code, row('Type').node_code, o.camel);
      assert.match(e.message, new RegExp(o.camel));
    }
  }
  const e = thrown(() => new Generator({ layout: 'twitter', maxWait: 0 }));
  for (const o of tables.options) assert.match(e.message, new RegExp(o.camel), 'the unknown-option message lists every option');
});
