// libsnowflake/drizzle (ES module entry): the same objects as the CommonJS entry.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const lib = require('./drizzle.js');

export default lib;
export const { snowflakeId, snowflakeKey } = lib;
