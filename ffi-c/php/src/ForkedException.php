<?php

declare(strict_types=1);

namespace Snowflake;

/**
 * The generator was inherited through fork() (pcntl_fork, or a PHP-FPM master that created it before forking its workers): it would repeat the parent's IDs. Create the generator in the child (status 9, ERR_SNOWFLAKE_FORKED).
 */
class ForkedException extends SnowflakeException
{
}
