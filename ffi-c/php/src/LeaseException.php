<?php

declare(strict_types=1);

namespace Snowflake;

/**
 * No worker value could be leased (`lease=local`, `lease=redis://...`), or the lease lapsed and the generator stopped issuing (status 13, ERR_SNOWFLAKE_LEASE).
 */
class LeaseException extends SnowflakeException
{
}
