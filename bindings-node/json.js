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

// Each code comes with the one class core's table gives it (as every error of the binding).
function idError(message, code = 'ERR_SNOWFLAKE_VALUE') {
  const Class = { ERR_SNOWFLAKE_VALUE: RangeError, ERR_INVALID_ARG_TYPE: TypeError }[code] || Error;
  const e = new Class(message);
  e.code = code;
  return e;
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
    (key, v) => (typeof v === 'bigint' ? (ids === 'string' ? v.toString() : JSON.rawJSON(v.toString())) : v),
    space,
  );
}

/** A replacer for `JSON.stringify(value, bigintReplacer)`: bigints as decimal strings. */
function bigintReplacer(key, value) {
  return typeof value === 'bigint' ? value.toString() : value;
}

function toId(key, value, context) {
  if (typeof value === 'string') {
    if (!/^[0-9]{1,20}$/.test(value)) {
      throw idError(
        `parse(): field \`${key}\` is not a Snowflake ID: ${JSON.stringify(value.slice(0, 40))}`,
        'ERR_SNOWFLAKE_INVALID_ID',
      );
    }
    return decodeStr(value, 'decimal');
  }
  if (typeof value === 'number') {
    // Node 21+ hands the reviver the number's source text: exact, whatever its size.
    if (context && typeof context.source === 'string' && /^[0-9]+$/.test(context.source)) {
      return decodeStr(context.source, 'decimal');
    }
    if (Number.isSafeInteger(value) && value >= 0) return BigInt(value);
    throw idError(
      `parse(): field \`${key}\` holds ${value}, beyond 2^53: JSON.parse has already rounded it (send IDs as strings, or use Node 21+)`,
    );
  }
  return value;
}

/**
 * Parses JSON `text`, turning the fields named in `ids` (an array of keys, or a function of
 * the key) into bigints: from decimal strings, or from numbers (exactly, through the source
 * text, where Node has it; a number beyond 2^53 without it is an error, never a rounded ID).
 * `reviver` runs afterwards, as in `JSON.parse`.
 */
function parse(text, options = {}) {
  const { ids = [], reviver } = options;
  const isId = typeof ids === 'function' ? ids : (key) => ids.includes(key);
  return JSON.parse(text, function revive(key, value, context) {
    const v = isId(key) && value !== null ? toId(key, value, context) : value;
    return reviver ? reviver.call(this, key, v) : v;
  });
}

module.exports = { stringify, parse, bigintReplacer, HAS_RAW_JSON };
