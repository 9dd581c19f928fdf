// From CommonJS: node check.cjs <tests/vectors> <version> [<generator options as JSON>] (see vectors.cjs).
'use strict';

const lib = require('libsnowflake');
const check = require('./vectors.cjs');

console.log(`ok cjs ${lib.VERSION} ${check(lib, process.argv[2], process.argv[3], JSON.parse(process.argv[4] || '{}'))} from ${require.resolve('libsnowflake')}`);
