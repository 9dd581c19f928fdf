// Issue 14: PublicIds against the shared vectors (a pure-Python Speck64/128 model wrote them),
// and Layout.sql() against core's text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Generator, Layout, PublicIds } from '../index.mjs';
import { vectors, throwsCode } from './helpers.mjs';

const pub = vectors('public_ids.json');
const sql = vectors('sql_scripts.json');

const key = (v) => Uint8Array.from(Buffer.from(v.key_hex, 'hex'));

test('public IDs: the Speck paper vector and every key of public_ids.json', () => {
  assert.equal(pub.cipher, 'Speck64/128');
  const ka = pub.known_answer;
  assert.equal(new PublicIds(key(ka), ka.encoding).encode(BigInt(ka.id)), ka.text);
  let n = 0;
  for (const row of pub.keys) {
    const p = new PublicIds(key(row), row.encoding);
    assert.equal(p.encoding, row.encoding);
    for (const c of row.cases) {
      assert.equal(p.encode(BigInt(c.id)), c.text, `${row.encoding} ${c.id}`);
      assert.equal(p.decode(c.text), BigInt(c.id));
      n++;
    }
  }
  assert.ok(n >= 50);
  // The default encoding is base62; a Buffer is a Uint8Array.
  const row = pub.keys[0];
  assert.equal(new PublicIds(Buffer.from(row.key_hex, 'hex')).encode(BigInt(row.cases[3].id)), row.cases[3].text);
});

test('public IDs: bad keys, encodings and texts are typed errors', () => {
  for (const bad of [...pub.invalid_keys, ...pub.invalid_encodings]) {
    throwsCode(() => new PublicIds(key(bad), bad.encoding), bad.error);
  }
  const e = throwsCode(() => new PublicIds(Buffer.from('SECRET-but-17-byt')), 'ERR_SNOWFLAKE_VALUE');
  assert.ok(e.message.includes('key of 17 bytes') && !e.message.includes('SECRET'), e.message);
  for (const bad of pub.invalid_texts) {
    throwsCode(() => new PublicIds(key(bad), bad.encoding).decode(bad.text), bad.error);
  }
  throwsCode(() => new PublicIds('0123456789abcdef'), 'ERR_INVALID_ARG_TYPE', TypeError);
  throwsCode(() => new PublicIds(new Uint16Array(8)), 'ERR_INVALID_ARG_TYPE', TypeError);
  const p = new PublicIds(randomBytes(16));
  throwsCode(() => p.encode(-1n), 'ERR_SNOWFLAKE_INVALID_ID');
  throwsCode(() => p.decode(5), 'ERR_INVALID_ARG_TYPE', TypeError);
});

test('public IDs: consecutive IDs give unordered texts without shared prefixes', () => {
  const g = new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 3 }, isolated: true, maxWaitMs: 0 });
  const ids = Array.from({ length: 2000 }, () => g.nextIdAt(1_700_000_000_000));
  const p = new PublicIds(randomBytes(16));
  const texts = ids.map((id) => p.encode(id));
  assert.equal(new Set(texts).size, texts.length);
  let rises = 0;
  let shared2 = 0;
  for (let i = 1; i < texts.length; i++) {
    if (texts[i - 1] < texts[i]) rises++;
    if (texts[i - 1].slice(0, 2) === texts[i].slice(0, 2)) shared2++;
  }
  assert.ok(rises > 800 && rises < 1200, `${rises} rises of 1999 (a sorted run has 1999)`);
  assert.ok(shared2 <= 10, `${shared2} neighbours share two characters (about 1.5 expected)`);
  assert.deepEqual(texts.map((t) => p.decode(t)), ids);
  const other = new PublicIds(randomBytes(16));
  assert.ok(ids.every((id, i) => other.encode(id) !== texts[i]));
});

test('sql(): core\'s text for every preset, 64-bit layouts refused', () => {
  assert.equal(sql.scripts.length, Object.keys(Layout.presets()).length);
  for (const v of sql.scripts) {
    const l = new Layout(v.spec);
    if (v.error) {
      const e = throwsCode(() => l.sql('postgres'), v.error);
      assert.ok(e.message.includes('64-bit layout'), e.message);
    } else {
      assert.equal(l.sql('postgres'), v.sql, v.spec);
      assert.equal(l.sql(v.dialect, v.prefix), v.sql, v.spec);
    }
  }
  throwsCode(() => new Layout('twitter').sql('mysql'), 'ERR_SNOWFLAKE_VALUE');
  throwsCode(() => new Layout('twitter').sql('postgres', 'Bad Prefix'), 'ERR_SNOWFLAKE_VALUE');
});
