// The shared vectors (tests/vectors) through @libsnowflake/wasm, in any JS runtime: Node, Bun,
// Deno and a browser page (chromium.html) call `check(lib, read)` with the installed package
// and a reader of the vector files. Throws at the first difference; returns a summary.
// Runtime-neutral: no Node module, its own assertions.

function fail(what, got, want) {
  throw new Error(`${what}: got ${JSON.stringify(got, big)}, want ${JSON.stringify(want, big)}`);
}
const big = (_, v) => (typeof v === 'bigint' ? `${v}n` : v);
function eq(got, want, what) {
  const g = JSON.stringify(got, big);
  const w = JSON.stringify(want, big);
  if (g !== w) fail(what, got, want);
}
// `f()` throws an error with `code` (and, when given, its message holding `contains` and its
// class being `Class`).
function throwsCode(f, code, what, contains, Class) {
  try {
    f();
  } catch (e) {
    if (e.code !== code) fail(`${what} (code; message ${e.message})`, e.code, code);
    if (contains && !e.message.toLowerCase().includes(contains.toLowerCase())) fail(`${what} (message)`, e.message, contains);
    if (Class && !(e instanceof Class)) fail(`${what} (class)`, e.constructor.name, Class.name);
    return;
  }
  fail(what, 'no error', code);
}
function hex(s) {
  const out = new Uint8Array(s.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export async function check(lib, read) {
  const { Layout, PublicIds, IsolatedGenerator, encode, decodeStr } = lib;
  let checked = 0;

  const layouts = await read('layouts.json');
  for (const v of layouts.layouts) {
    const layout = new Layout(v.spec);
    eq(layout.toString(), v.canonical, v.spec);
    eq(String(layout.fingerprint), v.fingerprint, `${v.spec} fingerprint`);
    eq(
      [layout.totalBits, layout.capacityPerTick, layout.epochMs, layout.tickMs, layout.lastUnixMs],
      [v.total_bits, v.capacity_per_tick, v.epoch_ms, v.tick_ms, v.last_unix_ms],
      `${v.spec} numbers`,
    );
    eq(layout.fields.map((f) => [f.name, f.bits, f.shift]), v.fields.map((f) => [f.name, f.bits, f.shift]), `${v.spec} fields`);
    for (const d of v.decode) {
      const p = layout.decode(BigInt(d.id));
      eq({ unixMs: p.unixMs, tick: p.tick, sequence: p.sequence, fields: p.fields },
        { unixMs: d.unix_ms, tick: d.tick, sequence: d.sequence, fields: d.fields }, `${v.spec} decode ${d.id}`);
      eq(layout.decode(d.id).fields, d.fields, `${v.spec} decode of the string ${d.id}`);
      checked++;
    }
    for (const b of v.bounds ?? []) {
      eq([layout.minId(b.unix_ms), layout.maxId(b.unix_ms)], [BigInt(b.min_id), BigInt(b.max_id)], `${v.spec} bounds ${b.unix_ms}`);
      checked++;
    }
    layout.free();
  }
  for (const c of layouts.compose) {
    const layout = new Layout(c.spec);
    if (c.error) throwsCode(() => layout.compose(c.unix_ms, c.fields, c.sequence), c.error, `compose ${c.spec}`);
    else eq(layout.compose(c.unix_ms, c.fields, c.sequence), BigInt(c.id), `compose ${c.spec} ${c.unix_ms}`);
    checked++;
  }
  for (const c of layouts.invalid) {
    throwsCode(() => new Layout(c.spec), c.error, `layout ${JSON.stringify(c.spec)}`, c.message_contains);
    checked++;
  }
  for (const c of layouts.decode_invalid) {
    throwsCode(() => new Layout(c.spec).decode(BigInt(c.id)), c.error, `decode ${c.spec} ${c.id}`);
    checked++;
  }
  const presets = Layout.presets();
  eq(presets.twitter, new Layout('twitter').toString(), 'presets');

  const encodings = await read('encodings.json');
  for (const v of encodings.ids) {
    for (const [reverse, table] of [[false, v.plain], [true, v.reverse]]) {
      for (const [encoding, text] of Object.entries(table)) {
        eq(encode(BigInt(v.id), encoding, { reverse }), text, `${v.id} ${encoding}`);
        eq(decodeStr(text, encoding, { reverse }), BigInt(v.id), `${text} ${encoding}`);
        checked++;
      }
    }
  }
  for (const a of encodings.aliases) {
    eq(decodeStr(a.text, a.encoding), BigInt(a.id), `alias ${a.text}`);
    checked++;
  }
  for (const c of encodings.invalid) {
    throwsCode(() => decodeStr(c.text, c.encoding), c.error, `decodeStr ${c.encoding} ${JSON.stringify(c.text)}`);
    checked++;
  }

  const uuid = await read('uuid.json');
  for (const v of uuid.layouts) {
    const layout = new Layout(v.spec);
    for (const c of v.cases) {
      eq(layout.toUuid(BigInt(c.id)), c.uuid, `${v.spec} toUuid ${c.id}`);
      eq(layout.fromUuid(c.uuid.toUpperCase()), BigInt(c.id), `${v.spec} fromUuid ${c.uuid}`);
      checked++;
    }
  }
  for (const c of uuid.to_uuid_invalid) {
    throwsCode(() => new Layout(c.spec).toUuid(BigInt(c.id)), c.error, `toUuid ${c.spec} ${c.id}`, c.message_contains);
    checked++;
  }
  for (const c of uuid.from_uuid_invalid) {
    throwsCode(() => new Layout(c.spec).fromUuid(c.uuid), c.error, `fromUuid ${c.spec} ${c.uuid}`, c.message_contains);
    checked++;
  }

  for (const trace of (await read('generator.json')).traces) {
    const o = trace.options_fields;
    const gen = new IsolatedGenerator({
      layout: trace.layout,
      node: trace.node,
      maxDriftMs: o.max_drift_ms,
      maxWaitMs: o.max_wait_ms,
      sequenceStart: o.sequence_start,
      rollover: o.rollover ?? undefined,
    });
    for (const step of trace.steps) {
      let got;
      try {
        got = String(gen.nextIdAt(step.unix_ms));
      } catch (e) {
        got = e.code;
      }
      eq(got, step.id ?? step.error, `${trace.name} at ${step.unix_ms}`);
      checked++;
    }
    gen.free();
  }

  const pub = await read('public_ids.json');
  const ka = pub.known_answer;
  eq(new PublicIds(hex(ka.key_hex), ka.encoding).encode(BigInt(ka.id)), ka.text, 'Speck64/128 known answer');
  for (const row of pub.keys) {
    const ids = new PublicIds(hex(row.key_hex), row.encoding);
    eq(ids.encoding, row.encoding ?? 'base62', 'public encoding');
    for (const c of row.cases) {
      eq(ids.encode(BigInt(c.id)), c.text, `${row.key_hex} ${c.id}`);
      eq(ids.decode(c.text), BigInt(c.id), `${row.key_hex} ${c.text}`);
      checked++;
    }
  }
  for (const c of pub.invalid_keys) {
    throwsCode(() => new PublicIds(hex(c.key_hex)), c.error, `key ${c.key_hex}`);
    checked++;
  }
  for (const c of pub.invalid_texts) {
    throwsCode(() => new PublicIds(hex(c.key_hex), c.encoding).decode(c.text), c.error, `public text ${c.text}`);
    checked++;
  }
  for (const c of pub.invalid_encodings) {
    throwsCode(() => new PublicIds(hex(c.key_hex), c.encoding), c.error, `public encoding ${c.encoding}`);
    checked++;
  }

  // Bad input: the Node package's codes and classes (core's table), and nothing changes.
  const twitter = new Layout('twitter');
  throwsCode(() => twitter.decode(-1n), 'ERR_SNOWFLAKE_INVALID_ID', 'negative bigint');
  throwsCode(() => twitter.decode(2n ** 64n), 'ERR_SNOWFLAKE_INVALID_ID', 'bigint of 65 bits');
  throwsCode(() => twitter.decode('12x'), 'ERR_SNOWFLAKE_INVALID_ID', 'decimal string', 'layout.decode(id)');
  throwsCode(() => twitter.decode({}), 'ERR_INVALID_ARG_TYPE', 'object for an ID', 'layout.decode(id)', TypeError);
  throwsCode(() => twitter.decode(1.5), 'ERR_INVALID_ARG_TYPE', 'fraction for an ID', undefined, TypeError);
  throwsCode(() => twitter.minId(-1), 'ERR_SNOWFLAKE_TIME_RANGE', 'time before 1970');
  throwsCode(() => twitter.minId(new Date(NaN)), 'ERR_SNOWFLAKE_TIME_RANGE', 'invalid Date');
  throwsCode(() => twitter.compose(Date.now(), { worker: 32 }), 'ERR_SNOWFLAKE_VALUE', 'worker out of range', 'worker', RangeError);
  throwsCode(() => twitter.compose(Date.now(), { worker: true }), 'ERR_INVALID_ARG_TYPE', 'boolean node value', 'worker', TypeError);
  throwsCode(() => twitter.compose(Date.now(), { shard: 1 }), 'ERR_SNOWFLAKE_VALUE', 'unknown node field', 'shard');
  throwsCode(() => encode(1n, 'base64'), 'ERR_SNOWFLAKE_VALUE', 'unknown encoding', 'base64');
  throwsCode(() => new IsolatedGenerator({ shared: 'x' }), 'ERR_SNOWFLAKE_VALUE', 'shared state', 'needs the `shared` feature');
  throwsCode(() => new IsolatedGenerator({ lease: 'local' }), 'ERR_SNOWFLAKE_VALUE', 'lease', 'needs the');
  throwsCode(() => new IsolatedGenerator({ processOnly: true }), 'ERR_SNOWFLAKE_VALUE', 'processOnly', 'host record');
  throwsCode(() => new IsolatedGenerator({ maxWaitMs: -1 }), 'ERR_SNOWFLAKE_VALUE', 'maxWaitMs');
  throwsCode(() => new IsolatedGenerator({ maxWait: 0 }), 'ERR_SNOWFLAKE_VALUE', 'unknown option', 'maxWait');
  const e = (() => { try { twitter.compose(Date.now(), { worker: 32 }); } catch (e) { return e; } })();
  eq([e.field, e.min, e.max, e.value], ['worker', 0, 31, 32], 'detail fields');
  eq(twitter.decode(0n).fields, { datacenter: 0, worker: 0 }, 'a layout is unchanged after errors');
  // A message quoting the caller's text crosses intact (JSON-escaped in the module).
  throwsCode(() => new Layout('tw"it\\ter\n\u00e9'), 'ERR_SNOWFLAKE_LAYOUT', 'quotes in a spec', 'tw"it\\ter');
  // A freed object is refused, never read from freed memory.
  const freed = new Layout('discord');
  const freedGen = new IsolatedGenerator({ layout: freed });
  freed.free();
  freedGen.free();
  throwsCode(() => freed.decode(1n), 'ERR_SNOWFLAKE_VALUE', 'a freed layout', 'freed');
  throwsCode(() => freedGen.nextIdAt(1_700_000_000_000), 'ERR_SNOWFLAKE_VALUE', 'a freed generator', 'freed');
  checked += 20;

  // An isolated generator over the system clock and over a caller's clock that stands still:
  // unique and increasing (a full tick moves the caller's clock on, as core's ManualClock).
  const live = new IsolatedGenerator({ layout: 'twitter', node: { datacenter: 1, worker: 3 } });
  const ids = [live.nextId(), ...live.nextIds(20000), live.tryNextId()];
  for (let i = 1; i < ids.length; i++) if (!(ids[i] > ids[i - 1])) fail(`system clock: ID ${i}`, ids[i], `> ${ids[i - 1]}`);
  eq(twitter.decode(ids[ids.length - 1]).fields, { datacenter: 1, worker: 3 }, 'node values');
  const start = 1_700_000_000_000;
  const still = new IsolatedGenerator({ layout: 'game', node: 'platform=1,area=2,app=3', clock: () => start });
  const stillIds = still.nextIds(1000); // 64 a tick: the generator waits, moving the clock on
  for (let i = 1; i < stillIds.length; i++) if (!(stillIds[i] > stillIds[i - 1])) fail(`caller's clock: ID ${i}`, stillIds[i], `> ${stillIds[i - 1]}`);
  eq(new Layout('game').decode(stillIds[0]).unixMs, start, "the caller's clock");
  throwsCode(() => new IsolatedGenerator({ layout: 'game', maxWaitMs: 0, clock: () => start }).nextIds(65), 'ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED', 'maxWaitMs: 0 never waits');
  return `${checked} vectors, ${ids.length + stillIds.length} IDs`;
}
