// The package's types (index.d.ts, snowflake.d.ts) as a TypeScript user meets them: this file
// compiles (tsc --strict), and each @ts-expect-error line must be an error.
import { Layout, IsolatedGenerator, PublicIds, encode, decodeStr, VERSION, type SnowflakeError, type Parts } from '@libsnowflake/wasm'
import { init, initSync } from '@libsnowflake/wasm/manual'

const twitter = new Layout('twitter')
const parts: Parts = twitter.decode(1541815603606036480n)
const unixMs: number = parts.unixMs
const generator = new IsolatedGenerator({ layout: twitter, node: { datacenter: 1 }, maxWaitMs: 0, clock: () => Date.now() })
const id: bigint = generator.nextId()
const ids: BigUint64Array = generator.nextIds(10)
const text: string = encode(id, 'base62', { reverse: true })
const back: bigint = decodeStr(text, 'base62', { reverse: true })
const version: string = VERSION
const pub: string = new PublicIds(new Uint8Array(16), 'hex').encode(id)
const ready: Promise<unknown> = init()
try {
  twitter.decode(-1n)
} catch (e) {
  const code: string = (e as SnowflakeError).code
}
// @ts-expect-error: no coordinated options on the isolated generator
new IsolatedGenerator({ shared: 'x' })
// @ts-expect-error: an encoding by name only
encode(id, 'base64')
// @ts-expect-error: initSync needs the module (or its bytes)
initSync()
export { unixMs, ids, back, version, pub, ready }
