// libsnowflake for Node (ES module entry): the same objects as the CommonJS entry.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const lib = require('./index.js');

export const { Layout, Generator, PublicIds, encode, decodeStr, VERSION } = lib;
export default lib;
