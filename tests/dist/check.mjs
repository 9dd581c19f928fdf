// From an ES module: node check.mjs <tests/vectors> <version> (see vectors.cjs).
import { Layout, Generator, encode, decodeStr, VERSION } from 'libsnowflake';
import check from './vectors.cjs';

const summary = check({ Layout, Generator, encode, decodeStr, VERSION }, process.argv[2], process.argv[3]);
console.log(`ok esm ${VERSION} ${summary} from ${import.meta.resolve('libsnowflake')}`);
