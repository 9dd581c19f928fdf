<?php

declare(strict_types=1);

namespace Snowflake;

/**
 * Every error of this package: a failure status of the C library, or bad input that the PHP
 * side refused before calling it.
 *
 * `$status` is the C `SnowflakeStatus` (also `getCode()`), `$statusCode` its stable name
 * (`ERR_SNOWFLAKE_LAYOUT`, ... as in the shared test vectors and the other bindings), and
 * `$detail` the library's explanation (`snowflake_last_error()`: which field, which value,
 * how far the clock is behind), which is also the message. Status 0 means the error did not
 * come from the library (it could not be loaded).
 */
class SnowflakeException extends \RuntimeException
{
    public const STATUS_OK = 0;
    public const STATUS_NULL_ARGUMENT = 1;
    public const STATUS_INVALID_UTF8 = 2;
    public const STATUS_LAYOUT = 3;
    public const STATUS_VALUE = 4;
    public const STATUS_INVALID_ID = 5;
    public const STATUS_TIME_RANGE = 6;
    public const STATUS_CLOCK_BEHIND = 7;
    public const STATUS_SEQUENCE_EXHAUSTED = 8;
    public const STATUS_FORKED = 9;
    public const STATUS_BUFFER_TOO_SMALL = 10;
    public const STATUS_PANIC = 11;
    public const STATUS_SHARED_MISMATCH = 12;
    public const STATUS_LEASE = 13;
    public const STATUS_STATE_FILE = 14;
    public const STATUS_IO = 15;
    public const STATUS_TYPE = 16;
    public const STATUS_BUSY = 17;

    /** The subclass for each status; the rest are SnowflakeException itself. */
    private const CLASSES = [
        self::STATUS_NULL_ARGUMENT => InternalException::class,
        self::STATUS_INVALID_UTF8 => ValueException::class,
        self::STATUS_LAYOUT => LayoutException::class,
        self::STATUS_VALUE => ValueException::class,
        self::STATUS_INVALID_ID => InvalidIdException::class,
        self::STATUS_TIME_RANGE => TimeRangeException::class,
        self::STATUS_CLOCK_BEHIND => ClockBehindException::class,
        self::STATUS_SEQUENCE_EXHAUSTED => SequenceExhaustedException::class,
        self::STATUS_FORKED => ForkedException::class,
        self::STATUS_BUFFER_TOO_SMALL => InternalException::class,
        self::STATUS_PANIC => InternalException::class,
        self::STATUS_SHARED_MISMATCH => SharedMismatchException::class,
        self::STATUS_LEASE => LeaseException::class,
        self::STATUS_STATE_FILE => StateFileException::class,
        self::STATUS_IO => IoException::class,
        self::STATUS_TYPE => TypeException::class,
        self::STATUS_BUSY => BusyException::class,
    ];

    /** The stable codes of the PHP-side checks, which mirror the library's. */
    private const CODES = [
        self::STATUS_LAYOUT => 'ERR_SNOWFLAKE_LAYOUT',
        self::STATUS_VALUE => 'ERR_SNOWFLAKE_VALUE',
        self::STATUS_INVALID_ID => 'ERR_SNOWFLAKE_INVALID_ID',
    ];

    /** The C `SnowflakeStatus`. */
    public readonly int $status;
    /** `snowflake_status_code(status)`: `ERR_SNOWFLAKE_VALUE`, ... ('' for status 0). */
    public readonly string $statusCode;
    /** `snowflake_last_error()` right after the failure, or the PHP side's own explanation. */
    public readonly string $detail;

    /**
     * @param int $status a `STATUS_*` constant
     * @param string $statusCode '' to look it up from the status
     */
    public function __construct(string $detail, int $status, string $statusCode = '', ?\Throwable $previous = null)
    {
        parent::__construct($detail, $status, $previous);
        $this->status = $status;
        $this->detail = $detail;
        $this->statusCode = $statusCode !== '' ? $statusCode : (self::CODES[$status] ?? '');
    }

    /**
     * The exception for a failure status the library just returned, with the library's detail
     * (read at once: it belongs to this thread's last call).
     *
     * @internal
     */
    public static function fromStatus(int $status): SnowflakeException|TypeException
    {
        $ffi = Library::ffi();
        $detail = Library::string($ffi->snowflake_last_error());
        $code = Library::string($ffi->snowflake_status_code($status));
        if ($detail === '') {
            $detail = Library::string($ffi->snowflake_status_str($status));
        }
        $class = self::CLASSES[$status] ?? self::class;
        if (is_subclass_of($class, ClockException::class)) {
            $retry = $ffi->snowflake_last_retry_after_ms();
            return new $class($detail, $status, $code, $retry >= 0 ? $retry : PHP_INT_MAX);
        }
        return new $class($detail, $status, $code);
    }
}
