<?php

declare(strict_types=1);

namespace Snowflake;

/** What a generator has done: `Generator::stats()`. */
final class Stats
{
    public function __construct(
        /** IDs issued through this generator. */
        public readonly int $issued,
        /** How many times it waited for the clock. */
        public readonly int $waits,
        /** Total time spent waiting, in ms. */
        public readonly int $waitedMs,
        /** How many times it found the clock behind by more than max_drift_ms. */
        public readonly int $clockBehind,
        /** How many times it bumped the rollover field. */
        public readonly int $rollovers,
        /** How far ahead of the clock the shared state is now, in ms. */
        public readonly int $driftMs,
        /** How many times a lease was claimed (again after it lapsed); 0 without a lease. */
        public readonly int $leaseClaims = 0,
        /** How many times the lease lapsed. */
        public readonly int $leaseLosses = 0,
        /** The leased field's value the generator issues with now (null without a lease). */
        public readonly ?int $leaseValue = null,
        /** The layout's last usable instant, in Unix ms (a decimal string above PHP_INT_MAX). */
        public readonly int|string $lastUnixMs = 0,
        /** How long the layout has left by the generator's clock, in ms (0 once past its end). */
        public readonly int|string $msLeft = 0,
        /** `msLeft` in years of 365.2425 days. */
        public readonly float $yearsLeft = 0.0,
        /**
         * This host's clock minus the lease store's (Redis TIME, the database's clock) at the last
         * claim or renewal, in ms (null without a lease across hosts).
         */
        public readonly ?int $clockSkewMs = null,
        /** How many renewals found the clocks further apart than max_clock_skew_ms. */
        public readonly int $skewedRenewals = 0,
        /**
         * Where each value came from: `layout`, `node` and every option => `code`,
         * `default`, or the environment variable (`SNOWFLAKE_LAYOUT`, `SNOWFLAKE_NODE`,
         * `SNOWFLAKE_OPTIONS`).
         *
         * @var array<string, string>
         */
        public readonly array $sources = [],
    ) {
    }
}
