/* @libsnowflake/wasm: type definitions (hand-written; the shapes of the Node package's
   index.d.ts for what this package offers). */

/** An ID encoding: fixed-width ones sort like the numbers they encode. */
export type Encoding = 'decimal' | 'hex' | 'base32' | 'base36' | 'base58' | 'base62'

/** The stable codes of libsnowflake's errors that this package can throw (core's table). */
export type SnowflakeErrorCode =
  | 'ERR_SNOWFLAKE_LAYOUT'
  | 'ERR_SNOWFLAKE_VALUE'
  | 'ERR_SNOWFLAKE_INVALID_ID'
  | 'ERR_SNOWFLAKE_TIME_RANGE'
  | 'ERR_SNOWFLAKE_CLOCK_BEHIND'
  | 'ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED'

/**
 * What this package throws: an `Error` (a `RangeError` for ERR_SNOWFLAKE_VALUE, a `TypeError`
 * with `code: 'ERR_INVALID_ARG_TYPE'` for a value of the wrong JS type), with the Node
 * package's code and detail fields.
 */
export interface SnowflakeError extends Error {
  code: SnowflakeErrorCode | 'ERR_INVALID_ARG_TYPE'
  behindMs?: number
  retryAfterMs?: number
  field?: string
  value?: number | string
  min?: number | string
  max?: number | string
  expected?: string
  got?: string
  feature?: string
  option?: string
  reason?: string
  id?: string
  bits?: number
  position?: number
  length?: number
  expectedLength?: number
  unixMs?: number | string
  firstUnixMs?: number | string
  lastUnixMs?: number | string
}

/** What `init` takes: the module, its bytes, a `Response`, a URL, or a promise of one. */
export type ModuleSource =
  | WebAssembly.Module
  | BufferSource
  | Response
  | URL
  | string
  | Promise<WebAssembly.Module | BufferSource | Response | URL | string>

/**
 * Instantiates the module (once): from `source`, or the `snowflake.wasm` beside the package's
 * JS (read from disk in Node, Bun and Deno; fetched in a browser).
 */
export declare function init(source?: ModuleSource): Promise<unknown>
/** Instantiates the module synchronously (a browser's main thread allows it for small modules only: use `init`). */
export declare function initSync(source: WebAssembly.Module | BufferSource): unknown
/** The library version (core's, from Cargo). */
export declare function version(): string

/** One bit field of a layout, from the most significant down. */
export interface FieldInfo {
  name: string
  bits: number
  shift: number
  kind: 'time' | 'sequence' | 'node'
}

/** The parts of a decoded ID. */
export interface Parts {
  /** The start of the ID's tick, in Unix milliseconds. */
  unixMs: number
  /** Ticks since the layout's epoch. */
  tick: number
  /** The sequence number within the tick. */
  sequence: number
  /** The node field values, by name, from the most significant field down. */
  fields: Record<string, number>
  /** `unixMs` as a `Date`. */
  date: Date
}

/** The options of `encode` and `decodeStr`. */
export interface EncodeOptions {
  /** Encode `2n ** 64n - 1n - id`, so that the newest ID sorts first. */
  reverse?: boolean
}

/**
 * A layout: `new Layout('twitter')`, or a spec such as
 * `'time:41,datacenter:5,worker:5,sequence:12;epoch=1288834974657;tick=1ms'`.
 */
export declare class Layout {
  /** Parses a spec or a preset name; throws `ERR_SNOWFLAKE_LAYOUT` naming the problem. */
  constructor(spec: string)
  /** The presets: name -> canonical spec. */
  static presets(): Record<string, string>
  /** The canonical spec. */
  toString(): string
  /** The parts of `id` (a bigint, a decimal string, or a safe-integer number). */
  decode(id: bigint | string | number): Parts
  /** The ID of instant `t` with node `fields` and `sequence`, each checked against its range. */
  compose(t: number | Date, fields?: Record<string, number | bigint> | string, sequence?: number | bigint): bigint
  /** The UUIDv7 view of `id`: lossless, sorted as the IDs are. */
  toUuid(id: bigint | string | number): string
  /** The ID whose UUIDv7 view is `uuid`. */
  fromUuid(uuid: string): bigint
  /** The smallest ID of the tick holding `t`. */
  minId(t: number | Date): bigint
  /** The largest ID of the tick holding `t`. */
  maxId(t: number | Date): bigint
  get fields(): Array<FieldInfo>
  get epochMs(): number
  get tickMs(): number
  get totalBits(): number
  get capacityPerTick(): number
  get lastUnixMs(): number
  get fingerprint(): bigint
  /** Frees the module's copy now (otherwise when the object is collected). */
  free(): void
}

/** `id` in an encoding; fixed-width encodings sort like the numbers. */
export declare function encode(id: bigint | string | number, encoding: Encoding, options?: EncodeOptions): string
/** Parses an encoded ID, strictly (length, alphabet, overflow). */
export declare function decodeStr(text: string, encoding: Encoding, options?: EncodeOptions): bigint

/**
 * Public IDs: each ID encrypted with Speck64/128 under a 16-byte key, written fixed-width
 * (`'base62'` by default), hiding time, order and volume. Not authentication.
 */
export declare class PublicIds {
  constructor(key: Uint8Array, encoding?: Encoding)
  encode(id: bigint | string | number): string
  decode(text: string): bigint
  get encoding(): Encoding
  /** Frees the module's copy (its round keys wiped) now. */
  free(): void
}

/** The options of an isolated generator: the Node package's, less the ways of coordinating. */
export interface IsolatedGeneratorOptions {
  /** A preset name, a spec or a `Layout` (default `twitter`). */
  layout?: string | Layout
  /** This generator's node values: an object, or the text `'datacenter=1,worker=3'` (default all zeros). */
  node?: Record<string, number | bigint> | string
  /**
   * The clock, in Unix ms (default `Date.now()`). A wait for a full tick moves a caller's
   * clock's reading on to the next tick, as if that time had passed.
   */
  clock?: () => number
  maxDriftMs?: number | bigint
  /** How long a call may busy-wait for the clock (default 1000; give 0 in a UI thread). */
  maxWaitMs?: number | bigint
  sequenceStart?: 'zero' | `spread:${number}`
  rollover?: string
  /** Always `true` here (`false` is refused). */
  isolated?: true
}

/**
 * An ISOLATED generator: a state of its own over `Date.now()` or the caller's clock. No host
 * record exists in a browser or an edge runtime, so two of these with the same layout and
 * node values CAN issue the same IDs: for tests, replays and traces, or with node values you
 * make unique yourself. The coordinated generator is the Node package's (`libsnowflake`).
 */
export declare class IsolatedGenerator implements Iterable<bigint> {
  constructor(options?: IsolatedGeneratorOptions)
  nextId(): bigint
  nextIdString(): string
  tryNextId(): bigint
  nextIdAt(t: number | Date): bigint
  nextIds(n: number): BigUint64Array
  get layout(): Layout
  [Symbol.iterator](): Iterator<bigint, never, undefined>
  free(): void
}
