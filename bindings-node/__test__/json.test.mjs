// Issue 40: libsnowflake/json as a web framework meets it. parse() and stringify() agree with
// every language's JSON helpers (tests/vectors/json_ids.json, which Python's SnowflakeId reads
// too); a parse() refusal is the client's bad input (400, not 500); and the docs' Express and
// Fastify set-ups answer a bigint whole, tested with the real frameworks on a unix socket.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { stringify, parse, bigintReplacer } from '../json.mjs';
import { readFileSync } from 'node:fs';
import { vectors, throwsCode, repoRoot } from './helpers.mjs';

const require = createRequire(import.meta.url);
const cases = vectors('json_ids.json');
// Whether JSON.parse hands a reviver the source text (Node 21+): numbers above 2^53 exactly.
const HAS_SOURCE = JSON.parse('1', (k, v, context) => context?.source) === '1';

test('parse() accepts and refuses what every language does (json_ids.json)', () => {
  for (const c of cases.parse) {
    const text = `{"id": ${c.json}, "other": "9"}`;
    if (c.id !== null && (!c.exact_number || HAS_SOURCE)) {
      assert.deepEqual(parse(text, { ids: ['id'] }), { id: BigInt(c.id), other: '9' }, c.json);
      continue;
    }
    let caught;
    assert.throws(() => parse(text, { ids: ['id'] }), (e) => (caught = e) instanceof Error, c.json);
    // The client's input: a framework answers 400.
    assert.equal(caught.status, 400, `${c.json}: ${caught.message}`);
    assert.equal(caught.statusCode, 400, c.json);
    assert.ok(['ERR_SNOWFLAKE_INVALID_ID', 'ERR_SNOWFLAKE_VALUE'].includes(caught.code), `${c.json}: ${caught.code}`);
  }
});

test('parse() says what is wrong with each refused value', () => {
  const cases = [
    ['true', 'parse(): field `id` holds true, not a Snowflake ID (its decimal digits as a string, or a number)'],
    ['null', 'parse(): field `id` holds null, not a Snowflake ID (its decimal digits as a string, or a number)'],
    ['[1]', 'parse(): field `id` holds an array, not a Snowflake ID (its decimal digits as a string, or a number)'],
    ['{}', 'parse(): field `id` holds an object, not a Snowflake ID (its decimal digits as a string, or a number)'],
    ['-5', 'parse(): field `id` holds -5: a Snowflake ID is a whole number from 0 to 2^64 - 1'],
    ['1.5', 'parse(): field `id` holds 1.5: a Snowflake ID is a whole number from 0 to 2^64 - 1'],
  ];
  for (const [json, message] of cases) {
    const e = throwsCode(() => parse(`{"id":${json}}`, { ids: ['id'] }), 'ERR_SNOWFLAKE_INVALID_ID');
    assert.equal(e.message, message);
  }
});

test('stringify() and bigintReplacer write IDs, and refuse bigints that are none (json_ids.json)', () => {
  for (const c of cases.stringify) {
    const id = BigInt(c.id);
    if (c.json !== null) {
      assert.equal(stringify({ id }), `{"id":${c.json}}`);
      assert.equal(JSON.stringify({ id }, bigintReplacer), `{"id":${c.json}}`);
    } else {
      throwsCode(() => stringify({ id }), 'ERR_SNOWFLAKE_VALUE', RangeError);
      throwsCode(() => JSON.stringify({ id }, bigintReplacer), 'ERR_SNOWFLAKE_VALUE', RangeError);
    }
  }
  const e = throwsCode(() => stringify({ id: -1n }), 'ERR_SNOWFLAKE_VALUE', RangeError);
  assert.equal(e.message, 'stringify(): -1n is not a Snowflake ID (a whole number from 0 to 2^64 - 1)');
});

/** One HTTP request over the unix socket `socketPath`: [status, body]. */
function request(socketPath, method, url, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ socketPath, method, path: url, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve([res.statusCode, text]));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const ID = 175928847299117063n; // above 2^53: a JavaScript number would round it

/** The docs' requests against a server listening on `socket`. */
async function exercise(socket) {
  assert.deepEqual(await request(socket, 'GET', '/order'), [200, '{"id":"175928847299117063","item":"tea"}']);
  assert.deepEqual(await request(socket, 'POST', '/order', '{"id":"175928847299117063"}'), [200, '{"id":"175928847299117063","seen":true}']);
  // The framework's own error handler: 400 from the error's status, not a 500.
  const [status, text] = await request(socket, 'POST', '/order', '{"id":true}');
  assert.equal(status, 400, text);
  assert.match(text, /holds true, not a Snowflake ID/);
}

test('Express: app.set("json replacer", bigintReplacer) and parse() as in docs/integrations-node.md', async () => {
  const express = require('express');
  const dir = mkdtempSync(path.join(tmpdir(), 'sf-express-'));
  const socket = path.join(dir, 'http.sock');
  const app = express();
  app.set('json replacer', bigintReplacer);
  app.use(express.text({ type: 'application/json' }));
  app.get('/order', (req, res) => res.json({ id: ID, item: 'tea' }));
  app.post('/order', (req, res) => {
    const { id } = parse(req.body, { ids: ['id'] }); // a bad ID: Express answers 400
    res.json({ id, seen: id === ID });
  });
  const server = await new Promise((resolve) => {
    const s = app.listen(socket, () => resolve(s));
  });
  try {
    await exercise(socket);
  } finally {
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  }
});

test('Fastify: a reply serializer and a content-type parser as in docs/integrations-node.md', async () => {
  const Fastify = require('fastify');
  const dir = mkdtempSync(path.join(tmpdir(), 'sf-fastify-'));
  const socket = path.join(dir, 'http.sock');
  const app = Fastify();
  app.setReplySerializer((payload) => stringify(payload));
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    try {
      done(null, parse(body, { ids: ['id'] }));
    } catch (e) {
      done(e); // statusCode 400: Fastify answers 400 with the message
    }
  });
  app.get('/order', async () => ({ id: ID, item: 'tea' }));
  app.post('/order', async (req) => ({ id: req.body.id, seen: req.body.id === ID }));
  await app.listen({ path: socket });
  try {
    await exercise(socket);
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('docs/integrations-node.md shows the set-ups these tests run', () => {
  const doc = readFileSync(path.join(repoRoot, 'docs', 'integrations-node.md'), 'utf8');
  for (const line of [
    "app.set('json replacer', bigintReplacer);",
    "app.use(express.text({ type: 'application/json' }));",
    "  const { id } = parse(req.body, { ids: ['id'] }); // a bad ID: Express answers 400",
    'app.setReplySerializer((payload) => stringify(payload));',
    "app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {",
    "    done(null, parse(body, { ids: ['id'] }));",
  ]) {
    assert.ok(doc.includes(`\n${line}\n`), `docs/integrations-node.md lacks: ${line}`);
  }
});
