// `node bench.mjs`: what the Node binding costs and how close to a layout's capacity it gets.
// Prints ns per nextId() on a layout whose capacity is not the limit, the share of twitter's
// capacity (4,096 IDs/ms) that a tight nextId() loop and nextIds(1_000_000) reach (checking
// that every ID is unique and increasing), and what BigInt creation costs for comparison.
import { Generator } from './index.mjs';

const SPACIOUS = 'time:41,worker:1,sequence:22;epoch=1288834974657'; // 4M IDs per ms
const now = () => process.hrtime.bigint();

function nsPerCall(fn, n) {
  for (let i = 0; i < 100_000; i++) fn(); // warm up (JIT)
  const t0 = now();
  for (let i = 0; i < n; i++) fn();
  return Number(now() - t0) / n;
}

// Share of capacity: IDs issued / (ticks spanned x IDs per tick), and no ID twice.
function capacityShare(ids, layout) {
  for (let i = 1; i < ids.length; i++) {
    if (ids[i] <= ids[i - 1]) throw new Error(`duplicate or decreasing ID at ${i}: ${ids[i - 1]} then ${ids[i]}`);
  }
  const first = layout.decode(ids[0]).tick;
  const last = layout.decode(ids[ids.length - 1]).tick;
  return (100 * ids.length) / ((last - first + 1) * layout.capacityPerTick);
}

const results = {};

{
  const g = new Generator({ layout: SPACIOUS, node: { worker: 1 } });
  results['nextId() ns/call (capacity not the limit)'] = nsPerCall(() => g.nextId(), 5_000_000).toFixed(1);
  results['nextIdString() ns/call'] = nsPerCall(() => g.nextIdString(), 2_000_000).toFixed(1);
  let x = 0;
  results['JS BigInt(i) creation ns/op (for comparison)'] = nsPerCall(() => BigInt(++x), 5_000_000).toFixed(1);
}

{
  const g = new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 2 } });
  const n = 4096 * 1000; // a second's worth of twitter capacity
  const ids = new BigUint64Array(n);
  for (let i = 0; i < 200_000; i++) g.nextId(); // warm up
  const t0 = now();
  for (let i = 0; i < n; i++) ids[i] = g.nextId();
  const ms = Number(now() - t0) / 1e6;
  results['twitter tight nextId() loop: % of capacity'] = capacityShare(ids, g.layout).toFixed(2);
  results['twitter tight nextId() loop: IDs/s'] = Math.round((n / ms) * 1000);
}

{
  const g = new Generator({ layout: 'twitter', node: { datacenter: 1, worker: 3 } });
  g.nextIds(100_000); // warm up
  const ids = g.nextIds(1_000_000);
  results['twitter nextIds(1_000_000): % of capacity'] = capacityShare(ids, g.layout).toFixed(2);
}

for (const [k, v] of Object.entries(results)) console.log(`${k.padEnd(48)} ${v}`);
