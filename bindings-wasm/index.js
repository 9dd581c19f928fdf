// @libsnowflake/wasm's main entry: the module beside this file, instantiated on import (a
// top-level await), so that `import { Layout } from '@libsnowflake/wasm'` is ready to use.
// Where the module must be given (a Cloudflare Worker imports it as a WebAssembly.Module),
// import '@libsnowflake/wasm/manual' and call init(module) instead.
import { init, version } from './snowflake.js';

export { Layout, PublicIds, IsolatedGenerator, encode, decodeStr, init, initSync, version } from './snowflake.js';

await init();

/** The library version (core's, from Cargo; equal to the npm package's). */
export const VERSION = version();
