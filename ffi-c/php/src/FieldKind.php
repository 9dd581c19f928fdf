<?php

declare(strict_types=1);

namespace Snowflake;

/** What a layout field holds (the C `SnowflakeFieldKind`). */
enum FieldKind: int
{
    /** Ticks since the epoch; always the highest field. */
    case Time = 0;
    /** The counter within a tick. */
    case Sequence = 1;
    /** A value fixed per generator (datacenter, worker, shard, ...), or the rollover counter. */
    case Node = 2;
}
