// libsnowflake/typeorm: Snowflake IDs in TypeORM entities (a peer dependency, optional).
//
//   @Entity() class Order {
//     @SnowflakePrimaryColumn() id!: bigint       // BIGINT; the subscriber fills it on insert
//     @SnowflakeColumn({ nullable: true }) parentId!: bigint | null
//   }
//   new DataSource({ ..., entities: [Order], subscribers: [SnowflakeSubscriber] })
//
// `snowflakeTransformer` maps bigint <-> the driver's BIGINT text (pg returns BIGINT as a
// string); `SnowflakeSubscriber` gives each new row's Snowflake primary key its ID before the
// INSERT, from the process's generator (the environment's configuration) or the one passed to
// `snowflakeSubscriber(generator)`. EntitySchema users take `snowflakeColumnOptions()`.
'use strict';

const { processGenerator, toColumn, fromColumn } = require('./adapters-common.js');

/** The ValueTransformer of a Snowflake column: bigint in the entity, BIGINT text in the database. */
const snowflakeTransformer = Object.freeze({
  to: (value) => (value && typeof value === 'object' && 'value' in value ? value : toColumn(value)),
  from: (value) => fromColumn(value),
});

function typeorm() {
  // Loaded on first use: a user of the other adapters needs no TypeORM.
  return require('typeorm');
}

/** Column options of a Snowflake column (for EntitySchema, or to spread into `@Column`). */
function snowflakeColumnOptions(options = {}) {
  return { type: 'bigint', transformer: snowflakeTransformer, ...options };
}

/** `@Column` of a Snowflake ID (BIGINT, bigint in the entity). */
function SnowflakeColumn(options = {}) {
  return typeorm().Column(snowflakeColumnOptions(options));
}

/**
 * `@PrimaryColumn` of a Snowflake ID: BIGINT, bigint in the entity, filled on insert by
 * `SnowflakeSubscriber` when left undefined.
 */
function SnowflakePrimaryColumn(options = {}) {
  return typeorm().PrimaryColumn(snowflakeColumnOptions(options));
}

/** Whether `column` (TypeORM column metadata) is a Snowflake primary key. */
function isSnowflakeKey(column) {
  return column.isPrimary && column.transformer === snowflakeTransformer;
}

/** A subscriber class that fills Snowflake primary keys from `generator` (default: the process's). */
function snowflakeSubscriber(generator) {
  const subscriber = class SnowflakeSubscriber {
    beforeInsert(event) {
      const entity = event.entity;
      if (!entity || !event.metadata) return;
      for (const column of event.metadata.columns) {
        if (isSnowflakeKey(column) && column.getEntityValue(entity) === undefined) {
          column.setEntityValue(entity, (generator || processGenerator()).nextId());
        }
      }
    }
  };
  // TypeORM takes only the classes registered as @EventSubscriber().
  typeorm().EventSubscriber()(subscriber);
  return subscriber;
}

let processSubscriber = null;

module.exports = {
  snowflakeTransformer,
  snowflakeColumnOptions,
  SnowflakeColumn,
  SnowflakePrimaryColumn,
  snowflakeSubscriber,
  /** The subscriber of the process's generator (`new Generator()`, from the environment). */
  get SnowflakeSubscriber() {
    if (processSubscriber === null) processSubscriber = snowflakeSubscriber();
    return processSubscriber;
  },
};
