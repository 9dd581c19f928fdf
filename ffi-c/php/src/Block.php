<?php

declare(strict_types=1);

namespace Snowflake;

/**
 * IDs of one tick taken at once by `Generator::reserve()`: `first`, `first + stride`, ...,
 * `count` of them, increasing.
 */
final class Block implements \IteratorAggregate, \Countable
{
    public function __construct(
        /** The first ID (int, or a decimal string above PHP_INT_MAX). */
        public readonly int|string $first,
        public readonly int $count,
        /** The distance between two consecutive IDs: 2^(the sequence field's shift). */
        public readonly int $stride,
    ) {
    }

    public function count(): int
    {
        return $this->count;
    }

    /** @return list<int|string> the IDs, in increasing order */
    public function ids(): array
    {
        if ($this->count === 0) {
            return [];
        }
        if (is_int($this->first) && PHP_INT_MAX - $this->first >= ($this->count - 1) * $this->stride) {
            return range($this->first, $this->first + ($this->count - 1) * $this->stride, $this->stride);
        }
        // Above PHP_INT_MAX: add on the signed bit pattern, which wraps like uint64_t.
        $bits = Id::toU64($this->first);
        $ids = [];
        for ($i = 0; $i < $this->count; $i++) {
            $ids[] = Id::fromU64($bits);
            $bits = self::wrappingAdd($bits, $this->stride);
        }
        return $ids;
    }

    /** @return \Iterator<int, int|string> */
    public function getIterator(): \Iterator
    {
        return new \ArrayIterator($this->ids());
    }

    /** `$a + $b` as uint64_t bit patterns in PHP ints (`$b` >= 0; no result reaches 2^64). */
    private static function wrappingAdd(int $a, int $b): int
    {
        if ($a >= 0 && $a > PHP_INT_MAX - $b) {
            // Crossing 2^63: PHP would turn the sum into a float. Go through -2^63 instead.
            return ($a + PHP_INT_MIN + $b) + PHP_INT_MIN;
        }
        return $a + $b; // a negative $a (>= 2^63 unsigned) cannot overflow
    }
}
