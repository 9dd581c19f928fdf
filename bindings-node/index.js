// libsnowflake for Node (CommonJS entry). The native addon (./libsnowflake.node) is built
// from source by the `install` script; everything here forwards to it.
'use strict';

let native;
try {
  native = require('./libsnowflake.node');
} catch (e) {
  if (e && e.code === 'MODULE_NOT_FOUND') {
    const err = new Error(
      'libsnowflake: the native addon is not built. It is built from source when the package is installed, ' +
        'which needs Rust (cargo): install it with rustup, then run `npm rebuild libsnowflake`.',
    );
    err.code = 'ERR_SNOWFLAKE_NOT_BUILT';
    err.cause = e;
    throw err;
  }
  throw e;
}

const { Layout, PublicIds, encode, decodeStr, VERSION } = native;

class Generator extends native.Generator {
  constructor(options) {
    super(options);
    // Per-instance native functions bound to the generator: they skip napi-rs's class
    // dispatch, which measured at more than half the cost of a nextId() call (bench.mjs).
    for (const name of ['nextId', 'tryNextId', 'nextIdString']) {
      Object.defineProperty(this, name, {
        value: this._fastFunction(name),
        writable: true,
        configurable: true,
      });
    }
  }
}

// `for (const id of generator)`: an endless run of nextId(), which throws like nextId().
Object.defineProperty(Generator.prototype, Symbol.iterator, {
  value: function* ids() {
    for (;;) yield this.nextId();
  },
  writable: true,
  configurable: true,
});

module.exports = { Layout, Generator, PublicIds, encode, decodeStr, VERSION };
