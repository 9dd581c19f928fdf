<?php

declare(strict_types=1);

namespace Snowflake;

/**
 * A file, lock, memory map or network operation of a shared state, state file or lease failed (status 15, ERR_SNOWFLAKE_IO); the message names the operation, the path and the OS error.
 */
class IoException extends SnowflakeException
{
}
