<?php

declare(strict_types=1);

namespace Snowflake;

/** One bit field of a layout, from `Layout::$fields`. */
final class Field
{
    /** The largest value the field holds: 2^bits - 1 (time and sequence leave at most 62 bits to a node field, 63 to time). */
    public readonly int $max;

    public function __construct(
        public readonly string $name,
        public readonly int $bits,
        /** The position of the field's lowest bit in the ID. */
        public readonly int $shift,
        public readonly FieldKind $kind,
    ) {
        $this->max = $bits >= 63 ? PHP_INT_MAX : (1 << $bits) - 1;
    }
}
