<?php

declare(strict_types=1);

namespace Snowflake;

/**
 * An encoded ID string is malformed (length, alphabet, above 2^64 - 1), or an ID has bits set above its layout's width (status 5, ERR_SNOWFLAKE_INVALID_ID).
 */
class InvalidIdException extends SnowflakeException
{
}
