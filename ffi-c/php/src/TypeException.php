<?php

declare(strict_types=1);

namespace Snowflake;

/**
 * An option or node value of the wrong PHP type (a float or a string for a whole number, a
 * bool for a number), as the library reports it (`ERR_SNOWFLAKE_TYPE`): a `\TypeError`, as
 * PHP's own functions raise for a wrong type, with the status, code and detail of every
 * {@see SnowflakeException}.
 */
final class TypeException extends \TypeError
{
    /** The C `SnowflakeStatus` (`SnowflakeException::STATUS_TYPE`). */
    public readonly int $status;
    /** `ERR_SNOWFLAKE_TYPE`. */
    public readonly string $statusCode;
    /** The library's explanation, which is also the message. */
    public readonly string $detail;

    public function __construct(string $detail, int $status, string $statusCode = 'ERR_SNOWFLAKE_TYPE')
    {
        parent::__construct($detail, $status);
        $this->status = $status;
        $this->detail = $detail;
        $this->statusCode = $statusCode;
    }
}
