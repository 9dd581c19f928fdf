// libsnowflake/json (ES module entry): the same functions as the CommonJS entry.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const lib = require('./json.js');

export const { stringify, parse, bigintReplacer, HAS_RAW_JSON } = lib;
export default lib;
