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
}
