<?php

declare(strict_types=1);

namespace Snowflake;

/**
 * The process's generator made from the environment (`new Generator()`), made on first use:
 * in each PHP-FPM worker, after the master forked it. The adapters' default.
 */
final class ProcessGenerator
{
    private static ?Generator $generator = null;
    private static ?int $pid = null;

    private function __construct()
    {
    }

    public static function get(): Generator
    {
        // A generator must not cross fork(): a new process (pcntl_fork) makes its own.
        if (self::$generator === null || self::$pid !== getmypid()) {
            self::$generator = new Generator();
            self::$pid = getmypid();
        }
        return self::$generator;
    }
}
