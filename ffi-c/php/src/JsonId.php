<?php

declare(strict_types=1);

namespace Snowflake;

/**
 * An ID that `json_encode` writes as a decimal string: JavaScript reads a JSON number above
 * 2^53 with its low bits lost, so APIs send 64-bit IDs as strings.
 *
 * ```php
 * json_encode(['id' => new JsonId($gen->nextId())]);   // {"id":"2125646515509792768"}
 * (string) new JsonId(7);                               // "7"
 * ```
 *
 * Laravel models get the same from the {@see Laravel\SnowflakeId} cast; Doctrine entities
 * from their own `JsonSerializable`.
 */
final class JsonId implements \JsonSerializable, \Stringable
{
    /** The ID: an int, or a decimal string above PHP_INT_MAX. */
    public readonly int|string $id;

    /**
     * @param int|string $id an ID (an int >= 0, or a decimal string)
     * @throws ValueException for a negative int
     * @throws InvalidIdException for a malformed string
     */
    public function __construct(int|string $id)
    {
        $this->id = Id::fromU64(Id::toU64($id));
    }

    public function jsonSerialize(): string
    {
        return (string) $this->id;
    }

    public function __toString(): string
    {
        return (string) $this->id;
    }
}
