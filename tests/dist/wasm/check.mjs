// The installed @libsnowflake/wasm (its main entry: the module instantiated on import) against
// the shared vectors, in Node, Bun or Deno: `<runtime> check.mjs <vectors dir> <version>`.
import * as lib from '@libsnowflake/wasm';
import { readFile } from 'node:fs/promises';
import { check } from './vectors.mjs';

const [vectors, version] = (globalThis.Deno ? Deno.args : process.argv.slice(2));
if (lib.VERSION !== version) throw new Error(`version ${lib.VERSION}, want ${version}`);
const summary = await check(lib, async (name) => JSON.parse(await readFile(`${vectors}/${name}`, 'utf8')));
const runtime = globalThis.Deno ? 'deno' : globalThis.Bun ? 'bun' : 'node';
console.log(`ok wasm ${runtime} ${lib.VERSION} ${summary}`);
