<?php

declare(strict_types=1);

namespace Snowflake;

/**
 * A bad node value, option or argument (status 4, ERR_SNOWFLAKE_VALUE; status 2 for text
 * that is not UTF-8): a value outside its field (the message names the field, the value and
 * the largest allowed), an unknown field or option, a negative number, a string with a NUL
 * byte. Wrong PHP types are `TypeError`s instead.
 */
class ValueException extends SnowflakeException
{
    /** @internal a PHP-side check, worded like the library's own message */
    public static function of(string $detail): self
    {
        return new self($detail, self::STATUS_VALUE);
    }
}
