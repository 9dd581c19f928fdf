<?php

declare(strict_types=1);

namespace Snowflake;

/**
 * A shared state (`shared=`) exists with another layout, node values or policy, or belongs to another user (status 12, ERR_SNOWFLAKE_SHARED_MISMATCH): every process opening one name must agree on all of them.
 */
class SharedMismatchException extends SnowflakeException
{
}
