// libsnowflake/drizzle: a Drizzle ORM custom type for Snowflake IDs in PostgreSQL (drizzle-orm
// is a peer dependency, optional).
//
//   import { pgTable, text } from 'drizzle-orm/pg-core';
//   import { snowflakeId, snowflakeKey } from 'libsnowflake/drizzle';
//   const orders = pgTable('orders', {
//     id: snowflakeKey('id'),            // BIGINT PRIMARY KEY, a new ID for each insert
//     parentId: snowflakeId('parent_id'),
//     item: text('item'),
//   });
//
// The column is `bigint` in TypeScript and BIGINT in PostgreSQL (pg returns it as a string,
// read back here into a bigint); `snowflakeKey(name, generator?)` is the primary key with
// `$defaultFn(() => generator.nextId())`, the process's generator (the environment's
// configuration) when none is given.
'use strict';

const { customType } = require('drizzle-orm/pg-core');
const { processGenerator, toColumn, fromColumn } = require('./adapters-common.js');

/** The custom type: bigint <-> BIGINT. */
const snowflakeId = customType({
  dataType: () => 'bigint',
  toDriver: (value) => toColumn(value),
  fromDriver: (value) => fromColumn(value),
});

/** A BIGINT primary key whose value, for each row inserted, is a new ID of `generator`. */
function snowflakeKey(name, generator) {
  return snowflakeId(name)
    .primaryKey()
    .$defaultFn(() => (generator || processGenerator()).nextId());
}

module.exports = { snowflakeId, snowflakeKey };
