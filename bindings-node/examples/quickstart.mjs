// Quick start (ES module). Run: node examples/quickstart.mjs
import { Generator, Layout } from 'libsnowflake';

const ids = new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 3 } }); // all in one object

// nextIdString() is the decimal form, ready for JSON.
console.log(JSON.stringify({ id: ids.nextIdString() }));

// Range queries: every ID made during the last hour.
const twitter = new Layout('twitter');
const from = twitter.minId(Date.now() - 3_600_000);
const to = twitter.maxId(new Date());
console.log(`SELECT * FROM events WHERE id BETWEEN ${from} AND ${to}`);

// A batch, as a BigUint64Array; a wait for the clock off the event loop.
const batch = ids.nextIds(1000);
const later = await ids.nextIdAsync();
console.log(batch.length, later > batch[batch.length - 1]);
