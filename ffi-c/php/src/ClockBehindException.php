<?php

declare(strict_types=1);

namespace Snowflake;

/**
 * The clock is behind the generator (it stepped back, or more was borrowed ahead than
 * `max_drift_ms` allows) for longer than `max_wait_ms` (status 7, ERR_SNOWFLAKE_CLOCK_BEHIND).
 */
class ClockBehindException extends ClockException
{
}
