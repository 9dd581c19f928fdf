<?php

declare(strict_types=1);

namespace Snowflake;

/**
 * The generator cannot issue now and the options did not let it wait long enough
 * (`max_wait_ms`): retry after `$retryAfterMs` milliseconds. Catch this to handle both of its
 * subclasses the same way.
 */
abstract class ClockException extends SnowflakeException
{
    /** When a retry can succeed, in milliseconds from the failure. */
    public readonly int $retryAfterMs;

    public function __construct(string $detail, int $status, string $statusCode, int $retryAfterMs)
    {
        parent::__construct($detail, $status, $statusCode);
        $this->retryAfterMs = $retryAfterMs;
    }
}
