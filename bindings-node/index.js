// libsnowflake for Node (CommonJS entry). native.js loads the addon (a prebuilt platform
// package, or a from-source build in a checkout); everything here forwards to it.
'use strict';

const native = require('./native.js').load();

const { Layout, PublicIds, encode, decodeStr, VERSION } = native;

class Generator extends native.Generator {
  // new Generator(), new Generator(layout, options), new Generator(options): the native
  // constructor reads which it is.
  constructor(...args) {
    super(...args);
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
