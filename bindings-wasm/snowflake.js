// @libsnowflake/wasm: libsnowflake's core built without std for WebAssembly, for browsers,
// workers and edge runtimes. This file converts JS values and forwards to the module's
// exports (ffi-wasm/): every answer, check and error comes from core. It loads no native code
// and imports nothing from Node; `init()` (or `initSync()`) instantiates the module once.

let wasm = null;
let u8 = null;
let out = null;
let outU64 = null;
let memoryBuffer = null;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

// The clocks of isolated generators, by the id the module reads them with.
const clocks = new Map();
let nextClockId = 1;

const imports = {
  snowflake: {
    sf_clock_now: (id) => {
      const clock = clocks.get(id);
      return clock === undefined ? Date.now() : Number(clock());
    },
  },
};

function instantiated(instance) {
  wasm = instance.exports;
  views();
  return exportsObject;
}

// Views of the module's memory, made again when it grows (a grown memory detaches them).
function views() {
  if (memoryBuffer !== wasm.memory.buffer) {
    memoryBuffer = wasm.memory.buffer;
    const io = wasm.sf_io();
    u8 = new Uint8Array(memoryBuffer, io, wasm.sf_io_len());
    out = new Float64Array(memoryBuffer, wasm.sf_out(), 64);
    outU64 = new BigUint64Array(memoryBuffer, wasm.sf_out(), 64);
  }
}

/**
 * Instantiates the module: from `source` (a `WebAssembly.Module`, its bytes, a `Response`, a
 * URL or a promise of one of them), or the `snowflake.wasm` beside this file (read from disk
 * where the URL is a file's: Node, Bun, Deno). Once: later calls return at once.
 */
export async function init(source) {
  if (wasm) return exportsObject;
  source = await (source ?? new URL('./snowflake.wasm', import.meta.url));
  if (source instanceof URL && source.protocol === 'file:') {
    const { readFile } = await import('node:fs/promises');
    source = await readFile(source);
  } else if (source instanceof URL || typeof source === 'string') {
    source = await fetch(source);
  }
  if (source instanceof WebAssembly.Module) {
    return instantiated(await WebAssembly.instantiate(source, imports));
  }
  if (typeof Response !== 'undefined' && source instanceof Response) {
    if (!source.ok) throw new Error(`@libsnowflake/wasm: fetching the module failed: ${source.status} ${source.url}`);
    source = await source.arrayBuffer();
  }
  return instantiated((await WebAssembly.instantiate(source, imports)).instance);
}

/** Instantiates the module synchronously from a `WebAssembly.Module` or its bytes. */
export function initSync(source) {
  if (wasm) return exportsObject;
  const module = source instanceof WebAssembly.Module ? source : new WebAssembly.Module(source);
  return instantiated(new WebAssembly.Instance(module, imports));
}

function ready() {
  if (!wasm) {
    throw new Error('@libsnowflake/wasm is not initialised: `await init()` first (the package\'s main entry does it)');
  }
  views();
}

// --- crossing: text, records and errors ------------------------------------------------------
function put(text, at = 0) {
  const { read, written } = encoder.encodeInto(text, u8.subarray(at));
  if (read < text.length) {
    throw fromCore(coreError('ERR_SNOWFLAKE_VALUE', 'the text is longer than the module takes (16 KiB)'));
  }
  return at + written;
}
function got(len) {
  views();
  return decoder.decode(u8.subarray(0, len));
}

// The error the module wrote (JSON: code, name, message, detail fields), as a JS error of
// the class core's table gives its kind, as the Node package throws.
function fromCore(len) {
  const { name, message, ...detail } = JSON.parse(got(-len));
  const Class = name === 'TypeError' ? TypeError : name === 'RangeError' ? RangeError : Error;
  return Object.assign(new Class(message), detail);
}
function check(r, at) {
  views(); // a call that allocated may have grown (and so detached) the memory
  if (r < 0) {
    const e = fromCore(r);
    if (at) e.message = `${at}: ${e.message}`;
    throw e;
  }
  return r;
}
// An error this layer finds (a wrong JS type, a negative bigint), of the kind whose code core's
// table holds: its class and code come from the table too.
function coreError(code, message) {
  ready();
  const end = put(message, put(code));
  return wasm.sf_error(encoder.encode(code).length, end);
}
function fail(code, at, message) {
  throw fromCore(coreError(code, `${at}: ${message}`));
}
function describe(v) {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'object') return v instanceof Date ? 'a Date' : 'an object';
  return `${typeof v === 'bigint' ? 'a bigint' : typeof v === 'number' ? 'a number' : `a ${typeof v}`} (${String(v).slice(0, 40)})`;
}
function typeError(at, expected, v) {
  fail('ERR_SNOWFLAKE_TYPE', at, `${expected}; got ${describe(v)}`);
}

