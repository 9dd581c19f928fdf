<?php

declare(strict_types=1);

namespace Snowflake\Doctrine;

use Doctrine\DBAL\Platforms\AbstractPlatform;
use Doctrine\DBAL\Types\BigIntType;
use Snowflake\Id;
use Snowflake\ValueException;

/**
 * A Doctrine DBAL type for Snowflake IDs: a `BIGINT` column, an int in PHP (as this package
 * hands IDs out), checked on the way in.
 *
 * ```php
 * Type::addType(SnowflakeType::NAME, SnowflakeType::class);
 * #[ORM\Column(type: SnowflakeType::NAME)]
 * ```
 *
 * Works with DBAL 3 and 4.
 */
class SnowflakeType extends BigIntType
{
    /** The type's name. */
    public const NAME = 'snowflake_id';

    public function getName(): string
    {
        return self::NAME;
    }

    public function convertToPHPValue(mixed $value, AbstractPlatform $platform): int|string|null
    {
        if ($value === null) {
            return null;
        }
        // PDO returns BIGINT as an int (SQLite, MySQL) or a string (PostgreSQL).
        return Id::fromU64(Id::toU64($value, 'id'));
    }

    public function convertToDatabaseValue(mixed $value, AbstractPlatform $platform): mixed
    {
        if ($value === null) {
            return null;
        }
        $id = Id::fromU64(Id::toU64($value, 'id'));
        if (is_string($id)) {
            throw ValueException::of("id = $id does not fit a BIGINT column (0 to 2^63 - 1): a 64-bit layout's IDs from 2^63 on need a 63-bit layout (twitter, js53, ...)");
        }
        return (string) $id;
    }

    /** DBAL 3 tells types of one SQL type apart by a column comment (DBAL 4 needs none). */
    public function requiresSQLCommentHint(AbstractPlatform $platform): bool
    {
        return true;
    }
}
