/** libsnowflake/drizzle: a Drizzle custom type for Snowflake IDs in PostgreSQL. */
import type { Generator } from './index'

/** A BIGINT column holding a bigint: `snowflakeId('parent_id')`. */
export declare const snowflakeId: (name: string) => any
/** A BIGINT primary key whose default is a new ID of `generator` (the process's by default). */
export declare function snowflakeKey(name: string, generator?: Generator): any
