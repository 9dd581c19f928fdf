// What the ORM adapters share: the process's generator from the environment, and the
// conversions of a BIGINT column's values.
'use strict';

const { Generator, decodeStr } = require('./index.js');

let defaultGenerator = null;

/**
 * The process's generator made from the environment (`new Generator()`: SNOWFLAKE_LAYOUT,
 * SNOWFLAKE_NODE, SNOWFLAKE_OPTIONS, then the defaults), made on first use: in each worker of
 * a cluster, after it starts.
 */
function processGenerator() {
  if (defaultGenerator === null) defaultGenerator = new Generator();
  return defaultGenerator;
}

const BIGINT_MAX = (1n << 63n) - 1n;

function valueError(message) {
  const e = new RangeError(message);
  e.code = 'ERR_SNOWFLAKE_VALUE';
  return e;
}

/** An ID (bigint, safe-integer number, or decimal string) as the text a BIGINT column takes. */
function toColumn(value) {
  if (value === null || value === undefined) return value;
  let id;
  if (typeof value === 'bigint') id = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) id = BigInt(value);
  else if (typeof value === 'string') id = decodeStr(value, 'decimal');
  else {
    const e = new TypeError(`a Snowflake ID column takes a bigint, a safe integer or a decimal string, not ${typeof value}`);
    e.code = 'ERR_INVALID_ARG_TYPE';
    throw e;
  }
  if (id < 0n || id > BIGINT_MAX) {
    throw valueError(`id = ${id} does not fit a BIGINT column (0 to 2^63 - 1): a 64-bit layout's IDs from 2^63 on need a 63-bit layout (twitter, js53, ...)`);
  }
  return id.toString();
}

/** A BIGINT column's value (the driver's string or number) as a bigint. */
function fromColumn(value) {
  if (value === null || value === undefined) return value;
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw valueError(`the driver returned ${value}, a rounded BIGINT: configure it to return BIGINT as strings`);
    return BigInt(value);
  }
  return decodeStr(String(value), 'decimal');
}

module.exports = { processGenerator, toColumn, fromColumn };
