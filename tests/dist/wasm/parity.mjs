// The same calls through the native addon (`libsnowflake`) and @libsnowflake/wasm give the
// same answers, and the same errors: code, class, and every detail field the addon sets (the
// WebAssembly may set more: a sequence is checked by core there, with core's details; messages
// may differ in the call named at their start). `node parity.mjs <libsnowflake's index.mjs>`, from a project
// that installed @libsnowflake/wasm.
import * as wasm from '@libsnowflake/wasm';

const native = await import(process.argv[2]);
const big = (_, v) => (typeof v === 'bigint' ? `${v}n` : v);

function outcome(f) {
  try {
    const v = f();
    return { value: JSON.stringify(v instanceof BigUint64Array ? [...v] : v, big) };
  } catch (e) {
    const { message, stack, ...detail } = Object.fromEntries(Object.entries(e));
    return { error: e.code, class: e.constructor.name, detail };
  }
}

const T = 1656432460105;
const key = new Uint8Array(16).map((_, i) => i);
// [what, a call given the package (native, or wasm with its generator named as native's)]
const cases = [];
const add = (what, f) => cases.push([what, f]);
for (const spec of ['twitter', 'discord', 'sonyflake', '', 'twiter', 'time:41,sequence:0', 'time:41,worker:10,sequence:12;epoch=0', 42, null]) {
  add(`new Layout(${JSON.stringify(spec)})`, ({ Layout }) => String(new Layout(spec)));
}
for (const id of [0n, 1541815603606036480n, '1541815603606036480', 2n ** 63n, -1n, 2n ** 64n, '12x', '', ' 1', 1.5, -1, 2 ** 53, 7, {}, null, undefined]) {
  add(`decode(${JSON.stringify(id, big)})`, ({ Layout }) => new Layout('twitter').decode(id));
  add(`toUuid(${JSON.stringify(id, big)})`, ({ Layout }) => new Layout('twitter').toUuid(id));
  add(`encode(${JSON.stringify(id, big)}, base62)`, ({ encode }) => encode(id, 'base62'));
}
for (const [fields, seq] of [[{ datacenter: 11, worker: 26 }, 0], ['datacenter=1,worker=2', 5], [{}, undefined], [{ worker: 32 }, 0],
  [{ worker: true }, 0], [{ worker: -1 }, 0], [{ worker: 1.5 }, 0], [{ worker: 3n }, 4096], [{ shard: 1 }, 0], ['worker=x', 0],
  [[1], 0], [{ worker: 1 }, -1], [{ worker: 1 }, 'x'], [{ worker: 2n ** 70n }, 0]]) {
  add(`compose(T, ${JSON.stringify(fields, big)}, ${seq})`, ({ Layout }) => new Layout('twitter').compose(T, fields, seq));
}
for (const t of [T, new Date(T), -1, 0, 1.5, 2 ** 60, new Date(NaN), '1', null]) {
  add(`minId(${JSON.stringify(t)})`, ({ Layout }) => new Layout('twitter').minId(t));
  add(`maxId(${JSON.stringify(t)})`, ({ Layout }) => new Layout('twitter').maxId(t));
}
for (const u of ['0181ab11-8149-75e8-8000-000000000000', '018bcfe5-6800-70fc-8050-000000000000', '', 'zz', 42]) {
  add(`fromUuid(${JSON.stringify(u)})`, ({ Layout }) => new Layout('twitter').fromUuid(u));
}
for (const [text, enc, opts] of [['zzzzzzzzzzz', 'base62'], ['0000000000o1l', 'base32'], ['', 'decimal'], ['1', 'base64'],
  ['ffffffffffffffff', 'hex', { reverse: true }], ['1', 'hex', { rev: true }], [1, 'hex'], ['1', 42]]) {
  add(`decodeStr(${JSON.stringify([text, enc, opts])})`, ({ decodeStr }) => decodeStr(text, enc, opts));
}
add('encode reverse', ({ encode }) => encode(5n, 'hex', { reverse: true }));
add('encode bad option', ({ encode }) => encode(5n, 'hex', { rev: true }));
add('encode bad reverse', ({ encode }) => encode(5n, 'hex', { reverse: 1 }));
for (const [k, enc] of [[key, undefined], [key, 'hex'], [key.slice(0, 15), undefined], [key, 'decimal'], ['k', undefined], [[1, 2], undefined]]) {
  add(`PublicIds(${k.length}, ${enc})`, ({ PublicIds }) => {
    const p = new PublicIds(k, enc);
    return [p.encode(1541815603606036480n), p.decode(p.encode(7n)), p.encoding];
  });
}
add('PublicIds decode bad text', ({ PublicIds }) => new PublicIds(key).decode('!!!!!!!!!!!'));
// The generators: native's isolated one and the wasm one, on the caller's clock.
const gens = [
  [{ layout: 'twitter', node: { datacenter: 1, worker: 3 } }, [T, T, T - 1, T + 5, -1, 0, 1.5]],
  [{ layout: 'game', node: 'platform=1,area=2,app=3', maxWaitMs: 0 }, Array(70).fill(T)],
  [{ layout: 'twitter', node: { worker: 1 }, maxDriftMs: 2, maxWaitMs: 0 }, [T, T - 1, T - 3]],
  [{ layout: 'twitter', node: { worker: 99 } }, [T]],
  [{ layout: 'twitter', maxWaitMs: -1 }, [T]],
  [{ layout: 'twitter', maxWait: 0 }, [T]],
  [{ layout: 'twitter', rollover: 'nope' }, [T]],
  [{ layout: 'twitter', sequenceStart: 'spread:7' }, [T, T + 1, T + 2]],
];
gens.forEach(([options, times], i) => {
  add(`generator ${i} ${JSON.stringify(options)}`, ({ Generator, IsolatedGenerator }) => {
    const g = Generator ? new Generator({ ...options, isolated: true }) : new IsolatedGenerator(options);
    return times.map((t) => outcome(() => g.nextIdAt(t)));
  });
});

let same = 0;
const differ = [];
for (const [what, f] of cases) {
  const a = outcome(() => f(native));
  const b = outcome(() => f({ ...wasm, Generator: undefined }));
  // The addon's detail fields, with the WebAssembly's values: equal when those agree.
  const wasmView = b.detail && a.detail ? { ...b, detail: Object.fromEntries(Object.keys(a.detail).map((k) => [k, b.detail[k]])) } : b;
  if (JSON.stringify(a, big) === JSON.stringify(wasmView, big)) same++;
  else differ.push(`${what}:\n  native ${JSON.stringify(a, big)}\n  wasm   ${JSON.stringify(b, big)}`);
}
if (differ.length) {
  console.log(differ.join('\n'));
  console.log(`${differ.length} of ${cases.length} calls differ`);
  process.exit(1);
}
console.log(`ok parity ${same} calls: the same answers and errors (code, class, the addon's detail fields) as the native addon`);
