// `node bench.mjs <libsnowflake's index.mjs>` from a project that installed both packages:
// decode speed (IDs a second) of @libsnowflake/wasm beside the native addon's, in one run, and
// the module's size raw and gzipped. Each figure is the best and the median of 5 rounds, the
// two packages taking turns, because a shared machine's other load only ever slows a round.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { gzipSync } from 'node:zlib';
import * as wasm from '@libsnowflake/wasm';

const native = await import(process.argv[2]);
const N = 1_000_000;
const ids = new BigUint64Array(N);
const base = 1541815603606036480n;
for (let i = 0; i < N; i++) ids[i] = base + BigInt(i) * 4099n;
const strings = Array.from(ids.subarray(0, N / 10), String);

function rate(f, n) {
  const t0 = process.hrtime.bigint();
  f(n);
  return (n * 1e9) / Number(process.hrtime.bigint() - t0);
}
const benches = {
  'decode(bigint)': (lib) => {
    const l = new lib.Layout('twitter');
    let x = 0;
    return (n) => { for (let i = 0; i < n; i++) x += l.decode(ids[i]).sequence; return x; };
  },
  'decode(string)': (lib) => {
    const l = new lib.Layout('twitter');
    let x = 0;
    return (n) => { for (let i = 0; i < n; i++) x += l.decode(strings[i]).sequence; return x; };
  },
  "encode(id, 'base62')": (lib) => {
    let x = 0;
    return (n) => { for (let i = 0; i < n; i++) x += lib.encode(ids[i], 'base62').length; return x; };
  },
  'toUuid(id)': (lib) => {
    const l = new lib.Layout('twitter');
    let x = 0;
    return (n) => { for (let i = 0; i < n; i++) x += l.toUuid(ids[i]).length; return x; };
  },
};
const fmt = (r) => `${(r / 1e6).toFixed(2)} M/s`;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
for (const [name, make] of Object.entries(benches)) {
  const n = name.includes('string') ? N / 10 : N;
  const runs = { native: [], wasm: [] };
  const fns = { native: make(native), wasm: make(wasm) };
  fns.native(10_000); // warm up (JIT)
  fns.wasm(10_000);
  for (let round = 0; round < 5; round++) {
    for (const which of ['native', 'wasm']) runs[which].push(rate(fns[which], n));
  }
  const best = { native: Math.max(...runs.native), wasm: Math.max(...runs.wasm) };
  console.log(`${name.padEnd(22)} native ${fmt(best.native)} (median ${fmt(median(runs.native))}), ` +
    `wasm ${fmt(best.wasm)} (median ${fmt(median(runs.wasm))}): wasm/native ${(best.wasm / best.native).toFixed(2)}`);
}
const require = createRequire(import.meta.url);
const module = await readFile(require.resolve('@libsnowflake/wasm/snowflake.wasm'));
console.log(`snowflake.wasm: ${module.length} bytes, ${gzipSync(module, { level: 9 }).length} gzipped`);
