/* @libsnowflake/wasm's main entry: the module instantiated on import (a top-level await). */
export * from './snowflake.js'
/** The library version (core's, from Cargo; equal to the npm package's). */
export declare const VERSION: string
