// What the TypeORM and Drizzle adapters cost per row inserted, beside the plain column (a
// BIGSERIAL key), on a PostgreSQL that tests/servers starts:
//
//   node bench_adapters.mjs [rows]
//
// TypeORM: repository.save() of one entity at a time, and of all rows in one call; Drizzle:
// insert().values() of one row at a time, and of all rows in one statement. Microseconds per
// row, the best of three runs.
import { createRequire } from 'node:module';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Generator } from './index.mjs';
import { startServers } from '../tests/servers/servers.mjs';

const require = createRequire(import.meta.url);
const typeorm = require('typeorm');
const pg = require('pg');
const { drizzle } = require('drizzle-orm/node-postgres');
const { pgTable, text, bigserial } = require('drizzle-orm/pg-core');
const { SnowflakePrimaryColumn, snowflakeSubscriber } = require('./typeorm.js');
const { snowflakeKey } = require('./drizzle.js');

const rows = Number(process.argv[2] || 2000);
const ids = new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 1 } });

async function best(fn, n) {
  let min = Infinity;
  for (let i = 0; i < 3; i++) {
    const t = process.hrtime.bigint();
    await fn();
    min = Math.min(min, Number(process.hrtime.bigint() - t) / 1e3 / n);
  }
  return min;
}

const dir = mkdtempSync(path.join(tmpdir(), 'snowflake-bench-'));
const servers = await startServers('postgres', [], { dir });
const info = servers.info.postgres;
const conn = { host: info.socket_dir, port: info.port, user: info.user, database: info.database };
const results = [];
// Each pair twice, plain and snowflake alternating: the first rounds warm the server up.
const PAIRS = 2;
try {
  class SnowOrder {}
  SnowflakePrimaryColumn()(SnowOrder.prototype, 'id');
  typeorm.Column({ type: 'text' })(SnowOrder.prototype, 'item');
  typeorm.Entity('bench_snow')(SnowOrder);
  class PlainOrder {}
  typeorm.PrimaryGeneratedColumn({ type: 'bigint' })(PlainOrder.prototype, 'id');
  typeorm.Column({ type: 'text' })(PlainOrder.prototype, 'item');
  typeorm.Entity('bench_plain')(PlainOrder);
  const ds = new typeorm.DataSource({
    type: 'postgres', ...conn, username: info.user, entities: [SnowOrder, PlainOrder],
    subscribers: [snowflakeSubscriber(ids)], synchronize: true,
  });
  await ds.initialize();
  for (const [name, cls] of Array(PAIRS).fill([['plain', PlainOrder], ['snowflake', SnowOrder]]).flat()) {
    const repo = ds.getRepository(cls);
    const one = await best(async () => {
      for (let i = 0; i < rows / 5; i++) await repo.save(Object.assign(new cls(), { item: 'x' }));
    }, rows / 5);
    const many = await best(() => repo.save(Array.from({ length: rows }, () => Object.assign(new cls(), { item: 'x' }))), rows);
    results.push([`TypeORM save() one at a time, ${name}`, one], [`TypeORM save() of ${rows}, ${name}`, many]);
  }
  await ds.destroy();

  const pool = new pg.Pool(conn);
  await pool.query('CREATE TABLE d_snow (id bigint PRIMARY KEY, item text NOT NULL); CREATE TABLE d_plain (id bigserial PRIMARY KEY, item text NOT NULL)');
  const db = drizzle(pool);
  const snow = pgTable('d_snow', { id: snowflakeKey('id', ids), item: text('item').notNull() });
  const plain = pgTable('d_plain', { id: bigserial('id', { mode: 'bigint' }).primaryKey(), item: text('item').notNull() });
  for (const [name, table] of Array(PAIRS).fill([['plain', plain], ['snowflake', snow]]).flat()) {
    const one = await best(async () => {
      for (let i = 0; i < rows / 5; i++) await db.insert(table).values({ item: 'x' });
    }, rows / 5);
    const many = await best(() => db.insert(table).values(Array.from({ length: rows }, () => ({ item: 'x' }))), rows);
    results.push([`Drizzle insert one at a time, ${name}`, one], [`Drizzle insert of ${rows}, ${name}`, many]);
  }
  await pool.end();
} finally {
  await servers.stop();
  rmSync(dir, { recursive: true, force: true });
}
const version = (name) => JSON.parse(readFileSync(path.join('node_modules', name, 'package.json'), 'utf8')).version;
console.log(`node ${process.version}, typeorm ${version('typeorm')}, drizzle-orm ${version('drizzle-orm')}, pg ${version('pg')}; us per row (best of 3)`);
const bestOf = new Map();
for (const [name, us] of results) bestOf.set(name, Math.min(us, bestOf.get(name) ?? Infinity));
for (const [name, us] of bestOf) console.log(`${name.padEnd(44)} ${us.toFixed(2).padStart(8)}`);