const MAX_U64 = (1n << 64n) - 1n;
function toId(v, at) {
  ready();
  if (typeof v === 'bigint') {
    if (v < 0n || v > MAX_U64) fail('ERR_SNOWFLAKE_INVALID_ID', at, 'an ID is a bigint from 0n to 2n ** 64n - 1n');
    return v;
  }
  if (typeof v === 'string') {
    // Core's strict decimal reading: digits only, no sign, space or wrap.
    const end = put('decimal');
    check(wasm.sf_decode_str(end, put(v, end), 0), at);
    return outU64[0];
  }
  if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) {
      typeError(at, 'a number is taken as an ID only when Number.isSafeInteger(id); pass a bigint or a decimal string', v);
    }
    if (v < 0) fail('ERR_SNOWFLAKE_INVALID_ID', at, 'an ID is never negative');
    return BigInt(v);
  }
  typeError(at, 'an ID must be a bigint, a decimal string, or a number that is a safe integer', v);
}
function toMs(t, at) {
  ready();
  let f = t;
  if (t instanceof Date) {
    f = t.getTime();
    if (Number.isNaN(f)) fail('ERR_SNOWFLAKE_TIME_RANGE', at, 'the Date is invalid');
  } else if (typeof t !== 'number') {
    typeError(at, 'a time must be a number of Unix milliseconds (an integer) or a Date', t);
  }
  if (!Number.isSafeInteger(f)) typeError(at, 'a time must be a number of Unix milliseconds (an integer) or a Date', t);
  return f; // core reads it (`Value::instant`): a time before 1970 is its error
}
function toStr(v, at, what) {
  if (typeof v !== 'string') typeError(at, `${what} must be a string`, v);
  return v;
}

// Records: a value is a tag byte and its payload (ffi-wasm/src/io.rs, `Record::value`).
class RecordWriter {
  constructor() {
    this.pos = 0;
    this.view = new DataView(memoryBuffer, wasm.sf_io(), wasm.sf_io_len());
  }
  u8(b) {
    this.view.setUint8(this.pos++, b);
  }
  str(s) {
    const bytes = encoder.encode(s);
    if (this.pos + 2 + bytes.length > u8.length) fail('ERR_SNOWFLAKE_VALUE', 'options', 'too long');
    this.view.setUint16(this.pos, bytes.length, true);
    u8.set(bytes, this.pos + 2);
    this.pos += 2 + bytes.length;
  }
  value(v) {
    if (v === undefined || v === null) this.u8(0);
    else if (typeof v === 'number') {
      this.u8(1);
      this.view.setFloat64(this.pos, v, true);
      this.pos += 8;
    } else if (typeof v === 'bigint') {
      // Core checks the range; a bigint beyond 128 bits reads as the nearest end, which is out
      // of every range all the same.
      const clamped = v > (1n << 126n) ? 1n << 126n : v < -(1n << 126n) ? -(1n << 126n) : v;
      this.u8(2);
      this.view.setBigUint64(this.pos, BigInt.asUintN(64, clamped), true);
      this.view.setBigInt64(this.pos + 8, clamped >> 64n, true);
      this.pos += 16;
    } else if (typeof v === 'boolean') {
      this.u8(3);
      this.u8(v ? 1 : 0);
    } else if (typeof v === 'string') {
      this.u8(4);
      this.str(v);
    } else {
      this.u8(5);
      this.str(Array.isArray(v) ? 'array' : typeof v);
    }
  }
  // Node values: the text form, an object (core checks each value against its field), or none.
  node(fields, at) {
    if (fields === undefined || fields === null) return this.u8(0);
    if (typeof fields === 'string') {
      this.u8(1);
      return this.str(fields);
    }
    if (typeof fields !== 'object' || Array.isArray(fields) || Object.getPrototypeOf(fields) !== Object.prototype && Object.getPrototypeOf(fields) !== null) {
      typeError(at, "node values are a plain object ({ datacenter: 1, worker: 3 }) or a string ('datacenter=1,worker=3')", fields);
    }
    // A key whose value is `undefined` is left out, as JS spreads and defaults expect.
    const entries = Object.entries(fields).filter(([, v]) => v !== undefined);
    this.u8(2);
    this.u8(Math.min(entries.length, 255));
    for (const [k, v] of entries.slice(0, 255)) {
      this.str(k);
      this.value(v);
    }
  }
}

