// libsnowflake/json: JSON that keeps 64-bit IDs whole.
//
// `JSON.stringify` throws on a bigint, and `JSON.parse` turns a number above 2^53 into the
// nearest double, silently (prisma/orm#5229). These helpers write bigints as decimal strings
// (what every JavaScript client reads without loss) or, with `{ ids: 'number' }` where Node
// has `JSON.rawJSON` (Node 21+), as exact JSON numbers; and read the fields you name back into
// bigints, from strings, or from numbers through the source text where Node offers it.
'use strict';

const { decodeStr } = require('./index.js');

const HAS_RAW_JSON = typeof JSON.rawJSON === 'function';

const MAX_ID = (1n << 64n) - 1n;

// Each code comes with the one class core's table gives it (as every error of the binding).
function idError(message, code = 'ERR_SNOWFLAKE_VALUE') {
  const Class = { ERR_SNOWFLAKE_VALUE: RangeError, ERR_INVALID_ARG_TYPE: TypeError }[code] || Error;
  const e = new Class(message);
  e.code = code;
  return e;
}

// A parse() refusal is the client's bad input: `status`/`statusCode` 400 make Express's and
// Fastify's error handlers answer 400 (not 500), and `expose` lets them show the message,
// which quotes only the client's own (cut) input.
function clientError(message, code = 'ERR_SNOWFLAKE_INVALID_ID') {
  const e = idError(message, code);
  e.status = 400;
  e.statusCode = 400;
  e.expose = true;
  return e;
}

// stringify() writes only what is an ID: a bigint from 0 to 2^64 - 1.
function idText(v, where) {
  if (v < 0n || v > MAX_ID) {
    const shown = v.toString();
    throw idError(`${where}: ${shown.length > 40 ? `${shown.slice(0, 40)}…` : shown}n is not a Snowflake ID (a whole number from 0 to 2^64 - 1)`);
  }
  return v.toString();
}

/**
 * JSON text of `value`, with every bigint written as a decimal string (`ids: 'string'`, the
 * default) or as an exact JSON number (`ids: 'number'`: needs `JSON.rawJSON`, Node 21+).
 * `space` as in `JSON.stringify`.
 */
function stringify(value, options = {}) {
  const { ids = 'string', space } = typeof options === 'object' && options !== null ? options : { space: options };
  if (ids !== 'string' && ids !== 'number') {
    throw idError(`stringify(): \`ids\` is 'string' or 'number', not ${JSON.stringify(ids)}`, 'ERR_INVALID_ARG_TYPE');
  }
  if (ids === 'number' && !HAS_RAW_JSON) {
    throw idError(
      "stringify(): `ids: 'number'` needs JSON.rawJSON (Node 21 or later): write IDs as strings here, which every client reads without loss",
    );
  }
  return JSON.stringify(
    value,
    (key, v) => {
      if (typeof v !== 'bigint') return v;
      const text = idText(v, 'stringify()');
      return ids === 'string' ? text : JSON.rawJSON(text);
    },
    space,
  );
}

/**
 * A replacer for `JSON.stringify(value, bigintReplacer)`: bigints as decimal strings (IDs
 * only: from 0 to 2^64 - 1). Express: `app.set('json replacer', bigintReplacer)`.
 */
function bigintReplacer(key, value) {
  return typeof value === 'bigint' ? idText(value, 'bigintReplacer()') : value;
}

function kindOf(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return JSON.stringify(value);
}

function toId(key, value, context) {
  const field = `parse(): field \`${key}\``;
  if (typeof value === 'string') {
    if (!/^[0-9]{1,20}$/.test(value)) {
      throw clientError(`${field} is not a Snowflake ID: ${JSON.stringify(value.slice(0, 40))}`);
    }
    try {
      return decodeStr(value, 'decimal');
    } catch (e) {
      throw clientError(`${field} is not a Snowflake ID: ${e.message}`);
    }
  }
  if (typeof value === 'number') {
    const whole = `${field} holds ${value}: a Snowflake ID is a whole number from 0 to 2^64 - 1`;
    // Node 21+ hands the reviver the number's source text: exact, whatever its size.
    if (context && typeof context.source === 'string') {
      if (!/^[0-9]+$/.test(context.source)) throw clientError(whole);
      try {
        return decodeStr(context.source, 'decimal');
      } catch (e) {
        throw clientError(`${field} is not a Snowflake ID: ${e.message}`);
      }
    }
    if (!Number.isInteger(value) || value < 0) throw clientError(whole);
    if (Number.isSafeInteger(value)) return BigInt(value);
    throw clientError(
      `${field} holds ${value}, beyond 2^53: JSON.parse has already rounded it (send IDs as strings, or use Node 21+)`,
      'ERR_SNOWFLAKE_VALUE',
    );
  }
  throw clientError(`${field} holds ${kindOf(value)}, not a Snowflake ID (its decimal digits as a string, or a number)`);
}

/**
 * Parses JSON `text`, turning the fields named in `ids` (an array of keys, or a function of
 * the key) into bigints: from decimal strings, or from numbers (exactly, through the source
 * text, where Node has it; a number beyond 2^53 without it is an error, never a rounded ID).
 * Anything else in a named field (a negative or fractional number, a boolean, null, an array,
 * an object, other text) is refused with an error whose `status` and `statusCode` are 400:
 * the client's bad input. `reviver` runs afterwards, as in `JSON.parse`.
 */
function parse(text, options = {}) {
  const { ids = [], reviver } = options;
  const isId = typeof ids === 'function' ? ids : (key) => ids.includes(key);
  return JSON.parse(text, function revive(key, value, context) {
    // A named field is an ID, or the request is refused (null too: an optional ID is left
    // out of `ids`, or read by the reviver).
    const v = isId(key) ? toId(key, value, context) : value;
    return reviver ? reviver.call(this, key, v) : v;
  });
}

module.exports = { stringify, parse, bigintReplacer, HAS_RAW_JSON };
