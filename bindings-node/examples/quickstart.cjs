// Quick start (CommonJS). Run: node examples/quickstart.cjs
const { Generator, Layout, encode } = require('libsnowflake');

// One generator per process is enough; making more with the same layout and node values is
// safe too (they share one state).
// The layout first (default 'twitter'), then the options; node values as an object or as the
// text that C, Python, PHP, the CLI and SNOWFLAKE_NODE take.
const ids = new Generator('twitter', { node: 'datacenter=1,worker=3' });

const id = ids.nextId(); // a bigint, e.g. 1861234567890123776n
// JSON cannot hold a bigint (JSON.stringify throws): send IDs as decimal strings.
console.log(JSON.stringify({ id: id.toString() }));

const parts = new Layout('twitter').decode(id);
console.log(parts.date.toISOString(), parts.fields); // when and where it was made
console.log(encode(id, 'base62')); // 11 characters that sort like the numbers
