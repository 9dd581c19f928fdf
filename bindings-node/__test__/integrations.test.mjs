// Issue 28 in Node: configuration from the environment (`new Generator()`), stats().sources,
// nextIdNumber() and the js53 preset, the UUIDv7 view, libsnowflake/json, and the TypeORM and
// Drizzle adapters tested with typeorm, drizzle-orm and pg against a real PostgreSQL started by
// tests/servers.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { Generator, Layout } from '../index.mjs';
import { stringify, parse, bigintReplacer, HAS_RAW_JSON } from '../json.mjs';
import { vectors, throwsCode, pkgDir, repoRoot, assertIncreasing } from './helpers.mjs';
import { startServers } from '../../tests/servers/servers.mjs';

const require = createRequire(import.meta.url);
const twitter = new Layout('twitter');
const VARS = ['SNOWFLAKE_LAYOUT', 'SNOWFLAKE_NODE', 'SNOWFLAKE_OPTIONS', 'SNOWFLAKE_REQUIRE_NODE', 'SNOWFLAKE_NOD'];

function withEnv(vars, fn) {
  const saved = Object.fromEntries(VARS.map((k) => [k, process.env[k]]));
  for (const k of VARS) delete process.env[k];
  Object.assign(process.env, vars);
  try {
    return fn();
  } finally {
    for (const k of VARS) {
      if (saved[k] === undefined) delete process.env[k];
      else process.env[k] = saved[k];
    }
  }
}

test('new Generator() takes what the code leaves out from the environment', () => {
  withEnv(
    { SNOWFLAKE_LAYOUT: 'discord', SNOWFLAKE_NODE: 'worker=21,process=7', SNOWFLAKE_OPTIONS: 'max_wait_ms=0;sequence_start=spread:4' },
    () => {
      const g = new Generator();
      assert.equal(g.layout.toString(), new Layout('discord').toString());
      assert.deepEqual(new Layout('discord').decode(g.nextId()).fields, { worker: 21, process: 7 });
      const s = g.stats().sources;
      assert.equal(s.layout, 'SNOWFLAKE_LAYOUT');
      assert.equal(s.node, 'SNOWFLAKE_NODE');
      assert.equal(s.maxWaitMs, 'SNOWFLAKE_OPTIONS');
      assert.equal(s.sequenceStart, 'SNOWFLAKE_OPTIONS');
      assert.equal(s.maxDriftMs, 'default');
      // The code's values win, key by key; the environment's node values are read against
      // the code's layout.
      process.env.SNOWFLAKE_NODE = 'datacenter=3,worker=4';
      const h = new Generator({ layout: 'twitter', maxWaitMs: 5 });
      assert.deepEqual(h.node, { datacenter: 3, worker: 4 });
      const t = h.stats().sources;
      assert.deepEqual([t.layout, t.node, t.maxWaitMs, t.sequenceStart], ['code', 'SNOWFLAKE_NODE', 'code', 'SNOWFLAKE_OPTIONS']);
    },
  );
  withEnv({}, () => {
    const g = new Generator({ isolated: true });
    assert.deepEqual(g.node, { datacenter: 0, worker: 0 });
    const set = Object.entries(g.stats().sources).filter(([, v]) => v !== 'default');
    assert.deepEqual(set, [['isolated', 'code']]);
  });
});

test("the layout as the first argument and text node values meet the environment (issues 28 and 29)", () => {
  withEnv({ SNOWFLAKE_NODE: 'worker=9,process=2', SNOWFLAKE_OPTIONS: 'max_wait_ms=0;max_drift_ms=7;sequence_start=spread:4' }, () => {
    // The first argument is the code's layout; SNOWFLAKE_NODE is read against it.
    const g = new Generator('discord');
    assert.deepEqual(new Layout('discord').decode(g.nextId()).fields, { worker: 9, process: 2 });
    const s = g.stats().sources;
    assert.deepEqual([s.layout, s.node, s.maxWaitMs, s.sequenceStart], ['code', 'SNOWFLAKE_NODE', 'SNOWFLAKE_OPTIONS', 'SNOWFLAKE_OPTIONS']);
    // The code's text node values and its options win over the environment's, key by key.
    const h = new Generator('discord', { node: 'worker=10,process=3', maxDriftMs: 3 });
    assert.deepEqual(h.node, { worker: 10, process: 3 });
    const t = h.stats().sources;
    assert.deepEqual([t.node, t.maxDriftMs, t.maxWaitMs], ['code', 'code', 'SNOWFLAKE_OPTIONS']);
    // Nothing in the first argument: the environment's layout, else twitter.
    process.env.SNOWFLAKE_LAYOUT = 'discord';
    assert.equal(new Generator({ maxDriftMs: 3, isolated: true }).layout.toString(), new Layout('discord').toString());
    // A layout given twice by the code is still refused, the environment notwithstanding.
    throwsCode(() => new Generator('discord', { layout: 'twitter' }), 'ERR_SNOWFLAKE_VALUE');
    // Type errors still name the call and the parameter before the environment is read.
    const e = throwsCode(() => new Generator('discord', { node: 7 }), 'ERR_INVALID_ARG_TYPE', TypeError);
    assert.match(e.message, /^new Generator\(layout, options\.node\)/);
  });
  withEnv({}, () => {
    assert.equal(new Generator({ isolated: true }).layout.toString(), twitter.toString());
  });
});

