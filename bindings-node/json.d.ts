/** libsnowflake/json: JSON that keeps 64-bit IDs whole. */

/** Whether this Node has `JSON.rawJSON` (21+): `stringify(v, { ids: 'number' })` works. */
export declare const HAS_RAW_JSON: boolean

export interface StringifyOptions {
  /** How bigints are written: decimal strings (default), or exact JSON numbers (Node 21+). */
  ids?: 'string' | 'number'
  /** As `JSON.stringify`'s third argument. */
  space?: string | number
}

/** JSON text of `value`, every bigint written whole (as a string by default). */
export declare function stringify(value: unknown, options?: StringifyOptions | string | number): string

/**
 * A `JSON.stringify` replacer that writes bigints as decimal strings (IDs: from 0 to 2^64 - 1;
 * another bigint throws). Express: `app.set('json replacer', bigintReplacer)`.
 */
export declare function bigintReplacer(key: string, value: unknown): unknown

export interface ParseOptions {
  /** The fields that hold IDs (keys, or a test of the key): read as bigint. */
  ids?: readonly string[] | ((key: string) => boolean)
  /** Runs after the IDs are read, as `JSON.parse`'s reviver. */
  reviver?: (this: unknown, key: string, value: unknown) => unknown
}

/**
 * Parses JSON, reading the named ID fields as bigints (exactly, or an error). Anything else
 * in a named field (a negative or fractional number, a boolean, null, an array, an object,
 * text that is not decimal digits) throws an error with `status` and `statusCode` 400, which
 * Express and Fastify answer as the client's bad input.
 */
export declare function parse(text: string, options?: ParseOptions): any
