<?php

declare(strict_types=1);

namespace Snowflake;

/**
 * The layout spec is invalid (status 3, ERR_SNOWFLAKE_LAYOUT): zero-width field, more than 64 bits, no `time` first, no or two `sequence`, unknown preset or option, ...
 */
class LayoutException extends SnowflakeException
{
}
