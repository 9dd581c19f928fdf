<?php

declare(strict_types=1);

namespace Snowflake;

/**
 * Every sequence number of the current tick (and of the ticks `max_drift_ms` lets it borrow)
 * is taken, and the next tick is further away than `max_wait_ms` (status 8,
 * ERR_SNOWFLAKE_SEQUENCE_EXHAUSTED).
 */
class SequenceExhaustedException extends ClockException
{
}