// A freed object's handle is 0: using it again is refused, never a read of freed memory.
function live(handle, what) {
  if (!handle) fail('ERR_SNOWFLAKE_VALUE', what, 'this object was freed (free()): make another');
  return handle;
}

// Objects of the module are freed when their JS object is collected, or by `free()`.
const registry = new FinalizationRegistry(({ free, handle, clockId }) => {
  if (wasm) wasm[free](handle);
  if (clockId) clocks.delete(clockId);
});

// --- layouts ---------------------------------------------------------------------------------
/**
 * A layout: which bits of an ID hold the time, the sequence and each node field, its epoch and
 * its tick. `new Layout('twitter')`, or a spec such as
 * `'time:41,datacenter:5,worker:5,sequence:12;epoch=1288834974657;tick=1ms'`.
 */
export class Layout {
  #handle;
  #info;
  #nodeNames;
  constructor(spec) {
    ready();
    toStr(spec, 'new Layout(spec)', 'a layout spec');
    this.#handle = check(wasm.sf_layout_new(put(spec)));
    this.#info = JSON.parse(got(wasm.sf_layout_describe(live(this.#handle, 'layout'))));
    this.#info.fields.forEach(Object.freeze);
    Object.freeze(this.#info.fields);
    this.#nodeNames = this.#info.fields.filter((f) => f.kind === 'node').map((f) => f.name);
    registry.register(this, { free: 'sf_layout_free', handle: this.#handle }, this);
  }
  /** @internal the module's handle, for generators. */
  static handleOf(layout) {
    return live(layout.#handle, 'layout');
  }
  /** The presets: name -> canonical spec. */
  static presets() {
    ready();
    return JSON.parse(got(check(wasm.sf_presets())));
  }
  toString() {
    return this.#info.spec;
  }
  decode(id) {
    const value = toId(id, 'layout.decode(id)');
    const n = check(wasm.sf_layout_decode(live(this.#handle, 'layout'), value), 'layout.decode(id)');
    const fields = {};
    for (let i = 0; i < n; i++) {
      const v = out[3 + i];
      fields[this.#nodeNames[i]] = v > Number.MAX_SAFE_INTEGER ? outU64[32 + i] : v;
    }
    const unixMs = out[0];
    return { unixMs, tick: out[1], sequence: out[2], fields, date: new Date(unixMs) };
  }
  compose(t, fields, sequence) {
    const at = 'layout.compose(t, fields, sequence)';
    const ms = toMs(t, 'layout.compose(t)');
    const r = new RecordWriter();
    r.value(sequence);
    r.node(fields, 'layout.compose(t, fields)');
    check(wasm.sf_layout_compose(live(this.#handle, 'layout'), ms), at);
    return outU64[0];
  }
  toUuid(id) {
    const value = toId(id, 'layout.toUuid(id)');
    return got(check(wasm.sf_layout_to_uuid(live(this.#handle, 'layout'), value), 'layout.toUuid(id)'));
  }
  fromUuid(uuid) {
    ready();
    toStr(uuid, 'layout.fromUuid(uuid)', 'a UUID');
    check(wasm.sf_layout_from_uuid(live(this.#handle, 'layout'), put(uuid)), 'layout.fromUuid(uuid)');
    return outU64[0];
  }
  minId(t) {
    check(wasm.sf_layout_min_id(live(this.#handle, 'layout'), toMs(t, 'layout.minId(t)')), 'layout.minId(t)');
    return outU64[0];
  }
  maxId(t) {
    check(wasm.sf_layout_max_id(live(this.#handle, 'layout'), toMs(t, 'layout.maxId(t)')), 'layout.maxId(t)');
    return outU64[0];
  }
  get fields() {
    return this.#info.fields.map((f) => ({ ...f }));
  }
  get epochMs() {
    return this.#info.epochMs;
  }
  get tickMs() {
    return this.#info.tickMs;
  }
  get totalBits() {
    return this.#info.totalBits;
  }
  get capacityPerTick() {
    return this.#info.capacityPerTick;
  }
  get lastUnixMs() {
    return this.#info.lastUnixMs;
  }
  get fingerprint() {
    return BigInt(this.#info.fingerprint);
  }
  /** Frees the module's copy now (otherwise when this object is collected). */
  free() {
    if (this.#handle) {
      registry.unregister(this);
      wasm.sf_layout_free(this.#handle);
      this.#handle = 0;
    }
  }
}

// --- encodings -------------------------------------------------------------------------------
function reverseOf(options, call) {
  if (options === undefined || options === null) return 0;
  if (typeof options !== 'object') typeError(`${call}(options)`, 'the options are an object', options);
  for (const key of Object.keys(options)) {
    if (key !== 'reverse') check(wasm.sf_encode_option_error(put(key)), `${call}(options)`);
  }
  const r = options.reverse;
  if (r !== undefined && typeof r !== 'boolean') typeError(`${call}(options.reverse)`, 'reverse is a boolean', r);
  return r ? 1 : 0;
}

/** `id` in a fixed-width encoding (or `'decimal'`): core's `encode`. */
export function encode(id, encoding, options) {
  const value = toId(id, 'encode(id)');
  toStr(encoding, 'encode(id, encoding)', 'an encoding');
  const reverse = reverseOf(options, 'encode');
  return got(check(wasm.sf_encode(value, put(encoding), reverse), 'encode(id, encoding)'));
}

/** Parses an encoded ID, strictly: core's `decode_str`. */
export function decodeStr(text, encoding, options) {
  ready();
  toStr(text, 'decodeStr(text)', 'an encoded ID');
  toStr(encoding, 'decodeStr(text, encoding)', 'an encoding');
  const reverse = reverseOf(options, 'decodeStr');
  const nameEnd = put(encoding);
  check(wasm.sf_decode_str(nameEnd, put(text, nameEnd), reverse), 'decodeStr(text)');
  return outU64[0];
}

// --- public IDs ------------------------------------------------------------------------------
/**
 * Public IDs: IDs encrypted with Speck64/128 under a 16-byte key, written fixed-width
 * (base62 by default), hiding time, order and volume; not authentication.
 */
export class PublicIds {
  #handle;
  constructor(key, encoding) {
    ready();
    if (!(key instanceof Uint8Array)) typeError('new PublicIds(key)', 'the key must be a Uint8Array of 16 bytes', key);
    if (encoding !== undefined) toStr(encoding, 'new PublicIds(key, encoding)', 'an encoding');
    if (key.length > 64) fail('ERR_SNOWFLAKE_VALUE', 'new PublicIds(key)', `the key has ${key.length} bytes; it must have 16`);
    u8.set(key, 0);
    const end = encoding === undefined ? key.length : put(encoding, key.length);
    this.#handle = check(wasm.sf_public_new(key.length, end), 'new PublicIds(key, encoding)');
    registry.register(this, { free: 'sf_public_free', handle: this.#handle }, this);
  }
  encode(id) {
    const value = toId(id, 'publicIds.encode(id)');
    return got(wasm.sf_public_encode(live(this.#handle, 'publicIds'), value));
  }
  decode(text) {
    ready();
    toStr(text, 'publicIds.decode(text)', 'a public ID');
    check(wasm.sf_public_decode(live(this.#handle, 'publicIds'), put(text)), 'publicIds.decode(text)');
    return outU64[0];
  }
  get encoding() {
    ready();
    return got(wasm.sf_public_encoding(live(this.#handle, 'publicIds')));
  }
  /** Frees the module's copy (and its round keys, wiped) now. */
  free() {
    if (this.#handle) {
      registry.unregister(this);
      wasm.sf_public_free(this.#handle);
      this.#handle = 0;
    }
  }
}

// --- the isolated generator ------------------------------------------------------------------
/**
 * An ISOLATED generator: a state of its own, over `Date.now()` or the caller's `clock`. No host
 * record exists in a browser or an edge runtime, so nothing keeps two of these (two tabs,
 * workers, isolates) with the same layout and node values from issuing the same IDs: for
 * tests, replays and traces, or with node values that you make unique per instance yourself.
 * The coordinated generator is the Node package's (`libsnowflake`).
 */
export class IsolatedGenerator {
  #handle;
  #clockId;
  #layout;
  constructor(options = {}) {
    ready();
    if (typeof options !== 'object' || options === null) {
      typeError('new IsolatedGenerator(options)', 'the options are an object ({ layout, node, clock, ... })', options);
    }
    const { layout = 'twitter', node, clock, ...rest } = options;
    this.#layout = layout instanceof Layout ? layout : new Layout(toStr(layout, 'new IsolatedGenerator(options.layout)', 'a layout (a spec, a preset name or a Layout)'));
    if (clock !== undefined && typeof clock !== 'function') {
      typeError('new IsolatedGenerator(options.clock)', 'a clock is a function returning Unix milliseconds', clock);
    }
    this.#clockId = nextClockId++;
    if (clock) clocks.set(this.#clockId, clock);
    const r = new RecordWriter();
    r.node(node, 'new IsolatedGenerator(options.node)');
    const names = Object.keys(rest).filter((k) => rest[k] !== undefined);
    r.u8(names.length);
    for (const name of names) {
      r.str(name);
      r.value(rest[name]);
    }
    try {
      this.#handle = check(wasm.sf_gen_new(Layout.handleOf(this.#layout), this.#clockId, clock ? 0 : 1), 'new IsolatedGenerator(options)');
    } catch (e) {
      clocks.delete(this.#clockId);
      throw e;
    }
    registry.register(this, { free: 'sf_gen_free', handle: this.#handle, clockId: this.#clockId }, this);
  }
  /** The next ID; waits for the clock at most `maxWaitMs` (a busy wait: give 0 in a UI thread). */
  nextId() {
    ready();
    check(wasm.sf_gen_next(live(this.#handle, 'generator')));
    return outU64[0];
  }
  /** The next ID as a decimal string. */
  nextIdString() {
    return String(this.nextId());
  }
  /** The next ID without ever waiting. */
  tryNextId() {
    ready();
    check(wasm.sf_gen_try_next(live(this.#handle, 'generator')));
    return outU64[0];
  }
  /** The next ID at the caller's reading `t` (deterministic; never waits). */
  nextIdAt(t) {
    check(wasm.sf_gen_next_at(live(this.#handle, 'generator'), toMs(t, 'generator.nextIdAt(t)')), 'generator.nextIdAt(t)');
    return outU64[0];
  }
  /** `n` increasing IDs. */
  nextIds(n) {
    ready();
    if (!Number.isSafeInteger(n) || n < 0 || n > 2 ** 28) {
      fail('ERR_SNOWFLAKE_VALUE', 'generator.nextIds(n)', 'n is a whole number from 0 to 2 ** 28');
    }
    if (n === 0) return new BigUint64Array(0);
    check(wasm.sf_gen_next_ids(live(this.#handle, 'generator'), n), 'generator.nextIds(n)');
    views();
    const ptr = Number(outU64[0]);
    const ids = new BigUint64Array(memoryBuffer, ptr, n).slice();
    wasm.sf_ids_free(ptr, n);
    return ids;
  }
  get layout() {
    return this.#layout;
  }
  *[Symbol.iterator]() {
    for (;;) yield this.nextId();
  }
  /** Frees the module's state now (otherwise when this object is collected). */
  free() {
    if (this.#handle) {
      registry.unregister(this);
      wasm.sf_gen_free(this.#handle);
      clocks.delete(this.#clockId);
      this.#handle = 0;
    }
  }
}

/** The library version (core's, from Cargo). */
export function version() {
  ready();
  return got(wasm.sf_version());
}

const exportsObject = { Layout, PublicIds, IsolatedGenerator, encode, decodeStr, version };