// Issue 40: the environment's rules are core's, so each message is the same in every front end.
test('issue 40: the environment refuses what would go wrong silently, in the same words', () => {
  const cases = [
    [{ SNOWFLAKE_NODE: 'datacenter=1,worker=0', SNOWFLAKE_OPTIONS: 'lease=local' },
      'environment variable SNOWFLAKE_NODE="datacenter=1,worker=0": `worker`: this field is set by the generator (the lease or the rollover): give it no node value'],
    [{ SNOWFLAKE_OPTIONS: 'lease=redis://app:pa;ss@cache:6379/0;max_wait_ms=0' },
      'environment variable SNOWFLAKE_OPTIONS="lease=redis://***;***;max_wait_ms=0": `lease`: the lease address holds a `;` (in its password?), which separates options: percent-encode it as %3B, or give the password with lease_password_file='],
    [{ SNOWFLAKE_LAYOUT: 'twitter;lease=redis://app:s3cret@cache/0' },
      'environment variable SNOWFLAKE_LAYOUT="twitter;lease=***": `lease`: is not part of a layout (a layout takes `epoch=` and `tick=`): options go in SNOWFLAKE_OPTIONS'],
    [{ SNOWFLAKE_OPTIONS: 'isolated=true' },
      "environment variable SNOWFLAKE_OPTIONS=\"isolated=true\": `isolated`: isolated takes a generator outside the host's record (for tests and replays with a clock of their own): give it in the code, never from the environment"],
    [{ SNOWFLAKE_REQUIRE_NODE: '1' },
      'environment variable SNOWFLAKE_REQUIRE_NODE="1": `SNOWFLAKE_NODE`: no node values are given, in the code or in SNOWFLAKE_NODE, and node 0 is refused: set SNOWFLAKE_NODE (`datacenter=1,worker=7`) or a lease'],
    [{ SNOWFLAKE_NODE: 'datacenter=1,wroker=7' },
      'environment variable SNOWFLAKE_NODE="datacenter=1,wroker=7": the layout has no field `wroker`: did you mean `worker`? (its node fields: datacenter, worker)'],
  ];
  for (const [vars, message] of cases) {
    withEnv(vars, () => {
      const e = throwsCode(() => new Generator(), 'ERR_SNOWFLAKE_VALUE');
      assert.equal(e.message, message);
    });
  }
  // A lease and the other node values, both from the environment.
  withEnv({ SNOWFLAKE_NODE: 'datacenter=1', SNOWFLAKE_OPTIONS: 'lease=local;max_wait_ms=0' }, () => {
    const g = new Generator();
    assert.equal(twitter.decode(g.nextId()).fields.datacenter, 1);
    assert.equal(g.stats().sources.node, 'SNOWFLAKE_NODE');
  });
  // Empty node values from the code give none: the environment's apply.
  for (const empty of [{}, '']) {
    withEnv({ SNOWFLAKE_NODE: 'datacenter=2,worker=9' }, () => {
      const g = new Generator({ layout: 'twitter', node: empty, maxWaitMs: 0 });
      assert.deepEqual(g.node, { datacenter: 2, worker: 9 });
      assert.equal(g.stats().sources.node, 'SNOWFLAKE_NODE');
    });
  }
});

test('issue 40: a misspelt variable and a variable the code overrides are warned about on stderr, once', () => {
  const script = `
    const { Generator } = require(${JSON.stringify(path.join(pkgDir, 'index.js'))});
    for (let i = 0; i < 3; i++) new Generator({ layout: 'twitter', node: { datacenter: 5, worker: 6 }, maxWaitMs: 0 });
  `;
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !VARS.includes(k)));
  Object.assign(env, { SNOWFLAKE_NOD: 'datacenter=1,worker=7', SNOWFLAKE_NODE: 'datacenter=3,worker=4', SNOWFLAKE_USER: 'warehouse-user' });
  const r = spawnSync(process.execPath, ['-e', script], { env, encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(
    r.stderr,
    'libsnowflake: warning: environment variable SNOWFLAKE_NOD is not one libsnowflake reads (it is ignored): did you mean SNOWFLAKE_NODE?\n' +
      'libsnowflake: warning: environment variable SNOWFLAKE_NODE="datacenter=3,worker=4" is set, but the code gives node values (datacenter=5,worker=6), which win: leave node values to the environment, or unset SNOWFLAKE_NODE\n',
  );
});

