// From an ES module: node check.mjs <tests/vectors> <version> (see vectors.cjs).
import { Layout, Generator, PublicIds, encode, decodeStr, VERSION } from 'libsnowflake';
import check from './vectors.cjs';
import { stringify, parse } from 'libsnowflake/json';
import { createRequire } from 'node:module';

const summary = check({ Layout, Generator, PublicIds, encode, decodeStr, VERSION }, process.argv[2], process.argv[3]);
// The adapters ship in the package: JSON needs nothing; the ORM ones resolve (their ORMs are
// optional peer dependencies, not installed here).
if (parse(stringify({ id: 2125646515509792768n }), { ids: ['id'] }).id !== 2125646515509792768n) throw new Error('libsnowflake/json');
const require = createRequire(import.meta.url);
for (const m of ['libsnowflake/typeorm', 'libsnowflake/drizzle']) require.resolve(m);
console.log(`ok esm ${VERSION} ${summary} from ${import.meta.resolve('libsnowflake')}`);
