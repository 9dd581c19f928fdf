/** libsnowflake/typeorm: Snowflake IDs in TypeORM entities. */
import type { ColumnOptions, EntitySubscriberInterface, InsertEvent, ValueTransformer } from 'typeorm'
import type { Generator } from './index'

/** bigint in the entity, BIGINT text in the database. */
export declare const snowflakeTransformer: ValueTransformer
/** Column options of a Snowflake column (for EntitySchema). */
export declare function snowflakeColumnOptions(options?: ColumnOptions): ColumnOptions
/** `@Column` of a Snowflake ID. */
export declare function SnowflakeColumn(options?: ColumnOptions): PropertyDecorator
/** `@PrimaryColumn` of a Snowflake ID, filled on insert by the subscriber. */
export declare function SnowflakePrimaryColumn(options?: ColumnOptions): PropertyDecorator
/** Fills Snowflake primary keys from the process's generator (the environment's configuration). */
export declare const SnowflakeSubscriber: new () => EntitySubscriberInterface<any> & { beforeInsert(event: InsertEvent<any>): void }
/** A subscriber class filling Snowflake primary keys from `generator`. */
export declare function snowflakeSubscriber(generator?: Generator): new () => EntitySubscriberInterface<any> & { beforeInsert(event: InsertEvent<any>): void }