test('a malformed variable throws, naming the variable and its value', () => {
  const cases = [
    [{ SNOWFLAKE_LAYOUT: 'twiter' }, 'ERR_SNOWFLAKE_LAYOUT', 'environment variable SNOWFLAKE_LAYOUT="twiter": invalid layout'],
    [{ SNOWFLAKE_NODE: 'datacenter=1' }, 'ERR_SNOWFLAKE_VALUE', 'SNOWFLAKE_NODE="datacenter=1": the node values give no value for `worker`'],
    [{ SNOWFLAKE_NODE: '' }, 'ERR_SNOWFLAKE_VALUE', 'set but empty'],
    [{ SNOWFLAKE_OPTIONS: 'maxWaitMs=0' }, 'ERR_SNOWFLAKE_VALUE', 'SNOWFLAKE_OPTIONS="maxWaitMs=0": unknown option `maxWaitMs`'],
    [{ SNOWFLAKE_OPTIONS: 'lease=redis://app:s3cret@cache/0;lease_ttl_ms=1' }, 'ERR_SNOWFLAKE_VALUE', 'redis://app:***@cache/0'],
    [{ SNOWFLAKE_OPTIONS: 'max_wait_ms=0,max_drift_ms=5' }, 'ERR_SNOWFLAKE_VALUE', 'options are separated by `;`, not `,`'],
    [{ SNOWFLAKE_OPTIONS: 'run_lock=true' }, 'ERR_SNOWFLAKE_VALUE', 'SNOWFLAKE_OPTIONS="run_lock=true": `run_lock`: run_lock was retired'],
  ];
  for (const [vars, code, message] of cases) {
    withEnv(vars, () => {
      const e = throwsCode(() => new Generator(), code);
      assert.ok(e.message.includes(message), e.message);
      assert.ok(!e.message.includes('s3cret'), e.message);
    });
  }
});

test('js53: nextIdNumber() hands out safe integers, and is refused on wider layouts', () => {
  const js53 = new Layout('js53');
  assert.equal(js53.totalBits, 53);
  const g = new Generator({ layout: 'js53', node: { worker: 63 }, isolated: true });
  const ids = Array.from({ length: 2000 }, () => g.nextIdNumber());
  assert.ok(ids.every((id) => typeof id === 'number' && Number.isSafeInteger(id)));
  assertIncreasing(ids);
  assert.equal(js53.decode(ids[0]).fields.worker, 63);
  const wide = new Generator({ layout: 'twitter', node: { datacenter: 0, worker: 1 }, isolated: true });
  const e = throwsCode(() => wide.nextIdNumber(), 'ERR_SNOWFLAKE_VALUE', RangeError);
  assert.match(e.message, /up to 63 bits.*53 bits.*js53/);
});

test('the UUIDv7 view: the shared vectors, both ways, and the refusals', () => {
  const v = vectors('uuid.json');
  let n = 0;
  for (const row of v.layouts) {
    const layout = new Layout(row.spec);
    let previous = '';
    for (const c of row.cases) {
      const u = layout.toUuid(BigInt(c.id));
      assert.equal(u, c.uuid);
      assert.equal(parseInt(u.replaceAll('-', '').slice(0, 12), 16), c.unix_ms);
      assert.equal(layout.fromUuid(c.uuid.toUpperCase()), BigInt(c.id));
      assert.ok(u > previous);
      previous = u;
      n++;
    }
  }
  assert.ok(n > 50);
  for (const c of v.to_uuid_invalid) throwsCode(() => new Layout(c.spec).toUuid(BigInt(c.id)), c.error);
  for (const c of v.from_uuid_invalid) {
    const e = throwsCode(() => new Layout(c.spec).fromUuid(c.uuid), c.error);
    assert.ok(e.message.includes(c.message_contains), e.message);
  }
});

