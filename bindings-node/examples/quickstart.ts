// Quick start (TypeScript). Type-checked against index.d.ts by the tests.
import { Generator, Layout, type Parts, type SnowflakeError } from 'libsnowflake'

const ids = new Generator('twitter', { node: { datacenter: 1, worker: 3 }, maxWaitMs: 50 })

const id: bigint = ids.nextId()
console.log(JSON.stringify({ id: id.toString() }))

const parts: Parts = new Layout('twitter').decode(id)
console.log(parts.unixMs, parts.fields.worker)

// JSON with IDs as strings: a replacer for whole objects that hold bigints.
const row = { id, parentId: ids.nextId(), name: 'x' }
console.log(JSON.stringify(row, (_key, value) => (typeof value === 'bigint' ? value.toString() : value)))

try {
  ids.tryNextId()
} catch (e) {
  const err = e as SnowflakeError
  if (err.code === 'ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED') console.log(`retry in ${err.retryAfterMs} ms`)
  else throw e
}
