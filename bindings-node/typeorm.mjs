// libsnowflake/typeorm (ES module entry): the same objects as the CommonJS entry.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const lib = require('./typeorm.js');

export default lib;
export const {
  snowflakeTransformer,
  snowflakeColumnOptions,
  SnowflakeColumn,
  SnowflakePrimaryColumn,
  SnowflakeSubscriber,
  snowflakeSubscriber,
} = lib;
