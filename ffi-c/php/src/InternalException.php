<?php

declare(strict_types=1);

namespace Snowflake;

/**
 * A failure that bad input cannot cause: a NULL pointer, a buffer too small, a panic inside the library (statuses 1, 10, 11). A bug of this package or the library: please report it.
 */
class InternalException extends SnowflakeException
{
}
