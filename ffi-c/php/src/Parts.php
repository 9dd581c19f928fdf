<?php

declare(strict_types=1);

namespace Snowflake;

/** A decoded ID: `Layout::decode()`. */
final class Parts
{
    public function __construct(
        /** The ID (int, or a decimal string above PHP_INT_MAX). */
        public readonly int|string $id,
        /** The start of its tick, in Unix milliseconds. */
        public readonly int|string $unixMs,
        /** Ticks since the layout's epoch. */
        public readonly int $tick,
        /** The sequence number within the tick. */
        public readonly int $sequence,
        /** @var array<string, int> the node fields, name => value, from the most significant down */
        public readonly array $fields,
    ) {
    }

    /**
     * The start of the ID's tick as a UTC date, milliseconds kept (`->format('Y-m-d\TH:i:s.v\Z')`).
     *
     * @throws TimeRangeException for an instant past the year 9999, which no date holds
     */
    public function dateTime(): \DateTimeImmutable
    {
        $ms = $this->unixMs;
        $date = is_int($ms)
            ? \DateTimeImmutable::createFromFormat('U.v', sprintf('%d.%03d', intdiv($ms, 1000), $ms % 1000))
            : false;
        if ($date === false || (int) $date->format('Y') > 9999) {
            throw new TimeRangeException("time $ms (Unix ms) is past the year 9999: no date holds it", SnowflakeException::STATUS_TIME_RANGE);
        }
        return $date->setTimezone(new \DateTimeZone('UTC'));
    }
}