test('libsnowflake/json: bigints written whole, ID fields read back exactly', () => {
  const id = 2125646515509792768n;
  const text = stringify({ id, n: 1, list: [id] });
  assert.equal(text, '{"id":"2125646515509792768","n":1,"list":["2125646515509792768"]}');
  assert.equal(JSON.stringify({ id }, bigintReplacer), '{"id":"2125646515509792768"}');
  assert.deepEqual(parse(text, { ids: ['id'] }), { id, n: 1, list: ['2125646515509792768'] });
  assert.deepEqual(parse('{"id":"7","other":"8"}', { ids: (k) => k === 'id' }), { id: 7n, other: '8' });
  assert.deepEqual(parse('{"id":12}', { ids: ['id'] }), { id: 12n });
  throwsCode(() => parse('{"id":"12a"}', { ids: ['id'] }), 'ERR_SNOWFLAKE_INVALID_ID');
  throwsCode(() => parse('{"id":"18446744073709551616"}', { ids: ['id'] }), 'ERR_SNOWFLAKE_INVALID_ID');
  throwsCode(() => stringify({ id }, { ids: 'hex' }), 'ERR_INVALID_ARG_TYPE', TypeError);
  if (!HAS_RAW_JSON) {
    // Node 20: a number beyond 2^53 was rounded by JSON.parse: refused, never a wrong ID.
    throwsCode(() => parse('{"id":2125646515509792768}', { ids: ['id'] }), 'ERR_SNOWFLAKE_VALUE', RangeError);
    throwsCode(() => stringify({ id }, { ids: 'number' }), 'ERR_SNOWFLAKE_VALUE', RangeError);
  }
  // Where Node has JSON.rawJSON and the reviver's source text (21+, or 20 with the flag): exact numbers.
  const script = `
    const { stringify, parse, HAS_RAW_JSON } = require(${JSON.stringify(path.join(pkgDir, 'json.js'))});
    if (!HAS_RAW_JSON) process.exit(3);
    const out = stringify({ id: 2125646515509792768n }, { ids: 'number' });
    const back = parse(out, { ids: ['id'] });
    console.log(out, String(back.id), typeof back.id);`;
  const r = spawnSync(process.execPath, ['--harmony-json-parse-with-source', '-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), '{"id":2125646515509792768} 2125646515509792768 bigint');
});

// ---- TypeORM and Drizzle against a real PostgreSQL --------------------------------------------------

let servers;
let pgInfo;
let dir;
before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'snowflake-orm-'));
  servers = await startServers('postgres', [], { dir });
  pgInfo = servers.info.postgres;
});
after(async () => {
  if (pgInfo) await sessionsClosed();
  await servers?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function pgConfig() {
  return { host: pgInfo.socket_dir, port: pgInfo.port, user: pgInfo.user, database: pgInfo.database };
}

// Waits until the tests' sessions have ended. pg's `Pool.end()` (and TypeORM's `destroy()`,
// which calls it) returns before its clients' connections close; a server stopped meanwhile
// ends them with "terminating connection due to administrator command", an error event that
// nothing listens to any more, and the test that opened them fails (CI's load found it).
async function sessionsClosed() {
  const pg = require('pg');
  const client = new pg.Client(pgConfig());
  await client.connect();
  try {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { rows } = await client.query(
        "SELECT count(*)::int AS n FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
      );
      if (rows[0].n === 0) return;
      assert.ok(Date.now() < deadline, `${rows[0].n} session(s) of the tests still open after a minute: one was never closed`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await client.end();
  }
}

test('TypeORM: decorated entity and EntitySchema, keys filled by the subscriber, bigints read back', async () => {
  const typeorm = require('typeorm');
  const { SnowflakePrimaryColumn, SnowflakeColumn, snowflakeSubscriber, snowflakeColumnOptions, SnowflakeSubscriber } =
    require('../typeorm.js');
  const ids = new Generator({ layout: 'twitter', node: { datacenter: 5, worker: 6 } });
  // Legacy decorators, applied as TypeScript's `@Entity() class Order { @SnowflakePrimaryColumn() id }` does.
  class Order {}
  SnowflakePrimaryColumn()(Order.prototype, 'id');
  SnowflakeColumn({ nullable: true })(Order.prototype, 'parentId');
  typeorm.Column({ type: 'text' })(Order.prototype, 'item');
  typeorm.Entity('typeorm_orders')(Order);
  const Event = new typeorm.EntitySchema({
    name: 'Event',
    tableName: 'typeorm_events',
    columns: { id: snowflakeColumnOptions({ primary: true }), note: { type: 'text' } },
  });
  const ds = new typeorm.DataSource({
    type: 'postgres',
    ...pgConfig(),
    username: pgInfo.user, // TypeORM's name for it
    entities: [Order, Event],
    subscribers: [snowflakeSubscriber(ids)],
    synchronize: true,
    logging: false,
  });
  await ds.initialize();
  try {
    const repo = ds.getRepository(Order);
    const start = Date.now();
    const saved = [];
    for (let i = 0; i < 50; i++) saved.push(await repo.save(Object.assign(new Order(), { item: `o${i}` })));
    const keys = saved.map((o) => o.id);
    assert.ok(keys.every((k) => typeof k === 'bigint'));
    assertIncreasing(keys);
    assert.deepEqual(twitter.decode(keys[0]).fields, { datacenter: 5, worker: 6 });
    const child = await repo.save(Object.assign(new Order(), { item: 'child', parentId: keys[0] }));
    const found = await repo.findOneByOrFail({ id: child.id });
    assert.equal(found.id, child.id);
    assert.equal(found.parentId, keys[0]);
    const all = await repo.find({ where: { id: typeorm.Between(twitter.minId(start - 1), twitter.maxId(Date.now())) }, order: { id: 'ASC' } });
    assert.deepEqual(all.map((o) => o.id), [...keys, child.id]);
    // insert() (the query builder path) is filled too; EntitySchema columns the same.
    await ds.getRepository('Event').insert([{ note: 'a' }, { note: 'b' }]);
    const events = await ds.getRepository('Event').find({ order: { id: 'ASC' } });
    assert.equal(events.length, 2);
    assert.ok(events.every((e) => typeof e.id === 'bigint' && twitter.decode(e.id).fields.worker === 6));
    const [{ data_type: type }] = await ds.query(
      "SELECT data_type FROM information_schema.columns WHERE table_name = 'typeorm_orders' AND column_name = 'id'",
    );
    assert.equal(type, 'bigint');
    // An ID past BIGINT is refused before it reaches the database.
    await assert.rejects(repo.save(Object.assign(new Order(), { id: 1n << 63n, item: 'x' })), (e) => e.code === 'ERR_SNOWFLAKE_VALUE');
    assert.equal(typeof SnowflakeSubscriber, 'function');
  } finally {
    await ds.destroy();
  }
});

test('Drizzle: the custom type and a generated key, with pg', async () => {
  const pg = require('pg');
  const { drizzle } = require('drizzle-orm/node-postgres');
  const { pgTable, text } = require('drizzle-orm/pg-core');
  const { eq, between, asc } = require('drizzle-orm');
  const { snowflakeId, snowflakeKey } = require('../drizzle.js');
  const ids = new Generator({ layout: 'twitter', node: { datacenter: 5, worker: 7 } });
  const orders = pgTable('drizzle_orders', {
    id: snowflakeKey('id', ids),
    parentId: snowflakeId('parent_id'),
    item: text('item').notNull(),
  });
  const pool = new pg.Pool(pgConfig());
  try {
    await pool.query('CREATE TABLE drizzle_orders (id bigint PRIMARY KEY, parent_id bigint, item text NOT NULL)');
    const db = drizzle(pool);
    const start = Date.now();
    const rows = await db.insert(orders).values(Array.from({ length: 100 }, (_, i) => ({ item: `o${i}` }))).returning();
    const keys = rows.map((r) => r.id);
    assert.ok(keys.every((k) => typeof k === 'bigint'));
    assertIncreasing(keys);
    assert.deepEqual(twitter.decode(keys[0]).fields, { datacenter: 5, worker: 7 });
    await db.insert(orders).values({ item: 'child', parentId: keys[3] });
    const [child] = await db.select().from(orders).where(eq(orders.parentId, keys[3]));
    assert.equal(child.item, 'child');
    const inRange = await db.select({ id: orders.id }).from(orders)
      .where(between(orders.id, twitter.minId(start - 1), twitter.maxId(Date.now()))).orderBy(asc(orders.id));
    assert.equal(inRange.length, 101);
    assert.deepEqual(inRange.slice(0, 100).map((r) => r.id), keys);
    await assert.rejects(db.insert(orders).values({ id: 1n << 63n, item: 'x' }), (e) => e.code === 'ERR_SNOWFLAKE_VALUE');
  } finally {
    await pool.end();
  }
});

test('the adapters come with the package: exports map and types', () => {
  const pkg = require('../package.json');
  for (const m of ['json', 'typeorm', 'drizzle']) {
    assert.ok(pkg.exports[`./${m}`], m);
    for (const f of [`${m}.js`, `${m}.mjs`, `${m}.d.ts`]) assert.ok(pkg.files.includes(f), f);
  }
  assert.equal(pkg.peerDependenciesMeta.typeorm.optional, true);
  assert.equal(pkg.peerDependenciesMeta['drizzle-orm'].optional, true);
  assert.ok(path.isAbsolute(repoRoot));
});
