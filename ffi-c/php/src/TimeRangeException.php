<?php

declare(strict_types=1);

namespace Snowflake;

/**
 * An instant before the layout's epoch or past its last instant (status 6, ERR_SNOWFLAKE_TIME_RANGE).
 */
class TimeRangeException extends SnowflakeException
{
}
