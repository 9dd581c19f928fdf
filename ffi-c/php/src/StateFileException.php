<?php

declare(strict_types=1);

namespace Snowflake;

/**
 * A state file (`state_file=`) is corrupt or belongs to another layout or node (status 14, ERR_SNOWFLAKE_STATE_FILE).
 */
class StateFileException extends SnowflakeException
{
}
