<?php

declare(strict_types=1);

namespace Snowflake\Laravel;

use Snowflake\Generator;
use Snowflake\ProcessGenerator;

/**
 * Snowflake primary keys for Eloquent models: a new ID from a generator for every model
 * created without one, a non-incrementing integer key, and the {@see SnowflakeId} cast on it
 * (a decimal string in JSON).
 *
 * ```php
 * class Order extends Model
 * {
 *     use HasSnowflakeIds;
 * }
 * ```
 *
 * The generator is the process's, made from the environment on first use
 * (`new Generator()`: `SNOWFLAKE_LAYOUT`, `SNOWFLAKE_NODE`, `SNOWFLAKE_OPTIONS`), in each
 * PHP-FPM worker: no code sets node values. Override `snowflakeGenerator()` to choose one in
 * code, and `uniqueIds()` to fill other columns too (the key alone by default). The IDs are set
 * in the `creating` event (the application's event dispatcher, which every Laravel app has).
 * Works with Laravel 8 to 12.
 */
trait HasSnowflakeIds
{
    /** Registers the `creating` listener that issues the IDs. */
    public static function bootHasSnowflakeIds(): void
    {
        static::creating(static function ($model): void {
            foreach ($model->uniqueIds() as $column) {
                if ($model->getAttribute($column) === null) {
                    $model->setAttribute($column, $model->newUniqueId());
                }
            }
        });
    }

    /** Adds the cast of the key (unless the model casts it already). */
    public function initializeHasSnowflakeIds(): void
    {
        $key = $this->getKeyName();
        if (!isset($this->casts[$key])) {
            $this->casts[$key] = SnowflakeId::class;
        }
    }

    /**
     * The columns that get a new ID when a model is created without one.
     *
     * @return list<string>
     */
    public function uniqueIds(): array
    {
        return [$this->getKeyName()];
    }

    /** A new ID for a model being created. */
    public function newUniqueId(): int|string
    {
        return $this->snowflakeGenerator()->nextId();
    }

    /** The generator of this model's IDs: the process's, from the environment. */
    public function snowflakeGenerator(): Generator
    {
        return ProcessGenerator::get();
    }

    /** The key does not come from the database. */
    public function getIncrementing(): bool
    {
        return false;
    }

    /** The key is an integer. */
    public function getKeyType(): string
    {
        return 'int';
    }
}
