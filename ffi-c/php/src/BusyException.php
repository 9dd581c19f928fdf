<?php

declare(strict_types=1);

namespace Snowflake;

/**
 * Another process held a lock of the host's record of these layout and node values, of a state
 * file or of a host lease longer than `max_wait_ms` allows (a stopped process, most likely); the
 * message names it. Nothing was issued: retry (status 17, ERR_SNOWFLAKE_BUSY).
 */
class BusyException extends SnowflakeException
{
}
