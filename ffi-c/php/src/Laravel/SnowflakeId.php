<?php

declare(strict_types=1);

namespace Snowflake\Laravel;

use Illuminate\Contracts\Database\Eloquent\CastsAttributes;
use Illuminate\Contracts\Database\Eloquent\SerializesCastableAttributes;
use Snowflake\Id;
use Snowflake\ValueException;

/**
 * An Eloquent cast for Snowflake ID columns (`BIGINT`): an int in PHP, checked when set, and a
 * decimal string in `toArray()` / `toJson()`, so JavaScript clients never round it.
 *
 * ```php
 * protected $casts = ['id' => SnowflakeId::class, 'parent_id' => SnowflakeId::class];
 * ```
 *
 * Works with Laravel 8 to 12 (`illuminate/database`).
 */
final class SnowflakeId implements CastsAttributes, SerializesCastableAttributes
{
    /** The largest ID a signed BIGINT column holds. */
    private const BIGINT_MAX = PHP_INT_MAX;

    /**
     * @param array<string, mixed> $attributes
     */
    public function get($model, string $key, mixed $value, array $attributes): int|string|null
    {
        if ($value === null) {
            return null;
        }
        // PDO returns BIGINT as an int (SQLite, MySQL) or a string (PostgreSQL).
        return Id::fromU64(Id::toU64($value, $key));
    }

    /**
     * @param array<string, mixed> $attributes
     */
    public function set($model, string $key, mixed $value, array $attributes): int|string|null
    {
        if ($value === null) {
            return null;
        }
        $id = Id::fromU64(Id::toU64($value, $key));
        if (is_string($id)) {
            throw ValueException::of("$key = $id does not fit a BIGINT column (0 to 2^63 - 1): a 64-bit layout's IDs from 2^63 on need a 63-bit layout (twitter, js53, ...)");
        }
        return $id;
    }

    /**
     * @param array<string, mixed> $attributes
     */
    public function serialize($model, string $key, mixed $value, array $attributes): ?string
    {
        return $value === null ? null : (string) $value;
    }
}
